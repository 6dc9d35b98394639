//! Each stage's figures per mode over the timed records (`--openmetrics`'s
//! `tlsping_stage_seconds` summary): the description the statistics block
//! gives `total`, for every stage, and the sum a summary's `_sum` carries.

use std::time::Duration;

use crate::probe::{Mode, Stage, Stages};

use super::descriptive::{describe, Description};
use super::history::History;
use super::record::collect_exact;

/// A figure a summary reports of a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reported {
    Stage(Stage),
    /// The client's TLS set-up inside `tls`.
    TlsSetup,
    /// The server's time after the request, inside `srv` (`Stages::server`).
    Server,
}

impl Reported {
    fn name(self) -> &'static str {
        match self {
            Reported::Stage(stage) => stage.as_str(),
            Reported::TlsSetup => "tls_setup",
            Reported::Server => "server",
        }
    }
}

/// What a summary reports of a mode: its stages in the table's order
/// (`probe::Stage::COLD`/`WARM`), right after `tls` the client's TLS
/// set-up inside it, and right after `srv` the server's time inside it.
fn reported(mode: Mode) -> impl Iterator<Item = Reported> {
    let stages: &'static [Stage] = match mode {
        Mode::Cold => &Stage::COLD,
        Mode::Warm => &Stage::WARM,
    };
    stages.iter().flat_map(|&stage| {
        let inside = match stage {
            Stage::Tls => Some(Reported::TlsSetup),
            Stage::Srv => Some(Reported::Server),
            _ => None,
        };
        std::iter::once(Reported::Stage(stage)).chain(inside)
    })
}

fn value(stages: &Stages, reported: Reported) -> Option<u32> {
    match reported {
        Reported::Stage(stage) => stages.get(stage),
        Reported::TlsSetup => stages.tls_setup,
        Reported::Server => stages.server,
    }
}

/// One stage of one mode over the timed records that measured it.
#[derive(Clone, Debug, PartialEq)]
pub struct StageFigures {
    pub mode: Mode,
    pub stage: &'static str,
    pub description: Description,
    /// The sum of every value described (`n` of them).
    pub sum: Duration,
}

/// Every stage of both modes over the timed records of one variant
/// (`None`: all of them); a stage no timed record measured is left out.
/// One value list at a time, dropped before the next.
pub fn stage_figures(history: &History, variant: Option<u8>) -> Vec<StageFigures> {
    let mut figures = Vec::new();
    for mode in [Mode::Cold, Mode::Warm] {
        let timed = history
            .of_variant(variant)
            .filter(move |r| r.mode() == mode && r.timed());
        for stage in reported(mode) {
            let values = collect_exact(timed.clone().filter_map(|r| value(&r.stages(), stage)));
            if values.is_empty() {
                continue;
            }
            let sum_us: u64 = values.iter().map(|&v| u64::from(v)).sum();
            figures.push(StageFigures {
                mode,
                stage: stage.name(),
                sum: Duration::from_micros(sum_us),
                description: describe(values),
            });
        }
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::ErrorKind;
    use crate::stats::synthetic;

    fn find<'a>(f: &'a [StageFigures], mode: Mode, stage: &str) -> &'a StageFigures {
        f.iter()
            .find(|x| x.mode == mode && x.stage == stage)
            .unwrap_or_else(|| panic!("{mode:?} {stage} missing"))
    }

    #[test]
    fn each_stage_is_described_over_timed_records_with_its_sum() {
        let mut samples = vec![
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::cold(2, 60, 300, 5000, 2000, 50),
            synthetic::cold(3, 80, 200, 4000, 9000, 50),
            synthetic::warm(1, 30, 1000, 10, true),
            synthetic::warm(2, 50, 3000, 10, true),
            synthetic::failed(3, Mode::Cold, ErrorKind::Timeout, 5000),
        ];
        samples.sort_by_key(|s| s.round);
        let f = stage_figures(&History::of(&samples), None);
        let names: Vec<(Mode, &str)> = f.iter().map(|x| (x.mode, x.stage)).collect();
        assert_eq!(
            names,
            [
                (Mode::Cold, "dns"),
                (Mode::Cold, "tcp"),
                (Mode::Cold, "tls"),
                (Mode::Cold, "tls_setup"),
                (Mode::Cold, "srv"),
                (Mode::Cold, "server"),
                (Mode::Cold, "total"),
                (Mode::Warm, "wait"),
                (Mode::Warm, "srv"),
                (Mode::Warm, "server"),
                (Mode::Warm, "total"),
            ]
        );
        // By hand: tcp 100, 300, 200 µs (the failed probe is not timed).
        let tcp = find(&f, Mode::Cold, "tcp");
        assert_eq!(tcp.description.n, 3);
        assert_eq!(tcp.description.median, Some(Duration::from_micros(200)));
        assert_eq!(tcp.sum, Duration::from_micros(600));
        assert_eq!(tcp.description.p95, None, "p95 needs 20 values");
        let srv = find(&f, Mode::Warm, "srv");
        assert_eq!(srv.description.median, Some(Duration::from_micros(2000)));
        assert_eq!(srv.sum, Duration::from_micros(4000));
        // Totals agree with the summary's own description of them.
        let summary = crate::stats::summarize(&History::of(&samples), Duration::ZERO);
        assert_eq!(
            find(&f, Mode::Cold, "total").description,
            summary.cold.timing
        );
        assert_eq!(
            find(&f, Mode::Warm, "total").description,
            summary.warm.timing
        );
    }

    #[test]
    fn a_variant_has_only_its_own_records_and_nothing_gives_nothing() {
        let mut a = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        let mut b = synthetic::cold(1, 40, 700, 3000, 1000, 50);
        a.variant = 0;
        b.variant = 1;
        let h = History::of(&[a, b]);
        let tcp = |v| find(&stage_figures(&h, Some(v)), Mode::Cold, "tcp").sum;
        assert_eq!(tcp(0), Duration::from_micros(100));
        assert_eq!(tcp(1), Duration::from_micros(700));
        assert!(stage_figures(&History::new(), None).is_empty());
    }
}

//! The run's statistics, following the sample rules: which samples count for
//! timings, loss, handshake overhead and the two gain figures.

use std::time::Duration;

use crate::probe::{Mode, Sample};

use super::delta::{median_delta, Delta};
use super::descriptive::{describe, median_us, Description};
use super::history::History;
use super::pairing::paired_differences;
use super::record::{collect_exact, median_of, Record};

/// A residual above this share of total is worth a warning...
pub const RESIDUAL_WARN_SHARE: f64 = 0.20;
/// ...when it is also at least this long (µs): below a millisecond it is
/// the machine's own scheduling noise (a loopback run's total is a fraction
/// of one), nothing a user can act on.
pub const RESIDUAL_WARN_FLOOR_US: u32 = 1000;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeSummary {
    /// Probes of this mode that count for loss (not warmup, not interrupted).
    pub sent: usize,
    pub ok: usize,
    /// Share of `sent` with no response, `None` when nothing was sent.
    pub loss: Option<f64>,
    pub timing: Description,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Handshake {
    /// Median of dns+tcp+tls summed within each cold sample.
    pub overhead: Option<Duration>,
    pub dns: Option<Duration>,
    pub tcp: Option<Duration>,
    pub tls: Option<Duration>,
    /// Timed cold samples left out because a stage was not measured.
    pub excluded: usize,
    /// How many cold samples the overhead median is over.
    pub n: usize,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub cold: ModeSummary,
    pub warm: ModeSummary,
    /// Rounds that count (not warmup) and the warmup rounds left out.
    pub rounds: usize,
    pub warmup_excluded: usize,
    /// Warm probes (not warmup) that had to open a connection.
    pub new_conn: usize,
    pub handshake: Handshake,
    /// median(cold totals) − median(warm totals).
    pub keepalive_gain: Option<Delta>,
    /// Median of per-round (cold − warm) totals over rounds where both were timed.
    pub paired_gain: Option<Delta>,
    pub paired_rounds: usize,
    /// 95% confidence interval for the paired gain's median (needs 6 rounds).
    pub paired_gain_ci: Option<(Delta, Delta)>,
    /// 95% confidence interval for the handshake overhead median.
    pub handshake_overhead_ci: Option<(Duration, Duration)>,
    /// Cold handshakes (not warmup) that resumed a session, out of `cold_handshakes`.
    pub tls_resumed: usize,
    pub cold_handshakes: usize,
    pub elapsed: Duration,
    /// The client's set-up, the kernel's RTT and the server's own time.
    pub attribution: super::attribution::Attribution,
    /// Why the cold handshakes cost what they did.
    pub why: super::anatomy::HandshakeWhy,
}

/// Counts for timing statistics: a response, not warmup, a measured total,
/// and for warm a connection that was actually reused.
/// (The rule itself is `Record::timed`, so samples and records never differ.)
pub fn timed(s: &Sample) -> bool {
    Record::of(s).timed()
}

fn mode_summary<'a>(records: impl Iterator<Item = &'a Record> + Clone, mode: Mode) -> ModeSummary {
    let of_mode = records.filter(|r| r.mode() == mode);
    let counted = of_mode.clone().filter(|r| !r.warmup() && !r.canceled());
    let sent = counted.clone().count();
    let ok = counted.filter(|r| r.ok()).count();
    let totals = collect_exact(
        of_mode
            .filter(|r| r.timed())
            .filter_map(|r| r.stages().total),
    );
    ModeSummary {
        sent,
        ok,
        loss: (sent > 0).then(|| (sent - ok) as f64 / sent as f64),
        timing: describe(totals),
    }
}

/// The handshake figures, and the 95% interval of the overhead median.
fn handshake<'a>(
    records: impl Iterator<Item = &'a Record> + Clone,
) -> (Handshake, Option<(Duration, Duration)>) {
    let cold = records
        .clone()
        .filter(|r| r.mode() == Mode::Cold && r.timed());
    // A stage of a sample that has all three (tls counts as 0 for http://).
    let stage = |r: &Record| {
        let st = r.stages();
        let tls = if r.https() { st.tls } else { Some(0) };
        Some((st.dns?, st.tcp?, tls?))
    };
    let complete = cold.clone().filter(|r| stage(r).is_some());
    let mut sums: Vec<u64> = collect_exact(
        complete
            .clone()
            .filter_map(|r| stage(r).map(|(d, t, l)| u64::from(d) + u64::from(t) + u64::from(l))),
    );
    sums.sort_unstable();
    let whole = Duration::from_micros;
    let overhead = median_us(&sums);
    let overhead_ci = super::ci::median_ci(&sums).map(|(lo, hi)| (whole(lo), whole(hi)));
    let n = sums.len();
    drop(sums);
    let any_https = records.clone().any(|r| r.https());
    let h = Handshake {
        overhead,
        dns: median_of(complete.clone(), |st| st.dns).0,
        tcp: median_of(complete.clone(), |st| st.tcp).0,
        // Every record of an https run has its tls (`complete`).
        tls: if any_https {
            median_of(complete, |st| st.tls).0
        } else {
            None
        },
        excluded: cold.count() - n,
        n,
    };
    (h, overhead_ci)
}

/// The statistics of a run's kept records.
pub fn summarize(history: &History, elapsed: Duration) -> Summary {
    summarize_variant(history, None, elapsed)
}

/// The statistics of one variant's records (`None`: all of them).
pub(super) fn summarize_variant(
    history: &History,
    variant: Option<u8>,
    elapsed: Duration,
) -> Summary {
    let records = history.of_variant(variant);
    let cold = mode_summary(records.clone(), Mode::Cold);
    let warm = mode_summary(records.clone(), Mode::Warm);
    let keepalive_gain = match (cold.timing.median, warm.timing.median) {
        (Some(c), Some(w)) => Some(Delta::between(c, w)),
        _ => None,
    };
    let diffs = paired_differences(records.clone());
    let paired_rounds = diffs.len();
    let paired_gain_ci = super::ci::median_ci(&diffs);
    let paired_gain = median_delta(&diffs);
    drop(diffs);
    let (handshake, handshake_overhead_ci) = handshake(records.clone());
    let (rounds, warmup_excluded) = distinct_rounds(records.clone());
    let cold_handshakes = records
        .clone()
        .filter(|r| r.mode() == Mode::Cold && !r.warmup() && r.handshake());
    Summary {
        rounds,
        warmup_excluded,
        new_conn: records
            .clone()
            .filter(|r| !r.warmup() && r.new_conn())
            .count(),
        handshake,
        keepalive_gain,
        paired_gain,
        paired_rounds,
        paired_gain_ci,
        handshake_overhead_ci,
        tls_resumed: cold_handshakes.clone().filter(|r| r.resumed()).count(),
        cold_handshakes: cold_handshakes.count(),
        cold,
        warm,
        elapsed,
        attribution: super::attribution::attribute(history, variant),
        why: super::anatomy::handshake_why(history, variant),
    }
}

/// Rounds that count and warmup rounds, each counted once however many
/// probes it had (records come in round order, so a round is one run).
fn distinct_rounds<'a>(records: impl Iterator<Item = &'a Record>) -> (usize, usize) {
    let (mut rounds, mut warmup) = (0, 0);
    let (mut last, mut last_warm) = (None, None);
    for r in records {
        let seen = if r.warmup() {
            &mut last_warm
        } else {
            &mut last
        };
        if *seen != Some(r.round()) {
            *seen = Some(r.round());
            if r.warmup() {
                warmup += 1;
            } else {
                rounds += 1;
            }
        }
    }
    (rounds, warmup)
}

/// The timed samples whose unexplained residual is above 20% of their
/// total and at least 1 ms: each one's round and mode, in the order they ran.
pub fn large_residual(history: &History) -> Vec<(u32, Mode)> {
    history
        .iter()
        .filter(|r| r.timed())
        .filter(|r| match (r.stages().other(), r.stages().total) {
            (Some(o), Some(t)) if t > 0 => {
                o >= RESIDUAL_WARN_FLOOR_US && f64::from(o) > RESIDUAL_WARN_SHARE * f64::from(t)
            }
            _ => false,
        })
        .map(|r| (r.round(), r.mode()))
        .collect()
}

/// How the run went, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    AllOk,
    SomeFailed,
    AllFailed,
    /// Nothing was measured (for example interrupted before the first probe).
    Nothing,
}

/// Judged on the samples that are not warmup, or on the warmup samples when
/// they are all there is. Interrupted probes are not the server's failure.
pub fn judge(history: &History) -> Verdict {
    let real = history.iter().filter(|r| !r.canceled());
    let main = real.clone().filter(|r| !r.warmup());
    let (n, ok) = if main.clone().next().is_some() {
        (main.clone().count(), main.filter(|r| r.ok()).count())
    } else {
        (real.clone().count(), real.filter(|r| r.ok()).count())
    };
    match (n, ok) {
        (0, _) => Verdict::Nothing,
        (n, ok) if ok == n => Verdict::AllOk,
        (_, 0) => Verdict::AllFailed,
        _ => Verdict::SomeFailed,
    }
}

//! What a run warns of, as data: one type for every warning, whichever
//! layer decides it (the command line its settings, the run the
//! preflight's answer and how the rounds stopped, the rounds their
//! notices, the statistics theirs, here), each carrying its facts: numbers,
//! names, a server's or libcurl's text as it came. Nothing here is worded:
//! `render` says each where it writes it, on stderr as it happens and in
//! the JSON document's `warnings[]` at the end.

use std::time::Duration;

use crate::probe::{Axis, EndReason, Ending, Mode, Notice, SettingWarning, Target, Valve};

use super::history::History;
use super::summary::large_residual;

/// One warning of a run. `of`, where a variant has it, is the label of the
/// `--compare target=` endpoint it is about (each such endpoint has its
/// own preflight, redirect and certificate).
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// Something about the settings, noticed by the command line.
    Setting(SettingWarning),
    /// The preflight's answer is a redirect, not followed.
    Redirect {
        of: Option<String>,
        status: u16,
        /// The `Location` it named, as the server sent it.
        location: String,
    },
    /// An `http://` target answered `status` (400) on a port that speaks
    /// TLS: a plain request went to an HTTPS port.
    PlainHttpToTlsPort {
        of: Option<String>,
        target: Target,
        status: u16,
    },
    /// The server's certificate is close to its end, or past it.
    CertificateExpiry {
        of: Option<String>,
        days_left: i32,
        expired: bool,
    },
    /// The preflight's answer (of the variant `of`, with `--compare`)
    /// tripped a safety valve: no round ran.
    PreflightValve { of: Option<String>, valve: Valve },
    /// A `--compare` variant cannot run at all; the others go on.
    VariantCannotRun {
        axis: Axis,
        label: String,
        why: EndReason,
    },
    /// Something the rounds noticed; `variant` is the axis and label of the
    /// `--compare` variant it is about, if it is about one.
    Rounds {
        notice: Notice,
        variant: Option<(Axis, String)>,
    },
    /// A safety valve stopped the rounds.
    Valve(Valve),
    /// A signal stopped the rounds (`Ending::stopped_by`): how far they got.
    Stopped(Ending),
    /// Probes whose stages leave much of their total unexplained, by round
    /// and mode (`large_residual`).
    LargeResidual(Vec<(u32, Mode)>),
    /// `Server-Timing` metric names past the ones the statistics follow.
    UntrackedMetrics(Vec<String>),
    /// `--early-data` was asked for and no request went as early data;
    /// `resumed` cold probes resumed a session (0: the server gave none).
    EarlyDataUnsent { resumed: u64 },
    /// libcurl began connecting while its lookup went on, on `probes` cold
    /// probes, by up to `longest`.
    DnsOverlap { probes: u64, longest: Duration },
    /// Cold probes with a handshake message that could not be read.
    UnreadableHandshakes(u64),
}

/// The warnings only the whole run can give, once its rounds are over,
/// decided from what it kept: probes with much time no stage accounts
/// for, `Server-Timing` names left out, early data never sent (round 1
/// alone proves nothing), lookups that overlapped the connect, handshakes
/// that could not be read.
pub fn of_history(history: &History) -> Vec<Warning> {
    let tally = history.tallies.of_run();
    let mut out = Vec::new();
    let residual = large_residual(history);
    if !residual.is_empty() {
        out.push(Warning::LargeResidual(residual));
    }
    let untracked = history.server_timing.untracked();
    if !untracked.is_empty() {
        out.push(Warning::UntrackedMetrics(untracked.to_vec()));
    }
    if tally.early_data_asked() >= 2 && tally.early_data_sent() == 0 {
        out.push(Warning::EarlyDataUnsent {
            resumed: tally.early_data_resumed,
        });
    }
    if tally.dns_overlaps > 0 {
        out.push(Warning::DnsOverlap {
            probes: tally.dns_overlaps,
            longest: tally.longest_overlap,
        });
    }
    if tally.unreadable_handshakes > 0 {
        out.push(Warning::UnreadableHandshakes(tally.unreadable_handshakes));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{EarlyData, Sample};
    use crate::stats::synthetic;

    fn cold_asking(round: u32, outcome: EarlyData, resumed: bool) -> Sample {
        let mut s = synthetic::cold(round, 40, 100, 3000, 1000, 50);
        s.early_data = Some(outcome);
        if let Some(tls) = s.tls.as_mut() {
            tls.resumed = resumed;
        }
        s
    }

    #[test]
    fn a_run_that_went_well_warns_of_nothing() {
        let samples = [
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::warm(1, 30, 1000, 10, true),
        ];
        assert_eq!(of_history(&History::of(&samples)), []);
    }

    #[test]
    fn early_data_never_sent_is_told_once_with_the_sessions_resumed() {
        let unsent = |samples: &[Sample]| {
            of_history(&History::of(samples))
                .into_iter()
                .filter(|w| matches!(w, Warning::EarlyDataUnsent { .. }))
                .collect::<Vec<_>>()
        };
        let one = [cold_asking(1, EarlyData::NotSent, false)];
        assert_eq!(unsent(&one), [], "round 1 alone proves nothing");
        let never = [
            cold_asking(1, EarlyData::NotSent, false),
            cold_asking(2, EarlyData::NotSent, true),
        ];
        assert_eq!(unsent(&never), [Warning::EarlyDataUnsent { resumed: 1 }]);
        let sent = [
            cold_asking(1, EarlyData::NotSent, false),
            cold_asking(2, EarlyData::Accepted, true),
        ];
        assert_eq!(unsent(&sent), []);
    }
}

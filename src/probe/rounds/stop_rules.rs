//! The rules that stop a run, or leave one `--compare` variant out of the
//! rounds that remain, after each probe and after each round: data in,
//! decision out, so each rule is tested on its own.

use super::valve::Valve;

/// Stop after this many failed probes in a row.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 3;

/// Why a run ended before its count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EarlyStop {
    Interrupted,
    Valve(Valve),
    /// The output could not be written; the text is the I/O error.
    Output(String),
}

/// What a probe just run came to, as the rules read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct AfterProbe {
    /// Telling the outputs about it failed (the error's text).
    pub output_failed: Option<String>,
    /// It was canceled, or the run was interrupted meanwhile.
    pub interrupted: bool,
    /// The server asked clients to back off (429, 503 with Retry-After).
    pub valve: Option<Valve>,
    /// The variant's failed probes in a row, this one included.
    pub failures_in_a_row: u32,
    /// Every variant probes the same URL (one server, whatever the axis
    /// varies); under `--compare target=` each URL is a service of its own.
    pub one_url: bool,
    /// There is one variant: a plain run.
    pub single: bool,
}

/// Why a variant is left out of the rounds that remain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum LeftOut {
    /// Its own server asked it to back off (`--compare target=`).
    BackedOff(Valve),
    /// Its probes failed `MAX_CONSECUTIVE_FAILURES` times in a row.
    Failing,
}

/// What the run does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    GoOn,
    Stop(EarlyStop),
    LeaveOut(LeftOut),
}

/// The rules after one probe, first match wins: an output that cannot be
/// written, an interrupt, a server's request to back off (the run's when
/// the variants share one server, else the variant's), too many failures
/// in a row (the run's when it is a plain run, else the variant's).
pub(super) fn after_probe(p: &AfterProbe) -> Decision {
    if let Some(e) = &p.output_failed {
        return Decision::Stop(EarlyStop::Output(e.clone()));
    }
    if p.interrupted {
        return Decision::Stop(EarlyStop::Interrupted);
    }
    if let Some(valve) = p.valve {
        return if p.one_url {
            Decision::Stop(EarlyStop::Valve(valve))
        } else {
            Decision::LeaveOut(LeftOut::BackedOff(valve))
        };
    }
    if p.failures_in_a_row >= MAX_CONSECUTIVE_FAILURES {
        return if p.single {
            Decision::Stop(EarlyStop::Valve(Valve::ConsecutiveFailures(
                MAX_CONSECUTIVE_FAILURES,
            )))
        } else {
            Decision::LeaveOut(LeftOut::Failing)
        };
    }
    Decision::GoOn
}

/// The rule after a round: with every variant left out, nothing is left
/// to run.
pub(super) fn after_round(all_left_out: bool, any_backed_off: bool) -> Option<EarlyStop> {
    let why = if any_backed_off {
        Valve::EveryVariantLeftOut
    } else {
        Valve::EveryVariantFailing(MAX_CONSECUTIVE_FAILURES)
    };
    all_left_out.then_some(EarlyStop::Valve(why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::RetryAfter;

    fn probe() -> AfterProbe {
        AfterProbe {
            output_failed: None,
            interrupted: false,
            valve: None,
            failures_in_a_row: 0,
            one_url: true,
            single: true,
        }
    }

    #[test]
    fn an_ordinary_probe_goes_on() {
        assert_eq!(after_probe(&probe()), Decision::GoOn);
        let two = AfterProbe {
            failures_in_a_row: MAX_CONSECUTIVE_FAILURES - 1,
            ..probe()
        };
        assert_eq!(after_probe(&two), Decision::GoOn);
    }

    #[test]
    fn an_output_that_failed_comes_first_then_an_interrupt() {
        let all = AfterProbe {
            output_failed: Some("Broken pipe".into()),
            interrupted: true,
            valve: Some(Valve::BackOff(RetryAfter::Seconds(5))),
            failures_in_a_row: 9,
            ..probe()
        };
        assert_eq!(
            after_probe(&all),
            Decision::Stop(EarlyStop::Output("Broken pipe".into()))
        );
        let interrupted = AfterProbe {
            output_failed: None,
            ..all
        };
        assert_eq!(
            after_probe(&interrupted),
            Decision::Stop(EarlyStop::Interrupted)
        );
    }

    #[test]
    fn a_back_off_stops_one_server_and_leaves_out_one_target() {
        let valve = Valve::BackOff(RetryAfter::Seconds(30));
        let shared = AfterProbe {
            valve: Some(valve),
            single: false,
            ..probe()
        };
        assert_eq!(
            after_probe(&shared),
            Decision::Stop(EarlyStop::Valve(valve))
        );
        let own = AfterProbe {
            one_url: false,
            ..shared
        };
        assert_eq!(
            after_probe(&own),
            Decision::LeaveOut(LeftOut::BackedOff(valve))
        );
    }

    #[test]
    fn failures_in_a_row_stop_a_plain_run_and_leave_out_a_variant() {
        let failing = AfterProbe {
            failures_in_a_row: MAX_CONSECUTIVE_FAILURES,
            ..probe()
        };
        assert_eq!(
            after_probe(&failing),
            Decision::Stop(EarlyStop::Valve(Valve::ConsecutiveFailures(3)))
        );
        let compared = AfterProbe {
            single: false,
            ..failing
        };
        assert_eq!(after_probe(&compared), Decision::LeaveOut(LeftOut::Failing));
    }

    #[test]
    fn a_round_with_every_variant_left_out_ends_the_run() {
        assert_eq!(after_round(false, true), None);
        assert_eq!(
            after_round(true, false),
            Some(EarlyStop::Valve(Valve::EveryVariantFailing(3)))
        );
        assert_eq!(
            after_round(true, true),
            Some(EarlyStop::Valve(Valve::EveryVariantLeftOut))
        );
    }
}

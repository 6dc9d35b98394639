//! The output contract. Each format (the table, `--json`, `--jsonl`,
//! `--csv`, `--write-out`, the `--svg` file, `--openmetrics` and the body
//! of `--push`) is one implementation of
//! [`Output`] in a file of its own; the run holds them as a list and tells
//! each what happened, never asking which format it is.

use std::io;

use crate::probe::{RunInfo, Sample};
use crate::stats::{Comparison, History, Summary};

/// What the end of a run hands every output.
pub struct Finished<'a> {
    pub info: &'a RunInfo,
    /// Every full sample, when an output asked for them
    /// ([`Output::keeps_samples`]); else empty.
    pub samples: &'a [Sample],
    pub summary: &'a Summary,
    /// What the statistics kept of every sample (`stats::NO_RECORDS` when
    /// no round ran), for figures the summary does not hold.
    pub history: &'a History,
    /// `--compare`: each variant's own statistics and how they differ.
    pub comparison: Option<&'a Comparison>,
    /// Every warning of the run, as it went to stderr.
    pub warnings: &'a [String],
    /// The code the run exits with, as far as it is known when the output
    /// is written. The outputs on stdout and the `--svg` file are written
    /// first, then `--push`; an output that records it
    /// ([`Output::records_exit_code`]) comes last and gets the code the
    /// process exits with.
    pub exit_code: u8,
    /// How many rounds ran, and what stopped them early.
    pub ending: Ending,
}

/// How the rounds ended: how many ran, of how many asked, and what stopped
/// them before the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// Rounds whose every probe ran to its end (warmup rounds included).
    pub completed: u32,
    /// The rounds asked for (`-n`); 0: until interrupted.
    pub asked: u32,
    /// The round cut off after some of its probes ran, if one was.
    pub cut: Option<u32>,
    /// What ended the rounds before `asked` ran (`None`: all of them ran).
    pub stopped_by: Option<StoppedBy>,
}

impl Ending {
    /// A run whose `asked` rounds all ran.
    pub fn complete(asked: u32) -> Ending {
        Ending {
            completed: asked,
            asked,
            cut: None,
            stopped_by: None,
        }
    }
}

/// What ended the rounds early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoppedBy {
    /// Ctrl+C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    HangUp,
    /// The reader of standard output closed it (`| head`).
    StdoutClosed,
    /// An output could not be written.
    OutputFailed,
    /// A safety valve (failures in a row, a server asking to back off).
    SafetyValve,
    /// The run ended before round 1 (`run.preflight_error` says why).
    Preflight,
}

impl StoppedBy {
    /// Every value, in the order of the JSON Schema's enum.
    pub const ALL: [StoppedBy; 7] = [
        StoppedBy::Interrupt,
        StoppedBy::Terminate,
        StoppedBy::HangUp,
        StoppedBy::StdoutClosed,
        StoppedBy::OutputFailed,
        StoppedBy::SafetyValve,
        StoppedBy::Preflight,
    ];

    /// Its slug in `--json` (`ending.stopped_by`) and `--openmetrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Interrupt => "interrupt",
            StoppedBy::Terminate => "terminate",
            StoppedBy::HangUp => "hangup",
            StoppedBy::StdoutClosed => "stdout_closed",
            StoppedBy::OutputFailed => "output_failed",
            StoppedBy::SafetyValve => "safety_valve",
            StoppedBy::Preflight => "preflight",
        }
    }
}

pub trait Output {
    /// Whether it needs every full sample at the end; a long run keeps
    /// them only when some output does.
    fn keeps_samples(&self) -> bool {
        false
    }

    /// Whether it records the run's exit code where nothing rewrites it
    /// (`--openmetrics FILE`): it is then ended last, after `--push`, with
    /// the code the process exits with.
    fn records_exit_code(&self) -> bool {
        false
    }

    /// What it writes, for the message when writing fails.
    fn what(&self) -> String {
        "the output".into()
    }

    /// The run is about to start its rounds; the preflight settled `info`.
    fn start(&mut self, _info: &RunInfo) -> io::Result<()> {
        Ok(())
    }

    /// A probe finished.
    fn sample(&mut self, _sample: &Sample) -> io::Result<()> {
        Ok(())
    }

    /// Every probe of a round finished.
    fn round(&mut self, _round: u32, _samples: &[Sample]) -> io::Result<()> {
        Ok(())
    }

    /// The rounds are over (all of them, or cut short): the statistics and
    /// the warnings.
    fn end(&mut self, _run: &Finished) -> io::Result<()> {
        Ok(())
    }

    /// The run ended before round 1 (`info.preflight_error` says why): no
    /// samples and empty statistics. Nothing was started.
    fn ended_before_rounds(&mut self, _run: &Finished) -> io::Result<()> {
        Ok(())
    }
}

/// How standard output shows the characters a terminal would act on or
/// hide, when it is a terminal; each format on stdout asks for one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escape {
    /// Passed through: the table escapes server text itself and writes
    /// colour codes of its own (and a file or a pipe always gets this).
    Off,
    /// `\x{1b}`, as the table writes them (CSV, `--write-out`).
    Visible,
    /// `\u001b`: inside a JSON string, so the document stays valid JSON
    /// and reads back as the same text.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_the_rounds_stop_is_in_the_schema() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schema/tlsping.schema.json")).unwrap();
        let listed = &schema["properties"]["ending"]["properties"]["stopped_by"]["enum"];
        let mut want: Vec<serde_json::Value> =
            StoppedBy::ALL.iter().map(|s| s.as_str().into()).collect();
        want.push(serde_json::Value::Null);
        assert_eq!(listed, &serde_json::Value::Array(want));
    }
}

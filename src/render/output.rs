//! The output contract. Each format (the table, `--json`, `--jsonl`,
//! `--csv`, `--write-out`, the `--svg` file, `--openmetrics` and the body
//! of `--push`) is one implementation of
//! [`Output`] in a file of its own; the run holds them as a list and tells
//! each what happened, never asking which format it is.

use std::io;

pub use crate::probe::{Ending, StoppedBy};
use crate::probe::{RunInfo, Sample};
use crate::stats::{Comparison, History, Summary, Warning};

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
    /// Every warning of the run, in the order it went to stderr; each
    /// output words it (`render::warnings::text`).
    pub warnings: &'a [Warning],
    /// The code the run exits with, as far as it is known when the output
    /// is written. The outputs on stdout and the `--svg` file are written
    /// first, then `--push`; an output that records it
    /// ([`Output::records_exit_code`]) comes last and gets the code the
    /// process exits with.
    pub exit_code: u8,
    /// How many rounds ran, and what stopped them early.
    pub ending: Ending,
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

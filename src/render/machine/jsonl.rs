//! `--jsonl`: the `--json` document as a stream, one object per line, each
//! flushed as soon as it is written: a `run` line first, a `sample` line as
//! each probe finishes, a `summary` line (with the warnings) last. A program
//! reading the pipe sees every sample while the run goes on, and a killed
//! run leaves every finished sample behind. The field names are those of
//! `--json`; `schema/tlsping-jsonl.schema.json` describes each line type.

use std::io::{self, Write};

use serde::Serialize;

use crate::probe::{CompareInfo, RunInfo, Sample};

use super::json::{ending_json, run_json, summary_json, EndingJson, SampleJson, SCHEMA};
use super::output::{Finished, Output};

/// One line: its type first, then the object's own fields.
#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

/// The run line's extra facts: which schema and which build wrote the stream.
#[derive(Serialize)]
struct RunLine<'a, T: Serialize> {
    schema: u32,
    tlsping_version: &'static str,
    #[serde(flatten)]
    run: &'a T,
}

/// The summary line also carries how the rounds ended and every warning
/// of the run.
#[derive(Serialize)]
struct SummaryLine<'a, T: Serialize> {
    #[serde(flatten)]
    summary: &'a T,
    ending: EndingJson,
    warnings: &'a [String],
}

/// Writes one line and flushes it.
fn write_line<W: Write, T: Serialize>(out: &mut W, kind: &'static str, body: &T) -> io::Result<()> {
    // `From` keeps an I/O error's kind (a closed reader's broken pipe among
    // them), which the run's ending reads; `io::Error::other` would hide it.
    serde_json::to_writer(&mut *out, &Line { kind, body }).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()
}

pub struct JsonlStream<W: Write> {
    out: W,
    /// `--compare`: names each sample's variant.
    compare: Option<CompareInfo>,
}

impl<W: Write> JsonlStream<W> {
    pub fn new(out: W) -> JsonlStream<W> {
        JsonlStream { out, compare: None }
    }
}

impl<W: Write> Output for JsonlStream<W> {
    /// The run line.
    fn start(&mut self, info: &RunInfo) -> io::Result<()> {
        self.compare = info.compare.clone();
        let run = run_json(info);
        write_line(
            &mut self.out,
            "run",
            &RunLine {
                schema: SCHEMA,
                tlsping_version: env!("CARGO_PKG_VERSION"),
                run: &run,
            },
        )
    }

    fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        write_line(
            &mut self.out,
            "sample",
            &SampleJson::new(sample, self.compare.as_ref()),
        )
    }

    /// The summary line, the last one.
    fn end(&mut self, run: &Finished) -> io::Result<()> {
        let figures = summary_json(run.summary, run.comparison, self.compare.as_ref());
        write_line(
            &mut self.out,
            "summary",
            &SummaryLine {
                summary: &figures,
                ending: ending_json(&run.ending),
                warnings: run.warnings,
            },
        )
    }

    /// The run line, then the summary line: no samples.
    fn ended_before_rounds(&mut self, run: &Finished) -> io::Result<()> {
        self.start(run.info)?;
        self.end(run)
    }
}

//! Everything a person or a program reads: the live layouts, the statistics
//! block, and the machine formats. Reads `probe` and `stats` types only.
//! Which outputs exist is said here once: `Outputs` (what the command line
//! asked for) and `open` (one `Output` for each).
//!
//! Its folders are floors, bottom-up, each importing only from itself and
//! those below (`FLOORS` in tests/source_layout/folders.rs): the contract
//! beside this file (`output`) <- tables (the one table of each) <- machine
//! (the formats a program reads) <- write_out (curl's `-w`) <- terminal
//! (what a person reads) <- pictures (`--svg`). The modules are named here
//! at the paths the rest of the crate reads (`render::json`).

mod machine;
pub mod output;
mod pictures;
mod tables;
mod terminal;
pub mod write_out;

pub use machine::{csv, json, jsonl, openmetrics};
pub use pictures::{svg, svg_file};
pub use tables::{fields, run_fields, summary_fields};
pub use terminal::{
    compare, distribution, format, human, layout, paint, rows, summary, warnings, why,
};

use std::io::Write;

use crate::files::Destination;
use crate::probe::RunInfo;

pub use human::Human;
pub use layout::{Layout, Style};
pub use output::{Ending, Escape, Finished, Output, StoppedBy};
pub use warnings::Warnings;

/// The format on standard output; one at most of the machine ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    /// `--csv`; `time_first` (`--csv-time-first`) moves `t_ms` and `at` to
    /// just after `round`.
    Csv {
        time_first: bool,
    },
    Jsonl,
    /// `--write-out`: one formatted line per sample, no table, no statistics.
    WriteOut(write_out::WriteOut),
    /// `--openmetrics -`: the run's figures when it ends, no table.
    OpenMetrics,
    /// `--svg -`: the picture of the run when it ends, no table.
    Svg,
}

/// What the command line asked to be written: a format on standard output
/// and the files written beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    pub stdout: Format,
    /// `--svg FILE`: the picture of the run, written when it ends; its
    /// directory held since the command line was checked.
    pub svg: Option<Destination>,
    /// `--openmetrics FILE`: the run's figures, written when it ends.
    pub openmetrics: Option<Destination>,
    /// `--label`: added to every series of the figures, after `target`.
    pub labels: openmetrics::Labels,
}

impl Outputs {
    /// Only what is written on standard output.
    pub fn stdout(stdout: Format) -> Outputs {
        Outputs {
            stdout,
            svg: None,
            openmetrics: None,
            labels: Vec::new(),
        }
    }
}

/// Standard output, opened with the escaping a format needs on a terminal.
pub type OpenStdout<'a> = dyn FnMut(Escape) -> Box<dyn Write> + 'a;

/// One output for each that `asked` names, the one on standard output
/// first; `style` is the table's.
pub fn open(
    asked: &Outputs,
    info: &RunInfo,
    style: Style,
    stdout: &mut OpenStdout,
) -> Vec<Box<dyn Output>> {
    let mut outputs: Vec<Box<dyn Output>> = vec![match &asked.stdout {
        Format::Table => Box::new(Human::new(stdout(Escape::Off), info, style)),
        Format::Json => Box::new(json::JsonDocument::new(stdout(Escape::Json))),
        Format::Jsonl => Box::new(jsonl::JsonlStream::new(stdout(Escape::Json))),
        Format::Csv { time_first } => {
            Box::new(csv::CsvStream::new(stdout(Escape::Visible), *time_first))
        }
        Format::WriteOut(format) => Box::new(write_out::WriteOutStream::new(
            stdout(Escape::Visible),
            format.clone(),
        )),
        Format::OpenMetrics => Box::new(openmetrics::OpenMetrics::new(
            openmetrics::Destination::Stdout(stdout(Escape::Visible)),
            openmetrics::run_labels(info, &asked.labels),
        )),
        Format::Svg => Box::new(svg_file::SvgFile::new(svg_file::Picture::Stdout(stdout(
            Escape::Visible,
        )))),
    }];
    if let Some(file) = &asked.svg {
        outputs.push(Box::new(svg_file::SvgFile::new(svg_file::Picture::File(
            file.clone(),
        ))));
    }
    if let Some(file) = &asked.openmetrics {
        outputs.push(Box::new(openmetrics::OpenMetrics::new(
            openmetrics::Destination::File(file.clone()),
            openmetrics::run_labels(info, &asked.labels),
        )));
    }
    outputs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens what `asked` names, recording the escaping each stdout output asked for.
    fn opened(asked: &Outputs) -> (Vec<Box<dyn Output>>, Vec<Escape>) {
        let mut escapes = Vec::new();
        let style = Style {
            layout: Layout::Wide,
            width: 120,
            color: false,
            quiet: false,
            verbose: false,
            unicode: true,
        };
        let info = crate::stats::synthetic::run_info();
        let outputs = open(asked, &info, style, &mut |escape| {
            escapes.push(escape);
            Box::new(std::io::sink())
        });
        (outputs, escapes)
    }

    #[test]
    fn each_format_on_stdout_asks_for_its_escaping_and_the_picture_is_a_file() {
        let write_out = write_out::parse_format("%{json}").unwrap();
        let cases = [
            (Format::Table, Escape::Off, false),
            (Format::Json, Escape::Json, true),
            (Format::Jsonl, Escape::Json, false),
            (Format::Csv { time_first: true }, Escape::Visible, false),
            (Format::WriteOut(write_out), Escape::Visible, false),
            (Format::OpenMetrics, Escape::Visible, false),
            (Format::Svg, Escape::Visible, true),
        ];
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| Destination::open(&dir.path().join(name)).unwrap();
        for (format, escape, keeps) in cases {
            let asked = Outputs::stdout(format.clone());
            let (outputs, escapes) = opened(&asked);
            assert_eq!(escapes, [escape], "{format:?}");
            assert_eq!(outputs.len(), 1);
            assert_eq!(outputs[0].keeps_samples(), keeps, "{format:?}");
            assert_eq!(outputs[0].what(), "the output");

            let with_svg = Outputs {
                svg: Some(file("run.svg")),
                ..asked
            };
            let (outputs, escapes) = opened(&with_svg);
            assert_eq!(escapes, [escape], "the picture does not go to stdout");
            assert_eq!(outputs.len(), 2);
            assert!(outputs[1].keeps_samples());
            assert_eq!(
                outputs[1].what(),
                format!("the picture to {}", dir.path().join("run.svg").display())
            );

            let with_figures = Outputs {
                openmetrics: Some(file("run.prom")),
                ..Outputs::stdout(format.clone())
            };
            let (outputs, escapes) = opened(&with_figures);
            assert_eq!(escapes, [escape], "the figures' file is not stdout");
            assert_eq!(outputs.len(), 2);
            assert!(!outputs[1].keeps_samples());
            assert_eq!(
                outputs[1].what(),
                format!("the figures to {}", dir.path().join("run.prom").display())
            );
        }
    }
}

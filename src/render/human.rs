//! The human output: header, live rows in the layout that fits, and the
//! statistics block, coloured only where that is wanted.

use std::io::{self, Write};

use crate::probe::{Mode, ModeChoice, Observer, RunInfo, Sample};
use crate::stats::{timed, RunningMedian, Summary};

use super::layout::{Layout, Style};
use super::paint::{Line, Paint};
use super::rows::{title, RowFormat, Slow};

/// A total above this multiple of its mode's running median is painted yellow.
pub const SLOW_FACTOR: f64 = 1.5;
/// …once this many samples of that mode have been seen.
pub const SLOW_MIN_SAMPLES: usize = 3;

pub struct Human<W: Write> {
    out: W,
    rows: RowFormat,
    style: Style,
    cold_median: RunningMedian,
    warm_median: RunningMedian,
    /// Blocks layout with both modes: warm lines wait until the cold block is done.
    pending_warm: Vec<Line>,
}

impl<W: Write> Human<W> {
    pub fn new(out: W, info: &RunInfo, style: Style) -> Human<W> {
        Human {
            out,
            rows: RowFormat {
                style,
                mode: info.mode,
                timeout: info.timeout,
            },
            style,
            cold_median: RunningMedian::new(),
            warm_median: RunningMedian::new(),
            pending_warm: Vec::new(),
        }
    }

    fn write(&mut self, line: &Line) -> io::Result<()> {
        writeln!(
            self.out,
            "{}",
            line.render(self.style.width, self.style.color)
        )
    }

    pub fn start(&mut self, info: &RunInfo) -> io::Result<()> {
        for line in self.rows.header(info) {
            self.write(&line)?;
        }
        self.out.flush()
    }

    /// Whether `s` is slow against the median of the samples seen before it;
    /// then `s` joins that median if it counts for timings.
    fn is_slow_then_record(&mut self, s: &Sample) -> bool {
        let running = match s.mode {
            Mode::Cold => &mut self.cold_median,
            Mode::Warm => &mut self.warm_median,
        };
        let slow = match (running.median(), s.total()) {
            (Some(m), Some(t)) if running.len() >= SLOW_MIN_SAMPLES && s.ok() => {
                t.as_secs_f64() > SLOW_FACTOR * m.as_secs_f64()
            }
            _ => false,
        };
        if timed(s) {
            if let Some(t) = s.total() {
                running.push(t);
            }
        }
        slow
    }

    /// Rows still held back (the warm block of the blocks layout), then a blank line.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.pending_warm.is_empty() {
            let mut heading = Line::new();
            heading.push(title(Mode::Warm, false), Paint::Bold);
            self.write(&heading)?;
            for line in std::mem::take(&mut self.pending_warm) {
                self.write(&line)?;
            }
        }
        writeln!(self.out)?;
        self.out.flush()
    }

    pub fn statistics(&mut self, info: &RunInfo, summary: &Summary) -> io::Result<()> {
        let mut lines = super::summary::statistics(info, summary);
        if self.style.verbose {
            lines.extend(super::summary::verbose_extras(info, summary));
        }
        for (i, text) in lines.into_iter().enumerate() {
            for part in fold(&text, self.style.width) {
                let mut line = Line::new();
                line.push(part, if i == 0 { Paint::Bold } else { Paint::Plain });
                self.write(&line)?;
            }
        }
        self.out.flush()
    }
}

impl<W: Write> Observer for Human<W> {
    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        let mut slow = Slow::default();
        for s in samples {
            let is_slow = self.is_slow_then_record(s);
            match s.mode {
                Mode::Cold => slow.cold = is_slow,
                Mode::Warm => slow.warm = is_slow,
            }
        }
        let refs: Vec<&Sample> = samples.iter().collect();
        match self.style.layout {
            Layout::Wide => {
                for line in self.rows.wide_row(round, &refs, slow) {
                    self.write(&line)?;
                }
            }
            Layout::Stacked => {
                for line in self.rows.stacked_rows(round, &refs, slow) {
                    self.write(&line)?;
                }
            }
            Layout::Blocks => {
                for s in samples {
                    let lines = self.rows.block_row(s, slow.of(s.mode));
                    if s.mode == Mode::Warm && self.rows.mode == ModeChoice::Both {
                        self.pending_warm.extend(lines);
                    } else {
                        for line in lines {
                            self.write(&line)?;
                        }
                    }
                }
            }
        }
        self.out.flush()
    }
}

/// A statistics line too long for the terminal is split where its figure
/// ends and its explanation begins (the first double space after `=`), the
/// explanation going to an indented line of its own.
fn fold(text: &str, width: usize) -> Vec<String> {
    if text.chars().count() <= width {
        return vec![text.to_string()];
    }
    let after_eq = text.find(" = ").map(|i| i + 3).unwrap_or(0);
    match text[after_eq..].find("  ") {
        // A cut at the very start would print an empty line: keep the line
        // whole and let the width cut mark it instead.
        Some(at) if after_eq + at > 0 && !text[..after_eq + at].trim().is_empty() => {
            let cut = after_eq + at;
            vec![
                text[..cut].to_string(),
                format!("    {}", text[cut..].trim_start()),
            ]
        }
        _ => vec![text.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn long_statistics_lines_fold_at_the_explanation() {
        let line = "keep-alive gain    = +253ms  median cold - median warm [reference]";
        assert_eq!(fold(line, 100), vec![line.to_string()]);
        assert_eq!(
            fold(line, 40),
            vec![
                "keep-alive gain    = +253ms".to_string(),
                "    median cold - median warm [reference]".to_string()
            ]
        );
    }

    #[test]
    fn a_line_that_starts_with_its_gap_is_not_folded_into_an_empty_line() {
        let line = "  tls 31.0ms, of which client set-up 0.90ms (3%) and finish 0.50ms (2%)";
        let folded = fold(line, 40);
        assert!(folded.iter().all(|l| !l.trim().is_empty()), "{folded:?}");
    }
}

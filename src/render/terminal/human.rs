//! The human output: header, live rows in the layout that fits, and the
//! statistics block, coloured only where that is wanted.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::probe::{CompareInfo, Mode, ModeChoice, RunInfo, Sample};
use crate::stats::{timed, Comparison, RunningMedian, Summary};

use super::distribution::{self, Figures};
use super::format::wrap;
use super::layout::{Layout, Style};
use super::output::{Finished, Output};
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
    /// Running median totals by variant and mode: with `--compare` a
    /// variant is slow against its own earlier rounds, not against another.
    medians: HashMap<(u8, Mode), RunningMedian>,
    /// Blocks layout with both modes: warm lines wait until the cold block is done.
    pending_warm: Vec<Line>,
}

impl<W: Write> Human<W> {
    pub fn new(out: W, info: &RunInfo, style: Style) -> Human<W> {
        Human {
            out,
            rows: RowFormat::new(info, style),
            style,
            medians: HashMap::new(),
            pending_warm: Vec::new(),
        }
    }

    fn write(&mut self, line: &Line) -> io::Result<()> {
        let text = line.render(self.style.width, self.style.color);
        if self.style.unicode {
            writeln!(self.out, "{text}")
        } else {
            // A locale that is not UTF-8: no `·` or `…` either, as no box.
            writeln!(self.out, "{}", super::format::ascii_punctuation(&text))
        }
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
        let running = self.medians.entry((s.variant, s.mode)).or_default();
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

    /// The statistics block; with `--compare`, one block per variant and
    /// then how each variant differs from the baseline.
    pub fn statistics(
        &mut self,
        info: &RunInfo,
        summary: &Summary,
        comparison: Option<&Comparison>,
    ) -> io::Result<()> {
        if let (Some(cmp), Some(comparison)) = (&info.compare, comparison) {
            return self.compared_statistics(info, cmp, comparison);
        }
        let picture = self.pictures(info, &[summary]).pop().unwrap_or_default();
        let mut lines = super::summary::statistics(info, summary, &picture);
        if self.style.verbose {
            lines.extend(super::summary::verbose_extras(info, summary));
        }
        self.write_block(lines)?;
        self.out.flush()
    }

    /// The distribution picture of each statistics block, its rows on
    /// scales chosen among the rows of every block (see
    /// `distribution::scale_of_each`); empty for a block without one (a
    /// shown mode has too few timed totals). Drawn from the very figures the
    /// block prints, so the picture never disagrees with them. Never quiet,
    /// never in the narrow blocks layout.
    fn pictures(&self, info: &RunInfo, blocks: &[&Summary]) -> Vec<Vec<String>> {
        if self.style.quiet || self.style.layout == Layout::Blocks {
            return vec![Vec::new(); blocks.len()];
        }
        let rows: Vec<Option<Vec<(&str, Figures)>>> = blocks
            .iter()
            .map(|summary| {
                distribution::rows(
                    super::summary::shown_modes(info.settings.mode)
                        .into_iter()
                        .map(|mode| {
                            let timing = &super::summary::mode_summary(summary, mode).timing;
                            (mode.as_str(), timing)
                        }),
                )
            })
            .collect();
        distribution::pictures(&rows, self.style.width, self.style.unicode)
    }

    /// Lines of statistics, the first (the title) bold, each folded to the width.
    fn write_block(&mut self, lines: Vec<String>) -> io::Result<()> {
        for (i, text) in lines.into_iter().enumerate() {
            for part in fold(&text, self.style.width) {
                let mut line = Line::new();
                line.push(part, if i == 0 { Paint::Bold } else { Paint::Plain });
                self.write(&line)?;
            }
        }
        Ok(())
    }

    fn compared_statistics(
        &mut self,
        info: &RunInfo,
        cmp: &CompareInfo,
        comparison: &Comparison,
    ) -> io::Result<()> {
        let blocks: Vec<(u8, &Summary)> =
            comparison.summaries.iter().map(|(v, s)| (*v, s)).collect();
        let summaries: Vec<&Summary> = blocks.iter().map(|(_, s)| *s).collect();
        let pictures = self.pictures(info, &summaries);
        for ((variant, summary), picture) in blocks.into_iter().zip(pictures) {
            let title = super::compare::variant_title(info, cmp.label(variant));
            let mut lines = super::summary::titled_statistics(info, summary, title, &picture);
            if self.style.verbose {
                lines.extend(super::summary::summary_extras(info, summary));
            }
            self.write_block(lines)?;
            writeln!(self.out)?;
        }
        // Sentences, not figures: wrapped between words rather than folded;
        // the title (first) is cut like any title.
        for (i, text) in super::compare::differences(cmp, comparison)
            .into_iter()
            .enumerate()
        {
            if i == 0 {
                let mut title = Line::new();
                title.push(text, Paint::Bold);
                self.write(&title)?;
                continue;
            }
            for part in wrap(&text, self.style.width) {
                self.write(&Line::plain(part))?;
            }
        }
        self.out.flush()
    }

    /// A `--compare` round: each variant's lines in variant order, whatever
    /// order the probes ran in; the round number on the first line only.
    fn compared_round(&mut self, round: u32, samples: &[Sample], slow: &[bool]) -> io::Result<()> {
        let mut in_order: Vec<(&Sample, bool)> = samples.iter().zip(slow.iter().copied()).collect();
        in_order.sort_by_key(|(s, _)| RowFormat::row_order(s));
        let first = (samples.len() > 1).then(|| (samples[0].variant, samples[0].mode));
        let first_of = |variant: u8| first.filter(|f| f.0 == variant).map(|f| f.1);
        let mut lines = Vec::new();
        match self.style.layout {
            Layout::Wide | Layout::Stacked => {
                for group in in_order.chunk_by(|a, b| a.0.variant == b.0.variant) {
                    let variant = group[0].0.variant;
                    let refs: Vec<&Sample> = group.iter().map(|(s, _)| *s).collect();
                    let mut slow = Slow::default();
                    for (s, is_slow) in group {
                        match s.mode {
                            Mode::Cold => slow.cold = *is_slow,
                            Mode::Warm => slow.warm = *is_slow,
                        }
                    }
                    let number = lines.is_empty().then_some(round);
                    lines.extend(if self.style.layout == Layout::Wide {
                        self.rows
                            .wide_variant_row(number, variant, &refs, first_of(variant), slow)
                    } else {
                        self.rows.stacked_variant_rows(
                            number,
                            variant,
                            &refs,
                            first_of(variant),
                            slow,
                        )
                    });
                }
            }
            Layout::Blocks => {
                let defer_warm = self.rows.mode == ModeChoice::Both;
                let (mut cold_shown, mut warm_shown) = (false, false);
                for (s, is_slow) in in_order {
                    let shown = match s.mode {
                        Mode::Cold => &mut cold_shown,
                        Mode::Warm => &mut warm_shown,
                    };
                    let row = self.rows.block_variant_row(s, !*shown, is_slow);
                    *shown = true;
                    if s.mode == Mode::Warm && defer_warm {
                        self.pending_warm.extend(row);
                    } else {
                        lines.extend(row);
                    }
                }
            }
        }
        for line in lines {
            self.write(&line)?;
        }
        self.out.flush()
    }
}

impl<W: Write> Human<W> {
    /// A round's rows, in the layout that fits.
    pub fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        if !self.rows.tags.is_empty() {
            let slow: Vec<bool> = samples
                .iter()
                .map(|s| self.is_slow_then_record(s))
                .collect();
            return self.compared_round(round, samples, &slow);
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
                // A mode whose probe did not run (a round cut off) shows `-`.
                for mode in self.rows.modes() {
                    let lines = match samples.iter().find(|s| s.mode == mode) {
                        Some(s) => self.rows.block_row(s, slow.of(mode)),
                        None => self.rows.block_not_run(round, mode),
                    };
                    if mode == Mode::Warm && self.rows.mode == ModeChoice::Both {
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

/// The table as the run's output on standard output.
impl<W: Write> Output for Human<W> {
    fn start(&mut self, info: &RunInfo) -> io::Result<()> {
        Human::start(self, info)
    }

    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        Human::round(self, round, samples)
    }

    /// The rows held back, then the statistics.
    fn end(&mut self, run: &Finished) -> io::Result<()> {
        self.finish()?;
        self.statistics(run.info, run.summary, run.comparison)
    }
}

/// A statistics line too long for the terminal is split where its figure
/// ends and its explanation begins (the first double space after `=`), the
/// explanation going to an indented line of its own; a part still too long
/// is wrapped at its words (`format::wrap`).
fn fold(text: &str, width: usize) -> Vec<String> {
    if text.chars().count() <= width {
        return vec![text.to_string()];
    }
    let after_eq = text.find(" = ").map(|i| i + 3).unwrap_or(0);
    let parts = match text[after_eq..].find("  ") {
        // A cut at the very start would print an empty line: keep the line
        // whole and let the wrap (or the width cut) take it instead.
        Some(at) if after_eq + at > 0 && !text[..after_eq + at].trim().is_empty() => {
            let cut = after_eq + at;
            vec![
                text[..cut].to_string(),
                format!("    {}", text[cut..].trim_start()),
            ]
        }
        _ => vec![text.to_string()],
    };
    // A figure that does not fit on its own is a sentence: wrap it whole.
    if parts[0].chars().count() > width {
        return wrap(text, width);
    }
    parts.into_iter().flat_map(|p| wrap(&p, width)).collect()
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
                "    median cold - median warm".to_string(),
                "      [reference]".to_string()
            ]
        );
    }

    #[test]
    fn a_long_explanation_wraps_at_its_words_and_keeps_its_indent() {
        let line =
            "  why: tls 84.9ms = 2 round trips × 40.1ms min RTT (one for a HelloRetryRequest: \
                    the server wants P-384) + server 2.13ms  (medians, n = 3)";
        let folded = fold(line, 60);
        assert!(
            folded.iter().all(|l| l.chars().count() <= 60),
            "{folded:#?}"
        );
        assert!(folded[0].starts_with("  why: tls 84.9ms"), "{folded:#?}");
        assert!(
            folded[1..].iter().all(|l| l.starts_with("    ")),
            "{folded:#?}"
        );
        let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            words(&folded.join(" ")),
            words(line),
            "no word lost or added"
        );
    }

    #[test]
    fn a_line_that_starts_with_its_gap_is_not_folded_into_an_empty_line() {
        let line = "  tls 31.0ms, of which client set-up 0.90ms (3%) and finish 0.50ms (2%)";
        let folded = fold(line, 40);
        assert!(folded.iter().all(|l| !l.trim().is_empty()), "{folded:?}");
    }
}

//! The narrower layouts: stacked (a round's probes on lines of their own,
//! one under the other) and blocks (each mode's rounds in a block of its own).

use crate::probe::{Mode, Sample};
use crate::render::format::{self, cell};
use crate::render::paint::{Line, Paint};

use super::{notes, shown_stages, stage_names, stages, status_or_dash, title, RowFormat, Slow};

/// Width of the total in the stacked and block layouts (to 100 s).
const VAL: usize = 5;
/// Width of a stage's value there: every figure under 10 s (`9999`).
const STAGE_VAL: usize = 4;

impl RowFormat {
    /// One mode's line for the stacked and block layouts, after `prefix`;
    /// `-v`'s extras go on a line of their own (`verbose_detail`).
    pub fn mode_line(&self, prefix: &str, s: &Sample, slow: bool, stage_width: usize) -> Line {
        let mut line = Line::plain(prefix.to_string());
        if self.style.quiet {
            match self.reason(s) {
                Some(reason) => {
                    line.push(format!("total {:>VAL$}", "err"), Paint::Red);
                    line.push(format!(" {}", status_or_dash(Some(s))), Paint::Red);
                    line.push(format!(" {reason}"), Paint::Dim);
                }
                None => {
                    line.push(
                        format!("total {:>VAL$}", cell(s.total())),
                        if slow { Paint::Yellow } else { Paint::Plain },
                    );
                    line.push(format!(" {}", s.status), Paint::Plain);
                }
            }
        } else {
            match self.reason(s) {
                Some(reason) => {
                    let text = format::truncate(&reason, stage_width);
                    line.push(format!("{text:<stage_width$}"), Paint::Red);
                    line.push(format!(" total {:>VAL$}", "-"), Paint::Plain);
                    line.push(" -", Paint::Red);
                }
                None => {
                    let text = stages(s)
                        .iter()
                        .map(|(n, v)| format!("{n} {:>STAGE_VAL$}", cell(*v)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    // The total is labelled: `=` after the stages would
                    // read as their sum, and `other` is in it too.
                    line.push(format!("{text:<stage_width$}"), Paint::Plain);
                    line.push(
                        format!(" total {:>VAL$}", cell(s.total())),
                        if slow { Paint::Yellow } else { Paint::Plain },
                    );
                    line.push(format!(" {}", s.status), Paint::Plain);
                }
            }
        }
        // Notes ride on this line only in `-q`, where it is short; otherwise
        // they go to the detail line, so the figures fit the narrow widths.
        let notes = notes(&[s]);
        if self.style.quiet && !notes.is_empty() {
            line.push(format!(" {notes}"), Paint::Dim);
        }
        line
    }

    /// The line of a mode whose probe did not run in its round (the round
    /// was cut off), after `prefix`: `-` for every figure and the code.
    pub fn not_run_line(&self, prefix: &str, mode: Mode, stage_width: usize) -> Line {
        let mut line = Line::plain(prefix.to_string());
        if self.style.quiet {
            line.push(format!("total {:>VAL$} -", "-"), Paint::Plain);
            return line;
        }
        let text = shown_stages(mode)
            .iter()
            .map(|stage| format!("{} {:>STAGE_VAL$}", stage.as_str(), "-"))
            .collect::<Vec<_>>()
            .join(" ");
        line.push(format!("{text:<stage_width$}"), Paint::Plain);
        line.push(format!(" total {:>VAL$} -", "-"), Paint::Plain);
        line
    }

    /// Blocks: the line of a mode whose probe did not run in round `round`.
    pub fn block_not_run(&self, round: u32, mode: Mode) -> Vec<Line> {
        let w = self.stages_width(mode, false);
        vec![self.not_run_line(&format!("{round:>4} "), mode, w)]
    }

    /// Width of a mode's stage text, so `total` lines up in every row.
    pub(super) fn stages_width(&self, mode: Mode, verbose: bool) -> usize {
        let names: Vec<&str> = stage_names(mode, verbose)
            .into_iter()
            .filter(|n| *n != "total" && *n != "rt")
            .collect();
        names.iter().map(|n| n.len() + 1 + STAGE_VAL).sum::<usize>() + names.len() - 1
    }

    /// The widest stage text of the modes the run shows.
    fn stages_width_of_modes(&self, verbose: bool) -> usize {
        self.modes()
            .into_iter()
            .map(|m| self.stages_width(m, verbose))
            .max()
            .unwrap_or(0)
    }

    /// Stacked: `#2 COLD …` and `   WARM …` in the round's own order; under
    /// `-v` each probe gets a second, indented line with the residual, the
    /// client's TLS set-up and the resumption, which do not fit beside the stages.
    pub fn stacked_rows(&self, round: u32, samples: &[&Sample], slow: Slow) -> Vec<Line> {
        let first = (samples.len() > 1)
            .then(|| samples.first().map(|s| s.mode))
            .flatten();
        self.stacked_lines(Some(round), None, samples, first, slow)
    }

    /// Stacked, one variant of a `--compare` round: its tag after the
    /// round number (which only the round's first line shows) on each of
    /// its lines. `first` is the mode of this variant that ran first in
    /// the round, if one did.
    pub fn stacked_variant_rows(
        &self,
        round: Option<u32>,
        variant: u8,
        samples: &[&Sample],
        first: Option<Mode>,
        slow: Slow,
    ) -> Vec<Line> {
        self.stacked_lines(round, Some(variant), samples, first, slow)
    }

    fn stacked_lines(
        &self,
        round: Option<u32>,
        variant: Option<u8>,
        samples: &[&Sample],
        first: Option<Mode>,
        slow: Slow,
    ) -> Vec<Line> {
        let w = self.stages_width_of_modes(false);
        let tag = variant.map_or(String::new(), |v| format!("{} ", self.tags.padded(v)));
        let indent = format!("           {}", self.tags.blank());
        // COLD on the first line of every round whatever the order, so the
        // cold lines read straight down; `*` marks the probe that ran first.
        // A mode whose probe did not run (a round cut off) shows `-`.
        let mut lines = Vec::new();
        for (i, mode) in self.modes().into_iter().enumerate() {
            let mark = if first == Some(mode) { '*' } else { ' ' };
            let number = match round {
                Some(round) if i == 0 => format!("#{round}"),
                _ => String::new(),
            };
            let prefix = format!("{number:>4} {tag}{}{mark} ", title(mode, true));
            match samples.iter().find(|s| s.mode == mode) {
                Some(s) => lines.extend(self.probe_lines(&prefix, s, slow.of(mode), w, &indent)),
                None => lines.push(self.not_run_line(&prefix, mode, w)),
            }
        }
        lines
    }

    /// A probe in the narrower layouts: its line, with the row notes beside
    /// it when they fit the width, and a second line when needed.
    fn probe_lines(
        &self,
        prefix: &str,
        s: &Sample,
        slow: bool,
        stage_width: usize,
        indent: &str,
    ) -> Vec<Line> {
        let mut main = self.mode_line(prefix, s, slow, stage_width);
        let notes = notes(&[s]);
        let inline = !self.style.quiet
            && !self.style.verbose
            && !notes.is_empty()
            && main.text().chars().count() + 1 + notes.chars().count() <= self.style.width;
        if inline {
            main.push(format!(" {notes}"), Paint::Dim);
        }
        let mut lines = vec![main];
        lines.extend(self.verbose_detail(s, indent, !inline));
        lines
    }

    /// Detail under a probe (`-v`'s figures, the row notes), after
    /// `indent`: wrapped at its words to the width, a figure kept with its
    /// label (`format::wrap`), never cut.
    fn detail_lines(&self, indent: &str, text: &str) -> Vec<Line> {
        format::wrap(&format!("{indent}{text}"), self.style.width)
            .into_iter()
            .map(|wrapped| {
                let words = wrapped.trim_start_matches(' ');
                let mut line = Line::plain(" ".repeat(wrapped.len() - words.len()));
                line.push(words.to_string(), Paint::Dim);
                line
            })
            .collect()
    }

    /// A probe's lines under its figures in the narrower layouts: `-v`'s
    /// residual, the client's TLS set-up and the resumption, then the row
    /// notes (unless they went beside the stages); the notes on a line of
    /// their own when they do not fit beside the rest. Empty when there is
    /// nothing to show.
    fn verbose_detail(&self, s: &Sample, indent: &str, with_notes: bool) -> Vec<Line> {
        if self.style.quiet {
            return Vec::new();
        }
        let mut text = String::new();
        if self.style.verbose && s.error.is_none() {
            text = format!("other {}", cell(s.other()));
            if s.mode == Mode::Cold && s.tls.is_some() {
                text.push_str(&format!(" · setup {}", cell(s.tls_setup())));
            }
            if let Some(t) = s.tls {
                text.push_str(if t.resumed {
                    " · resumed"
                } else {
                    " · full handshake"
                });
                match s.anatomy.as_deref().and_then(|a| a.round_trips) {
                    Some(1) => text.push_str(" in 1 round trip"),
                    Some(n) => text.push_str(&format!(" in {n} round trips")),
                    None => {}
                }
            }
        }
        let notes = if with_notes {
            notes(&[s])
        } else {
            String::new()
        };
        let beside = indent.chars().count() + text.chars().count() + 2 + notes.chars().count();
        if !notes.is_empty() && !text.is_empty() && beside > self.style.width {
            let mut lines = self.detail_lines(indent, &text);
            lines.extend(self.detail_lines(indent, &notes));
            return lines;
        }
        if !notes.is_empty() {
            if !text.is_empty() {
                text.push_str("  ");
            }
            text.push_str(&notes);
        }
        if text.is_empty() {
            return Vec::new();
        }
        self.detail_lines(indent, &text)
    }

    /// Blocks: one line for one mode, prefixed with the round number; under
    /// `-v` a second, indented line as in the stacked layout.
    pub fn block_row(&self, s: &Sample, slow: bool) -> Vec<Line> {
        let w = self.stages_width(s.mode, false);
        self.probe_lines(&format!("{:>4} ", s.round), s, slow, w, "     ")
    }

    /// Blocks, one probe of a `--compare` round: its variant's tag after
    /// the round number, which only the round's first line in the block shows.
    pub fn block_variant_row(&self, s: &Sample, show_round: bool, slow: bool) -> Vec<Line> {
        let w = self.stages_width(s.mode, false);
        let number = if show_round {
            s.round.to_string()
        } else {
            String::new()
        };
        let prefix = format!("{number:>4} {} ", self.tags.padded(s.variant));
        let indent = format!("     {}", self.tags.blank());
        self.probe_lines(&prefix, s, slow, w, &indent)
    }
}

//! The wide table: one row per round, the modes side by side under their heads.

use crate::probe::{Mode, Sample};
use crate::render::format::{self, write_cell};
use crate::render::paint::{Line, Paint};

use super::{code, notes, round_trips, stage_names, stages, title, RowFormat, Slow};

/// Width of one number cell in the wide table.
pub const CELL: usize = 7;

impl RowFormat {
    /// Width of a mode's block of cells.
    fn wide_width(&self, mode: Mode) -> usize {
        if self.style.quiet {
            CELL
        } else {
            let cells = stage_names(mode, self.style.verbose).len();
            let res = if self.style.verbose && mode == Mode::Cold {
                1
            } else {
                0
            };
            (cells - res) * CELL + res * 4
        }
    }

    /// The widest a wide row gets before its notes: the rule's length.
    pub(super) fn wide_row_width(&self) -> usize {
        let modes: usize = self
            .modes()
            .into_iter()
            .map(|m| self.wide_width(m) + 2)
            .sum();
        "-----+".len() + modes + "-------".len()
    }

    /// What a row begins with when it shows no round number: the round
    /// column and, with `--compare`, the tag column, blank.
    fn wide_blank_lead(&self) -> String {
        format!("{:4}{} |", "", self.tags.blank())
    }

    /// The mode titles, the column names and the rule under them.
    pub(super) fn wide_heads(&self) -> Vec<Line> {
        let (mut top, mut heads) = (
            Line::plain(self.wide_blank_lead()),
            Line::plain(self.wide_blank_lead()),
        );
        let mut rule = format!("-----{}+", "-".repeat(self.tags.blank().len()));
        for mode in self.modes() {
            let w = self.wide_width(mode);
            let heading = title(mode, self.style.quiet);
            top.push(format!("{heading:^w$}"), Paint::Bold)
                .push(" |", Paint::Plain);
            let names: String = if self.style.quiet {
                format!("{:>CELL$}", "total")
            } else {
                stage_names(mode, self.style.verbose)
                    .iter()
                    .map(|n| {
                        if *n == "rt" {
                            format!("{n:>4}")
                        } else {
                            format!("{n:>CELL$}")
                        }
                    })
                    .collect()
            };
            heads.push(names, Paint::Bold).push(" |", Paint::Plain);
            rule.push_str(&"-".repeat(w + 1));
            rule.push('+');
        }
        heads.push(" code", Paint::Bold);
        rule.push_str("-------");
        vec![top, heads, Line::plain(rule)]
    }

    /// One wide row for a round.
    pub fn wide_row(&self, round: u32, samples: &[&Sample], slow: Slow) -> Vec<Line> {
        let first = (samples.len() > 1).then(|| samples[0].mode);
        self.wide_line(format!("{round:>4} |"), samples, first, slow)
    }

    /// One variant's wide row in a `--compare` round: its tag after the
    /// round number, which only the round's first row shows. `first` is
    /// the mode of this variant that ran first in the round, if one did.
    pub fn wide_variant_row(
        &self,
        round: Option<u32>,
        variant: u8,
        samples: &[&Sample],
        first: Option<Mode>,
        slow: Slow,
    ) -> Vec<Line> {
        let number = round.map(|r| r.to_string()).unwrap_or_default();
        let lead = format!("{number:>4} {} |", self.tags.padded(variant));
        self.wide_line(lead, samples, first, slow)
    }

    /// The cells of a probe that got an answer: its stages (not when
    /// quiet), its total (yellow when `slow`), and with `-v` `other`, and
    /// for a cold probe the client's TLS set-up and whether it resumed.
    fn wide_cells(&self, line: &mut Line, s: &Sample, slow: bool) {
        if !self.style.quiet {
            let mut cells = String::with_capacity(CELL * 4);
            for (_, v) in stages(s) {
                write_cell(&mut cells, v, CELL);
            }
            line.push(cells, Paint::Plain);
        }
        let paint = if slow { Paint::Yellow } else { Paint::Plain };
        let mut total = String::with_capacity(CELL);
        write_cell(&mut total, s.total(), CELL);
        line.push(total, paint);
        if self.style.verbose {
            let mut extra = String::with_capacity(CELL + 4);
            write_cell(&mut extra, s.other(), CELL);
            if s.mode == Mode::Cold {
                write_cell(&mut extra, s.tls_setup(), CELL);
                extra.push_str(&format!("{:>4}", round_trips(s)));
            }
            line.push(extra, Paint::Dim);
        }
    }

    /// The cells of a mode whose probe did not run in the row's round: `-`
    /// in each, as for every figure not measured.
    fn wide_not_run(&self, line: &mut Line, mode: Mode) {
        let mut cells = String::with_capacity(self.wide_width(mode));
        if self.style.quiet {
            write_cell(&mut cells, None, CELL);
        } else {
            for name in stage_names(mode, self.style.verbose) {
                if name == "rt" {
                    cells.push_str(&format!("{:>4}", "-"));
                } else {
                    write_cell(&mut cells, None, CELL);
                }
            }
        }
        line.push(cells, Paint::Plain);
    }

    /// A wide row after `lead`: one probe of each mode, `*` beside `first`.
    fn wide_line(
        &self,
        lead: String,
        samples: &[&Sample],
        first: Option<Mode>,
        slow: Slow,
    ) -> Vec<Line> {
        let find = |m: Mode| samples.iter().copied().find(|s| s.mode == m);
        let (cold, warm) = (find(Mode::Cold), find(Mode::Warm));
        let mut line = Line::plain(lead);
        let mut quiet_notes = Vec::new();
        for mode in self.modes() {
            let w = self.wide_width(mode);
            match find(mode) {
                // Not run: its round was cut off (or its variant left out).
                None => self.wide_not_run(&mut line, mode),
                Some(s) => match self.reason(s) {
                    Some(reason) if self.style.quiet => {
                        line.push(format!("{:>w$}", "err"), Paint::Red);
                        quiet_notes.push(format!("{} {reason}", mode.as_str()));
                    }
                    Some(reason) => {
                        let text = format::truncate(&reason, w - 1);
                        line.push(format!(" {text:<pad$}", pad = w - 1), Paint::Red);
                    }
                    None => self.wide_cells(&mut line, s, slow.of(mode)),
                },
            }
            // `*|`: this mode's probe ran first in the round (see the legend).
            line.push(if first == Some(mode) { "*|" } else { " |" }, Paint::Plain);
        }
        let failed = samples.iter().any(|s| !s.ok());
        line.push(
            format!(" {}", code(cold, warm)),
            if failed { Paint::Red } else { Paint::Plain },
        );
        let mut tail = notes(samples);
        if !quiet_notes.is_empty() {
            if !tail.is_empty() {
                tail.push(' ');
            }
            tail.push_str(&quiet_notes.join("; "));
        }
        if tail.is_empty() {
            return vec![line];
        }
        // Notes that would push the row past the width go on a line of their
        // own under it, rather than being cut.
        if line.text().chars().count() + 1 + tail.chars().count() <= self.style.width {
            line.push(format!(" {tail}"), Paint::Dim);
            return vec![line];
        }
        let mut under = Line::plain(self.wide_blank_lead());
        under.push(format!(" {tail}"), Paint::Dim);
        vec![line, under]
    }
}

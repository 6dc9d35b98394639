//! The per-round lines of the three layouts, in plain, quiet and verbose form.

use std::time::Duration;

use crate::probe::{Mode, ModeSel, RunInfo, Sample};
use crate::text::format_duration;

use super::format::{cell, write_cell};
use super::layout::{Layout, Style};
use super::paint::{Line, Paint};

/// Width of one number cell in the wide table.
pub const CELL: usize = 7;
/// Width of one value in the stacked and block layouts.
const VAL: usize = 5;

/// Which totals to paint yellow, decided by the caller from running medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slow {
    pub cold: bool,
    pub warm: bool,
}

impl Slow {
    fn of(self, mode: Mode) -> bool {
        match mode {
            Mode::Cold => self.cold,
            Mode::Warm => self.warm,
        }
    }
}

pub struct Rows {
    pub style: Style,
    pub mode: ModeSel,
    pub timeout: Duration,
}

/// The stages a mode shows before its total, with their labels.
fn stages(s: &Sample) -> Vec<(&'static str, Option<Duration>)> {
    match s.mode {
        Mode::Cold => vec![
            ("dns", s.dns()),
            ("tcp", s.tcp()),
            ("tls", s.tls()),
            ("srv", s.srv()),
        ],
        Mode::Warm => vec![("wait", s.wait()), ("srv", s.srv())],
    }
}

fn stage_names(mode: Mode, verbose: bool) -> Vec<&'static str> {
    let mut v = match mode {
        Mode::Cold => vec!["dns", "tcp", "tls", "srv", "total"],
        Mode::Warm => vec!["wait", "srv", "total"],
    };
    if verbose {
        v.push("other");
        if mode == Mode::Cold {
            v.push("setup");
            v.push("res");
        }
    }
    v
}

/// `yes`/`no` for a handshake that did or did not resume, `-` without one.
fn resumed(s: &Sample) -> &'static str {
    match s.tls {
        Some(t) if t.resumed => "yes",
        Some(_) => "no",
        None => "-",
    }
}

/// Row notes: `warmup`, `new conn`, `retried`, `body>cap`, `429 limited`,
/// `retrans` (the kernel retransmitted segments during the probe).
pub fn notes(samples: &[&Sample]) -> String {
    let mut notes: Vec<&str> = Vec::new();
    let any = |f: &dyn Fn(&Sample) -> bool| samples.iter().any(|s| f(s));
    if any(&|s| s.warmup) {
        notes.push("warmup");
    }
    if any(&|s| s.new_conn()) {
        notes.push("new conn");
    }
    if any(&|s| s.retries > 0) {
        notes.push("retried");
    }
    if any(&|s| s.body_overflow) {
        notes.push("body>cap");
    }
    if any(&|s| s.status == 429) {
        notes.push("429 limited");
    }
    if any(&|s| s.retransmitted()) {
        notes.push("retrans");
    }
    notes.join("·")
}

fn side(s: Option<&Sample>) -> String {
    match s {
        Some(s) if s.ok() => s.status.to_string(),
        _ => "-".to_string(),
    }
}

/// `200`, or `-/200` style when the two sides differ (left cold, right warm).
pub fn code(cold: Option<&Sample>, warm: Option<&Sample>) -> String {
    match (cold, warm) {
        (Some(_), Some(_)) => {
            let (c, w) = (side(cold), side(warm));
            if c == w {
                c
            } else {
                format!("{c}/{w}")
            }
        }
        (Some(one), None) | (None, Some(one)) => side(Some(one)),
        (None, None) => "-".into(),
    }
}

impl Rows {
    fn reason(&self, s: &Sample) -> Option<String> {
        s.error
            .as_ref()
            .map(|e| super::format::reason(e.kind, self.timeout))
    }

    fn wide_modes(&self) -> Vec<Mode> {
        match self.mode {
            ModeSel::Both => vec![Mode::Cold, Mode::Warm],
            ModeSel::Cold => vec![Mode::Cold],
            ModeSel::Warm => vec![Mode::Warm],
        }
    }

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

    /// The two lines the preflight settles, then the column heads of the layout.
    pub fn header(&self, info: &RunInfo) -> Vec<Line> {
        let mut first = format!("{} {}", info.method, info.url);
        if let Some(addr) = info.addr {
            first.push_str(&format!(" -> {addr}"));
        }
        if let Some(p) = info.proto {
            first.push_str(&format!(" {}", p.as_str()));
        }
        if let Some(t) = &info.tls {
            first.push_str(&format!(" · {}", t.version_label()));
        }
        first.push_str(&format!(" · {} bytes", info.preflight_bytes));
        let rounds = if info.count == 0 {
            "until Ctrl+C".to_string()
        } else {
            format!("{} rounds", info.count)
        };
        let resume = if info.resume { "" } else { ", resume=off" };
        let second = format!(
            "{rounds}, {} interval, order={}{resume}; all times in ms, \"-\" = not measured",
            format_duration(info.interval),
            info.order.as_str()
        );
        let mut lines = vec![Line::plain(first), Line::plain(second)];
        if self.mode == ModeSel::Both && matches!(self.style.layout, Layout::Wide | Layout::Stacked)
        {
            let mut legend = Line::new();
            legend.push("* = the probe that ran first in its round", Paint::Dim);
            lines.push(legend);
        }
        if info.calibration {
            let mut l = Line::new();
            l.push(
                "calibration: tlsping's own server on 127.0.0.1 - this machine's floor",
                Paint::Bold,
            );
            lines.push(l);
        }
        if self.style.verbose
            && !self.style.quiet
            && self.mode != ModeSel::Warm
            && info.https
        {
            let mut legend = Line::new();
            legend.push(
                "setup = our own tls work before the ClientHello left",
                Paint::Dim,
            );
            lines.push(legend);
        }
        match self.style.layout {
            Layout::Wide => lines.extend(self.wide_heads()),
            Layout::Blocks if self.mode != ModeSel::Warm => {
                let mut l = Line::new();
                l.push("COLD new connection", Paint::Bold);
                lines.push(l);
            }
            Layout::Blocks => {
                let mut l = Line::new();
                l.push("WARM keep-alive", Paint::Bold);
                lines.push(l);
            }
            Layout::Stacked => {}
        }
        lines
    }

    fn wide_heads(&self) -> Vec<Line> {
        let (mut top, mut heads) = (
            Line::plain(format!("{:4} |", "")),
            Line::plain(format!("{:4} |", "")),
        );
        let mut rule = "-----+".to_string();
        for mode in self.wide_modes() {
            let w = self.wide_width(mode);
            let title = match (mode, self.style.quiet) {
                (Mode::Cold, false) => "COLD new connection",
                (Mode::Warm, false) => "WARM keep-alive",
                (Mode::Cold, true) => "COLD",
                (Mode::Warm, true) => "WARM",
            };
            top.push(format!("{title:^w$}"), Paint::Bold)
                .push(" |", Paint::Plain);
            let names: String = if self.style.quiet {
                format!("{:>CELL$}", "total")
            } else {
                stage_names(mode, self.style.verbose)
                    .iter()
                    .map(|n| {
                        if *n == "res" {
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
        let find = |m: Mode| samples.iter().copied().find(|s| s.mode == m);
        let (cold, warm) = (find(Mode::Cold), find(Mode::Warm));
        let mut line = Line::plain(format!("{round:>4} |"));
        let mut quiet_notes = Vec::new();
        for mode in self.wide_modes() {
            let w = self.wide_width(mode);
            match find(mode) {
                None => {
                    line.push(format!("{:w$}", ""), Paint::Plain);
                }
                Some(s) => match self.reason(s) {
                    Some(reason) if self.style.quiet => {
                        line.push(format!("{:>w$}", "err"), Paint::Red);
                        quiet_notes.push(format!("{} {reason}", mode.as_str()));
                    }
                    Some(reason) => {
                        let text = super::format::truncate(&reason, w - 1);
                        line.push(format!(" {text:<pad$}", pad = w - 1), Paint::Red);
                    }
                    None => {
                        if !self.style.quiet {
                            let mut cells = String::with_capacity(CELL * 4);
                            for (_, v) in stages(s) {
                                write_cell(&mut cells, v, CELL);
                            }
                            line.push(cells, Paint::Plain);
                        }
                        let paint = if slow.of(mode) {
                            Paint::Yellow
                        } else {
                            Paint::Plain
                        };
                        let mut total = String::with_capacity(CELL);
                        write_cell(&mut total, s.total(), CELL);
                        line.push(total, paint);
                        if self.style.verbose {
                            let mut extra = String::with_capacity(CELL + 4);
                            write_cell(&mut extra, s.other(), CELL);
                            if mode == Mode::Cold {
                                write_cell(&mut extra, s.tls_setup(), CELL);
                                extra.push_str(&format!("{:>4}", resumed(s)));
                            }
                            line.push(extra, Paint::Dim);
                        }
                    }
                },
            }
            // `*|`: this mode's probe ran first in the round (see the legend).
            let first = samples.len() > 1 && samples.first().is_some_and(|s| s.mode == mode);
            line.push(if first { "*|" } else { " |" }, Paint::Plain);
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
        let mut under = Line::plain(format!("{:4} |", ""));
        under.push(format!(" {tail}"), Paint::Dim);
        vec![line, under]
    }

    /// One mode's line for the stacked and block layouts, after `prefix`;
    /// `-v`'s extras go on a line of their own (`verbose_detail`).
    pub fn mode_line(&self, prefix: &str, s: &Sample, slow: bool, stage_width: usize) -> Line {
        let mut line = Line::plain(prefix.to_string());
        if self.style.quiet {
            match self.reason(s) {
                Some(reason) => {
                    line.push(format!("= {:>VAL$}", "err"), Paint::Red);
                    line.push(format!(" {}", side(Some(s))), Paint::Red);
                    line.push(format!(" {reason}"), Paint::Dim);
                }
                None => {
                    line.push(
                        format!("= {:>VAL$}ms", cell(s.total())),
                        if slow { Paint::Yellow } else { Paint::Plain },
                    );
                    line.push(format!(" {}", s.status), Paint::Plain);
                }
            }
        } else {
            match self.reason(s) {
                Some(reason) => {
                    let text = super::format::truncate(&reason, stage_width);
                    line.push(format!("{text:<stage_width$}"), Paint::Red);
                    line.push(format!(" = {:>VAL$}  ", "-"), Paint::Plain);
                    line.push(" -", Paint::Red);
                }
                None => {
                    let text = stages(s)
                        .iter()
                        .map(|(n, v)| format!("{n} {:>VAL$}", cell(*v)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    line.push(format!("{text:<stage_width$}"), Paint::Plain);
                    line.push(
                        format!(" = {:>VAL$}ms", cell(s.total())),
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

    /// Width of a mode's stage text, so `=` lines up in every row.
    fn stages_width(&self, mode: Mode, verbose: bool) -> usize {
        let names: Vec<&str> = stage_names(mode, verbose)
            .into_iter()
            .filter(|n| *n != "total" && *n != "res")
            .collect();
        names.iter().map(|n| n.len() + 1 + VAL).sum::<usize>() + names.len() - 1
    }

    fn stages_width_of_modes(&self, verbose: bool) -> usize {
        self.wide_modes()
            .into_iter()
            .map(|m| self.stages_width(m, verbose))
            .max()
            .unwrap_or(0)
    }

    /// Stacked: `#2 COLD …` and `   WARM …` in the round's own order; under
    /// `-v` each probe gets a second, indented line with the residual, the
    /// client's TLS set-up and the resumption, which do not fit beside the stages.
    pub fn stacked_rows(&self, round: u32, samples: &[&Sample], slow: Slow) -> Vec<Line> {
        let w = self.stages_width_of_modes(false);
        let first = (samples.len() > 1)
            .then(|| samples.first().map(|s| s.mode))
            .flatten();
        // COLD on the first line of every round whatever the order, so the
        // cold lines read straight down; `*` marks the probe that ran first.
        let mut in_order: Vec<&Sample> = samples.to_vec();
        in_order.sort_by_key(|s| s.mode != Mode::Cold);
        let mut lines = Vec::new();
        for (i, s) in in_order.into_iter().enumerate() {
            let tag = if s.mode == Mode::Cold { "COLD" } else { "WARM" };
            let mark = if first == Some(s.mode) { '*' } else { ' ' };
            let prefix = if i == 0 {
                format!("{:>4} {tag}{mark} ", format!("#{round}"))
            } else {
                format!("     {tag}{mark} ")
            };
            lines.extend(self.probe_lines(&prefix, s, slow.of(s.mode), w, "           "));
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

    /// A probe's second line in the narrower layouts: `-v`'s residual, the
    /// client's TLS set-up and the resumption, then the row notes (unless
    /// they went beside the stages). `None` when there is nothing to show.
    fn verbose_detail(&self, s: &Sample, indent: &str, with_notes: bool) -> Option<Line> {
        if self.style.quiet {
            return None;
        }
        let mut text = String::new();
        if self.style.verbose && s.error.is_none() {
            text = format!("other {}", cell(s.other()));
            if s.mode == Mode::Cold && s.tls.is_some() {
                text.push_str(&format!(" · setup {}", cell(s.tls_setup())));
            }
            if s.tls.is_some() {
                text.push_str(if resumed(s) == "yes" {
                    " · resumed"
                } else {
                    " · full handshake"
                });
            }
        }
        let notes = if with_notes {
            notes(&[s])
        } else {
            String::new()
        };
        if !notes.is_empty() {
            if !text.is_empty() {
                text.push_str("  ");
            }
            text.push_str(&notes);
        }
        if text.is_empty() {
            return None;
        }
        let mut extra = Line::plain(indent.to_string());
        extra.push(text, Paint::Dim);
        Some(extra)
    }

    /// Blocks: one line for one mode, prefixed with the round number; under
    /// `-v` a second, indented line as in the stacked layout.
    pub fn block_row(&self, s: &Sample, slow: bool) -> Vec<Line> {
        let w = self.stages_width(s.mode, false);
        self.probe_lines(&format!("{:>4} ", s.round), s, slow, w, "     ")
    }
}

//! The per-round lines of the three layouts, in plain, quiet and verbose form.
//!
//! This file holds what the layouts share: the row format, the stage labels,
//! the titles, the notes and codes, and the header. The wide table lives in
//! `wide`, the stacked and block layouts in `narrow`.

mod narrow;
mod wide;

use std::time::Duration;

use crate::probe::{Mode, ModeChoice, RunInfo, Sample, Stage};
use crate::render::format;
use crate::text::format_duration;

use super::compare::{header_items, wrap_items, Tags};
use super::layout::{Layout, Style};
use super::paint::{Line, Paint};

pub use wide::CELL;

/// Which totals to paint yellow, decided by the caller from running medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slow {
    pub cold: bool,
    pub warm: bool,
}

impl Slow {
    /// Whether `mode`'s total is the slow one.
    pub fn of(self, mode: Mode) -> bool {
        match mode {
            Mode::Cold => self.cold,
            Mode::Warm => self.warm,
        }
    }
}

/// How the round rows of a run are laid out: the layout and its options, the
/// modes the run shows, the timeout its failure reasons quote, and with
/// `--compare` the tag that names each variant's rows.
pub struct RowFormat {
    pub style: Style,
    pub mode: ModeChoice,
    pub timeout: Duration,
    pub tags: Tags,
}

/// The stages a mode shows before its total, in order.
fn shown_stages(mode: Mode) -> &'static [Stage] {
    match mode {
        Mode::Cold => &Stage::COLD[..4],
        Mode::Warm => &Stage::WARM[..2],
    }
}

/// A mode's title: `COLD new connection` / `WARM keep-alive`, or just
/// `COLD` / `WARM` when `short`.
pub fn title(mode: Mode, short: bool) -> &'static str {
    match (mode, short) {
        (Mode::Cold, false) => "COLD new connection",
        (Mode::Warm, false) => "WARM keep-alive",
        (Mode::Cold, true) => "COLD",
        (Mode::Warm, true) => "WARM",
    }
}

/// The stages a mode shows before its total, with their labels.
fn stages(s: &Sample) -> Vec<(&'static str, Option<Duration>)> {
    let all = s.stages();
    shown_stages(s.mode)
        .iter()
        .map(|&stage| (stage.as_str(), all.get(stage).map(crate::text::micros)))
        .collect()
}

/// A mode's column names: its stages and `total`, then `-v`'s extras.
fn stage_names(mode: Mode, verbose: bool) -> Vec<&'static str> {
    let mut v: Vec<&str> = shown_stages(mode).iter().map(|s| s.as_str()).collect();
    v.push(Stage::Total.as_str());
    if verbose {
        v.push(Stage::Other.as_str());
        if mode == Mode::Cold {
            v.push("setup");
            v.push("rt");
        }
    }
    v
}

/// `-v`'s `rt` cell: the round trips inside `tls` (`tls_round_trips`),
/// `r` after them for a resumed handshake, `?` where the handshake could
/// not tell; `-` for a probe that made no handshake.
fn round_trips(s: &Sample) -> String {
    let Some(t) = s.tls else {
        return "-".into();
    };
    let n = s
        .anatomy
        .as_deref()
        .and_then(|a| a.round_trips)
        .map_or_else(|| "?".to_string(), |n| n.to_string());
    if t.resumed {
        format!("{n}r")
    } else {
        n
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

/// The HTTP status of a probe that succeeded, `-` otherwise.
fn status_or_dash(s: Option<&Sample>) -> String {
    match s {
        Some(s) if s.ok() => s.status.to_string(),
        _ => "-".to_string(),
    }
}

/// `200`, or `-/200` style when the two sides differ (left cold, right warm).
pub fn code(cold: Option<&Sample>, warm: Option<&Sample>) -> String {
    match (cold, warm) {
        (Some(_), Some(_)) => {
            let (c, w) = (status_or_dash(cold), status_or_dash(warm));
            if c == w {
                c
            } else {
                format!("{c}/{w}")
            }
        }
        (Some(one), None) | (None, Some(one)) => status_or_dash(Some(one)),
        (None, None) => "-".into(),
    }
}

impl RowFormat {
    /// The format of `info`'s rows in `style`: with `--compare`, the tags
    /// are the labels when they fit beside the widest row, letters otherwise.
    pub fn new(info: &RunInfo, style: Style) -> RowFormat {
        let mut rows = RowFormat {
            style,
            mode: info.settings.mode,
            timeout: info.settings.timeout,
            tags: Tags::default(),
        };
        if let Some(cmp) = &info.compare {
            let room = style.width.saturating_sub(rows.row_width());
            rows.tags = Tags::new(cmp, room);
        }
        rows
    }

    /// The widest a round line's figures get without a tag (its notes may
    /// go to a line of their own).
    fn row_width(&self) -> usize {
        // ` total  94.8 200` after the stages, or alone in `-q`.
        let total = 7 + 5 + 4;
        let quiet = 6 + 5 + 4;
        let widest_stages = |prefix: usize| {
            let figures = self
                .modes()
                .into_iter()
                .map(|m| self.stages_width(m, false))
                .max()
                .filter(|_| !self.style.quiet)
                .map_or(quiet, |w| w + total);
            prefix + figures
        };
        match self.style.layout {
            Layout::Wide => self.wide_row_width(),
            // `  #2 COLD* ` and `   2 `.
            Layout::Stacked => widest_stages(11),
            Layout::Blocks => widest_stages(5),
        }
    }

    /// The sort key that puts a round's rows in variant order, cold first.
    pub fn row_order(s: &Sample) -> (u8, bool) {
        (s.variant, s.mode != Mode::Cold)
    }

    fn reason(&self, s: &Sample) -> Option<String> {
        s.error
            .as_ref()
            .map(|e| format::reason(e.kind, self.timeout))
    }

    /// The modes the run shows, cold first.
    pub fn modes(&self) -> Vec<Mode> {
        match self.mode {
            ModeChoice::Both => vec![Mode::Cold, Mode::Warm],
            ModeChoice::Cold => vec![Mode::Cold],
            ModeChoice::Warm => vec![Mode::Warm],
        }
    }

    /// The two lines the preflight settles, then the column heads of the layout.
    pub fn header(&self, info: &RunInfo) -> Vec<Line> {
        let (first, second) = settled_lines(info);
        let mut lines = vec![Line::plain(first)];
        // The legend goes to a line of its own rather than be cut.
        match second.split_once("; ") {
            Some((rounds, legend)) if second.chars().count() > self.style.width => {
                lines.push(Line::plain(format!("{rounds};")));
                lines.push(Line::plain(legend.to_string()));
            }
            _ => lines.push(Line::plain(second)),
        }
        if let Some(cmp) = &info.compare {
            let lead = format!("compare {}:", cmp.axis.as_str());
            let items = header_items(cmp, &self.tags);
            lines.extend(
                wrap_items(&lead, &items, self.style.width)
                    .into_iter()
                    .map(Line::plain),
            );
        }
        lines.extend(
            connection_flags(info, self.style.width)
                .into_iter()
                .map(Line::plain),
        );
        // With `--compare` a round has several probes even in one mode.
        let several = self.mode == ModeChoice::Both || info.compare.is_some();
        if several && matches!(self.style.layout, Layout::Wide | Layout::Stacked) {
            let mut legend = Line::new();
            legend.push("* = the probe that ran first in its round", Paint::Dim);
            lines.push(legend);
        }
        if info.settings.calibrate {
            let mut l = Line::new();
            l.push(
                "calibration: tlsping's own server on 127.0.0.1 - this machine's floor",
                Paint::Bold,
            );
            lines.push(l);
        }
        if self.style.verbose && !self.style.quiet && self.mode != ModeChoice::Warm && info.https {
            let mut legend = Line::new();
            legend.push(
                if self.style.layout == Layout::Wide {
                    "setup = our own tls work before the ClientHello left · \
                     rt = round trips inside tls (r: resumed)"
                } else {
                    "setup = our own tls work before the ClientHello left"
                },
                Paint::Dim,
            );
            lines.push(legend);
        }
        match self.style.layout {
            Layout::Wide => lines.extend(self.wide_heads()),
            Layout::Blocks => {
                // The blocks open with cold unless the run is warm only.
                let mode = if self.mode == ModeChoice::Warm {
                    Mode::Warm
                } else {
                    Mode::Cold
                };
                let mut l = Line::new();
                l.push(title(mode, false), Paint::Bold);
                lines.push(l);
            }
            Layout::Stacked => {}
        }
        lines
    }
}

/// The header's first two lines: the request and the connection the
/// preflight settled on, then the rounds, their interval and order.
fn settled_lines(info: &RunInfo) -> (String, String) {
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
    let rounds = match info.settings.count {
        0 => "until Ctrl+C".to_string(),
        1 => "1 round".to_string(),
        n => format!("{n} rounds"),
    };
    let resume = if info.settings.resume {
        ""
    } else {
        ", resume=off"
    };
    let second = format!(
        "{rounds}, {} interval, order={}{resume}; all times in ms, \"-\" = not measured",
        format_duration(info.settings.interval),
        info.settings.order.as_str()
    );
    (first, second)
}

/// The header lines of the connection flags, when any was given: what
/// every probe of the run asked for beyond the defaults, wrapped at `width`
/// between items (an item longer than a line is cut with the line).
fn connection_flags(info: &RunInfo, width: usize) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(max) = info.settings.tls_max {
        parts.push(format!("tls-max={}", max.as_str()));
    }
    if let Some(curves) = &info.settings.curves {
        parts.push(format!("curves={curves}"));
    }
    for entry in &info.settings.resolve {
        parts.push(format!("resolve={entry}"));
    }
    for entry in &info.settings.connect_to {
        parts.push(format!("connect-to={entry}"));
    }
    if info.settings.client_cert.is_some() {
        parts.push("client certificate".into());
    }
    if info.settings.early_data {
        parts.push("early data".into());
    }
    let items: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let sep = if i + 1 < parts.len() { "," } else { "" };
            format!("{}{sep}", crate::text::printable(part))
        })
        .collect();
    wrap_items("connection:", &items, width)
}

//! The wide live table: one row per round, cold and warm side by side.

use std::io::{self, Write};

use crate::probe::{format_duration, Mode, ModeSel, Observer, RunInfo, Sample};

use super::format::{cell, truncate};

/// Width of one number cell.
const CELL: usize = 7;
const COLD_COLS: usize = 5;
const WARM_COLS: usize = 3;

pub struct WideTable<W: Write> {
    out: W,
    mode: ModeSel,
    timeout: std::time::Duration,
}

/// The header lines: what was settled by the preflight, then the column heads.
pub fn header_lines(info: &RunInfo) -> Vec<String> {
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
    let rounds = if info.count == 0 { "until Ctrl+C".to_string() } else { format!("{} rounds", info.count) };
    let second = format!(
        "{rounds}, {} interval, order={}; all times in ms, \"-\" = not measured",
        format_duration(info.interval),
        info.order.as_str()
    );
    vec![first, second]
}

fn cold_cells(s: &Sample) -> [Option<std::time::Duration>; COLD_COLS] {
    [s.dns(), s.tcp(), s.tls(), s.srv(), s.total()]
}

fn warm_cells(s: &Sample) -> [Option<std::time::Duration>; WARM_COLS] {
    [s.wait(), s.srv(), s.total()]
}

fn cells(values: &[Option<std::time::Duration>]) -> String {
    values.iter().map(|v| format!("{:>CELL$}", cell(*v))).collect()
}

fn names(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n:>CELL$}")).collect()
}

/// A failed probe's block: its reason, left-aligned and cut to the block's width.
fn reason_block(reason: &str, width: usize) -> String {
    format!(" {:<w$}", truncate(reason, width - 1), w = width - 1)
}

/// Row notes: `warmup`, `new conn`, `retried`, `body>cap`, `429 limited`.
pub fn notes(samples: &[Sample]) -> String {
    let mut notes: Vec<&str> = Vec::new();
    if samples.iter().any(|s| s.warmup) {
        notes.push("warmup");
    }
    if samples.iter().any(|s| s.new_conn()) {
        notes.push("new conn");
    }
    if samples.iter().any(|s| s.retries > 0) {
        notes.push("retried");
    }
    if samples.iter().any(|s| s.body_overflow) {
        notes.push("body>cap");
    }
    if samples.iter().any(|s| s.status == 429) {
        notes.push("429 limited");
    }
    notes.join("·")
}

/// `200`, or `-/200` style when the two sides differ (`-` = no response).
pub fn code(cold: Option<&Sample>, warm: Option<&Sample>) -> String {
    let side = |s: Option<&Sample>| match s {
        Some(s) if s.ok() => s.status.to_string(),
        _ => "-".to_string(),
    };
    match (cold, warm) {
        (Some(c), Some(w)) => {
            let (c, w) = (side(Some(c)), side(Some(w)));
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

impl<W: Write> WideTable<W> {
    pub fn new(out: W, info: &RunInfo) -> WideTable<W> {
        WideTable { out, mode: info.mode, timeout: info.timeout }
    }

    pub fn start(&mut self, info: &RunInfo) -> io::Result<()> {
        for line in header_lines(info) {
            writeln!(self.out, "{line}")?;
        }
        let cold_w = CELL * COLD_COLS;
        let warm_w = CELL * WARM_COLS;
        let (mut top, mut heads, mut rule) = (format!("{:4} |", ""), format!("{:4} |", ""), "-----+".to_string());
        if self.mode != ModeSel::Warm {
            top.push_str(&format!("{:^cold_w$} |", "COLD new connection"));
            heads.push_str(&format!("{} |", names(&["dns", "tcp", "tls", "srv", "total"])));
            rule.push_str(&format!("{}+", "-".repeat(cold_w + 1)));
        }
        if self.mode != ModeSel::Cold {
            top.push_str(&format!("{:^warm_w$} |", "WARM keep-alive"));
            heads.push_str(&format!("{} |", names(&["wait", "srv", "total"])));
            rule.push_str(&format!("{}+", "-".repeat(warm_w + 1)));
        }
        heads.push_str(" code");
        rule.push_str("-------");
        writeln!(self.out, "{top}")?;
        writeln!(self.out, "{heads}")?;
        writeln!(self.out, "{rule}")?;
        self.out.flush()
    }

    fn block(&self, s: Option<&Sample>, width: usize, values: &[Option<std::time::Duration>]) -> String {
        match s {
            Some(s) if s.error.is_some() => {
                let kind = s.error.as_ref().map(|e| e.kind.reason(self.timeout)).unwrap_or_default();
                reason_block(&kind, width)
            }
            Some(_) => cells(values),
            None => format!("{:>width$}", ""),
        }
    }

    pub fn row(&self, round: u32, samples: &[Sample]) -> String {
        let cold = samples.iter().find(|s| s.mode == Mode::Cold);
        let warm = samples.iter().find(|s| s.mode == Mode::Warm);
        let mut line = format!("{round:>4} |");
        if self.mode != ModeSel::Warm {
            let values = cold.map(cold_cells).unwrap_or_default();
            line.push_str(&self.block(cold, CELL * COLD_COLS, &values));
            line.push_str(" |");
        }
        if self.mode != ModeSel::Cold {
            let values = warm.map(warm_cells).unwrap_or_default();
            line.push_str(&self.block(warm, CELL * WARM_COLS, &values));
            line.push_str(" |");
        }
        line.push_str(&format!(" {}", code(cold, warm)));
        let notes = notes(samples);
        if !notes.is_empty() {
            line.push_str(&format!(" {notes}"));
        }
        line
    }
}

impl<W: Write> Observer for WideTable<W> {
    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        let line = self.row(round, samples);
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}

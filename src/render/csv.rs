//! `--csv`: one row per sample, written and flushed as each sample finishes.

use std::io::{self, Write};
use std::time::Duration;

use crate::probe::{tls_version_label, Observer, RunInfo, Sample};

/// The original's columns, in its order; ours are appended after `error`.
pub const COLUMNS: [&str; 24] = [
    "round",
    "mode",
    "warmup",
    "dns_ms",
    "tcp_ms",
    "tls_ms",
    "wait_ms",
    "srv_ms",
    "total_ms",
    "other_ms",
    "reused",
    "new_conn",
    "retries",
    "status",
    "proto",
    "tls_version",
    "alpn",
    "tls_resumed",
    "cert_chain_len",
    "bytes",
    "addr",
    "body_overflow",
    "error_kind",
    "error",
];

pub const CURL_COLUMNS: [&str; 8] = [
    "curl_namelookup_us",
    "curl_connect_us",
    "curl_appconnect_us",
    "curl_pretransfer_us",
    "curl_posttransfer_us",
    "curl_starttransfer_us",
    "curl_total_us",
    "curl_num_connects",
];

/// Where the time went (see the JSON fields of the same names); after the
/// raw timers, so every earlier column keeps its place.
pub const ATTRIBUTION_COLUMNS: [&str; 6] = [
    "tls_setup_ms",
    "tls_finish_ms",
    "tcp_rtt_ms",
    "tcp_min_rtt_ms",
    "retrans",
    "server_timing",
];

/// After the attribution columns: what the connection flags produced.
pub const CONNECTION_COLUMNS: [&str; 1] = ["early_data"];

/// When each probe started: milliseconds from the start of the rounds and
/// the wall clock (RFC 3339, UTC, milliseconds). At the end, so every
/// column of the original and every earlier addition keeps its place.
pub const TIME_COLUMNS: [&str; 2] = ["t_ms", "at"];

/// `Server-Timing` metrics in one cell, in the header's own syntax
/// (`name;dur=12.5;desc="text", next`), so a spreadsheet keeps them together.
pub fn server_timing_cell(metrics: &[crate::probe::ServerTiming]) -> String {
    use std::fmt::Write as _;
    let mut cell = String::new();
    for (i, m) in metrics.iter().enumerate() {
        if i > 0 {
            cell.push_str(", ");
        }
        cell.push_str(&m.name);
        if let Some(dur) = m.dur_ms {
            let _ = write!(cell, ";dur={dur}");
        }
        if let Some(desc) = &m.desc {
            cell.push_str(";desc=\"");
            for c in desc.chars() {
                if c == '"' || c == '\\' {
                    cell.push('\\');
                }
                cell.push(c);
            }
            cell.push('"');
        }
    }
    neutralise(&cell)
}

/// A text cell a spreadsheet would evaluate as a formula gets a leading `'`,
/// which spreadsheets show as text and do not run.
pub fn neutralise(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

/// With `--compare`, the last column: the label of the sample's variant.
pub const COMPARE_COLUMN: &str = "variant";

/// Every column name, in order; `compared` adds the `variant` column.
fn column_names(compared: bool) -> impl Iterator<Item = &'static str> {
    COLUMNS
        .iter()
        .chain(CURL_COLUMNS.iter())
        .chain(ATTRIBUTION_COLUMNS.iter())
        .chain(CONNECTION_COLUMNS.iter())
        .chain(TIME_COLUMNS.iter())
        .copied()
        .chain(compared.then_some(COMPARE_COLUMN))
}

pub struct CsvStream<W: Write> {
    /// Boxed: the writer carries its whole state and buffer, and the
    /// stream is held by value wherever the output is chosen.
    out: Box<csv::Writer<W>>,
    /// Reused for every formatted number, so stage cells cost no allocation.
    scratch: String,
    /// `--compare`: the variants' labels by index, for the `variant` column.
    labels: Option<Vec<String>>,
}

impl<W: Write> CsvStream<W> {
    /// Writes the header row at once, so an empty run still yields a valid file.
    pub fn new(out: W) -> io::Result<CsvStream<W>> {
        CsvStream::start(out, None)
    }

    /// As `new`, for a `--compare` run: a last column, `variant`, holds the
    /// label of each sample's variant (`labels` by variant index).
    pub fn new_compared(out: W, labels: Vec<String>) -> io::Result<CsvStream<W>> {
        CsvStream::start(out, Some(labels))
    }

    fn start(out: W, labels: Option<Vec<String>>) -> io::Result<CsvStream<W>> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        out.write_record(column_names(labels.is_some()))?;
        out.flush()?;
        Ok(CsvStream {
            out: Box::new(out),
            scratch: String::with_capacity(64),
            labels,
        })
    }

    fn int(&mut self, v: impl itoa::Integer) -> csv::Result<()> {
        self.out.write_field(itoa::Buffer::new().format(v))
    }

    fn boolean(&mut self, v: bool) -> csv::Result<()> {
        self.out.write_field(if v { "true" } else { "false" })
    }

    fn text(&mut self, v: Option<&str>) -> csv::Result<()> {
        self.out.write_field(v.unwrap_or(""))
    }

    /// Milliseconds with three decimals; empty when not measured.
    fn stage(&mut self, d: Option<Duration>) -> csv::Result<()> {
        use std::fmt::Write as _;
        self.scratch.clear();
        if let Some(d) = d {
            let _ = write!(self.scratch, "{:.3}", crate::text::millis(d));
        }
        self.out.write_field(&self.scratch)
    }

    fn write_row(&mut self, s: &Sample) -> csv::Result<()> {
        self.int(s.round)?;
        self.text(Some(s.mode.as_str()))?;
        self.boolean(s.warmup)?;
        for d in [
            s.dns(),
            s.tcp(),
            s.tls(),
            s.wait(),
            s.srv(),
            s.total(),
            s.other(),
        ] {
            self.stage(d)?;
        }
        self.boolean(s.reused())?;
        self.boolean(s.new_conn())?;
        self.int(s.retries)?;
        self.int(s.status)?;
        self.text(s.proto.map(|p| p.as_str()))?;
        let version = s.tls.map(|f| tls_version_label(f.version));
        self.text(version.as_deref())?;
        self.text(s.tls.and_then(|f| f.alpn).map(|p| p.as_str()))?;
        self.text(s.tls.map(|f| if f.resumed { "true" } else { "false" }))?;
        match s.tls.and_then(|f| f.chain_len) {
            Some(n) => self.int(n)?,
            None => self.text(None)?,
        }
        self.int(s.bytes)?;
        let addr = s.addr.map(|a| a.to_string());
        self.text(addr.as_deref())?;
        self.boolean(s.body_overflow)?;
        self.text(s.error.as_ref().map(|e| e.kind.slug()))?;
        let error = s.error.as_ref().map(|e| neutralise(&e.text));
        self.text(error.as_deref())?;
        let t = s.timers;
        for v in [
            t.namelookup_us,
            t.connect_us,
            t.appconnect_us,
            t.pretransfer_us,
            t.posttransfer_us,
            t.starttransfer_us,
            t.total_us,
            t.num_connects,
        ] {
            self.int(v)?;
        }
        self.stage(s.tls_setup())?;
        self.stage(s.tls_finish())?;
        let kernel_ms = |us: u32| Some(Duration::from_micros(u64::from(us)));
        self.stage(s.tcp_info.and_then(|k| kernel_ms(k.rtt_us)))?;
        self.stage(s.tcp_info.and_then(|k| k.min_rtt_us).and_then(kernel_ms))?;
        match s.tcp_info {
            Some(k) => self.int(k.retrans)?,
            None => self.text(None)?,
        }
        if s.server_timing.is_empty() {
            self.text(None)?;
        } else {
            let cell = server_timing_cell(&s.server_timing);
            self.text(Some(&cell))?;
        }
        self.text(s.early_data.map(|e| e.as_str()))?;
        self.stage(s.t)?;
        let at = s.at.map(crate::text::rfc3339_millis);
        self.text(at.as_deref())?;
        if let Some(labels) = &self.labels {
            let label = labels.get(usize::from(s.variant)).map(|l| neutralise(l));
            self.out.write_field(label.as_deref().unwrap_or(""))?;
        }
        self.out.write_record(None::<&[u8]>)
    }
}

impl<W: Write> CsvStream<W> {
    /// The one row of a run that ended before round 1: `round` 0, `mode`
    /// `preflight`, the preflight's status and its error; every other cell empty.
    pub fn preflight_row(&mut self, info: &RunInfo) -> io::Result<()> {
        let error = info.preflight_error.as_ref();
        let row: Vec<String> = column_names(self.labels.is_some())
            .map(|name| match name {
                "round" => "0".to_string(),
                "mode" => "preflight".to_string(),
                "status" => info.preflight_status.to_string(),
                "error_kind" => error.map(|e| e.kind.slug().to_string()).unwrap_or_default(),
                "error" => error.map(|e| neutralise(&e.text)).unwrap_or_default(),
                _ => String::new(),
            })
            .collect();
        self.out.write_record(&row)?;
        self.out.flush()
    }
}

impl<W: Write> Observer for CsvStream<W> {
    fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        self.write_row(sample)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_starts_are_neutralised() {
        for bad in ["=cmd()", "+1", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert!(neutralise(bad).starts_with('\''), "{bad:?}");
        }
        assert_eq!(neutralise("Connection refused"), "Connection refused");
        assert_eq!(neutralise(""), "");
    }

    #[test]
    fn server_timing_cell_keeps_metrics_in_header_syntax() {
        use crate::probe::ServerTiming;
        let metrics = [
            ServerTiming {
                name: "db".into(),
                dur_ms: Some(12.5),
                desc: Some("say \"hi\", \\o/".into()),
            },
            ServerTiming {
                name: "miss".into(),
                dur_ms: None,
                desc: None,
            },
        ];
        assert_eq!(
            server_timing_cell(&metrics),
            r#"db;dur=12.5;desc="say \"hi\", \\o/", miss"#
        );
        let formula = [ServerTiming {
            name: "-x".into(),
            dur_ms: None,
            desc: None,
        }];
        assert_eq!(server_timing_cell(&formula), "'-x");
    }
}

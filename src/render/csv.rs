//! `--csv`: one row per sample, written and flushed as each sample finishes.

use std::io::{self, Write};
use std::time::Duration;

use crate::probe::{tls_version_label, Observer, Sample};

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

fn stage(d: Option<Duration>) -> String {
    d.map(|d| format!("{:.3}", d.as_nanos() as f64 / 1e6))
        .unwrap_or_default()
}

/// A text cell a spreadsheet would evaluate as a formula gets a leading `'`,
/// which spreadsheets show as text and do not run.
pub fn neutralise(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

pub fn row(s: &Sample) -> Vec<String> {
    let t = &s.timers;
    let opt = |v: Option<String>| v.unwrap_or_default();
    vec![
        s.round.to_string(),
        s.mode.as_str().into(),
        s.warmup.to_string(),
        stage(s.dns()),
        stage(s.tcp()),
        stage(s.tls()),
        stage(s.wait()),
        stage(s.srv()),
        stage(s.total()),
        stage(s.other()),
        s.reused().to_string(),
        s.new_conn().to_string(),
        s.retries.to_string(),
        s.status.to_string(),
        opt(s.proto.map(|p| p.as_str().into())),
        opt(s.tls.map(|f| tls_version_label(f.version))),
        opt(s.tls.and_then(|f| f.alpn).map(|p| p.as_str().into())),
        opt(s.tls.map(|f| f.resumed.to_string())),
        opt(s.tls.and_then(|f| f.chain_len).map(|n| n.to_string())),
        s.bytes.to_string(),
        opt(s.addr.map(|a| a.to_string())),
        s.body_overflow.to_string(),
        opt(s.error.as_ref().map(|e| e.kind.slug().into())),
        neutralise(&opt(s.error.as_ref().map(|e| e.text.clone()))),
        t.namelookup_us.to_string(),
        t.connect_us.to_string(),
        t.appconnect_us.to_string(),
        t.pretransfer_us.to_string(),
        t.posttransfer_us.to_string(),
        t.starttransfer_us.to_string(),
        t.total_us.to_string(),
        t.num_connects.to_string(),
    ]
}

pub struct CsvStream<W: Write> {
    out: csv::Writer<W>,
}

impl<W: Write> CsvStream<W> {
    /// Writes the header row at once, so an empty run still yields a valid file.
    pub fn new(out: W) -> io::Result<CsvStream<W>> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        out.write_record(COLUMNS.iter().chain(CURL_COLUMNS.iter()))?;
        out.flush()?;
        Ok(CsvStream { out })
    }
}

impl<W: Write> Observer for CsvStream<W> {
    fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        self.out.write_record(row(sample))?;
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
}

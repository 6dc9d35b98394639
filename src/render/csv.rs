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

/// A text cell a spreadsheet would evaluate as a formula gets a leading `'`,
/// which spreadsheets show as text and do not run.
pub fn neutralise(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

pub struct CsvStream<W: Write> {
    out: csv::Writer<W>,
    /// Reused for every formatted number, so stage cells cost no allocation.
    scratch: String,
}

impl<W: Write> CsvStream<W> {
    /// Writes the header row at once, so an empty run still yields a valid file.
    pub fn new(out: W) -> io::Result<CsvStream<W>> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        out.write_record(COLUMNS.iter().chain(CURL_COLUMNS.iter()))?;
        out.flush()?;
        Ok(CsvStream {
            out,
            scratch: String::with_capacity(64),
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
            let _ = write!(self.scratch, "{:.3}", d.as_nanos() as f64 / 1e6);
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
        self.out.write_record(None::<&[u8]>)
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
}

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
/// the wall clock (RFC 3339, UTC, milliseconds). After the connection
/// columns, so every column of the original and every earlier addition
/// keeps its place.
pub const TIME_COLUMNS: [&str; 2] = ["t_ms", "at"];

/// After the time columns: columns added since, in the order they came.
/// `dns_overlap_ms` (see the JSON field), then what the server stapled
/// (`ocsp_stapled`, `ocsp_status`).
pub const LATE_COLUMNS: [&str; 3] = ["dns_overlap_ms", "ocsp_stapled", "ocsp_status"];

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

/// Every column name, in order: the one place the header's order is decided.
/// `compared` adds the `variant` column; `time_first` (`--csv-time-first`)
/// moves the time columns from the end to just after `round`.
fn column_names(compared: bool, time_first: bool) -> impl Iterator<Item = &'static str> {
    let none: &[&str] = &[];
    let (early, late) = if time_first {
        (&TIME_COLUMNS[..], none)
    } else {
        (none, &TIME_COLUMNS[..])
    };
    let (round, rest) = COLUMNS.split_at(1);
    round
        .iter()
        .chain(early)
        .chain(rest)
        .chain(CURL_COLUMNS.iter())
        .chain(ATTRIBUTION_COLUMNS.iter())
        .chain(CONNECTION_COLUMNS.iter())
        .chain(late)
        .chain(LATE_COLUMNS.iter())
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
    /// `--csv-time-first`: `t_ms` and `at` follow `round` instead of ending the row.
    time_first: bool,
}

impl<W: Write> CsvStream<W> {
    /// Writes the header row at once, so an empty run still yields a valid file.
    pub fn new(out: W) -> io::Result<CsvStream<W>> {
        CsvStream::new_with(out, None, false)
    }

    /// The stream of a run: with `--compare` a last column, `variant`,
    /// holds the label of each sample's variant; `time_first` is
    /// `--csv-time-first`.
    pub fn for_run(out: W, info: &RunInfo, time_first: bool) -> io::Result<CsvStream<W>> {
        let labels = info
            .compare
            .as_ref()
            .map(|c| c.variants.iter().map(|v| v.label.clone()).collect());
        CsvStream::new_with(out, labels, time_first)
    }

    /// `labels` (by variant index) add the `variant` column; `time_first`
    /// gives the `--csv-time-first` order: `round`, `t_ms`, `at`, `mode`,
    /// and every other column in its usual order.
    pub fn new_with(
        out: W,
        labels: Option<Vec<String>>,
        time_first: bool,
    ) -> io::Result<CsvStream<W>> {
        let mut out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        out.write_record(column_names(labels.is_some(), time_first))?;
        out.flush()?;
        Ok(CsvStream {
            out: Box::new(out),
            scratch: String::with_capacity(64),
            labels,
            time_first,
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

    /// The two time cells, `t_ms` then `at`.
    fn times(&mut self, s: &Sample) -> csv::Result<()> {
        self.stage(s.t)?;
        let at = s.at.map(crate::text::rfc3339_millis);
        self.text(at.as_deref())
    }

    /// One sample's cells, in `column_names` order.
    fn write_row(&mut self, s: &Sample) -> csv::Result<()> {
        self.int(s.round)?;
        if self.time_first {
            self.times(s)?;
        }
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
        let kernel_ms = |us: u32| Some(crate::text::micros(us));
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
        if !self.time_first {
            self.times(s)?;
        }
        self.stage(s.dns_overlap())?;
        let ocsp = s.tls.and_then(|f| f.ocsp);
        self.text(ocsp.map(|o| if o.stapled() { "true" } else { "false" }))?;
        self.text(ocsp.and_then(|o| o.status()))?;
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
        let row: Vec<String> = column_names(self.labels.is_some(), self.time_first)
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

    /// The header and rows a stream writes for `samples`, read back.
    fn read_back(
        labels: Option<Vec<String>>,
        time_first: bool,
        samples: &[Sample],
        preflight: Option<&RunInfo>,
    ) -> (csv::StringRecord, Vec<csv::StringRecord>) {
        let mut buf = Vec::new();
        {
            let mut w = CsvStream::new_with(&mut buf, labels, time_first).unwrap();
            for s in samples {
                w.sample(s).unwrap();
            }
            if let Some(info) = preflight {
                w.preflight_row(info).unwrap();
            }
        }
        let mut rdr = csv::Reader::from_reader(buf.as_slice());
        let header = rdr.headers().unwrap().clone();
        let rows = rdr.records().map(|r| r.unwrap()).collect();
        (header, rows)
    }

    fn timed_samples() -> Vec<Sample> {
        use crate::stats::synthetic;
        use std::time::{SystemTime, UNIX_EPOCH};
        let mut cold = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        cold.t = Some(Duration::from_millis(12));
        cold.at = Some(UNIX_EPOCH + Duration::from_millis(1_800_000_000_123));
        let mut warm = synthetic::warm(1, 30, 1000, 10, true);
        warm.t = Some(Duration::from_micros(1_250_500));
        warm.at = Some(SystemTime::UNIX_EPOCH + Duration::from_millis(1_800_000_001_361));
        vec![cold, warm]
    }

    #[test]
    fn default_order_keeps_time_where_it_was_and_adds_after_it() {
        let (header, rows) = read_back(None, false, &timed_samples(), None);
        let names: Vec<&str> = header.iter().collect();
        assert_eq!(names[..3], ["round", "mode", "warmup"]);
        // t_ms and at keep the places they had when they were added (after
        // the 24 columns of the original and 15 of ours); later columns follow.
        let t = COLUMNS.len() + 15;
        assert_eq!(names[t..t + 2], ["t_ms", "at"]);
        assert_eq!(names[t + 2..], LATE_COLUMNS);
        for r in &rows {
            assert_eq!(r.len(), names.len());
        }
        assert_eq!(&rows[0][t], "12.000");
        assert_eq!(&rows[0][t + 1], "2027-01-15T08:00:00.123Z");

        let (header, _) = read_back(Some(vec!["a".into()]), false, &[], None);
        let names: Vec<&str> = header.iter().collect();
        assert_eq!(names[t..t + 2], ["t_ms", "at"]);
        assert_eq!(names[names.len() - 1], "variant");
    }

    #[test]
    fn ocsp_cells_are_filled_for_full_handshakes_only() {
        use crate::stats::synthetic;
        // Round 1's cold probe makes a full handshake, round 2's resumes;
        // a warm probe makes none.
        let samples = [
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::cold(2, 40, 100, 3000, 1000, 50),
            synthetic::warm(1, 30, 1000, 10, true),
        ];
        let (header, rows) = read_back(None, false, &samples, None);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (stapled, status) = (col("ocsp_stapled"), col("ocsp_status"));
        let cells: Vec<(&str, &str)> = rows.iter().map(|r| (&r[stapled], &r[status])).collect();
        assert_eq!(cells, [("true", "good"), ("", ""), ("", "")]);

        let mut none = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        if let Some(t) = &mut none.tls {
            t.ocsp = Some(crate::probe::OcspStaple::NotStapled);
        }
        let (_, rows) = read_back(None, false, &[none], None);
        assert_eq!((&rows[0][stapled], &rows[0][status]), ("false", ""));
    }

    #[test]
    fn time_first_puts_t_ms_and_at_after_round_in_header_and_rows() {
        let samples = timed_samples();
        let (plain, _) = read_back(None, false, &samples, None);
        let (header, rows) = read_back(None, true, &samples, None);
        let names: Vec<&str> = header.iter().collect();
        assert_eq!(names[..5], ["round", "t_ms", "at", "mode", "warmup"]);
        assert_eq!(names.len(), plain.len());
        // The same columns, t_ms and at moved, every other one in its usual order.
        let rest: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| *n != "t_ms" && *n != "at")
            .collect();
        let plain_rest: Vec<&str> = plain
            .iter()
            .filter(|n| *n != "t_ms" && *n != "at")
            .collect();
        assert_eq!(rest, plain_rest);
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.len(), names.len(), "{r:?}");
            assert_eq!(&r[0], "1");
        }
        assert_eq!(
            (&rows[0][1], &rows[0][2]),
            ("12.000", "2027-01-15T08:00:00.123Z")
        );
        assert_eq!(
            (&rows[1][1], &rows[1][2]),
            ("1250.500", "2027-01-15T08:00:01.361Z")
        );
        assert_eq!((&rows[0][3], &rows[1][3]), ("cold", "warm"));
        // Every other cell is where the header says, as in the default order.
        let (_, plain_rows) = read_back(None, false, &samples, None);
        for (r, p) in rows.iter().zip(&plain_rows) {
            for (i, name) in names.iter().enumerate() {
                let j = plain.iter().position(|h| h == *name).unwrap();
                assert_eq!(&r[i], &p[j], "{name}");
            }
        }
        // With --compare, variant stays the last column.
        let labels = Some(vec!["v4".to_string()]);
        let (header, rows) = read_back(labels, true, &samples, None);
        assert_eq!(header.get(header.len() - 1), Some("variant"));
        assert_eq!(header.get(header.len() - 2), Some("ocsp_status"));
        assert!(rows
            .iter()
            .all(|r| r.len() == header.len() && &r[r.len() - 1] == "v4"));
    }

    #[test]
    fn time_first_preflight_row_fills_cells_by_name() {
        let mut info = crate::stats::synthetic::run_info();
        info.preflight_status = 503;
        let (header, rows) = read_back(None, true, &[], Some(&info));
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.len(), header.len());
        let cell = |name: &str| &row[header.iter().position(|h| h == name).unwrap()];
        assert_eq!((cell("round"), cell("mode")), ("0", "preflight"));
        assert_eq!(cell("status"), "503");
        assert_eq!((cell("t_ms"), cell("at")), ("", ""));
    }
}

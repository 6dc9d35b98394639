//! `--csv`: one row per sample, written and flushed as each sample finishes.
//! The columns, their order and how each cell is read come from the field
//! table (`fields::FIELDS`); this file only says how a CSV cell is written.

use std::borrow::Cow;
use std::io::{self, Write};

use super::fields::{self, Field, FieldValue, Unit};
use super::output::{Finished, Output};
use crate::probe::{CompareInfo, RunInfo, Sample};

/// `Server-Timing` metrics in one cell, in the header's own syntax
/// (`name;dur=12.5;desc="text", next`), so a spreadsheet keeps them together.
fn server_timing_cell(metrics: &[crate::probe::ServerTiming]) -> String {
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
    neutralise(&cell).into_owned()
}

/// A text cell a spreadsheet would evaluate as a formula gets a leading `'`,
/// which spreadsheets show as text and do not run.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{text}")),
        _ => Cow::Borrowed(text),
    }
}

pub struct CsvStream<W: Write> {
    out: csv::Writer<W>,
    /// Reused for every formatted number, so stage cells cost no allocation.
    scratch: String,
    /// `--csv-time-first`: `t_ms` and `at` follow `round`.
    time_first: bool,
    /// `--compare`: names each sample's variant (the `variant` column).
    compare: Option<CompareInfo>,
    /// The fields with a column, in this run's order (known at the start).
    columns: Vec<&'static Field>,
}

impl<W: Write> CsvStream<W> {
    /// `time_first` is `--csv-time-first`: the order `round`, `t_ms`, `at`,
    /// `mode`, and every other column in its usual order.
    pub fn new(out: W, time_first: bool) -> CsvStream<W> {
        CsvStream {
            out: csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(out),
            scratch: String::with_capacity(64),
            time_first,
            compare: None,
            columns: Vec::new(),
        }
    }

    /// The header of `info`'s run, written at once so that an empty run
    /// still yields a valid file; with `--compare` a last column,
    /// `variant`, holds the label of each sample's variant.
    fn header(&mut self, info: &RunInfo) -> io::Result<()> {
        self.compare = info.compare.clone();
        let columns = fields::csv_columns(self.compare.is_some(), self.time_first);
        self.out.write_record(columns.iter().map(|(_, c)| c.name))?;
        self.columns = columns.into_iter().map(|(f, _)| f).collect();
        self.out.flush()
    }

    /// One sample's cells, in the header's order.
    fn write_row(&mut self, s: &Sample) -> csv::Result<()> {
        for field in &self.columns {
            let value = field.value(s, self.compare.as_ref());
            write_cell(&mut self.out, &mut self.scratch, field.unit, value)?;
        }
        self.out.write_record(None::<&[u8]>)
    }

    /// The one row of a run that ended before round 1: `round` 0, `mode`
    /// `preflight`, the preflight's status and its error; every other cell empty.
    fn preflight_row(&mut self, info: &RunInfo) -> io::Result<()> {
        for field in &self.columns {
            let value = field.preflight.map_or(FieldValue::Null, |read| read(info));
            write_cell(&mut self.out, &mut self.scratch, field.unit, value)?;
        }
        self.out.write_record(None::<&[u8]>)?;
        self.out.flush()
    }
}

/// One cell, as its unit is written in CSV: milliseconds with three
/// decimals, integers, `true`/`false`, text safe from spreadsheets; empty
/// when there is no value. `scratch` is reused from cell to cell.
fn write_cell<W: Write>(
    out: &mut csv::Writer<W>,
    scratch: &mut String,
    unit: Unit,
    value: FieldValue,
) -> csv::Result<()> {
    use std::fmt::Write as _;
    scratch.clear();
    match value {
        FieldValue::Null => {}
        FieldValue::Time(d) if unit == Unit::Us => {
            let _ = write!(scratch, "{}", d.as_micros());
        }
        FieldValue::Time(d) => {
            let _ = write!(scratch, "{:.3}", crate::text::millis(d));
        }
        FieldValue::Int(n) => scratch.push_str(itoa::Buffer::new().format(n)),
        FieldValue::Bool(b) => scratch.push_str(if b { "true" } else { "false" }),
        FieldValue::Text(t) => scratch.push_str(&neutralise(&t)),
        FieldValue::Wall(t) => scratch.push_str(&crate::text::rfc3339_millis(t)),
        FieldValue::Metrics(metrics) => scratch.push_str(&server_timing_cell(metrics)),
        FieldValue::Extras(extra) => scratch.push_str(&super::fields::extras_cell(extra)),
    }
    out.write_field(&scratch)
}

impl<W: Write> Output for CsvStream<W> {
    fn start(&mut self, info: &RunInfo) -> io::Result<()> {
        self.header(info)
    }

    fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        self.write_row(sample)?;
        self.out.flush()
    }

    /// The header and the preflight's row, so a script can tell a refused
    /// connection from a certificate problem without reading stderr.
    fn ended_before_rounds(&mut self, run: &Finished) -> io::Result<()> {
        self.header(run.info)?;
        self.preflight_row(run.info)
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

    /// A run compared over `labels` (none: no comparison).
    fn run_info(labels: &[&str]) -> RunInfo {
        use crate::probe::{Axis, VariantInfo};
        let mut info = crate::stats::synthetic::run_info();
        info.compare = (!labels.is_empty()).then(|| CompareInfo {
            axis: Axis::Tls,
            variants: labels.iter().map(|l| VariantInfo::new(*l, *l)).collect(),
            probes_per_round: 2 * labels.len(),
        });
        info
    }

    /// The header and rows a stream writes for `samples`, read back.
    fn read_back(
        labels: &[&str],
        time_first: bool,
        samples: &[Sample],
        preflight: Option<&RunInfo>,
    ) -> (csv::StringRecord, Vec<csv::StringRecord>) {
        let mut buf = Vec::new();
        {
            let mut w = CsvStream::new(&mut buf, time_first);
            match preflight {
                None => w.start(&run_info(labels)).unwrap(),
                Some(info) => {
                    let summary =
                        crate::stats::summarize(&crate::stats::History::new(), Default::default());
                    let run = Finished {
                        info,
                        samples: &[],
                        summary: &summary,
                        comparison: None,
                        warnings: &[],
                        history: &crate::stats::NO_RECORDS,
                        exit_code: 0,
                        ending: crate::render::Ending::complete(info.settings.count),
                    };
                    w.ended_before_rounds(&run).unwrap();
                }
            }
            for s in samples {
                w.sample(s).unwrap();
            }
        }
        let mut rdr = csv::Reader::from_reader(buf.as_slice());
        let header = rdr.headers().unwrap().clone();
        let rows = rdr.records().map(|r| r.unwrap()).collect();
        (header, rows)
    }

    fn timed_samples() -> Vec<Sample> {
        use crate::stats::synthetic;
        use std::time::{Duration, SystemTime, UNIX_EPOCH};
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
        let (header, rows) = read_back(&[], false, &timed_samples(), None);
        let names: Vec<&str> = header.iter().collect();
        assert_eq!(names[..3], ["round", "mode", "warmup"]);
        // The published place of every column (docs/output.md's header) is
        // checked against the table in `fields`; here, that the cells follow.
        let t = names.iter().position(|n| *n == "t_ms").unwrap();
        assert_eq!(names[t + 1], "at");
        assert!(t > names.iter().position(|n| *n == "error").unwrap());
        for r in &rows {
            assert_eq!(r.len(), names.len());
        }
        assert_eq!(&rows[0][t], "12.000");
        assert_eq!(&rows[0][t + 1], "2027-01-15T08:00:00.123Z");

        let (header, _) = read_back(&["a"], false, &[], None);
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
        let (header, rows) = read_back(&[], false, &samples, None);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (stapled, status) = (col("ocsp_stapled"), col("ocsp_status"));
        let cells: Vec<(&str, &str)> = rows.iter().map(|r| (&r[stapled], &r[status])).collect();
        assert_eq!(cells, [("true", "good"), ("", ""), ("", "")]);

        let mut none = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        if let Some(t) = &mut none.tls {
            t.ocsp = Some(crate::probe::OcspStaple::NotStapled);
        }
        let (_, rows) = read_back(&[], false, &[none], None);
        assert_eq!((&rows[0][stapled], &rows[0][status]), ("false", ""));
    }

    #[test]
    fn time_first_puts_t_ms_and_at_after_round_in_header_and_rows() {
        let samples = timed_samples();
        let (plain, _) = read_back(&[], false, &samples, None);
        let (header, rows) = read_back(&[], true, &samples, None);
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
        let (_, plain_rows) = read_back(&[], false, &samples, None);
        for (r, p) in rows.iter().zip(&plain_rows) {
            for (i, name) in names.iter().enumerate() {
                let j = plain.iter().position(|h| h == *name).unwrap();
                assert_eq!(&r[i], &p[j], "{name}");
            }
        }
        // With --compare, variant stays the last column.
        let (header, rows) = read_back(&["v4"], true, &samples, None);
        assert_eq!(header.get(header.len() - 1), Some("variant"));
        let before_variant: Vec<&str> = header.iter().take(header.len() - 1).collect();
        assert_eq!(before_variant, names);
        assert!(rows
            .iter()
            .all(|r| r.len() == header.len() && &r[r.len() - 1] == "v4"));
    }

    #[test]
    fn time_first_preflight_row_fills_cells_by_name() {
        let mut info = crate::stats::synthetic::run_info();
        info.preflight_status = 503;
        let (header, rows) = read_back(&[], true, &[], Some(&info));
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.len(), header.len());
        let cell = |name: &str| &row[header.iter().position(|h| h == name).unwrap()];
        assert_eq!((cell("round"), cell("mode")), ("0", "preflight"));
        assert_eq!(cell("status"), "503");
        assert_eq!((cell("t_ms"), cell("at")), ("", ""));
    }
}

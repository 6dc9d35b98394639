//! `--json`: one document, schema 1, printed when the run ends. The names
//! and meanings of the Go tool's fields (as its README gives them) are kept;
//! ours are added after them (docs/output.md, "JSON", says which are ours).

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

pub use super::json_numbers::{json_ms, json_ms_pair, AsMillis};

use super::fields::{self, Field, FieldValue, JsonKey, Shown, Unit};
use super::output::{Finished, Output};
use super::summary_fields::FiguresJson;
use crate::probe::{CompareInfo, RunInfo, Sample, ServerTiming};
use crate::stats::{Comparison, Difference, Summary};

pub const SCHEMA: u32 = 1;

#[derive(Serialize)]
pub struct Document<'a> {
    pub schema: u32,
    pub tlsping_version: &'a str,
    pub run: super::run_fields::RunJson<'a>,
    pub samples: SamplesJson<'a>,
    pub summary: SummaryJson<'a>,
    pub ending: EndingJson,
    pub warnings: &'a [String],
}

/// `ending`: how many rounds ran, of how many asked, and what stopped them
/// early (`null` when every round asked for ran).
#[derive(Serialize)]
pub struct EndingJson {
    rounds_completed: u32,
    rounds_asked: u32,
    cut_round: Option<u32>,
    stopped_by: Option<&'static str>,
}

pub fn ending_json(e: &super::output::Ending) -> EndingJson {
    EndingJson {
        rounds_completed: e.completed,
        rounds_asked: e.asked,
        cut_round: e.cut,
        stopped_by: e.stopped_by.map(|s| s.as_str()),
    }
}

#[derive(Serialize)]
pub struct SummaryJson<'a> {
    /// The figures (`summary_fields::SUMMARY_FIELDS`), in their order.
    #[serde(flatten)]
    figures: FiguresJson<'a>,
    /// `--compare` only: the same figures for each variant that has samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    variants: Option<Vec<VariantSummaryJson<'a>>>,
    /// `--compare` only: each variant against the baseline, per stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    differences: Option<Vec<DifferenceJson<'a>>>,
}

#[derive(Serialize)]
pub struct VariantSummaryJson<'a> {
    label: &'a str,
    #[serde(flatten)]
    figures: FiguresJson<'a>,
}

#[derive(Serialize)]
pub struct DifferenceJson<'a> {
    variant: &'a str,
    against: &'a str,
    mode: &'static str,
    stage: &'static str,
    median_ms: Option<f64>,
    ci_ms: Option<[f64; 2]>,
    rounds: usize,
}

/// `run` in JSON: the run's facts, written from `run_fields::RUN_FIELDS`.
pub fn run_json(info: &RunInfo) -> super::run_fields::RunJson<'_> {
    super::run_fields::RunJson(info)
}

/// The summary of a run that may be a `--compare` run: then with the
/// variants' own figures and the differences (empty lists when the
/// statistics hold no comparison, e.g. a run that ended before round 1).
pub fn summary_json<'a>(
    s: &'a Summary,
    comparison: Option<&'a Comparison>,
    compare: Option<&'a CompareInfo>,
) -> SummaryJson<'a> {
    let mut json = SummaryJson {
        figures: FiguresJson(s),
        variants: None,
        differences: None,
    };
    if let Some(cmp) = compare {
        json.variants = Some(
            comparison
                .map(|c| &c.summaries[..])
                .unwrap_or_default()
                .iter()
                .map(|(v, summary)| VariantSummaryJson {
                    label: cmp.label(*v),
                    figures: FiguresJson(summary),
                })
                .collect(),
        );
        json.differences = Some(
            comparison
                .map(|c| &c.differences[..])
                .unwrap_or_default()
                .iter()
                .map(|d| difference_json(d, cmp))
                .collect(),
        );
    }
    json
}

fn difference_json<'a>(d: &Difference, cmp: &'a CompareInfo) -> DifferenceJson<'a> {
    DifferenceJson {
        variant: cmp.label(d.variant),
        against: cmp.label(d.against),
        mode: d.mode.as_str(),
        stage: d.stage.as_str(),
        median_ms: d.median.map(json_ms),
        ci_ms: d.ci.map(json_ms_pair),
        rounds: d.rounds,
    }
}

/// The samples, converted one at a time while they are written, so a long
/// run is never held twice in memory; with `--compare`, the run's variants.
pub struct SamplesJson<'a>(pub &'a [Sample], pub Option<&'a CompareInfo>);

impl Serialize for SamplesJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|s| SampleJson::new(s, self.1)))
    }
}

/// One sample as a JSON object, written field by field from the table
/// (`fields::FIELDS`), in its order; `compare` names the sample's variant.
pub struct SampleJson<'a> {
    sample: &'a Sample,
    compare: Option<&'a CompareInfo>,
}

impl<'a> SampleJson<'a> {
    pub fn new(sample: &'a Sample, compare: Option<&'a CompareInfo>) -> SampleJson<'a> {
        SampleJson { sample, compare }
    }

    /// The field's value, or `None` when the object leaves its key out.
    fn entry(&self, f: &Field) -> Option<ValueJson<'a>> {
        let value = f.value(self.sample, self.compare);
        let omitted = f.shown != Shown::Always && value == FieldValue::Null;
        (!omitted).then_some(ValueJson(f.unit, value))
    }
}

impl Serialize for SampleJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut open_object = None;
        for f in &fields::FIELDS {
            match f.json {
                JsonKey::Top(key) => {
                    if let Some(v) = self.entry(f) {
                        map.serialize_entry(key, &v)?;
                    }
                }
                // The whole inner object, where its first field is.
                JsonKey::Nested(object, _) if open_object != Some(object) => {
                    open_object = Some(object);
                    map.serialize_entry(object, &InnerJson(self, object))?;
                }
                JsonKey::Nested(..) => {}
            }
        }
        map.end()
    }
}

/// The fields of a sample nested in the object named `.1` (`curl`).
struct InnerJson<'s, 'a>(&'s SampleJson<'a>, &'static str);

impl Serialize for InnerJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for f in &fields::FIELDS {
            if let JsonKey::Nested(object, key) = f.json {
                if let (true, Some(v)) = (object == self.1, self.0.entry(f)) {
                    map.serialize_entry(key, &v)?;
                }
            }
        }
        map.end()
    }
}

/// A field's value as JSON, by its unit: a duration in `Ms` as a number of
/// milliseconds (`json_ms`), in `Us` as an integer.
struct ValueJson<'a>(Unit, FieldValue<'a>);

impl Serialize for ValueJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.1 {
            FieldValue::Null => serializer.serialize_none(),
            FieldValue::Time(d) if self.0 == Unit::Us => {
                serializer.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
            }
            FieldValue::Time(d) => serializer.serialize_f64(json_ms(*d)),
            FieldValue::Int(n) => serializer.serialize_i64(*n),
            FieldValue::Bool(b) => serializer.serialize_bool(*b),
            FieldValue::Text(t) => serializer.serialize_str(t),
            FieldValue::Wall(t) => serializer.serialize_str(&crate::text::rfc3339_millis(*t)),
            FieldValue::Metrics(metrics) => {
                serializer.collect_seq(metrics.iter().map(ServerTimingJson::of))
            }
            FieldValue::Extras(extra) => {
                serializer.collect_seq(extra.iter().map(fields::ExtraJson))
            }
        }
    }
}

#[derive(Serialize)]
struct ServerTimingJson<'a> {
    name: &'a str,
    dur_ms: Option<f64>,
    desc: Option<&'a str>,
}

impl ServerTimingJson<'_> {
    fn of(m: &ServerTiming) -> ServerTimingJson<'_> {
        ServerTimingJson {
            name: &m.name,
            dur_ms: m.dur_ms,
            desc: m.desc.as_deref(),
        }
    }
}

/// `--json` as an output: the whole document once the run is over.
pub struct JsonDocument<W: std::io::Write> {
    out: W,
}

impl<W: std::io::Write> JsonDocument<W> {
    pub fn new(out: W) -> JsonDocument<W> {
        JsonDocument { out }
    }
}

impl<W: std::io::Write> Output for JsonDocument<W> {
    /// The document lists every sample.
    fn keeps_samples(&self) -> bool {
        true
    }

    fn end(&mut self, run: &Finished) -> std::io::Result<()> {
        let out = std::io::BufWriter::new(&mut self.out);
        write_document(out, run)
    }

    /// The facts known so far and why the run ended, without samples.
    fn ended_before_rounds(&mut self, run: &Finished) -> std::io::Result<()> {
        self.end(run)
    }
}

/// Writes the whole document as compact JSON (one line), followed by a newline.
pub fn write_document<W: std::io::Write>(mut out: W, run: &Finished) -> std::io::Result<()> {
    let compare = run.info.compare.as_ref();
    let doc = Document {
        schema: SCHEMA,
        tlsping_version: env!("CARGO_PKG_VERSION"),
        run: run_json(run.info),
        samples: SamplesJson(run.samples, compare),
        summary: summary_json(run.summary, run.comparison, compare),
        ending: ending_json(&run.ending),
        warnings: run.warnings,
    };
    serde_json::to_writer(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

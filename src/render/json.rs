//! `--json`: one document, schema 1, printed when the run ends. The names
//! and meanings of the Go tool's fields (its README; interface.md pins them
//! down) are kept; ours are added after them.

use std::time::Duration;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::fields::{self, Field, FieldValue, JsonKey, Shown, Unit};
use super::output::{Finished, Output};
use crate::probe::{CompareInfo, RunInfo, Sample, ServerTiming};
use crate::stats::{Comparison, Difference, ModeSummary, Summary};

pub const SCHEMA: u32 = 1;

/// A figure that can be told in milliseconds: a duration, or a figure the
/// statistics already hand out in milliseconds.
pub trait AsMillis: Copy {
    fn as_millis_f64(self) -> f64;
}

impl AsMillis for Duration {
    fn as_millis_f64(self) -> f64 {
        crate::text::millis(self)
    }
}

impl AsMillis for crate::stats::Delta {
    fn as_millis_f64(self) -> f64 {
        crate::stats::Delta::as_millis_f64(self)
    }
}

/// Every `_ms` number of the JSON, sample or summary: milliseconds to the
/// microsecond, the resolution libcurl gives; keep exactly that.
pub fn json_ms(v: impl AsMillis) -> f64 {
    (v.as_millis_f64() * 1000.0).round() / 1000.0
}

/// A confidence interval, low then high.
fn json_ms_pair<T: AsMillis>((lo, hi): (T, T)) -> [f64; 2] {
    [json_ms(lo), json_ms(hi)]
}

#[derive(Serialize)]
pub struct Document<'a> {
    pub schema: u32,
    pub tlsping_version: &'a str,
    pub run: RunJson,
    pub samples: SamplesJson<'a>,
    pub summary: SummaryJson<'a>,
    pub warnings: &'a [String],
}

#[derive(Serialize)]
pub struct RunJson {
    url: String,
    /// When the rounds started (RFC 3339, UTC, ms): the zero of every `t_ms`.
    started_at: Option<String>,
    host: String,
    method: String,
    addr: Option<String>,
    proto: Option<&'static str>,
    tls_version: Option<String>,
    alpn: Option<&'static str>,
    ip_pinned: bool,
    dns_first_ms: Option<f64>,
    count: u32,
    interval_ms: f64,
    timeout_ms: f64,
    order: &'static str,
    mode: &'static str,
    warmup: u32,
    // Additions: what this binary links and how TLS sessions were handled.
    resume: bool,
    tls_cipher: Option<&'static str>,
    tls_group: Option<&'static str>,
    cert_days_left: Option<i32>,
    libcurl_version: String,
    tls_library: String,
    /// `--calibrate`: the target was tlsping's own in-process server.
    calibration: bool,
    /// The CPU's wake-up latency was held at 0 µs while the rounds ran.
    cpu_wakeup_pinned: bool,
    /// The preflight's HTTP status (0 = no response).
    preflight_status: u16,
    /// The connection flags (`--tls-max`, `--curves`, `--resolve`,
    /// `--connect-to`, `--cert`, `--early-data`) as the run used them.
    tls_max: Option<&'static str>,
    curves: Option<String>,
    resolve: Vec<String>,
    connect_to: Vec<String>,
    client_cert: Option<String>,
    early_data: bool,
    /// Set when the run ended before round 1 (and then there are no samples).
    preflight_error_kind: Option<&'static str>,
    preflight_error: Option<String>,
    /// `--compare` only: the axis and every variant asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    compare: Option<CompareJson>,
    /// What the server stapled to the preflight's handshake (see the samples).
    ocsp_stapled: Option<bool>,
    ocsp_status: Option<&'static str>,
}

#[derive(Serialize)]
pub struct CompareJson {
    axis: &'static str,
    probes_per_round: usize,
    variants: Vec<VariantJson>,
}

#[derive(Serialize)]
pub struct VariantJson {
    label: String,
    value: String,
    /// False when the variant could not run at all (then `error` says why).
    available: bool,
    addr: Option<String>,
    error_kind: Option<&'static str>,
    error: Option<String>,
}

#[derive(Serialize)]
pub struct ServerMetricJson<'a> {
    name: &'a str,
    median_ms: f64,
    n: usize,
}

#[derive(Serialize)]
pub struct ModeJson {
    n: usize,
    sent: usize,
    ok: usize,
    loss: Option<f64>,
    min_ms: Option<f64>,
    mean_ms: Option<f64>,
    median_ms: Option<f64>,
    max_ms: Option<f64>,
    mdev_ms: Option<f64>,
    p95_ms: Option<f64>,
}

#[derive(Serialize)]
pub struct SummaryJson<'a> {
    cold: ModeJson,
    warm: ModeJson,
    new_conn: usize,
    handshake_overhead_ms: Option<f64>,
    handshake_dns_ms: Option<f64>,
    handshake_tcp_ms: Option<f64>,
    handshake_tls_ms: Option<f64>,
    handshake_excluded: usize,
    keepalive_gain_ms: Option<f64>,
    paired_gain_ms: Option<f64>,
    // Additions: 95% confidence intervals for the two medians, and the n they rest on.
    paired_gain_ci_ms: Option<[f64; 2]>,
    paired_gain_n: usize,
    handshake_overhead_ci_ms: Option<[f64; 2]>,
    handshake_overhead_n: usize,
    tls_resumed: usize,
    cold_samples: usize,
    elapsed_ms: f64,
    // Additions: medians of where the time went (see the sample fields).
    tls_setup_ms: Option<f64>,
    tls_after_setup_ms: Option<f64>,
    tls_finish_ms: Option<f64>,
    tls_network_server_ms: Option<f64>,
    tls_setup_n: usize,
    tcp_rtt_ms: Option<f64>,
    tcp_min_rtt_ms: Option<f64>,
    tcp_rtt_n: usize,
    server_time_ms: Option<f64>,
    server_time_n: usize,
    retrans_probes: usize,
    server_timing: Vec<ServerMetricJson<'a>>,
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
    figures: SummaryJson<'a>,
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

pub fn run_json(info: &RunInfo) -> RunJson {
    RunJson {
        url: info.url.clone(),
        started_at: info.started_at.map(crate::text::rfc3339_millis),
        host: info.host.clone(),
        method: info.method.clone(),
        addr: info.addr.map(|a| a.to_string()),
        proto: info.proto.map(|p| p.as_str()),
        tls_version: info.tls.map(|t| t.version_label()),
        alpn: info.tls.and_then(|t| t.alpn).map(|p| p.as_str()),
        ip_pinned: info.ip_pinned,
        dns_first_ms: info.dns_first.map(json_ms),
        count: info.count,
        interval_ms: json_ms(info.interval),
        timeout_ms: json_ms(info.timeout),
        order: info.order.as_str(),
        mode: info.mode.as_str(),
        warmup: info.warmup,
        resume: info.resume,
        tls_cipher: info.tls.map(|t| t.cipher),
        tls_group: info.tls.and_then(|t| t.group),
        cert_days_left: info.tls.and_then(|t| t.cert_days_left),
        libcurl_version: info.libcurl_version.clone(),
        tls_library: info.tls_library.clone(),
        calibration: info.calibration,
        cpu_wakeup_pinned: info.cpu_wakeup_pinned,
        preflight_status: info.preflight_status,
        tls_max: info.tls_max.map(|t| t.as_str()),
        curves: info.curves.clone(),
        resolve: info.resolve.clone(),
        connect_to: info.connect_to.clone(),
        client_cert: info.client_cert.clone(),
        early_data: info.early_data,
        preflight_error_kind: info.preflight_error.as_ref().map(|e| e.kind.slug()),
        preflight_error: info.preflight_error.as_ref().map(|e| e.text.clone()),
        compare: info.compare.as_ref().map(compare_json),
        ocsp_stapled: info.tls.and_then(|t| t.ocsp).map(|o| o.stapled()),
        ocsp_status: info.tls.and_then(|t| t.ocsp).and_then(|o| o.status()),
    }
}

fn compare_json(cmp: &CompareInfo) -> CompareJson {
    CompareJson {
        axis: cmp.axis.as_str(),
        probes_per_round: cmp.probes_per_round,
        variants: cmp
            .variants
            .iter()
            .map(|v| VariantJson {
                label: v.label.clone(),
                value: v.value.clone(),
                available: v.unavailable.is_none(),
                addr: v.addr.map(|a| a.to_string()),
                error_kind: v.unavailable.as_ref().map(|e| e.kind.slug()),
                error: v.unavailable.as_ref().map(|e| e.text.clone()),
            })
            .collect(),
    }
}

fn mode_json(m: &ModeSummary) -> ModeJson {
    let d = &m.timing;
    ModeJson {
        n: d.n,
        sent: m.sent,
        ok: m.ok,
        loss: m.loss,
        min_ms: d.min.map(json_ms),
        mean_ms: d.mean.map(json_ms),
        median_ms: d.median.map(json_ms),
        max_ms: d.max.map(json_ms),
        mdev_ms: d.mdev.map(json_ms),
        p95_ms: d.p95.map(json_ms),
    }
}

/// The summary of a run that may be a `--compare` run: then with the
/// variants' own figures and the differences (empty lists when the
/// statistics hold no comparison, e.g. a run that ended before round 1).
pub fn summary_json<'a>(
    s: &'a Summary,
    comparison: Option<&'a Comparison>,
    compare: Option<&'a CompareInfo>,
) -> SummaryJson<'a> {
    let mut json = figures_json(s);
    if let Some(cmp) = compare {
        json.variants = Some(
            comparison
                .map(|c| &c.summaries[..])
                .unwrap_or_default()
                .iter()
                .map(|(v, summary)| VariantSummaryJson {
                    label: cmp.label(*v),
                    figures: figures_json(summary),
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

/// The figures of one summary, without the comparison.
fn figures_json(s: &Summary) -> SummaryJson<'_> {
    let a = &s.attribution;
    SummaryJson {
        cold: mode_json(&s.cold),
        warm: mode_json(&s.warm),
        new_conn: s.new_conn,
        handshake_overhead_ms: s.handshake.overhead.map(json_ms),
        handshake_dns_ms: s.handshake.dns.map(json_ms),
        handshake_tcp_ms: s.handshake.tcp.map(json_ms),
        handshake_tls_ms: s.handshake.tls.map(json_ms),
        handshake_excluded: s.handshake.excluded,
        keepalive_gain_ms: s.keepalive_gain.map(json_ms),
        paired_gain_ms: s.paired_gain.map(json_ms),
        paired_gain_ci_ms: s.paired_gain_ci.map(json_ms_pair),
        paired_gain_n: s.paired_rounds,
        handshake_overhead_ci_ms: s.handshake_overhead_ci.map(json_ms_pair),
        handshake_overhead_n: s.handshake.n,
        tls_resumed: s.tls_resumed,
        cold_samples: s.cold_handshakes,
        elapsed_ms: json_ms(s.elapsed),
        tls_setup_ms: a.tls_setup.map(json_ms),
        tls_after_setup_ms: a.tls_after_setup.map(json_ms),
        tls_finish_ms: a.tls_finish.map(json_ms),
        tls_network_server_ms: a.tls_network_server.map(json_ms),
        tls_setup_n: a.tls_setup_n,
        tcp_rtt_ms: a.rtt.map(json_ms),
        tcp_min_rtt_ms: a.min_rtt.map(json_ms),
        tcp_rtt_n: a.rtt_n,
        server_time_ms: a.server_time.map(json_ms),
        server_time_n: a.server_time_n,
        retrans_probes: a.retransmitted,
        server_timing: a
            .server_timing
            .iter()
            .map(|m| ServerMetricJson {
                name: &m.name,
                median_ms: json_ms(m.median),
                n: m.n,
            })
            .collect(),
        variants: None,
        differences: None,
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
        warnings: run.warnings,
    };
    serde_json::to_writer(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

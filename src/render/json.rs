//! `--json`: one document, schema 1, printed when the run ends.
//! Field names and meanings follow the original tool; additions only.

use std::time::Duration;

use serde::Serialize;

use crate::probe::{tls_version_label, CompareInfo, RunInfo, Sample};
use crate::stats::{Difference, ModeSummary, Summary};

pub const SCHEMA: u32 = 1;

fn ms(d: Duration) -> f64 {
    // Microsecond resolution is what libcurl gives; keep exactly that.
    round3(crate::text::millis(d))
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A signed figure in milliseconds, to the microsecond as every `_ms` is.
fn delta_ms(d: crate::stats::Delta) -> f64 {
    round3(d.as_millis_f64())
}

fn opt_ms(d: Option<Duration>) -> Option<f64> {
    d.map(ms)
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
pub struct CurlJson {
    namelookup_us: u32,
    connect_us: u32,
    appconnect_us: u32,
    pretransfer_us: u32,
    posttransfer_us: u32,
    starttransfer_us: u32,
    total_us: u32,
    num_connects: u32,
}

#[derive(Serialize)]
pub struct SampleJson<'a> {
    round: u32,
    /// When the probe started: ms from the start of the rounds (monotonic),
    /// and the wall clock (RFC 3339, UTC, ms); null outside the rounds.
    t_ms: Option<f64>,
    at: Option<String>,
    mode: &'static str,
    dns_ms: Option<f64>,
    tcp_ms: Option<f64>,
    tls_ms: Option<f64>,
    wait_ms: Option<f64>,
    srv_ms: Option<f64>,
    total_ms: Option<f64>,
    other_ms: Option<f64>,
    reused: bool,
    new_conn: bool,
    retries: u8,
    status: u16,
    proto: Option<&'static str>,
    tls_version: Option<String>,
    alpn: Option<&'static str>,
    tls_resumed: Option<bool>,
    /// Present only where a handshake happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_chain_len: Option<u8>,
    // Additions, on samples that made a handshake (null otherwise).
    tls_cipher: Option<&'static str>,
    tls_group: Option<&'static str>,
    cert_days_left: Option<i32>,
    bytes: u32,
    addr: Option<String>,
    warmup: bool,
    body_overflow: bool,
    error_kind: Option<&'static str>,
    error: Option<String>,
    // Addition: libcurl's raw cumulative timers for this transfer.
    curl: CurlJson,
    // Additions: where the time went. The client's own work inside `tls`
    // (TCP connected → ClientHello sent; cold handshakes only), the kernel's
    // TCP_INFO of the connection, and the server's own account.
    tls_setup_ms: Option<f64>,
    tls_finish_ms: Option<f64>,
    tcp_rtt_ms: Option<f64>,
    tcp_min_rtt_ms: Option<f64>,
    retrans: Option<u32>,
    server_timing: Vec<ServerTimingJson<'a>>,
    /// `--early-data`: accepted, rejected or not_sent; null without the flag.
    early_data: Option<&'static str>,
    /// How long libcurl's own lookup went on after it had opened the
    /// connection's socket (`dns_ms` and `tcp_ms` overlap by this); null
    /// without an overlap.
    dns_overlap_ms: Option<f64>,
    /// Full handshakes only (null otherwise): whether the server stapled an
    /// OCSP response, and what it says of the leaf (null when none was stapled).
    ocsp_stapled: Option<bool>,
    ocsp_status: Option<&'static str>,
    /// `--compare` only: the label of the sample's variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'a str>,
}

#[derive(Serialize)]
pub struct ServerTimingJson<'a> {
    name: &'a str,
    dur_ms: Option<f64>,
    desc: Option<&'a str>,
}

#[derive(Serialize)]
pub struct ServerMetricJson<'a> {
    name: &'a str,
    median_ms: f64,
    n: usize,
}

fn us_ms(us: u32) -> f64 {
    ms(crate::text::micros(us))
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
        dns_first_ms: opt_ms(info.dns_first),
        count: info.count,
        interval_ms: ms(info.interval),
        timeout_ms: ms(info.timeout),
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

pub fn sample_json(s: &Sample) -> SampleJson<'_> {
    sample_json_in(s, None)
}

/// A sample of a run that may be a `--compare` run (`compare` names its variant).
pub fn sample_json_in<'a>(s: &'a Sample, compare: Option<&'a CompareInfo>) -> SampleJson<'a> {
    let t = &s.timers;
    SampleJson {
        round: s.round,
        t_ms: opt_ms(s.t),
        at: s.at.map(crate::text::rfc3339_millis),
        mode: s.mode.as_str(),
        dns_ms: opt_ms(s.dns()),
        tcp_ms: opt_ms(s.tcp()),
        tls_ms: opt_ms(s.tls()),
        wait_ms: opt_ms(s.wait()),
        srv_ms: opt_ms(s.srv()),
        total_ms: opt_ms(s.total()),
        other_ms: opt_ms(s.other()),
        reused: s.reused(),
        new_conn: s.new_conn(),
        retries: s.retries,
        status: s.status,
        proto: s.proto.map(|p| p.as_str()),
        tls_version: s.tls.map(|f| tls_version_label(f.version)),
        alpn: s.tls.and_then(|f| f.alpn).map(|p| p.as_str()),
        tls_resumed: s.tls.map(|f| f.resumed),
        cert_chain_len: s.tls.and_then(|f| f.chain_len),
        tls_cipher: s.tls.map(|f| f.cipher),
        tls_group: s.tls.and_then(|f| f.group),
        cert_days_left: s.tls.and_then(|f| f.cert_days_left),
        bytes: s.bytes,
        addr: s.addr.map(|a| a.to_string()),
        warmup: s.warmup,
        body_overflow: s.body_overflow,
        error_kind: s.error.as_ref().map(|e| e.kind.slug()),
        error: s.error.as_ref().map(|e| e.text.clone()),
        curl: CurlJson {
            namelookup_us: t.namelookup_us,
            connect_us: t.connect_us,
            appconnect_us: t.appconnect_us,
            pretransfer_us: t.pretransfer_us,
            posttransfer_us: t.posttransfer_us,
            starttransfer_us: t.starttransfer_us,
            total_us: t.total_us,
            num_connects: t.num_connects,
        },
        tls_setup_ms: opt_ms(s.tls_setup()),
        tls_finish_ms: opt_ms(s.tls_finish()),
        tcp_rtt_ms: s.tcp_info.map(|k| us_ms(k.rtt_us)),
        tcp_min_rtt_ms: s.tcp_info.and_then(|k| k.min_rtt_us).map(us_ms),
        retrans: s.tcp_info.map(|k| k.retrans),
        server_timing: s
            .server_timing
            .iter()
            .map(|m| ServerTimingJson {
                name: &m.name,
                dur_ms: m.dur_ms,
                desc: m.desc.as_deref(),
            })
            .collect(),
        early_data: s.early_data.map(|e| e.as_str()),
        dns_overlap_ms: opt_ms(s.dns_overlap()),
        ocsp_stapled: s.tls.and_then(|f| f.ocsp).map(|o| o.stapled()),
        ocsp_status: s.tls.and_then(|f| f.ocsp).and_then(|o| o.status()),
        variant: compare.map(|c| c.label(s.variant)),
    }
}

fn mode_json(m: &ModeSummary) -> ModeJson {
    let d = &m.timing;
    ModeJson {
        n: d.n,
        sent: m.sent,
        ok: m.ok,
        loss: m.loss,
        min_ms: opt_ms(d.min),
        mean_ms: opt_ms(d.mean),
        median_ms: opt_ms(d.median),
        max_ms: opt_ms(d.max),
        mdev_ms: opt_ms(d.mdev),
        p95_ms: opt_ms(d.p95),
    }
}

pub fn summary_json(s: &Summary) -> SummaryJson<'_> {
    summary_json_in(s, None)
}

/// The summary of a run that may be a `--compare` run: then with the
/// variants' own figures and the differences (empty lists when the
/// statistics hold no comparison, e.g. a run that ended before round 1).
pub fn summary_json_in<'a>(s: &'a Summary, compare: Option<&'a CompareInfo>) -> SummaryJson<'a> {
    let mut json = figures_json(s);
    if let Some(cmp) = compare {
        let comparison = s.comparison.as_ref();
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
        median_ms: d.median.map(delta_ms),
        ci_ms: d.ci.map(|(lo, hi)| [delta_ms(lo), delta_ms(hi)]),
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
        handshake_overhead_ms: opt_ms(s.handshake.overhead),
        handshake_dns_ms: opt_ms(s.handshake.dns),
        handshake_tcp_ms: opt_ms(s.handshake.tcp),
        handshake_tls_ms: opt_ms(s.handshake.tls),
        handshake_excluded: s.handshake.excluded,
        keepalive_gain_ms: s.keepalive_gain.map(delta_ms),
        paired_gain_ms: s.paired_gain.map(delta_ms),
        paired_gain_ci_ms: s
            .paired_gain_ci
            .map(|(lo, hi)| [delta_ms(lo), delta_ms(hi)]),
        paired_gain_n: s.paired_rounds,
        handshake_overhead_ci_ms: s.handshake_overhead_ci.map(|(lo, hi)| [ms(lo), ms(hi)]),
        handshake_overhead_n: s.handshake.n,
        tls_resumed: s.tls_resumed,
        cold_samples: s.cold_handshakes,
        elapsed_ms: ms(s.elapsed),
        tls_setup_ms: opt_ms(a.tls_setup),
        tls_after_setup_ms: opt_ms(a.tls_after_setup),
        tls_finish_ms: opt_ms(a.tls_finish),
        tls_network_server_ms: opt_ms(a.tls_network_server),
        tls_setup_n: a.tls_setup_n,
        tcp_rtt_ms: opt_ms(a.rtt),
        tcp_min_rtt_ms: opt_ms(a.min_rtt),
        tcp_rtt_n: a.rtt_n,
        server_time_ms: a.server_time.map(delta_ms),
        server_time_n: a.server_time_n,
        retrans_probes: a.retransmitted,
        server_timing: a
            .server_timing
            .iter()
            .map(|m| ServerMetricJson {
                name: &m.name,
                median_ms: ms(m.median),
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
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|s| sample_json_in(s, self.1)))
    }
}

/// Writes the whole document as compact JSON (one line), followed by a newline.
pub fn write_document<W: std::io::Write>(
    mut out: W,
    info: &RunInfo,
    samples: &[Sample],
    summary: &Summary,
    warnings: &[String],
) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        tlsping_version: env!("CARGO_PKG_VERSION"),
        run: run_json(info),
        samples: SamplesJson(samples, info.compare.as_ref()),
        summary: summary_json_in(summary, info.compare.as_ref()),
        warnings,
    };
    serde_json::to_writer(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

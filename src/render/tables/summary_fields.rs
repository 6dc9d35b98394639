//! The one table of a summary's figures: `summary` in `--json` (and the
//! summary line of `--jsonl`, each `--compare` variant's figures too) is
//! written from it in its order, and the figures that are also gauges of
//! the exposition (`--openmetrics`, `--push`) carry their metric here, so
//! a new figure is one row. (The statistics block on the terminal words
//! them in sentences of its own.)

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use super::json_numbers::{json_ms, json_ms_pair};
use crate::stats::{Delta, ModeSummary, Summary};

/// One figure of a summary.
pub struct SummaryField {
    pub name: &'static str,
    /// What it is, in a few words (the man page's SUMMARY FIELDS).
    pub about: &'static str,
    pub value: fn(&Summary) -> Figure,
    /// The gauge it also is, if any.
    pub metric: Option<Metric>,
}

/// A figure as a gauge: `tlsping_<name>_seconds` (or without the unit),
/// its help, and its value in seconds (or as it is).
pub struct Metric {
    pub name: &'static str,
    pub help: &'static str,
    pub seconds: bool,
    pub value: fn(&Summary) -> Option<f64>,
}

/// A figure as JSON writes it: a plain value, or an object whose fields
/// keep their order (`serde_json`'s own map would sort them).
pub enum Figure {
    Value(Value),
    Mode(ModeJson),
    Metrics(Vec<ServerMetricJson>),
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::Value(v) => v.serialize(serializer),
            Figure::Mode(m) => m.serialize(serializer),
            Figure::Metrics(m) => m.serialize(serializer),
        }
    }
}

/// `summary.cold`, `summary.warm`.
#[derive(serde::Serialize)]
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

/// One `Server-Timing` name's median.
#[derive(serde::Serialize)]
pub struct ServerMetricJson {
    name: String,
    median_ms: f64,
    n: usize,
}

const fn figure(
    name: &'static str,
    about: &'static str,
    value: fn(&Summary) -> Figure,
) -> SummaryField {
    SummaryField {
        name,
        about,
        value,
        metric: None,
    }
}

fn delta_secs(d: Delta) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// One mode's figures (`summary.cold`, `summary.warm`).
fn mode_json(m: &ModeSummary) -> Figure {
    let d = &m.timing;
    Figure::Mode(ModeJson {
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
    })
}

/// A plain value.
fn v(value: Value) -> Figure {
    Figure::Value(value)
}

/// Every figure of a summary, in the order JSON writes them.
pub static SUMMARY_FIELDS: &[SummaryField] = &[
    figure("cold", "cold probes: n timed, sent, ok, loss, and min, mean, median, max, mdev, p95 of total in ms", |s| mode_json(&s.cold)),
    figure("warm", "warm probes, as cold (only reused connections are timed)", |s| mode_json(&s.warm)),
    figure("new_conn", "warm probes that had to open a connection", |s| v(json!(s.new_conn))),
    figure("handshake_overhead_ms", "median of dns+tcp+tls per timed cold sample", |s| ms(s.handshake.overhead)),
    figure("handshake_dns_ms", "median dns over the same samples", |s| ms(s.handshake.dns)),
    figure("handshake_tcp_ms", "median tcp over the same samples", |s| ms(s.handshake.tcp)),
    figure("handshake_tls_ms", "median tls over the same samples", |s| ms(s.handshake.tls)),
    figure("handshake_excluded", "timed cold samples left out for want of a stage", |s| v(json!(s.handshake.excluded))),
    SummaryField {
        name: "keepalive_gain_ms",
        about: "median cold total minus median warm total",
        value: |s| v(json!(s.keepalive_gain.map(json_ms))),
        metric: Some(Metric {
            name: "keepalive_gain",
            help: "Median cold total minus median warm total",
            seconds: true,
            value: |s| s.keepalive_gain.map(delta_secs),
        }),
    },
    figure("paired_gain_ms", "median of per-round cold minus warm totals", |s| v(json!(s.paired_gain.map(json_ms)))),
    // Additions: 95% confidence intervals for the two medians, and the n they rest on.
    figure("paired_gain_ci_ms", "its 95% confidence interval, [low, high]", |s| {
        v(json!(s.paired_gain_ci.map(json_ms_pair)))
    }),
    figure("paired_gain_n", "rounds the paired gain is over", |s| v(json!(s.paired_rounds))),
    figure("handshake_overhead_ci_ms", "the overhead median's 95% confidence interval", |s| {
        v(json!(s.handshake_overhead_ci.map(json_ms_pair)))
    }),
    figure("handshake_overhead_n", "samples the overhead median is over", |s| v(json!(s.handshake.n))),
    figure("tls_resumed", "cold handshakes that resumed a session", |s| v(json!(s.tls_resumed))),
    figure("cold_samples", "cold handshakes that count", |s| v(json!(s.cold_handshakes))),
    figure("elapsed_ms", "the run's wall time", |s| v(json!(json_ms(s.elapsed)))),
    // Additions: medians of where the time went (see the sample fields).
    figure("tls_setup_ms", "median of the client's work before the ClientHello left", |s| ms(s.attribution.tls_setup)),
    figure("tls_after_setup_ms", "median of tls less the set-up", |s| ms(s.attribution.tls_after_setup)),
    figure("tls_finish_ms", "median of the client's work on the server's last flight", |s| ms(s.attribution.tls_finish)),
    figure("tls_network_server_ms", "median of the path and the server inside tls", |s| {
        ms(s.attribution.tls_network_server)
    }),
    figure("tls_setup_n", "cold samples the set-up split is over", |s| v(json!(s.attribution.tls_setup_n))),
    SummaryField {
        name: "tcp_rtt_ms",
        about: "median smoothed TCP RTT the kernel measured",
        value: |s| ms(s.attribution.rtt),
        metric: Some(Metric {
            name: "rtt",
            help: "Median smoothed round trip the kernel measured (TCP_INFO)",
            seconds: true,
            value: |s| s.attribution.rtt.map(|d| d.as_secs_f64()),
        }),
    },
    SummaryField {
        name: "tcp_min_rtt_ms",
        about: "median minimum TCP RTT the kernel measured",
        value: |s| ms(s.attribution.min_rtt),
        metric: Some(Metric {
            name: "min_rtt",
            help: "Median minimum round trip the kernel measured (TCP_INFO)",
            seconds: true,
            value: |s| s.attribution.min_rtt.map(|d| d.as_secs_f64()),
        }),
    },
    figure("tcp_rtt_n", "samples with a kernel RTT", |s| v(json!(s.attribution.rtt_n))),
    figure("server_time_ms", "per mode (cold, warm): median of the server's time after the request, from the TLS records", |s| {
        let [cold, warm] = s.attribution.server_time;
        v(json!({"cold": cold.map(json_ms), "warm": warm.map(json_ms)}))
    }),
    figure("server_time_n", "per mode: samples the server time is over", |s| {
        let [cold, warm] = s.attribution.server_time_n;
        v(json!({"cold": cold, "warm": warm}))
    }),
    // Additions: why the cold handshakes cost what they did (`stats::HandshakeWhy`).
    SummaryField {
        name: "tls_round_trips",
        about: "the most common round-trip count inside tls over the cold handshakes",
        value: |s| v(json!(s.why.round_trips)),
        metric: Some(Metric {
            name: "tls_round_trips",
            help: "Round trips inside tls: the most common count over the cold handshakes",
            seconds: false,
            value: |s| s.why.round_trips.map(f64::from),
        }),
    },
    figure("tls_round_trips_n", "handshakes with that count", |s| v(json!(s.why.round_trips_n))),
    figure("tls_extra", "handshakes with each kind of extra round trip: hello_retry, tls12, initial_window, split_flight, loss", |s| {
        v(json!({
            "hello_retry": s.why.hello_retry,
            "tls12": s.why.tls12,
            "initial_window": s.why.initial_window,
            "split_flight": s.why.split_flight,
            "loss": s.why.loss,
        }))
    }),
    SummaryField {
        name: "server_handshake_ms",
        about: "median of the server's own time in the handshake",
        value: |s| ms(s.why.server),
        metric: Some(Metric {
            name: "server_handshake",
            help: "Median of the server's own time in the handshake: tls less our work, its round trips and the transmission",
            seconds: true,
            value: |s| s.why.server.map(|d| d.as_secs_f64()),
        }),
    },
    figure("tls_transmission_ms", "median of the handshakes' transmission: their flights beyond the round trips", |s| ms(s.why.transmission)),
    figure("tls_client_ms", "median of the client's set-up plus finish over the same handshakes", |s| ms(s.why.client)),
    figure("tls_anatomy_n", "cold handshakes that told their round trips", |s| v(json!(s.why.n))),
    figure("connection_round_trips", "a new connection's round trips to its first byte: tcp + tls + srv", |s| {
        v(json!(s.why.connection_round_trips().map(
            |(tcp, tls, srv)| u32::from(tcp) + u32::from(tls) + u32::from(srv)
        )))
    }),
    figure("tls_parts", "tls in parts that add up: means over the middle half by tls of the handshakes with the most common count (n, tls_ms, rtt_ms, round_trips_ms, server_ms, transmission_ms, client_ms)", |s| {
        v(json!(s.why.parts.map(|p| json!({
            "n": p.n,
            "tls_ms": json_ms(p.tls),
            "rtt_ms": json_ms(p.rtt),
            "round_trips_ms": json_ms(p.path),
            "server_ms": json_ms(p.server),
            "transmission_ms": json_ms(p.transmission),
            "client_ms": json_ms(p.client),
        }))))
    }),
    figure("connection_parts", "a new connection's total in parts that add up: means over the middle half by total (n, total_ms, rtt_ms, round_trips_ms, server_ms, transmission_ms, client_ms, rest_ms, held_ms)", |s| {
        v(json!(s.why.connection.map(|c| json!({
            "n": c.n,
            "total_ms": json_ms(c.total),
            "rtt_ms": json_ms(c.rtt),
            "round_trips_ms": json_ms(c.path),
            "server_ms": json_ms(c.server),
            "transmission_ms": json_ms(c.transmission),
            "client_ms": json_ms(c.client),
            "rest_ms": json_ms(c.rest),
            "held_ms": json_ms(c.held),
        }))))
    }),
    figure("early_data_saved_ms", "median srv of resumed probes without early data less that of those with it", |s| {
        let w = &s.why;
        v(json!(match (w.resumed_srv, w.early_srv) {
            (Some(plain), Some(early)) => Some(json_ms(Delta::between(plain, early))),
            _ => None,
        }))
    }),
    figure("retrans_probes", "probes whose connection retransmitted", |s| v(json!(s.attribution.retransmitted))),
    figure("server_timing", "per Server-Timing name: the median of its dur, and how many samples had it", |s| {
        Figure::Metrics(
            s.attribution
                .server_timing
                .iter()
                .map(|m| ServerMetricJson {
                    name: m.name.clone(),
                    median_ms: json_ms(m.median),
                    n: m.n,
                })
                .collect(),
        )
    }),
];

/// A duration in milliseconds, or `null`.
fn ms(d: Option<std::time::Duration>) -> Figure {
    v(json!(d.map(json_ms)))
}

/// A summary's figures as JSON writes them: `SUMMARY_FIELDS` in order.
pub struct FiguresJson<'a>(pub &'a Summary);

impl Serialize for FiguresJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for field in SUMMARY_FIELDS {
            map.serialize_entry(field.name, &(field.value)(self.0))?;
        }
        map.end()
    }
}

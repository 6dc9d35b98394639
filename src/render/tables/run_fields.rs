//! The one table of a run's facts: `run` in `--json` and the run line of
//! `--jsonl` are written from it, in its order, which the JSON Schema and
//! the Go tlsping's field order hold (new facts go after the original
//! ones). A new setting is a field of `probe::RunSettings`, its flag, and
//! one row here.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use super::json_numbers::json_ms;
use crate::probe::{CompareInfo, RunInfo};

/// One fact of `run`: its name, and how the run gives its value.
pub struct RunField {
    pub name: &'static str,
    pub value: Written,
}

/// How a fact is written.
pub enum Written {
    /// A value (numbers, text, lists, `null`).
    Value(fn(&RunInfo) -> Value),
    /// `compare`, an object of its own with its fields in their order;
    /// only a `--compare` run has it.
    Compare,
}

const fn fact(name: &'static str, value: fn(&RunInfo) -> Value) -> RunField {
    RunField {
        name,
        value: Written::Value(value),
    }
}

/// Every fact of `run`, in the order JSON writes them.
pub static RUN_FIELDS: &[RunField] = &[
    fact("url", |i| json!(i.url)),
    // When the rounds started (RFC 3339, UTC, ms): the zero of every `t_ms`.
    fact("started_at", |i| {
        json!(i.started_at.map(crate::text::rfc3339_millis))
    }),
    fact("host", |i| json!(i.host)),
    fact("method", |i| json!(i.method)),
    fact("addr", |i| json!(i.addr.map(|a| a.to_string()))),
    fact("proto", |i| json!(i.proto.map(|p| p.as_str()))),
    fact("tls_version", |i| json!(i.tls.map(|t| t.version_label()))),
    fact("alpn", |i| {
        json!(i.tls.and_then(|t| t.alpn).map(|p| p.as_str()))
    }),
    fact("ip_pinned", |i| json!(i.ip_pinned)),
    fact("dns_first_ms", |i| json!(i.dns_first.map(json_ms))),
    fact("count", |i| json!(i.settings.count)),
    fact("interval_ms", |i| json!(json_ms(i.settings.interval))),
    fact("timeout_ms", |i| json!(json_ms(i.settings.timeout))),
    fact("order", |i| json!(i.settings.order.as_str())),
    fact("mode", |i| json!(i.settings.mode.as_str())),
    fact("warmup", |i| json!(i.settings.warmup)),
    // Additions: what this binary links and how TLS sessions were handled.
    fact("resume", |i| json!(i.settings.resume)),
    fact("tls_cipher", |i| json!(i.tls.map(|t| t.cipher))),
    fact("tls_group", |i| json!(i.tls.and_then(|t| t.group))),
    fact("cert_days_left", |i| {
        json!(i.tls.and_then(|t| t.cert_days_left))
    }),
    fact("libcurl_version", |i| json!(i.libcurl_version)),
    fact("tls_library", |i| json!(i.tls_library)),
    // `--calibrate`: the target was tlsping's own in-process server.
    fact("calibration", |i| json!(i.settings.calibrate)),
    // The CPU's wake-up latency was held at 0 µs while the rounds ran.
    fact("cpu_wakeup_pinned", |i| json!(i.cpu_wakeup_pinned)),
    // The preflight's HTTP status (0 = no response).
    fact("preflight_status", |i| json!(i.preflight_status)),
    // The connection flags as the run used them.
    fact("tls_max", |i| json!(i.settings.tls_max.map(|t| t.as_str()))),
    fact("curves", |i| json!(i.settings.curves)),
    fact("resolve", |i| json!(i.settings.resolve)),
    fact("connect_to", |i| json!(i.settings.connect_to)),
    fact("client_cert", |i| {
        json!(i
            .settings
            .client_cert
            .as_ref()
            .map(|c| c.path.display().to_string()))
    }),
    fact("early_data", |i| json!(i.settings.early_data)),
    // Set when the run ended before round 1 (and then there are no samples).
    fact("preflight_error_kind", |i| {
        json!(i.preflight_error.as_ref().map(|e| e.kind.slug()))
    }),
    fact("preflight_error", |i| {
        json!(i.preflight_error.as_ref().map(|e| e.text.clone()))
    }),
    RunField {
        name: "compare",
        value: Written::Compare,
    },
    // What the server stapled to the preflight's handshake.
    fact("ocsp_stapled", |i| {
        json!(i.tls.and_then(|t| t.ocsp).map(|o| o.stapled()))
    }),
    fact("ocsp_status", |i| {
        json!(i.tls.and_then(|t| t.ocsp).and_then(|o| o.status()))
    }),
    // The preflight's own connect and handshake, as far as it got (a
    // preflight that failed keeps what it reached); in no statistic.
    fact("preflight_tcp_ms", |i| json!(i.preflight_tcp.map(json_ms))),
    fact("preflight_tls_ms", |i| json!(i.preflight_tls.map(json_ms))),
];

/// `run` of a run, as JSON writes it: `RUN_FIELDS` in order.
pub struct RunJson<'a>(pub &'a RunInfo);

impl Serialize for RunJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for field in RUN_FIELDS {
            match field.value {
                Written::Value(value) => map.serialize_entry(field.name, &value(self.0))?,
                Written::Compare => {
                    if let Some(cmp) = &self.0.compare {
                        map.serialize_entry(field.name, &compare_json(cmp))?;
                    }
                }
            }
        }
        map.end()
    }
}

/// `run.compare`: the axis and every variant asked for.
#[derive(serde::Serialize)]
pub struct CompareJson {
    axis: &'static str,
    probes_per_round: usize,
    variants: Vec<VariantJson>,
}

#[derive(serde::Serialize)]
pub struct VariantJson {
    label: String,
    value: String,
    /// False when the variant could not run at all (then `error` says why).
    available: bool,
    addr: Option<String>,
    error_kind: Option<&'static str>,
    error: Option<String>,
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

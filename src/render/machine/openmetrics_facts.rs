//! The run's own facts in the exposition, each a gauge: when it ran, how
//! it ended and how far the rounds got, each certificate's notAfter, the
//! connection each preflight settled on (`connection_info`, 1), and the
//! early data the cold probes asked for, by outcome.

use std::time::SystemTime;

use prometheus_client::registry::Unit;

use super::openmetrics_families::{unix_secs, with, Families};
use super::openmetrics_scope::{variant_labels, Labels};
use super::output::Finished;
use crate::probe::{EarlyData, RunInfo};

/// What a preflight settled on: the address, the HTTP version, the TLS facts.
type Settled = (
    std::net::SocketAddr,
    Option<crate::probe::Proto>,
    Option<crate::probe::TlsFacts>,
);

/// The run's own facts: when, how it ended, the connection and certificate.
pub(super) fn run_facts(f: &mut Families, run: &Finished) {
    let info = run.info;
    let started = info.started_at.unwrap_or_else(SystemTime::now);
    f.gauge(
        "run_timestamp",
        "When the rounds started (when the run ended, if none ran)",
        Some(Unit::Seconds),
        vec![(Vec::new(), unix_secs(started))],
    );
    // 1 when the first connection (the preflight) succeeded, 0 when it
    // failed: a target that is down still has a series, which a pushed
    // group (replaced by every run) would otherwise lose.
    let connected = match &info.compare {
        Some(c) => c
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let up = v.unavailable.is_none();
                (variant_labels(c, i as u8), f64::from(u8::from(up)))
            })
            .collect(),
        None => vec![(
            Vec::new(),
            f64::from(u8::from(info.preflight_error.is_none())),
        )],
    };
    f.gauge(
        "preflight_ok",
        "1 when the run's first connection to the target succeeded, 0 when it failed",
        None,
        connected,
    );
    f.gauge(
        "run_exit_code",
        "The run's exit code (an --openmetrics file: the process's own; --push: before the push's outcome)",
        None,
        vec![(Vec::new(), f64::from(run.exit_code))],
    );
    ending(f, &run.ending);
    certificates(f, info);
    connections(f, info);
    early_data(f, run);
}

/// How far the rounds got, and whether a signal stopped them.
fn ending(f: &mut Families, e: &super::output::Ending) {
    use super::output::StoppedBy;
    f.gauge(
        "run_rounds_completed",
        "Rounds whose every probe ran to its end, warmup rounds included",
        None,
        vec![(Vec::new(), f64::from(e.completed))],
    );
    f.gauge(
        "run_rounds_asked",
        "Rounds asked for (-n); 0 when the run goes on until it is stopped",
        None,
        vec![(Vec::new(), f64::from(e.asked))],
    );
    let signal = matches!(
        e.stopped_by,
        Some(StoppedBy::Interrupt | StoppedBy::Terminate | StoppedBy::HangUp)
    );
    f.gauge(
        "run_interrupted",
        "1 when a signal (Ctrl+C, SIGTERM, SIGHUP) stopped the rounds, 0 otherwise",
        None,
        vec![(Vec::new(), f64::from(u8::from(signal)))],
    );
}

/// Each certificate's notAfter.
fn certificates(f: &mut Families, info: &RunInfo) {
    // Where each variant asks a server of its own (`--compare target=`),
    // each has a certificate of its own, under its `variant`; on every
    // other axis it is one.
    let not_after = match info.compare.as_ref().filter(|c| c.axis.own_endpoints()) {
        Some(c) => c
            .variants
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let t = v.tls?.cert_not_after?;
                Some((variant_labels(c, i as u8), t as f64))
            })
            .collect(),
        None => info
            .tls
            .and_then(|t| t.cert_not_after)
            .map(|t| (Vec::new(), t as f64))
            .into_iter()
            .collect(),
    };
    f.gauge(
        "cert_not_after_timestamp",
        "The server certificate's notAfter",
        Some(Unit::Seconds),
        not_after,
    );
}

/// The connection each preflight settled on.
fn connections(f: &mut Families, info: &RunInfo) {
    // What each preflight settled on: the run's, or under `--compare` each
    // variant's that ran (another version, address or endpoint each).
    let settled: Vec<(Labels, Settled)> = match &info.compare {
        Some(c) => c
            .variants
            .iter()
            .enumerate()
            .filter(|(_, v)| v.unavailable.is_none())
            .filter_map(|(i, v)| Some((variant_labels(c, i as u8), (v.addr?, v.proto, v.tls))))
            .collect(),
        None => info
            .addr
            .map(|addr| (Vec::new(), (addr, info.proto, info.tls)))
            .into_iter()
            .collect(),
    };
    let connections = settled
        .into_iter()
        .map(|(scope, (addr, proto, tls))| {
            let facts = [
                ("address", addr.ip().to_string()),
                (
                    "http_version",
                    proto.map(|p| p.as_str().to_string()).unwrap_or_default(),
                ),
                (
                    "tls_version",
                    tls.map(|t| t.version_label()).unwrap_or_default(),
                ),
                (
                    "cipher",
                    tls.map(|t| t.cipher.to_string()).unwrap_or_default(),
                ),
                (
                    "group",
                    tls.and_then(|t| t.group).unwrap_or_default().to_string(),
                ),
            ];
            let mut labels = scope;
            labels.extend(facts.into_iter().map(|(k, v)| (k.to_string(), v)));
            (labels, 1.0)
        })
        .collect();
    f.gauge(
        "connection_info",
        "The connection the preflight settled on",
        None,
        connections,
    );
}

/// The cold probes that asked for early data, by outcome (`stats::Tallies`).
fn early_data(f: &mut Families, run: &Finished) {
    let info = run.info;
    let early_data = &run.history.tallies.of_run().early_data;
    let mut outcomes = Vec::new();
    for (variant, counts) in early_data.iter().enumerate() {
        if counts.iter().all(|&c| c == 0) {
            continue;
        }
        let scope = match &info.compare {
            Some(c) => variant_labels(c, variant as u8),
            None => Vec::new(),
        };
        for outcome in [EarlyData::Accepted, EarlyData::Rejected, EarlyData::NotSent] {
            let labels = with(&scope, &[("outcome", outcome.as_str())]);
            outcomes.push((labels, counts[outcome as usize] as f64));
        }
    }
    f.gauge(
        "early_data_probes",
        "Cold probes that asked for TLS early data, per outcome",
        None,
        outcomes,
    );
}

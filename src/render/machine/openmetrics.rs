//! `--openmetrics FILE` and the body of `--push`: the run's figures in the
//! OpenMetrics text format, written when the run ends. Every family but one
//! is a gauge encoded by the Prometheus project's client (`prometheus-client`):
//! the figures are this run's, computed once, so nothing counts up.
//!
//! No `info` type and no counters: node_exporter's textfile collector and the
//! Pushgateway parse the older 0.0.4 text format, which refuses `# TYPE x
//! info` and would split a counter's `x_total` from its family. A fact is a
//! gauge named `..._info` with the value 1.
//!
//! The client has no summary type (0.26 lists it as not yet supported), so
//! the one summary, `tlsping_stage_seconds`, is written by our own encoder
//! (`openmetrics_summary`) after the client's families and before `# EOF`,
//! with the same labels and the same escaping.
//!
//! This file holds the output and the statistics' gauges; the run's own
//! facts (when, how it ended, the connection, the certificate) are
//! `openmetrics_facts`, and the families as they are built
//! `openmetrics_families`.

use std::io::{self, Write};

use prometheus_client::registry::{Registry, Unit};

use crate::probe::{ErrorKind, Mode, ModeChoice, ProbeError, RunInfo};
use crate::stats::Summary;

use super::openmetrics_facts::run_facts;
use super::openmetrics_families::{delta_secs, secs, with, Families};
use super::openmetrics_scope::{variant_labels, Scope};
use super::openmetrics_summary::stage_summaries;
use super::summary_fields::SUMMARY_FIELDS;

pub use super::openmetrics_scope::Labels;
use super::output::{Finished, Output};

/// At most this many `Server-Timing` names become series; the others are
/// counted in `tlsping_server_timing_untracked`.
pub const MAX_SERVER_TIMING_SERIES: usize = 20;

/// Label names every series may carry from us: a `--label` cannot take one.
pub const RESERVED_LABELS: [&str; 17] = [
    "target",
    "job",
    "instance",
    "stage",
    "mode",
    "variant",
    "variant_target",
    "baseline",
    "quantile",
    "le",
    "name",
    "outcome",
    "address",
    "http_version",
    "tls_version",
    "cipher",
    "group",
];

/// Where the exposition goes (`--push` takes `exposition` itself).
pub enum Destination {
    /// Written through a temporary file in its held directory
    /// (`files::Destination`).
    File(crate::files::Destination),
    /// `--openmetrics -`: in place of the table.
    Stdout(Box<dyn Write>),
}

/// The exposition of the run, as one output: a plain function of the
/// finished run (`exposition`), written when the run ends.
pub struct OpenMetrics {
    dest: Destination,
    /// The run's labels: `target`, then every `--label`.
    labels: Labels,
}

impl OpenMetrics {
    pub fn new(dest: Destination, labels: Labels) -> OpenMetrics {
        OpenMetrics { dest, labels }
    }

    fn write(&mut self, run: &Finished) -> io::Result<()> {
        let text = exposition(run, &self.labels);
        match &mut self.dest {
            Destination::File(file) => file.replace(|out| out.write_all(text.as_bytes())),
            Destination::Stdout(out) => {
                out.write_all(text.as_bytes())?;
                out.flush()
            }
        }
    }
}

impl Output for OpenMetrics {
    /// The file does; on stdout, it is written with the rest of stdout.
    fn records_exit_code(&self) -> bool {
        matches!(self.dest, Destination::File(_))
    }

    fn what(&self) -> String {
        match &self.dest {
            Destination::File(file) => format!("the figures to {}", file.path().display()),
            Destination::Stdout(_) => "the output".into(),
        }
    }

    fn end(&mut self, run: &Finished) -> io::Result<()> {
        self.write(run)
    }

    fn ended_before_rounds(&mut self, run: &Finished) -> io::Result<()> {
        self.write(run)
    }
}

/// The labels of every series of a run: `target` (the URL measured), then
/// the `--label`s in the order given.
pub fn run_labels(info: &crate::probe::RunInfo, asked: &Labels) -> Labels {
    // Where each variant asks a server of its own (`--compare target=`),
    // the run's own URL is the first one that passed its preflight; the
    // series and the push's group are named by the first one listed, so a
    // run with that target down still replaces the same group (its figures
    // then say it could not run). Each variant's own URL is in its series'
    // `variant_target` (`variant_labels`).
    let listed_first = info
        .compare
        .as_ref()
        .filter(|c| c.axis.own_endpoints())
        .and_then(|c| c.variants.first())
        .map(|v| v.value.clone());
    let mut labels = vec![(
        "target".to_string(),
        listed_first.unwrap_or_else(|| info.url.clone()),
    )];
    labels.extend(asked.iter().cloned());
    labels
}

/// One figure per scope that has it.
fn each<T>(scopes: &[Scope], figure: impl Fn(&Summary) -> Option<T>) -> Vec<(Labels, T)> {
    scopes
        .iter()
        .filter_map(|s| figure(s.summary).map(|v| (s.labels.clone(), v)))
        .collect()
}

/// A median and, when there are enough rounds, its 95 % interval.
type WithInterval<T> = Option<(T, Option<(T, T)>)>;

/// A median's gauge (`name`, `help`) and the two bounds of its 95 %
/// interval (`name_low`, `name_high`), in seconds.
fn with_interval<T: Copy>(
    f: &mut Families,
    scopes: &[Scope],
    (name, help): (&str, &str),
    what: &str,
    figure: fn(&Summary) -> WithInterval<T>,
    to_secs: fn(T) -> f64,
) {
    let seconds = Some(Unit::Seconds);
    f.gauge(
        name,
        help,
        seconds.clone(),
        each(scopes, |s| figure(s).map(|m| to_secs(m.0))),
    );
    for (end, side, pick) in [("low", "Lower", 0), ("high", "Upper", 1)] {
        f.gauge(
            &format!("{name}_{end}"),
            &format!("{side} bound of {what}'s 95% interval"),
            seconds.clone(),
            each(scopes, |s| {
                let (lo, hi) = figure(s)?.1?;
                Some(to_secs(if pick == 0 { lo } else { hi }))
            }),
        );
    }
}

/// What the run set out to measure and reached nothing of, each by the
/// labels of its scope: the whole run when it ended at its preflight (under
/// `--compare`, every variant), else each `--compare` variant that could not
/// run. A preflight that Ctrl+C (or a signal) cut short found nothing down,
/// so it is left out.
fn unreached(info: &RunInfo) -> Vec<Labels> {
    let failed = |e: Option<&ProbeError>| e.is_some_and(|e| e.kind != ErrorKind::Canceled);
    match &info.compare {
        Some(c) => c
            .variants
            .iter()
            .enumerate()
            .filter(|(_, v)| failed(v.unavailable.as_ref().or(info.preflight_error.as_ref())))
            .map(|(i, _)| variant_labels(c, i as u8))
            .collect(),
        None if failed(info.preflight_error.as_ref()) => vec![Vec::new()],
        None => Vec::new(),
    }
}

/// The modes a run was asked to measure.
fn modes_asked(info: &RunInfo) -> &'static [&'static str] {
    match info.settings.mode {
        ModeChoice::Both => &["cold", "warm"],
        ModeChoice::Cold => &["cold"],
        ModeChoice::Warm => &["warm"],
    }
}

/// The gauges of the statistics block, per scope (the run, or each variant).
fn statistics(f: &mut Families, scopes: &[Scope], info: &RunInfo) {
    counts_and_loss(f, scopes, info);
    gains(f, scopes);
    kernel_and_server(f, scopes);
    server_timings(f, scopes);
}

/// Probes sent, the loss (a run that reached nothing a total loss), rounds.
fn counts_and_loss(f: &mut Families, scopes: &[Scope], info: &RunInfo) {
    let per_mode = |value: &dyn Fn(&crate::stats::ModeSummary) -> Option<f64>| {
        let mut series = Vec::new();
        for s in scopes {
            for (mode, m) in [("cold", &s.summary.cold), ("warm", &s.summary.warm)] {
                if let Some(v) = value(m) {
                    series.push((with(&s.labels, &[("mode", mode)]), v));
                }
            }
        }
        series
    };
    f.gauge(
        "probes_sent",
        "Probes that count for loss (not warmup, not interrupted), per mode",
        None,
        per_mode(&|m| Some(m.sent as f64)),
    );
    // A run (or a variant) that reached nothing sent no probe, and has no
    // share to give; it is written as a total loss all the same, so that
    // an outage counts in a failure rate and its alert instead of leaving
    // the series out (a pushed group, replaced whole, would lose it).
    let mut loss = per_mode(&|m| m.loss);
    for scope in unreached(info) {
        for mode in modes_asked(info) {
            let labels = with(&scope, &[("mode", mode)]);
            if !loss.iter().any(|(l, _)| *l == labels) {
                loss.push((labels, 1.0));
            }
        }
    }
    f.gauge(
        "loss_ratio",
        "Share of the probes sent that got no response, per mode; 1 when the run reached nothing",
        None,
        loss,
    );
    f.gauge(
        "rounds",
        "Rounds that count (warmup rounds left out)",
        None,
        each(scopes, |s| Some(s.rounds as f64)),
    );
}

/// What a kept connection saves, and what a new one's handshake costs.
fn gains(f: &mut Families, scopes: &[Scope]) {
    with_interval(
        f,
        scopes,
        (
            "paired_gain",
            "Median of per-round cold total minus warm total",
        ),
        "the paired gain",
        |s| Some((s.paired_gain?, s.paired_gain_ci)),
        delta_secs,
    );
    with_interval(
        f,
        scopes,
        (
            "handshake_overhead",
            "Median of dns + tcp + tls within each cold probe",
        ),
        "the handshake overhead",
        |s| Some((s.handshake.overhead?, s.handshake_overhead_ci)),
        secs,
    );
}

/// Resumption, then the summary's figures that are gauges too: the
/// keep-alive gain, the kernel's round trips, the server's own time.
fn kernel_and_server(f: &mut Families, scopes: &[Scope]) {
    f.gauge(
        "tls_resumed_ratio",
        "Share of the cold handshakes that resumed a TLS session",
        None,
        each(scopes, |s| {
            (s.cold_handshakes > 0).then(|| s.tls_resumed as f64 / s.cold_handshakes as f64)
        }),
    );
    // The summary's figures that are gauges too, from its table.
    for metric in SUMMARY_FIELDS.iter().filter_map(|f| f.metric.as_ref()) {
        let unit = metric.seconds.then_some(Unit::Seconds);
        f.gauge(metric.name, metric.help, unit, each(scopes, metric.value));
    }
}

/// The server's own `Server-Timing` figures, at most 20 names of them.
fn server_timings(f: &mut Families, scopes: &[Scope]) {
    let mut timings = Vec::new();
    let mut untracked = 0;
    for s in scopes {
        for (i, m) in s.summary.attribution.server_timing.iter().enumerate() {
            if i < MAX_SERVER_TIMING_SERIES {
                let labels = with(&s.labels, &[("name", &m.name)]);
                timings.push((labels, secs(m.median)));
            } else {
                untracked += 1;
            }
        }
    }
    f.gauge(
        "server_timing",
        "Median Server-Timing dur the server reported, per metric name (at most 20 names)",
        Some(Unit::Seconds),
        timings,
    );
    f.gauge(
        "server_timing_untracked",
        "Server-Timing names beyond the 20 that have series",
        None,
        vec![(Vec::new(), f64::from(untracked))],
    );
}

/// `--compare`: how each variant differs from the baseline, per stage.
fn differences(f: &mut Families, run: &Finished) {
    let (Some(comparison), Some(info)) = (run.comparison, run.info.compare.as_ref()) else {
        return;
    };
    let mut median = Vec::new();
    let mut low = Vec::new();
    let mut high = Vec::new();
    for d in &comparison.differences {
        let mode = match d.mode {
            Mode::Cold => "cold",
            Mode::Warm => "warm",
        };
        let labels = with(
            &variant_labels(info, d.variant),
            &[
                ("baseline", info.label(d.against)),
                ("mode", mode),
                ("stage", d.stage.as_str()),
            ],
        );
        if let Some(m) = d.median {
            median.push((labels.clone(), delta_secs(m)));
        }
        if let Some((lo, hi)) = d.ci {
            low.push((labels.clone(), delta_secs(lo)));
            high.push((labels, delta_secs(hi)));
        }
    }
    let seconds = Some(Unit::Seconds);
    f.gauge(
        "variant_difference",
        "Median of per-round variant minus baseline, per stage (--compare)",
        seconds.clone(),
        median,
    );
    f.gauge(
        "variant_difference_low",
        "Lower bound of the variant difference's 95% interval",
        seconds.clone(),
        low,
    );
    f.gauge(
        "variant_difference_high",
        "Upper bound of the variant difference's 95% interval",
        seconds,
        high,
    );
}

/// The whole exposition: `labels` on every series, the client's gauges,
/// our summary, `# EOF`.
pub fn exposition(run: &Finished, labels: &Labels) -> String {
    let scopes = Scope::of(run);
    let constant = labels
        .iter()
        .map(|(k, v)| (k.clone().into(), v.clone().into()));
    let mut f = Families {
        registry: Registry::with_prefix_and_labels("tlsping", constant),
    };
    statistics(&mut f, &scopes, run.info);
    differences(&mut f, run);
    run_facts(&mut f, run);
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode_registry(&mut text, &f.registry);
    stage_summaries(&mut text, run, labels, &scopes);
    text.push_str("# EOF\n");
    text
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;

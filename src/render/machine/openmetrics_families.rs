//! The families of the exposition as they are built: a gauge family is
//! registered with the client only when it has a series; and the units
//! the gauges are written in (seconds, a Unix time). A leaf of the
//! exposition, shared by the statistics' gauges (`openmetrics`) and the
//! run's facts (`openmetrics_facts`).

use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use super::openmetrics_scope::Labels;
use crate::stats::Delta;

type Gauges = Family<Labels, Gauge<f64, AtomicU64>>;

/// The families being built, each registered only when it has a series.
pub(super) struct Families {
    pub(super) registry: Registry,
}

impl Families {
    pub(super) fn gauge(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        series: Vec<(Labels, f64)>,
    ) {
        if series.is_empty() {
            return;
        }
        let family = Gauges::default();
        for (labels, value) in series {
            family.get_or_create(&labels).set(value);
        }
        match unit {
            Some(unit) => self.registry.register_with_unit(name, help, unit, family),
            None => self.registry.register(name, help, family),
        }
    }
}

/// `scope`'s labels with `more` after them.
pub(super) fn with(scope: &Labels, more: &[(&str, &str)]) -> Labels {
    let mut labels = scope.clone();
    labels.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    labels
}

pub(super) fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

pub(super) fn delta_secs(d: Delta) -> f64 {
    d.as_nanos() as f64 / 1e9
}

pub(super) fn unix_secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

//! The `Server-Timing` durations a run keeps beside its records: what the
//! server said it spent, per metric name and variant, 4 bytes a metric.

use crate::probe::ServerTiming;

/// At most this many `Server-Timing` metric names are followed per run;
/// later names are counted (`ServerTimings::untracked`), not kept.
pub const MAX_TRACKED_METRICS: usize = 64;

/// One metric name's durations from one variant's timed samples.
#[derive(Debug)]
struct Series {
    /// Index into `ServerTimings::names`.
    name: u16,
    variant: u8,
    /// Where it was first seen: the sample's number and the metric's place
    /// in that sample's header (for "first seen" order).
    first: (usize, usize),
    /// Durations in whole microseconds, the way every other stage is kept;
    /// the rare one beyond 32 bits (over 71 minutes) in `long`.
    us: Vec<u32>,
    long: Vec<u64>,
}

/// The `Server-Timing` durations of timed samples, per metric name and
/// variant: 4 bytes for each metric a response carried.
#[derive(Debug, Default)]
pub struct ServerTimings {
    names: Vec<String>,
    series: Vec<Series>,
    /// Metric names seen after `MAX_TRACKED_METRICS` were already followed.
    untracked: Vec<String>,
}

/// Milliseconds (a `Server-Timing` `dur`) as whole microseconds; the parser
/// keeps `dur` within 0 ..= 10^9 ms, far below what `u64` holds.
fn dur_us(ms: f64) -> u64 {
    (ms * 1000.0).round().max(0.0) as u64
}

impl ServerTimings {
    pub(super) const fn new() -> ServerTimings {
        ServerTimings {
            names: Vec::new(),
            series: Vec::new(),
            untracked: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, seq: usize, variant: u8, metrics: &[ServerTiming]) {
        for (place, m) in metrics.iter().enumerate() {
            let Some(dur) = m.dur_ms else { continue };
            let name = match self.names.iter().position(|n| *n == m.name) {
                Some(i) => i,
                None if self.names.len() < MAX_TRACKED_METRICS => {
                    self.names.push(m.name.clone());
                    self.names.len() - 1
                }
                None => {
                    if self.untracked.len() < MAX_TRACKED_METRICS
                        && !self.untracked.contains(&m.name)
                    {
                        self.untracked.push(m.name.clone());
                    }
                    continue;
                }
            };
            let name = name as u16;
            let at = match self
                .series
                .iter()
                .position(|s| s.name == name && s.variant == variant)
            {
                Some(i) => i,
                None => {
                    self.series.push(Series {
                        name,
                        variant,
                        first: (seq, place),
                        us: Vec::new(),
                        long: Vec::new(),
                    });
                    self.series.len() - 1
                }
            };
            let v = dur_us(dur);
            match u32::try_from(v) {
                Ok(short) => self.series[at].us.push(short),
                Err(_) => self.series[at].long.push(v),
            }
        }
    }

    /// Each metric of `variant` (all variants: `None`) with its durations,
    /// in the order the names were first seen.
    pub fn metrics(&self, variant: Option<u8>) -> Vec<(&str, Vec<u64>)> {
        let mut order: Vec<((usize, usize), u16)> = Vec::new();
        for s in &self.series {
            if variant.is_some_and(|v| v != s.variant) {
                continue;
            }
            match order.iter_mut().find(|(_, n)| *n == s.name) {
                Some(entry) => entry.0 = entry.0.min(s.first),
                None => order.push((s.first, s.name)),
            }
        }
        order.sort_unstable_by_key(|&(first, _)| first);
        order
            .into_iter()
            .map(|(_, name)| {
                let durs = self
                    .series
                    .iter()
                    .filter(|s| s.name == name && variant.is_none_or(|v| v == s.variant))
                    .flat_map(|s| {
                        let short = s.us.iter().map(|&v| u64::from(v));
                        short.chain(s.long.iter().copied())
                    })
                    .collect();
                (self.names[usize::from(name)].as_str(), durs)
            })
            .collect()
    }

    /// Metric names that came after the first `MAX_TRACKED_METRICS` (at
    /// most that many are listed): their durations are not in the statistics.
    pub fn untracked(&self) -> &[String] {
        &self.untracked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::synthetic;
    use crate::stats::History;

    #[test]
    fn server_timing_order_is_first_seen_per_variant_and_overall() {
        let with = |variant: u8, round: u32, names: &[&str]| {
            let mut s = synthetic::warm(round, 100, 1000, 10, true);
            s.variant = variant;
            s.server_timing = names
                .iter()
                .map(|n| ServerTiming {
                    name: n.to_string(),
                    dur_ms: Some(1.0),
                    desc: None,
                })
                .collect();
            s
        };
        // Variant 0 says `b, a` first; variant 1 says `a, b` in the same round.
        let h = History::of(&[with(0, 1, &["b", "a"]), with(1, 1, &["a", "b"])]);
        let names = |v| -> Vec<&str> {
            h.server_timing
                .metrics(v)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names(None), ["b", "a"]);
        assert_eq!(names(Some(0)), ["b", "a"]);
        assert_eq!(names(Some(1)), ["a", "b"]);
    }

    #[test]
    fn server_timing_names_beyond_the_limit_are_counted_not_kept() {
        let mut h = History::new();
        let mut s = synthetic::warm(1, 100, 1000, 10, true);
        s.server_timing = (0..MAX_TRACKED_METRICS + 2)
            .map(|i| ServerTiming {
                name: format!("m{i}"),
                dur_ms: Some(1.5),
                desc: None,
            })
            .collect();
        h.push(&s);
        let metrics = h.server_timing.metrics(None);
        assert_eq!(metrics.len(), MAX_TRACKED_METRICS);
        assert_eq!(metrics[0], ("m0", vec![1500]));
        assert_eq!(h.server_timing.untracked(), ["m64", "m65"]);
    }
}

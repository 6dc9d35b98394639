//! The run's statistics, following the sample rules: which samples count for
//! timings, loss, handshake overhead and the two gain figures.

use std::collections::HashMap;
use std::time::Duration;

use crate::probe::{ErrorKind, Mode, Sample};

use super::descriptive::{describe, median, median_f64, Description};

/// A residual above this share of total is worth a warning.
pub const RESIDUAL_WARN_SHARE: f64 = 0.20;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeSummary {
    /// Probes of this mode that count for loss (not warmup, not interrupted).
    pub sent: usize,
    pub ok: usize,
    /// Share of `sent` with no response, `None` when nothing was sent.
    pub loss: Option<f64>,
    pub timing: Description,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Handshake {
    /// Median of dns+tcp+tls summed within each cold sample.
    pub overhead: Option<Duration>,
    pub dns: Option<Duration>,
    pub tcp: Option<Duration>,
    pub tls: Option<Duration>,
    /// Timed cold samples left out because a stage was not measured.
    pub excluded: usize,
    /// The per-sample sums the median came from, sorted.
    pub sums: Vec<Duration>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub cold: ModeSummary,
    pub warm: ModeSummary,
    /// Rounds that count (not warmup) and the warmup rounds left out.
    pub rounds: usize,
    pub warmup_excluded: usize,
    /// Warm probes (not warmup) that had to open a connection.
    pub new_conn: usize,
    pub handshake: Handshake,
    /// median(cold totals) − median(warm totals), milliseconds, signed.
    pub keepalive_gain_ms: Option<f64>,
    /// Median of per-round (cold − warm) totals over rounds where both were timed.
    pub paired_gain_ms: Option<f64>,
    pub paired_rounds: usize,
    /// 95% confidence interval for the paired gain's median (needs 6 rounds).
    pub paired_gain_ci_ms: Option<(f64, f64)>,
    /// 95% confidence interval for the handshake overhead median.
    pub handshake_overhead_ci: Option<(Duration, Duration)>,
    /// Cold handshakes (not warmup) that resumed a session, out of `cold_handshakes`.
    pub tls_resumed: usize,
    pub cold_handshakes: usize,
    pub elapsed: Duration,
    /// The client's set-up, the kernel's RTT and the server's own time.
    pub attribution: super::attribution::Attribution,
    /// `--compare`: per-variant summaries and paired differences (see
    /// `summarize_compared`); `None` from `summarize`.
    pub comparison: Option<super::compare::Comparison>,
}

fn canceled(s: &Sample) -> bool {
    s.error
        .as_ref()
        .is_some_and(|e| e.kind == ErrorKind::Canceled)
}

/// Counts for timing statistics: a response, not warmup, a measured total,
/// and for warm a connection that was actually reused.
pub fn timed(s: &Sample) -> bool {
    s.ok() && !s.warmup && s.total().is_some() && (s.mode == Mode::Cold || s.reused())
}

fn mode_summary(samples: &[Sample], mode: Mode) -> ModeSummary {
    let counted: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.mode == mode && !s.warmup && !canceled(s))
        .collect();
    let sent = counted.len();
    let ok = counted.iter().filter(|s| s.ok()).count();
    let totals = samples
        .iter()
        .filter(|s| s.mode == mode && timed(s))
        .filter_map(|s| s.total())
        .collect();
    ModeSummary {
        sent,
        ok,
        loss: (sent > 0).then(|| (sent - ok) as f64 / sent as f64),
        timing: describe(totals),
    }
}

fn handshake(samples: &[Sample]) -> Handshake {
    let mut h = Handshake::default();
    let (mut dns, mut tcp, mut tls) = (Vec::new(), Vec::new(), Vec::new());
    for s in samples.iter().filter(|s| s.mode == Mode::Cold && timed(s)) {
        let tls_stage = if s.https {
            s.tls()
        } else {
            Some(Duration::ZERO)
        };
        match (s.dns(), s.tcp(), tls_stage) {
            (Some(d), Some(t), Some(l)) => {
                h.sums.push(d + t + l);
                dns.push(d);
                tcp.push(t);
                tls.push(l);
            }
            _ => h.excluded += 1,
        }
    }
    for v in [&mut h.sums, &mut dns, &mut tcp, &mut tls] {
        v.sort_unstable();
    }
    h.overhead = median(&h.sums);
    h.dns = median(&dns);
    h.tcp = median(&tcp);
    h.tls = if samples.iter().any(|s| s.https) {
        median(&tls)
    } else {
        None
    };
    h
}

use crate::text::millis as ms;

fn paired_differences(samples: &[Sample]) -> Vec<f64> {
    let mut by_round: HashMap<u32, (Option<Duration>, Option<Duration>)> = HashMap::new();
    for s in samples.iter().filter(|s| timed(s)) {
        let entry = by_round.entry(s.round).or_default();
        match s.mode {
            Mode::Cold => entry.0 = s.total(),
            Mode::Warm => entry.1 = s.total(),
        }
    }
    let mut rounds: Vec<_> = by_round.into_iter().collect();
    rounds.sort_by_key(|(r, _)| *r);
    rounds
        .into_iter()
        .filter_map(|(_, pair)| match pair {
            (Some(c), Some(w)) => Some(ms(c) - ms(w)),
            _ => None,
        })
        .collect()
}

pub fn summarize(samples: &[Sample], elapsed: Duration) -> Summary {
    let cold = mode_summary(samples, Mode::Cold);
    let warm = mode_summary(samples, Mode::Warm);
    let keepalive_gain_ms = match (cold.timing.median, warm.timing.median) {
        (Some(c), Some(w)) => Some(ms(c) - ms(w)),
        _ => None,
    };
    let mut diffs = paired_differences(samples);
    diffs.sort_by(|a, b| a.total_cmp(b));
    let paired_rounds = diffs.len();
    let paired_gain_ci_ms = super::ci::median_ci(&diffs);
    let handshake = handshake(samples);
    let handshake_overhead_ci = super::ci::median_ci(&handshake.sums);
    let mut rounds: Vec<u32> = samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| s.round)
        .collect();
    rounds.dedup();
    let mut warmup_rounds: Vec<u32> = samples
        .iter()
        .filter(|s| s.warmup)
        .map(|s| s.round)
        .collect();
    warmup_rounds.dedup();
    let cold_handshakes: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.mode == Mode::Cold && !s.warmup && s.tls.is_some())
        .collect();
    Summary {
        rounds: rounds.len(),
        warmup_excluded: warmup_rounds.len(),
        new_conn: samples.iter().filter(|s| !s.warmup && s.new_conn()).count(),
        handshake,
        keepalive_gain_ms,
        paired_gain_ms: median_f64(&diffs),
        paired_rounds,
        paired_gain_ci_ms,
        handshake_overhead_ci,
        tls_resumed: cold_handshakes
            .iter()
            .filter(|s| s.tls.is_some_and(|t| t.resumed))
            .count(),
        cold_handshakes: cold_handshakes.len(),
        cold,
        warm,
        elapsed,
        attribution: super::attribution::attribute(samples),
        comparison: None,
    }
}

/// The first timed sample whose unexplained residual is above 20% of its total.
pub fn large_residual(samples: &[Sample]) -> Option<&Sample> {
    samples
        .iter()
        .filter(|s| timed(s))
        .find(|s| match (s.other(), s.total()) {
            (Some(o), Some(t)) if !t.is_zero() => {
                o.as_secs_f64() > RESIDUAL_WARN_SHARE * t.as_secs_f64()
            }
            _ => false,
        })
}

/// How the run went, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    AllOk,
    SomeFailed,
    AllFailed,
    /// Nothing was measured (for example interrupted before the first probe).
    Nothing,
}

/// Judged on the samples that are not warmup, or on the warmup samples when
/// they are all there is. Interrupted probes are not the server's failure.
pub fn judge(samples: &[Sample]) -> Verdict {
    let real: Vec<&Sample> = samples.iter().filter(|s| !canceled(s)).collect();
    let main: Vec<&Sample> = real.iter().copied().filter(|s| !s.warmup).collect();
    let judged = if main.is_empty() { real } else { main };
    let ok = judged.iter().filter(|s| s.ok()).count();
    match (judged.len(), ok) {
        (0, _) => Verdict::Nothing,
        (n, ok) if ok == n => Verdict::AllOk,
        (_, 0) => Verdict::AllFailed,
        _ => Verdict::SomeFailed,
    }
}

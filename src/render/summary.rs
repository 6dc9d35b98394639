//! The statistics block printed when a run ends.

use std::time::Duration;

use crate::probe::{ModeSel, Proto, RunInfo};
use crate::stats::{ModeSummary, Summary, P95_MIN_N};

use super::format::{ms, secs, signed_ms};

const LABEL: usize = 10;
const COL: usize = 10;

fn with_unit(d: Option<Duration>) -> String {
    d.map(|d| format!("{}ms", ms(d)))
        .unwrap_or_else(|| "-".into())
}

/// A signed gain in ms with its sign, or `-` when there is none.
fn gain(ms: Option<f64>) -> String {
    ms.map(|g| format!("{}ms", signed_ms(g)))
        .unwrap_or_else(|| "-".into())
}

fn row(label: &str, cols: &[String]) -> String {
    let mut line = format!("{label:<LABEL$}");
    for c in cols {
        line.push_str(&format!("{c:>COL$}"));
    }
    line.trim_end().to_string()
}

pub fn statistics(info: &RunInfo, summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!("--- {} statistics ---", info.host));
    let warmup = if summary.warmup_excluded > 0 {
        format!(" (warmup {} excluded)", summary.warmup_excluded)
    } else {
        String::new()
    };
    out.push(format!(
        "n = {}{warmup}, elapsed {}",
        summary.rounds,
        secs(summary.elapsed)
    ));
    let modes: Vec<(&str, &ModeSummary)> = match info.mode {
        ModeSel::Both => vec![("cold", &summary.cold), ("warm", &summary.warm)],
        ModeSel::Cold => vec![("cold", &summary.cold)],
        ModeSel::Warm => vec![("warm", &summary.warm)],
    };
    let each =
        |f: &dyn Fn(&ModeSummary) -> String| modes.iter().map(|(_, m)| f(m)).collect::<Vec<_>>();
    out.push(row(
        "",
        &modes
            .iter()
            .map(|(name, _)| name.to_string())
            .collect::<Vec<_>>(),
    ));
    out.push(row("ok / sent", &each(&|m| format!("{}/{}", m.ok, m.sent))));
    out.push(row(
        "loss",
        &each(&|m| {
            m.loss
                .map(|l| format!("{:.1}%", l * 100.0))
                .unwrap_or_else(|| "-".into())
        }),
    ));
    out.push(row("min", &each(&|m| with_unit(m.timing.min))));
    out.push(row("mean", &each(&|m| with_unit(m.timing.mean))));
    out.push(row("median", &each(&|m| with_unit(m.timing.median))));
    out.push(row("max", &each(&|m| with_unit(m.timing.max))));
    out.push(row("mdev", &each(&|m| with_unit(m.timing.mdev))));
    out.push(row("p95", &each(&|m| with_unit(m.timing.p95))));
    if modes.iter().any(|(_, m)| m.timing.n < P95_MIN_N) {
        out.push(format!("  (p95 needs n >= {P95_MIN_N})"));
    }
    if info.mode != ModeSel::Warm {
        let h = &summary.handshake;
        let stages = if info.url.starts_with("https") {
            "dns+tcp+tls"
        } else {
            "dns+tcp"
        };
        out.push(format!(
            "handshake overhead = {}  median of {stages} per cold sample",
            h.overhead
                .map(|d| format!("+{}ms", ms(d)))
                .unwrap_or_else(|| "-".into())
        ));
        let mut parts = vec![
            format!("dns {}", with_unit(h.dns)),
            format!("tcp {}", with_unit(h.tcp)),
        ];
        if info.url.starts_with("https") {
            parts.push(format!("tls {}", with_unit(h.tls)));
        }
        out.push(format!("  {}  (medians)", parts.join(" · ")));
    }
    if info.mode == ModeSel::Both {
        out.push(format!(
            "keep-alive gain    = {}  median cold - median warm [reference]",
            gain(summary.keepalive_gain_ms)
        ));
    }
    out
}

/// What `-v` adds after the statistics.
pub fn verbose_extras(info: &RunInfo, summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let no_ci = format!("no 95% CI below n = {}", crate::stats::ci::min_n());
    if info.mode == ModeSel::Both {
        out.push(format!(
            "paired gain        = {}  median of per-round cold - warm, {} rounds",
            gain(summary.paired_gain_ms),
            summary.paired_rounds
        ));
        out.push(match summary.paired_gain_ci_ms {
            Some((lo, hi)) => format!(
                "  95% CI {}ms .. {}ms (n = {})",
                signed_ms(lo),
                signed_ms(hi),
                summary.paired_rounds
            ),
            None => format!("  ({no_ci}; n = {})", summary.paired_rounds),
        });
    }
    if info.mode != ModeSel::Warm {
        let n = summary.handshake.sums.len();
        out.push(match summary.handshake_overhead_ci {
            Some((lo, hi)) => format!(
                "overhead 95% CI    = {}ms .. {}ms (n = {n})",
                ms(lo),
                ms(hi)
            ),
            None => format!("overhead 95% CI    = -  ({no_ci}; n = {n})"),
        });
    }
    if info.mode != ModeSel::Cold {
        out.push(format!(
            "new conn           = {} of {} warm probes opened a connection",
            summary.new_conn, summary.warm.sent
        ));
    }
    if info.mode != ModeSel::Warm && info.url.starts_with("https") {
        out.push(format!(
            "tls resumed        = {}/{} cold handshakes (a resumed one skips the certificates)",
            summary.tls_resumed, summary.cold_handshakes
        ));
    }
    if info.mode != ModeSel::Warm {
        out.push(format!(
            "overhead excluded  = {} cold samples (a stage not measured)",
            summary.handshake.excluded
        ));
    }
    if let Some(t) = &info.tls {
        let chain = t
            .chain_len
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into());
        let alpn = t.alpn.map(|p| p.as_str()).unwrap_or("none");
        out.push(format!(
            "tls                = {} · ALPN {alpn} · {} · {} · chain of {chain}",
            t.version_label(),
            t.cipher,
            t.group.unwrap_or("group unknown")
        ));
        if let Some(days) = t.cert_days_left {
            out.push(format!("certificate        = expires in {days} days"));
        }
    }
    if info.proto == Some(Proto::H2) && info.mode != ModeSel::Cold {
        out.push("note: on h2 a reused warm probe is a new stream on the kept connection".into());
    }
    out
}

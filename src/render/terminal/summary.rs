//! The statistics block printed when a run ends.

use std::time::Duration;

use crate::probe::{Mode, ModeChoice, OcspStaple, Proto, RunInfo, WakeupNotHeld};
use crate::stats::{share_percent, ModeSummary, Summary, P95_MIN_N};

use super::format::{cell, ms, printable, secs, signed_ms, with_unit, Sign};

const LABEL: usize = 10;
const COL: usize = 10;

/// A signed gain in ms with its sign, or `-` when there is none.
fn gain(d: Option<crate::stats::Delta>) -> String {
    d.map(|g| format!("{}ms", signed_ms(g, Sign::Always)))
        .unwrap_or_else(|| "-".into())
}

/// The modes the statistics have a column for, in the order they are shown.
pub fn shown_modes(choice: ModeChoice) -> Vec<Mode> {
    match choice {
        ModeChoice::Both => vec![Mode::Cold, Mode::Warm],
        ModeChoice::Cold => vec![Mode::Cold],
        ModeChoice::Warm => vec![Mode::Warm],
    }
}

/// The figures of `mode`.
pub fn mode_summary(summary: &Summary, mode: Mode) -> &ModeSummary {
    match mode {
        Mode::Cold => &summary.cold,
        Mode::Warm => &summary.warm,
    }
}

fn row(label: &str, cols: &[String]) -> String {
    let mut line = format!("{label:<LABEL$}");
    for c in cols {
        line.push_str(&format!("{c:>COL$}"));
    }
    line.trim_end().to_string()
}

/// The statistics block; `picture` (the distribution rows, possibly none)
/// goes under the per-mode figures.
pub fn statistics(info: &RunInfo, summary: &Summary, picture: &[String]) -> Vec<String> {
    let title = if info.settings.calibrate {
        format!(
            "--- {} statistics (calibration: the client floor) ---",
            info.host
        )
    } else {
        format!("--- {} statistics ---", info.host)
    };
    titled_statistics(info, summary, title, picture)
}

/// The statistics block under `title` (with `--compare`, one variant's).
pub fn titled_statistics(
    info: &RunInfo,
    summary: &Summary,
    title: String,
    picture: &[String],
) -> Vec<String> {
    let mut out = vec![title];
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
    let modes: Vec<(&str, &ModeSummary)> = shown_modes(info.settings.mode)
        .into_iter()
        .map(|mode| (mode.as_str(), mode_summary(summary, mode)))
        .collect();
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
    out.extend_from_slice(picture);
    if info.settings.mode != ModeChoice::Warm {
        let h = &summary.handshake;
        let stages = if info.https { "dns+tcp+tls" } else { "dns+tcp" };
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
        if info.https {
            parts.push(format!("tls {}", with_unit(h.tls)));
        }
        out.push(format!("  {}  (medians)", parts.join(" · ")));
        out.extend(tls_split(summary));
        out.extend(super::why::lines(info, &summary.why));
    }
    let told = info.settings.mode != ModeChoice::Warm && summary.why.round_trips.is_some();
    out.extend(path_and_server(info, summary, told));
    if info.settings.mode == ModeChoice::Both {
        out.push(format!(
            "keep-alive gain    = {}  median cold - median warm [reference]",
            gain(summary.keepalive_gain)
        ));
    }
    out
}

/// `tls 41.7ms, of which client set-up 0.90ms (2%) and finish 0.50ms (1%)`:
/// how much of the handshake stage was our own work, before the ClientHello
/// left and after the server's last flight arrived; the rest is the path and
/// the server.
fn tls_split(summary: &Summary) -> Vec<String> {
    let a = &summary.attribution;
    let (Some(tls), Some(setup)) = (a.tls, a.tls_setup) else {
        return Vec::new();
    };
    let pct = |part: Duration| {
        share_percent(part, tls)
            .map(|p| format!(" ({p}%)"))
            .unwrap_or_default()
    };
    let mut line = format!(
        "  tls {}ms, of which client set-up {}ms{}",
        ms(tls),
        ms(setup),
        pct(setup)
    );
    if let Some(finish) = a.tls_finish {
        line.push_str(&format!(" and finish {}ms{}", ms(finish), pct(finish)));
    }
    let mut out = vec![line];
    if let Some(wire) = a.tls_network_server {
        out.push(format!(
            "  network and server inside tls {}ms  (medians per sample, n = {})",
            ms(wire),
            a.tls_setup_n
        ));
    }
    out
}

/// The kernel's round trip (and which one the round trips above are
/// counted at, when they were), the server's time after the request per
/// mode, what the server reports about itself, and connections that had to
/// retransmit.
fn path_and_server(info: &RunInfo, summary: &Summary, told: bool) -> Vec<String> {
    let a = &summary.attribution;
    let mut out = Vec::new();
    if let Some(rtt) = a.rtt {
        let min = a
            .min_rtt
            .map(|m| format!(", min {}ms", ms(m)))
            .unwrap_or_default();
        let used = if told {
            "; the round trips above are counted at the min"
        } else {
            ""
        };
        out.push(format!(
            "kernel rtt         = {}ms  median smoothed TCP RTT{min} (n = {}){used}",
            ms(rtt),
            a.rtt_n
        ));
    }
    let modes: Vec<(Mode, usize)> = shown_modes(info.settings.mode)
        .into_iter()
        .map(|m| (m, m as usize))
        .filter(|&(_, i)| a.server_time[i].is_some())
        .collect();
    if !modes.is_empty() {
        let figures: Vec<String> = modes
            .iter()
            .map(|&(m, i)| format!("{} {}", m.as_str(), with_unit(a.server_time[i])))
            .collect();
        let counts: Vec<String> = modes
            .iter()
            .map(|&(_, i)| a.server_time_n[i].to_string())
            .collect();
        out.push(format!(
            "server time       ~= {}  after the request, from the TLS records, less min rtt \
             (medians, n = {})",
            figures.join(" · "),
            counts.join(" · ")
        ));
    }
    if !a.server_timing.is_empty() {
        let metrics: Vec<String> = a
            .server_timing
            .iter()
            .map(|m| format!("{} {}ms", printable(&m.name), cell(Some(m.median))))
            .collect();
        out.push(format!(
            "server-timing      = {}  (medians the server reported)",
            metrics.join(" · ")
        ));
    }
    if a.retransmitted > 0 {
        out.push(format!(
            "retransmissions    = {} lost segments and waited for their recovery",
            super::format::count(a.retransmitted as u64, "probe", "probes")
        ));
    }
    out
}

/// What `-v` adds after the statistics.
pub fn verbose_extras(info: &RunInfo, summary: &Summary) -> Vec<String> {
    let mut out = summary_extras(info, summary);
    out.extend(preflight_extras(info));
    out
}

/// What `-v` adds from the summary itself (with `--compare`, each variant's).
pub fn summary_extras(info: &RunInfo, summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let no_ci = format!("no 95% CI below n = {}", crate::stats::ci::min_n());
    if info.settings.mode == ModeChoice::Both {
        out.push(format!(
            "paired gain        = {}  median of per-round cold - warm, {}",
            gain(summary.paired_gain),
            super::format::count(summary.paired_rounds as u64, "round", "rounds")
        ));
        out.push(match summary.paired_gain_ci {
            Some((lo, hi)) => format!(
                "  95% CI {}ms .. {}ms (n = {})",
                signed_ms(lo, Sign::Always),
                signed_ms(hi, Sign::Always),
                summary.paired_rounds
            ),
            None => format!("  ({no_ci}; n = {})", summary.paired_rounds),
        });
    }
    if info.settings.mode != ModeChoice::Warm {
        let n = summary.handshake.n;
        out.push(match summary.handshake_overhead_ci {
            Some((lo, hi)) => format!(
                "overhead 95% CI    = {}ms .. {}ms (n = {n})",
                ms(lo),
                ms(hi)
            ),
            None => format!("overhead 95% CI    = -  ({no_ci}; n = {n})"),
        });
    }
    if info.settings.mode != ModeChoice::Cold {
        out.push(format!(
            "new conn           = {} of {} warm probes opened a connection",
            summary.new_conn, summary.warm.sent
        ));
    }
    if info.settings.mode != ModeChoice::Warm && info.https {
        out.push(format!(
            "tls resumed        = {}/{} cold handshakes (a resumed one skips the certificates)",
            summary.tls_resumed, summary.cold_handshakes
        ));
    }
    if info.settings.mode != ModeChoice::Warm {
        out.push(format!(
            "overhead excluded  = {} cold samples (a stage not measured)",
            summary.handshake.excluded
        ));
    }
    out
}

/// Why the CPU's wake-up latency was not held, in words.
fn wakeup_not_held(why: &WakeupNotHeld) -> String {
    match why {
        WakeupNotHeld::Failed { path, error } => format!("{path}: {error}"),
        WakeupNotHeld::NotTheDevice { path } => format!("{path} is not the kernel's PM QoS device"),
    }
}

/// The preflight's OCSP staple in a few words, its JSON slug first.
fn ocsp_words(ocsp: OcspStaple) -> &'static str {
    match ocsp {
        OcspStaple::NotStapled => "none (the server stapled no OCSP response)",
        OcspStaple::Good => "good (verified, current, for the leaf certificate)",
        OcspStaple::Revoked => "revoked (the responder says the leaf certificate is revoked)",
        OcspStaple::Unknown => "unknown (the responder does not know the leaf certificate)",
        OcspStaple::Stale => "stale (outside its validity window)",
        OcspStaple::Unverified => "unverified (its signer is not trusted or its signature fails)",
        OcspStaple::WrongCert => "wrong_cert (about another certificate than the leaf)",
        OcspStaple::Malformed => "malformed (not a usable OCSP response)",
    }
}

/// What `-v` adds from the preflight: the connection it made. Not shown
/// with `--compare`, where the variants' connections differ from it.
fn preflight_extras(info: &RunInfo) -> Vec<String> {
    let mut out = Vec::new();
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
            let expiry = super::format::cert_expiry(days, t.cert_expired);
            out.push(format!("certificate        = {expiry}"));
        }
        if let Some(ocsp) = t.ocsp {
            out.push(format!("ocsp staple        = {}", ocsp_words(ocsp)));
        }
    }
    out.push(match &info.cpu_wakeup_why_not {
        None if info.cpu_wakeup_pinned => {
            "cpu wake-up        = held at 0 µs while the rounds ran (/dev/cpu_dma_latency)".into()
        }
        why => format!(
            "cpu wake-up        = not held ({}): a CPU waking from idle adds to the stage it ends",
            why.as_ref()
                .map_or_else(|| "not asked".into(), wakeup_not_held)
        ),
    });
    if info.proto == Some(Proto::H2) && info.settings.mode != ModeChoice::Cold {
        out.push("note: on h2 a reused warm probe is a new stream on the kept connection".into());
    }
    out
}

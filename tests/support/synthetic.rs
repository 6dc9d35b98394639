//! Constructed samples with consistent libcurl timers, for tests, snapshot
//! fixtures and benchmarks that must not depend on a network. Not part of
//! the library: integration tests and benchmarks include this file by path,
//! and so do the library's own unit tests (`tlsping::` resolves inside the
//! crate too, see `lib.rs`).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use tlsping::probe::{
    CurlTimers, EndReason, ErrorKind, Method, Mode, OcspStaple, PreflightFailed, ProbeError, Proto,
    RunInfo, RunSettings, Sample, Target, TcpFacts, TlsFacts,
};

fn base(round: u32, mode: Mode) -> Sample {
    Sample {
        status: 200,
        proto: Some(Proto::H2),
        addr: Some(SocketAddr::from(([192, 0, 2, 10], 443))),
        ..Sample::new(round, mode, true)
    }
}

fn kernel(srv_us: u32) -> Option<TcpFacts> {
    // A path that explains nine tenths of the server stage.
    Some(TcpFacts {
        rtt_us: srv_us / 10 * 9,
        min_rtt_us: Some(srv_us / 10 * 8),
        retrans: 0,
    })
}

fn facts(resumed: bool) -> TlsFacts {
    TlsFacts {
        version: "TLSv1.3",
        alpn: Some(Proto::H2),
        resumed,
        chain_len: Some(if resumed { 0 } else { 2 }),
        cipher: "TLS_AES_128_GCM_SHA256",
        group: Some("X25519MLKEM768"),
        cert_days_left: Some(61),
        cert_expired: false,
        cert_not_after: Some(1_900_000_000),
        ocsp: (!resumed).then_some(OcspStaple::Good),
        ticket_early_data: Some(0),
    }
}

/// A cold probe whose stages are exactly the given microseconds; `other_us`
/// is what the stages leave unexplained.
pub fn cold(
    round: u32,
    dns_us: u32,
    tcp_us: u32,
    tls_us: u32,
    srv_us: u32,
    other_us: u32,
) -> Sample {
    let mut s = base(round, Mode::Cold);
    let lookup = 5;
    let connect = lookup + tcp_us;
    let appconnect = connect + tls_us;
    let posttransfer = appconnect + other_us / 2;
    let starttransfer = posttransfer + srv_us;
    s.timers = CurlTimers {
        namelookup_us: lookup,
        connect_us: connect,
        appconnect_us: appconnect,
        pretransfer_us: posttransfer,
        posttransfer_us: posttransfer,
        starttransfer_us: starttransfer,
        total_us: starttransfer + other_us / 2,
        num_connects: 1,
    };
    s.own_dns = Some(Duration::from_micros(u64::from(dns_us)));
    // curl's own namelookup (5 µs) is in no stage when our lookup is used, so it is `other`.
    let total = dns_us + tcp_us + tls_us + srv_us + other_us + lookup;
    s.wall_total = Some(Duration::from_micros(u64::from(total)));
    s.tls = Some(facts(round > 1));
    // The client's own work before the ClientHello: a fixed 0.9 ms, as on a
    // typical machine (never above the whole stage).
    s.tls_setup = Some(Duration::from_micros(u64::from(tls_us.min(900))));
    // ... and 0.5 ms to read the server's last flight and finish.
    s.tls_finish = Some(Duration::from_micros(u64::from(
        tls_us.saturating_sub(900).min(500),
    )));
    s.tcp_info = kernel(srv_us);
    s.reply_wait = reply(srv_us);
    s
}

/// From the request's record out to the response's first record in: all
/// of `srv` but a twentieth (libcurl's own work before its stamp).
fn reply(srv_us: u32) -> Option<Duration> {
    Some(Duration::from_micros(u64::from(srv_us / 20 * 19)))
}

/// A warm probe: `reused` false means it had to dial (a `new conn`).
pub fn warm(round: u32, wait_us: u32, srv_us: u32, other_us: u32, reused: bool) -> Sample {
    let mut s = base(round, Mode::Warm);
    s.timers = CurlTimers {
        namelookup_us: if reused { 0 } else { 5 },
        connect_us: if reused { 0 } else { wait_us / 3 },
        appconnect_us: if reused { 0 } else { wait_us * 2 / 3 },
        pretransfer_us: wait_us,
        posttransfer_us: wait_us,
        starttransfer_us: wait_us + srv_us,
        total_us: wait_us + srv_us + other_us,
        num_connects: u32::from(!reused),
    };
    s.wall_total = Some(Duration::from_micros(u64::from(
        wait_us + srv_us + other_us,
    )));
    if !reused {
        s.tls = Some(facts(false));
    }
    s.tcp_info = kernel(srv_us);
    s.reply_wait = reply(srv_us);
    s
}

/// A probe that got no response.
pub fn failed(round: u32, mode: Mode, kind: ErrorKind, elapsed_us: u32) -> Sample {
    let mut s = base(round, mode);
    s.status = 0;
    s.proto = None;
    s.wall_total = Some(Duration::from_micros(u64::from(elapsed_us)));
    s.error = Some(Box::new(ProbeError {
        kind,
        text: format!("synthetic {}", kind.slug()),
    }));
    if mode == Mode::Cold && kind == ErrorKind::Timeout {
        // Reached the connection, then waited for a response that never came.
        s.own_dns = Some(Duration::from_micros(40));
        s.timers = CurlTimers {
            namelookup_us: 5,
            connect_us: 150,
            appconnect_us: 0,
            num_connects: 1,
            ..Default::default()
        };
    }
    s
}

/// The facts of a run over HTTP/2 and TLS 1.3 to a documentation address:
/// 4 rounds, 1 s apart, both modes, one warmup round.
pub fn run_info() -> RunInfo {
    RunInfo {
        compare: None,
        started_at: None,
        url: "https://example.test/".into(),
        https: true,
        host: "example.test".into(),
        method: "HEAD".into(),
        addr: Some(SocketAddr::from(([192, 0, 2, 10], 443))),
        proto: Some(Proto::H2),
        tls: Some(facts(false)),
        ip_pinned: true,
        dns_first: Some(Duration::from_millis(3)),
        preflight_tcp: Some(Duration::from_millis(31)),
        preflight_tls: Some(Duration::from_millis(33)),
        preflight_status: 200,
        preflight_bytes: 0,
        // The documented defaults, but 4 rounds.
        settings: RunSettings {
            count: 4,
            ..RunSettings::default()
        },
        libcurl_version: "8.22.0".into(),
        tls_library: "OpenSSL/3.6.3".into(),
        cpu_wakeup_pinned: false,
        cpu_wakeup_why_not: None,
        preflight_error: None,
    }
}

/// A preflight to `https://example.test/` that failed with `kind` and
/// libcurl's `text` before it learned anything.
pub fn preflight_failed(kind: ErrorKind, text: &str) -> EndReason {
    let error = ProbeError {
        kind,
        text: text.into(),
    };
    let target = Target::parse("https://example.test/").expect("a valid URL");
    let timeout = Duration::from_secs(5);
    EndReason::PreflightFailed(Box::new(PreflightFailed::bare(
        error,
        target,
        Method::Head,
        timeout,
    )))
}

/// Feeds `samples` to the human output round by round, as the scheduler
/// does (every round from 1 to the last one present).
pub fn feed_rounds<W: std::io::Write>(h: &mut tlsping::render::Human<W>, samples: &[Sample]) {
    let last = samples.iter().map(|s| s.round).max().unwrap_or(0);
    for round in 1..=last {
        let of_round: Vec<Sample> = samples
            .iter()
            .filter(|s| s.round == round)
            .cloned()
            .collect();
        h.round(round, &of_round).unwrap();
    }
}

/// Asserts that `doc` is a valid `--json` document (the committed schema).
pub fn assert_valid_document(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/tlsping.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

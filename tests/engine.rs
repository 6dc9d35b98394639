//! The measuring engine against real TLS servers on loopback: the
//! connection-count invariant, resumption, stage invariants, the preflight.

mod support;

use std::time::Duration;

use support::{start, Quiet, ServerOpts, Snapshot, TestServer};
use tlsping::probe::{
    self, Cancel, Config, Method, Mode, ModeChoice, Observer, ProbeEnv, Proto, Sample,
};

fn config(server: &TestServer, mode: ModeChoice, count: u32) -> Config {
    support::engine_config(&server.url(), mode, count)
}

struct Outcome {
    pre: probe::Preflight,
    /// What the server saw during the rounds only (the preflight subtracted).
    rounds: Snapshot,
    samples: Vec<Sample>,
}

fn run(server: &TestServer, cfg: &Config) -> Outcome {
    let env = ProbeEnv::new(cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(cfg, &env).expect("preflight");
    let after_preflight = server.counters.snapshot();
    let r = support::run_rounds(cfg, &pre.method, pre.addr, &env, &mut Quiet);
    assert!(r.stop.is_none(), "run stopped early: {:?}", r.stop);
    Outcome {
        pre,
        rounds: server.counters.snapshot() - after_preflight,
        samples: r.samples,
    }
}

fn of(samples: &[Sample], mode: Mode) -> Vec<&Sample> {
    samples.iter().filter(|s| s.mode == mode).collect()
}

fn cold_opens_one_connection_per_probe(h2: bool) {
    let server = start(ServerOpts {
        h2,
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Cold, 5));
    assert_eq!(out.samples.len(), 5);
    assert_eq!(
        out.rounds.tcp, 5,
        "5 cold probes must cost the server exactly 5 connections"
    );
    assert_eq!(out.rounds.requests, 5);
    for s in &out.samples {
        assert!(s.ok(), "{:?}", s.error);
        assert_eq!(s.timers.num_connects, 1);
        assert_eq!(s.proto, Some(if h2 { Proto::H2 } else { Proto::Http11 }));
    }
}

fn warm_reuses_one_connection(h2: bool) {
    let server = start(ServerOpts {
        h2,
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Warm, 5));
    assert_eq!(
        out.rounds.tcp, 1,
        "5 warm probes must cost the server exactly 1 connection"
    );
    assert_eq!(out.rounds.requests, 5);
    let warm = of(&out.samples, Mode::Warm);
    assert!(
        warm[0].new_conn() && !warm[0].reused(),
        "the first warm probe has to dial"
    );
    assert!(
        warm[0].tls.is_some(),
        "the dialing warm probe made a handshake"
    );
    for s in &warm[1..] {
        assert!(
            s.reused() && !s.new_conn(),
            "round {} did not reuse",
            s.round
        );
        assert!(s.tls.is_none(), "no handshake on a reused connection");
    }
}

#[test]
fn cold_opens_one_connection_per_probe_http1() {
    cold_opens_one_connection_per_probe(false);
}

#[test]
fn cold_opens_one_connection_per_probe_http2() {
    cold_opens_one_connection_per_probe(true);
}

#[test]
fn warm_reuses_one_connection_http1() {
    warm_reuses_one_connection(false);
}

#[test]
fn warm_reuses_one_connection_http2() {
    warm_reuses_one_connection(true);
}

#[test]
fn both_modes_interleaved_cost_n_plus_one_connections() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Both, 4));
    assert_eq!(out.rounds.tcp, 4 + 1);
    let modes: Vec<Mode> = out.samples.iter().map(|s| s.mode).collect();
    use Mode::{Cold, Warm};
    assert_eq!(
        modes,
        vec![Cold, Warm, Warm, Cold, Cold, Warm, Warm, Cold],
        "alternate order"
    );
    assert!(out
        .samples
        .iter()
        .filter(|s| s.round == 1)
        .all(|s| s.warmup));
    assert!(out
        .samples
        .iter()
        .filter(|s| s.round > 1)
        .all(|s| !s.warmup));
}

fn resumption_shows_from_round_two(tls12: bool) {
    let server = start(ServerOpts {
        tls12,
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Cold, 4));
    let cold = of(&out.samples, Mode::Cold);
    let facts: Vec<_> = cold
        .iter()
        .map(|s| s.tls.expect("cold probes carry TLS facts"))
        .collect();
    assert!(!facts[0].resumed, "round 1 is a full handshake");
    assert!(
        facts[1..].iter().all(|f| f.resumed),
        "rounds 2.. resume: {facts:?}"
    );
    let want = if tls12 { "TLSv1.2" } else { "TLSv1.3" };
    assert!(facts.iter().all(|f| f.version == want));
    assert!(facts[0].chain_len.unwrap_or(0) >= 1);
    // And the server agrees.
    assert_eq!((out.rounds.full, out.rounds.resumed), (1, 3));
}

#[test]
fn cold_resumes_tls13_sessions_from_round_two() {
    resumption_shows_from_round_two(false);
}

#[test]
fn cold_resumes_tls12_sessions_from_round_two() {
    resumption_shows_from_round_two(true);
}

#[test]
fn resume_off_makes_every_cold_handshake_full() {
    let server = start(ServerOpts::default());
    let mut cfg = config(&server, ModeChoice::Cold, 3);
    cfg.settings.resume = false;
    let out = run(&server, &cfg);
    assert_eq!((out.rounds.full, out.rounds.resumed), (3, 0));
    assert!(out
        .samples
        .iter()
        .all(|s| s.tls.is_some_and(|t| !t.resumed)));
}

#[test]
fn stages_are_measured_or_absent_and_never_exceed_total() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Both, 4));
    for s in &out.samples {
        let total = s.total().expect("total measured");
        match s.mode {
            Mode::Cold => {
                let parts = [s.dns(), s.tcp(), s.tls(), s.srv()];
                assert!(
                    parts.iter().all(|p| p.is_some()),
                    "cold stage missing: {s:?}"
                );
                assert!(s.wait().is_none(), "cold has no wait stage");
                let sum: Duration = parts.iter().flatten().sum();
                assert!(
                    total >= sum,
                    "round {}: total {total:?} < stages {sum:?}",
                    s.round
                );
            }
            Mode::Warm => {
                assert!(
                    s.dns().is_none() && s.tcp().is_none() && s.tls().is_none(),
                    "warm never measures dns/tcp/tls"
                );
                let sum = s.wait().unwrap() + s.srv().unwrap();
                assert!(
                    total >= sum,
                    "round {}: total {total:?} < stages {sum:?}",
                    s.round
                );
            }
        }
        assert_eq!(
            s.other().unwrap() + {
                let parts: Duration = match s.mode {
                    Mode::Cold => [s.dns(), s.tcp(), s.tls(), s.srv()].iter().flatten().sum(),
                    Mode::Warm => [s.wait(), s.srv()].iter().flatten().sum(),
                };
                parts
            },
            total
        );
    }
}

fn head_refused_with(code: u16) {
    let server = start(ServerOpts {
        refuse_head: Some(code),
        ..Default::default()
    });
    let out = run(&server, &config(&server, ModeChoice::Both, 3));
    assert_eq!(out.pre.method, Method::RangedGet);
    let requests = server.counters.requests.lock().unwrap().clone();
    // Exactly one HEAD (the preflight's first try), then ranged GETs only.
    assert_eq!(requests[0].0, "HEAD");
    assert!(
        requests[1..]
            .iter()
            .all(|(m, r)| m == "GET" && r.as_deref() == Some("bytes=0-0")),
        "{requests:?}"
    );
    assert_eq!(requests.len(), 2 + 6);
    assert!(out.samples.iter().all(|s| s.ok() && s.status == 200));
}

#[test]
fn head_falls_back_to_ranged_get_on_405() {
    head_refused_with(405);
}

#[test]
fn head_falls_back_to_ranged_get_on_501() {
    head_refused_with(501);
}

#[test]
fn preflight_settles_address_protocol_and_tls_version() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let cfg = config(&server, ModeChoice::Both, 1);
    let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(&cfg, &env).unwrap();
    assert_eq!(pre.addr, Some(server.addr));
    assert_eq!(pre.proto, Some(Proto::H2));
    assert_eq!(pre.tls.unwrap().version, "TLSv1.3");
    assert_eq!(pre.method, Method::Head);
    assert!(pre.dns_first.is_some());
}

#[test]
fn tls_details_come_from_the_live_connection() {
    for tls12 in [false, true] {
        let server = start(ServerOpts {
            tls12,
            ..Default::default()
        });
        let out = run(&server, &config(&server, ModeChoice::Cold, 2));
        for s in &out.samples {
            let t = s.tls.expect("cold probes carry TLS facts");
            assert!(!t.cipher.is_empty());
            if tls12 {
                assert!(t.cipher.starts_with("ECDHE-"), "{}", t.cipher);
                assert!(t.group.is_some());
            } else {
                assert!(t.cipher.starts_with("TLS_"), "{}", t.cipher);
                // OpenSSL 3.5+ on both ends prefers the post-quantum hybrid.
                assert_eq!(t.group, Some("X25519MLKEM768"));
            }
            // The test certificates are valid for 30 days from today.
            let days = t.cert_days_left.expect("leaf certificate examined");
            assert!((29..=30).contains(&days), "{days}");
        }
    }
}

#[test]
fn an_ipv6_peer_is_pinned_with_brackets() {
    let server = start(ServerOpts {
        ipv6: true,
        h2: true,
        ..Default::default()
    });
    let mut cfg = config(&server, ModeChoice::Both, 3);
    cfg.ip_version = tlsping::probe::IpVersion::V6;
    let out = run(&server, &cfg);
    assert_eq!(
        out.pre.addr,
        Some(server.addr),
        "the preflight settled on [::1]"
    );
    assert_eq!(
        out.rounds.tcp,
        3 + 1,
        "pinned dials still cost N + 1 connections"
    );
    assert!(
        out.samples
            .iter()
            .all(|s| s.ok() && s.addr == Some(server.addr)),
        "{:?}",
        out.samples
    );
}

/// Records when each probe ended, to place the rounds on a time line.
#[derive(Default)]
struct Clock {
    ends: Vec<(u32, std::time::Instant, Duration)>,
}

impl Observer for Clock {
    fn sample(&mut self, s: &Sample) -> std::io::Result<()> {
        self.ends.push((
            s.round,
            std::time::Instant::now(),
            s.wall_total.unwrap_or_default(),
        ));
        Ok(())
    }
}

#[test]
fn a_slow_round_does_not_make_the_next_ones_burst() {
    use support::faults::{start_faulty, Fault, FaultOpts};
    // Preflight and round 1 are served; round 2 hangs until the 1 s timeout;
    // then service is normal again. Rounds are 200 ms apart, so the slow
    // round overruns four ticks.
    let server = start_faulty(FaultOpts {
        ok_first: 2,
        fault: Fault::Hang,
        faulty: Some(1),
        ..Default::default()
    });
    let mut cfg = support::engine_config(&server.url(), ModeChoice::Cold, 6);
    cfg.settings.interval = Duration::from_millis(200);
    cfg.settings.timeout = Duration::from_secs(1);
    let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(&cfg, &env).unwrap();
    let mut clock = Clock::default();
    let r = support::run_rounds(&cfg, &pre.method, pre.addr, &env, &mut clock);
    assert_eq!(r.samples.len(), 6, "{:?}", r.stop);
    assert!(!r.samples[1].ok(), "round 2 hung: {:?}", r.samples[1]);
    // A cold probe's clock starts when its round starts (one probe per round).
    let starts: Vec<std::time::Instant> = clock
        .ends
        .iter()
        .map(|(_, end, took)| *end - *took)
        .collect();
    for (i, pair) in starts.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(195),
            "rounds {} and {} started {gap:?} apart, under the 200 ms floor",
            i + 1,
            i + 2
        );
    }
    // Missed ticks are skipped, not made up for: the rounds after the slow
    // one keep the 200 ms rhythm, so the run takes about 1 s + 4 × 200 ms
    // longer than its first round, not 1 s.
    let span = starts[5] - starts[1];
    assert!(span >= Duration::from_millis(1_750), "{span:?}");
}

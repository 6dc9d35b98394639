//! Where the time goes, observed on real TLS servers on loopback: the
//! client's set-up inside `tls`, the kernel's TCP_INFO, `Server-Timing`.

mod support;

use std::time::Duration;

use support::{ca, start, ServerOpts, TestServer};
use tlsping::probe::{self, ModeChoice, Sample, ServerTiming};

fn rounds(server: &TestServer, mode: ModeChoice, count: u32) -> Vec<Sample> {
    support::engine_samples(&support::engine_config(&server.url(), mode, count))
}

/// A test server that answers with one `Server-Timing` header.
fn timing_server(value: &str) -> TestServer {
    start(ServerOpts {
        headers: vec![("server-timing".into(), value.into())],
        ..Default::default()
    })
}

/// The binary, trusting the test CA, against `server`: `args` come first.
fn tlsping_at(server: &TestServer, args: &[&str]) -> std::process::Output {
    let ca = ca().pem_path.display().to_string();
    let url = server.url();
    let mut all = vec!["--cacert", ca.as_str()];
    all.extend_from_slice(args);
    all.push(&url);
    support::tlsping(&all)
}

fn setup_inside_every_cold_handshake(opts: ServerOpts) {
    let server = start(opts);
    let samples = rounds(&server, ModeChoice::Both, 4);
    let cold: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.mode == probe::Mode::Cold)
        .collect();
    assert_eq!(cold.len(), 4);
    for s in cold {
        assert!(s.ok(), "{:?}", s.error);
        let tls = s.tls().expect("a cold https probe has a tls stage");
        let setup = s.tls_setup.expect("tls_setup on every cold handshake");
        let finish = s.tls_finish.expect("tls_finish on every cold handshake");
        assert!(setup > Duration::ZERO, "set-up must be positive: {s:?}");
        assert!(finish > Duration::ZERO, "finish must be positive: {s:?}");
        assert!(
            setup + finish < tls,
            "set-up {setup:?} and finish {finish:?} must both be inside tls {tls:?}, \
             with the server's answer between them"
        );
    }
    // Warm probes on the kept connection made no handshake, so no set-up.
    for s in samples
        .iter()
        .filter(|s| s.mode == probe::Mode::Warm && s.reused())
    {
        assert_eq!(s.tls_setup(), None, "{s:?}");
        assert_eq!(s.tls_finish(), None, "{s:?}");
    }
}

#[test]
fn tls_setup_is_inside_every_cold_handshake_tls13_h1() {
    setup_inside_every_cold_handshake(ServerOpts::default());
}

#[test]
fn tls_setup_is_inside_every_cold_handshake_tls13_h2() {
    setup_inside_every_cold_handshake(ServerOpts {
        h2: true,
        ..Default::default()
    });
}

#[test]
fn tls_setup_is_inside_every_cold_handshake_tls12_without_tickets() {
    setup_inside_every_cold_handshake(ServerOpts {
        tls12: true,
        tickets: false,
        ..Default::default()
    });
}

fn kernel_view_on_every_probe(h2: bool) {
    let server = start(ServerOpts {
        h2,
        ..Default::default()
    });
    let samples = rounds(&server, ModeChoice::Both, 3);
    assert_eq!(samples.len(), 6);
    for s in &samples {
        assert!(s.ok(), "{:?}", s.error);
        let k = s.tcp_info.expect("TCP_INFO on every probe that connected");
        assert!(k.rtt_us > 0, "{k:?}");
        // Loopback: the kernel's round trip is far below a second.
        assert!(k.rtt_us < 1_000_000, "{k:?}");
        if let Some(min) = k.min_rtt_us {
            assert!(min <= k.rtt_us + k.rtt_us / 2 + 1000, "{k:?}");
        }
        // No assertion on `retrans`: even on loopback a busy server that is
        // slow to acknowledge draws a tail-loss probe, which the kernel counts.
    }
}

#[test]
fn kernel_rtt_is_read_on_every_probe_h1() {
    kernel_view_on_every_probe(false);
}

#[test]
fn kernel_rtt_is_read_on_every_probe_h2() {
    kernel_view_on_every_probe(true);
}

#[test]
fn server_timing_of_several_headers_reaches_each_sample() {
    let server = start(ServerOpts {
        headers: vec![
            (
                "server-timing".into(),
                r#"db;dur=12.5;desc="Query \"users\"", cache;desc=miss"#.into(),
            ),
            ("Server-Timing".into(), "app;dur=3, junk;;dur=x".into()),
        ],
        ..Default::default()
    });
    let samples = rounds(&server, ModeChoice::Both, 2);
    let expected = vec![
        ServerTiming {
            name: "db".into(),
            dur_ms: Some(12.5),
            desc: Some(r#"Query "users""#.into()),
        },
        ServerTiming {
            name: "cache".into(),
            dur_ms: None,
            desc: Some("miss".into()),
        },
        ServerTiming {
            name: "app".into(),
            dur_ms: Some(3.0),
            desc: None,
        },
        ServerTiming {
            name: "junk".into(),
            dur_ms: None,
            desc: None,
        },
    ];
    for s in &samples {
        assert_eq!(&*s.server_timing, expected.as_slice(), "{:?}", s.mode);
    }
}

#[test]
fn json_carries_the_attribution_fields_and_medians() {
    // A tab: the one control character a header value may carry.
    let server = timing_server("db;dur=7;desc=\"a\tb\"");
    let out = tlsping_at(&server, &["--json", "-n", "3", "-i", "20ms", "-w", "5s"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let samples = doc["samples"].as_array().unwrap();
    for s in samples {
        let mode = s["mode"].as_str().unwrap();
        assert!(s["tcp_rtt_ms"].as_f64().unwrap() > 0.0, "{s}");
        assert!(s["retrans"].is_u64(), "{s}");
        // Server text stays intact in JSON, control character included.
        assert_eq!(s["server_timing"][0]["desc"], "a\tb", "{s}");
        assert_eq!(s["server_timing"][0]["dur_ms"], 7.0, "{s}");
        if mode == "cold" {
            let setup = s["tls_setup_ms"].as_f64().unwrap();
            let finish = s["tls_finish_ms"].as_f64().unwrap();
            assert!(setup > 0.0 && finish > 0.0, "{s}");
            assert!(setup + finish < s["tls_ms"].as_f64().unwrap(), "{s}");
        } else {
            assert!(s["tls_setup_ms"].is_null(), "{s}");
            assert!(s["tls_finish_ms"].is_null(), "{s}");
        }
    }
    let sum = &doc["summary"];
    assert!(sum["tls_setup_ms"].as_f64().unwrap() > 0.0, "{sum}");
    assert!(sum["tls_finish_ms"].as_f64().unwrap() > 0.0, "{sum}");
    assert!(sum["tls_network_server_ms"].as_f64().is_some(), "{sum}");
    assert!(sum["tcp_rtt_ms"].as_f64().unwrap() > 0.0, "{sum}");
    // Per mode: the server's time after the request, from the records.
    assert!(sum["server_time_ms"]["cold"].is_number(), "{sum}");
    assert!(sum["server_time_ms"]["warm"].is_number(), "{sum}");
    assert_eq!(
        sum["server_time_n"],
        serde_json::json!({"cold": 2, "warm": 2}),
        "{sum}"
    );
    for s in samples.iter().filter(|s| s["warmup"] == false) {
        assert!(s["server_time_ms"].is_number(), "{s}");
    }
    assert_eq!(sum["server_timing"][0]["name"], "db", "{sum}");
    assert_eq!(sum["server_timing"][0]["median_ms"], 7.0, "{sum}");
    // Round 1 is warmup: two timed rounds, each with a cold and a warm probe.
    assert_eq!(sum["server_timing"][0]["n"], 4, "{sum}");
}

/// Medians over the timed cold probes of a run against `server`: the part
/// of `tls` that is neither our set-up nor our finish, the server's time
/// after the request (from the records), and the kernel's RTT.
fn cold_medians(server: &TestServer) -> (Duration, Duration, Duration) {
    let samples = rounds(server, ModeChoice::Cold, 6);
    let (mut wire, mut server_time, mut rtt) = (Vec::new(), Vec::new(), Vec::new());
    for s in samples.iter().filter(|s| !s.warmup) {
        assert!(s.ok(), "{:?}", s.error);
        wire.push(s.tls_network_server().unwrap());
        server_time.push(Duration::from_micros(u64::from(
            s.stages()
                .server
                .expect("the server's time after the request"),
        )));
        rtt.push(Duration::from_micros(u64::from(s.tcp_info.unwrap().rtt_us)));
    }
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    (median(wire), median(server_time), median(rtt))
}

/// A server that is slow to write (every byte D late, in user space) is the
/// server's time, not the path's: the kernel's RTT stays a loopback RTT,
/// the server's time after the request grows by D, and so does what `tls` holds beyond our own
/// set-up and finish (the path and the server). Against the same server with
/// no delay, so the handshake's own CPU on this machine cancels out.
#[test]
fn a_slow_writing_server_is_attributed_to_the_server() {
    let d = Duration::from_millis(30);
    let (wire0, server0, _) = cold_medians(&start(ServerOpts::default()));
    let slow = start(ServerOpts {
        delay: Some(d),
        ..Default::default()
    });
    let (wire, server_time, rtt) = cold_medians(&slow);
    let ms = Duration::from_millis;
    // The delay line overshoots by its sleep precision (tens to hundreds of
    // µs) and a loaded 2-core machine stretches time, never shrinks it.
    let close_to_d = |grew: Duration| grew + ms(1) >= d && grew <= d + ms(4);
    assert!(
        close_to_d(wire.saturating_sub(wire0)),
        "tls - setup - finish grew by {:?} (from {wire0:?} to {wire:?}), expected about {d:?}",
        wire.saturating_sub(wire0)
    );
    assert!(
        close_to_d(server_time.saturating_sub(server0)),
        "the server's time grew by {:?} (from {server0:?} to {server_time:?}), expected about {d:?}",
        server_time.saturating_sub(server0)
    );
    assert!(
        rtt < d / 3,
        "the kernel sees the loopback path, not the server's slowness: {rtt:?}"
    );
}

#[test]
fn verbose_rows_and_statistics_show_the_split() {
    let server = timing_server("db;dur=7");
    let out = tlsping_at(&server, &["-v", "-n", "3", "-i", "20ms"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.contains("  setup "),
        "wide -v has a setup column:\n{text}"
    );
    assert!(
        text.contains(", of which client set-up "),
        "statistics split tls:\n{text}"
    );
    assert!(text.contains("kernel rtt         = "), "{text}");
    assert!(text.contains("server time       ~= "), "{text}");
    assert!(text.contains("server-timing      = db 7.00ms"), "{text}");
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}):\n{}\n{}",
            support::stdout(out),
            support::stderr(out)
        )
    })
}

/// The calibration rows are ordinary probes: one connection per cold probe,
/// the kept one for warm, the set-up and kernel readings like any target.
fn check_calibration_document(doc: &serde_json::Value) {
    assert_eq!(doc["run"]["calibration"], true, "{doc}");
    assert_eq!(
        doc["run"]["addr"].as_str().unwrap().split(':').next(),
        Some("127.0.0.1")
    );
    let samples = doc["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 6, "{doc}");
    for s in samples {
        assert!(s["error"].is_null(), "{s}");
        assert_eq!(s["status"], 200, "{s}");
        assert!(s["tcp_rtt_ms"].as_f64().unwrap() > 0.0, "{s}");
        if s["mode"] == "cold" {
            assert_eq!(s["curl"]["num_connects"], 1, "{s}");
            assert!(s["tls_setup_ms"].as_f64().unwrap() > 0.0, "{s}");
        } else if s["round"].as_u64().unwrap() > 1 {
            assert_eq!(
                s["curl"]["num_connects"], 0,
                "warm reuses its connection: {s}"
            );
            assert_eq!(s["reused"], true, "{s}");
        }
    }
}

#[test]
fn calibrate_runs_the_real_probes_against_its_own_server() {
    let out = support::tlsping(&["--calibrate", "--json", "-n", "3", "-i", "200ms"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    check_calibration_document(&json_of(&out));
    // The table says what it measured.
    let out = support::tlsping(&["--calibrate", "-n", "2", "-i", "200ms"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.contains("calibration: tlsping's own server on 127.0.0.1"),
        "{text}"
    );
    assert!(
        text.contains("statistics (calibration: the client floor)"),
        "{text}"
    );
}

#[test]
fn calibrate_needs_no_network() {
    // A network namespace made for this test with only its loopback up: no
    // route leaves the machine, and none is needed.
    if !support::have("unshare") || !support::have("ip") {
        return;
    }
    let usable = std::process::Command::new("unshare")
        .args(["-n", "sh", "-c", "ip link set lo up"])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        support::skip("needs `unshare -n` and `ip` as root");
        return;
    }
    let script = format!(
        "ip link set lo up && {} --calibrate --json -n 3 -i 200ms",
        support::bin()
    );
    let out = std::process::Command::new("unshare")
        .args(["-n", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", support::stderr(&out));
    check_calibration_document(&json_of(&out));
}

#[test]
fn calibrate_refuses_what_would_measure_something_else() {
    for (args, says) in [
        (&["--calibrate", "example.com"][..], "drop the target"),
        (
            &["--calibrate", "--cacert", "/etc/hosts"][..],
            "drop --cacert",
        ),
        (&["--calibrate", "-6"][..], "drop -6"),
    ] {
        let out = support::tlsping(args);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{args:?}: {}",
            support::stderr(&out)
        );
        assert!(
            support::stderr(&out).contains(says),
            "{args:?}: {}",
            support::stderr(&out)
        );
    }
}

#[test]
fn a_hostile_server_timing_cannot_crash_the_statistics() {
    let server = timing_server("huge;dur=99999999999999999999999, big;dur=1000000000");
    let out = tlsping_at(&server, &["-n", "2", "-i", "200ms"]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    // The absurd duration is dropped; a million seconds is the largest kept.
    assert!(text.contains("server-timing      = big "), "{text}");
    assert!(!text.contains("huge"), "{text}");
}

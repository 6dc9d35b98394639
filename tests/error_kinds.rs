//! Real faults against servers on 127.0.0.1, through the real binary: every
//! `error_kind` that loopback can produce. Fault servers answer the
//! preflight normally and misbehave afterwards, so the faults land in the
//! rounds; a few kinds are checked as preflight failures, whose one line on
//! stderr names the reason.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::faults::{bad_leaf, closed_port, start_faulty, BadLeaf, Fault, FaultOpts};
use support::{
    error_kinds, ipv4_json, ipv4_run, samples, show, start, stderr, stdout, stop_warnings,
    warnings, CertKind, ServerOpts,
};

/// Cold probes only, no warmup, short deadline: `n` probes, each a new connection.
fn cold_rounds(url: &str, n: &str, extra: &[&str]) -> (Value, Output) {
    let mut args = vec![
        "-m", "cold", "-n", n, "--warmup", "0", "-w", "1s", "-i", "200ms",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    ipv4_json(&args)
}

/// Asserts a run whose every probe failed with `kind` (and libcurl's text present).
fn assert_all_failed(doc: &Value, out: &Output, kind: &str, n: usize) {
    assert_eq!(out.status.code(), Some(2), "{}", show(out));
    let all = samples(doc);
    assert_eq!(all.len(), n, "{doc:#}");
    for s in all {
        assert_eq!(s["error_kind"], kind, "{s:#}");
        assert!(
            s["error"].as_str().is_some_and(|t| !t.is_empty()),
            "libcurl's text is kept: {s:#}"
        );
    }
    assert_eq!(doc["summary"]["cold"]["loss"], 1.0, "{doc:#}");
    assert_eq!(doc["summary"]["cold"]["ok"], 0, "{doc:#}");
}

/// Two cold rounds against a server whose connections after the preflight
/// get `fault`: both probes must fail as `kind`. Returns the document.
fn two_cold_rounds_fail_as(fault: Fault, kind: &str) -> Value {
    let server = start_faulty(FaultOpts {
        fault,
        ..Default::default()
    });
    let (doc, out) = cold_rounds(&server.url(), "2", &[]);
    assert_all_failed(&doc, &out, kind, 2);
    doc
}

/// The one stderr line of a failed preflight.
fn assert_preflight_failed(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", show(out));
    let err = stderr(out);
    assert!(
        err.starts_with("tlsping: preflight to ") && err.contains(" failed: "),
        "{err}"
    );
    assert!(err.contains(&format!("failed: {reason} (")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        stdout(out).is_empty(),
        "nothing is measured: {}",
        stdout(out)
    );
}

// ---------------------------------------------------------------- timeout

#[test]
fn timeouts_in_the_rounds_stop_the_run_after_three_in_a_row() {
    let server = start_faulty(FaultOpts {
        fault: Fault::Hang,
        ..Default::default()
    });
    let started = Instant::now();
    let (doc, out) = cold_rounds(&server.url(), "6", &[]);
    let took = started.elapsed();
    // Stopped by the valve after 3 of the 6 rounds.
    assert_all_failed(&doc, &out, "timeout", 3);
    let valve = "3 probes failed in a row: stopping";
    assert!(warnings(&doc).iter().any(|w| w == valve), "{doc:#}");
    assert!(
        stderr(&out).contains(&format!("tlsping: warning: {valve}\n")),
        "{}",
        show(&out)
    );
    // Each probe waited for its 1 s deadline, and not much longer.
    for s in samples(&doc) {
        let total = s["total_ms"].as_f64().unwrap_or(0.0);
        assert!((900.0..4000.0).contains(&total), "{s:#}");
    }
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(server.counters.faulted.load(Ordering::SeqCst), 3);
}

#[test]
fn a_timeout_shows_its_limit_in_the_table() {
    let server = start_faulty(FaultOpts {
        fault: Fault::Hang,
        ..Default::default()
    });
    let out = ipv4_run(&[
        "-m",
        "cold",
        "-n",
        "1",
        "--warmup",
        "0",
        "-w",
        "1s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("1 ") && l.contains(" | "))
        .unwrap_or_else(|| panic!("no round row:\n{text}"));
    assert!(row.contains("timeout (1s)"), "{row}");
    assert!(text.contains("statistics ---"), "{text}");
}

#[test]
fn a_preflight_timeout_names_its_limit() {
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Hang,
        ..Default::default()
    });
    let out = ipv4_run(&["-n", "2", "-w", "1s", &server.url()]);
    assert_preflight_failed(&out, "timeout (1s)");
}

// ------------------------------------------------- refused, DNS (preflight)

#[test]
fn a_closed_port_is_conn_refused() {
    let port = closed_port();
    let out = ipv4_run(&["-n", "2", "-w", "1s", &format!("https://127.0.0.1:{port}/")]);
    assert_preflight_failed(&out, "conn refused");
}

#[test]
fn an_unknown_host_is_dns_fail() {
    let out = ipv4_run(&["-n", "2", "-w", "2s", "https://nothing.invalid/"]);
    assert_preflight_failed(&out, "dns fail");
}

// ------------------------------------------- reset, closed, body (rounds)

#[test]
fn a_reset_during_the_handshake_is_conn_reset() {
    two_cold_rounds_fail_as(Fault::ResetInHandshake, "conn_reset");
}

#[test]
fn a_reset_during_the_response_is_conn_reset() {
    let doc = two_cold_rounds_fail_as(Fault::ResetInResponse, "conn_reset");
    for s in samples(&doc) {
        // The status line got through before the reset: known, and still a failure.
        assert_eq!(s["status"], 200, "{s:#}");
        assert_eq!(s["tls_version"], "TLS1.3", "{s:#}");
    }
}

#[test]
fn a_close_right_after_accept_is_conn_closed() {
    two_cold_rounds_fail_as(Fault::CloseOnAccept, "conn_closed");
}

#[test]
fn a_close_instead_of_a_response_is_conn_closed() {
    two_cold_rounds_fail_as(Fault::CloseAfterRequest, "conn_closed");
}

#[test]
fn a_body_shorter_than_announced_is_body_error() {
    let server = start_faulty(FaultOpts {
        fault: Fault::ShortBody,
        ..Default::default()
    });
    let (doc, out) = cold_rounds(&server.url(), "2", &["-X", "GET"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(error_kinds(&doc), ["body_error", "body_error"], "{doc:#}");
    for s in samples(&doc) {
        // The headers arrived: the status is known, the probe still failed.
        assert_eq!(s["status"], 200, "{s:#}");
        assert_eq!(s["bytes"], 10, "{s:#}");
    }
    assert_eq!(doc["summary"]["cold"]["loss"], 1.0, "{doc:#}");
}

#[test]
fn a_reply_that_is_not_http_is_a_plain_error() {
    // No kind fits better than the catch-all: libcurl refuses HTTP/0.9.
    let doc = two_cold_rounds_fail_as(Fault::NotHttp, "error");
    for s in samples(&doc) {
        assert_eq!(s["status"], 0, "{s:#}");
        assert!(
            s["error"].as_str().is_some_and(|t| t.contains("HTTP/0.9")),
            "{s:#}"
        );
    }
}

#[test]
fn only_the_failing_mode_loses_and_the_exit_code_is_1() {
    let opts = FaultOpts {
        // Connection 0 is the preflight, 1 the warm probe's (warm runs first);
        // every cold connection after that is reset.
        ok_first: 2,
        fault: Fault::ResetInHandshake,
        ..Default::default()
    };
    let args = |url: &str| -> Vec<String> {
        [
            "-n",
            "3",
            "--warmup",
            "0",
            "-w",
            "1s",
            "-i",
            "200ms",
            "--order",
            "warm-first",
            url,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };

    let server = start_faulty(opts.clone());
    let json_args = args(&server.url());
    let json_args: Vec<&str> = json_args.iter().map(String::as_str).collect();
    let (doc, out) = ipv4_json(&json_args);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let modes: Vec<(&str, &str)> = samples(&doc)
        .iter()
        .map(|s| {
            (
                s["mode"].as_str().unwrap_or("?"),
                s["error_kind"].as_str().unwrap_or("ok"),
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("warm", "ok"),
            ("cold", "conn_reset"),
            ("warm", "ok"),
            ("cold", "conn_reset"),
            ("warm", "ok"),
            ("cold", "conn_reset"),
        ],
        "{doc:#}"
    );
    assert_eq!(doc["summary"]["cold"]["loss"], 1.0, "{doc:#}");
    assert_eq!(doc["summary"]["warm"]["loss"], 0.0, "{doc:#}");
    assert_eq!(doc["summary"]["warm"]["ok"], 3, "{doc:#}");
    // Failures alternate with successes: never three in a row, no valve.
    assert!(stop_warnings(&doc).is_empty(), "{doc:#}");

    let server = start_faulty(opts);
    let table_args = args(&server.url());
    let table_args: Vec<&str> = table_args.iter().map(String::as_str).collect();
    let out = ipv4_run(&table_args);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = stdout(&out);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && l.contains(" | "))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    for row in rows {
        assert!(row.contains("conn reset"), "{row}");
        assert!(row.contains("-/200"), "{row}");
    }
}

// ------------------------------------------------------------- TLS faults

#[test]
fn certificate_faults_name_their_reason() {
    for (kind, reason) in [
        (CertKind::Expired, "TLS: cert expired"),
        (CertKind::WrongName, "TLS: cert name"),
        (CertKind::UnknownCa, "TLS: unknown CA"),
    ] {
        let server = start(ServerOpts {
            cert: kind,
            ..Default::default()
        });
        let out = ipv4_run(&["-n", "2", "-w", "2s", &server.url()]);
        assert_preflight_failed(&out, reason);
    }
}

#[test]
fn a_certificate_not_yet_valid_or_badly_signed_is_cert_invalid() {
    for kind in [BadLeaf::NotYetValid, BadLeaf::BadSignature] {
        let server = start_faulty(FaultOpts {
            ok_first: 0,
            leaf: Some(bad_leaf(kind)),
            ..Default::default()
        });
        let out = ipv4_run(&["-n", "2", "-w", "2s", &server.url()]);
        assert_preflight_failed(&out, "TLS: cert invalid");
    }
}

#[test]
fn plaintext_in_answer_to_the_client_hello_is_tls_error() {
    // As the preflight...
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Plaintext,
        ..Default::default()
    });
    let out = ipv4_run(&["-n", "2", "-w", "2s", &server.url()]);
    assert_preflight_failed(&out, "TLS error");
    // ...and in the rounds.
    two_cold_rounds_fail_as(Fault::Plaintext, "tls_error");
}

#[test]
fn a_server_demanding_a_client_certificate_is_tls_error() {
    for tls12 in [true, false] {
        let server = start_faulty(FaultOpts {
            ok_first: 0,
            client_cert: true,
            tls12,
            ..Default::default()
        });
        let out = ipv4_run(&["-n", "2", "-w", "2s", &server.url()]);
        assert_preflight_failed(&out, "TLS error");
    }
}

// ------------------------------------------------------ no route (preflight)

#[test]
fn a_namespace_with_no_route_is_unreachable() {
    // `unshare -n` runs the probe in a network namespace of its own, made for
    // this test, whose loopback is down: no route anywhere, no packet leaves.
    if !support::have("unshare") {
        return;
    }
    let usable = Command::new("unshare").args(["-n", "true"]).status();
    if !usable.is_ok_and(|s| s.success()) {
        support::skip("`unshare -n` needs root here");
        return;
    }
    let out = Command::new("unshare")
        .args([
            "-n",
            support::bin(),
            "-n",
            "2",
            "-w",
            "2s",
            "https://127.0.0.1:9/",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("failed: unreachable ("),
        "{}",
        show(&out)
    );
}

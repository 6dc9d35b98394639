//! Real faults against servers on 127.0.0.1: every `error_kind` that loopback
//! can produce, the safety valves, Ctrl+C and a closed stdout, all through the
//! real binary. Fault servers answer the preflight normally and misbehave
//! afterwards, so the faults land in the rounds; a few kinds are checked as
//! preflight failures, whose one line on stderr names the reason.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::faults::{bad_leaf, closed_port, start_faulty, BadLeaf, Fault, FaultOpts};
use support::{start, stderr, stdout, tlsping, CertKind, ServerOpts};

use support::cacert;

/// `tlsping -4 --cacert <ca> <args...>`.
fn run(args: &[&str]) -> Output {
    let ca = cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    all.extend_from_slice(args);
    tlsping(&all)
}

fn json_run(args: &[&str]) -> (Value, Output) {
    let ca = cacert();
    let mut all = vec!["--json", "-4", "--cacert", &ca];
    all.extend_from_slice(args);
    support::json_output(&all)
}

fn samples(doc: &Value) -> &Vec<Value> {
    doc["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("no samples[] in {doc:#}"))
}

fn kinds(doc: &Value) -> Vec<String> {
    samples(doc)
        .iter()
        .map(|s| s["error_kind"].as_str().unwrap_or("<none>").to_string())
        .collect()
}

fn warnings(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings[] in {doc:#}"))
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

/// The warnings of the safety valves (others, such as the residual one, depend on timing).
fn stop_warnings(doc: &Value) -> Vec<String> {
    warnings(doc)
        .into_iter()
        .filter(|w| w.contains("stopping"))
        .collect()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

/// Cold probes only, no warmup, short deadline: `n` probes, each a new connection.
fn cold_rounds(url: &str, n: &str, extra: &[&str]) -> (Value, Output) {
    let mut args = vec![
        "-m", "cold", "-n", n, "--warmup", "0", "-w", "1s", "-i", "200ms",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    json_run(&args)
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
        stderr(&out).contains(&format!("tlsping: {valve}\n")),
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
    let out = run(&[
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
    let out = run(&["-n", "2", "-w", "1s", &server.url()]);
    assert_preflight_failed(&out, "timeout (1s)");
}

// ------------------------------------------------- refused, DNS (preflight)

#[test]
fn a_closed_port_is_conn_refused() {
    let port = closed_port();
    let out = run(&["-n", "2", "-w", "1s", &format!("https://127.0.0.1:{port}/")]);
    assert_preflight_failed(&out, "conn refused");
}

#[test]
fn an_unknown_host_is_dns_fail() {
    let out = run(&["-n", "2", "-w", "2s", "https://nothing.invalid/"]);
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
    assert_eq!(kinds(&doc), ["body_error", "body_error"], "{doc:#}");
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
    let (doc, out) = json_run(&json_args);
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
    let out = run(&table_args);
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
        let out = run(&["-n", "2", "-w", "2s", &server.url()]);
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
        let out = run(&["-n", "2", "-w", "2s", &server.url()]);
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
    let out = run(&["-n", "2", "-w", "2s", &server.url()]);
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
        let out = run(&["-n", "2", "-w", "2s", &server.url()]);
        assert_preflight_failed(&out, "TLS error");
    }
}

// ------------------------------------------------ statuses are responses

#[test]
fn status_404_and_500_are_responses_not_failures() {
    for code in [404u16, 500] {
        let server = start(ServerOpts {
            status: code,
            ..Default::default()
        });
        let (doc, out) = json_run(&["-n", "2", "-i", "200ms", "-w", "2s", &server.url()]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        assert_eq!(samples(&doc).len(), 4, "{doc:#}");
        for s in samples(&doc) {
            assert_eq!(s["status"], code, "{s:#}");
            assert!(s["error_kind"].is_null(), "{s:#}");
        }
        assert_eq!(doc["summary"]["cold"]["loss"], 0.0, "{doc:#}");
        assert_eq!(doc["summary"]["warm"]["loss"], 0.0, "{doc:#}");
    }
}

// ---------------------------------------------------------- safety valves

/// Preflight, round 1 cold and warm answer 200; the 4th request (round 2,
/// warm first under the alternate order) gets `code`.
fn valve_run(code: u16, headers: Vec<(String, String)>) -> (Value, Output) {
    let server = start(ServerOpts {
        status_from: Some((3, code)),
        headers,
        ..Default::default()
    });
    json_run(&["-n", "5", "-i", "200ms", "-w", "2s", &server.url()])
}

#[test]
fn a_429_stops_the_run_at_once() {
    let (doc, out) = valve_run(429, Vec::new());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let statuses: Vec<u64> = samples(&doc)
        .iter()
        .map(|s| s["status"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(statuses, [200, 200, 429], "{doc:#}");
    let w = stop_warnings(&doc);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("429"), "{w:?}");
    assert!(
        stderr(&out).contains(&format!("tlsping: {}\n", w[0])),
        "{}",
        show(&out)
    );
    assert!(doc["summary"].is_object(), "{doc:#}");
}

#[test]
fn a_503_with_retry_after_stops_the_run() {
    let (doc, out) = valve_run(503, vec![("retry-after".into(), "7".into())]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let statuses: Vec<u64> = samples(&doc)
        .iter()
        .map(|s| s["status"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(statuses, [200, 200, 503], "{doc:#}");
    let w = stop_warnings(&doc);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("503") && w[0].contains("7s"), "{w:?}");
    assert!(stderr(&out).contains(&w[0]), "{}", show(&out));
}

#[test]
fn a_503_with_retry_after_zero_or_a_date_stops_the_run_too() {
    // libcurl reports both as 0 seconds; the header's presence is what counts.
    for value in ["0", "Wed, 21 Oct 2015 07:28:00 GMT"] {
        let (doc, out) = valve_run(503, vec![("retry-after".into(), value.into())]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        assert_eq!(samples(&doc).len(), 3, "{value}: {doc:#}");
        assert_eq!(stop_warnings(&doc).len(), 1, "{value}: {doc:#}");
    }
}

#[test]
fn a_preflight_answered_with_429_runs_no_rounds() {
    let server = start(ServerOpts {
        status: 429,
        ..Default::default()
    });
    let out = run(&["-n", "3", "-i", "200ms", &server.url()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("tlsping: preflight: server answered 429"),
        "{}",
        show(&out)
    );
    assert_eq!(
        server.counters.snapshot().requests,
        1,
        "only the preflight was sent"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_503_without_retry_after_does_not_stop_the_run() {
    let server = start(ServerOpts {
        status: 503,
        ..Default::default()
    });
    let (doc, out) = json_run(&["-n", "3", "-i", "200ms", "-w", "2s", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(samples(&doc).len(), 6, "{doc:#}");
    assert!(samples(&doc).iter().all(|s| s["status"] == 503), "{doc:#}");
    assert!(stop_warnings(&doc).is_empty(), "{doc:#}");
}

#[test]
fn a_redirect_first_is_reported_with_its_location_and_not_followed() {
    let location = "https://localhost:1/moved/here";
    let server = start(ServerOpts {
        status: 301,
        headers: vec![("location".into(), location.into())],
        ..Default::default()
    });
    let (doc, out) = json_run(&["-n", "2", "-i", "200ms", "-w", "2s", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(stderr(&out).contains(location), "{}", show(&out));
    assert!(
        warnings(&doc).iter().any(|w| w.contains(location)),
        "{doc:#}"
    );
    assert!(samples(&doc).iter().all(|s| s["status"] == 301), "{doc:#}");
    // Preflight + 2 rounds of 2, all to the server itself.
    assert_eq!(server.counters.snapshot().requests, 5);
}

// ------------------------------------------------------- body and keep-alive

/// A GET run of `rounds` against a server whose body is `body_len` bytes:
/// the document, and the body-cap warnings it carries.
fn over_the_cap(body_len: usize, h2: bool, rounds: &str) -> (Value, Output, Vec<String>) {
    let server = start(ServerOpts {
        body_len,
        h2,
        ..Default::default()
    });
    let (doc, out) = json_run(&[
        "-X",
        "GET",
        "-n",
        rounds,
        "-i",
        "200ms",
        "-w",
        "2s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    for s in samples(&doc) {
        assert_eq!(s["body_overflow"], true, "{s:#}");
    }
    let cap = warnings(&doc)
        .into_iter()
        .filter(|w| w.contains("64 KiB cap"))
        .collect();
    (doc, out, cap)
}

#[test]
fn a_body_over_64_kib_is_cut_not_failed() {
    let (doc, out, cap) = over_the_cap(100_000, false, "2");
    assert_eq!(samples(&doc).len(), 4, "{doc:#}");
    for s in samples(&doc) {
        assert_eq!(s["status"], 200, "{s:#}");
        assert!(s["error_kind"].is_null() && s["error"].is_null(), "{s:#}");
        // What was read: the chunk that would cross the cap was refused.
        let bytes = s["bytes"].as_u64().unwrap();
        assert!(bytes > 0 && bytes < 65536, "{s:#}");
    }
    // Warned once, on stderr and in warnings[]; on HTTP/1.1 the cut body
    // costs warm its connection.
    assert_eq!(cap.len(), 1, "{doc:#}");
    assert!(
        cap[0].contains("warm will open a new one every round"),
        "{cap:?}"
    );
    assert_eq!(
        stderr(&out).matches("64 KiB cap").count(),
        1,
        "{}",
        show(&out)
    );
}

#[test]
fn a_body_over_the_cap_on_http2_resets_only_its_stream() {
    let (doc, _, cap) = over_the_cap(200_000, true, "3");
    for s in samples(&doc) {
        assert_eq!(s["proto"], "h2", "{s:#}");
        if s["mode"] == "warm" && s["round"].as_u64() > Some(1) {
            assert_eq!(s["reused"], true, "warm keeps its h2 connection: {s:#}");
        }
    }
    assert_eq!(cap.len(), 1, "{doc:#}");
    assert!(
        !cap[0].contains("new one every round") && cap[0].contains("HTTP/2"),
        "the warning must say what is true on h2: {cap:?}"
    );
}

#[test]
fn a_server_that_closes_each_connection_makes_warm_redial() {
    let server = start(ServerOpts {
        close_each: true,
        ..Default::default()
    });
    let (doc, out) = json_run(&["-n", "3", "-i", "200ms", "-w", "2s", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let warm: Vec<&Value> = samples(&doc)
        .iter()
        .filter(|s| s["mode"] == "warm")
        .collect();
    assert_eq!(warm.len(), 3, "{doc:#}");
    for s in &warm {
        assert!(s["error_kind"].is_null(), "{s:#}");
        assert_eq!(s["new_conn"], true, "{s:#}");
        assert_eq!(s["reused"], false, "{s:#}");
    }
    // Preflight + 3 cold + 3 warm: every request had its own connection.
    let seen = server.counters.snapshot();
    assert_eq!((seen.tcp, seen.requests), (7, 7));
}

#[test]
fn a_kept_connection_dying_under_the_request_is_a_retry() {
    // Every connection serves one request, then closes when the second comes:
    // libcurl only learns the kept connection is dead after sending on it,
    // and then retries on a new one.
    let server = start_faulty(FaultOpts {
        fault: Fault::DropSecondRequest,
        ..Default::default()
    });
    let (doc, out) = json_run(&[
        "-m",
        "warm",
        "-n",
        "3",
        "-i",
        "200ms",
        "-w",
        "2s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let warm = samples(&doc);
    assert_eq!(
        warm[0]["retries"], 0,
        "round 1 dials a fresh connection: {doc:#}"
    );
    for s in &warm[1..] {
        assert!(s["error_kind"].is_null(), "{s:#}");
        assert_eq!(s["retries"], 1, "{s:#}");
        assert_eq!(s["new_conn"], true, "the retry dialed: {s:#}");
    }
    let table = run(&[
        "-m",
        "warm",
        "-n",
        "2",
        "-i",
        "200ms",
        "-w",
        "2s",
        &server.url(),
    ]);
    let row2 = stdout(&table)
        .lines()
        .find(|l| l.trim_start().starts_with("2 |"))
        .map(str::to_string);
    assert!(
        row2.as_deref().is_some_and(|r| r.contains("retried")),
        "{}",
        show(&table)
    );
}

// -------------------------------------------------------------- interrupt

/// The binary with the same environment as `support::tlsping`, pipes for output.
fn spawn(args: &[&str]) -> Child {
    let ca = cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    all.extend_from_slice(args);
    support::command(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning tlsping")
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Waits at most `limit` for the child; kills it (and fails) past that.
fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let until = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("tlsping did not exit within {limit:?}");
            }
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Polls `done` every 20 ms for at most 10 s (the binary may start slowly on a
/// busy machine); past that the child is killed, so an endless run never outlives the test.
fn wait_for(child: &mut Child, what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sigint(child: &Child) {
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill -INT failed");
}

#[test]
fn ctrl_c_ends_an_endless_json_run_with_a_complete_document() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["--json", "-n", "0", "-i", "200ms", &server.url()]);
    // Preflight + 2 full rounds seen by the server, then some more time.
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", show(&out)));
    assert!(samples(&doc).len() >= 2, "{doc:#}");
    assert!(
        samples(&doc).iter().all(|s| s["error_kind"].is_null()),
        "{doc:#}"
    );
    assert!(doc["summary"]["cold"].is_object(), "{doc:#}");
    assert!(doc["summary"]["warm"].is_object(), "{doc:#}");
    assert_eq!(doc["run"]["count"], 0, "{doc:#}");
}

#[test]
fn ctrl_c_ends_an_endless_table_run_with_the_statistics() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "0", "-i", "200ms", &server.url()]);
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && l.contains(" | "))
        .count();
    assert!(rows >= 2, "{text}");
    assert!(text.contains("--- localhost statistics ---"), "{text}");
    assert!(text.contains("ok / sent"), "{text}");
    assert!(text.contains("handshake overhead"), "{text}");
}

#[test]
fn sigterm_ends_a_run_with_its_statistics_and_exit_143() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "0", "-i", "200ms", &server.url()]);
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill -TERM failed");
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(143), "{}", show(&out));
    let text = stdout(&out);
    assert!(text.contains("--- localhost statistics ---"), "{text}");
    assert!(text.contains("ok / sent"), "{text}");
}

#[test]
fn an_ignored_sighup_stays_ignored() {
    // `nohup` and `trap '' HUP` hand the run an ignored SIGHUP: it must not
    // end the run.
    let server = start(ServerOpts::default());
    let script = format!(
        "trap '' HUP; exec {} -4 --cacert {} -n 0 -i 200ms {}",
        support::bin(),
        cacert(),
        server.url()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    // SAFETY: kill(2) with the pid of a child we spawned (exec kept the pid).
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) },
        0
    );
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        child.try_wait().unwrap().is_none(),
        "an ignored SIGHUP ended the run"
    );
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// Bytes waiting in the pipe leave less room than one more CSV row.
fn pipe_nearly_full(fd: std::os::fd::RawFd) -> bool {
    let mut queued: libc::c_int = 0;
    // SAFETY: `fd` is a pipe we own; FIONREAD writes one int.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut queued) };
    rc == 0 && queued >= 4096 - 400
}

#[test]
fn a_second_ctrl_c_leaves_at_once() {
    use std::os::fd::AsRawFd;
    // A run whose output nobody reads: once the pipe is full, tlsping is stuck
    // writing, so the first Ctrl+C cannot finish the run. The second must end it.
    let server = start(ServerOpts::default());
    let mut child = spawn(&[
        "--csv",
        "-m",
        "warm",
        "-n",
        "0",
        "-i",
        "200ms",
        &server.url(),
    ]);
    let pipe = child.stdout.as_ref().expect("piped stdout").as_raw_fd();
    // SAFETY: `pipe` is the read end we own; F_SETPIPE_SZ only resizes its buffer.
    let size = unsafe { libc::fcntl(pipe, libc::F_SETPIPE_SZ, 4096) };
    assert!(size >= 4096, "could not shrink the pipe");
    // Rows are ~150 bytes: the pipe fills after a few dozen rows, and then the
    // server stops seeing requests. Wait (bounded) until it has been quiet for
    // longer than three intervals.
    let until = Instant::now() + Duration::from_secs(20);
    let mut last = (server.counters.snapshot().requests, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = server.counters.snapshot().requests;
        if now != last.0 {
            last = (now, Instant::now());
        } else if now > 10
            && last.1.elapsed() > Duration::from_millis(700)
            && pipe_nearly_full(pipe)
        {
            break;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tlsping never blocked on its output ({now} requests)");
        }
    }
    sigint(&child);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        matches!(child.try_wait(), Ok(None)),
        "the first Ctrl+C cannot finish a blocked run"
    );
    let sent = Instant::now();
    sigint(&child);
    let until = Instant::now() + Duration::from_secs(5);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            _ if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("a second Ctrl+C did not end the run");
            }
        }
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_millis(500),
        "{:?}",
        sent.elapsed()
    );
}

#[test]
fn ctrl_c_during_a_hung_probe_cancels_it_without_counting_a_failure() {
    // Preflight and round 1 answer; round 2's cold probe hangs until Ctrl+C.
    let server = start_faulty(FaultOpts {
        ok_first: 2,
        fault: Fault::Hang,
        ..Default::default()
    });
    let mut child = spawn(&[
        "--json",
        "-m",
        "cold",
        "-n",
        "3",
        "--warmup",
        "0",
        "-w",
        "5s",
        "-i",
        "200ms",
        &server.url(),
    ]);
    // Round 2's connection is the first faulty one; its request then hangs for up to 5 s.
    wait_for(&mut child, "the hanging request", || {
        server.counters.faulted.load(Ordering::SeqCst) >= 1
            && server.counters.requests.load(Ordering::SeqCst) >= 3
    });
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    // libcurl looks at the cancel flag about once a second while it waits.
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", show(&out)));
    assert_eq!(kinds(&doc), ["<none>", "canceled"], "{doc:#}");
    let canceled = &samples(&doc)[1];
    let total = canceled["total_ms"].as_f64().unwrap_or(f64::MAX);
    assert!(
        total < 4000.0,
        "aborted well before the 5 s deadline: {canceled:#}"
    );
    // A canceled probe is neither sent nor lost; the run's one real probe was ok.
    assert_eq!(doc["summary"]["cold"]["sent"], 1, "{doc:#}");
    assert_eq!(doc["summary"]["cold"]["loss"], 0.0, "{doc:#}");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

// ------------------------------------------------------------ closed stdout

#[test]
fn a_closed_stdout_ends_the_run_with_exit_2_and_one_line() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "5", "-i", "200ms", &server.url()]);
    let pipe = child.stdout.take().expect("stdout is piped");
    let mut first = String::new();
    let mut lines = BufReader::new(pipe);
    // Blocks at most until the run ends by itself (5 rounds).
    let read = lines.read_line(&mut first);
    if read.is_err() || !first.starts_with("HEAD https://localhost:") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("first line: {read:?} {first:?}");
    }
    // Closing our end: every later write of tlsping fails with EPIPE.
    drop(lines);
    let out = wait_bounded(child, Duration::from_secs(10));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tlsping: could not write the output"),
        "{err}"
    );
    // Stopped at the first failed write, before the 5 rounds (preflight + 10 requests).
    let seen = server.counters.snapshot();
    assert!(seen.requests < 11, "{seen:?}");
}

#[test]
fn a_namespace_with_no_route_is_unreachable() {
    // `unshare -n` runs the probe in a network namespace of its own, made for
    // this test, whose loopback is down: no route anywhere, no packet leaves.
    if !support::have("unshare") {
        return;
    }
    let usable = Command::new("unshare").args(["-n", "true"]).status();
    if !usable.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must be able to run `unshare -n` (as root)"
        );
        eprintln!("skipped: `unshare -n` needs root here");
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

#[test]
fn server_text_reaches_the_terminal_escaped_and_json_intact() {
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::HostileRedirect,
        ..Default::default()
    });
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[31mhttps://elsewhere.test/";
    let out = run(&["-n", "1", "-i", "200ms", "-w", "2s", &server.url()]);
    let err = stderr(&out);
    assert!(err.contains("redirect (301)"), "{}", show(&out));
    for raw in ['\u{1b}', '\u{7}'] {
        assert!(
            !err.contains(raw),
            "a control character reached the terminal: {err:?}"
        );
        assert!(!stdout(&out).contains(raw), "{:?}", stdout(&out));
    }
    assert!(err.contains("\\x{1b}]0;owned\\x{07}"), "{err:?}");
    // JSON keeps the server's text as it came.
    let (doc, _) = json_run(&["-n", "1", "-i", "200ms", "-w", "2s", &server.url()]);
    assert!(
        warnings(&doc).iter().any(|w| w.contains(hostile)),
        "{:?}",
        warnings(&doc)
    );
}

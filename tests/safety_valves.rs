//! A server's status answers through the real binary, on 127.0.0.1: a 429
//! and a 503 with `Retry-After` are safety valves that stop the run at once;
//! a 404, a 500, a 503 without `Retry-After` and a redirect are answers,
//! measured and reported like any other.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::process::Output;

use serde_json::Value;
use support::{
    ipv4_json, ipv4_run, samples, show, start, stderr, stdout, stop_warnings, warnings, ServerOpts,
};

// ------------------------------------------------ statuses are responses

#[test]
fn status_404_and_500_are_responses_not_failures() {
    for code in [404u16, 500] {
        let server = start(ServerOpts {
            status: code,
            ..Default::default()
        });
        let (doc, out) = ipv4_json(&["-n", "2", "-i", "200ms", "-w", "2s", &server.url()]);
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
    ipv4_json(&["-n", "5", "-i", "200ms", "-w", "2s", &server.url()])
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
        stderr(&out).contains(&format!("tlsping: warning: {}\n", w[0])),
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
    // Our own reader (`probe::retry_after`) takes "0" as a wait of none and
    // a date in the past as one that is over: either way the server asked
    // clients to back off, and the header's presence is what stops the run.
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
    let out = ipv4_run(&["-n", "3", "-i", "200ms", &server.url()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("tlsping: warning: preflight: server answered 429"),
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
    let (doc, out) = ipv4_json(&["-n", "3", "-i", "200ms", "-w", "2s", &server.url()]);
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
    let (doc, out) = ipv4_json(&["-n", "2", "-i", "200ms", "-w", "2s", &server.url()]);
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

#[test]
fn under_compare_of_one_server_a_503_with_retry_after_stops_every_variant() {
    // Two TLS versions, one server: its request to back off holds for the
    // whole run (only `--compare target=` has servers of their own). Two
    // preflights and two round-1 probes answered; the fifth request gets it.
    let server = start(ServerOpts {
        status_from: Some((4, 503)),
        headers: vec![("retry-after".into(), "7".into())],
        ..Default::default()
    });
    let (doc, out) = ipv4_json(&[
        "--compare",
        "tls",
        "-n",
        "5",
        "-i",
        "200ms",
        "-w",
        "2s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(samples(&doc).len(), 3, "{doc:#}");
    assert_eq!(
        stop_warnings(&doc),
        ["server answered 503 with Retry-After 7s: stopping, it asked clients to back off"]
    );
    assert_eq!(server.counters.snapshot().requests, 5);
}

//! Warm's kept connection going away, through the real binary on
//! 127.0.0.1: a server that closes every connection makes warm dial each
//! round, and a kept connection that dies under the request is retried on a
//! new one and said so.

mod support;

use serde_json::Value;
use support::faults::{start_faulty, Fault, FaultOpts};
use support::{ipv4_json, ipv4_run, samples, show, start, stdout, ServerOpts};

#[test]
fn a_server_that_closes_each_connection_makes_warm_redial() {
    let server = start(ServerOpts {
        close_each: true,
        ..Default::default()
    });
    let (doc, out) = ipv4_json(&["-n", "3", "-i", "200ms", "-w", "2s", &server.url()]);
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
    let (doc, out) = ipv4_json(&[
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
    let table = ipv4_run(&[
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

//! The 64 KiB cap on a response body, through the real binary on
//! 127.0.0.1: a longer body is cut, not failed, and the warning says what
//! the cut costs on HTTP/1.1 and on HTTP/2.

mod support;

use std::process::Output;

use serde_json::Value;
use support::{ipv4_json, samples, show, start, stderr, warnings, ServerOpts};

/// A GET run of `rounds` against a server whose body is `body_len` bytes:
/// the document, and the body-cap warnings it carries.
fn over_the_cap(body_len: usize, h2: bool, rounds: &str) -> (Value, Output, Vec<String>) {
    let server = start(ServerOpts {
        body_len,
        h2,
        ..Default::default()
    });
    let (doc, out) = ipv4_json(&[
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

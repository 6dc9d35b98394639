//! A preflight that fails on the second address of a host is classified
//! from that attempt, not from the first address's refusal.

mod support;

use support::{json_output, start, ServerOpts};

/// `run.preflight_error_kind` of a run whose preflight reaches a server
/// made with `opts` (which listens on 127.0.0.1 only) by the name `host`.
fn preflight_kind(opts: &ServerOpts, host: &str) -> (String, String) {
    let server = start(opts.clone());
    let url = format!("https://{host}:{}/", server.addr.port());
    let cacert = support::cacert();
    let (doc, out) = json_output(&["--cacert", &cacert, "-n", "2", "-w", "2s", "--json", &url]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{host}: {}\n{}",
        support::stderr(&out),
        support::stdout(&out)
    );
    let kind = doc["run"]["preflight_error_kind"]
        .as_str()
        .unwrap_or_else(|| panic!("no preflight error: {doc:#}"))
        .to_string();
    let text = doc["run"]["preflight_error"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (kind, text)
}

/// Response headers past libcurl's 300 KiB limit for all of them.
fn oversized_headers() -> Vec<(String, String)> {
    (0..48)
        .map(|i| (format!("x-filler-{i}"), "y".repeat(7000)))
        .collect()
}

#[test]
fn a_failure_after_a_refused_first_address_keeps_its_own_kind() {
    // `localhost` is ::1 then 127.0.0.1: the first attempt is refused (or
    // cannot reach ::1 at all), the second connects and then fails. Its kind
    // must be what the same failure on 127.0.0.1 alone gives.
    for h2 in [false, true] {
        let opts = ServerOpts {
            h2,
            headers: oversized_headers(),
            ..Default::default()
        };
        let alone = preflight_kind(&opts, "127.0.0.1");
        let two = preflight_kind(&opts, "localhost");
        assert_ne!(alone.0, "conn_refused", "h2 {h2}");
        assert_eq!(
            two.0, alone.0,
            "h2 {h2}: the refusal of ::1 is not what failed ({two:?})"
        );
    }
}

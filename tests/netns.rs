//! Targets that only exist in a network namespace the test makes for itself:
//! a thread of the test moves into a new namespace (`unshare(CLONE_NEWNET)`
//! acts on the calling thread), adds the address to its loopback, starts the
//! server there and runs the binary from there, so both sit in that namespace
//! and no packet can leave the machine.

mod support;

use std::net::IpAddr;
use std::process::Command;

use support::{start, ServerOpts};

/// Runs `f` on a thread inside a fresh network namespace whose loopback is up
/// and also carries `extra`. `None` when this machine cannot do that (no root).
fn in_namespace<T: Send + 'static>(
    extra: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    std::thread::spawn(move || {
        // SAFETY: unshare(2) with CLONE_NEWNET takes no pointers; it moves
        // only this thread (and what it spawns from now on) to a new namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return None;
        }
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ip(&["link", "set", "lo", "up"]) || !ip(&["addr", "add", extra, "dev", "lo", "nodad"]) {
            return None;
        }
        Some(f())
    })
    .join()
    .unwrap()
}

fn skip_or_fail(what: &str) {
    support::skip(&format!("cannot {what} here (needs root and `ip`)"));
}

#[test]
fn an_ipv6_literal_target_is_pinned_to_itself() {
    if !support::have("ip") {
        return;
    }
    // A non-loopback IPv6 literal: libcurl must get the pinned address for
    // this very host, or every probe after the preflight fails.
    let done = in_namespace("fd00::1/128", || {
        let ip: IpAddr = "fd00::1".parse().unwrap();
        let server = start(ServerOpts {
            bind: Some(ip),
            ..Default::default()
        });
        let url = format!("https://[fd00::1]:{}/", server.addr.port());
        let (doc, out) =
            support::json_output(&["-k", "--json", "-n", "3", "-i", "200ms", "-w", "3s", &url]);
        (doc, out, server.counters.snapshot())
    });
    let Some((doc, out, seen)) = done else {
        return skip_or_fail("make a network namespace with an IPv6 address");
    };
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert_eq!(doc["run"]["ip_pinned"], true, "{doc}");
    for s in doc["samples"].as_array().unwrap() {
        assert!(s["error"].is_null(), "{s}");
        assert!(s["addr"].as_str().unwrap().starts_with("[fd00::1]:"), "{s}");
    }
    // Preflight + 3 cold + 1 warm connections: each probe reached the server.
    assert_eq!(seen.tcp, 5, "{seen:?}");
}

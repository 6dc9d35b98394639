//! Runs a command in the client end of a delayed network path (the tests'
//! `support::path`: two network namespaces joined by a delay line), against
//! the test server in the server end, for measuring by hand what the tests
//! check. Needs root.
//!
//!     cargo run --example delayed_run -- --delay-ms 20 [--h2] [--server-wait-ms W]
//!         [--early-data] [--answer-early] -- target/debug/tlsping -n 10 \
//!         --resolve {resolve} --cacert {cacert} {url}
//!
//! In the command, `{url}` is the server's URL (by the certificate's name),
//! `{resolve}` the `--resolve` entry that takes that name to the server's
//! address across the path, and `{cacert}` the test CA's file. The server
//! holds each of its writes `--server-wait-ms` back (a server that takes its
//! time), on top of the path's own delay.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use support::path::{DelayedPath, SERVER_V4};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (ours, command) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let has = |f: &str| ours.iter().any(|a| a == f);
    let value = |f: &str| {
        ours.iter()
            .position(|a| a == f)
            .and_then(|i| ours.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    assert!(!command.is_empty(), "give the command to run after --");
    let delay = Duration::from_millis(value("--delay-ms").unwrap_or(20));
    let path = DelayedPath::new(delay, None).expect("a delayed path (needs root and `ip`)");
    let server = path.in_server(|| {
        support::start(support::ServerOpts {
            bind: Some(SERVER_V4.into()),
            h2: has("--h2"),
            early_data: has("--early-data"),
            answer_early: has("--answer-early"),
            delay: value("--server-wait-ms").map(Duration::from_millis),
            ..Default::default()
        })
    });
    let port = server.addr.port();
    let fill = |a: &String| {
        a.replace("{url}", &format!("https://localhost:{port}/"))
            .replace("{resolve}", &format!("localhost:{port}:{SERVER_V4}"))
            .replace("{cacert}", &support::cacert())
    };
    let filled: Vec<String> = command.iter().map(fill).collect();
    let status = path.in_client(|| {
        std::process::Command::new(&filled[0])
            .args(&filled[1..])
            .status()
            .expect("running the command")
    });
    let seen = server.counters.snapshot();
    eprintln!(
        "server saw {} connections, {} full and {} resumed handshakes, {} requests",
        seen.tcp, seen.full, seen.resumed, seen.requests
    );
    std::process::exit(status.code().unwrap_or(1));
}

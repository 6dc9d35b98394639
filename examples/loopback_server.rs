//! A loopback HTTPS server for trying tlsping by hand and for the benchmarks:
//! the same server the tests use. It prints its URL and CA file, then serves
//! until the time limit (default 120 s) passes.
//!
//!     cargo run --example loopback_server -- [--h2] [--tls12] [--seconds N] [--delay-ms D]
//!         [--bind IP] [--port N] [--second-delay-ms D2]
//!
//! `--bind` takes a loopback address (`::1`, `127.0.0.2`) and `--port` a
//! fixed port, so a second server can sit beside a first one on the same port
//! for `--compare ip` or `--compare addr`. `--second-delay-ms` starts a second
//! server beside the first (same CA, every write held back D2 ms) for
//! `--compare target=`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |f: &str| args.iter().any(|a| a == f);
    let value = |f: &str| {
        args.iter()
            .position(|a| a == f)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let opts = support::ServerOpts {
        h2: has("--h2"),
        tls12: has("--tls12"),
        delay: value("--delay-ms").map(Duration::from_millis),
        bind: args
            .iter()
            .position(|a| a == "--bind")
            .and_then(|i| args.get(i + 1))
            .map(|ip| ip.parse().expect("--bind takes an IP address"))
            .filter(|ip: &std::net::IpAddr| {
                assert!(ip.is_loopback(), "--bind takes a loopback address");
                true
            }),
        port: value("--port").map(|p| u16::try_from(p).expect("--port takes a port")),
        ..Default::default()
    };
    // A second server with the same CA whose writes are held back this
    // long, for `--compare target=` (one `--cacert` for both).
    let second = value("--second-delay-ms").map(|ms| {
        support::start(support::ServerOpts {
            delay: Some(Duration::from_millis(ms)),
            port: None,
            ..opts.clone()
        })
    });
    let server = support::start(opts);
    println!("url {}", server.url());
    if let Some(second) = &second {
        println!("url {}", second.url());
    }
    println!("cacert {}", support::ca().pem_path.display());
    std::thread::sleep(Duration::from_secs(value("--seconds").unwrap_or(120)));
    let seen = server.counters.snapshot();
    eprintln!(
        "served: {} connections, {} full and {} resumed handshakes, {} requests",
        seen.tcp, seen.full, seen.resumed, seen.requests
    );
}

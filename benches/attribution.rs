//! Attribution: where a cold probe's time goes, read back against known truth.
//!
//!     cargo bench --bench attribution
//!
//! 1. Known delays: the in-process test server delivers every byte it sends
//!    D later (D = 0 and 50 ms). For cold probes it prints the medians of
//!    `tls`, the client's `tls_setup`, `tls − tls_setup − D` (what is left of
//!    the handshake past the known delay), the kernel's RTT, and `srv − rtt`.
//!    The delay sits in the server's writes, not on the path, so the kernel
//!    RTT stays a loopback RTT and `srv − rtt` reads D: the server's time.
//! 2. The client's set-up, whole and in parts: `--calibrate` (tlsping's own
//!    server) with resumption on and off, and a prototype that times what
//!    libcurl does per connection (a new OpenSSL `SSL_CTX`) against what a
//!    kept context would cost (only `SSL_new`): the saving a change inside
//!    libcurl could bring, measured without patching it.
//!
//! Everything runs on 127.0.0.1.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ca, json_run as run, median, start, ServerOpts};

const ROUNDS: &str = "21";

/// Per-sample values of the timed cold probes.
fn cold(doc: &Value, f: impl Fn(&Value) -> Option<f64>) -> Vec<f64> {
    support::sample_values(doc, "cold", f)
}

fn field(name: &'static str) -> impl Fn(&Value) -> Option<f64> {
    move |s| s[name].as_f64()
}

/// `d_ms`: the known delay inside `tls` (one server flight, two for a full
/// TLS 1.2 handshake); `srv` always waits for one.
fn report(label: &str, doc: &Value, d_ms: f64, srv_d_ms: f64) {
    let tls = median(cold(doc, field("tls_ms")));
    let setup = median(cold(doc, field("tls_setup_ms")));
    let after = median(cold(doc, |s| {
        Some(s["tls_ms"].as_f64()? - s["tls_setup_ms"].as_f64()?)
    }));
    let finish = median(cold(doc, field("tls_finish_ms")));
    let wire = median(cold(doc, |s| {
        Some(s["tls_ms"].as_f64()? - s["tls_setup_ms"].as_f64()? - s["tls_finish_ms"].as_f64()?)
    }));
    let rtt = median(cold(doc, field("tcp_rtt_ms")));
    let srv = median(cold(doc, field("srv_ms")));
    let server = median(cold(doc, |s| {
        Some(s["srv_ms"].as_f64()? - s["tcp_rtt_ms"].as_f64()?)
    }));
    println!(
        "{label:<26} tls {tls:7.3} setup {setup:5.3} finish {finish:5.3} tls-setup-D {:+6.3} tls-setup-finish-D {:+6.3} rtt {rtt:5.3} srv {srv:6.3} srv-rtt-D {:+6.3}",
        after - d_ms,
        wire - d_ms,
        server - srv_d_ms
    );
}

fn known_delays() {
    println!("# cold probes, medians in ms of {ROUNDS} rounds (first is warmup), -i 300ms");
    for (tls12, name) in [(false, "TLS1.3"), (true, "TLS1.2")] {
        for d in [0u64, 50] {
            let server = start(ServerOpts {
                tls12,
                delay: (d > 0).then(|| Duration::from_millis(d)),
                ..Default::default()
            });
            for resume in ["on", "off"] {
                let doc = run(&[
                    "--json",
                    "-m",
                    "cold",
                    "-n",
                    ROUNDS,
                    "-i",
                    "300ms",
                    "--resume",
                    resume,
                    "--cacert",
                    ca().pem_path.to_str().unwrap(),
                    &server.url(),
                ]);
                // TLS 1.2 full handshakes wait for two server flights.
                let flights = if tls12 && resume == "off" { 2.0 } else { 1.0 };
                report(
                    &format!("{name} D={d}ms resume={resume}"),
                    &doc,
                    d as f64 * flights,
                    d as f64,
                );
            }
        }
    }
}

fn calibration() {
    println!("# --calibrate (tlsping's own server in the same process), cold probes");
    for resume in ["on", "off"] {
        let doc = run(&[
            "--calibrate",
            "--json",
            "-m",
            "cold",
            "-n",
            ROUNDS,
            "-i",
            "200ms",
            "--resume",
            resume,
        ]);
        report(&format!("calibrate resume={resume}"), &doc, 0.0, 0.0);
    }
}

/// What libcurl pays per connection for a context of its own, against a kept one.
fn context_prototype() {
    use openssl::ssl::{Ssl, SslContext, SslMethod, SslVersion};
    const N: u32 = 400;
    // The same settings on both sides; only whether the context is new differs.
    let client_ctx = || {
        let mut b = SslContext::builder(SslMethod::tls_client()).unwrap();
        b.set_min_proto_version(Some(SslVersion::TLS1_2)).unwrap();
        b.build()
    };
    // Freeing is left out on both sides: libcurl frees after the probe.
    let fresh = || {
        let t = Instant::now();
        let ctx = client_ctx();
        let ssl = Ssl::new(&ctx).unwrap();
        let took = t.elapsed();
        drop((ssl, ctx));
        took
    };
    let kept_ctx = client_ctx();
    let kept = || {
        let t = Instant::now();
        let ssl = Ssl::new(&kept_ctx).unwrap();
        let took = t.elapsed();
        drop(ssl);
        took
    };
    // Warm both paths up (provider fetch caches), then alternate them.
    for _ in 0..20 {
        fresh();
        kept();
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..N {
        a.push(fresh().as_secs_f64() * 1e3);
        b.push(kept().as_secs_f64() * 1e3);
    }
    let (a, b) = (median(a), median(b));
    println!("# prototype: the context libcurl builds per connection, medians of {N}");
    println!(
        "new SSL_CTX + SSL_new {a:.3} ms   SSL_new from a kept SSL_CTX {b:.3} ms   saving {:.3} ms per cold probe",
        a - b
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument picks one part.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |part: &str| only.is_empty() || only.iter().any(|o| o == part);
    if wants("prototype") {
        context_prototype();
    }
    if wants("calibrate") {
        calibration();
    }
    if wants("delays") {
        known_delays();
    }
}

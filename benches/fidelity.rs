//! Fidelity: known delays read back, the residual on loopback, and the cost of
//! the CA bundle inside `tls` (system-sized bundle against a one-certificate file).
//!
//!     cargo bench --bench fidelity
//!
//! Everything runs against the in-process test server on 127.0.0.1.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use serde_json::Value;
use support::{ca, json_run as run, median, start, ServerOpts};

fn stage(doc: &Value, mode: &str, field: &str) -> f64 {
    median(support::sample_values(doc, mode, |s| s[field].as_f64()))
}

fn stages_for(tls12: bool, resume: &str, delay: Option<Duration>) -> [f64; 4] {
    let server = start(ServerOpts {
        tls12,
        delay,
        ..Default::default()
    });
    let doc = run(&[
        "--json",
        "-n",
        "21",
        "-i",
        "300ms",
        "--resume",
        resume,
        "--cacert",
        ca().pem_path.to_str().unwrap(),
        &server.url(),
    ]);
    [
        stage(&doc, "cold", "tcp_ms"),
        stage(&doc, "cold", "tls_ms"),
        stage(&doc, "cold", "srv_ms"),
        stage(&doc, "warm", "total_ms"),
    ]
}

/// Reads a known one-way delay D back from the stages. `baseline` is the same
/// run with D = 0: the handshake's own CPU work and loopback costs, which are
/// real time on any path and not an error of the measurement.
fn known_delays(tls12: bool, resume: &str, d_ms: f64) {
    let full = resume == "off";
    let flights = if tls12 && full { 2.0 } else { 1.0 };
    let baseline = stages_for(tls12, resume, None);
    let measured = stages_for(tls12, resume, Some(Duration::from_millis(d_ms as u64)));
    let truth = [0.0, flights * d_ms, d_ms, d_ms];
    let names = ["cold tcp", "cold tls", "cold srv", "warm total"];
    println!(
        "\nknown delays, TLS {}, {} handshakes, D = {d_ms} ms (medians of 20 rounds)",
        if tls12 { "1.2" } else { "1.3" },
        if full { "full" } else { "resumed" }
    );
    println!(
        "{:<11} {:>9} {:>10} {:>9} {:>10} {:>15}",
        "stage", "truth", "measured", "error", "D=0 base", "error − base"
    );
    for i in 0..4 {
        let err = measured[i] - truth[i];
        println!(
            "{:<11} {:>7.3}ms {:>8.3}ms {:>+8.3}ms {:>8.3}ms {:>+13.3}ms",
            names[i],
            truth[i],
            measured[i],
            err,
            baseline[i],
            err - baseline[i]
        );
    }
}

fn residual() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let doc = run(&[
        "--json",
        "-n",
        "41",
        "-i",
        "200ms",
        "--cacert",
        ca().pem_path.to_str().unwrap(),
        &server.url(),
    ]);
    println!("\nresidual on loopback (median of 40 rounds)");
    for mode in ["cold", "warm"] {
        println!(
            "{mode:<5} other {:.3} ms of total {:.3} ms",
            stage(&doc, mode, "other_ms"),
            stage(&doc, mode, "total_ms")
        );
    }
}

fn bundle_cost() {
    let Some(system) = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
    ]
    .iter()
    .find(|p| std::path::Path::new(p).exists()) else {
        println!("\nno system CA bundle found; skipping the bundle comparison");
        return;
    };
    // A system-sized bundle that also trusts the test CA, next to the test CA alone.
    let mut big = std::fs::read(system).unwrap();
    big.extend_from_slice(&std::fs::read(&ca().pem_path).unwrap());
    let n_certs = String::from_utf8_lossy(&big)
        .matches("BEGIN CERTIFICATE")
        .count();
    let big_path =
        std::env::temp_dir().join(format!("tlsping-bench-bundle-{}.pem", std::process::id()));
    std::fs::write(&big_path, big).unwrap();
    let server = start(ServerOpts::default());
    let mut tls = Vec::new();
    for (label, file) in [
        ("1 certificate", ca().pem_path.clone()),
        (&*format!("{n_certs} certificates"), big_path.clone()),
    ] {
        let doc = run(&[
            "--json",
            "-m",
            "cold",
            "-n",
            "31",
            "-i",
            "200ms",
            "--cacert",
            file.to_str().unwrap(),
            &server.url(),
        ]);
        let t = stage(&doc, "cold", "tls_ms");
        println!("cold tls with {label:<16} median {t:.3} ms");
        tls.push(t);
    }
    let _ = std::fs::remove_file(big_path);
    println!(
        "difference: {:+.3} ms (target: within 0.3 ms)",
        tls[1] - tls[0]
    );
}

fn main() {
    println!("tlsping measurement fidelity on loopback");
    println!("\nCA bundle inside the tls stage (median of 30 cold rounds each)");
    bundle_cost();
    residual();
    known_delays(false, "on", 50.0);
    known_delays(true, "off", 50.0);
    known_delays(true, "on", 50.0);
}

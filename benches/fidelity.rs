//! Fidelity: known delays read back, the residual on loopback, and the cost of
//! the CA bundle inside `tls` (system-sized bundle against a one-certificate file).
//!
//!     cargo bench --bench fidelity
//!
//! Everything runs against the in-process test server on 127.0.0.1.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::{ca, start, ServerOpts};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run(args: &[&str]) -> Value {
    let out = Command::new(support::bin())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stage(doc: &Value, mode: &str, field: &str) -> f64 {
    median(
        doc["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["mode"] == mode && s["warmup"] == false && s["error"].is_null())
            .filter_map(|s| s[field].as_f64())
            .collect(),
    )
}

fn known_delays(tls12: bool, d_ms: f64) {
    let server = start(ServerOpts {
        tls12,
        delay: Some(Duration::from_millis(d_ms as u64)),
        ..Default::default()
    });
    let doc = run(&[
        "--json",
        "-n",
        "21",
        "-i",
        "300ms",
        "--cacert",
        ca().pem_path.to_str().unwrap(),
        &server.url(),
    ]);
    let flights = if tls12 { 2.0 } else { 1.0 };
    let rows = [
        ("cold tcp", stage(&doc, "cold", "tcp_ms"), 0.0),
        ("cold tls", stage(&doc, "cold", "tls_ms"), flights * d_ms),
        ("cold srv", stage(&doc, "cold", "srv_ms"), d_ms),
        ("warm total", stage(&doc, "warm", "total_ms"), d_ms),
    ];
    println!(
        "\nknown delays, TLS {}, D = {d_ms} ms (medians of 20 rounds)",
        if tls12 { "1.2" } else { "1.3" }
    );
    println!(
        "{:<11} {:>9} {:>10} {:>9}",
        "stage", "truth", "measured", "error"
    );
    for (name, measured, truth) in rows {
        println!(
            "{name:<11} {truth:>7.3}ms {measured:>8.3}ms {:>+8.3}ms",
            measured - truth
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
    known_delays(false, 50.0);
    known_delays(true, 50.0);
}

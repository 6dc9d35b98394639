//! Cost: CPU time per cold and per warm probe, peak RSS and start-up time,
//! next to the system `curl` CLI making the same requests to the same server.
//!
//!     cargo bench --bench cost
//!
//! CPU per probe is marginal: (CPU of N probes − CPU of 1 probe) / (N − 1), so
//! process start-up and the preflight cancel out for both tools. CPU time is
//! also reported as instructions (callgrind), which do not depend on how warm
//! the caches are: tlsping waits at least 200 ms between rounds, so each of its
//! probes starts with cold caches, while curl runs its requests back to back.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::{ca, start, ServerOpts};

/// Runs a command to completion; returns (user+sys CPU, peak RSS in KiB).
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which also reports its rusage
fn measure(cmd: &mut Command) -> (Duration, u64) {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped; the pointers are to live locals.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "command failed: {cmd:?}"
    );
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_maxrss as u64,
    )
}

fn tlsping(args: &[&str]) -> Command {
    let mut c = Command::new(support::bin());
    c.args(args);
    c
}

fn curl(url: &str, port: u16, n: usize, close: bool) -> Command {
    let mut c = Command::new("curl");
    c.args([
        "-s",
        "-I",
        "--http1.1",
        "--cacert",
        ca().pem_path.to_str().unwrap(),
    ]);
    c.args(["--resolve", &format!("localhost:{port}:127.0.0.1")]);
    if close {
        c.args(["-H", "Connection: close"]);
    }
    for _ in 0..n {
        c.args(["-o", "/dev/null", url]);
    }
    c
}

/// Instructions executed by a command (callgrind: exact and repeatable, unlike
/// CPU time, which a busy or frequency-scaling machine moves around).
fn instructions(cmd: &Command) -> Option<u64> {
    let out_file = std::env::temp_dir().join(format!("tlsping-cost-{}.cg", std::process::id()));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    let text = std::fs::read_to_string(&out_file).ok()?;
    let _ = std::fs::remove_file(&out_file);
    if !status.success() {
        return None;
    }
    text.lines().find_map(|l| {
        l.strip_prefix("summary: ")
            .and_then(|v| v.trim().parse().ok())
    })
}

fn per_probe(one: Duration, many: Duration, n: usize) -> f64 {
    (many.as_secs_f64() - one.as_secs_f64()).max(0.0) / (n - 1) as f64 * 1e6
}

fn main() {
    let server = start(ServerOpts::default());
    let url = server.url();
    let port = server.addr.port();
    let cacert = ca().pem_path.to_str().unwrap().to_string();
    const N: usize = 30;
    let n = N.to_string();
    println!("CPU per probe (user+sys, marginal over {N} probes), HTTP/1.1, TLS 1.3, loopback");
    for (mode, close) in [("cold", true), ("warm", false)] {
        let common = [
            "-m",
            mode,
            "-i",
            "200ms",
            "--http-version",
            "1.1",
            "--cacert",
            &cacert,
        ];
        let (ours1, _) = measure(tlsping(&common).args(["-n", "1", &url]));
        let (ours_n, _) = measure(tlsping(&common).args(["-n", &n, &url]));
        let (curl1, _) = measure(&mut curl(&url, port, 1, close));
        let (curl_n, _) = measure(&mut curl(&url, port, N, close));
        let (ours, theirs) = (per_probe(ours1, ours_n, N), per_probe(curl1, curl_n, N));
        println!(
            "{mode:<5} tlsping {ours:>7.0} µs   curl {theirs:>7.0} µs   ratio {:.2}",
            ours / theirs
        );
    }
    const M: usize = 12;
    println!("instructions per probe (callgrind, marginal over {M} probes)");
    for (mode, close) in [("cold", true), ("warm", false)] {
        let common = [
            "-m",
            mode,
            "-i",
            "200ms",
            "--http-version",
            "1.1",
            "--cacert",
            &cacert,
        ];
        let ours = |n: usize| instructions(tlsping(&common).args(["-n", &n.to_string(), &url]));
        let theirs = |n: usize| instructions(&curl(&url, port, n, close));
        match (ours(2), ours(M), theirs(2), theirs(M)) {
            (Some(a), Some(b), Some(c), Some(d)) => {
                let us = b.saturating_sub(a) as f64 / (M - 2) as f64;
                let them = d.saturating_sub(c) as f64 / (M - 2) as f64;
                println!(
                    "{mode:<5} tlsping {us:>9.0}   curl {them:>9.0}   ratio {:.2}",
                    us / them
                );
            }
            _ => println!("{mode:<5} (valgrind not available)"),
        }
    }
    let (_, rss) = measure(&mut tlsping(&[
        "-n", "100", "-i", "200ms", "--cacert", &cacert, &url,
    ]));
    let (_, curl_rss) = measure(&mut curl(&url, port, 100, false));
    println!(
        "peak RSS: tlsping -n 100 (both modes) {:.1} MiB; curl, 100 requests {:.1} MiB",
        rss as f64 / 1024.0,
        curl_rss as f64 / 1024.0
    );
    let startup = |cmd: &str| {
        let mut times: Vec<f64> = (0..20)
            .map(|_| {
                let t = Instant::now();
                let ok = Command::new(cmd)
                    .arg("--version")
                    .output()
                    .unwrap()
                    .status
                    .success();
                assert!(ok);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(|a, b| a.total_cmp(b));
        times[10]
    };
    let (ours, theirs) = (startup(support::bin()), startup("curl"));
    println!("start-up (--version, median of 20): tlsping {ours:.2} ms, curl {theirs:.2} ms, ratio {:.2}", ours / theirs);
}

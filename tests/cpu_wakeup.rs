//! The CPU kept awake while a run measures (the kernel's PM QoS request,
//! `/dev/cpu_dma_latency` held at 0): through the real binary on 127.0.0.1,
//! the request is in force while the rounds run, and withdrawn when the run
//! ends, by itself or by Ctrl+C. `run.cpu_wakeup_pinned` and `-v` say so.
//! Only root may make the request: elsewhere the run says it was not held.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{cacert, show, sigint, start, stdout, wait_for, ServerOpts};

const DEVICE: &str = "/dev/cpu_dma_latency";

/// The wake-up latency in force now, as the kernel reports it (µs).
fn latency_in_force() -> Option<i32> {
    let bytes = std::fs::read(DEVICE).ok()?;
    Some(i32::from_ne_bytes(bytes.get(..4)?.try_into().ok()?))
}

fn may_hold() -> bool {
    // SAFETY: geteuid(2) takes nothing and always succeeds.
    let root = unsafe { libc::geteuid() } == 0;
    if !(root && latency_in_force().is_some()) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the PM QoS request needs root and {DEVICE}"
        );
        return false;
    }
    true
}

/// Whether process `pid` has `DEVICE` open.
fn holds_device(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|t| t == std::path::Path::new(DEVICE))
            })
        })
        .unwrap_or(false)
}

#[test]
fn the_wakeup_latency_is_held_while_the_rounds_run_and_released_after_ctrl_c() {
    if !may_hold() {
        return;
    }
    let before = latency_in_force().unwrap();
    let server = start(ServerOpts::default());
    let mut child = support::command(&[
        "-4",
        "--json",
        "-n",
        "0",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("running tlsping");
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    assert!(holds_device(child.id()), "the request is not held");
    assert_eq!(latency_in_force(), Some(0), "0 µs is not in force");
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["run"]["cpu_wakeup_pinned"], true, "{}", show(&out));
    // Withdrawn with the process: the latency in force is what it was.
    let until = Instant::now() + Duration::from_secs(5);
    while latency_in_force() != Some(before) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(latency_in_force(), Some(before));
}

#[test]
fn verbose_says_the_wakeup_latency_was_held() {
    if !may_hold() {
        return;
    }
    let server = start(ServerOpts::default());
    let out = support::tlsping(&[
        "-4",
        "-v",
        "-n",
        "2",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out).contains("cpu wake-up        = held at 0 µs while the rounds ran"),
        "{}",
        show(&out)
    );
}

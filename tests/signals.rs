//! Ending a run from outside, through the real binary on 127.0.0.1: Ctrl+C
//! and SIGTERM end it with its statistics, an ignored SIGHUP stays ignored,
//! a second Ctrl+C leaves at once, a probe in flight is canceled, and a
//! reader that closes stdout ends it with exit 2.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::faults::{start_faulty, Fault, FaultOpts};
use support::{
    cacert, error_kinds, samples, show, sigint, start, stderr, stdout, wait_for, ServerOpts,
};

/// The binary with the same environment as `support::tlsping`, pipes for output.
fn spawn(args: &[&str]) -> Child {
    let ca = cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    all.extend_from_slice(args);
    support::command(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning tlsping")
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Waits at most `limit` for the child; kills it (and fails) past that.
fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let until = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("tlsping did not exit within {limit:?}");
            }
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

#[test]
fn ctrl_c_ends_an_endless_json_run_with_a_complete_document() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["--json", "-n", "0", "-i", "200ms", &server.url()]);
    // Preflight + 2 full rounds seen by the server, then some more time.
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", show(&out)));
    assert!(samples(&doc).len() >= 2, "{doc:#}");
    assert!(
        samples(&doc).iter().all(|s| s["error_kind"].is_null()),
        "{doc:#}"
    );
    assert!(doc["summary"]["cold"].is_object(), "{doc:#}");
    assert!(doc["summary"]["warm"].is_object(), "{doc:#}");
    assert_eq!(doc["run"]["count"], 0, "{doc:#}");
}

#[test]
fn ctrl_c_ends_an_endless_table_run_with_the_statistics() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "0", "-i", "200ms", &server.url()]);
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && l.contains(" | "))
        .count();
    assert!(rows >= 2, "{text}");
    assert!(text.contains("--- localhost statistics ---"), "{text}");
    assert!(text.contains("ok / sent"), "{text}");
    assert!(text.contains("handshake overhead"), "{text}");
}

#[test]
fn sigterm_ends_a_run_with_its_statistics_and_exit_143() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "0", "-i", "200ms", &server.url()]);
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill -TERM failed");
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(143), "{}", show(&out));
    let text = stdout(&out);
    assert!(text.contains("--- localhost statistics ---"), "{text}");
    assert!(text.contains("ok / sent"), "{text}");
}

#[test]
fn an_ignored_sighup_stays_ignored() {
    // `nohup` and `trap '' HUP` hand the run an ignored SIGHUP: it must not
    // end the run.
    let server = start(ServerOpts::default());
    let script = format!(
        "trap '' HUP; exec {} -4 --cacert {} -n 0 -i 200ms {}",
        support::bin(),
        cacert(),
        server.url()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    // SAFETY: kill(2) with the pid of a child we spawned (exec kept the pid).
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) },
        0
    );
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        child.try_wait().unwrap().is_none(),
        "an ignored SIGHUP ended the run"
    );
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// Bytes waiting in the pipe leave less room than one more CSV row.
fn pipe_nearly_full(fd: std::os::fd::RawFd) -> bool {
    let mut queued: libc::c_int = 0;
    // SAFETY: `fd` is a pipe we own; FIONREAD writes one int.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut queued) };
    rc == 0 && queued >= 4096 - 400
}

#[test]
fn a_second_ctrl_c_leaves_at_once() {
    use std::os::fd::AsRawFd;
    // A run whose output nobody reads: once the pipe is full, tlsping is stuck
    // writing, so the first Ctrl+C cannot finish the run. The second must end it.
    let server = start(ServerOpts::default());
    let mut child = spawn(&[
        "--csv",
        "-m",
        "warm",
        "-n",
        "0",
        "-i",
        "200ms",
        &server.url(),
    ]);
    let pipe = child.stdout.as_ref().expect("piped stdout").as_raw_fd();
    // SAFETY: `pipe` is the read end we own; F_SETPIPE_SZ only resizes its buffer.
    let size = unsafe { libc::fcntl(pipe, libc::F_SETPIPE_SZ, 4096) };
    assert!(size >= 4096, "could not shrink the pipe");
    // Rows are ~150 bytes: the pipe fills after a few dozen rows, and then the
    // server stops seeing requests. Wait (bounded) until it has been quiet for
    // longer than three intervals.
    let until = Instant::now() + Duration::from_secs(20);
    let mut last = (server.counters.snapshot().requests, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = server.counters.snapshot().requests;
        if now != last.0 {
            last = (now, Instant::now());
        } else if now > 10
            && last.1.elapsed() > Duration::from_millis(700)
            && pipe_nearly_full(pipe)
        {
            break;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tlsping never blocked on its output ({now} requests)");
        }
    }
    sigint(&child);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        matches!(child.try_wait(), Ok(None)),
        "the first Ctrl+C cannot finish a blocked run"
    );
    let sent = Instant::now();
    sigint(&child);
    let until = Instant::now() + Duration::from_secs(5);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            _ if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("a second Ctrl+C did not end the run");
            }
        }
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_millis(500),
        "{:?}",
        sent.elapsed()
    );
}

#[test]
fn ctrl_c_during_a_hung_probe_cancels_it_without_counting_a_failure() {
    // Preflight and round 1 answer; round 2's cold probe hangs until Ctrl+C.
    let server = start_faulty(FaultOpts {
        ok_first: 2,
        fault: Fault::Hang,
        ..Default::default()
    });
    let mut child = spawn(&[
        "--json",
        "-m",
        "cold",
        "-n",
        "3",
        "--warmup",
        "0",
        "-w",
        "5s",
        "-i",
        "200ms",
        &server.url(),
    ]);
    // Round 2's connection is the first faulty one; its request then hangs for up to 5 s.
    wait_for(&mut child, "the hanging request", || {
        server.counters.faulted.load(Ordering::SeqCst) >= 1
            && server.counters.requests.load(Ordering::SeqCst) >= 3
    });
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    // libcurl looks at the cancel flag about once a second while it waits.
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", show(&out)));
    assert_eq!(error_kinds(&doc), ["<none>", "canceled"], "{doc:#}");
    let canceled = &samples(&doc)[1];
    let total = canceled["total_ms"].as_f64().unwrap_or(f64::MAX);
    assert!(
        total < 4000.0,
        "aborted well before the 5 s deadline: {canceled:#}"
    );
    // A canceled probe is neither sent nor lost; the run's one real probe was ok.
    assert_eq!(doc["summary"]["cold"]["sent"], 1, "{doc:#}");
    assert_eq!(doc["summary"]["cold"]["loss"], 0.0, "{doc:#}");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

// ------------------------------------------------------------ closed stdout

#[test]
fn a_closed_stdout_ends_the_run_with_exit_2_and_one_line() {
    let server = start(ServerOpts::default());
    let mut child = spawn(&["-n", "5", "-i", "200ms", &server.url()]);
    let pipe = child.stdout.take().expect("stdout is piped");
    let mut first = String::new();
    let mut lines = BufReader::new(pipe);
    // Blocks at most until the run ends by itself (5 rounds).
    let read = lines.read_line(&mut first);
    if read.is_err() || !first.starts_with("HEAD https://localhost:") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("first line: {read:?} {first:?}");
    }
    // Closing our end: every later write of tlsping fails with EPIPE.
    drop(lines);
    let out = wait_bounded(child, Duration::from_secs(10));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tlsping: could not write the output"),
        "{err}"
    );
    // Stopped at the first failed write, before the 5 rounds (preflight + 10 requests).
    let seen = server.counters.snapshot();
    assert!(seen.requests < 11, "{seen:?}");
}

//! Signals and the outputs, through the real binary on 127.0.0.1: a stdout
//! nobody reads or a reader that closes it cannot cost the files or the
//! push, and a push under way is abandoned at the first signal with the
//! signal's own code.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::spawned::{run_series, spawn, wait_bounded};
use support::{show, sigint, start, stderr, ServerOpts};

/// Bytes waiting in the pipe leave less room than one more CSV row.
fn pipe_nearly_full(fd: std::os::fd::RawFd) -> bool {
    let mut queued: libc::c_int = 0;
    // SAFETY: `fd` is a pipe we own; FIONREAD writes one int.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut queued) };
    rc == 0 && queued >= 4096 - 400
}

/// A run whose output nobody reads, once tlsping is stuck writing it: the
/// pipe is shrunk to 4 KiB, and rows are ~150 bytes, so it fills after a
/// few dozen rows and the server stops seeing requests. Waits (bounded)
/// until it has been quiet for longer than three intervals.
fn blocked_on_its_output(server: &support::TestServer) -> Child {
    blocked_with(server, &[])
}

/// `blocked_on_its_output`, with more arguments.
fn blocked_with(server: &support::TestServer, more: &[&str]) -> Child {
    use std::os::fd::AsRawFd;
    let args = blocking_args(server, more);
    let child = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let pipe = child.stdout.as_ref().expect("piped stdout").as_raw_fd();
    wait_blocked(server, child, pipe)
}

/// `blocked_with`, stderr into the same pipe as stdout (`2>&1 | stuck`),
/// and the pipe then filled to its last byte (a stdout chunk waits for
/// room for all of itself; a short stderr line would still fit): the
/// pipe's read end, never read, is returned with the child.
fn blocked_together(server: &support::TestServer, more: &[&str]) -> (Child, std::io::PipeReader) {
    use std::os::fd::AsRawFd;
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let ca = support::cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    let args = blocking_args(server, more);
    all.extend(args.iter().map(String::as_str));
    let child = support::command(&all)
        .stdin(std::process::Stdio::null())
        .stdout(writer.try_clone().expect("the pipe's write end"))
        .stderr(writer.try_clone().expect("the pipe's write end"))
        .spawn()
        .expect("spawning tlsping");
    let pipe = reader.as_raw_fd();
    let child = wait_blocked(server, child, pipe);
    // A byte at a time until the pipe is full; the thread ends with a
    // broken pipe once the test drops the read end.
    std::thread::spawn(move || {
        use std::io::Write as _;
        let mut writer = writer;
        while writer.write(b".").is_ok() {}
    });
    std::thread::sleep(Duration::from_millis(300));
    (child, reader)
}

fn blocking_args(server: &support::TestServer, more: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["--csv", "-m", "warm", "-n", "0", "-i", "200ms"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    args.extend(more.iter().map(|a| a.to_string()));
    args.push(server.url());
    args
}

/// Shrinks the pipe at `pipe` (a read end we own) to 4 KiB and waits,
/// bounded, until the child is stuck writing into it.
fn wait_blocked(server: &support::TestServer, mut child: Child, pipe: std::os::fd::RawFd) -> Child {
    // SAFETY: `pipe` is the read end we own; F_SETPIPE_SZ only resizes its buffer.
    let size = unsafe { libc::fcntl(pipe, libc::F_SETPIPE_SZ, 4096) };
    assert!(size >= 4096, "could not shrink the pipe");
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
    child
}

/// Waits at most `limit` for `child` to exit on its own (the pipe it is
/// blocked on is not read); kills it and fails past that.
fn exit_within(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let until = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            _ if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{what}");
            }
        }
    }
}

#[test]
fn a_stdout_nobody_reads_cannot_keep_a_run_past_the_first_sigterm() {
    // A supervisor sends one SIGTERM. The run is stuck writing to a pipe
    // nobody reads, so it cannot finish; it leaves all the same, 5 s on
    // (the grace docs/measurement.md gives), with 143.
    let server = start(ServerOpts::default());
    let mut child = blocked_on_its_output(&server);
    let sent = Instant::now();
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = exit_within(
        &mut child,
        Duration::from_secs(15),
        "one SIGTERM did not end a run blocked on its output",
    );
    assert_eq!(status.code(), Some(143));
    let took = sent.elapsed();
    assert!(
        took >= Duration::from_millis(4500),
        "{took:?}: left before its grace"
    );
}

#[test]
fn a_signal_with_stdout_blocked_still_writes_the_files_and_pushes() {
    // The run is stuck writing to a pipe nobody reads when SIGTERM comes:
    // stdout is given up, not waited for, so the metrics file, the
    // picture and the push are done at once, each with the code the
    // process then exits with (143, once the grace for stdout is over).
    let (gateway, pushed) = support::prometheus::answering_stand_in(1);
    let dir = support::TempDir::new("blocked");
    let metrics = dir.path().join("m.prom");
    let picture = dir.path().join("p.svg");
    let server = start(ServerOpts::default());
    let mut child = blocked_with(
        &server,
        &[
            "--openmetrics",
            support::path_str(&metrics),
            "--svg",
            support::path_str(&picture),
            "--push",
            &gateway,
        ],
    );
    let sent = Instant::now();
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let body = pushed.recv_timeout(Duration::from_secs(4));
    let pushed_after = sent.elapsed();
    let status = exit_within(
        &mut child,
        Duration::from_secs(15),
        "one SIGTERM did not end a run blocked on its output",
    );
    assert_eq!(status.code(), Some(143));
    let body = body.expect("the push went out while stdout was blocked");
    assert!(
        pushed_after < Duration::from_secs(3),
        "{pushed_after:?}: the push waited for stdout"
    );
    assert!(body.contains("tlsping_run_exit_code"), "{body}");
    let value = run_series(&metrics);
    assert_eq!(value("tlsping_run_exit_code"), Some(143.0));
    assert_eq!(value("tlsping_run_interrupted"), Some(1.0));
    assert!(std::fs::read_to_string(&picture)
        .expect("the picture was written")
        .contains("</svg>"));
}

#[test]
fn a_signal_with_stderr_blocked_too_still_writes_the_files() {
    // `2>&1 | stuck`: the warning the signal brings would block on the
    // same full pipe; it waits until the metrics file and the picture
    // are written (before, the 5 s watchdog ended the run without them).
    let dir = support::TempDir::new("blocked-both");
    let metrics = dir.path().join("m.prom");
    let picture = dir.path().join("p.svg");
    let server = start(ServerOpts::default());
    let (mut child, _reader) = blocked_together(
        &server,
        &[
            "--openmetrics",
            support::path_str(&metrics),
            "--svg",
            support::path_str(&picture),
        ],
    );
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = exit_within(
        &mut child,
        Duration::from_secs(15),
        "one SIGTERM did not end a run blocked on its output",
    );
    assert_eq!(status.code(), Some(143));
    let value = run_series(&metrics);
    assert_eq!(value("tlsping_run_exit_code"), Some(143.0));
    assert!(std::fs::read_to_string(&picture)
        .expect("the picture was written")
        .contains("</svg>"));
}

#[test]
fn a_reader_that_closes_stdout_ends_the_run_quietly_with_the_verdicts_code() {
    // `tlsping ... | head -3`: a reader that has had enough is no error.
    // The rounds stop, nothing is said, the exit is what the rounds that
    // ran earned, and the metrics file records that very code.
    let dir = support::TempDir::new("closed");
    let metrics = dir.path().join("m.prom");
    let server = start(ServerOpts::default());
    let mut child = spawn(&[
        "-n",
        "5",
        "-i",
        "200ms",
        "--openmetrics",
        support::path_str(&metrics),
        &server.url(),
    ]);
    let pipe = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(pipe);
    // Round 2's row (the first that counts) is read before our end closes,
    // so the rounds that ran earned 0 whatever the machine's load; reading
    // blocks at most until the run ends by itself (5 rounds).
    let mut seen_rows = Vec::new();
    loop {
        let mut line = String::new();
        match lines.read_line(&mut line) {
            Ok(n) if n > 0 => {
                let round_two = line.trim_start().starts_with("2 |");
                seen_rows.push(line);
                if round_two {
                    break;
                }
            }
            read => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no row of round 2: {read:?} {seen_rows:?}");
            }
        }
    }
    // Closing our end: every later write of tlsping fails with EPIPE.
    drop(lines);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(stderr(&out), "", "{}", show(&out));
    // Stopped at the first failed write, before the 5 rounds (preflight + 10 requests).
    let seen = server.counters.snapshot();
    assert!(seen.requests < 11, "{seen:?}");
    let value = run_series(&metrics);
    assert_eq!(value("tlsping_run_exit_code"), Some(0.0));
    assert!(value("tlsping_run_rounds_completed").is_some_and(|v| v < 5.0));
    assert_eq!(value("tlsping_run_rounds_asked"), Some(5.0));
    assert_eq!(value("tlsping_run_interrupted"), Some(0.0));
}

/// A Pushgateway that takes the connection and never answers, holding it
/// 15 s at most: its URL, and a receiver told when the push connected.
fn hanging_gateway() -> (String, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Some(Ok(held)) = listener.incoming().next() {
            let _ = tx.send(());
            std::thread::sleep(Duration::from_secs(15));
            drop(held);
        }
    });
    (format!("http://{addr}"), rx)
}

#[test]
fn a_signal_while_the_push_is_under_way_abandons_it_with_the_signals_code() {
    // The push would wait out its 5 s. Any signal that comes meanwhile
    // ends it at once, like every other wait, and the run exits with that
    // signal's code: Ctrl+C as SIGTERM and SIGHUP. The metrics file,
    // written after the push, records the same code.
    let server = start(ServerOpts::default());
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let (push, connected) = hanging_gateway();
        let dir = support::TempDir::new("push-signal");
        let metrics = dir.path().join("m.prom");
        let child = spawn(&[
            "--json",
            "-n",
            "1",
            "--openmetrics",
            support::path_str(&metrics),
            "--push",
            &push,
            &server.url(),
        ]);
        if connected.recv_timeout(Duration::from_secs(15)).is_err() {
            let _ = wait_bounded(child, Duration::from_secs(1));
            panic!("the push never reached the gateway");
        }
        let sent = Instant::now();
        // SAFETY: kill(2) with the pid of a child we spawned and still own.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = wait_bounded(child, Duration::from_secs(10));
        let took = sent.elapsed();
        assert_eq!(out.status.code(), Some(code), "{signal}: {}", show(&out));
        assert!(
            stderr(&out).contains("--push failed: a signal came while it was under way"),
            "{signal}: {}",
            show(&out)
        );
        // It takes some tens of milliseconds; the margin is for a loaded machine.
        assert!(
            took < Duration::from_millis(750),
            "{signal}: {took:?}: the push was not abandoned at once"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("the JSON was written whole");
        assert_eq!(doc["samples"].as_array().map(Vec::len), Some(2));
        let recorded = run_series(&metrics)("tlsping_run_exit_code");
        assert_eq!(recorded, Some(f64::from(code)), "{signal}");
    }
}

#[test]
fn a_push_that_began_after_the_signal_is_told_it_met_the_signals_deadline() {
    // SIGTERM while stdout is blocked: stdout is given up and the push
    // begins after the signal, to a gateway that never answers; it is
    // abandoned at the ending's deadline. Before, it said `a signal came
    // while it was under way`, which no signal did.
    let server = start(ServerOpts::default());
    let (push, connected) = hanging_gateway();
    let mut child = blocked_with(&server, &["--push", &push]);
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let reached = connected.recv_timeout(Duration::from_secs(4));
    let status = exit_within(
        &mut child,
        Duration::from_secs(15),
        "one SIGTERM did not end a run blocked on its output",
    );
    assert!(reached.is_ok(), "the push never reached the gateway");
    assert_eq!(status.code(), Some(143));
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
    assert!(
        err.contains(
            "--push failed: abandoned at the deadline the signal set: it began after the signal \
             that stopped the run and had not arrived 4s after it (a stopped run leaves within 5s)"
        ),
        "{err}"
    );
    assert!(!err.contains("while it was under way"), "{err}");
}

#[test]
fn a_stdout_closed_mid_run_costs_neither_the_files_nor_the_push() {
    // `tlsping --csv ... | head -1`: stdout fails at the second row, mid-run.
    // The metrics file and the picture are still written and the push still
    // goes, with the figures of what was measured.
    let (gateway, rx) = support::prometheus::answering_stand_in(1);
    let dir = support::TempDir::new("head");
    let metrics = dir.path().join("m.prom");
    let picture = dir.path().join("p.svg");
    let server = start(ServerOpts::default());
    let mut child = spawn(&[
        "--csv",
        "-n",
        "5",
        "-i",
        "200ms",
        "--openmetrics",
        support::path_str(&metrics),
        "--svg",
        support::path_str(&picture),
        "--push",
        &gateway,
        &server.url(),
    ]);
    let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut header = String::new();
    let read = lines.read_line(&mut header);
    if read.is_err() || !header.starts_with("round,mode") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("first line: {read:?} {header:?}");
    }
    drop(lines);
    let out = wait_bounded(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(stderr(&out), "", "a closed stdout is no error");
    let text = std::fs::read_to_string(&metrics).expect("the metrics file was written");
    assert!(text.contains("tlsping_rounds"), "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(std::fs::read_to_string(&picture)
        .expect("the picture was written")
        .contains("</svg>"));
    let pushed = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the push went out");
    assert!(pushed.contains("tlsping_run_exit_code"), "{pushed}");
    // Stopped early: fewer than the 5 rounds ran.
    let seen = server.counters.snapshot();
    assert!(seen.requests < 11, "{seen:?}");
}

#[test]
fn a_second_ctrl_c_leaves_at_once() {
    // The first Ctrl+C cannot finish a run stuck writing its output; the
    // second must end it at once.
    let server = start(ServerOpts::default());
    let mut child = blocked_on_its_output(&server);
    sigint(&child);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        matches!(child.try_wait(), Ok(None)),
        "the first Ctrl+C cannot finish a blocked run"
    );
    let sent = Instant::now();
    sigint(&child);
    let status = exit_within(
        &mut child,
        Duration::from_secs(4),
        "a second Ctrl+C did not end the run",
    );
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_millis(500),
        "{:?}",
        sent.elapsed()
    );
}

#[test]
fn a_reader_that_leaves_after_round_one_is_no_error_in_any_format() {
    // `tlsping ... | head -1` for each format that streams: the rounds stop,
    // nothing is said, and the run exits with what its rounds earned (0
    // here). `--jsonl` once hid the broken pipe inside a serialisation error
    // and said "could not write the output: Broken pipe", exit 2.
    let server = start(ServerOpts::default());
    let url = server.url();
    for format in [None, Some("--csv"), Some("--jsonl")] {
        let mut args = vec!["-n", "5", "-i", "200ms"];
        args.extend(format);
        args.push(&url);
        let mut child = spawn(&args);
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped"));
        // Up to round 1's first row (the header before it is written at the
        // start: a reader gone before it left before round 1).
        let row = |l: &str| {
            l.starts_with("   1 |") || l.starts_with("1,") || l.contains(r#""type":"sample""#)
        };
        let mut seen = false;
        for _ in 0..20 {
            let mut line = String::new();
            if !matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
                break;
            }
            if row(&line) {
                seen = true;
                break;
            }
        }
        drop(lines);
        let out = wait_bounded(child, Duration::from_secs(15));
        assert!(seen, "{format:?}: no row of round 1");
        assert_eq!(out.status.code(), Some(0), "{format:?}: {}", show(&out));
        assert_eq!(
            stderr(&out),
            "",
            "{format:?}: a reader that left is no error"
        );
    }
}

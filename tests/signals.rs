//! Ending a run from outside, through the real binary on 127.0.0.1: Ctrl+C
//! and SIGTERM end it with its statistics, an ignored SIGHUP stays ignored,
//! a second Ctrl+C leaves at once, a probe in flight is canceled, and a
//! reader that closes stdout ends it with exit 2. No wait outlives the
//! first signal: a stdout nobody reads, a push under way, a FIFO named as
//! a file to read.
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;
#[path = "support/synthetic.rs"]
mod synthetic;

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

/// The run-wide series (those without labels) of the metrics file at
/// `path`, by name; a file that was not written fails the test.
fn run_series(path: &std::path::Path) -> impl Fn(&str) -> Option<f64> {
    let text = std::fs::read_to_string(path).expect("the metrics file was written");
    let series = support::prometheus::parse(&text);
    move |name| support::prometheus::value_of(&series, name, &[])
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
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) };
    assert_eq!(rc, 0);
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
    let url = server.url();
    let mut args = vec!["--csv", "-m", "warm", "-n", "0", "-i", "200ms"];
    args.extend_from_slice(more);
    args.push(&url);
    let mut child = spawn(&args);
    let pipe = child.stdout.as_ref().expect("piped stdout").as_raw_fd();
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

/// A run of `args` (`-w 5s` and the server's URL added) against a server
/// whose connections after the first `ok_first` take the request and hang,
/// sent Ctrl+C 200 ms into the first hang (once the server has seen
/// `requests` requests): its output, and how long it took to end after.
fn ctrl_c_during_a_hang(ok_first: usize, requests: usize, args: &[&str]) -> (Output, Duration) {
    let server = start_faulty(FaultOpts {
        ok_first,
        fault: Fault::Hang,
        ..Default::default()
    });
    let url = server.url();
    let mut all = args.to_vec();
    all.extend(["-w", "5s", &url]);
    let mut child = spawn(&all);
    wait_for(&mut child, "the hanging request", || {
        server.counters.faulted.load(Ordering::SeqCst) >= 1
            && server.counters.requests.load(Ordering::SeqCst) >= requests
    });
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(10));
    (out, sent.elapsed())
}

#[test]
fn ctrl_c_during_a_hung_probe_cancels_it_without_counting_a_failure() {
    // Preflight and round 1 answer; round 2's cold probe hangs until
    // Ctrl+C (for up to 5 s).
    let args = [
        "--json", "-m", "cold", "-n", "3", "--warmup", "0", "-i", "200ms",
    ];
    let (out, took) = ctrl_c_during_a_hang(2, 3, &args);
    // libcurl looks at the cancel flag about once a second while it waits.
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
    // How far it got: round 1 whole, round 2 cut while its probe ran.
    let ending = &doc["ending"];
    assert_eq!(ending["rounds_completed"], 1, "{ending}");
    assert_eq!(ending["rounds_asked"], 3, "{ending}");
    assert_eq!(ending["cut_round"], 2, "{ending}");
    assert_eq!(ending["stopped_by"], "interrupt", "{ending}");
}

#[test]
fn ctrl_c_mid_round_says_how_far_the_run_got_and_the_cut_round_shows_dashes() {
    // Preflight and round 1 answer (three connections: the preflight's,
    // round 1's cold one and the warm one, kept); round 2's cold probe,
    // first in its round, hangs until Ctrl+C: it is canceled and its warm
    // probe never runs. The header said 20 rounds: the ending must say
    // what ran, and the row of round 2 shows `-` where nothing was measured.
    let args = ["-n", "20", "--order", "cold-first", "-i", "200ms"];
    let (out, _) = ctrl_c_during_a_hang(3, 0, &args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stderr(&out).contains(
            "tlsping: interrupted (Ctrl+C) after 1 of 20 rounds; round 2 was cut short\n"
        ),
        "{}",
        show(&out)
    );
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with("   2 |"))
        .unwrap_or_else(|| panic!("no row for round 2: {text}"));
    let cells: Vec<&str> = row.split('|').collect();
    assert!(cells[1].contains("canceled"), "{row}");
    // The warm side: wait, srv and total, each `-`.
    let warm: Vec<&str> = cells[2].split_whitespace().collect();
    assert_eq!(warm, ["-", "-", "-"], "{row}");
}

#[test]
fn sigterm_mid_run_is_told_in_the_json_and_the_metrics_file() {
    // The machine outputs say how far a run a signal stopped got, beside
    // the warning on stderr: the JSON's `ending` (schema-valid) and the
    // metrics file's `tlsping_run_*` series agree with each other.
    let dir = support::TempDir::new("ending");
    let metrics = dir.path().join("m.prom");
    let server = start(ServerOpts::default());
    let mut child = spawn(&[
        "--json",
        "-n",
        "20",
        "-i",
        "200ms",
        "--openmetrics",
        support::path_str(&metrics),
        &server.url(),
    ]);
    wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 5
    });
    // SAFETY: kill(2) with the pid of a child we spawned and still own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(143), "{}", show(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", show(&out)));
    synthetic::assert_valid_document(&doc);
    let ending = &doc["ending"];
    assert_eq!(ending["stopped_by"], "terminate", "{ending}");
    assert_eq!(ending["rounds_asked"], 20, "{ending}");
    let completed = ending["rounds_completed"].as_u64().unwrap_or(0);
    assert!((2..20).contains(&completed), "{ending}");
    let said = format!("terminated (SIGTERM) after {completed} of 20 rounds");
    assert!(
        support::warnings(&doc).iter().any(|w| w.starts_with(&said)),
        "{doc:#}"
    );
    assert!(stderr(&out).contains(&said), "{}", show(&out));
    let value = run_series(&metrics);
    assert_eq!(value("tlsping_run_exit_code"), Some(143.0));
    assert_eq!(value("tlsping_run_interrupted"), Some(1.0));
    assert_eq!(value("tlsping_run_rounds_asked"), Some(20.0));
    assert_eq!(
        value("tlsping_run_rounds_completed"),
        Some(completed as f64)
    );
}

// ------------------------------------------------------------ closed stdout

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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(stderr(&out), "", "{}", show(&out));
    // Stopped at the first failed write, before the 5 rounds (preflight + 10 requests).
    let seen = server.counters.snapshot();
    assert!(seen.requests < 11, "{seen:?}");
    let value = run_series(&metrics);
    assert_eq!(value("tlsping_run_exit_code"), Some(0.0));
    assert!(value("tlsping_run_rounds_completed") < Some(5.0));
    assert_eq!(value("tlsping_run_rounds_asked"), Some(5.0));
    assert_eq!(value("tlsping_run_interrupted"), Some(0.0));
}

/// A FIFO in `dir`, nobody writing to it.
fn fifo_in(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    path
}

#[test]
fn a_fifo_named_as_a_file_to_read_is_refused_at_once() {
    // Before, each of these blocked in open() until a writer came, where
    // the first signal was ignored.
    let dir = support::TempDir::new("fifos");
    let server = start(ServerOpts::default());
    let url = server.url();
    let fifo = fifo_in(dir.path(), "fifo");
    let hashed = dir.path().join("hashed");
    std::fs::create_dir_all(&hashed).unwrap();
    fifo_in(&hashed, "0123abcd.0");
    let fifo_arg = support::path_str(&fifo);
    // (arguments, environment, what the message says)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 3] = [
        (
            vec![],
            vec![("SSL_CERT_FILE", fifo_arg)],
            "is not a regular file",
        ),
        (
            vec![],
            vec![("SSL_CERT_DIR", support::path_str(&hashed))],
            "it is a FIFO, not a regular file",
        ),
        (vec!["--cacert", fifo_arg], vec![], "not a file"),
    ];
    for (args, env, says) in cases {
        let mut all = vec!["-4", "-n", "1"];
        all.extend(args.iter().copied());
        all.push(&url);
        let mut cmd = support::command(&all);
        cmd.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_bounded(child, Duration::from_secs(10));
        assert_eq!(
            out.status.code(),
            Some(3),
            "{args:?} {env:?}: {}",
            show(&out)
        );
        assert!(
            stderr(&out).contains(says),
            "{args:?} {env:?}: {}",
            show(&out)
        );
    }
    // A client certificate may come through a pipe, but not through a
    // FIFO made with mkfifo: one with no writer would read as empty.
    let child = spawn(&["-n", "1", "--cert", fifo_arg, &url]);
    let out = wait_bounded(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains("it is a named FIFO; only a regular file or a pipe"),
        "{}",
        show(&out)
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
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

/// A listener on 127.0.0.1 that takes connections and never says a word
/// (a TLS handshake that hangs), holding each for 15 s at most. Its port,
/// and a receiver told of each connection.
fn silent_server() -> (u16, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().take(4).flatten() {
            held.push(conn);
            let _ = tx.send(());
        }
        std::thread::sleep(Duration::from_secs(15));
    });
    (port, rx)
}

#[test]
fn ctrl_c_during_a_preflight_ends_the_run_at_once_with_its_own_code() {
    // The preflight's handshake hangs (libcurl calls no progress callback
    // before a connection is up); a 30 s timeout must not hold the run.
    for compare in [None, Some("--compare=http=1.1,2")] {
        let (port, accepted) = silent_server();
        let url = format!("https://localhost:{port}/");
        let mut args = vec!["-w", "30s", "-n", "2"];
        args.extend(compare);
        args.push(&url);
        let child = spawn(&args);
        if accepted.recv_timeout(Duration::from_secs(10)).is_err() {
            let _ = wait_bounded(child, Duration::from_secs(1));
            panic!("the preflight never connected");
        }
        std::thread::sleep(Duration::from_millis(200));
        let sent = Instant::now();
        sigint(&child);
        let out = wait_bounded(child, Duration::from_secs(15));
        let took = sent.elapsed();
        assert_eq!(out.status.code(), Some(130), "{compare:?}: {}", show(&out));
        assert!(took < Duration::from_secs(2), "{compare:?}: {took:?}");
        let err = stderr(&out);
        assert!(
            err.contains("interrupted before round 1: nothing was measured"),
            "{compare:?}: {err}"
        );
        assert!(!err.contains("cannot run"), "{compare:?}: {err}");
        assert_eq!(
            accepted.try_iter().count(),
            0,
            "no second preflight after the signal"
        );
    }
}

//! Ending a run from outside, through the real binary on 127.0.0.1: Ctrl+C
//! and SIGTERM end it with its statistics, an ignored SIGHUP stays ignored,
//! a second Ctrl+C leaves at once, a probe in flight is canceled and the
//! ending says how far the run got. No wait outlives the first signal (a
//! FIFO named as a file to read, a preflight; the outputs' waits are
//! `signals_outputs.rs`'s).
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;
#[path = "support/synthetic.rs"]
mod synthetic;

use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::faults::{start_faulty, Fault, FaultOpts};
use support::spawned::{run_series, spawn, wait_bounded};
use support::{
    cacert, error_kinds, samples, show, sigint, start, stderr, stdout, wait_for, ServerOpts,
};

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
            "tlsping: warning: interrupted (Ctrl+C) after 1 of 20 rounds; round 2 was cut short\n"
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

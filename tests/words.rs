//! Words and figures a reader trips on, through the real binary against
//! real servers on loopback (or `--calibrate`'s own): the `other` warning
//! names its rounds and the flag that shows the column; the narrower
//! layouts label the total; nothing of the table is cut that the docs say
//! moves to a line of its own; a locale that is not UTF-8 gets ASCII; every
//! warning says it is one; one spelling of a group; the man page says what
//! the code does (`-h`, exit 130, `new_conn`); one round is one round; a
//! 429's `Retry-After`; `localhost` compared as it is dialled.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use support::faults::{start_faulty, Fault, FaultOpts};
use support::{cacert, command, show, start, stderr, stdout, ServerOpts};

/// `tlsping ARGS` with `env` set (on top of `support::command`'s).
fn run_with(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = command(args);
    cmd.envs(env.iter().copied());
    cmd.output().expect("running tlsping")
}

/// The round lines of a narrow layout (stacked `  #2 COLD ...`, blocks
/// `   2 dns ...`): they start with a space and carry a stage.
fn probe_lines(text: &str) -> Vec<&str> {
    let table = text.split("\n--- ").next().unwrap();
    table
        .lines()
        .filter(|l| l.starts_with(' ') && (l.contains(" dns ") || l.contains(" wait ")))
        .collect()
}

/// A plain-HTTP server on 127.0.0.1 (python3, stopped by PID when dropped)
/// that sends its headers at once and its 4-byte body 60 ms later, then
/// closes: time no stage of a cold probe accounts for.
struct SlowBody {
    child: std::process::Child,
    port: u16,
}

const SLOW_BODY: &str = r#"
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
print(s.getsockname()[1], flush=True)
born = time.time()
served = 0
while time.time() - born < 30 and served < 32:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    served += 1
    c.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        got = c.recv(4096)
        if not got:
            break
        data += got
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n")
    time.sleep(0.06)
    c.sendall(b"body")
    c.close()
"#;

impl SlowBody {
    fn start() -> SlowBody {
        let mut child = Command::new("python3")
            .args(["-c", SLOW_BODY])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the port");
        SlowBody { child, port }
    }
}

impl Drop for SlowBody {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_other_warning_names_its_rounds_and_the_flag_that_shows_the_column() {
    if !support::have("python3") {
        return;
    }
    let server = SlowBody::start();
    let url = format!("http://127.0.0.1:{}/", server.port);
    let out = run_with(
        &[],
        &[
            "-4", "-X", "GET", "-m", "cold", "-n", "3", "-i", "200ms", "-w", "5s", &url,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "tlsping: warning: 'other' is above 20% of total (and 1ms or more) in rounds \
             2 (cold) and 3 (cold): time no stage accounts for; -v shows it in every row"
        ),
        "{err}"
    );
}

#[test]
fn the_narrow_layouts_label_the_total_and_cut_no_legend() {
    for columns in ["80", "60"] {
        let out = run_with(
            &[("COLUMNS", columns)],
            &["--calibrate", "-n", "2", "-i", "200ms"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let text = stdout(&out);
        let rows = probe_lines(&text);
        assert!(rows.len() >= 4, "{columns}: {text}");
        for row in &rows {
            // `srv 0.07 = 3.24ms` read as the sum of the stages.
            assert!(row.contains(" total "), "{columns}: {row:?}\n{text}");
            assert!(!row.contains(" = "), "{columns}: {row:?}\n{text}");
        }
        assert!(
            text.lines().any(|l| l.ends_with("\"-\" = not measured")),
            "{columns}: {text}"
        );
        let width: usize = columns.parse().unwrap();
        assert!(
            text.lines().all(|l| l.chars().count() <= width),
            "{columns}: {text}"
        );
    }
}

#[test]
fn row_notes_too_long_to_fit_go_to_a_line_of_their_own() {
    // `-v --compare tls` in 80 columns: the detail line under a cold probe
    // (other, set-up, the handshake's round trips) leaves no room for its
    // notes (`warmup`), which were cut (`wa…`).
    let server = start(ServerOpts::default());
    let ca = cacert();
    let out = run_with(
        &[("COLUMNS", "80")],
        &[
            "-4",
            "--cacert",
            &ca,
            "-v",
            "--compare",
            "tls",
            "-n",
            "2",
            "-i",
            "200ms",
            "-w",
            "5s",
            &server.url(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let table = text.split("\n--- ").next().unwrap();
    let body: Vec<&str> = table.lines().filter(|l| l.starts_with(' ')).collect();
    assert!(body.iter().all(|l| !l.contains('…')), "{text}");
    assert!(body.iter().any(|l| l.trim() == "warmup"), "{text}");
}

#[test]
fn a_locale_that_is_not_utf8_gets_ascii_everywhere_in_the_table() {
    let out = run_with(
        &[("LC_ALL", "C"), ("LANG", "C"), ("COLUMNS", "120")],
        &["--calibrate", "-n", "3", "-i", "200ms", "-v"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    let odd: Vec<&str> = text.lines().filter(|l| !l.is_ascii()).collect();
    assert!(odd.is_empty(), "{odd:#?}\n{text}");
    // The facts are still set apart.
    assert!(
        text.lines().next().unwrap().contains(" | TLS1.3 | "),
        "{text}"
    );
    // And a UTF-8 locale keeps its dots.
    let out = run_with(
        &[("LC_ALL", "C.UTF-8"), ("COLUMNS", "120")],
        &["--calibrate", "-n", "2", "-i", "200ms"],
    );
    assert!(stdout(&out).contains(" · TLS1.3 · "), "{}", show(&out));
}

#[test]
fn every_warning_on_stderr_says_it_is_one() {
    // A setting warning, then one the rounds give: both prefixed, and
    // `warnings[]` keeps each without the prefix.
    let (doc, out) = support::json_output(&[
        "--json",
        "--calibrate",
        "-n",
        "1",
        "--warmup",
        "1",
        "-i",
        "50ms",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() >= 2, "{err}");
    for line in &lines {
        assert!(line.starts_with("tlsping: warning: "), "{err}");
    }
    let kept = support::warnings(&doc);
    assert!(
        kept.iter()
            .all(|w| !w.starts_with("warning") && !w.starts_with("tlsping")),
        "{kept:?}"
    );
    assert!(
        kept.contains(&"interval 50ms is below the 200ms floor; using 200ms".to_string()),
        "{kept:?}"
    );
}

#[test]
fn one_round_is_one_round() {
    let out = run_with(&[], &["--calibrate", "-n", "1", "--warmup", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = stdout(&out);
    assert!(text.contains("\n1 round, 1s interval"), "{text}");
    assert!(!text.contains("1 rounds"), "{text}");
    let err = stderr(&out);
    assert!(
        err.contains("--warmup 1 covers the only round: the statistics will be empty"),
        "{err}"
    );
}

#[test]
fn the_negotiated_group_is_spelled_as_curves_takes_it() {
    let server = start(ServerOpts::default());
    let doc =
        support::quick_json_ok(&["--curves", "X25519", "-m", "cold", "-n", "2", &server.url()]);
    assert_eq!(doc["run"]["tls_group"], "X25519", "{:#}", doc["run"]);
    assert_eq!(support::samples(&doc).len(), 2, "{doc:#}");
    for s in support::samples(&doc) {
        assert_eq!(s["tls_group"], "X25519", "{s:#}");
    }
    // The `-v` line says it so too.
    let ca = cacert();
    let out = run_with(
        &[],
        &[
            "-4",
            "--cacert",
            &ca,
            "-v",
            "--curves",
            "x25519",
            "-n",
            "2",
            "-i",
            "200ms",
            &server.url(),
        ],
    );
    let text = stdout(&out);
    let tls = text
        .lines()
        .find(|l| l.starts_with("tls                = "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(tls.contains(" · X25519 · "), "{tls}");
}

#[test]
fn the_man_page_says_what_h_does_and_what_new_conn_is() {
    let man = tlsping::cli::docs::generate(tlsping::cli::docs::Generate::Man);
    // Both print the same help: no "summary" of it.
    assert!(!man.contains("summary with"), "{man}");
    // `new_conn`: what the data holds, on a cold and a warm probe.
    let at = man.find("new_conn").expect("new_conn in the man page");
    let definition = &man[at..man[at..].find("\n.TP").map_or(man.len(), |e| at + e)];
    assert!(
        definition.contains("a warm probe had to open a connection"),
        "{definition}"
    );
    assert!(
        definition.contains("always false for a cold probe"),
        "{definition}"
    );
    let server = start(ServerOpts {
        close_each: true,
        ..Default::default()
    });
    let doc = support::quick_json_ok(&["--http-version", "1.1", "-n", "2", &server.url()]);
    // Both modes, each probe: a cold one and a warm one at least.
    for mode in ["cold", "warm"] {
        assert!(
            support::samples(&doc).iter().any(|s| s["mode"] == mode),
            "{doc:#}"
        );
    }
    for s in support::samples(&doc) {
        let want = s["mode"] == "warm";
        assert_eq!(s["new_conn"], want, "{s:#}");
    }
}

#[test]
fn ctrl_c_during_the_preflight_exits_130_as_the_man_page_says() {
    // The preflight's request goes out and is never answered.
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Hang,
        ..Default::default()
    });
    let ca = cacert();
    let mut child = command(&["-4", "--cacert", &ca, "-w", "20s", "-n", "2", &server.url()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    support::wait_for(&mut child, "the preflight's request", || {
        server
            .counters
            .requests
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
    });
    support::sigint(&child);
    let out = support::spawned::wait_bounded(child, Duration::from_secs(10));
    let status = out.status;
    assert_eq!(status.code(), Some(130));
    let man = tlsping::cli::docs::generate(tlsping::cli::docs::Generate::Man);
    assert!(man.contains("130 for Ctrl+C before round 1"), "{man}");
}

#[test]
fn a_429_names_the_wait_the_server_asked_for() {
    for (answer, says) in [
        (
            &b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 120\r\nContent-Length: 0\r\n\r\n"[..],
            "server answered 429 Too Many Requests with Retry-After 120s: stopping",
        ),
        (
            &b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: \x1b[2Jlater\r\nContent-Length: 0\r\n\r\n"[..],
            "server answered 429 Too Many Requests with a Retry-After that could not be read",
        ),
        (
            &b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n"[..],
            "server answered 429 Too Many Requests: stopping",
        ),
    ] {
        let server = start_faulty(FaultOpts {
            ok_first: 0,
            fault: Fault::Answer(answer),
            ..Default::default()
        });
        let out = support::ipv4_run(&["-n", "2", "-w", "2s", &server.url()]);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let err = stderr(&out);
        assert!(err.contains(says), "{says}: {err}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }
}

#[test]
fn localhost_is_compared_at_the_addresses_a_run_to_it_dials() {
    // Two servers on one port, on ::1 and on 127.0.0.1: libcurl gives
    // `localhost` both (::1 first), whatever the hosts file says.
    let v4 = start(ServerOpts::default());
    let port = v4.addr.port();
    let v6 = start(ServerOpts {
        ipv6: true,
        port: Some(port),
        ..Default::default()
    });
    assert_eq!(v6.addr.port(), port);
    let url = format!("https://localhost:{port}/");
    let doc = support::quick_json_ok(&["-n", "1", "--warmup", "0", &url]);
    let dialled = doc["run"]["addr"].as_str().unwrap().to_string();
    let doc = support::quick_json_ok(&["--compare", "addr", "-n", "2", &url]);
    let variants: Vec<String> = doc["run"]["compare"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["addr"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        variants,
        [format!("[::1]:{port}"), format!("127.0.0.1:{port}")],
        "{:#}",
        doc["run"]
    );
    assert_eq!(dialled, variants[0], "the run dials the first of them");
}

//! `--push` to a real Pushgateway on 127.0.0.1, scraped by a real
//! Prometheus: the figures Prometheus answers are the run's own, and the
//! PromQL recipes of docs/monitoring.md answer, a target gone down among them (in the
//! failure rate and its alert). A Pushgateway that refuses or hangs:
//! the push gives up within its timeout, the JSON is whole, and the exit
//! status is docs/monitoring.md's (a run that would exit 0 or 1 exits 2).

mod support;

use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::prometheus::{
    get, prometheus, prometheus_with_rules, pushgateway, query_eventually, read_push,
};
use support::{cacert, quick_json, show, start, stderr, ServerOpts};

/// The PromQL recipes of docs/monitoring.md's ```promql block, in order.
fn promql_recipes() -> Vec<String> {
    let text = support::docs::read("docs/monitoring.md");
    let block = support::markdown::code_blocks(&text)
        .into_iter()
        .find(|b| b.fence.as_deref() == Some("promql"))
        .expect("docs/monitoring.md has a ```promql block");
    block
        .code
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn near(a: f64, b: f64, margin: f64, what: &str) {
    assert!((a - b).abs() <= margin, "{what}: {a} against {b}");
}

/// The one series a query gives, with its value.
fn one(prom: &support::prometheus::Running, q: &str) -> (serde_json::Value, f64) {
    let found = query_eventually(prom, q, Duration::from_secs(30));
    assert_eq!(found.len(), 1, "{q}: {found:?}");
    found.into_iter().next().unwrap()
}

#[test]
fn pushed_figures_reach_prometheus_and_the_promql_recipes_answer() {
    if !support::have("prometheus") || !support::have("prometheus-pushgateway") {
        return;
    }
    let server = start(ServerOpts::default());
    let gateway = pushgateway();
    let prom = prometheus(gateway.addr, Duration::from_secs(1));
    let push = format!("http://{}", gateway.addr);
    let url = server.url();
    let args = [
        "-n",
        "6",
        "--push",
        &push,
        "--label",
        "vantage=test-1",
        &url,
    ];
    let (doc, out) = quick_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let s = &doc["summary"];
    let ms = |v: &serde_json::Value| v.as_f64().unwrap() / 1000.0;
    let median = |mode: &str| {
        let q =
            format!("tlsping_stage_seconds{{stage=\"total\",mode=\"{mode}\",quantile=\"0.5\"}}");
        one(&prom, &q)
    };
    let (labels, cold) = median("cold");
    assert_eq!(labels["job"], "tlsping");
    assert_eq!(labels["target"], url.as_str());
    assert_eq!(labels["vantage"], "test-1");
    // The JSON rounds to the microsecond.
    near(cold, ms(&s["cold"]["median_ms"]), 1e-6, "cold median");
    near(
        median("warm").1,
        ms(&s["warm"]["median_ms"]),
        1e-6,
        "warm median",
    );
    let gain = one(&prom, "tlsping_paired_gain_seconds").1;
    near(gain, ms(&s["paired_gain_ms"]), 1e-6, "paired gain");

    let recipes = promql_recipes();
    assert_eq!(recipes.len(), 5, "{recipes:?}");
    let answers: Vec<f64> = recipes.iter().map(|q| one(&prom, q).1).collect();
    // The median tls of one run is that run's median tls.
    near(answers[0], ms(&s["handshake_tls_ms"]), 1e-6, "median tls");
    near(
        answers[1],
        s["tls_setup_ms"].as_f64().unwrap() / s["handshake_tls_ms"].as_f64().unwrap(),
        0.01,
        "set-up share",
    );
    let resumed = s["tls_resumed"].as_f64().unwrap() / s["cold_samples"].as_f64().unwrap();
    near(answers[2], resumed, 1e-9, "resumed ratio");
    assert_eq!(answers[3], 0.0, "failure rate");
    near(
        answers[4],
        doc["run"]["cert_days_left"].as_f64().unwrap(),
        1.01,
        "days left",
    );
}

#[test]
fn a_target_gone_down_counts_as_failed_in_the_failure_rate_recipe_and_its_alert() {
    if !support::have("prometheus") || !support::have("prometheus-pushgateway") {
        return;
    }
    let gateway = pushgateway();
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/tlsping-alerts.yml");
    let prom = prometheus_with_rules(gateway.addr, Duration::from_secs(1), &[rules]);
    let push = format!("http://{}", gateway.addr);
    let server = start(ServerOpts::default());
    let url = server.url();
    let args = [
        "-4",
        "-n",
        "2",
        "--push",
        &push,
        "--label",
        "vantage=test-1",
        &url,
    ];
    let (_, out) = quick_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let good = r#"tlsping_loss_ratio{mode="cold"} == 0"#;
    assert_eq!(one(&prom, good).1, 0.0, "the good run, scraped");
    // The target goes down: the same URL, nothing listening on its port.
    drop(server);
    let (_, out) = quick_json(&args);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    one(&prom, "tlsping_preflight_ok == 0");
    // The failure-rate recipe of docs/monitoring.md now averages a good run's 0
    // with the failed run's 1, scrape by scrape: above 0 however many
    // scrapes each had.
    let recipe = promql_recipes()
        .into_iter()
        .find(|q| q.contains("tlsping_loss_ratio"))
        .expect("the failure-rate recipe");
    let (labels, rate) = one(&prom, &recipe);
    assert_eq!(labels["target"], url.as_str());
    assert_eq!(labels["vantage"], "test-1");
    assert!(rate > 0.0 && rate < 1.0, "{recipe}: {rate}");
    // The alert on failing connections sees it: pending (its `for:` is 15
    // minutes), with the target and the vantage point.
    let (alert, _) = one(&prom, r#"ALERTS{alertname="TlspingProbesFailing"}"#);
    assert_eq!(alert["alertstate"], "pending", "{alert}");
    assert_eq!(alert["target"], url.as_str());
    assert_eq!(alert["vantage"], "test-1");
}

#[test]
fn a_run_ended_by_ctrl_c_pushes_what_it_collected() {
    if !support::have("prometheus-pushgateway") {
        return;
    }
    let server = start(ServerOpts::default());
    let gateway = pushgateway();
    let ca = cacert();
    let push = format!("http://{}", gateway.addr);
    let url = server.url();
    let mut child = support::command(&[
        "-4", "--cacert", &ca, "-n", "0", "-i", "200ms", "--push", &push, &url,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    support::wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 6
    });
    support::sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let (_, metrics) = get(gateway.addr, "/metrics").unwrap();
    assert!(
        metrics.contains("tlsping_stage_seconds_count{") && metrics.contains("job=\"tlsping\""),
        "{metrics}"
    );
}

/// Runs two quick rounds pushing to `push`; the JSON, the run and its time.
fn run_pushing_to(push: &str) -> (serde_json::Value, std::process::Output, Duration) {
    let server = start(ServerOpts::default());
    let began = Instant::now();
    let (doc, out) = quick_json(&["-n", "2", "--push", push, &server.url()]);
    (doc, out, began.elapsed())
}

fn assert_whole_and_warned(doc: &serde_json::Value, out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(2), "{}", show(out));
    assert_eq!(doc["samples"].as_array().unwrap().len(), 4, "{doc}");
    assert!(doc["summary"]["cold"]["median_ms"].is_f64());
    assert!(
        stderr(out).contains("tlsping: warning: --push failed:"),
        "{}",
        stderr(out)
    );
}

#[test]
fn a_pushgateway_that_refuses_costs_nothing_but_the_exit_code() {
    // A port nothing listens on: what a Pushgateway that is down looks like.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (doc, out, took) = run_pushing_to(&format!("http://127.0.0.1:{port}"));
    assert_whole_and_warned(&doc, &out);
    assert!(took < Duration::from_secs(5), "{took:?}");
    // In the probes' words, once, with what to check. Before: `[7] Could
    // not connect to server (Failed to connect ...: Could not connect to server)`.
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "--push failed: conn refused (Failed to connect to 127.0.0.1:{port} after "
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "; nothing listens at that address and port: is the Pushgateway up, and is \
             that its port?\n"
        ),
        "{err}"
    );
    assert!(
        !err.contains("Could not connect") && !err.contains("[7]"),
        "{err}"
    );
}

#[test]
fn an_https_push_to_an_untrusted_gateway_points_to_ssl_cert_file() {
    // The probes trust the test CA by --cacert; the push trusts only what
    // SSL_CERT_FILE holds (another CA). Before: `[60] SSL peer certificate
    // or SSH remote key was not OK (...)`, and no word that --cacert does
    // not apply to the push.
    let dir = support::TempDir::new("push-ca");
    let other = dir.path().join("other-ca.pem");
    std::fs::write(&other, support::pki::client_ca().0.to_pem().unwrap()).unwrap();
    let server = start(ServerOpts::default());
    let gateway = start(ServerOpts::default());
    let ca = cacert();
    let out = support::command(&[
        "-4",
        "--cacert",
        &ca,
        "-n",
        "1",
        "--push",
        &gateway.url(),
        &server.url(),
    ])
    .env("SSL_CERT_FILE", &other)
    .env_remove("SSL_CERT_DIR")
    .stdin(Stdio::null())
    .output()
    .expect("running tlsping");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = stderr(&out);
    assert!(err.contains("--push failed: TLS: unknown CA ("), "{err}");
    assert!(
        err.contains(
            "--cacert and -k apply to the probes only, so name the Pushgateway's CA in \
             SSL_CERT_FILE or SSL_CERT_DIR\n"
        ),
        "{err}"
    );
    assert!(!err.contains("SSH") && !err.contains("[60]"), "{err}");
}

#[test]
fn a_pushgateway_that_never_answers_is_given_up_on_after_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Accepts and holds every connection without a byte in reply.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(4).flatten() {
            held.push(stream);
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    let (doc, out, took) = run_pushing_to(&format!("http://{addr}"));
    assert_whole_and_warned(&doc, &out);
    assert!(stderr(&out).contains("imeout"), "{}", stderr(&out));
    // Two rounds take about a second; the push waits its 5 s and no more.
    assert!(took >= Duration::from_secs(5), "{took:?}");
    assert!(took < Duration::from_secs(12), "{took:?}");
}

#[test]
fn a_pushgateway_that_answers_an_error_is_quoted_escaped() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Reads the request, then answers 400 with text a terminal would obey.
    std::thread::spawn(move || {
        use std::io::Write;
        for mut stream in listener.incoming().take(2).flatten() {
            read_push(&mut stream);
            let body = "bad \u{1b}[31mred\u{1b}[0m \u{202e}desrever";
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let (doc, out, _) = run_pushing_to(&format!("http://{addr}"));
    assert_whole_and_warned(&doc, &out);
    let err = stderr(&out);
    assert!(err.contains("the Pushgateway answered 400: bad "), "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(err.contains("desrever"), "{err}");
}

#[test]
fn a_name_server_that_never_answers_holds_the_push_no_longer_than_its_timeout() {
    // The Pushgateway's name goes to a name server (ours, in a network and
    // mount namespace of the test's own) that reads every query and answers
    // none, with the system's resolver told to wait 20 s for it. The push
    // must give up at its own 5 s and not wait for that lookup to end.
    if !support::have("unshare") || !support::have("mount") || !support::have("ip") {
        return;
    }
    let dir = support::temp::TempDir::new("push-dns");
    let resolv = dir.path().join("resolv.conf");
    std::fs::write(
        &resolv,
        "nameserver 127.0.0.1\noptions timeout:20 attempts:1\n",
    )
    .unwrap();
    let resolv = resolv.to_str().unwrap().to_string();
    let took = std::thread::spawn(move || {
        // SAFETY: unshare(2) with CLONE_NEWNET takes no pointers; it moves
        // only this thread (and what it starts from now on) to a new namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return None;
        }
        let up = std::process::Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status()
            .is_ok_and(|s| s.success());
        if !up {
            return None;
        }
        // The silent name server, for as long as this thread runs.
        let _dns = std::net::UdpSocket::bind("127.0.0.1:53").expect("port 53 in the namespace");
        let server = start(ServerOpts::default());
        let began = Instant::now();
        let out = std::process::Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$1" /etc/resolv.conf && shift && exec "$@""#)
            .arg("sh")
            .arg(&resolv)
            .arg(support::bin())
            .args(["--json", "--cacert", &cacert(), "-n", "1", "-i", "200ms"])
            .args(["--push", "http://pushgateway.test:9091", &server.url()])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("running tlsping");
        Some((out, began.elapsed()))
    })
    .join()
    .unwrap();
    let Some((out, took)) = took else {
        support::skip("cannot make a network namespace here");
        return;
    };
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(stderr(&out).contains("--push failed"), "{}", stderr(&out));
    // One round and the 5 s push; the resolver's own 20 s are not waited for.
    assert!(took < Duration::from_secs(12), "{took:?}: {}", stderr(&out));
}

#[test]
fn an_https_push_reads_the_trust_store_within_its_limit() {
    // A Pushgateway that takes the connection: the push reaches TLS, where
    // it needs the system's trust store, named here as an endless file.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).flatten().collect();
        std::thread::sleep(Duration::from_secs(20));
        drop(held);
    });
    let server = start(ServerOpts::default());
    let began = Instant::now();
    let out = std::process::Command::new(support::bin())
        .args(["--json", "--cacert", &cacert(), "-n", "1", "-i", "200ms"])
        .args(["--push", &format!("https://{addr}"), &server.url()])
        .env("SSL_CERT_FILE", "/dev/zero")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("running tlsping");
    let took = began.elapsed();
    // A device is refused at once, never read: before the run, as the
    // probes would refuse it (the push trusts what they trust).
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = stderr(&out);
    assert!(
        err.contains("SSL_CERT_FILE=/dev/zero is not a regular file"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn the_push_goes_out_when_another_output_failed() {
    // A Pushgateway stand-in that answers 200 and says what it was sent.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Write;
        if let Some(Ok(mut stream)) = listener.incoming().next() {
            let seen = read_push(&mut stream);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            let _ = tx.send(seen);
        }
    });
    let server = start(ServerOpts::default());
    // A full disk under stdout: the JSON document, written at the end,
    // fails. (A reader that closed stdout would be no failure.)
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(support::bin())
        .args(["--json", "--cacert", &cacert(), "-n", "1", "-i", "200ms"])
        .args(["--push", &format!("http://{addr}"), &server.url()])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("running tlsping");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("could not write the output: No space left on device"),
        "{}",
        stderr(&out)
    );
    let sent = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the push arrived");
    let sent = String::from_utf8_lossy(&sent);
    assert!(sent.starts_with("PUT /metrics/job/tlsping/"), "{sent}");
    assert!(sent.contains("tlsping_run_exit_code"), "{sent}");
}

//! `--compare target=URL,URL[,...]`: endpoints of their own measured in the
//! same rounds, through the real binary against in-process servers that
//! count what each of them saw, so every target is seen to get its own
//! preflight, cold connections and warm connection, and nothing of another.
//!
//! Loopback only; short runs (`-i 200ms`, a handful of rounds).

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{cacert, quick_json, quick_json_ok, samples, start, stderr, stdout, tlsping};
use support::{ServerOpts, TestServer};

/// `server`'s URL with `path` in place of `/`.
fn url_of(server: &TestServer, path: &str) -> String {
    format!("https://localhost:{}/{path}", server.addr.port())
}

/// The paths of every request `server` answered.
fn paths_seen(server: &TestServer) -> Vec<String> {
    let seen = server.counters.seen.lock().unwrap();
    seen.iter().map(|(path, _, _)| path.clone()).collect()
}

/// The paired difference of `stage` in `mode`, variant against baseline.
fn difference<'a>(doc: &'a Value, variant: &str, stage: &str, mode: &str) -> &'a Value {
    doc["summary"]["differences"]
        .as_array()
        .expect("summary.differences[]")
        .iter()
        .find(|d| d["variant"] == variant && d["stage"] == stage && d["mode"] == mode)
        .unwrap_or_else(|| panic!("no {variant} {stage} {mode}: {:#}", doc["summary"]))
}

fn labels(doc: &Value) -> Vec<&str> {
    doc["run"]["compare"]["variants"]
        .as_array()
        .expect("run.compare.variants[]")
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect()
}

/// The server this long after the run: its last connection's close, and
/// the bookkeeping of its own threads, are in.
fn settled(server: &TestServer) -> support::Snapshot {
    std::thread::sleep(Duration::from_millis(100));
    server.counters.snapshot()
}

#[test]
fn a_delayed_target_costs_its_delay_on_srv_and_each_server_sees_only_its_own() {
    let d = 40.0;
    let near = start(ServerOpts::default());
    let far = start(ServerOpts {
        delay: Some(Duration::from_millis(40)),
        ..Default::default()
    });
    let (near_url, far_url) = (url_of(&near, "near"), url_of(&far, "far"));
    let n = 8;
    let list = format!("target={near_url},{far_url}");
    let doc = quick_json_ok(&["--compare", &list, "-n", "8", "--warmup", "0"]);
    let near_label = format!("localhost:{}", near.addr.port());
    let far_label = format!("localhost:{}", far.addr.port());
    assert_eq!(doc["run"]["compare"]["axis"], "target");
    assert_eq!(labels(&doc), [near_label.as_str(), far_label.as_str()]);
    let variants = &doc["run"]["compare"]["variants"];
    assert_eq!(variants[0]["value"], near_url.as_str(), "{variants:#}");
    assert_eq!(variants[1]["value"], far_url.as_str(), "{variants:#}");
    assert_eq!(
        doc["run"]["url"],
        near_url.as_str(),
        "the first is the run's"
    );
    for label in [&near_label, &far_label] {
        let mine = samples(&doc).iter().filter(|s| s["variant"] == **label);
        assert_eq!(mine.count(), 2 * n, "{label}: cold and warm every round");
    }
    // The far server answers every request one delay later: on srv, the
    // difference is that delay, cold and warm, with an interval above 0.
    for mode in ["cold", "warm"] {
        let srv = difference(&doc, &far_label, "srv", mode);
        assert_eq!(srv["against"], near_label.as_str(), "{srv:#}");
        let median = srv["median_ms"].as_f64().unwrap();
        assert!((0.6 * d..=1.6 * d).contains(&median), "{mode}: {srv:#}");
        let ci = srv["ci_ms"]
            .as_array()
            .unwrap_or_else(|| panic!("{mode}: {srv:#}"));
        assert!(ci[0].as_f64().unwrap() > 0.0, "{mode}: {srv:#}");
    }
    // Per target: its preflight, a connection per cold probe, one warm one;
    // and every request it answered was for its own path.
    for (server, path) in [(&near, "/near"), (&far, "/far")] {
        let seen = settled(server);
        assert_eq!(seen.tcp, 1 + n + 1, "{path}: {seen:?}");
        assert_eq!(seen.requests, 1 + 2 * n, "{path}: {seen:?}");
        let paths = paths_seen(server);
        assert!(paths.iter().all(|p| p == path), "{path}: {paths:?}");
    }
}

#[test]
fn each_target_resumes_its_own_sessions() {
    // One host and port, two paths: libcurl would offer a session it holds
    // for that host and port to either target, so only caches of their own
    // keep /b's first cold probe a full handshake after /a's have resumed.
    let server = start(ServerOpts::default());
    let list = format!("target={},{}", url_of(&server, "a"), url_of(&server, "b"));
    let doc = quick_json_ok(&["--compare", &list, "-m", "cold", "-n", "3"]);
    assert_eq!(labels(&doc), ["localhost/a", "localhost/b"], "by path");
    for label in ["localhost/a", "localhost/b"] {
        let resumed: Vec<bool> = samples(&doc)
            .iter()
            .filter(|s| s["variant"] == label)
            .map(|s| s["tls_resumed"] == true)
            .collect();
        assert_eq!(resumed, [false, true, true], "{label}");
    }
    let seen = settled(&server);
    assert_eq!((seen.tcp, seen.resumed), (2 * (1 + 3), 4), "{seen:?}");
}

#[test]
fn one_host_and_port_twice_is_labelled_by_its_path_in_every_output() {
    let server = start(ServerOpts::default());
    let list = format!(
        "target={},{}",
        url_of(&server, "a"),
        url_of(&server, "slow")
    );
    let args = ["--compare", &list, "-m", "cold", "-n", "2", "--warmup", "0"];
    let doc = quick_json_ok(&args);
    assert_eq!(labels(&doc), ["localhost/a", "localhost/slow"]);
    let tagged: Vec<&str> = samples(&doc)
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert_eq!(tagged.len(), 4);
    assert!(
        tagged.contains(&"localhost/a") && tagged.contains(&"localhost/slow"),
        "{tagged:?}"
    );
    let ca = cacert();
    let csv = tlsping(&[&["--csv", "--cacert", &ca, "-i", "200ms"], &args[..]].concat());
    assert_eq!(csv.status.code(), Some(0), "{}", stderr(&csv));
    let text = stdout(&csv);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|c| *c == "variant")
        .expect("variant");
    let tags: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap())
        .collect();
    for label in ["localhost/a", "localhost/slow"] {
        let n = tags.iter().filter(|t| **t == label).count();
        assert_eq!(n, 2, "{label}: {text}");
    }
    let table = tlsping(&[&["--cacert", &ca, "-i", "200ms"], &args[..]].concat());
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let text = stdout(&table);
    for line in [
        "compare target: localhost/a, localhost/slow",
        "--- localhost/a statistics ---",
        "--- localhost/slow statistics ---",
        "--- target compared with localhost/a, round by round ---",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
}

/// Every series of `file` for a `--compare target=` run over `list`.
fn target_series(list: &str, file: &std::path::Path) -> (Value, Vec<support::prometheus::Series>) {
    let (doc, out) = quick_json(&[
        "--compare",
        list,
        "-n",
        "2",
        "--openmetrics",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let series = support::prometheus::parse(&std::fs::read_to_string(file).unwrap());
    (doc, series)
}

#[test]
fn each_targets_series_carry_its_own_url_and_keep_it_when_the_list_is_reordered() {
    let server = start(ServerOpts::default());
    let (fast, slow) = (url_of(&server, ""), url_of(&server, "slow"));
    let dir = support::temp::TempDir::new("compare-target-urls");
    let file = dir.path().join("run.prom");
    // Each order: the run's `target` is the first URL listed (the push's
    // group); every series of a variant names that variant's own URL.
    let mut by_url = Vec::new();
    for (first, second) in [(&fast, &slow), (&slow, &fast)] {
        let (doc, series) = target_series(&format!("target={first},{second}"), &file);
        let variants = doc["run"]["compare"]["variants"].as_array().unwrap();
        let url_of_label = |label: &str| {
            let v = variants.iter().find(|v| v["label"] == label);
            v.unwrap_or_else(|| panic!("no variant {label}"))["value"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let mut per_variant = 0;
        for s in &series {
            assert_eq!(s.label("target"), Some(first.as_str()), "{s:?}");
            let Some(label) = s.label("variant") else {
                assert_eq!(s.label("variant_target"), None, "{s:?}");
                continue;
            };
            per_variant += 1;
            assert_eq!(
                s.label("variant_target"),
                Some(url_of_label(label).as_str()),
                "{s:?}"
            );
        }
        assert!(per_variant > 20, "{series:?}");
        // One connection_info per target, each with its own URL.
        let infos: Vec<_> = series
            .iter()
            .filter(|s| s.name == "tlsping_connection_info")
            .map(|s| s.label("variant_target").unwrap().to_string())
            .collect();
        assert_eq!(infos.len(), 2, "{series:?}");
        assert!(infos.contains(first) && infos.contains(second), "{infos:?}");
        let rounds: Vec<(String, String)> = series
            .iter()
            .filter(|s| s.name == "tlsping_rounds")
            .map(|s| {
                let label = s.label("variant").unwrap().to_string();
                (s.label("variant_target").unwrap().to_string(), label)
            })
            .collect();
        by_url.push({
            let mut r = rounds;
            r.sort();
            r
        });
    }
    // The label follows the URL, not its place in the list.
    assert_eq!(
        by_url[0],
        [
            (fast.clone(), "localhost/".to_string()),
            (slow.clone(), "localhost/slow".to_string())
        ]
    );
    assert_eq!(by_url[0], by_url[1]);
}

#[test]
fn a_pushgateway_keeps_each_targets_own_url() {
    // The Pushgateway sets the group's labels on every series it stores,
    // over any value the series brought: each target's URL survives the
    // push only under a name of its own.
    if !support::have("prometheus-pushgateway") {
        return;
    }
    let gateway = support::prometheus::pushgateway();
    let (one, two) = (start(ServerOpts::default()), start(ServerOpts::default()));
    let (a, b) = (one.url(), url_of(&two, "slow"));
    let push = format!("http://{}", gateway.addr);
    let list = format!("target={a},{b}");
    let (_, out) = quick_json(&["--compare", &list, "-n", "2", "--push", &push]);
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let (code, body) = support::prometheus::get(gateway.addr, "/metrics").unwrap();
    assert_eq!(code, 200, "{body}");
    let series = support::prometheus::parse(&body);
    let ours: Vec<_> = series
        .iter()
        .filter(|s| s.name == "tlsping_rounds")
        .collect();
    assert_eq!(ours.len(), 2, "{body}");
    for s in &ours {
        assert_eq!(s.label("target"), Some(a.as_str()), "{s:?}");
    }
    let mut urls: Vec<&str> = ours
        .iter()
        .map(|s| s.label("variant_target").unwrap())
        .collect();
    urls.sort();
    let mut want = [a.as_str(), b.as_str()];
    want.sort();
    assert_eq!(urls, want);
}

#[test]
fn a_target_whose_preflight_fails_is_named_and_the_others_go_on() {
    let server = start(ServerOpts::default());
    // A port nothing listens on any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("https://127.0.0.1:{}/", closed.local_addr().unwrap().port());
    drop(closed);
    let list = format!("target={},{dead}", server.url());
    let (doc, out) = quick_json(&["--compare", &list, "-m", "cold", "-n", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    // A single run's words, with the URL of the target that failed.
    let words = format!("preflight to {dead} failed: ");
    assert_eq!(err.matches(&words).count(), 1, "{err}");
    let variants = &doc["run"]["compare"]["variants"];
    assert_eq!(variants[1]["available"], false, "{variants:#}");
    assert_eq!(doc["run"]["compare"]["probes_per_round"], 1);
    assert_eq!(samples(&doc).len(), 2);
}

#[test]
fn a_bad_list_is_a_usage_error_before_any_connection() {
    let server = start(ServerOpts::default());
    let u = server.url();
    let nine = vec![u.clone(); 9]
        .iter()
        .enumerate()
        .map(|(i, u)| format!("{u}{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let cases: [(Vec<String>, &str); 7] = [
        (vec![format!("target={u}")], "needs at least two values"),
        (vec![format!("target={nine}")], "at most 8 values"),
        (
            vec![format!("target={u},ftp://localhost/")],
            "--compare target: scheme 'ftp' is not supported",
        ),
        (
            vec![format!("target=https://a.test:99999/,{u}")],
            "--compare target: 'https://a.test:99999/' is not a valid host or URL",
        ),
        (vec![format!("target={u},{u}")], "is listed twice"),
        (vec!["target".into()], "--compare target needs its values"),
        (
            vec![format!("target={u},{u}x"), u.clone()],
            "varies what the positional target",
        ),
    ];
    for (args, words) in &cases {
        let mut all = vec!["--cacert".to_string(), cacert(), "--compare".into()];
        all.extend(args.iter().cloned());
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = tlsping(&all);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    let calibrating = tlsping(&["--calibrate", "--compare", &format!("target={u},{u}x")]);
    assert_eq!(
        calibrating.status.code(),
        Some(3),
        "{}",
        stderr(&calibrating)
    );
    assert!(stderr(&calibrating).contains("--calibrate"));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.counters.snapshot().tcp, 0, "no connection at all");
}

#[test]
fn cache_busting_asks_each_target_for_its_own_path() {
    let (one, two) = (start(ServerOpts::default()), start(ServerOpts::default()));
    let list = format!("target={},{}", url_of(&one, "one"), url_of(&two, "two"));
    quick_json_ok(&["--compare", &list, "--cache-bust", "-n", "2"]);
    for (server, path) in [(&one, "/one"), (&two, "/two")] {
        let paths = paths_seen(server);
        // The preflight's, then two cold and two warm requests with `?_=<seq>`.
        assert_eq!(paths.len(), 5, "{path}: {paths:?}");
        let busted = paths
            .iter()
            .filter(|p| p.starts_with(&format!("{path}?_=")));
        assert_eq!(busted.count(), 4, "{path}: {paths:?}");
        assert!(
            paths.iter().all(|p| p.starts_with(path)),
            "{path}: {paths:?}"
        );
    }
}

#[test]
fn the_metrics_of_a_run_whose_first_target_is_down_keep_its_name() {
    // The group a push replaces is named by the first target listed, not by
    // the first one that could run; the one that is down says so.
    let server = start(ServerOpts::default());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("https://127.0.0.1:{}/", closed.local_addr().unwrap().port());
    drop(closed);
    let dir = support::temp::TempDir::new("compare-target-metrics");
    let file = dir.path().join("run.prom");
    let list = format!("target={dead},{}", server.url());
    let (doc, out) = quick_json(&[
        "--compare",
        &list,
        "-m",
        "cold",
        "-n",
        "2",
        "--openmetrics",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let variants = &doc["run"]["compare"]["variants"];
    let label = |i: usize| variants[i]["label"].as_str().unwrap().to_string();
    let series = support::prometheus::parse(&std::fs::read_to_string(&file).unwrap());
    assert!(!series.is_empty());
    for s in &series {
        assert_eq!(s.label("target"), Some(dead.as_str()), "{}", s.name);
    }
    let ok = |variant: &str| {
        support::prometheus::value_of(&series, "tlsping_preflight_ok", &[("variant", variant)])
    };
    assert_eq!(ok(&label(0)), Some(0.0), "the target that is down");
    assert_eq!(ok(&label(1)), Some(1.0), "the one that ran");
}

#[test]
fn each_targets_certificate_is_told_and_exported_under_its_label() {
    // The second endpoint's certificate has expired (accepted with -k): its
    // own warning and its own notAfter, not the first endpoint's.
    let good = start(ServerOpts::default());
    let expired = start(ServerOpts {
        cert: support::CertKind::Expired,
        ..Default::default()
    });
    let dir = support::temp::TempDir::new("compare-target-certs");
    let file = dir.path().join("run.prom");
    let list = format!("target={},{}", good.url(), expired.url());
    let (doc, out) = quick_json(&[
        "--compare",
        &list,
        "-k",
        "-m",
        "cold",
        "-n",
        "1",
        "--openmetrics",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let labels = labels(&doc);
    let warned = format!("{}: ", labels[1]);
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.contains(&warned) && l.contains("expired")),
        "{err}"
    );
    assert!(!err.contains(&format!("{}: ", labels[0])), "{err}");
    let series = support::prometheus::parse(&std::fs::read_to_string(&file).unwrap());
    let not_after = |variant: &str| {
        support::prometheus::value_of(
            &series,
            "tlsping_cert_not_after_timestamp_seconds",
            &[("variant", variant)],
        )
        .unwrap_or_else(|| panic!("no notAfter for {variant}"))
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(not_after(labels[0]) > now, "the good one is valid");
    assert!(not_after(labels[1]) < now, "the expired one is past");
}

/// A server whose answers from its `from`-th request on (the preflight is
/// the 0th) are 503 with `Retry-After: 7`.
fn backing_off_from(from: usize) -> TestServer {
    start(ServerOpts {
        status_from: Some((from, 503)),
        headers: vec![("retry-after".into(), "7".into())],
        ..Default::default()
    })
}

/// The `tlsping_rounds` of each variant in `file`, by its URL.
fn rounds_by_url(file: &std::path::Path) -> Vec<(String, f64)> {
    let series = support::prometheus::parse(&std::fs::read_to_string(file).unwrap());
    series
        .iter()
        .filter(|s| s.name == "tlsping_rounds")
        .map(|s| (s.label("variant_target").unwrap().to_string(), s.value))
        .collect()
}

#[test]
fn a_target_asked_to_back_off_stops_alone_named_and_the_other_goes_on() {
    let healthy = start(ServerOpts::default());
    // Its preflight and round 1's two probes answered, then 503s.
    let backing_off = backing_off_from(3);
    let (h, b) = (healthy.url(), url_of(&backing_off, "busy"));
    let dir = support::temp::TempDir::new("compare-target-backoff");
    let file = dir.path().join("run.prom");
    let list = format!("target={h},{b}");
    let n = 5;
    let (doc, out) = quick_json(&[
        "--compare",
        &list,
        "-n",
        "5",
        "--openmetrics",
        file.to_str().unwrap(),
    ]);
    // A 503 is a response: what the probes got earns the exit code, as in
    // a run a valve stopped; the warning says which target stopped and why.
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let busy = labels(&doc)[1].to_string();
    let err = stderr(&out);
    let said = format!(
        "tlsping: warning: --compare target: {busy}: server answered 503 with Retry-After 7s: it is \
         left out of the rounds that remain, it asked clients to back off\n"
    );
    assert_eq!(err.matches(&said).count(), 1, "{err}");
    assert!(
        support::stop_warnings(&doc).is_empty(),
        "the run went on: {err}"
    );
    let of = |label: &str| {
        samples(&doc)
            .iter()
            .filter(|s| s["variant"] == label)
            .count()
    };
    assert_eq!(
        of(labels(&doc)[0]),
        2 * n,
        "the healthy one ran every round"
    );
    assert_eq!(of(&busy), 3, "up to its 503, then no more");
    assert_eq!(settled(&backing_off).requests, 4, "nothing after the 503");
    // Each target's figures under its own URL: the healthy one's every
    // round past the warmup, the other's the one round it had.
    let rounds = rounds_by_url(&file);
    let of_url = |url: &str| rounds.iter().find(|(u, _)| u == url).map(|r| r.1);
    assert_eq!(of_url(&h), Some((n - 1) as f64), "{rounds:?}");
    assert_eq!(of_url(&b), Some(1.0), "{rounds:?}");
}

#[test]
fn targets_all_asked_to_back_off_stop_the_run_each_named() {
    let (one, two) = (backing_off_from(2), backing_off_from(2));
    let list = format!("target={},{}", one.url(), url_of(&two, "two"));
    let (doc, out) = quick_json(&["--compare", &list, "-n", "4"]);
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let err = stderr(&out);
    for label in labels(&doc) {
        let said = format!("--compare target: {label}: server answered 503");
        assert_eq!(err.matches(&said).count(), 1, "{label}: {err}");
    }
    assert_eq!(
        support::stop_warnings(&doc),
        ["every variant is left out of the rounds (see above): stopping"]
    );
    for server in [&one, &two] {
        assert_eq!(settled(server).requests, 3, "preflight, one 200, one 503");
    }
}

#[test]
fn a_target_asked_to_back_off_at_its_preflight_cannot_run_and_the_others_go_on() {
    let healthy = start(ServerOpts::default());
    let limited = start(ServerOpts {
        status: 429,
        ..Default::default()
    });
    let list = format!("target={},{}", limited.url(), healthy.url());
    let n = 3;
    let (doc, out) = quick_json(&["--compare", &list, "-n", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let limited_label = labels(&doc)[0].to_string();
    let err = stderr(&out);
    let said = format!(
        "tlsping: warning: --compare target: {limited_label} cannot run: server answered 429 Too Many \
         Requests to its preflight: it is left out to respect its rate limit\n"
    );
    assert_eq!(err.matches(&said).count(), 1, "{err}");
    let variants = &doc["run"]["compare"]["variants"];
    assert_eq!(variants[0]["available"], false, "{variants:#}");
    assert_eq!(variants[1]["available"], true, "{variants:#}");
    assert_eq!(samples(&doc).len(), 2 * n, "the other one ran every round");
    assert_eq!(settled(&limited).requests, 1, "only its preflight");
}

//! `--openmetrics` and `--label` through the real binary on 127.0.0.1: the
//! exposition of a plain run, a `--compare` run, a run that failed at its
//! preflight (a total loss), a run with labels and one Ctrl+C ended, each
//! accepted by `promtool check metrics` and read back by an independent
//! parser; labels Prometheus would refuse end the run before any connection
//! (exit 3). docs/monitoring.md (both editions) names every alert of the
//! rules file.

mod support;

use std::os::unix::fs::MetadataExt;
use std::process::Stdio;

use support::prometheus::{parse, promtool_check, value_of, Series};
use support::{cacert, quick_json, show, start, stderr, ServerOpts, TempDir};

/// The exposition `promtool` must accept, parsed.
fn checked(text: &str) -> Vec<Series> {
    assert!(text.ends_with("# EOF\n"), "no # EOF at the end:\n{text}");
    let (ok, said) = promtool_check(text);
    assert!(ok, "promtool check metrics refused it: {said}\n{text}");
    assert!(
        said.trim().is_empty(),
        "promtool had remarks: {said}\n{text}"
    );
    parse(text)
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Seconds in the exposition against milliseconds (3 decimals) in JSON.
fn close(secs: Option<f64>, ms: &serde_json::Value, what: &str) {
    let secs = secs.unwrap_or_else(|| panic!("{what}: no series"));
    let ms = ms
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not in the JSON"));
    assert!(
        (secs * 1000.0 - ms).abs() <= 0.0006,
        "{what}: {secs} s against {ms} ms"
    );
}

#[test]
fn a_plain_run_has_the_figures_of_its_json_and_promtool_accepts_them() {
    if !support::have("promtool") {
        return;
    }
    let server = start(ServerOpts::default());
    let dir = TempDir::new("openmetrics-1");
    let file = dir.path().join("tlsping.prom");
    let file_arg = file.to_str().unwrap();
    // Seven timed rounds: enough for the 95 % intervals (six at least).
    let (doc, out) = quick_json(&["-n", "8", "--openmetrics", file_arg, &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let series = checked(&read(&file));
    let s = &doc["summary"];
    let stage = |stage, mode, q| {
        value_of(
            &series,
            "tlsping_stage_seconds",
            &[("stage", stage), ("mode", mode), ("quantile", q)],
        )
    };
    close(
        stage("total", "cold", "0.5"),
        &s["cold"]["median_ms"],
        "cold total",
    );
    close(
        stage("total", "warm", "0.5"),
        &s["warm"]["median_ms"],
        "warm total",
    );
    assert_eq!(stage("total", "cold", "0.95"), None, "p95 needs 20 values");
    close(
        value_of(&series, "tlsping_paired_gain_seconds", &[]),
        &s["paired_gain_ms"],
        "paired gain",
    );
    close(
        value_of(&series, "tlsping_handshake_overhead_seconds", &[]),
        &s["handshake_overhead_ms"],
        "handshake overhead",
    );
    for (name, ci) in [
        ("paired_gain", "paired_gain_ci_ms"),
        ("handshake_overhead", "handshake_overhead_ci_ms"),
    ] {
        for (end, at) in [("low", 0), ("high", 1)] {
            let gauge = format!("tlsping_{name}_{end}_seconds");
            close(value_of(&series, &gauge, &[]), &s[ci][at], &gauge);
        }
    }
    let count = value_of(
        &series,
        "tlsping_stage_seconds_count",
        &[("stage", "total"), ("mode", "cold")],
    );
    assert_eq!(count, s["cold"]["n"].as_f64());
    let loss = value_of(&series, "tlsping_loss_ratio", &[("mode", "cold")]);
    assert_eq!(loss, Some(0.0));
    assert_eq!(value_of(&series, "tlsping_run_exit_code", &[]), Some(0.0));
    assert_eq!(value_of(&series, "tlsping_preflight_ok", &[]), Some(1.0));
    let info = series
        .iter()
        .find(|x| x.name == "tlsping_connection_info")
        .expect("connection info");
    assert_eq!(info.label("address"), Some("127.0.0.1"));
    assert_eq!(info.label("tls_version"), Some("TLS1.3"));
    // Every series carries the target; the certificate's notAfter is a
    // Unix time in the test certificate's years of validity.
    assert!(series
        .iter()
        .all(|x| x.label("target") == Some(&server.url())));
    let not_after = value_of(&series, "tlsping_cert_not_after_timestamp_seconds", &[]).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let days_left = doc["run"]["cert_days_left"].as_f64().unwrap();
    assert!(
        ((not_after - now) / 86_400.0 - days_left).abs() < 1.01,
        "{not_after}"
    );
}

#[test]
fn a_compare_run_labels_each_variant() {
    if !support::have("promtool") {
        return;
    }
    let server = start(ServerOpts::default());
    let dir = TempDir::new("openmetrics-2");
    let file = dir.path().join("compare.prom");
    let args = [
        "--compare",
        "tls",
        "--resume",
        "off",
        "-m",
        "cold",
        "-n",
        "3",
    ];
    let mut all: Vec<&str> = args.to_vec();
    let url = server.url();
    all.extend(["--openmetrics", file.to_str().unwrap(), &url]);
    let (doc, out) = quick_json(&all);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let series = checked(&read(&file));
    for variant in doc["summary"]["variants"].as_array().unwrap() {
        let label = variant["label"].as_str().unwrap();
        let median = value_of(
            &series,
            "tlsping_stage_seconds",
            &[
                ("stage", "total"),
                ("mode", "cold"),
                ("quantile", "0.5"),
                ("variant", label),
            ],
        );
        close(median, &variant["cold"]["median_ms"], label);
    }
    let difference = doc["summary"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["stage"] == "total")
        .unwrap();
    let stage_total = [("stage", "total"), ("mode", "cold")];
    close(
        value_of(&series, "tlsping_variant_difference_seconds", &stage_total),
        &difference["median_ms"],
        "difference",
    );
}

#[test]
fn a_run_that_failed_at_its_preflight_still_writes_what_it_knows() {
    if !support::have("promtool") {
        return;
    }
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = TempDir::new("openmetrics-3");
    let file = dir.path().join("failed.prom");
    let out = support::ipv4_run(&[
        "-n",
        "2",
        "--openmetrics",
        file.to_str().unwrap(),
        &format!("https://127.0.0.1:{port}/"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let series = checked(&read(&file));
    assert_eq!(value_of(&series, "tlsping_run_exit_code", &[]), Some(2.0));
    // A target that is down keeps a series: a pushed group loses none.
    assert_eq!(value_of(&series, "tlsping_preflight_ok", &[]), Some(0.0));
    // A run that reached nothing is a total loss in both modes it asked
    // for (no probe sent), so a failure rate counts it.
    for mode in ["cold", "warm"] {
        let loss = value_of(&series, "tlsping_loss_ratio", &[("mode", mode)]);
        assert_eq!(loss, Some(1.0), "{mode}");
        let sent = value_of(&series, "tlsping_probes_sent", &[("mode", mode)]);
        assert_eq!(sent, Some(0.0), "{mode}");
    }
    assert!(value_of(&series, "tlsping_run_timestamp_seconds", &[]).is_some());
    assert!(!series
        .iter()
        .any(|x| x.name.starts_with("tlsping_stage_seconds")));
}

#[test]
fn label_values_are_escaped_and_read_back_whole() {
    if !support::have("promtool") {
        return;
    }
    let server = start(ServerOpts::default());
    let hostile = "fra \"1\"\\x\nnext";
    let ca = cacert();
    let out = support::tlsping(&[
        "--cacert",
        &ca,
        "-n",
        "2",
        "-i",
        "200ms",
        "--openmetrics",
        "-",
        "--label",
        &format!("vantage={hostile}"),
        "--label",
        "dc=b",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(r#"vantage="fra \"1\"\\x\nnext""#), "{text}");
    let series = checked(&text);
    assert!(!series.is_empty());
    for s in &series {
        assert_eq!(s.label("vantage"), Some(hostile), "{s:?}");
        assert_eq!(s.label("dc"), Some("b"), "{s:?}");
    }
}

#[test]
fn labels_prometheus_would_refuse_end_the_run_before_any_connection() {
    let server = start(ServerOpts::default());
    let cases: [&[&str]; 6] = [
        &["--label", "1vantage=a"],
        &["--label", "van-tage=a"],
        &["--label", "__name=a"],
        &["--label", "target=a"],
        &["--label", "a=1", "--label", "a=2"],
        &["--label", "a"],
    ];
    for labels in cases {
        let mut args = vec!["-n", "1", "--openmetrics", "-"];
        args.extend_from_slice(labels);
        let url = server.url();
        args.push(&url);
        let out = support::ipv4_run(&args);
        assert_eq!(out.status.code(), Some(3), "{labels:?}: {}", show(&out));
        assert!(out.stdout.is_empty(), "{labels:?}");
        assert!(stderr(&out).contains("--label"), "{}", stderr(&out));
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "a refused run dialled");
    let out = support::ipv4_run(&["--openmetrics", "-", "--json", &server.url()]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let out = support::ipv4_run(&["--label", "a=b", &server.url()]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert_eq!(server.counters.snapshot().tcp, 0);
    // The same flags with a name Prometheus takes: the run goes ahead.
    let url = server.url();
    let ok = [
        "-n",
        "1",
        "-i",
        "200ms",
        "--openmetrics",
        "-",
        "--label",
        "a=1",
        &url,
    ];
    let out = support::ipv4_run(&ok);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(support::stdout(&out).contains(r#"a="1""#));
}

#[test]
fn the_file_is_replaced_by_a_rename_and_no_temporary_is_left() {
    let server = start(ServerOpts::default());
    let dir = TempDir::new("openmetrics-4");
    let file = dir.path().join("tlsping.prom");
    std::fs::write(&file, "old\n").unwrap();
    let before = std::fs::metadata(&file).unwrap().ino();
    let out = support::ipv4_run(&[
        "-n",
        "2",
        "-i",
        "200ms",
        "--openmetrics",
        file.to_str().unwrap(),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // A rename puts a new inode at the name; a rewrite in place keeps the old.
    assert_ne!(std::fs::metadata(&file).unwrap().ino(), before);
    assert!(read(&file).ends_with("# EOF\n"));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from("tlsping.prom")]);
}

#[test]
fn a_run_ended_by_ctrl_c_writes_the_figures_it_collected() {
    if !support::have("promtool") {
        return;
    }
    let server = start(ServerOpts::default());
    let dir = TempDir::new("openmetrics-5");
    let file = dir.path().join("interrupted.prom");
    let ca = cacert();
    let mut child = support::command(&[
        "-4",
        "--cacert",
        &ca,
        "-n",
        "0",
        "-i",
        "200ms",
        "--warmup",
        "0",
        "--jsonl",
        "--openmetrics",
        file.to_str().unwrap(),
        &server.url(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    support::wait_for(&mut child, "two rounds", || {
        server.counters.snapshot().requests >= 6
    });
    support::sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let samples = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"type\":\"sample\""))
        .count();
    assert!(samples >= 4, "{samples} samples");
    let series = checked(&read(&file));
    let sent: f64 = ["cold", "warm"]
        .iter()
        .filter_map(|m| value_of(&series, "tlsping_probes_sent", &[("mode", m)]))
        .sum();
    assert!(sent >= 4.0 && sent <= samples as f64, "{sent} of {samples}");
}

#[test]
fn the_alerting_rules_pass_promtool() {
    if !support::have("promtool") {
        return;
    }
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/tlsping-alerts.yml");
    let out = std::process::Command::new("promtool")
        .args(["check", "rules", rules])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("SUCCESS: 5 rules found"), "{said}");
}

/// docs/monitoring.md (both editions) names every alert of the rules file,
/// so a reader knows what each one watches.
#[test]
fn the_docs_name_every_alert_of_the_rules_file() {
    let rules = include_str!("../contrib/tlsping-alerts.yml");
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    assert_eq!(alerts.len(), 5, "{alerts:?}");
    for name in ["docs/monitoring.md", "docs/ko/monitoring.md"] {
        let text = support::docs::read(name);
        for alert in &alerts {
            assert!(
                text.contains(&format!("- `{alert}`: ")),
                "{name} does not list the alert {alert}"
            );
        }
    }
}

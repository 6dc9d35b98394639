//! --json and --csv from the real binary: schema, jq recipes, null rules,
//! streaming, quoting, and reading the CSV back with independent readers.

mod support;

#[path = "support/synthetic.rs"]
mod synthetic;
use std::io::Write;

use std::process::{Command, Stdio};
use tlsping::render::Output as _;

use serde_json::Value;
use support::{json_output, start, stderr, stdout, tlsping, ServerOpts};

use support::cacert;

/// `--json -n 3` against an HTTP/2 server: an ordinary successful run.
fn three_h2_rounds() -> (Value, std::process::Output) {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    json_output(&[
        "--json",
        "-n",
        "3",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ])
}

fn validate(doc: &Value) {
    synthetic::assert_valid_document(doc);
}

#[test]
fn json_document_of_an_ok_run_matches_the_schema_and_the_rules() {
    let (doc, out) = three_h2_rounds();
    assert_eq!(out.status.code(), Some(0));
    validate(&doc);
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["run"]["proto"], "h2");
    assert_eq!(doc["run"]["tls_version"], "TLS1.3");
    assert_eq!(doc["run"]["ip_pinned"], true);
    let samples = doc["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 6);
    for s in samples {
        if s["mode"] == "warm" {
            // Unmeasured is null, never 0.
            assert!(
                s["dns_ms"].is_null() && s["tcp_ms"].is_null() && s["tls_ms"].is_null(),
                "{s}"
            );
            assert!(s["wait_ms"].is_number());
        } else {
            assert!(s["wait_ms"].is_null());
            assert!(s["tls_ms"].as_f64().unwrap() > 0.0);
            // Present on every handshake: the full one sends the chain, a resumed one none.
            let chain = s["cert_chain_len"]
                .as_u64()
                .expect("a cold probe made a handshake");
            if s["tls_resumed"] == true {
                assert_eq!(chain, 0, "{s}");
            } else {
                assert!(chain >= 1, "{s}");
            }
            // The raw timers reconcile with the stages exactly.
            let c = &s["curl"];
            let tls_us = c["appconnect_us"].as_u64().unwrap() - c["connect_us"].as_u64().unwrap();
            assert!(
                (s["tls_ms"].as_f64().unwrap() * 1000.0 - tls_us as f64).abs() < 1.0,
                "{s}"
            );
        }
        if s["mode"] == "warm" && s["reused"] == true {
            assert!(
                s.get("cert_chain_len").is_none(),
                "no handshake, no chain length: {s}"
            );
            assert!(s["tls_resumed"].is_null());
        }
    }
    let sum = &doc["summary"];
    assert_eq!(sum["cold"]["n"], 2);
    assert!(sum["cold"]["p95_ms"].is_null(), "p95 is null below n = 20");
    assert!(sum["handshake_overhead_ms"].as_f64().unwrap() > 0.0);
    assert!(sum["paired_gain_ms"].is_number() && sum["keepalive_gain_ms"].is_number());
}

#[test]
fn json_aggregates_are_null_when_nothing_counts() {
    let server = start(ServerOpts::default());
    // Every round is warmup: n = 0 everywhere.
    let (doc, out) = json_output(&[
        "--json",
        "-n",
        "2",
        "--warmup",
        "2",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ]);
    validate(&doc);
    assert_eq!(
        out.status.code(),
        Some(0),
        "judged on the warmup samples, all ok"
    );
    for mode in ["cold", "warm"] {
        let m = &doc["summary"][mode];
        assert_eq!(m["n"], 0);
        for k in [
            "min_ms",
            "mean_ms",
            "median_ms",
            "max_ms",
            "mdev_ms",
            "p95_ms",
            "loss",
        ] {
            assert!(m[k].is_null(), "{mode}.{k} = {}", m[k]);
        }
    }
    assert!(doc["summary"]["handshake_overhead_ms"].is_null());
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("statistics will be empty")),
        "{warnings:?}"
    );
    assert!(stderr(&out).contains("tlsping: warning: --warmup 2 covers all 2 rounds"));
}

#[test]
fn the_readme_jq_recipes_work_verbatim() {
    if !support::have("jq") {
        return;
    }
    let (doc, _) = three_h2_rounds();
    let text = doc.to_string();
    let jq = |filter: &[&str]| {
        let mut child = Command::new("jq")
            .args(filter)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let median: f64 = jq(&[".summary.cold.median_ms"]).trim().parse().unwrap();
    assert!(median > 0.0);
    let tls: Vec<f64> = jq(&["-r", r#".samples[] | select(.mode=="cold") | .tls_ms"#])
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(tls.len(), 3);
    let overhead: f64 = jq(&[".summary.handshake_overhead_ms"])
        .trim()
        .parse()
        .unwrap();
    assert!(overhead > 0.0);
}

const HEADER: &str =
    "round,mode,warmup,dns_ms,tcp_ms,tls_ms,wait_ms,srv_ms,total_ms,other_ms,reused,\
new_conn,retries,status,proto,tls_version,alpn,tls_resumed,cert_chain_len,bytes,\
addr,body_overflow,error_kind,error";

#[test]
fn csv_has_the_original_columns_first_and_one_row_per_sample() {
    let server = start(ServerOpts::default());
    let out = tlsping(&[
        "--csv",
        "-n",
        "3",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    // The Go tlsping ends its lines in LF alone: `cut -d, -f24` on the
    // last column must not keep a `\r`.
    assert!(!text.contains('\r'), "a CR in the CSV: {text:?}");
    assert_eq!(text.lines().count(), 7, "a header and six rows, LF-ended");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(HEADER), "{first}");
    assert!(
        first[HEADER.len()..].starts_with(",curl_namelookup_us"),
        "our columns come after error"
    );
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 6);
    for r in &rows {
        if &r[1] == "warm" {
            assert_eq!(
                (&r[3], &r[4], &r[5]),
                ("", "", ""),
                "unmeasured stages are empty fields"
            );
        } else {
            let tls: f64 = r[5].parse().unwrap();
            assert!(tls > 0.0);
            assert_eq!(
                r[5].split('.').nth(1).map(str::len),
                Some(3),
                "three decimals: {}",
                &r[5]
            );
        }
        assert!(["true", "false"].contains(&&r[10]));
    }
}

#[test]
fn csv_time_first_opens_with_round_time_and_mode() {
    let server = start(ServerOpts::default());
    let out = tlsping(&[
        "--csv",
        "--csv-time-first",
        "-n",
        "2",
        "-i",
        "200ms",
        "--cacert",
        &cacert(),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("round,t_ms,at,mode,warmup,"), "{first}");
    let names: Vec<&str> = first.split(',').collect();
    assert_eq!(
        names.iter().filter(|n| ["t_ms", "at"].contains(n)).count(),
        2,
        "the time columns moved, not copied: {first}"
    );
    let table: Vec<&str> = tlsping::render::fields::csv_columns(false, true)
        .iter()
        .map(|(_, c)| c.name)
        .collect();
    assert_eq!(names, table, "every other column in its usual order");
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let width = rdr.headers().unwrap().len();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 4, "two rounds, cold and warm: {text}");
    for r in &rows {
        assert_eq!(r.len(), width, "{r:?}");
        let t: f64 = r[1].parse().unwrap_or_else(|_| panic!("t_ms {:?}", &r[1]));
        assert!(t >= 0.0, "{r:?}");
        assert!(
            humantime::parse_rfc3339(&r[2]).is_ok(),
            "at is RFC 3339: {:?}",
            &r[2]
        );
        assert!(["cold", "warm"].contains(&&r[3]), "{r:?}");
    }
}

#[test]
fn csv_rows_arrive_as_samples_finish() {
    // A long interval: the first rows must be readable while the run is still going.
    let server = start(ServerOpts::default());
    let mut child = Command::new(support::bin())
        .args([
            "--csv",
            "-n",
            "3",
            "-i",
            "3s",
            "--cacert",
            &cacert(),
            &server.url(),
        ])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let started = std::time::Instant::now();
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        lines.push(line);
    }
    let first_rows_after = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        lines[1].starts_with("1,") && lines[2].starts_with("1,"),
        "{lines:?}"
    );
    assert!(
        first_rows_after < std::time::Duration::from_millis(2900),
        "round 1's rows should not wait for round 2 ({first_rows_after:?})"
    );
}

#[test]
fn tricky_error_text_survives_quoting_for_python_and_the_csv_crate() {
    use tlsping::probe::{ErrorKind, Mode, ProbeError, Sample};
    let mut sample: Sample = synthetic::failed(1, Mode::Cold, ErrorKind::Error, 0);
    let texts = [
        "a, b \"quoted\"\nnext line",
        "=HYPERLINK(\"http://x\")",
        "-1+2",
        "@cmd",
        "plain",
    ];
    let mut buf = Vec::new();
    {
        let mut w = tlsping::render::csv::CsvStream::new(&mut buf, false);
        w.start(&synthetic::run_info()).unwrap();
        for t in texts {
            sample.error = Some(Box::new(ProbeError {
                kind: ErrorKind::Error,
                text: t.to_string(),
            }));
            w.sample(&sample).unwrap();
        }
    }
    let expect = [
        "a, b \"quoted\"\nnext line",
        "'=HYPERLINK(\"http://x\")",
        "'-1+2",
        "'@cmd",
        "plain",
    ];
    let mut rdr = csv::Reader::from_reader(buf.as_slice());
    let got: Vec<String> = rdr.records().map(|r| r.unwrap()[23].to_string()).collect();
    assert_eq!(got, expect);
    if !support::have("python3") {
        return;
    }
    let py = Command::new("python3")
        .args(["-c", "import csv,sys,json; r=list(csv.reader(sys.stdin)); print(json.dumps([x[23] for x in r[1:]]))"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is required (.ci/run installs it)");
    let mut py = py;
    py.stdin.take().unwrap().write_all(&buf).unwrap();
    let out = py.wait_with_output().unwrap();
    let from_python: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_python, expect);
}

#[test]
fn json_of_a_run_with_failures_matches_the_schema() {
    use support::faults::{start_faulty, Fault, FaultOpts};
    // Preflight and round 1 are served; later connections are reset mid-response.
    let server = start_faulty(FaultOpts {
        ok_first: 3,
        fault: Fault::ResetInResponse,
        ..Default::default()
    });
    let (doc, out) = json_output(&[
        "--json",
        "-4",
        "-n",
        "3",
        "-i",
        "200ms",
        "-w",
        "2s",
        "--cacert",
        &cacert(),
        &server.url(),
    ]);
    validate(&doc);
    assert_eq!(
        out.status.code(),
        Some(1),
        "some probes failed: {}",
        stderr(&out)
    );
    let failed: Vec<&Value> = doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["error_kind"].is_null())
        .collect();
    assert!(!failed.is_empty());
    for s in failed {
        assert_eq!(s["error_kind"], "conn_reset", "{s}");
        assert!(s["error"].as_str().is_some_and(|t| !t.is_empty()));
    }
}

#[test]
fn a_failed_preflight_still_writes_the_json_document() {
    // A port nothing listens on, and a server whose certificate we do not trust.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused = format!("https://127.0.0.1:{}/", closed.local_addr().unwrap().port());
    drop(closed);
    let untrusted = start(ServerOpts {
        cert: support::CertKind::UnknownCa,
        ..Default::default()
    });
    for (url, kind) in [
        (refused, "conn_refused"),
        (untrusted.url(), "cert_unknown_ca"),
    ] {
        let (doc, out) = json_output(&["--json", "-n", "2", "--cacert", &cacert(), &url]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        validate(&doc);
        assert_eq!(doc["run"]["preflight_error_kind"], kind, "{doc}");
        assert!(doc["run"]["preflight_error"]
            .as_str()
            .is_some_and(|t| !t.is_empty()));
        assert_eq!(doc["samples"].as_array().unwrap().len(), 0, "{doc}");
        assert_eq!(doc["summary"]["cold"]["n"], 0, "{doc}");
    }
}

#[test]
fn a_failed_preflight_writes_a_csv_preflight_row() {
    let untrusted = start(ServerOpts {
        cert: support::CertKind::UnknownCa,
        ..Default::default()
    });
    let out = support::tlsping(&["--csv", "-n", "2", "--cacert", &cacert(), &untrusted.url()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let cell = |name: &str| {
        rows[0]
            .get(headers.iter().position(|h| h == name).unwrap())
            .unwrap()
    };
    assert_eq!(cell("round"), "0");
    assert_eq!(cell("mode"), "preflight");
    assert_eq!(cell("error_kind"), "cert_unknown_ca");
    assert!(!cell("error").is_empty());
    assert_eq!(cell("total_ms"), "");
}

#[test]
fn a_preflight_stopped_by_a_safety_valve_says_why_in_json() {
    let server = start(ServerOpts {
        status: 429,
        ..Default::default()
    });
    let (doc, out) = json_output(&["--json", "-n", "2", "--cacert", &cacert(), &server.url()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    validate(&doc);
    assert_eq!(doc["run"]["preflight_status"], 429, "{doc}");
    assert_eq!(doc["run"]["preflight_error_kind"], "error", "{doc}");
    assert!(
        doc["run"]["preflight_error"]
            .as_str()
            .is_some_and(|t| t.contains("429")),
        "{doc}"
    );
    assert_eq!(doc["samples"].as_array().unwrap().len(), 0, "{doc}");
}

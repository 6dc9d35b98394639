//! `--jsonl`: lines arrive while the run goes on, every line validates
//! against its schema, the first is the run and the last the summary; the
//! line schema is the document schema's parts, kept in step by a test.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use support::{command, start, ServerOpts};

const DOCUMENT_SCHEMA: &str = include_str!("../schema/tlsping.schema.json");
const LINES_SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/schema/tlsping-jsonl.schema.json"
);

/// A line type: the document schema's object for it, with `type` (and any
/// `extra` properties) added and required.
fn line_def(base: &Value, kind: &str, extra: &[(&str, Value)]) -> Value {
    let mut def = base.clone();
    let obj = def.as_object_mut().expect("an object schema");
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .unwrap();
    let mut ordered = Map::new();
    ordered.insert(
        "type".into(),
        json!({"const": kind, "description": "which kind of line this is"}),
    );
    for (k, v) in extra {
        ordered.insert((*k).into(), v.clone());
    }
    for (k, v) in props.iter() {
        ordered.insert(k.clone(), v.clone());
    }
    *props = ordered;
    let required = obj
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .unwrap();
    let mut names: Vec<Value> = vec![json!("type")];
    names.extend(extra.iter().map(|(k, _)| json!(k)));
    names.append(required);
    *required = names;
    def
}

/// The line schema, derived from the document schema.
fn lines_schema() -> Value {
    let doc: Value = serde_json::from_str(DOCUMENT_SCHEMA).unwrap();
    let p = &doc["properties"];
    json!({
        "$schema": doc["$schema"],
        "$id": "tlsping-jsonl.schema.json",
        "title": "tlsping --jsonl: one JSON object per line",
        "description": "Generated from tlsping.schema.json by tests/jsonl.rs (TLSPING_WRITE_SCHEMA=1 cargo test --test jsonl rewrites it). A run line first, a sample line per probe as it finishes, a summary line last.",
        "oneOf": [
            {"$ref": "#/$defs/run_line"},
            {"$ref": "#/$defs/sample_line"},
            {"$ref": "#/$defs/summary_line"}
        ],
        "$defs": {
            "summary_figures": doc["$defs"]["summary_figures"],
            "run_line": line_def(&p["run"], "run", &[
                ("schema", p["schema"].clone()),
                ("tlsping_version", p["tlsping_version"].clone()),
            ]),
            "sample_line": line_def(&p["samples"]["items"], "sample", &[]),
            "summary_line": line_def(&p["summary"], "summary", &[
                ("ending", p["ending"].clone()),
                ("warnings", p["warnings"].clone()),
            ]),
        }
    })
}

#[test]
fn the_line_schema_is_the_document_schema_in_parts() {
    let want = serde_json::to_string_pretty(&lines_schema()).unwrap() + "\n";
    if std::env::var_os("TLSPING_WRITE_SCHEMA").is_some() {
        std::fs::write(LINES_SCHEMA_PATH, &want).unwrap();
    }
    let have = std::fs::read_to_string(LINES_SCHEMA_PATH).unwrap_or_default();
    assert!(
        have == want,
        "schema/tlsping-jsonl.schema.json is out of step with tlsping.schema.json; \
         rewrite it with TLSPING_WRITE_SCHEMA=1 cargo test --test jsonl"
    );
}

#[test]
fn lines_stream_while_the_run_goes_on_and_each_validates() {
    let server = start(ServerOpts::default());
    let ca = support::cacert();
    let started = Instant::now();
    let mut child = command(&[
        "--jsonl",
        "--cacert",
        &ca,
        "-n",
        "3",
        "-i",
        "1s",
        "-w",
        "5s",
        &server.url(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    // The first sample is here, and the run (three rounds a second apart)
    // is still going: it was streamed, not held until the end.
    let running = child.try_wait().unwrap().is_none();
    let waited = started.elapsed();
    assert!(
        running,
        "the run ended before its first sample line was read"
    );
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    let mut all = vec![first, second];
    all.extend(lines.map(|l| l.unwrap()));
    assert!(child.wait().unwrap().success());

    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(LINES_SCHEMA_PATH).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let parsed: Vec<Value> = all
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (line, value) in all.iter().zip(&parsed) {
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{line}\n{errors:#?}");
    }
    let kinds: Vec<&str> = parsed.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"run"));
    assert_eq!(kinds.last(), Some(&"summary"));
    assert_eq!(
        kinds.iter().filter(|k| **k == "sample").count(),
        6,
        "{kinds:?}"
    );
    // Times: t_ms grows with the schedule, `at` parses and follows it.
    let samples: Vec<&Value> = parsed.iter().filter(|v| v["type"] == "sample").collect();
    let t: Vec<f64> = samples
        .iter()
        .map(|s| s["t_ms"].as_f64().unwrap())
        .collect();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    let round3 = samples.iter().find(|s| s["round"] == 3).unwrap()["t_ms"]
        .as_f64()
        .unwrap();
    assert!(
        (1900.0..4000.0).contains(&round3),
        "round 3 starts 2 s in: {round3}"
    );
    let started_at = humantime::parse_rfc3339(parsed[0]["started_at"].as_str().unwrap()).unwrap();
    for s in &samples {
        let at = humantime::parse_rfc3339(s["at"].as_str().unwrap()).unwrap();
        let after = at.duration_since(started_at).unwrap().as_secs_f64() * 1000.0;
        let t_ms = s["t_ms"].as_f64().unwrap();
        assert!(
            (after - t_ms).abs() < 50.0,
            "wall {after} ms vs monotonic {t_ms} ms"
        );
    }
}

#[test]
fn a_run_that_ends_before_round_one_still_writes_its_run_and_summary_lines() {
    // A port nobody listens on: the preflight is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = command(&[
        "--jsonl",
        "-n",
        "2",
        "-w",
        "2s",
        &format!("https://127.0.0.1:{port}/"),
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(
        lines[0]["preflight_error_kind"], "conn_refused",
        "{:#}",
        lines[0]
    );
    assert_eq!(lines[1]["type"], "summary");
}

#[test]
fn csv_rows_say_when_each_probe_started() {
    let server = start(ServerOpts::default());
    let ca = support::cacert();
    let out = command(&[
        "--csv",
        "--cacert",
        &ca,
        "-n",
        "2",
        "-i",
        "200ms",
        &server.url(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success());
    let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
    let header = rdr.headers().unwrap().clone();
    let names: Vec<&str> = header.iter().collect();
    // After every column that came before them, later additions after them.
    let t_ms = names.iter().position(|n| *n == "t_ms").unwrap();
    assert_eq!(
        &names[t_ms - 1..t_ms + 2],
        ["early_data", "t_ms", "at"],
        "the earlier columns keep their places; only later additions follow"
    );
    assert_eq!(
        &names[..3],
        ["round", "mode", "warmup"],
        "the original's columns keep their places"
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    let t: Vec<f64> = rows.iter().map(|r| r[t_ms].parse().unwrap()).collect();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    for r in &rows {
        humantime::parse_rfc3339(&r[t_ms + 1]).unwrap();
    }
}

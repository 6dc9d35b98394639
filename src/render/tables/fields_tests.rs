//! The field table against what is published from it: the JSON Schemas'
//! sample objects and the CSV header docs/output.md prints (both editions).

use std::collections::BTreeSet;

use serde_json::Value;

use std::time::{Duration, SystemTime};

use super::*;
use crate::probe::CompareInfo;
use crate::stats::synthetic;

const DOCUMENT_SCHEMA: &str = include_str!("../../../schema/tlsping.schema.json");
const LINES_SCHEMA: &str = include_str!("../../../schema/tlsping-jsonl.schema.json");
/// The documents that print the CSV header, read when the test runs (the
/// Korean edition comes from its own branch).
const CSV_DOCS: [&str; 2] = ["docs/output.md", "docs/ko/output.md"];

/// The Go tool's columns, in its order (the CSV header in docs/output.md
/// up to `error`): they open every CSV and never change.
const GO_TOOL_COLUMNS: [&str; 24] = [
    "round",
    "mode",
    "warmup",
    "dns_ms",
    "tcp_ms",
    "tls_ms",
    "wait_ms",
    "srv_ms",
    "total_ms",
    "other_ms",
    "reused",
    "new_conn",
    "retries",
    "status",
    "proto",
    "tls_version",
    "alpn",
    "tls_resumed",
    "cert_chain_len",
    "bytes",
    "addr",
    "body_overflow",
    "error_kind",
    "error",
];

/// The key of a field in a JSON sample (the inner one when nested).
fn json_name(f: &Field) -> &'static str {
    match f.json {
        JsonKey::Top(k) | JsonKey::Nested(_, k) => k,
    }
}

/// The keys of a JSON sample object, or of the object nested under `inner`.
fn table_keys(inner: Option<&str>) -> BTreeSet<&'static str> {
    FIELDS
        .iter()
        .filter_map(|f| match (f.json, inner) {
            (JsonKey::Top(k), None) => Some(k),
            (JsonKey::Nested(object, _), None) => Some(object),
            (JsonKey::Nested(object, k), Some(i)) if object == i => Some(k),
            _ => None,
        })
        .collect()
}

fn keys(properties: &Value) -> BTreeSet<&str> {
    properties
        .as_object()
        .expect("an object of properties")
        .keys()
        .map(String::as_str)
        .collect()
}

/// The JSON types a schema property allows (from `type`, or an `enum`'s values).
fn schema_types(property: &Value) -> BTreeSet<&'static str> {
    let name = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let from_name = |t: &str| -> &'static str {
        [
            "null", "boolean", "number", "integer", "string", "array", "object",
        ]
        .into_iter()
        .find(|n| *n == t)
        .expect("a JSON type")
    };
    match (&property["type"], &property["enum"]) {
        (Value::String(t), _) => [from_name(t)].into(),
        (Value::Array(ts), _) => ts.iter().filter_map(Value::as_str).map(from_name).collect(),
        (_, Value::Array(values)) => values.iter().map(name).collect(),
        _ => panic!("no type in {property}"),
    }
}

/// The JSON type a field's unit is written as.
fn json_type(unit: Unit) -> &'static str {
    match unit {
        Unit::Ms => "number",
        Unit::Us | Unit::Count => "integer",
        Unit::Flag => "boolean",
        Unit::Text | Unit::DateTime => "string",
        Unit::Metrics | Unit::Extras => "array",
    }
}

/// Checks one schema's sample object against the table: the same keys
/// (`extra` are the line's own, such as `type`), the same inner `curl`
/// keys, a type that fits each unit, and every key required but those a
/// sample may leave out.
fn check_sample_schema(name: &str, sample: &Value, extra: &[&str]) {
    let props = &sample["properties"];
    let mut have = keys(props);
    for e in extra {
        assert!(have.remove(e), "{name}: no {e}");
    }
    assert_eq!(have, table_keys(None), "{name}: sample properties");
    let curl = &props["curl"];
    assert_eq!(
        keys(&curl["properties"]),
        table_keys(Some("curl")),
        "{name}: curl"
    );
    for f in &FIELDS {
        let property = match f.json {
            JsonKey::Top(k) => &props[k],
            JsonKey::Nested(_, k) => &curl["properties"][k],
        };
        let types = schema_types(property);
        assert!(
            types.contains(json_type(f.unit)),
            "{name}: {} is {:?} in the schema, {:?} in the table",
            json_name(f),
            types,
            f.unit
        );
    }
    let required: BTreeSet<&str> = sample["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|k| !extra.contains(k))
        .collect();
    let always: BTreeSet<&str> = FIELDS
        .iter()
        .filter(|f| f.shown == Shown::Always)
        .map(|f| match f.json {
            JsonKey::Top(k) | JsonKey::Nested(k, _) => k,
        })
        .collect();
    assert_eq!(required, always, "{name}: required");
}

#[test]
fn the_schemas_sample_objects_are_the_tables() {
    let doc: Value = serde_json::from_str(DOCUMENT_SCHEMA).unwrap();
    check_sample_schema(
        "tlsping.schema.json",
        &doc["properties"]["samples"]["items"],
        &[],
    );
    let lines: Value = serde_json::from_str(LINES_SCHEMA).unwrap();
    check_sample_schema(
        "tlsping-jsonl.schema.json",
        &lines["$defs"]["sample_line"],
        &["type"],
    );
}

#[test]
fn the_docs_csv_header_is_the_tables_order() {
    let columns: Vec<&str> = csv_columns(false, false)
        .iter()
        .map(|(_, c)| c.name)
        .collect();
    assert_eq!(columns[..GO_TOOL_COLUMNS.len()], GO_TOOL_COLUMNS);
    for name in CSV_DOCS {
        let path = format!("{}/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let header = text
            .lines()
            .find_map(|l| l.strip_prefix("    round,mode,"))
            .unwrap_or_else(|| panic!("{name} prints no CSV header"));
        assert_eq!(format!("round,mode,{header}"), columns.join(","), "{name}");
    }
}

#[test]
fn csv_places_are_each_used_once_with_variant_last() {
    let mut places: Vec<u8> = FIELDS.iter().filter_map(|f| f.csv).map(|c| c.at).collect();
    places.sort_unstable();
    let want: Vec<u8> = (0..places.len() as u8).collect();
    assert_eq!(places, want);
    let names: BTreeSet<&str> = FIELDS
        .iter()
        .filter_map(|f| f.csv)
        .map(|c| c.name)
        .collect();
    assert_eq!(names.len(), places.len(), "a CSV name used twice");
    let compared = csv_columns(true, false);
    assert_eq!(compared.last().map(|(_, c)| c.name), Some("variant"));
    assert_eq!(compared.len(), csv_columns(false, false).len() + 1);
    let time_first: Vec<&str> = csv_columns(false, true)
        .iter()
        .take(4)
        .map(|(_, c)| c.name)
        .collect();
    assert_eq!(time_first, ["round", "t_ms", "at", "mode"]);
}

#[test]
fn json_keys_and_write_out_names_are_each_used_once() {
    let mut seen = BTreeSet::new();
    let mut inner_objects_closed = BTreeSet::new();
    let mut open = None;
    for f in &FIELDS {
        let (object, key) = match f.json {
            JsonKey::Top(k) => (None, k),
            JsonKey::Nested(o, k) => (Some(o), k),
        };
        assert!(seen.insert((object, key)), "{key} twice");
        // The fields of an inner object are next to each other, so it is
        // written where its first field is.
        if open != object {
            if let Some(done) = open {
                inner_objects_closed.insert(done);
            }
            assert!(
                object.is_none_or(|o| !inner_objects_closed.contains(o)),
                "{key} is apart from its object"
            );
            open = object;
        }
    }
    let names: Vec<&str> = FIELDS
        .iter()
        .filter_map(|f| f.write_out)
        .map(|v| v.name())
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len());
}

#[test]
fn every_value_has_the_kind_its_unit_says() {
    let mut cold = synthetic::cold(1, 40, 100, 3000, 1000, 50);
    cold.t = Some(Duration::from_millis(3));
    cold.at = Some(SystemTime::UNIX_EPOCH);
    cold.tcp_info = Some(crate::probe::TcpFacts {
        rtt_us: 900,
        min_rtt_us: Some(800),
        retrans: 1,
    });
    let samples = [
        cold,
        synthetic::warm(1, 30, 1000, 10, true),
        synthetic::failed(
            2,
            crate::probe::Mode::Cold,
            crate::probe::ErrorKind::Timeout,
            9,
        ),
    ];
    let compare = CompareInfo {
        axis: crate::probe::Axis::Tls,
        variants: vec![crate::probe::VariantInfo::new("TLS1.2", "1.2")],
        probes_per_round: 2,
    };
    let mut info = synthetic::run_info();
    info.preflight_error = Some(synthetic::preflight_failed(
        crate::probe::ErrorKind::Timeout,
        "late",
    ));
    for f in &FIELDS {
        let mut values: Vec<FieldValue> =
            samples.iter().map(|s| f.value(s, Some(&compare))).collect();
        values.extend(f.preflight.map(|read| read(&info)));
        for v in values {
            let fits = matches!(
                (&v, f.unit),
                (FieldValue::Null, _)
                    | (FieldValue::Time(_), Unit::Ms | Unit::Us)
                    | (FieldValue::Int(_), Unit::Count)
                    | (FieldValue::Bool(_), Unit::Flag)
                    | (FieldValue::Text(_), Unit::Text)
                    | (FieldValue::Wall(_), Unit::DateTime)
                    | (FieldValue::Metrics(_), Unit::Metrics)
                    | (FieldValue::Extras(_), Unit::Extras)
            );
            assert!(fits, "{}: {v:?} is not {:?}", json_name(f), f.unit);
        }
    }
}

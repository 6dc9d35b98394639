//! Readers of a `--json` document that fail with the document in view when
//! a part they read is missing.

use serde_json::Value;

/// `samples[]`, which every document has.
pub fn samples(doc: &Value) -> &Vec<Value> {
    doc["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("no samples[] in {doc:#}"))
}

/// `warnings[]`, as text.
pub fn warnings(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings[] in {doc:#}"))
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

/// The warnings of the safety valves (others, such as the residual one, depend on timing).
pub fn stop_warnings(doc: &Value) -> Vec<String> {
    warnings(doc)
        .into_iter()
        .filter(|w| w.contains("stopping"))
        .collect()
}

/// Every sample's `error_kind`, `<none>` for one that did not fail.
pub fn error_kinds(doc: &Value) -> Vec<String> {
    samples(doc)
        .iter()
        .map(|s| s["error_kind"].as_str().unwrap_or("<none>").to_string())
        .collect()
}

/// `run.<key>`, which must be present (null or not).
pub fn run_field<'a>(doc: &'a Value, key: &str) -> &'a Value {
    doc["run"]
        .get(key)
        .unwrap_or_else(|| panic!("run.{key} is missing: {:#}", doc["run"]))
}

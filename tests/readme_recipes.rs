//! The recipes give what they promise. The jq recipe of the cold `tls_ms`
//! values lists the timed samples only.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use support::{quick_json, show, start, ServerOpts};

const README: &str = include_str!("../README.md");
const README_KO: &str = include_str!("../README.ko.md");

#[test]
fn the_jq_recipe_of_cold_tls_lists_the_timed_samples_only() {
    if !support::have("jq") {
        return;
    }
    for (name, readme) in [("README.md", README), ("README.ko.md", README_KO)] {
        let line = readme
            .lines()
            .find(|l| l.contains("| jq") && l.contains(".tls_ms"))
            .unwrap_or_else(|| panic!("{name}: the jq recipe of tls_ms"));
        let program = line.split_once("| jq ").unwrap().1;
        let server = start(ServerOpts::default());
        let (doc, out) = quick_json(&["-n", "4", &server.url()]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let mut jq = Command::new("sh")
            .arg("-c")
            .arg(format!("jq {program}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running jq");
        jq.stdin
            .take()
            .unwrap()
            .write_all(&serde_json::to_vec(&doc).unwrap())
            .unwrap();
        let listed = jq.wait_with_output().unwrap();
        assert!(listed.status.success(), "{}", show(&listed));
        let listed: Vec<f64> = String::from_utf8(listed.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap_or_else(|_| panic!("{name}: {l}")))
            .collect();
        let timed: Vec<f64> = doc["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["mode"] == "cold" && s["warmup"] == false)
            .map(|s| s["tls_ms"].as_f64().unwrap())
            .collect();
        assert_eq!(timed.len(), 3, "four rounds, one warmup");
        assert_eq!(listed, timed, "{name}: {line}");
    }
}

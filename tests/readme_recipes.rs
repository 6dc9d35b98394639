//! The recipes give what they promise. An example that asks for 20 rounds
//! or more (in either edition of the documents, in `--help`, in the systemd
//! unit) leaves the
//! 20 timed rounds a p95 needs once the warmup is taken out, which the
//! binary confirms: 20 timed rounds give a `0.95` quantile, 19 none. The
//! jq recipe of the cold `tls_ms` values lists the timed samples only.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use support::{docs, markdown};
use support::{quick_json, show, start, ServerOpts};

const SERVICE: &str = include_str!("../contrib/tlsping@.service");

/// The `--warmup` default, from docs/output.md's table of flags.
fn default_warmup() -> u32 {
    let flags = docs::read("docs/output.md");
    let row = markdown::tables(&flags)
        .into_iter()
        .flat_map(|t| t.rows)
        .find(|r| r.cells[0] == "`--warmup N`")
        .expect("the --warmup row of the flags table");
    row.cells[1].parse().unwrap()
}

/// Every line of `text` that runs tlsping with a round count, with where it is.
fn counted_examples(text: &str, whence: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| l.contains("tlsping ") && (l.contains(" -n ") || l.contains(" --count ")))
        .map(|l| (whence.to_string(), l.trim().to_string()))
        .collect()
}

/// The value after `flag` among `words`, if given.
fn value_of<'a>(words: &[&'a str], flags: &[&str]) -> Option<&'a str> {
    words
        .windows(2)
        .find(|w| flags.contains(&w[0]))
        .map(|w| w[1])
}

#[test]
fn every_example_of_twenty_rounds_or_more_leaves_twenty_timed_ones() {
    let help = support::tlsping(&["--help"]);
    assert!(help.status.success(), "{}", show(&help));
    let help = String::from_utf8(help.stdout).unwrap();
    let mut examples = Vec::new();
    for doc in docs::both() {
        examples.extend(counted_examples(&doc.text, &doc.name));
    }
    examples.extend(counted_examples(&help, "--help"));
    examples.extend(
        counted_examples(SERVICE, "tlsping@.service")
            .into_iter()
            .filter(|(_, l)| l.starts_with("ExecStart=")),
    );
    for whence in ["README.md", "docs/output.md", "--help", "tlsping@.service"] {
        assert!(
            examples.iter().any(|(w, _)| w == whence),
            "no example with a round count in {whence}"
        );
    }
    let p95_needs = tlsping::stats::P95_MIN_N as u32;
    let mut asking = 0;
    for (whence, line) in &examples {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(n) = value_of(&words, &["-n", "-c", "--count"]) else {
            continue;
        };
        // A calibration's figure records how it was measured; it is no recipe.
        if line.contains("--calibrate") {
            continue;
        }
        let n: u32 = n.parse().unwrap_or_else(|_| panic!("{whence}: {line}"));
        let warmup = value_of(&words, &["--warmup"]).map_or_else(default_warmup, |w| {
            w.parse().unwrap_or_else(|_| panic!("{whence}: {line}"))
        });
        if n >= p95_needs {
            asking += 1;
            assert!(
                n - warmup.min(n) >= p95_needs,
                "{whence}: `{line}` asks for {n} rounds, of which {warmup} warm up: \
                 {} timed, and a p95 needs {p95_needs}",
                n - warmup.min(n)
            );
        }
    }
    assert!(asking >= 8, "only {asking} examples ask for a p95");
}

/// Whether a run of `n` rounds (default warmup) writes a cold total p95.
fn has_p95(n: &str, url: &str) -> bool {
    let out = support::ipv4_run(&[
        "-n",
        n,
        "-i",
        "200ms",
        "-m",
        "cold",
        "--openmetrics",
        "-",
        url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    String::from_utf8(out.stdout).unwrap().lines().any(|l| {
        l.starts_with("tlsping_stage_seconds{")
            && l.contains("stage=\"total\"")
            && l.contains("quantile=\"0.95\"")
    })
}

#[test]
fn twenty_one_rounds_give_a_p95_and_twenty_do_not() {
    let server = start(ServerOpts::default());
    let url = server.url();
    assert!(!has_p95("20", &url), "19 timed rounds");
    assert!(has_p95("21", &url), "20 timed rounds");
}

#[test]
fn the_jq_recipe_of_cold_tls_lists_the_timed_samples_only() {
    if !support::have("jq") {
        return;
    }
    for name in ["docs/output.md", "docs/ko/output.md"] {
        let recipes = docs::read(name);
        let line = recipes
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

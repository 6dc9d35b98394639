//! The command blocks of the documents still work: every `tlsping` command
//! of README.md, docs/*.md and CONTRIBUTING.md runs against a local server
//! (the host swapped in, the round count shortened), the `curl -w`
//! cross-check prints the stages, and every `cargo` command names an
//! example, bench or flag that exists. The README stays a front door, and
//! every link between the documents leads somewhere.

mod support;

use std::process::Command;

use support::docs::{self, Doc};
use support::markdown;
use support::{ca, start, ServerOpts};

/// The command lines of the indented code blocks (continuations joined,
/// a `$ ` prompt taken off) of every document of the English edition.
fn commands() -> Vec<String> {
    docs::english()
        .iter()
        .flat_map(|doc| commands_of(&doc.text))
        .collect()
}

/// The command lines of the indented code blocks of one text.
fn commands_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in markdown::code_blocks(text) {
        if block.fence.is_some() {
            continue;
        }
        let mut pending = String::new();
        for line in block.code.lines() {
            let cmd = line.strip_prefix("$ ").unwrap_or(line);
            if !pending.is_empty() {
                pending.push(' ');
            }
            pending.push_str(cmd.trim_end_matches('\\').trim_end());
            if !cmd.ends_with('\\') {
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    out
}

fn sh(script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn every_tlsping_command_runs_against_a_local_server() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let url = server.url();
    let dir = std::env::temp_dir().join(format!("tlsping-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ran = 0;
    // The jq recipes need jq; without it (outside CI) only they are skipped.
    let jq = support::have("jq");
    let mut pushes = Vec::new();
    for cmd in commands()
        .iter()
        .filter(|c| c.starts_with("tlsping ") && !c.contains("[flags]"))
        // The Quickstart runs across a delayed path (tests/readme_examples.rs),
        // and the install lines in a home of their own (tests/install_lines.rs).
        .filter(|c| *c != support::quickstart::COMMAND && !c.contains("--generate"))
        .filter(|c| jq || !c.contains("| jq"))
    {
        // Same flags, local host, fewer and faster rounds.
        let mut words: Vec<String> = Vec::new();
        let mut it = cmd.split(' ').peekable();
        while let Some(w) = it.next() {
            match w {
                "tlsping" if words.is_empty() => {
                    words.push(support::bin().to_string());
                    if cmd.contains("--calibrate") {
                        // Its own server, its own certificate: no target, no --cacert.
                        words.push("-i 200ms".into());
                    } else {
                        words.push(format!("--cacert {} -i 200ms", ca().pem_path.display()));
                    }
                }
                "-n" => {
                    it.next();
                    words.push("-n 2".into());
                }
                "--cacert" | "-i" => {
                    it.next();
                }
                // A Pushgateway stand-in on loopback takes the push.
                "--push" => {
                    it.next();
                    let (url, pushed) = support::prometheus::answering_stand_in(1);
                    words.push(format!("--push {url}"));
                    pushes.push(pushed);
                }
                "example.com" => words.push(url.clone()),
                // Every endpoint of a target comparison: two paths of the one server.
                w if w.starts_with("target=") => words.push(format!("target={url}a,{url}b")),
                w if w.starts_with("https://localhost:") => words.push(url.clone()),
                w => words.push(w.to_string()),
            }
        }
        let script = words.join(" ");
        let out = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "documented command failed: {cmd}\nran: {script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if script.contains("| jq") {
            let value = String::from_utf8_lossy(&out.stdout);
            assert!(
                !value.trim().is_empty() && !value.contains("null"),
                "{cmd}: {value}"
            );
        }
        ran += 1;
    }
    let least = if jq { 12 } else { 6 };
    assert!(ran >= least, "only {ran} tlsping commands found");
    assert!(!pushes.is_empty(), "no --push recipe ran");
    for pushed in pushes {
        let seen = pushed
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("the push reached the stand-in");
        assert!(seen.starts_with("PUT /metrics/job/tlsping/"), "{seen}");
    }
    let csv = std::fs::read_to_string(dir.join("run.csv")).expect("the CSV recipe wrote run.csv");
    assert!(csv.starts_with("round,mode,warmup,"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_curl_cross_check_prints_every_stage() {
    if !support::have("curl") {
        return;
    }
    let server = start(ServerOpts::default());
    let cmd = commands()
        .into_iter()
        .find(|c| c.starts_with("curl "))
        .expect("a curl -w command");
    let version = sh("curl --version").stdout;
    let v = String::from_utf8_lossy(&version);
    let (major, minor) = v
        .split_whitespace()
        .nth(1)
        .and_then(|s| {
            let mut p = s.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
            Some((p.next()?, p.next()?))
        })
        .unwrap_or((0, 0));
    let mut script = cmd.replace("https://example.com/", &server.url()).replacen(
        "curl ",
        &format!(
            "curl --cacert {} --resolve localhost:{}:127.0.0.1 ",
            ca().pem_path.display(),
            server.addr.port()
        ),
        1,
    );
    if (major, minor) < (8, 10) {
        // docs/measurement.md's own advice for an older curl.
        script = script.replace("time_posttransfer", "time_pretransfer");
    }
    let out = sh(&script);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(
        words.iter().step_by(2).copied().collect::<Vec<_>>(),
        ["dns", "tcp", "tls", "srv", "total"],
        "{text}"
    );
    for value in words.iter().skip(1).step_by(2) {
        assert!(value.parse::<f64>().is_ok_and(|v| v >= 0.0), "{text}");
    }
}

#[test]
fn every_cargo_command_names_something_that_exists() {
    let manifest = include_str!("../Cargo.toml");
    for cmd in commands().iter().filter(|c| c.starts_with("cargo ")) {
        if let Some(rest) = cmd.split("--example ").nth(1) {
            let name = rest.split_whitespace().next().unwrap();
            assert!(
                std::path::Path::new(&format!("examples/{name}.rs")).exists(),
                "{cmd}"
            );
        }
        if let Some(rest) = cmd.split("--bench ").nth(1) {
            let name = rest.split_whitespace().next().unwrap();
            assert!(manifest.contains(&format!("name = \"{name}\"")), "{cmd}");
        }
        if let Some(rest) = cmd.split("cargo fuzz run ").nth(1) {
            let name = rest.split_whitespace().next().unwrap();
            assert!(
                std::path::Path::new(&format!("fuzz/fuzz_targets/{name}.rs")).exists(),
                "{cmd}"
            );
        }
        if let Some(args) = cmd.strip_prefix("cargo run --release -- ") {
            let mut argv = vec!["tlsping"];
            argv.extend(args.split_whitespace());
            assert!(tlsping::cli::parse_from(argv).is_ok(), "{cmd}");
        }
    }
}

/// docs/measurement.md's "The body cap" says what `bytes` reads at the
/// 64 KiB cap: libcurl's pieces are taken whole or not at all, so never
/// more than 65,536; on HTTP/2 the pieces are the server's 16 KiB DATA
/// frames, which fill the cap exactly.
#[test]
fn bytes_at_the_body_cap_reads_as_the_docs_say() {
    let text = docs::read("docs/measurement.md");
    let limitation = docs::section(&text, "### The body cap")
        .expect("docs/measurement.md's section on the body cap")
        .replace('\n', " ");
    assert!(limitation.contains("exactly 65,536"), "{limitation}");
    for h2 in [false, true] {
        let server = start(ServerOpts {
            h2,
            body_len: 200_000,
            ..Default::default()
        });
        let cacert = support::cacert();
        let doc = support::json_run(&[
            "--json",
            "-X",
            "GET",
            "-n",
            "3",
            "-i",
            "200ms",
            "--cacert",
            &cacert,
            &server.url(),
        ]);
        for s in doc["samples"].as_array().unwrap() {
            assert_eq!(s["body_overflow"], true, "{s:#}");
            let bytes = s["bytes"].as_u64().unwrap();
            if h2 {
                assert_eq!(bytes, 65536, "{s:#}");
            } else {
                assert!(bytes > 0 && bytes <= 65536, "{s:#}");
            }
        }
    }
}

/// docs/performance.md names everything `ldd` lists for the binary: every
/// library it prints starts with a name the sentence gives in backticks.
#[test]
fn ldd_lists_only_what_the_performance_notes_name() {
    if !support::have("ldd") {
        return;
    }
    let text = docs::read("docs/performance.md");
    let paragraph = markdown::blocks(&text)
        .into_iter()
        .find(|b| b.kind == "paragraph" && b.source.starts_with("The release binary links"))
        .expect("docs/performance.md's paragraph on ldd");
    let spans = markdown::code_spans(&paragraph.source);
    let named: Vec<&str> = spans.iter().map(|s| s.code.as_str()).collect();
    let out = Command::new("ldd").arg(support::bin()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let path = line.split_whitespace().next().unwrap_or("");
        let file = path.rsplit('/').next().unwrap_or(path);
        assert!(
            named.iter().any(|n| file.starts_with(&format!("{n}."))),
            "ldd lists {file}, which docs/performance.md does not name ({named:?}):\n{text}"
        );
    }
}

/// The README is a front door: at most 300 lines, and a reader meets a
/// runnable `tlsping <host>` and the lines that say how much of a new
/// connection is TLS within its first 60.
#[test]
fn the_readme_is_a_front_door() {
    let text = docs::read("README.md");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 300, "README.md has {} lines", lines.len());
    let first = &lines[..60.min(lines.len())];
    let within = |what: &str| first.iter().any(|l| l.contains(what));
    assert!(
        first
            .iter()
            .any(|l| l.trim_start().strip_prefix("$ ") == Some(support::quickstart::COMMAND)),
        "no `$ {}` in README.md's first 60 lines",
        support::quickstart::COMMAND
    );
    for what in [
        "handshake overhead = ",
        "(medians)",
        ", of which client set-up ",
    ] {
        assert!(within(what), "README.md's first 60 lines lack {what:?}");
    }
}

#[test]
fn every_link_between_the_documents_leads_somewhere() {
    let english = docs::english();
    assert!(
        english.len() >= 8,
        "the README, six docs and CONTRIBUTING.md"
    );
    let links: usize = english.iter().map(|d| markdown::links(&d.text).len()).sum();
    assert!(links >= 40, "only {links} links");
    let broken = docs::broken_links(&english);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn every_link_of_the_korean_edition_leads_somewhere() {
    let korean = docs::korean();
    let names: Vec<&str> = korean.iter().map(|d| d.name.as_str()).collect();
    let links: usize = korean.iter().map(|d| markdown::links(&d.text).len()).sum();
    assert!(links >= 40, "only {links} links in {names:?}");
    let broken = docs::broken_links(&korean);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The anchors are GitHub's: its slug of each heading's text as shown
/// (code spans and links as their text, no markup), a repeat numbered.
#[test]
fn an_anchor_is_the_slug_github_makes() {
    assert_eq!(
        markdown::slug("Reconciling with curl -w"),
        "reconciling-with-curl--w"
    );
    assert_eq!(
        markdown::slug("Write-out: curl's variables"),
        "write-out-curls-variables"
    );
    assert_eq!(markdown::slug("설치와 빌드 (Linux)"), "설치와-빌드-linux");
    assert_eq!(markdown::slug("p95_ms & the 95% CI"), "p95_ms--the-95-ci");
    let text = "# A\n```promql\n# not a heading\n```\n## Why not `ping` or [httping](x.md)?\n\
                ## When `dns` and `tcp` overlap\n## Reconciling with `curl -w`\n\
                ## Install\n## Install\n## Install-1\n### *Over* the run\n";
    assert_eq!(
        markdown::anchors(text),
        [
            "a",
            "why-not-ping-or-httping",
            "when-dns-and-tcp-overlap",
            "reconciling-with-curl--w",
            "install",
            "install-1",
            "install-1-1",
            "over-the-run"
        ]
    );
    let doc = Doc {
        name: "README.md".into(),
        text: "[x](docs/measurement.md#nowhere) [y](docs/measurement.md#statistics) \
               [z](#install-1) [w](nowhere.md) [v](../../etc/passwd)\n\n## Install\n"
            .into(),
    };
    let broken = docs::broken_links(&[doc]);
    assert_eq!(broken.len(), 4, "{broken:#?}");
    for (problem, names) in
        broken
            .iter()
            .zip(["#nowhere", "#install-1", "nowhere.md", "climbs out"])
    {
        assert!(problem.contains(names), "{broken:#?}");
    }
}

//! The README's command blocks still work: every `tlsping` command runs
//! against a local server (the host swapped in, the round count shortened),
//! the `curl -w` cross-check prints the stages, and every `cargo` command
//! names an example, bench or flag that exists.

mod support;

use std::process::Command;

use support::{ca, start, ServerOpts};

const README: &str = include_str!("../README.md");

/// Indented command lines (continuations joined), without a `$ ` prompt.
fn commands() -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in README.lines() {
        let Some(cmd) = line.strip_prefix("    ") else {
            continue;
        };
        let cmd = cmd.strip_prefix("$ ").unwrap_or(cmd);
        if !pending.is_empty() {
            pending.push(' ');
        }
        pending.push_str(cmd.trim_end_matches('\\').trim_end());
        if !cmd.ends_with('\\') {
            out.push(std::mem::take(&mut pending));
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
    for cmd in commands()
        .iter()
        .filter(|c| c.starts_with("tlsping ") && !c.contains("[flags]"))
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
            "README command failed: {cmd}\nran: {script}\n{}",
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
    let least = if jq { 5 } else { 3 };
    assert!(ran >= least, "only {ran} tlsping commands found");
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
        // The README's own advice for an older curl.
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

/// The README's "Limitations" says what `bytes` reads at the 64 KiB cap:
/// libcurl's pieces are taken whole or not at all, so never more than
/// 65,536; on HTTP/2 the pieces are the server's 16 KiB DATA frames, which
/// fill the cap exactly.
#[test]
fn bytes_at_the_body_cap_reads_as_the_readme_says() {
    let limitation = README
        .lines()
        .skip_while(|l| !l.starts_with("- Bodies are read up to 64 KiB"))
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
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

/// The Install section names everything `ldd` lists for the binary: every
/// library it prints starts with a name the sentence gives in backticks.
#[test]
fn ldd_lists_only_what_the_install_section_names() {
    if !support::have("ldd") {
        return;
    }
    let sentence = README
        .split("\n\n")
        .find(|p| p.starts_with("The release binary links"))
        .expect("the Install section's paragraph on ldd");
    let named: Vec<&str> = sentence.split('`').skip(1).step_by(2).collect();
    let out = Command::new("ldd").arg(support::bin()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let path = line.split_whitespace().next().unwrap_or("");
        let file = path.rsplit('/').next().unwrap_or(path);
        assert!(
            named.iter().any(|n| file.starts_with(&format!("{n}."))),
            "ldd lists {file}, which the README's sentence does not name ({named:?}):\n{text}"
        );
    }
}

//! The example outputs in the READMEs are what the current binary prints.
//!
//! An example is an indented block whose first line is `$ tlsping ...`
//! (so a new example is checked as soon as it is written). It runs against
//! the test server the text last named before it in a
//! `` `cargo run --example loopback_server -- ARGS` `` span, with the
//! README's flags, the server's URL and CA file swapped in, in the terminal
//! the READMEs describe (`COLUMNS=120 LANG=C.UTF-8`, no colour). Its stdout
//! must have the block's lines, in order, with the same words in the same
//! columns once the figures are set aside (see `normalise`). README.ko.md
//! carries the very same blocks: program output is not translated.

mod support;

use std::time::Duration;

use support::{start, ServerOpts, TestServer};

#[path = "readme_examples/check.rs"]
mod check;

use check::{compare, difference, picture, plot_row};

const EN: &str = include_str!("../README.md");
const KO: &str = include_str!("../README.ko.md");

/// The terminal the examples come from, in the words both READMEs use.
const TERMINAL: &str = "COLUMNS=120 LANG=C.UTF-8";

#[derive(Clone, Debug, PartialEq)]
struct Example {
    /// The README line of the `$ tlsping` command, 1-based.
    line: usize,
    command: String,
    /// The arguments of the loopback server it runs against.
    server: Vec<String>,
    output: Vec<String>,
}

/// The ARGS of a `` `cargo run --example loopback_server -- ARGS` `` span.
fn server_args(line: &str) -> Option<Vec<String>> {
    let (_, rest) = line.split_once("`cargo run --example loopback_server --")?;
    let (args, _) = rest.split_once('`')?;
    Some(args.split_whitespace().map(String::from).collect())
}

/// Every example block of `text`, with the server named last before it.
fn examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut server = None;
    let mut i = 0;
    while i < lines.len() {
        if let Some(args) = server_args(lines[i]) {
            server = Some(args);
        }
        let command = lines[i].strip_prefix("    $ ");
        let Some(command) = command.filter(|c| c.starts_with("tlsping ")) else {
            i += 1;
            continue;
        };
        // An indented block runs on across blank lines.
        let end = (i + 1..lines.len())
            .find(|&j| !(lines[j].is_empty() || lines[j].starts_with("    ")))
            .unwrap_or(lines.len());
        let mut output: Vec<String> = lines[i + 1..end]
            .iter()
            .map(|l| l.strip_prefix("    ").unwrap_or("").to_string())
            .collect();
        while output.last().is_some_and(|l| l.is_empty()) {
            output.pop();
        }
        out.push(Example {
            line: i + 1,
            command: command.to_string(),
            server: server
                .clone()
                .unwrap_or_else(|| panic!("line {}: no loopback_server named before it", i + 1)),
            output,
        });
        i = end;
    }
    out
}

/// The server `args` describe, as `examples/loopback_server.rs` reads them.
fn server_for(args: &[String]) -> TestServer {
    let mut opts = ServerOpts::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--h2" => opts.h2 = true,
            "--tls12" => opts.tls12 = true,
            "--delay-ms" => {
                let ms = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--delay-ms N");
                opts.delay = Some(Duration::from_millis(ms));
            }
            other => panic!("the examples' server takes no {other}"),
        }
    }
    start(opts)
}

/// Runs an example's command against `server` and returns its stdout lines.
fn run(example: &Example, server: &TestServer) -> Vec<String> {
    let words: Vec<&str> = example.command.split_whitespace().collect();
    assert!(
        !example.command.contains(['\'', '"', '|', '>', '<']),
        "line {}: an example is one plain command, no quoting or redirection",
        example.line
    );
    let mut args: Vec<String> = Vec::new();
    let mut it = words[1..].iter();
    while let Some(w) = it.next() {
        if *w == "--cacert" {
            it.next();
            args.extend(["--cacert".to_string(), support::cacert()]);
        } else if w.starts_with("https://localhost:") {
            args.push(server.url());
        } else {
            args.push(w.to_string());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = support::command(&args);
    for pair in TERMINAL.split(' ') {
        let (name, value) = pair.split_once('=').unwrap();
        cmd.env(name, value);
    }
    // LANG decides the pictures' characters only when nothing overrides it.
    let out = cmd
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "line {}: {}\n{}",
        example.line,
        example.command,
        support::stderr(&out)
    );
    let mut lines: Vec<String> = support::stdout(&out).lines().map(String::from).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

// ------------------------------------------------------------------ tests

#[test]
fn every_example_output_is_what_the_binary_prints_now() {
    let all = examples(EN);
    assert!(all.len() >= 2, "only {} examples found: {all:?}", all.len());
    for example in &all {
        let server = server_for(&example.server);
        let got = run(example, &server);
        let problems = compare(&example.output, &got);
        assert!(
            problems.is_empty(),
            "README.md line {} (`{}`) no longer shows what tlsping prints:\n{}\n\n\
             What it printed (paste it into both READMEs, then keep the numbers or not):\n{}",
            example.line,
            example.command,
            problems.join("\n"),
            got.iter()
                .map(|l| format!("    {l}").trim_end().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn the_korean_readme_has_the_same_examples_and_terminal() {
    let (en, ko) = (examples(EN), examples(KO));
    assert_eq!(en.len(), ko.len(), "examples in README.md and README.ko.md");
    for (e, k) in en.iter().zip(&ko) {
        let at = format!("README.md line {}, README.ko.md line {}", e.line, k.line);
        assert_eq!(e.command, k.command, "{at}");
        assert_eq!(
            e.server, k.server,
            "the server named before the example, {at}"
        );
        assert!(e.output == k.output, "the output differs, {at}");
    }
    for (name, text) in [("README.md", EN), ("README.ko.md", KO)] {
        assert!(
            text.contains(&format!("`{TERMINAL}`")),
            "{name} must say the examples come from `{TERMINAL}`"
        );
    }
}

#[test]
fn the_compare_example_shows_both_kinds_of_difference() {
    let lines: Vec<String> = examples(EN)
        .into_iter()
        .filter(|e| e.command.contains("--compare"))
        .flat_map(|e| e.output)
        .collect();
    let verdict = |kind: &str| {
        lines
            .iter()
            .any(|l| difference(l).is_some() && l.contains(kind))
    };
    assert!(verdict(" faster than "), "{lines:#?}");
    assert!(verdict(": no difference detectable between "), "{lines:#?}");
}

/// The pictures the "Statistics" section draws by hand (indented inside a
/// list item) are built like the real ones: rows, the ends of each scale,
/// and the note and legend the first example printed, word for word.
#[test]
fn the_hand_drawn_pictures_follow_the_real_ones() {
    let printed = &examples(EN)[0].output;
    let (real_notes, real_legend) = notes_and_legend(printed);
    assert!(
        !real_notes.is_empty() && real_legend.is_some(),
        "{printed:#?}"
    );
    let lines: Vec<String> = EN
        .lines()
        .map(|l| l.strip_prefix("      ").unwrap_or("").to_string())
        .collect();
    let mut drawn = 0;
    for (i, line) in lines.iter().enumerate() {
        let starts = plot_row(line).is_some() && (i == 0 || lines[i - 1].is_empty());
        if !starts {
            continue;
        }
        let end = (i..lines.len())
            .find(|&j| lines[j].is_empty())
            .unwrap_or(lines.len());
        let block = &lines[i..end];
        let (notes, legend) = notes_and_legend(block);
        assert!(notes.iter().all(|n| real_notes.contains(n)), "{notes:?}");
        assert_eq!(legend, real_legend, "{block:#?}");
        drawn += 1;
    }
    assert_eq!(drawn, 2, "the Statistics section draws two pictures");
}

/// The notes and the legend of the one picture in `block`, which must be
/// whole (see `picture`).
fn notes_and_legend(block: &[String]) -> (Vec<String>, Option<String>) {
    let start = block.iter().position(|l| plot_row(l).is_some()).unwrap();
    let (mut notes, mut problems) = (Vec::new(), Vec::new());
    let (norm, _) = picture(&block[start..], start, &mut notes, &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    (notes, norm.last().map(|n| n.source.clone()))
}

/// The first example's block, changed by `f`.
fn quickstart_with(f: impl FnOnce(&mut Vec<String>)) -> (Vec<String>, Vec<String>) {
    let block = examples(EN).remove(0).output;
    let mut changed = block.clone();
    f(&mut changed);
    (block, changed)
}

/// The index of the first line of `block` that contains `what`.
fn index_of(block: &[String], what: &str) -> usize {
    block.iter().position(|l| l.contains(what)).unwrap()
}

/// A change made to a copy of a block.
type Change = fn(&mut Vec<String>);

#[test]
fn the_check_catches_a_line_added_removed_reworded_or_moved() {
    let (block, _) = quickstart_with(|_| ());
    assert!(
        compare(&block, &block).is_empty(),
        "{:?}",
        compare(&block, &block)
    );
    let changes: [(&str, Change); 6] = [
        ("a line removed", |b| {
            b.remove(index_of(b, "kernel rtt"));
        }),
        ("a line added", |b| {
            b.insert(
                index_of(b, "keep-alive gain"),
                "kernel rtt         = 1.44ms".into(),
            );
        }),
        ("a word changed", |b| {
            let i = index_of(b, "keep-alive gain");
            b[i] = b[i].replace("median cold", "mean cold");
        }),
        ("a column moved", |b| {
            let i = index_of(b, "   2 |");
            b[i] = b[i].replacen("| ", "|  ", 1);
        }),
        ("a round mark lost", |b| {
            let i = index_of(b, "   2 |");
            b[i] = b[i].replacen("*|", " |", 1);
        }),
        ("the legend reworded", |b| {
            let i = index_of(b, "p25..p75");
            b[i] = b[i].replace("median", "mean");
        }),
    ];
    for (what, change) in changes {
        let mut changed = block.clone();
        change(&mut changed);
        assert_ne!(changed, block, "{what}: the change changed nothing");
        assert!(
            !compare(&block, &changed).is_empty(),
            "{what} went unnoticed"
        );
    }
}

#[test]
fn the_check_lets_figures_plots_and_retransmissions_vary() {
    let (block, changed) = quickstart_with(|b| {
        // A right-aligned figure that grows, a flowing one that grows too.
        let i = index_of(b, "   3 |");
        b[i] = format!("{}{:>7}{}", &b[i][..6], "123", &b[i][13..]);
        let i = index_of(b, "elapsed");
        b[i] = b[i].replace("elapsed ", "elapsed 10");
        // A row the kernel had to retransmit for, and the line that says so.
        let i = index_of(b, "   4 |");
        b[i].push_str(" retrans");
        let i = index_of(b, "keep-alive gain");
        b.insert(i, "retransmissions    = 1 probes lost segments".into());
        // Both rows on one scale: one scale line, no note.
        let cold = b.iter().position(|l| l.starts_with("cold  ")).unwrap();
        b[cold] = "cold        ├──[███│█████]──────┤".into();
        b.remove(cold + 1);
        let note = index_of(b, "separate scales");
        b.remove(note);
    });
    assert_eq!(compare(&block, &changed), Vec::<String>::new());
}

#[test]
fn a_difference_reads_the_same_whichever_way_it_came_out() {
    let faster = "cold tls: TLS1.3 is 20.0ms faster than TLS1.2 (95% CI 19.7 .. 20.3), 7 rounds";
    let none = "cold tls: no difference detectable between TLS1.3 and TLS1.2 \
                (median -0.01ms, 95% CI -0.57 .. 0.02), 7 rounds";
    assert_eq!(difference(faster), difference(none));
    assert!(difference(faster).is_some());
    let reworded = faster.replace("faster than", "quicker than");
    assert_eq!(difference(&reworded), None);
    assert!(!compare(&[faster.into()], &[reworded]).is_empty());
    assert!(!compare(&[faster.into()], &[faster.replace("cold tls", "cold srv")]).is_empty());
}

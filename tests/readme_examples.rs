//! The example outputs in the documents are what the current binary prints.
//!
//! An example is an indented code block from its first `$ tlsping ...` line
//! on, in any document of the English edition (README.md, docs/*.md,
//! CONTRIBUTING.md), so a new example is checked as soon as it is written.
//! It runs against the test server the text last named before it in a
//! `` `cargo run --example loopback_server -- ARGS` `` span, with the
//! document's flags, the server's URL and CA file swapped in, in the
//! terminal the README describes (`COLUMNS=120 LANG=C.UTF-8`, no colour).
//! The README's Quickstart block (between the `quickstart-output` markers)
//! runs as `examples/quickstart_output.rs` made it: across the delayed path.
//! Its stdout must have the block's lines, in order, with the same words in
//! the same columns once the figures are set aside (see `normalise`). The
//! Korean edition carries the very same blocks, file for file: program
//! output is not translated.

mod support;

use std::time::Duration;

use support::docs;
use support::markdown;
use support::path::DelayedPath;
use support::quickstart;
use support::{start, ServerOpts, TestServer};

#[path = "readme_examples/check.rs"]
mod check;

use check::{compare, difference, picture, plot_row};

/// The terminal the examples come from, in the words both READMEs use.
const TERMINAL: &str = "COLUMNS=120 LANG=C.UTF-8";

/// What an example runs against.
#[derive(Clone, Debug, PartialEq)]
enum Server {
    /// The loopback test server, with these arguments.
    Loopback(Vec<String>),
    /// The Quickstart's server, across the delayed path.
    Quickstart,
}

#[derive(Clone, Debug, PartialEq)]
struct Example {
    /// The document and the line of the `$ tlsping` command, 1-based.
    file: String,
    line: usize,
    command: String,
    server: Server,
    output: Vec<String>,
}

/// The ARGS of a `` `cargo run --example loopback_server -- ARGS` `` span.
fn server_args(span: &str) -> Option<Vec<String>> {
    let args = span.strip_prefix("cargo run --example loopback_server --")?;
    Some(args.split_whitespace().map(String::from).collect())
}

/// Every example block of the English edition, document by document.
fn all_examples() -> Vec<Example> {
    docs::english()
        .iter()
        .flat_map(|d| examples(&d.name, &d.text))
        .collect()
}

/// Every example block of `text` (the document `file`), with the server
/// named last before it: the indented code blocks from their first
/// `$ tlsping` line on.
fn examples(file: &str, text: &str) -> Vec<Example> {
    let spans = markdown::code_spans(text);
    let mut out = Vec::new();
    for block in markdown::code_blocks(text) {
        if block.fence.is_some() {
            continue;
        }
        let lines: Vec<&str> = block.code.lines().collect();
        let first = lines.iter().position(|l| l.starts_with("$ tlsping "));
        let Some(i) = first else {
            continue;
        };
        let line = block.line + i;
        let mut output: Vec<String> = lines[i + 1..]
            .iter()
            .map(|l| if l.trim().is_empty() { "" } else { l }.to_string())
            .collect();
        while output.last().is_some_and(|l| l.is_empty()) {
            output.pop();
        }
        let before = text.lines().nth(line.saturating_sub(2));
        let quickstart = line > 1 && before.is_some_and(|l| l.starts_with(quickstart::BEGIN));
        let server = if quickstart {
            Server::Quickstart
        } else {
            let named = spans
                .iter()
                .filter(|s| s.at < block.at)
                .filter_map(|s| server_args(&s.code))
                .next_back();
            Server::Loopback(named.unwrap_or_else(|| {
                panic!("{file} line {line}: no loopback_server named before it")
            }))
        };
        out.push(Example {
            file: file.to_string(),
            line,
            command: lines[i]["$ ".len()..].to_string(),
            server,
            output,
        });
    }
    out
}

/// The servers `args` describe, as `examples/loopback_server.rs` reads
/// them: the first, and the second that `--second-delay-ms` asks for.
fn server_for(args: &[String]) -> Vec<TestServer> {
    let mut opts = ServerOpts::default();
    let mut second = None;
    let mut it = args.iter();
    let ms = |flag: &str, it: &mut std::slice::Iter<String>| {
        let ms = it
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{flag} N"));
        Some(Duration::from_millis(ms))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--h2" => opts.h2 = true,
            "--tls12" => opts.tls12 = true,
            "--delay-ms" => opts.delay = ms(arg, &mut it),
            "--second-delay-ms" => second = ms(arg, &mut it),
            other => panic!("the examples' server takes no {other}"),
        }
    }
    let mut servers = Vec::new();
    if let Some(delay) = second {
        servers.push(start(ServerOpts {
            delay: Some(delay),
            ..opts.clone()
        }));
    }
    servers.insert(0, start(opts));
    servers
}

/// Runs an example's command against `servers` (the URLs it names, in
/// order) and returns its stdout lines.
fn run(example: &Example, servers: &[TestServer]) -> Vec<String> {
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
            args.push(servers[0].url());
        } else if w.starts_with("target=") {
            let urls: Vec<String> = servers.iter().map(TestServer::url).collect();
            args.push(format!("target={}", urls.join(",")));
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
    printed(example, &out)
}

/// The stdout lines of a run that succeeded, trailing blank lines left out.
fn printed(example: &Example, out: &std::process::Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "{} line {}: {}\n{}",
        example.file,
        example.line,
        example.command,
        support::show(out)
    );
    let mut lines: Vec<String> = support::stdout(out).lines().map(String::from).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// An example whose first line is this shows only some of the lines, in
/// order; the ones it leaves out may be anything.
const LEFT_OUT: &str = "…";

/// What differs between an example and what it printed now, as a message.
fn differences(example: &Example, got: &[String]) -> Option<String> {
    let problems = match example.output.split_first() {
        Some((first, shown)) if first == LEFT_OUT => excerpt_problems(shown, got),
        _ => compare(&example.output, got),
    };
    (!problems.is_empty()).then(|| {
        format!(
            "{} line {} (`{}`) no longer shows what tlsping prints:\n{}\n\n\
             What it printed (paste it into both editions, then keep the numbers or not):\n{}",
            example.file,
            example.line,
            example.command,
            problems.join("\n"),
            got.iter()
                .map(|l| format!("    {l}").trim_end().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

// ------------------------------------------------------------------ tests

#[test]
fn every_example_output_is_what_the_binary_prints_now() {
    let all = all_examples();
    assert!(all.len() >= 2, "only {} examples found: {all:?}", all.len());
    for example in &all {
        let Server::Loopback(args) = &example.server else {
            continue;
        };
        let servers = server_for(args);
        let got = run(example, &servers);
        if let Some(message) = differences(example, &got) {
            panic!("{message}");
        }
    }
}

/// The lines of `shown` that the run's lines `got` lack, in order, each
/// line compared as a whole block is.
fn excerpt_problems(shown: &[String], got: &[String]) -> Vec<String> {
    let mut rest = got;
    let mut problems = Vec::new();
    for line in shown {
        let one = std::slice::from_ref(line);
        match rest
            .iter()
            .position(|g| compare(one, std::slice::from_ref(g)).is_empty())
        {
            Some(at) => rest = &rest[at + 1..],
            None => problems.push(format!(
                "the run printed no line like this one (or not in this order):\n  {line}"
            )),
        }
    }
    problems
}

/// The README's Quickstart is a run across a path with 20 ms each way, as
/// `examples/quickstart_output.rs` wrote it: the same command runs there
/// again and prints the same lines and columns.
#[test]
fn the_quickstart_output_is_what_a_run_across_the_delayed_path_prints() {
    let readme = docs::read("README.md");
    let example = examples("README.md", &readme).remove(0);
    assert_eq!(example.server, Server::Quickstart, "{example:?}");
    assert_eq!(example.command, quickstart::COMMAND);
    // The block ends at the end marker: nothing after it belongs to it.
    let end = readme.lines().position(|l| l == quickstart::END);
    assert_eq!(
        end,
        Some(example.line + example.output.len()),
        "{example:?}"
    );
    let Some(path) = DelayedPath::for_test(quickstart::ONE_WAY, None) else {
        return;
    };
    if !support::have("unshare") {
        return;
    }
    let got = printed(&example, &quickstart::run(support::bin(), &path));
    if let Some(message) = differences(&example, &got) {
        panic!("{message}");
    }
    // It went across the path: a new connection's tcp is a round trip.
    let tcp = example.output.iter().find(|l| l.contains("· tcp "));
    let tcp: f64 = tcp
        .and_then(|l| l.split("· tcp ").nth(1))
        .and_then(|r| r.split("ms").next())
        .and_then(|v| v.parse().ok())
        .expect("the Quickstart's median tcp");
    let rtt = 2.0 * quickstart::ONE_WAY.as_secs_f64() * 1000.0;
    assert!(
        tcp >= rtt && tcp < rtt + 10.0,
        "tcp {tcp} ms, round trip {rtt} ms"
    );
}

#[test]
fn the_korean_edition_has_the_same_examples_and_terminal() {
    for (en_doc, ko_doc) in docs::english().iter().zip(docs::korean()) {
        let (name, ko_name) = (&en_doc.name, &ko_doc.name);
        let en = examples(name, &en_doc.text);
        let ko = examples(ko_name, &ko_doc.text);
        assert_eq!(en.len(), ko.len(), "examples in {name} and {ko_name}");
        for (e, k) in en.iter().zip(&ko) {
            let at = format!("{name} line {}, {ko_name} line {}", e.line, k.line);
            assert_eq!(e.command, k.command, "{at}");
            assert_eq!(
                e.server, k.server,
                "the server named before the example, {at}"
            );
            assert!(e.output == k.output, "the output differs, {at}");
        }
    }
    for name in ["README.md", "README.ko.md"] {
        let spans = markdown::code_spans(&docs::read(name));
        assert!(
            spans.iter().any(|s| s.code == TERMINAL),
            "{name} must say the examples come from `{TERMINAL}`"
        );
    }
}

#[test]
fn the_compare_example_shows_both_kinds_of_difference() {
    let lines: Vec<String> = all_examples()
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

/// The pictures docs/measurement.md's "Statistics" draws by hand (indented
/// inside a list item) are built like the real ones: rows, the ends of each
/// scale, and the notes and legend the examples printed, word for word.
#[test]
fn the_hand_drawn_pictures_follow_the_real_ones() {
    let (mut real_notes, mut real_legend) = (Vec::new(), None);
    for example in all_examples() {
        if example.output.iter().any(|l| plot_row(l).is_some()) {
            let (notes, legend) = notes_and_legend(&example.output);
            real_notes.extend(notes);
            real_legend = real_legend.or(legend);
        }
    }
    assert!(
        !real_notes.is_empty() && real_legend.is_some(),
        "no example prints a picture with its note and legend"
    );
    let text = docs::read("docs/measurement.md");
    let mut drawn = 0;
    // The code blocks that are no example (no `$ tlsping` line opens them).
    let by_hand = markdown::code_blocks(&text)
        .into_iter()
        .filter(|b| !b.code.starts_with("$ "));
    for code in by_hand {
        let lines: Vec<String> = code.code.lines().map(String::from).collect();
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

/// The Quickstart's block, changed by `f`.
fn quickstart_with(f: impl FnOnce(&mut Vec<String>)) -> (Vec<String>, Vec<String>) {
    let block = examples("README.md", &docs::read("README.md"))
        .remove(0)
        .output;
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

#[test]
fn an_excerpt_keeps_its_lines_in_order_and_leaves_out_the_rest() {
    let run: Vec<String> = [
        "--- target compared with localhost:1, round by round ---",
        "cold dns: no difference detectable between localhost:2 and localhost:1 \
         (median 0.00ms, 95% CI -0.02 .. 0.02), 7",
        "    rounds",
        "cold tls: localhost:2 is 20.7ms slower than localhost:1 (95% CI 16.0 .. 25.1), 7 rounds",
        "warm srv: localhost:2 is 20.3ms slower than localhost:1 (95% CI 20.0 .. 24.1), 7 rounds",
    ]
    .map(String::from)
    .to_vec();
    let shown =
        |lines: &[usize]| -> Vec<String> { lines.iter().map(|&i| run[i].clone()).collect() };
    assert!(excerpt_problems(&shown(&[0, 3, 4]), &run).is_empty());
    assert_eq!(
        excerpt_problems(&shown(&[0, 4, 3]), &run).len(),
        1,
        "out of order"
    );
    let mut reworded = shown(&[0, 3]);
    reworded[1] = reworded[1].replace("cold tls", "cold tcp");
    assert_eq!(
        excerpt_problems(&reworded, &run).len(),
        1,
        "a line the run lacks"
    );
}

/// `value` with every number that is not an integer set aside: a figure
/// may change from run to run, a count may not.
fn figures_free(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if !(n.is_u64() || n.is_i64()) => Value::String("N".into()),
        Value::Array(items) => Value::Array(items.iter().map(figures_free).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), figures_free(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// docs/tls.md's JSON excerpt of a server that accepts only P-384: a cold
/// probe against such a test server has the same fields, counts and names,
/// the figures aside.
#[test]
fn the_json_excerpt_of_a_hello_retry_is_what_such_a_server_gets() {
    let text = docs::read("docs/tls.md");
    let excerpt = markdown::code_blocks(&text)
        .into_iter()
        .find_map(|b| b.code.strip_prefix("\"tls_ms\": ").map(str::to_string))
        .expect("docs/tls.md's JSON excerpt of a cold sample");
    let excerpt = excerpt.trim_end();
    let shown: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&format!("{{\"tls_ms\": {excerpt}}}")).expect("the excerpt is JSON");
    let server = start(ServerOpts {
        groups: Some("P-384".into()),
        ..Default::default()
    });
    let args = ["-n", "2", "-m", "cold", "--resume", "off", &server.url()];
    let (doc, out) = support::quick_json(&args);
    assert_eq!(out.status.code(), Some(0), "{}", support::show(&out));
    let sample = &doc["samples"][1];
    for (key, value) in &shown {
        assert_eq!(
            figures_free(&sample[key]),
            figures_free(value),
            "{key} in docs/tls.md and in {sample:#}"
        );
    }
}

/// The Quickstart's block goes between its markers, in that order: a
/// document with only the end marker (which starts as the first one does)
/// is left alone, never written twice over.
#[test]
fn the_quickstart_block_goes_between_its_two_markers_only() {
    let out = "line one\nline two\n";
    let doc = format!(
        "intro\n{} by hand -->\nold\n{}\nafter\n",
        quickstart::BEGIN,
        quickstart::END
    );
    let new = quickstart::splice(&doc, out).unwrap();
    assert_eq!(new.matches(quickstart::END).count(), 1, "{new}");
    assert!(
        !new.contains("old") && new.contains("    line two\n"),
        "{new}"
    );
    assert!(
        new.ends_with(&format!("{}\nafter\n", quickstart::END)),
        "{new}"
    );
    let only_end = format!("intro\n{}\nafter\n", quickstart::END);
    assert_eq!(quickstart::splice(&only_end, out), None);
    let reversed = format!(
        "{}\nx\n{} by hand -->\n",
        quickstart::END,
        quickstart::BEGIN
    );
    assert_eq!(quickstart::splice(&reversed, out), None);
}

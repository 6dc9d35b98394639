//! The Korean documentation stays in step with the English one, file by
//! file: `README.ko.md` mirrors `README.md`, `docs/ko/*.md` mirrors
//! `docs/*.md`, `CONTRIBUTING.ko.md` mirrors `CONTRIBUTING.md`. Every
//! English file has its Korean mirror and every Korean file its English
//! original (here); a pair has the same heading structure (level by level,
//! in order), the same blocks under each heading (paragraphs, list items,
//! tables, code blocks), the same code blocks (and HTML blocks, the
//! Quickstart's markers) byte for byte, the same
//! commands, flags, exit codes, `error_kind` slugs and JSON field names
//! (`readme_ko/in_step.rs`) and links, a link to another English file
//! pointing at its Korean mirror (`readme_ko/links.rs`). Prose may differ;
//! everything a reader copies or a script reads may not. The documents are
//! read as GitHub reads them (`support::markdown`).

mod support;

#[path = "readme_ko/in_step.rs"]
mod in_step;
#[path = "readme_ko/links.rs"]
mod links;

use std::collections::BTreeSet;

use support::docs::{self, korean_name as mirror_of, Doc};
use support::markdown;

/// The files the documentation is split into (issue 32's fixed split): the
/// English names; each has its Korean mirror.
const REQUIRED: &[&str] = &[
    "README.md",
    "CONTRIBUTING.md",
    "docs/measurement.md",
    "docs/output.md",
    "docs/compare.md",
    "docs/monitoring.md",
    "docs/tls.md",
    "docs/performance.md",
];

/// The front door's length limit, in lines, for both editions.
const README_MAX_LINES: usize = 300;

/// Within this many lines a reader of either README reaches a runnable
/// `tlsping` command and the line that reads the TLS share.
const FIRST_SCREEN_LINES: usize = 60;

/// Every English file whose mirror exists, loaded with its mirror.
fn pairs() -> Vec<(Doc, Doc)> {
    let ko = korean_set();
    docs::english_names()
        .into_iter()
        .filter(|en| ko.contains(&mirror_of(en)))
        .map(|en| (docs::load(&en), docs::load(&mirror_of(&en))))
        .collect()
}

fn korean_set() -> BTreeSet<String> {
    docs::korean_names().into_iter().collect()
}

/// Files without their counterpart, both ways, and required files missing
/// from the English list (their mirrors are then missing too).
fn pairing_problems(en: &[String], ko: &[String]) -> Vec<String> {
    let en_set: BTreeSet<&str> = en.iter().map(String::as_str).collect();
    let ko_set: BTreeSet<&str> = ko.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for name in REQUIRED {
        if !en_set.contains(name) {
            out.push(format!("{name} is missing (issue 32's split)"));
        }
        if !ko_set.contains(mirror_of(name).as_str()) {
            out.push(format!("{} is missing (issue 32's split)", mirror_of(name)));
        }
    }
    for name in en {
        let mirror = mirror_of(name);
        if !ko_set.contains(mirror.as_str()) && !REQUIRED.contains(&name.as_str()) {
            out.push(format!("{name} has no Korean mirror {mirror}"));
        }
    }
    for name in ko {
        match docs::english_name(name) {
            Some(orig) if en_set.contains(orig.as_str()) => {}
            Some(orig) if REQUIRED.contains(&orig.as_str()) => {}
            Some(orig) => out.push(format!("{name} has no English original {orig}")),
            None => out.push(format!("{name} is not named as a Korean mirror")),
        }
    }
    out
}

/// What the first screen of a README lacks: a `$ tlsping` command and the
/// output line that gives the TLS share.
fn first_screen_problems(name: &str, text: &str) -> Vec<String> {
    let first: Vec<&str> = text.lines().take(FIRST_SCREEN_LINES).collect();
    [
        ("a `$ tlsping` command", "    $ tlsping "),
        (
            "the line that reads the TLS share",
            ", of which client set-up ",
        ),
    ]
    .into_iter()
    .filter(|(_, needle)| !first.iter().any(|l| l.contains(needle)))
    .map(|(what, _)| format!("{name} does not show {what} in its first {FIRST_SCREEN_LINES} lines"))
    .collect()
}

fn assert_none(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

// ---------------------------------------------------------------------------
// The editions as they are.

#[test]
fn every_document_has_its_mirror() {
    assert_none(
        "the Korean edition does not have the English one's files",
        pairing_problems(&docs::english_names(), &docs::korean_names()),
    );
}

#[test]
fn each_pair_is_in_step() {
    let ko_docs = korean_set();
    let mut problems = Vec::new();
    for (en, ko) in pairs() {
        problems.extend(in_step::pair_problems(&en, &ko, &ko_docs));
    }
    assert_none(
        "the Korean edition has drifted from the English one",
        problems,
    );
}

#[test]
fn the_readmes_are_front_doors_that_link_to_each_other() {
    let (en, ko) = (docs::load("README.md"), docs::load("README.ko.md"));
    let mut problems = Vec::new();
    for doc in [&en, &ko] {
        let lines = doc.text.lines().count();
        if lines > README_MAX_LINES {
            problems.push(format!(
                "{} has {lines} lines, more than {README_MAX_LINES}",
                doc.name
            ));
        }
        problems.extend(first_screen_problems(&doc.name, &doc.text));
    }
    for (doc, other) in [(&en, &ko), (&ko, &en)] {
        if !markdown::links(&doc.text).contains(&other.name) {
            problems.push(format!(
                "link to {} is missing from {}",
                other.name, doc.name
            ));
        }
    }
    assert_none("the READMEs", problems);
}

#[test]
fn extraction_finds_enough_in_the_english_edition() {
    let all: String = docs::english()
        .into_iter()
        .map(|d| d.text)
        .collect::<Vec<_>>()
        .join("\n");
    let f = in_step::flags(&all);
    assert!(f.len() >= 20, "only {} flags found: {f:?}", f.len());
    for flag in ["--count", "--json", "--no-pin-ip", "-n", "-4", "-v"] {
        assert!(f.contains(flag), "{flag} not extracted");
    }
    let blocks = in_step::code_blocks(&all);
    assert!(blocks.len() >= 10, "only {} code blocks", blocks.len());
    assert!(
        blocks.iter().any(|b| b.starts_with("```promql")),
        "the ```promql block not extracted"
    );
    let codes = in_step::exit_code_rows(&all);
    assert_eq!(codes.len(), 7, "exit code rows: {codes:?}");
    let s = in_step::slugs(&all);
    assert!(s.len() >= 10, "only {} error_kind slugs: {s:?}", s.len());
    for slug in ["timeout", "cert_unknown_ca", "canceled", "error"] {
        assert!(s.contains(slug), "slug {slug} not extracted");
    }
    let j = in_step::json_fields(&all);
    for field in ["error_kind", "paired_gain_ci_ms", "p95_ms", "warnings[]"] {
        assert!(j.contains(field), "field {field} not extracted: {j:?}");
    }
    assert!(
        !in_step::inline_commands(&all).is_empty(),
        "no inline command extracted"
    );
    let headings = markdown::headings(&all).len();
    assert!(headings >= 20, "only {headings} headings extracted");
    let links = markdown::links(&all).len();
    assert!(links >= 40, "only {links} links extracted");
    let blocks = markdown::blocks(&all);
    for kind in ["paragraph", "list item", "table", "code block", "heading 2"] {
        assert!(
            blocks.iter().filter(|b| b.kind == kind).count() >= 5,
            "fewer than five blocks of kind {kind}"
        );
    }
}

// ---------------------------------------------------------------------------
// The checker on the real documents altered on purpose.

#[test]
fn checker_reports_a_missing_or_extra_file() {
    let en: Vec<String> = REQUIRED.iter().map(|s| s.to_string()).collect();
    let mut ko: Vec<String> = REQUIRED.iter().map(|s| mirror_of(s)).collect();
    assert_eq!(pairing_problems(&en, &ko), Vec::<String>::new());
    assert!(ko.contains(&"docs/ko/tls.md".to_string()));
    assert!(ko.contains(&"CONTRIBUTING.ko.md".to_string()));
    ko.retain(|n| n != "docs/ko/tls.md");
    ko.push("docs/ko/extra.md".to_string());
    let mut en_more = en.clone();
    en_more.push("docs/new.md".to_string());
    assert_eq!(
        pairing_problems(&en_more, &ko),
        vec![
            "docs/ko/tls.md is missing (issue 32's split)",
            "docs/new.md has no Korean mirror docs/ko/new.md",
            "docs/ko/extra.md has no English original docs/extra.md",
        ]
    );
}

/// A section dropped from the real Korean README, and a code block changed
/// in it, are both reported.
#[test]
fn checker_reports_a_dropped_section_and_an_altered_code_block() {
    let (en, ko) = (docs::load("README.md"), docs::load("README.ko.md"));
    let ko_docs = korean_set();
    assert_none(
        "README pair before altering",
        in_step::pair_problems(&en, &ko, &ko_docs),
    );
    // Drop the last second-level section but one (its heading and body).
    let level_two: Vec<usize> = markdown::headings(&ko.text)
        .into_iter()
        .filter(|h| h.level == 2)
        .map(|h| h.at)
        .collect();
    let cut = level_two[level_two.len() - 2]..level_two[level_two.len() - 1];
    let dropped = ko.text[cut.clone()]
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let altered = Doc {
        name: ko.name.clone(),
        text: format!("{}{}", &ko.text[..cut.start], &ko.text[cut.end..]),
    };
    let problems = in_step::heading_problems(&en.text, &en.name, &altered.text, &altered.name);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("heading structure differs"),
        "{problems:?}"
    );
    assert!(!dropped.is_empty() && !altered.text.contains(&dropped));
    // A command changed in one code block.
    let block = in_step::code_blocks(&ko.text)
        .into_iter()
        .find(|b| b.contains("tlsping "))
        .expect("a code block with a command in README.ko.md");
    let changed = Doc {
        name: ko.name.clone(),
        text: ko
            .text
            .replacen(&block, &block.replacen("tlsping ", "tlsping -q ", 1), 1),
    };
    let problems = in_step::pair_problems(&en, &changed, &ko_docs);
    assert!(
        problems.iter().any(|p| p.starts_with("code block ")),
        "{problems:?}"
    );
}

#[test]
fn checker_reports_a_first_screen_without_a_command() {
    let good = "# t\n\n    $ tlsping x\n      tls 1ms, of which client set-up 0.5ms\n";
    assert!(first_screen_problems("r", good).is_empty());
    let late = format!("{}{good}", "\n".repeat(FIRST_SCREEN_LINES));
    assert_eq!(
        first_screen_problems("r", &late),
        vec![
            "r does not show a `$ tlsping` command in its first 60 lines",
            "r does not show the line that reads the TLS share in its first 60 lines",
        ]
    );
}

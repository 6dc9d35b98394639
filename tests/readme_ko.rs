//! The Korean README (`README.ko.md`) stays in step with `README.md`: the
//! same flags, exit codes, `error_kind` slugs, JSON field names, command
//! lines and links. Prose may differ; everything a reader copies or a script
//! reads may not.

use std::collections::{BTreeMap, BTreeSet};

const EN: &str = include_str!("../README.md");
const KO: &str = include_str!("../README.ko.md");
const EN_NAME: &str = "README.md";
const KO_NAME: &str = "README.ko.md";

/// The contents of every backtick span (spans may cross a line break).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Every long flag (`--name`) anywhere in the text, and every short flag
/// (`-n`, `-4`) written inside backticks.
fn flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(pos) = text[i..].find("--") {
        let start = i + pos;
        let name_start = start + 2;
        let preceded_by_dash = start > 0 && bytes[start - 1] == b'-';
        let first_ok = bytes
            .get(name_start)
            .is_some_and(|b| b.is_ascii_lowercase());
        if !preceded_by_dash && first_ok {
            let len = text[name_start..]
                .bytes()
                .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                .count();
            let name = text[name_start..name_start + len].trim_end_matches('-');
            out.insert(format!("--{name}"));
            i = name_start + len;
        } else {
            // Skip the whole run of dashes (`---`, `-----+`).
            i = start + text[start..].bytes().take_while(|b| *b == b'-').count();
        }
    }
    for span in code_spans(text) {
        for word in span.split_whitespace() {
            let w = word.as_bytes();
            if w.len() == 2 && w[0] == b'-' && w[1].is_ascii_alphanumeric() {
                out.insert(word.to_string());
            }
        }
    }
    out
}

/// The `| N |` prefix of every exit-code row (a table row whose first cell
/// is a bare number).
fn exit_code_rows(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("| ")?;
            let (cell, _) = rest.split_once(" |")?;
            (!cell.is_empty() && cell.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("| {cell} |"))
        })
        .collect()
}

/// The rows of the failure table: the table whose header's first cell is
/// `` `error_kind` ``. Returns (slug, whole row).
fn failure_rows(text: &str) -> Vec<(String, String)> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("| `error_kind` |"))
        .skip(2); // the header and the `|---|---|` line
    let mut out = Vec::new();
    for line in lines.by_ref() {
        let Some(rest) = line.strip_prefix("| `") else {
            break;
        };
        let Some((slug, _)) = rest.split_once("` |") else {
            break;
        };
        out.push((slug.to_string(), line.to_string()));
    }
    out
}

fn slugs(text: &str) -> BTreeSet<String> {
    failure_rows(text).into_iter().map(|(s, _)| s).collect()
}

/// Identifiers inside backticks that look like JSON fields: lower-case
/// snake_case with at least one underscore (`error_kind`,
/// `paired_gain_ci_ms`), or an array marked with `[]` (`warnings[]`).
fn json_fields(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for span in code_spans(text) {
        let tokens = span.split(|c: char| !(c.is_ascii_alphanumeric() || "_[]".contains(c)));
        for tok in tokens {
            let base = tok.strip_suffix("[]").unwrap_or(tok);
            let snake = base.starts_with(|c: char| c.is_ascii_lowercase())
                && base
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !base.ends_with('_');
            let is_field = snake && (base.contains('_') || tok.ends_with("[]"));
            if is_field {
                out.insert(tok.to_string());
            }
        }
    }
    out
}

/// Every line indented by four spaces, in order: the command blocks and the
/// sample output.
fn command_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("    ")).collect()
}

/// Every link target, `[text](target)`.
fn link_targets(text: &str) -> BTreeSet<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(t, _)| t.to_string()))
        .collect()
}

/// One message per item of `a` that `b` lacks, naming the item and the file
/// it is missing from.
fn lacking(
    kind: &str,
    a: &BTreeSet<String>,
    a_name: &str,
    b: &BTreeSet<String>,
    b_name: &str,
) -> Vec<String> {
    a.difference(b)
        .map(|x| format!("{kind} {x:?} is in {a_name} but missing from {b_name}"))
        .collect()
}

fn both_ways(
    kind: &str,
    a: &BTreeSet<String>,
    a_name: &str,
    b: &BTreeSet<String>,
    b_name: &str,
) -> Vec<String> {
    let mut out = lacking(kind, a, a_name, b, b_name);
    out.extend(lacking(kind, b, b_name, a, a_name));
    out
}

/// Problems between two lists of command lines that must be identical and in
/// the same order.
fn command_problems(a: &[&str], a_name: &str, b: &[&str], b_name: &str) -> Vec<String> {
    fn counts<'a>(lines: &[&'a str]) -> BTreeMap<&'a str, usize> {
        let mut m = BTreeMap::new();
        for l in lines {
            *m.entry(*l).or_insert(0) += 1;
        }
        m
    }
    let (ca, cb) = (counts(a), counts(b));
    let mut out = Vec::new();
    for (x, y, x_name, y_name) in [(&ca, &cb, a_name, b_name), (&cb, &ca, b_name, a_name)] {
        for (line, n) in x {
            let m = y.get(line).copied().unwrap_or(0);
            if *n > m {
                out.push(format!(
                    "command line {line:?} is in {x_name} ({n}x) but missing from {y_name} ({m}x)"
                ));
            }
        }
    }
    if out.is_empty() && a != b {
        let i = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
        out.push(format!(
            "command lines are in a different order from line {}: {a_name} has {:?}, {b_name} has {:?}",
            i + 1,
            a[i],
            b[i]
        ));
    }
    out
}

fn assert_none(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{KO_NAME} has drifted from {EN_NAME}:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn extraction_finds_enough_in_readme() {
    let f = flags(EN);
    assert!(
        f.len() >= 20,
        "only {} flags found in {EN_NAME}: {f:?}",
        f.len()
    );
    for flag in ["--count", "--json", "--no-pin-ip", "-n", "-4", "-v"] {
        assert!(f.contains(flag), "{flag} not extracted from {EN_NAME}");
    }
    let c = command_lines(EN);
    assert!(c.len() >= 10, "only {} command lines in {EN_NAME}", c.len());
    let codes = exit_code_rows(EN);
    assert_eq!(codes.len(), 7, "exit code rows in {EN_NAME}: {codes:?}");
    let s = slugs(EN);
    assert!(
        s.len() >= 10,
        "only {} error_kind slugs in {EN_NAME}: {s:?}",
        s.len()
    );
    for slug in ["timeout", "cert_unknown_ca", "canceled", "error"] {
        assert!(s.contains(slug), "slug {slug} not extracted from {EN_NAME}");
    }
    let j = json_fields(EN);
    for field in ["error_kind", "paired_gain_ci_ms", "p95_ms", "warnings[]"] {
        assert!(
            j.contains(field),
            "field {field} not extracted from {EN_NAME}: {j:?}"
        );
    }
    assert_eq!(
        EN.matches('`').count() % 2,
        0,
        "{EN_NAME} has an unbalanced backtick"
    );
    assert_eq!(
        KO.matches('`').count() % 2,
        0,
        "{KO_NAME} has an unbalanced backtick"
    );
}

#[test]
fn checker_reports_a_missing_flag() {
    let en = "Use `-n` and `--json`.\n\n    tlsping --json x\n";
    let ko = "`--json`을 사용합니다.\n\n    tlsping --json x\n";
    let problems = both_ways("flag", &flags(en), "en", &flags(ko), "ko");
    assert_eq!(
        problems,
        vec![r#"flag "-n" is in en but missing from ko"#.to_string()]
    );
    assert!(command_problems(&command_lines(en), "en", &command_lines(ko), "ko").is_empty());
    let problems = command_problems(&command_lines(en), "en", &[], "ko");
    assert_eq!(
        problems,
        vec![r#"command line "    tlsping --json x" is in en (1x) but missing from ko (0x)"#]
    );
}

#[test]
fn same_flags() {
    assert_none(both_ways("flag", &flags(EN), EN_NAME, &flags(KO), KO_NAME));
}

#[test]
fn same_exit_code_rows() {
    assert_none(both_ways(
        "exit code row",
        &exit_code_rows(EN),
        EN_NAME,
        &exit_code_rows(KO),
        KO_NAME,
    ));
}

#[test]
fn same_error_kinds() {
    // Slugs only the Korean table has; the English ones are checked below.
    let mut problems = lacking("error_kind slug", &slugs(KO), KO_NAME, &slugs(EN), EN_NAME);
    for (slug, row) in failure_rows(EN) {
        if !KO.contains(&format!("`{slug}`")) {
            problems.push(format!(
                "error_kind slug `{slug}` is in {EN_NAME} but missing from {KO_NAME}"
            ));
        }
        if !KO.lines().any(|l| l == row) {
            problems.push(format!(
                "failure table row {row:?} is in {EN_NAME} but missing from {KO_NAME}"
            ));
        }
    }
    assert_none(problems);
}

#[test]
fn same_json_fields() {
    assert_none(both_ways(
        "JSON field",
        &json_fields(EN),
        EN_NAME,
        &json_fields(KO),
        KO_NAME,
    ));
}

#[test]
fn same_command_lines_in_order() {
    assert_none(command_problems(
        &command_lines(EN),
        EN_NAME,
        &command_lines(KO),
        KO_NAME,
    ));
}

#[test]
fn editions_link_to_each_other() {
    let mut problems = Vec::new();
    if !EN.contains("](README.ko.md)") {
        problems.push(format!("link to README.ko.md is missing from {EN_NAME}"));
    }
    if !KO.contains("](README.md)") {
        problems.push(format!("link to README.md is missing from {KO_NAME}"));
    }
    // Every other link points at the same files in both editions.
    let mut en_links = link_targets(EN);
    let mut ko_links = link_targets(KO);
    en_links.remove("README.ko.md");
    ko_links.remove("README.md");
    problems.extend(both_ways("link", &en_links, EN_NAME, &ko_links, KO_NAME));
    assert_none(problems);
}

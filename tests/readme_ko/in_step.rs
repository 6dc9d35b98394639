//! What an English document and its Korean mirror must share, and the
//! messages that say where they part: the heading structure, the blocks
//! under each heading, the code blocks byte for byte, the commands, flags,
//! exit codes, `error_kind` slugs and JSON field names, and the links
//! (`links.rs`). Everything is read by `support::markdown`.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::docs::Doc;
use crate::support::markdown;

// ---------------------------------------------------------------------------
// What is read out of a text.

/// The code blocks, in order, each as written (fences and indentation
/// included).
pub fn code_blocks(text: &str) -> Vec<String> {
    markdown::code_blocks(text)
        .into_iter()
        .map(|b| b.source)
        .collect()
}

/// The HTML blocks (the Quickstart's markers), in order, each as written:
/// a reader does not see them, a program may look for them.
pub fn html_blocks(text: &str) -> Vec<String> {
    markdown::blocks(text)
        .into_iter()
        .filter(|b| b.kind == "html")
        .map(|b| b.source)
        .collect()
}

/// The commands written in code spans (`tlsping …`, `cargo …`, `curl …`),
/// whitespace squeezed, with how often each is written.
pub fn inline_commands(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for span in markdown::code_spans(text) {
        let squeezed = span.code.split_whitespace().collect::<Vec<_>>().join(" ");
        let first = squeezed.split(' ').next().unwrap_or("");
        let is_command = squeezed.contains(' ')
            && [
                "tlsping",
                "cargo",
                "curl",
                "install",
                "sudo",
                "man",
                "RUSTC_BOOTSTRAP=1",
            ]
            .contains(&first);
        if is_command {
            *out.entry(squeezed).or_insert(0) += 1;
        }
    }
    out
}

/// Every long flag (`--name`) anywhere in the text, prose, code and link
/// alike, and every short flag (`-n`, `-4`) written as a word of a code
/// span.
pub fn flags(text: &str) -> BTreeSet<String> {
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
    for span in markdown::code_spans(text) {
        for word in span.code.split_whitespace() {
            let w = word.as_bytes();
            if w.len() == 2 && w[0] == b'-' && w[1].is_ascii_alphanumeric() {
                out.insert(word.to_string());
            }
        }
    }
    out
}

/// `| N |` for every table row whose first cell is a bare number (the exit
/// codes).
pub fn exit_code_rows(text: &str) -> BTreeSet<String> {
    markdown::tables(text)
        .into_iter()
        .flat_map(|t| t.rows)
        .filter_map(|row| {
            let cell = row.cells.first()?;
            (!cell.is_empty() && cell.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("| {cell} |"))
        })
        .collect()
}

/// The rows of the failure table (the table whose header's first cell is
/// `` `error_kind` ``) that name a slug: (slug, the row as written).
pub fn failure_rows(text: &str) -> Vec<(String, String)> {
    markdown::tables(text)
        .into_iter()
        .filter(|t| t.header.cells.first().is_some_and(|c| c == "`error_kind`"))
        .flat_map(|t| t.rows)
        .filter_map(|row| {
            let first = row.cells.first()?;
            let slug = first.strip_prefix('`')?.strip_suffix('`')?;
            Some((slug.to_string(), row.source.clone()))
        })
        .collect()
}

pub fn slugs(text: &str) -> BTreeSet<String> {
    failure_rows(text).into_iter().map(|(s, _)| s).collect()
}

/// Identifiers in code spans that look like JSON fields: lower-case
/// snake_case with at least one underscore (`error_kind`,
/// `paired_gain_ci_ms`), or an array marked with `[]` (`warnings[]`).
pub fn json_fields(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for span in markdown::code_spans(text) {
        let tokens = span
            .code
            .split(|c: char| !(c.is_ascii_alphanumeric() || "_[]".contains(c)))
            .map(str::to_string)
            .collect::<Vec<_>>();
        for tok in tokens {
            let base = tok.strip_suffix("[]").unwrap_or(&tok);
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

// ---------------------------------------------------------------------------
// Comparing two lists.

/// One message per item of `a` that `b` lacks, naming the item and the file
/// it is missing from.
pub fn lacking(
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

pub fn both_ways(
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

fn counts<T: AsRef<str>>(items: &[T]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for x in items {
        *m.entry(x.as_ref().to_string()).or_insert(0) += 1;
    }
    m
}

/// Items each side has more often than the other, as messages.
fn count_problems(
    kind: &str,
    a: &BTreeMap<String, usize>,
    a_name: &str,
    b: &BTreeMap<String, usize>,
    b_name: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for (x, y, x_name, y_name) in [(a, b, a_name, b_name), (b, a, b_name, a_name)] {
        for (item, n) in x {
            let m = y.get(item).copied().unwrap_or(0);
            if *n > m {
                out.push(format!(
                    "{kind} {item:?} is in {x_name} ({n}x) but missing from {y_name} ({m}x)"
                ));
            }
        }
    }
    out
}

/// Problems between two lists that must be identical and in the same order:
/// what one has more often than the other, or else the first place where
/// their order differs.
pub fn sequence_problems<T: AsRef<str>>(
    kind: &str,
    a: &[T],
    a_name: &str,
    b: &[T],
    b_name: &str,
) -> Vec<String> {
    let mut out = count_problems(kind, &counts(a), a_name, &counts(b), b_name);
    let differs = a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.as_ref() != y.as_ref());
    if out.is_empty() && differs {
        let i = a
            .iter()
            .zip(b)
            .position(|(x, y)| x.as_ref() != y.as_ref())
            .unwrap_or(0);
        out.push(format!(
            "{kind}s are in a different order from the {}th: {a_name} has {:?}, {b_name} has {:?}",
            i + 1,
            a[i].as_ref(),
            b[i].as_ref()
        ));
    }
    out
}

/// The first place where two lists part (one may end first).
fn parting<T, U: PartialEq>(a: &[T], b: &[T], key: impl Fn(&T) -> U) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| key(x) != key(y))
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// The block structure: paragraphs, list items, tables, code blocks (and
/// quotes, HTML blocks, rules) in the same order under the same headings.
/// Names the first place where it parts, by the section it is in.
pub fn block_problems(en: &str, en_name: &str, ko: &str, ko_name: &str) -> Vec<String> {
    let (a, b) = (markdown::blocks(en), markdown::blocks(ko));
    let Some(i) = parting(&a, &b, |x| x.kind.clone()) else {
        return Vec::new();
    };
    let show = |blocks: &[markdown::Block]| match blocks.get(i) {
        Some(block) => format!("a {} under {:?}", block.kind, block.section),
        None => "nothing more".to_string(),
    };
    vec![format!(
        "block structure differs ({en_name}: {} blocks, {ko_name}: {}) at block {}: \
         {en_name} has {}, {ko_name} has {}",
        a.len(),
        b.len(),
        i + 1,
        show(&a),
        show(&b)
    )]
}

/// The heading structure: the level of every heading in order must match.
/// Names both headings where the structure first parts.
pub fn heading_problems(en: &str, en_name: &str, ko: &str, ko_name: &str) -> Vec<String> {
    let (a, b) = (markdown::headings(en), markdown::headings(ko));
    let Some(i) = parting(&a, &b, |h| h.level) else {
        return Vec::new();
    };
    let show = |h: Option<&markdown::Heading>| match h {
        Some(h) => h.source.clone(),
        None => "(no more headings)".to_string(),
    };
    vec![format!(
        "heading structure differs ({en_name}: {} headings, {ko_name}: {}) at heading {}: \
         {en_name} has {:?}, {ko_name} has {:?}",
        a.len(),
        b.len(),
        i + 1,
        show(a.get(i)),
        show(b.get(i))
    )]
}

/// The failure table: the same slugs, and each English row whole in the
/// Korean table.
fn failure_table_problems(en: &Doc, ko: &Doc) -> Vec<String> {
    let mut out = lacking(
        "error_kind slug",
        &slugs(&ko.text),
        &ko.name,
        &slugs(&en.text),
        &en.name,
    );
    let ko_rows = failure_rows(&ko.text);
    for (slug, row) in failure_rows(&en.text) {
        if !ko_rows.iter().any(|(s, _)| *s == slug) {
            out.push(format!(
                "error_kind slug `{slug}` is in {} but missing from {}",
                en.name, ko.name
            ));
        }
        if !ko_rows.iter().any(|(_, r)| *r == row) {
            out.push(format!(
                "failure table row {row:?} is in {} but missing from {}",
                en.name, ko.name
            ));
        }
    }
    out
}

/// Everything that differs between an English file and its mirror.
pub fn pair_problems(en: &Doc, ko: &Doc, ko_docs: &BTreeSet<String>) -> Vec<String> {
    let (e, k, en_name, ko_name) = (&en.text, &ko.text, en.name.as_str(), ko.name.as_str());
    let mut out = heading_problems(e, en_name, k, ko_name);
    if out.is_empty() {
        out.extend(block_problems(e, en_name, k, ko_name));
    }
    out.extend(sequence_problems(
        "code block",
        &code_blocks(e),
        en_name,
        &code_blocks(k),
        ko_name,
    ));
    out.extend(sequence_problems(
        "HTML block",
        &html_blocks(e),
        en_name,
        &html_blocks(k),
        ko_name,
    ));
    out.extend(count_problems(
        "inline command",
        &inline_commands(e),
        en_name,
        &inline_commands(k),
        ko_name,
    ));
    out.extend(both_ways("flag", &flags(e), en_name, &flags(k), ko_name));
    out.extend(both_ways(
        "exit code row",
        &exit_code_rows(e),
        en_name,
        &exit_code_rows(k),
        ko_name,
    ));
    out.extend(failure_table_problems(en, ko));
    out.extend(both_ways(
        "JSON field",
        &json_fields(e),
        en_name,
        &json_fields(k),
        ko_name,
    ));
    out.extend(super::links::link_problems(en, ko, ko_docs));
    for doc in [en, ko] {
        for line in markdown::stray_backticks(&doc.text) {
            out.push(format!(
                "{} line {line}: a backtick that opens no code span",
                doc.name
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The checks on texts altered on purpose.

#[test]
fn checker_reports_a_missing_flag() {
    let en = "Use `-n` and `--json`.\n\n    tlsping --json x\n";
    let ko = "`--json`을 사용합니다.\n\n    tlsping --json x\n";
    let problems = both_ways("flag", &flags(en), "en", &flags(ko), "ko");
    assert_eq!(
        problems,
        vec![r#"flag "-n" is in en but missing from ko"#.to_string()]
    );
    let none: Vec<String> = Vec::new();
    let problems = sequence_problems("code block", &code_blocks(en), "en", &none, "ko");
    assert_eq!(
        problems,
        vec![r#"code block "    tlsping --json x" is in en (1x) but missing from ko (0x)"#]
    );
}

#[test]
fn checker_reports_a_dropped_paragraph_or_list_item() {
    let en = "# A\n\nOne.\n\n    code\n\n- x\n  more x\n- y\n\n| t |\n|---|\n\nTwo.\n";
    let ko = "# 가\n\n하나.\n\n    code\n\n- x\n  x 더\n- y\n\n| t |\n|---|\n\n둘.\n";
    assert!(block_problems(en, "en", ko, "ko").is_empty());
    let kinds: Vec<String> = markdown::blocks(en).into_iter().map(|b| b.kind).collect();
    assert_eq!(
        kinds,
        [
            "heading 1",
            "paragraph",
            "code block",
            "list item",
            "list item",
            "table",
            "paragraph"
        ]
    );
    let ko_lacking_an_item = ko.replace("- y\n", "");
    assert_eq!(
        block_problems(en, "en", &ko_lacking_an_item, "ko"),
        vec![
            r##"block structure differs (en: 7 blocks, ko: 6) at block 5: en has a list item under "# A", ko has a table under "# 가""##
        ]
    );
    let ko_lacking_the_end = ko.replace("\n둘.\n", "");
    assert_eq!(block_problems(en, "en", &ko_lacking_the_end, "ko").len(), 1);
    // A paragraph of its own inside a list item counts; the item's first
    // does not.
    let loose = "- x\n\n  more of x\n- y\n";
    let kinds: Vec<String> = markdown::blocks(loose)
        .into_iter()
        .map(|b| b.kind)
        .collect();
    assert_eq!(kinds, ["list item", "paragraph", "list item"]);
}

#[test]
fn checker_reports_a_heading_at_the_wrong_level() {
    let en = "# A\n\n## B\n\n```sh\n# not a heading\n```\n\n### C\n";
    let ko = "# 가\n\n## 나\n\n```sh\n# not a heading\n```\n\n## 다\n";
    assert_eq!(
        heading_problems(en, "en", ko, "ko"),
        vec![
            r####"heading structure differs (en: 3 headings, ko: 3) at heading 3: en has "### C", ko has "## 다""####
        ]
    );
    assert!(heading_problems(en, "en", en, "en").is_empty());
}

#[test]
fn checker_reports_a_table_row_or_a_backtick_gone() {
    let en = Doc {
        name: "en".into(),
        text: "| `error_kind` | means |\n|---|---|\n| `timeout` | too slow |\n\
               | `canceled` | stopped |\n\n| code | meaning |\n|---|---|\n| 0 | fine |\n"
            .into(),
    };
    assert_eq!(
        slugs(&en.text),
        ["canceled", "timeout"].map(String::from).into()
    );
    assert_eq!(exit_code_rows(&en.text), ["| 0 |".to_string()].into());
    let ko = Doc {
        name: "ko".into(),
        text: en
            .text
            .replace("| `canceled` | stopped |\n", "")
            .replace("too slow", "too `slow"),
    };
    let ko_docs = BTreeSet::new();
    assert_eq!(
        pair_problems(&en, &ko, &ko_docs),
        [
            r#"failure table row "| `timeout` | too slow |" is in en but missing from ko"#
                .to_string(),
            "error_kind slug `canceled` is in en but missing from ko".into(),
            r#"failure table row "| `canceled` | stopped |" is in en but missing from ko"#.into(),
            "ko line 3: a backtick that opens no code span".into(),
        ]
    );
}

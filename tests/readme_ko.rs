//! The Korean documentation stays in step with the English one, file by
//! file: `README.ko.md` mirrors `README.md`, `docs/ko/X.md` mirrors
//! `docs/X.md`, `CONTRIBUTING.ko.md` mirrors `CONTRIBUTING.md`. Every English
//! file has its Korean mirror and every Korean file its English original; a
//! pair has the same heading structure (level by level, in order), the same
//! blocks under each heading (paragraphs, list items, tables, code blocks),
//! the same code blocks byte for byte, the same commands, flags, exit codes,
//! `error_kind` slugs, JSON field names and links (a link to another English
//! file points at its Korean mirror). Prose may differ; everything a reader
//! copies or a script reads may not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The files the documentation is split into (issue 32's fixed split): the
/// English names; each has its Korean mirror (`mirror_of`).
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

/// One markdown file: its path from the repository root (`/`-separated) and
/// its text.
struct Doc {
    name: String,
    text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `*.md` files directly in `dir` (relative to the root), sorted, as
/// `dir/name.md`.
fn markdown_in(dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    out.sort();
    out
}

/// The English documentation that exists: the README, CONTRIBUTING and every
/// `docs/*.md`.
fn english_names() -> Vec<String> {
    let mut out: Vec<String> = ["README.md", "CONTRIBUTING.md"]
        .into_iter()
        .filter(|n| root().join(n).is_file())
        .map(String::from)
        .collect();
    out.extend(markdown_in("docs"));
    out
}

/// The Korean documentation that exists: `README.ko.md`,
/// `CONTRIBUTING.ko.md` and every `docs/ko/*.md`.
fn korean_names() -> Vec<String> {
    let mut out: Vec<String> = ["README.ko.md", "CONTRIBUTING.ko.md"]
        .into_iter()
        .filter(|n| root().join(n).is_file())
        .map(String::from)
        .collect();
    out.extend(markdown_in("docs/ko"));
    out
}

/// The Korean mirror of an English file's name.
fn mirror_of(en: &str) -> String {
    if let Some(rest) = en.strip_prefix("docs/") {
        return format!("docs/ko/{rest}");
    }
    match en.strip_suffix(".md") {
        Some(stem) => format!("{stem}.ko.md"),
        None => en.to_string(),
    }
}

/// The English original of a Korean file's name, or `None` if the name is
/// not one of the Korean edition's.
fn original_of(ko: &str) -> Option<String> {
    if let Some(rest) = ko.strip_prefix("docs/ko/") {
        return Some(format!("docs/{rest}"));
    }
    ko.strip_suffix(".ko.md").map(|stem| format!("{stem}.md"))
}

fn load(name: &str) -> Doc {
    let text = std::fs::read_to_string(root().join(name))
        .unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
    Doc {
        name: name.to_string(),
        text,
    }
}

/// Every English file whose mirror exists, loaded with its mirror.
fn pairs() -> Vec<(Doc, Doc)> {
    let ko: BTreeSet<String> = korean_names().into_iter().collect();
    english_names()
        .into_iter()
        .filter(|en| ko.contains(&mirror_of(en)))
        .map(|en| (load(&en), load(&mirror_of(&en))))
        .collect()
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
        match original_of(name) {
            Some(orig) if en_set.contains(orig.as_str()) => {}
            Some(orig) if REQUIRED.contains(&orig.as_str()) => {}
            Some(orig) => out.push(format!("{name} has no English original {orig}")),
            None => out.push(format!("{name} is not named as a Korean mirror")),
        }
    }
    out
}

// ---------------------------------------------------------------------------
// What is read out of a text.

/// The text's lines, each with whether it lies inside a fenced code block
/// (the fence lines themselves count as inside).
fn fenced_flags(text: &str) -> Vec<(&str, bool)> {
    let mut fence: Option<String> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker: String = trimmed
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        let opens = marker.len() >= 3 && marker.chars().all(|c| c == marker.as_bytes()[0] as char);
        match &fence {
            Some(f) => {
                out.push((line, true));
                if opens && marker.starts_with(f.as_str()) && trimmed.trim_end() == marker {
                    fence = None;
                }
            }
            None if opens => {
                fence = Some(marker);
                out.push((line, true));
            }
            None => out.push((line, false)),
        }
    }
    out
}

/// The headings (`#` to `######` at the start of a line, outside fenced
/// code), as (level, title).
fn headings(text: &str) -> Vec<(usize, String)> {
    fenced_flags(text)
        .into_iter()
        .filter(|(_, fenced)| !fenced)
        .filter_map(|(line, _)| {
            let level = line.bytes().take_while(|b| *b == b'#').count();
            let title = line[level..].strip_prefix(' ')?;
            (1..=6)
                .contains(&level)
                .then(|| (level, title.trim().to_string()))
        })
        .collect()
}

/// The code blocks, in order: each fenced block whole (fences included), and
/// each run of lines indented by four spaces or more outside a fence (a
/// command block, a sample output, a picture inside a list item).
fn code_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for (line, fenced) in fenced_flags(text) {
        let indented = !fenced && (line.starts_with("    ") || line.starts_with('\t'));
        let continues = if fenced {
            in_fence
        } else {
            indented && !in_fence
        };
        if !continues && !current.is_empty() {
            out.push(current.join("\n"));
            current.clear();
        }
        if fenced || indented {
            current.push(line);
        }
        in_fence = fenced;
    }
    if !current.is_empty() {
        out.push(current.join("\n"));
    }
    out
}

/// The contents of every backtick span (spans may cross a line break).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The commands written inline in backticks (`tlsping …`, `cargo …`,
/// `curl …`), whitespace squeezed, with how often each is written.
fn inline_commands(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for span in code_spans(text) {
        let squeezed = span.split_whitespace().collect::<Vec<_>>().join(" ");
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

/// Every link target, `[text](target)`, outside code blocks, in order.
fn link_targets(text: &str) -> Vec<String> {
    let prose: Vec<&str> = fenced_flags(text)
        .into_iter()
        .filter(|(l, fenced)| !fenced && !l.starts_with("    "))
        .map(|(l, _)| l)
        .collect();
    let prose = prose.join("\n");
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(t, _)| t.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------
// Links: where they lead, and what a link becomes in the other edition.

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The directory part of a file's name (`docs/ko` for `docs/ko/tls.md`).
fn dir_of(name: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = name.split('/').collect();
    parts.pop();
    parts
}

/// A relative link from file `from` resolved to a path from the root, or
/// `None` when it climbs out of the repository.
fn resolve<'a>(from: &'a str, path: &'a str) -> Option<String> {
    if path.is_empty() {
        return Some(from.to_string());
    }
    let mut parts = dir_of(from);
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut out = parts.join("/");
    if path.ends_with('/') {
        out.push('/');
    }
    Some(out)
}

/// The relative link from file `from` to `to` (both from the root).
fn relative(from: &str, to: &str) -> String {
    let from_dir = dir_of(from);
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out: Vec<&str> = vec![".."; from_dir.len() - common];
    out.extend(&to_parts[common..]);
    out.join("/")
}

/// The file a link from `from` leads to, with whether it names an anchor;
/// external links as written.
fn link_destination(from: &str, target: &str) -> (String, bool) {
    if is_external(target) {
        return (target.to_string(), false);
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let dest = resolve(from, path).unwrap_or_else(|| format!("(outside the repository) {path}"));
    (dest, fragment.is_some())
}

/// What a link of English file `en` becomes in its mirror `ko`: a link to an
/// English document points at its Korean mirror, a link to a Korean one (the
/// edition switch) at its English original, anything else at the same file,
/// written relative to the mirror's directory. The anchor's words differ
/// between editions, so only whether there is one is kept.
fn mirrored_link(en: &str, ko: &str, target: &str, ko_docs: &BTreeSet<String>) -> String {
    if is_external(target) {
        return target.to_string();
    }
    let (dest, anchor) = link_destination(en, target);
    let mirrored = if dest == en {
        ko.to_string()
    } else if ko_docs.contains(&mirror_of(&dest)) {
        mirror_of(&dest)
    } else if let Some(orig) = original_of(&dest).filter(|_| ko_docs.contains(&dest)) {
        orig
    } else {
        dest
    };
    let written = if mirrored == ko && anchor {
        String::new()
    } else {
        relative(ko, &mirrored)
    };
    if anchor {
        format!("{written}#…")
    } else {
        written
    }
}

/// A Korean file's own link with its anchor's words set aside, to compare
/// with `mirrored_link`.
fn without_anchor_words(target: &str) -> String {
    match target.split_once('#') {
        Some((path, _)) if !is_external(target) => format!("{path}#…"),
        _ => target.to_string(),
    }
}

/// The anchor GitHub gives a heading: its rendered text in lower case, with
/// everything but letters, digits, `_`, `-` and spaces dropped, and spaces
/// turned into `-`; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, title) in headings(text) {
        // A link in a heading renders as its text.
        let rendered = title.replace('`', "");
        let rendered = match (rendered.find("]("), rendered.find('[')) {
            (Some(mid), Some(open)) if open < mid => {
                let close = rendered[mid..]
                    .find(')')
                    .map_or(rendered.len(), |c| mid + c + 1);
                format!(
                    "{}{}{}",
                    &rendered[..open],
                    &rendered[open + 1..mid],
                    &rendered[close..]
                )
            }
            _ => rendered,
        };
        let base: String = rendered
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

// ---------------------------------------------------------------------------
// Comparing two lists.

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
fn sequence_problems<T: AsRef<str>>(
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

/// The kinds of the text's blocks, in order, each with the heading it sits
/// under: `paragraph`, `list item`, `table`, `code block` (fenced or
/// indented) and `heading N`. A list item's continuation lines belong to it;
/// a paragraph inside a list item after a blank line is a paragraph.
fn block_kinds(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut section = String::from("(top)");
    let mut prev = "blank";
    let mut in_fence = false;
    for (line, fenced) in fenced_flags(text) {
        if fenced {
            if !in_fence {
                out.push(("code block".to_string(), section.clone()));
            }
            in_fence = true;
            prev = "code";
            continue;
        }
        in_fence = false;
        let kind = if line.trim().is_empty() {
            prev = "blank";
            continue;
        } else if line.starts_with('#') {
            section = line.to_string();
            let level = line.bytes().take_while(|b| *b == b'#').count();
            prev = "heading";
            format!("heading {level}")
        } else if line.starts_with("    ") && matches!(prev, "blank" | "code") {
            let starts = prev == "blank";
            prev = "code";
            if !starts {
                continue;
            }
            "code block".to_string()
        } else if line.starts_with("- ") || is_numbered_item(line) {
            prev = "item";
            "list item".to_string()
        } else if line.starts_with('|') {
            let starts = prev != "table";
            prev = "table";
            if !starts {
                continue;
            }
            "table".to_string()
        } else if matches!(prev, "blank" | "heading" | "code" | "table") {
            prev = "paragraph";
            "paragraph".to_string()
        } else {
            continue; // a continuation line of a paragraph or a list item
        };
        out.push((kind, section.clone()));
    }
    out
}

fn is_numbered_item(line: &str) -> bool {
    let digits = line.bytes().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && line[digits..].starts_with(". ")
}

/// The block structure: paragraphs, list items, tables and code blocks in
/// the same order under the same headings. Names the first place where it
/// parts, by the section it is in.
fn block_problems(en: &str, en_name: &str, ko: &str, ko_name: &str) -> Vec<String> {
    let (a, b) = (block_kinds(en), block_kinds(ko));
    let at = a
        .iter()
        .zip(&b)
        .position(|((x, _), (y, _))| x != y)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())));
    let Some(i) = at else {
        return Vec::new();
    };
    let show = |blocks: &[(String, String)]| match blocks.get(i) {
        Some((kind, section)) => format!("a {kind} under {section:?}"),
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
/// Names both titles where the structure first parts.
fn heading_problems(en: &str, en_name: &str, ko: &str, ko_name: &str) -> Vec<String> {
    let (a, b) = (headings(en), headings(ko));
    let at = a
        .iter()
        .zip(&b)
        .position(|((x, _), (y, _))| x != y)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())));
    let Some(i) = at else {
        return Vec::new();
    };
    let show = |h: Option<&(usize, String)>| match h {
        Some((level, title)) => format!("{} {title}", "#".repeat(*level)),
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

fn link_problems(en: &Doc, ko: &Doc, ko_docs: &BTreeSet<String>) -> Vec<String> {
    let expected: BTreeSet<String> = link_targets(&en.text)
        .iter()
        .map(|t| mirrored_link(&en.name, &ko.name, t, ko_docs))
        .collect();
    let actual: BTreeSet<String> = link_targets(&ko.text)
        .iter()
        .map(|t| without_anchor_words(t))
        .collect();
    let mut out = lacking("link (as mirrored)", &expected, &en.name, &actual, &ko.name);
    out.extend(lacking(
        "link",
        &actual,
        &ko.name,
        &expected,
        &format!("{} (as mirrored)", en.name),
    ));
    out
}

fn failure_table_problems(en: &Doc, ko: &Doc) -> Vec<String> {
    let mut out = lacking(
        "error_kind slug",
        &slugs(&ko.text),
        &ko.name,
        &slugs(&en.text),
        &en.name,
    );
    for (slug, row) in failure_rows(&en.text) {
        if !ko.text.contains(&format!("`{slug}`")) {
            out.push(format!(
                "error_kind slug `{slug}` is in {} but missing from {}",
                en.name, ko.name
            ));
        }
        if !ko.text.lines().any(|l| l == row) {
            out.push(format!(
                "failure table row {row:?} is in {} but missing from {}",
                en.name, ko.name
            ));
        }
    }
    out
}

/// Everything that differs between an English file and its mirror.
fn pair_problems(en: &Doc, ko: &Doc, ko_docs: &BTreeSet<String>) -> Vec<String> {
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
    out.extend(link_problems(en, ko, ko_docs));
    for doc in [en, ko] {
        if doc.text.matches('`').count() % 2 != 0 {
            out.push(format!("{} has an unbalanced backtick", doc.name));
        }
    }
    out
}

fn assert_none(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

fn korean_set() -> BTreeSet<String> {
    korean_names().into_iter().collect()
}

// ---------------------------------------------------------------------------
// The editions as they are.

#[test]
fn every_document_has_its_mirror() {
    assert_none(
        "the Korean edition does not have the English one's files",
        pairing_problems(&english_names(), &korean_names()),
    );
}

#[test]
fn each_pair_is_in_step() {
    let ko_docs = korean_set();
    let mut problems = Vec::new();
    for (en, ko) in pairs() {
        problems.extend(pair_problems(&en, &ko, &ko_docs));
    }
    assert_none(
        "the Korean edition has drifted from the English one",
        problems,
    );
}

#[test]
fn the_readmes_are_front_doors_that_link_to_each_other() {
    let (en, ko) = (load("README.md"), load("README.ko.md"));
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
    if !en.text.contains("](README.ko.md)") {
        problems.push("link to README.ko.md is missing from README.md".to_string());
    }
    if !ko.text.contains("](README.md)") {
        problems.push("link to README.md is missing from README.ko.md".to_string());
    }
    assert_none("the READMEs", problems);
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

/// Every relative link of either edition leads to a file that exists, and an
/// anchor to a heading of that file.
#[test]
fn links_lead_somewhere() {
    let mut problems = Vec::new();
    for name in english_names().into_iter().chain(korean_names()) {
        let doc = load(&name);
        for target in link_targets(&doc.text) {
            if is_external(&target) {
                continue;
            }
            problems.extend(broken_link(&doc, &target));
        }
    }
    assert_none("links that lead nowhere", problems);
}

fn broken_link(doc: &Doc, target: &str) -> Option<String> {
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let Some(dest) = resolve(&doc.name, path) else {
        return Some(format!(
            "{}: {target} climbs out of the repository",
            doc.name
        ));
    };
    if !root().join(dest.trim_end_matches('/')).exists() {
        return Some(format!(
            "{}: {target} leads to {dest}, which does not exist",
            doc.name
        ));
    }
    let fragment = fragment?;
    if !dest.ends_with(".md") {
        return None;
    }
    let text = if dest == doc.name {
        doc.text.clone()
    } else {
        std::fs::read_to_string(root().join(&dest)).ok()?
    };
    (!anchors(&text).contains(fragment)).then(|| {
        format!(
            "{}: {target}: {dest} has no heading whose anchor is #{fragment}",
            doc.name
        )
    })
}

#[test]
fn extraction_finds_enough_in_the_english_edition() {
    let all: String = english_names()
        .iter()
        .map(|n| load(n).text)
        .collect::<Vec<_>>()
        .join("\n");
    let f = flags(&all);
    assert!(f.len() >= 20, "only {} flags found: {f:?}", f.len());
    for flag in ["--count", "--json", "--no-pin-ip", "-n", "-4", "-v"] {
        assert!(f.contains(flag), "{flag} not extracted");
    }
    let blocks = code_blocks(&all);
    assert!(blocks.len() >= 10, "only {} code blocks", blocks.len());
    assert!(
        blocks.iter().any(|b| b.starts_with("```promql")),
        "the ```promql block not extracted"
    );
    let codes = exit_code_rows(&all);
    assert_eq!(codes.len(), 7, "exit code rows: {codes:?}");
    let s = slugs(&all);
    assert!(s.len() >= 10, "only {} error_kind slugs: {s:?}", s.len());
    for slug in ["timeout", "cert_unknown_ca", "canceled", "error"] {
        assert!(s.contains(slug), "slug {slug} not extracted");
    }
    let j = json_fields(&all);
    for field in ["error_kind", "paired_gain_ci_ms", "p95_ms", "warnings[]"] {
        assert!(j.contains(field), "field {field} not extracted: {j:?}");
    }
    assert!(
        !inline_commands(&all).is_empty(),
        "no inline command extracted"
    );
    assert!(headings(&all).len() >= 20, "too few headings extracted");
}

// ---------------------------------------------------------------------------
// The checker on texts altered on purpose.

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
    let (en, ko) = (load("README.md"), load("README.ko.md"));
    let ko_docs = korean_set();
    assert_none(
        "README pair before altering",
        pair_problems(&en, &ko, &ko_docs),
    );
    // Drop the last second-level section (heading and body up to the next).
    let starts: Vec<usize> = ko.text.match_indices("\n## ").map(|(i, _)| i).collect();
    let cut = starts[starts.len() - 2]..starts[starts.len() - 1];
    let dropped = ko.text[cut.clone()]
        .lines()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let altered = Doc {
        name: ko.name.clone(),
        text: format!("{}{}", &ko.text[..cut.start], &ko.text[cut.end..]),
    };
    let problems = heading_problems(&en.text, &en.name, &altered.text, &altered.name);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("heading structure differs"),
        "{problems:?}"
    );
    assert!(!dropped.is_empty() && !altered.text.contains(&dropped));
    // A command changed in one code block.
    let block = code_blocks(&ko.text)
        .into_iter()
        .find(|b| b.contains("tlsping "))
        .expect("a code block with a command in README.ko.md");
    let changed = Doc {
        name: ko.name.clone(),
        text: ko
            .text
            .replacen(&block, &block.replacen("tlsping ", "tlsping -q ", 1), 1),
    };
    let problems = pair_problems(&en, &changed, &ko_docs);
    assert!(
        problems.iter().any(|p| p.starts_with("code block ")),
        "{problems:?}"
    );
}

#[test]
fn checker_reports_a_dropped_paragraph_or_list_item() {
    let en = "# A\n\nOne.\n\n- x\n  more x\n- y\n\n    code\n\n| t |\n|---|\n\nTwo.\n";
    let ko = "# 가\n\n하나.\n\n- x\n  x 더\n- y\n\n    code\n\n| t |\n|---|\n\n둘.\n";
    assert!(block_problems(en, "en", ko, "ko").is_empty());
    let kinds: Vec<String> = block_kinds(en).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [
            "heading 1",
            "paragraph",
            "list item",
            "list item",
            "code block",
            "table",
            "paragraph"
        ]
    );
    let ko_lacking_an_item = ko.replace("- y\n", "");
    assert_eq!(
        block_problems(en, "en", &ko_lacking_an_item, "ko"),
        vec![
            r##"block structure differs (en: 7 blocks, ko: 6) at block 4: en has a list item under "# A", ko has a code block under "# 가""##
        ]
    );
    let ko_lacking_the_end = ko.replace("\n둘.\n", "");
    assert_eq!(block_problems(en, "en", &ko_lacking_the_end, "ko").len(), 1);
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
fn links_are_mirrored_into_the_korean_files() {
    let ko_docs: BTreeSet<String> = ["README.ko.md", "docs/ko/tls.md", "docs/ko/output.md"]
        .into_iter()
        .map(String::from)
        .collect();
    let m = |en: &str, ko: &str, t: &str| mirrored_link(en, ko, t, &ko_docs);
    assert_eq!(
        m("README.md", "README.ko.md", "docs/tls.md"),
        "docs/ko/tls.md"
    );
    assert_eq!(
        m("README.md", "README.ko.md", "docs/tls.md#why"),
        "docs/ko/tls.md#…"
    );
    assert_eq!(m("README.md", "README.ko.md", "README.ko.md"), "README.md");
    assert_eq!(m("README.md", "README.ko.md", "LICENSE"), "LICENSE");
    assert_eq!(
        m("docs/tls.md", "docs/ko/tls.md", "output.md#json"),
        "output.md#…"
    );
    assert_eq!(
        m("docs/tls.md", "docs/ko/tls.md", "../README.md#install"),
        "../../README.ko.md#…"
    );
    assert_eq!(
        m("docs/tls.md", "docs/ko/tls.md", "../vendor-notes.md"),
        "../../vendor-notes.md"
    );
    assert_eq!(m("docs/tls.md", "docs/ko/tls.md", "#ocsp"), "#…");
    assert_eq!(
        m("docs/tls.md", "docs/ko/tls.md", "example.svg"),
        "../example.svg"
    );
    assert_eq!(
        m("docs/tls.md", "docs/ko/tls.md", "https://x.example/a#b"),
        "https://x.example/a#b"
    );
    assert_eq!(
        without_anchor_words("../../README.ko.md#설치"),
        "../../README.ko.md#…"
    );
    let a = anchors(
        "# tlsping\n## Why not `ping` or httping?\n## 설치와 빌드\n## Install\n## Install\n",
    );
    for want in [
        "tlsping",
        "why-not-ping-or-httping",
        "설치와-빌드",
        "install",
        "install-1",
    ] {
        assert!(a.contains(want), "{want} not in {a:?}");
    }
}

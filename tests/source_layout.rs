//! The shape of `src/`, checked on every test run, so that what the code
//! is kept to does not rot:
//! - no two files import each other, directly or round a longer circle
//!   (a `mod.rs` is a module's table of contents, not a file of code: its
//!   re-exports are read through to the file that defines the name);
//! - (that every raw call into libcurl and OpenSSL is in `probe/curl_ffi/`,
//!   a leaf, is `tests/ffi_boundary.rs`'s to check);
//! - `run` -> `cli`/`render` -> `stats` -> `probe`, never the other way:
//!   `render` imports neither `cli` nor `run`, `stats` none of the three
//!   above it, `probe` nothing above it;
//! - no function outside the tests is longer than 80 lines, unless it is a
//!   table (a body that is one literal list);
//! - every file of ours a comment cites by its path (`docs/output.md`,
//!   `probe/mod.rs`) is in the repository;
//! - no Rust file under `tests/` is longer than 700 lines;
//! - no `thread_local!` in `probe`: what a transfer leaves lives with the
//!   transfer (its handler, its connection's SSL_CTX), so two transfers on
//!   one thread never share it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "source_layout/folders.rs"]
mod folders;
#[allow(dead_code)]
#[path = "support/markdown.rs"]
mod markdown;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const LONGEST_FUNCTION: usize = 80;

/// Every `.rs` file under `src/`, by its path relative to `src/`.
fn sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(SRC)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(Path::new(SRC), &mut out);
    out
}

/// The code of a file without its tests and without comments: an inline
/// `#[cfg(test)]` module ends the file's code (this crate keeps its tests
/// last), and any other `#[cfg(test)]` item (a field, a `let`, a `use`, a
/// `mod x;` of a test file) is left out, one line.
fn code(text: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            kept.push(line);
            continue;
        }
        while lines
            .peek()
            .is_some_and(|l| l.trim_start().starts_with("#["))
        {
            lines.next();
        }
        let item = lines.next().unwrap_or("").trim();
        if item.starts_with("mod ") && item.ends_with('{') {
            break;
        }
    }
    kept.into_iter()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file (`probe/curl_ffi/mod.rs` -> `probe::curl_ffi`).
fn module_of(file: &str) -> Vec<String> {
    let trimmed = file.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_string).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file a module path names, if one does.
fn file_of(module: &[String], files: &BTreeMap<String, String>) -> Option<String> {
    if module.is_empty() {
        return Some("lib.rs".into());
    }
    let base = module.join("/");
    [format!("{base}.rs"), format!("{base}/mod.rs")]
        .into_iter()
        .find(|f| files.contains_key(f))
}

/// `#[path = ...]` modules and the like aside, the file that defines what
/// `path` (absolute, from the crate root) names: the longest prefix that is
/// a file, read through a `mod.rs`'s `use` items (what it re-exports, and
/// what a folder imports for its files to reach as `super::x`) to the file
/// the name comes from.
fn resolve(path: &[String], files: &BTreeMap<String, String>, depth: usize) -> Option<String> {
    for n in (0..=path.len()).rev() {
        let Some(file) = file_of(&path[..n], files) else {
            continue;
        };
        let is_index = file.ends_with("mod.rs") || file == "lib.rs";
        if is_index && n < path.len() && depth < 8 {
            // A name the index re-exports or imports: follow its `use`.
            let name = &path[n];
            let text = code(&files[&file]);
            for after in use_trees(&text) {
                for target in expand(&after) {
                    let last = target.last().map(String::as_str);
                    if last == Some(name.as_str()) {
                        let mut abs = path[..n].to_vec();
                        let rel: Vec<String> = target[..target.len() - 1].to_vec();
                        let abs_target = absolute(&mut abs, &rel, &file);
                        let mut full = abs_target;
                        full.push(name.clone());
                        return resolve(&full, files, depth + 1);
                    }
                }
            }
        }
        return Some(file);
    }
    None
}

/// The trees of the `use` items of `text`, each from a line that starts
/// one to its `;`.
fn use_trees(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let Some(rest) = ["pub(crate) use ", "pub(super) use ", "pub use ", "use "]
            .iter()
            .find_map(|p| t.strip_prefix(p))
        else {
            continue;
        };
        let mut item = rest.to_string();
        while !item.contains(';') {
            match lines.next() {
                Some(more) => item.push_str(more),
                None => break,
            }
        }
        out.push(item.split(';').next().unwrap_or("").to_string());
    }
    out
}

/// `a::{b, c::d}` -> [[a, b], [a, c, d]] (aliases and globs as their path).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn go(prefix: Vec<String>, rest: &str, out: &mut Vec<Vec<String>>) {
        if let Some(open) = rest.find('{') {
            let head = &rest[..open];
            let mut p = prefix.clone();
            p.extend(
                head.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            let mut level = 0;
            let close = rest[open..]
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => level += 1,
                        '}' => level -= 1,
                        _ => {}
                    }
                    level == 0
                })
                .map_or(rest.len(), |(i, _)| open + i);
            let inner = &rest[open + 1..close];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(p.clone(), &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if start < inner.len() {
                go(p, &inner[start..], out);
            }
        } else {
            let rest = rest.split("as").next().unwrap_or(rest);
            let mut p = prefix;
            p.extend(
                rest.split("::")
                    .filter(|s| !s.is_empty() && *s != "self")
                    .map(str::to_string),
            );
            if !p.is_empty() {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    go(Vec::new(), &tree, &mut out);
    out
}

/// A `crate::`/`super::`/`self::` path used in `file`, as an absolute path.
fn absolute(base: &mut Vec<String>, rel: &[String], file: &str) -> Vec<String> {
    let _ = base;
    let mut here = module_of(file);
    let mut parts = rel.iter().peekable();
    match parts.peek().map(|s| s.as_str()) {
        Some("crate") => {
            parts.next();
            here.clear();
        }
        Some("super") => {
            while parts.peek().map(|s| s.as_str()) == Some("super") {
                parts.next();
                here.pop();
            }
        }
        Some("self") => {
            parts.next();
        }
        _ => {}
    }
    here.extend(parts.cloned());
    here
}

/// The paths `file` writes from `crate::`, `super::` and `self::`, in `use`
/// items and inline, each made absolute (from the crate root).
fn written_paths(file: &str, files: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let text = code(&files[file]);
    let mut paths: Vec<Vec<String>> = Vec::new();
    for tree in use_trees(&text) {
        paths.extend(expand(&tree));
    }
    // Paths written inline: `crate::probe::push(...)`, `super::x::Y`.
    let bytes = text.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
            {
                continue;
            }
            let end = text[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |e| at + e);
            let path: Vec<String> = text[at..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .filter(|p| {
            matches!(
                p.first().map(String::as_str),
                Some("crate" | "super" | "self")
            )
        })
        .map(|p| absolute(&mut Vec::new(), &p, file))
        .collect()
}

/// Every file `file` imports: the paths it writes, each resolved to the
/// file that defines it.
fn imports(file: &str, files: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for abs in written_paths(file, files) {
        if let Some(target) = resolve(&abs, files, 0) {
            let index = target.ends_with("mod.rs") || target == "lib.rs";
            if target != file && !index {
                out.insert(target);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    files
        .keys()
        .filter(|f| !f.ends_with("mod.rs") && *f != "lib.rs")
        .map(|f| (f.clone(), imports(f, &files)))
        .collect()
}

/// A circle of imports through `from`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == from {
                let mut c = path.clone();
                c.push(next.clone());
                return Some(c);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let g = graph();
    let circles: BTreeSet<Vec<String>> = g
        .keys()
        .filter_map(|f| circle(&g, f))
        .map(|mut c| {
            // One spelling per circle: starting at its smallest file.
            c.pop();
            let at = c
                .iter()
                .enumerate()
                .min_by_key(|(_, f)| *f)
                .map_or(0, |(i, _)| i);
            c.rotate_left(at);
            c
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles between files: {circles:#?}"
    );
}

/// Whether a file of layer `from` may not use layer `to`.
fn upward(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        ("probe", "stats" | "render" | "run" | "cli")
            | ("stats", "render" | "run" | "cli")
            | ("render", "run" | "cli")
    )
}

/// The arrows that run back up: a file importing a file of a layer above
/// its own, or naming a layer above its own in a path (`crate::cli::X`,
/// even when `cli` only re-exports `X` from below).
fn upward_arrows() -> Vec<String> {
    let files = sources();
    let layer = |f: &str| {
        f.split('/')
            .next()
            .unwrap_or("")
            .trim_end_matches(".rs")
            .to_string()
    };
    let mut out = Vec::new();
    for (file, targets) in graph() {
        for t in targets {
            if upward(&layer(&file), &layer(&t)) {
                out.push(format!("{file} imports {t}"));
            }
        }
        for path in written_paths(&file, &files) {
            let named = path.first().cloned().unwrap_or_default();
            if upward(&layer(&file), &named) {
                out.push(format!("{file} names {}", path.join("::")));
            }
        }
    }
    out
}

#[test]
fn the_layers_import_downwards_only() {
    let upward = upward_arrows();
    assert!(upward.is_empty(), "upward arrows: {upward:#?}");
}

/// Functions longer than `LONGEST_FUNCTION` lines outside the tests, with
/// where they start; a function whose body is one literal table is allowed.
fn long_functions() -> Vec<String> {
    let mut out = Vec::new();
    for (file, text) in sources() {
        if file.ends_with("tests.rs") || file.contains("_tests") {
            continue;
        }
        let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
        let lines: Vec<&str> = text[..cut].lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let indent = line.len() - line.trim_start().len();
            let t = line.trim_start();
            let is_fn = [
                "fn ",
                "pub fn ",
                "pub(crate) fn ",
                "pub(super) fn ",
                "const fn ",
                "unsafe fn ",
                "pub(crate) unsafe fn ",
                "pub unsafe fn ",
                "unsafe extern \"C\" fn ",
                "extern \"C\" fn ",
            ]
            .iter()
            .any(|p| t.starts_with(p));
            if !is_fn {
                i += 1;
                continue;
            }
            let Some(open) = (i..lines.len()).find(|&j| {
                let l = lines[j].trim_end();
                l.ends_with('{') || l.ends_with(';')
            }) else {
                break;
            };
            if lines[open].trim_end().ends_with(';') {
                i = open + 1;
                continue;
            }
            let close = (open + 1..lines.len())
                .find(|&j| {
                    let l = lines[j];
                    l.trim_start().starts_with('}') && l.len() - l.trim_start().len() == indent
                })
                .unwrap_or(lines.len() - 1);
            let length = close - i + 1;
            let body = lines[open + 1..close].join("\n");
            let table = body.trim_start().starts_with('[') || body.trim_start().starts_with("&[");
            if length > LONGEST_FUNCTION && !table {
                out.push(format!("{file}:{} {} lines", i + 1, length));
            }
            i = close + 1;
        }
    }
    out
}

#[test]
fn no_function_outside_a_table_is_longer_than_80_lines() {
    let long = long_functions();
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines: {long:#?}"
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    // The resolver reads `use` trees, inline paths and re-exports.
    assert_eq!(
        expand("super::{a, b::{C, D as E}}"),
        [
            vec!["super".to_string(), "a".into()],
            vec!["super".into(), "b".into(), "C".into()],
            vec!["super".into(), "b".into(), "D".into()],
        ]
    );
    let files = sources();
    let from_run = imports("run/plan.rs", &files);
    assert!(
        from_run.iter().any(|f| f.starts_with("probe/")),
        "{from_run:?}"
    );
    // `render` sits above `stats` and `probe`, beside `cli`, below `run`.
    assert!(upward("render", "cli") && upward("render", "run") && upward("probe", "stats"));
    assert!(!upward("render", "probe") && !upward("cli", "render") && !upward("run", "cli"));
    // A known short function is not reported, and a test file is never read.
    assert!(!long_functions().iter().any(|f| f.contains("tests.rs")));
}

/// The kinds of file a comment cites as the repository's own (a C header
/// or source a comment names is libcurl's or OpenSSL's, not ours).
const CITABLE: [&str; 11] = [
    "md", "rs", "json", "toml", "yml", "yaml", "svg", "snap", "service", "timer", "sh",
];

/// Every file of the repository's work tree (`target/` and `.git/` aside),
/// by its path from the root.
fn repository_files() -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != ".git" {
                    walk(root, &path, out);
                }
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy();
                out.insert(rel.into_owned());
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// The file paths a line of Rust cites in its comment: each word (letters,
/// digits and `_./-`) that ends in a `CITABLE` extension, a sentence's full
/// stop taken off; a URL's path and an absolute or `./` path are not ours.
fn cited_in(line: &str) -> Vec<String> {
    let Some(at) = line.find("//").filter(|&i| !line[..i].contains('"')) else {
        return Vec::new();
    };
    line[at + 2..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.starts_with(['/', '.']) && !w.contains("//"))
        .filter(|w| {
            w.rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && CITABLE.contains(&ext))
        })
        .map(str::to_string)
        .collect()
}

/// Every path cited in a comment of the Rust outside the tests (`src/`,
/// `build.rs`, `benches/`, `examples/`; the tests name scratch files of
/// their own) that is no file of the repository: not from the root, from
/// `src/` or from the citing file's folder, and for a bare name, no file
/// of that name anywhere.
fn citations_of_missing_files() -> Vec<String> {
    let files = repository_files();
    let names: BTreeSet<&str> = files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f))
        .collect();
    let rust = files.iter().filter(|f| {
        f.ends_with(".rs")
            && (f.starts_with("src/")
                || f.starts_with("benches/")
                || f.starts_with("examples/")
                || *f == "build.rs")
    });
    let mut out = Vec::new();
    for file in rust {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        let folder = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        for (n, line) in text.lines().enumerate() {
            for cited in cited_in(line) {
                let from_folder = format!("{folder}/{cited}");
                let found = files.contains(&cited)
                    || files.contains(&format!("src/{cited}"))
                    || files.contains(&from_folder)
                    || (!cited.contains('/') && names.contains(cited.as_str()));
                if !found {
                    out.push(format!("{file}:{}: {cited}", n + 1));
                }
            }
        }
    }
    out
}

#[test]
fn every_file_a_source_comment_cites_is_in_the_repository() {
    let missing = citations_of_missing_files();
    assert!(
        missing.is_empty(),
        "comments cite files the repository does not have (cite one it has, or say what \
         it is without a path): {missing:#?}"
    );
    // What is read as a citation, and what is not.
    assert_eq!(
        cited_in("/// interface.md pins them; docs/output.md's table, in `probe/mod.rs`."),
        ["interface.md", "docs/output.md", "probe/mod.rs"]
    );
    assert!(cited_in("// curl.h, https://example.com/a.md, /etc/x.toml, e.g. 1.5").is_empty());
    assert!(cited_in(r#"let url = "https://x/y.md";"#).is_empty());
}

/// The most lines a Rust file may have, by where it is (tests included in
/// the count): past it, split the file by what it holds (as `readme_ko.rs`
/// and `readme_ko/`, or `why.rs`, `why_advice.rs` and `why_tests.rs`).
const LONGEST_FILE: [(&str, usize); 2] = [("src/", 600), ("tests/", 700)];

#[test]
fn no_source_file_over_600_lines_and_no_test_file_over_700() {
    let long: Vec<String> = repository_files()
        .into_iter()
        .filter(|f| f.ends_with(".rs"))
        .filter_map(|f| {
            let (_, limit) = LONGEST_FILE.iter().find(|(dir, _)| f.starts_with(dir))?;
            let text =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&f)).unwrap();
            let lines = text.lines().count();
            (lines > *limit).then(|| format!("{f}: {lines} lines, over {limit}"))
        })
        .collect();
    assert!(long.is_empty(), "files over their limit: {long:#?}");
}

/// The files of `files` (paths under `src/`) whose code, tests included,
/// declares a thread-local.
fn thread_locals<'a>(files: impl IntoIterator<Item = (&'a String, &'a String)>) -> Vec<String> {
    files
        .into_iter()
        .filter(|(_, text)| {
            text.lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .any(|l| l.contains("thread_local!"))
        })
        .map(|(path, _)| path.clone())
        .collect()
}

#[test]
fn no_probe_state_is_kept_per_thread() {
    // A transfer's stamps, its sockets' readings and a panic its callbacks
    // caught were each right only while one transfer ran per thread.
    let sources = sources();
    let found = thread_locals(sources.iter().filter(|(p, _)| p.starts_with("probe/")));
    assert!(
        found.is_empty(),
        "thread-locals in probe (keep the state with the transfer): {found:#?}"
    );
    // The check finds one, and not in a comment.
    let one = ("probe/x.rs".to_string(), "thread_local! {\n".to_string());
    let said = (
        "probe/y.rs".to_string(),
        "// no thread_local! here\n".to_string(),
    );
    assert_eq!(
        thread_locals([(&one.0, &one.1), (&said.0, &said.1)]),
        ["probe/x.rs"]
    );
}

#[test]
fn every_skip_is_seen_and_only_ci_true_forbids_one() {
    // A skip said with `eprintln!` is hidden for a passing test (libtest
    // captures the print macros), and `var("CI").is_err()` fails a test
    // under `CI=false` too. Skips go through `support::skip` (or `have`),
    // which write past the capture and fail under `CI=true` only.
    let rs = |f: &String| f.ends_with(".rs") && (f.starts_with("tests/") || f.starts_with("src/"));
    let wrong: Vec<String> = repository_files()
        .into_iter()
        .filter(rs)
        .filter(|f| f != "tests/source_layout.rs")
        .filter_map(|f| {
            let text =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&f)).unwrap();
            let hidden = text.contains("eprintln!(\"skipped") || text.contains("skipped, it needs");
            let any_ci =
                text.contains("var(\"CI\").is_err()") || text.contains("var(\"CI\").is_ok()");
            (hidden && f.starts_with("tests/") || any_ci).then_some(f)
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "skips not seen, or CI read as set: {wrong:#?}"
    );
}

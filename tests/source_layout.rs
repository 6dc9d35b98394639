//! The shape of `src/`, checked on every test run, so that what the code
//! is kept to does not rot:
//! - no two files import each other, directly or round a longer circle
//!   (a `mod.rs` is a module's table of contents, not a file of code: its
//!   re-exports are read through to the file that defines the name);
//! - (that every raw call into libcurl and OpenSSL is in `probe/curl_ffi/`,
//!   a leaf, is `tests/ffi_boundary.rs`'s to check);
//! - `render` -> `stats` -> `probe`, never the other way;
//! - no function outside the tests is longer than 80 lines, unless it is a
//!   table (a body that is one literal list).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

/// The code of a file without its tests (`#[cfg(test)]` to the end, the
/// way this crate writes them) and without comments.
fn code(text: &str) -> String {
    let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..cut]
        .lines()
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
/// a file, read through a `mod.rs`'s `pub use` to the file it re-exports.
fn resolve(path: &[String], files: &BTreeMap<String, String>, depth: usize) -> Option<String> {
    for n in (0..=path.len()).rev() {
        let Some(file) = file_of(&path[..n], files) else {
            continue;
        };
        let is_index = file.ends_with("mod.rs") || file == "lib.rs";
        if is_index && n < path.len() && depth < 8 {
            // A name re-exported by the index: follow its `pub use`.
            let name = &path[n];
            let text = code(&files[&file]);
            for after in reexports(&text) {
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

/// The trees of the `use` items of `text` (each from a line that starts
/// one to its `;`); `exported_only` keeps the `pub`/`pub(crate)` ones.
fn use_items(text: &str, exported_only: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let (exported, rest) = if let Some(r) = t.strip_prefix("pub(crate) use ") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("pub use ") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("pub(super) use ") {
            (false, r)
        } else if let Some(r) = t.strip_prefix("use ") {
            (false, r)
        } else {
            continue;
        };
        let mut item = rest.to_string();
        while !item.contains(';') {
            match lines.next() {
                Some(more) => item.push_str(more),
                None => break,
            }
        }
        if exported || !exported_only {
            out.push(item.split(';').next().unwrap_or("").to_string());
        }
    }
    out
}

fn use_trees(text: &str) -> Vec<String> {
    use_items(text, false)
}

fn reexports(text: &str) -> Vec<String> {
    use_items(text, true)
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

/// Every file `file` imports: the paths it writes from `crate::`,
/// `super::` and `self::`, each resolved to the file that defines it.
fn imports(file: &str, files: &BTreeMap<String, String>) -> BTreeSet<String> {
    let text = code(&files[file]);
    let mut out = BTreeSet::new();
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
    for p in paths {
        if !matches!(
            p.first().map(String::as_str),
            Some("crate" | "super" | "self")
        ) {
            continue;
        }
        let abs = absolute(&mut Vec::new(), &p, file);
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

#[test]
fn the_layers_import_downwards_only() {
    let g = graph();
    let layer = |f: &str| f.split('/').next().unwrap_or("").to_string();
    for (file, targets) in &g {
        for t in targets {
            let (from, to) = (layer(file), layer(t));
            let upward = matches!(
                (from.as_str(), to.as_str()),
                ("probe", "stats" | "render" | "run" | "cli") | ("stats", "render" | "run" | "cli")
            );
            assert!(!upward, "{file} imports {t}");
        }
    }
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
    // A known short function is not reported, and a test file is never read.
    assert!(!long_functions().iter().any(|f| f.contains("tests.rs")));
}

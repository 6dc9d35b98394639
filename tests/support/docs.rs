//! The documents, as the tests read them. The English edition is README.md
//! (the front door), the reference in `docs/*.md` and CONTRIBUTING.md; the
//! Korean edition mirrors it file for file: README.ko.md, `docs/ko/*.md`
//! and CONTRIBUTING.ko.md. A test that checks what every document says
//! walks an edition; one that needs a particular block names its file.
//! What is read out of a text (headings, sections, code, links, tables) is
//! `support::markdown`'s, a CommonMark parser's reading.

use std::path::Path;

use super::markdown;

pub use super::markdown::section;

/// One document: its path from the repository's root (`/`-separated), and
/// its text.
#[derive(Clone, Debug)]
pub struct Doc {
    pub name: String,
    pub text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The text of the document at `name` (from the repository's root).
pub fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap_or_else(|e| {
        panic!("{name}: {e} (the documents' split: README.md, docs/*.md, CONTRIBUTING.md, and their Korean mirrors)")
    })
}

/// The document at `name`, read.
pub fn load(name: &str) -> Doc {
    Doc {
        text: read(name),
        name: name.to_string(),
    }
}

/// The `*.md` files directly in `dir` (from the root), in order of name, as
/// `dir/name.md`.
pub fn markdown_in(dir: &str) -> Vec<String> {
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

/// The files of `names` that exist.
fn existing<'a>(names: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    names
        .iter()
        .filter(|n| root().join(n).is_file())
        .map(|n| n.to_string())
}

/// The English edition's file names, of those that exist: README.md, every
/// `docs/*.md` in order of name, CONTRIBUTING.md.
pub fn english_names() -> Vec<String> {
    let mut names: Vec<String> = existing(&["README.md"]).collect();
    names.extend(markdown_in("docs"));
    names.extend(existing(&["CONTRIBUTING.md"]));
    names
}

/// The Korean edition's file names, of those that exist: README.ko.md,
/// CONTRIBUTING.ko.md and every `docs/ko/*.md`, whether or not an English
/// original has them.
pub fn korean_names() -> Vec<String> {
    let mut names: Vec<String> = existing(&["README.ko.md", "CONTRIBUTING.ko.md"]).collect();
    names.extend(markdown_in("docs/ko"));
    names
}

/// The Korean mirror of the English document `name`.
pub fn korean_name(name: &str) -> String {
    if let Some(file) = name.strip_prefix("docs/") {
        return format!("docs/ko/{file}");
    }
    match name.strip_suffix(".md") {
        Some(stem) => format!("{stem}.ko.md"),
        None => name.to_string(),
    }
}

/// The English original of the Korean document `name`, or `None` when the
/// name is not one a Korean mirror has.
pub fn english_name(name: &str) -> Option<String> {
    if let Some(file) = name.strip_prefix("docs/ko/") {
        return Some(format!("docs/{file}"));
    }
    name.strip_suffix(".ko.md").map(|stem| format!("{stem}.md"))
}

/// Every document of the English edition.
pub fn english() -> Vec<Doc> {
    english_names().iter().map(|name| load(name)).collect()
}

/// Every document of the Korean edition, in the English edition's order;
/// a missing mirror fails, naming it.
pub fn korean() -> Vec<Doc> {
    english_names()
        .iter()
        .map(|name| load(&korean_name(name)))
        .collect()
}

/// Both editions.
pub fn both() -> Vec<Doc> {
    let mut all = english();
    all.extend(korean());
    all
}

// ---------------------------------------------------------------------------
// Links between the documents.

/// The directory part of a file's name (`docs/ko` for `docs/ko/tls.md`).
pub fn dir_of(name: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = name.split('/').collect();
    parts.pop();
    parts
}

/// A relative link's path from the document `from`, as a path from the
/// root; `None` when it climbs out of the repository. An empty path is the
/// document itself.
pub fn resolve(from: &str, path: &str) -> Option<String> {
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

/// What is wrong with a link of `doc` to `target` (not an external one):
/// it climbs out of the repository, leads to no file, or names an anchor
/// that no heading of its document has (the anchors GitHub makes).
pub fn broken_link(doc: &Doc, target: &str) -> Option<String> {
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let Some(dest) = resolve(&doc.name, path) else {
        return Some(format!(
            "{}: ({target}) climbs out of the repository",
            doc.name
        ));
    };
    if !root().join(dest.trim_end_matches('/')).exists() {
        return Some(format!("{}: ({target}): no file {dest}", doc.name));
    }
    let fragment = fragment?;
    if !dest.ends_with(".md") {
        return None;
    }
    let text = if dest == doc.name {
        doc.text.clone()
    } else {
        read(&dest)
    };
    (!markdown::anchors(&text).iter().any(|a| a == fragment)).then(|| {
        format!(
            "{}: ({target}): {dest} has no heading whose anchor is #{fragment}",
            doc.name
        )
    })
}

/// Every relative link of `docs` that leads nowhere (see `broken_link`).
pub fn broken_links(docs: &[Doc]) -> Vec<String> {
    docs.iter()
        .flat_map(|doc| {
            markdown::links(&doc.text)
                .into_iter()
                .filter(|t| !markdown::is_external(t))
                .filter_map(|t| broken_link(doc, &t))
        })
        .collect()
}

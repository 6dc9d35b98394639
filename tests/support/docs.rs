//! The documents, as the tests read them. The English edition is README.md
//! (the front door), the reference in `docs/*.md` and CONTRIBUTING.md; the
//! Korean edition mirrors it file for file: README.ko.md, `docs/ko/*.md`
//! and CONTRIBUTING.ko.md. A test that checks what every document says
//! walks an edition; one that needs a particular block names its file.

use std::path::{Path, PathBuf};

/// One document: its path from the repository's root, and its text.
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

/// The English edition's file names: README.md, every `docs/*.md` in
/// order of name, CONTRIBUTING.md.
pub fn english_names() -> Vec<String> {
    let mut reference: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("the docs/ folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    reference.sort();
    let mut names = vec!["README.md".to_string()];
    names.extend(
        reference
            .iter()
            .map(|p| format!("docs/{}", p.file_name().unwrap().to_str().unwrap())),
    );
    names.push("CONTRIBUTING.md".into());
    names
}

/// The Korean mirror of the English document `name`.
pub fn korean_name(name: &str) -> String {
    if let Some(file) = name.strip_prefix("docs/") {
        format!("docs/ko/{file}")
    } else {
        name.replace(".md", ".ko.md")
    }
}

/// Every document of the English edition.
pub fn english() -> Vec<Doc> {
    english_names()
        .into_iter()
        .map(|name| Doc {
            text: read(&name),
            name,
        })
        .collect()
}

/// Every document of the Korean edition, in the English edition's order;
/// a missing mirror fails, naming it.
pub fn korean() -> Vec<Doc> {
    english_names()
        .iter()
        .map(|name| korean_name(name))
        .map(|name| Doc {
            text: read(&name),
            name,
        })
        .collect()
}

/// Both editions.
pub fn both() -> Vec<Doc> {
    let mut all = english();
    all.extend(korean());
    all
}

/// The section of `text` under the heading that starts with `heading`
/// (`## Install`), up to the next heading of the same level or above.
pub fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let start = text
        .match_indices(heading)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n'))?;
    let body = &text[start..];
    let mut offset = body.find('\n').map_or(body.len(), |n| n + 1);
    let mut fenced = false;
    for line in body[offset..].split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !fenced && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            break;
        }
        offset += line.len();
    }
    Some(&body[..offset])
}

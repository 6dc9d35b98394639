//! The links of a Korean document are its English original's, mirrored: a
//! link to another English document points at its Korean mirror, the
//! edition switch at the other edition, anything else at the same file,
//! written from the mirror's folder. Whether a link leads somewhere at all
//! is `tests/readme.rs`'s to check, for both editions.

use std::collections::BTreeSet;

use crate::support::docs::{self, Doc};
use crate::support::markdown;

/// The relative link from file `from` to `to` (both from the root).
fn relative(from: &str, to: &str) -> String {
    let from_dir = docs::dir_of(from);
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
    if markdown::is_external(target) {
        return (target.to_string(), false);
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let dest =
        docs::resolve(from, path).unwrap_or_else(|| format!("(outside the repository) {path}"));
    (dest, fragment.is_some())
}

/// What a link of English file `en` becomes in its mirror `ko`. The
/// anchor's words differ between editions, so only whether there is one is
/// kept.
pub fn mirrored_link(en: &str, ko: &str, target: &str, ko_docs: &BTreeSet<String>) -> String {
    if markdown::is_external(target) {
        return target.to_string();
    }
    let (dest, anchor) = link_destination(en, target);
    let mirrored = if dest == en {
        ko.to_string()
    } else if ko_docs.contains(&docs::korean_name(&dest)) {
        docs::korean_name(&dest)
    } else if let Some(orig) = docs::english_name(&dest).filter(|_| ko_docs.contains(&dest)) {
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
pub fn without_anchor_words(target: &str) -> String {
    match target.split_once('#') {
        Some((path, _)) if !markdown::is_external(target) => format!("{path}#…"),
        _ => target.to_string(),
    }
}

/// The links one of the pair has and the other, mirrored, lacks.
pub fn link_problems(en: &Doc, ko: &Doc, ko_docs: &BTreeSet<String>) -> Vec<String> {
    let expected: BTreeSet<String> = markdown::links(&en.text)
        .iter()
        .map(|t| mirrored_link(&en.name, &ko.name, t, ko_docs))
        .collect();
    let actual: BTreeSet<String> = markdown::links(&ko.text)
        .iter()
        .map(|t| without_anchor_words(t))
        .collect();
    let lacking = super::in_step::lacking;
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
}

#[test]
fn a_link_missing_from_the_mirror_or_added_to_it_is_reported() {
    let ko_docs: BTreeSet<String> = ["docs/ko/tls.md", "docs/ko/output.md"]
        .into_iter()
        .map(String::from)
        .collect();
    let en = Doc {
        name: "docs/tls.md".into(),
        text: "See [the fields](output.md#json) and ![a run](example.svg).\n".into(),
    };
    let ko = Doc {
        name: "docs/ko/tls.md".into(),
        text: "[필드](output.md#json)와 ![실행](../example.svg), [더](#더).\n".into(),
    };
    assert_eq!(
        link_problems(&en, &ko, &ko_docs),
        [r##"link "#…" is in docs/ko/tls.md but missing from docs/tls.md (as mirrored)"##]
    );
    let without_picture = Doc {
        name: ko.name.clone(),
        text: "[필드](output.md#json)와 [더](#더).\n".into(),
    };
    assert_eq!(
        link_problems(&en, &without_picture, &ko_docs),
        [
            r#"link (as mirrored) "../example.svg" is in docs/tls.md but missing from docs/ko/tls.md"#,
            r##"link "#…" is in docs/ko/tls.md but missing from docs/tls.md (as mirrored)"##
        ]
    );
}

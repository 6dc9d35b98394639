//! Markdown as GitHub reads it, for the tests that check the documents:
//! CommonMark with GitHub's tables and strikethrough, parsed by
//! pulldown-cmark. Whatever a test takes out of a document (its headings
//! and their anchors, a section, its blocks, code blocks and code spans,
//! links, tables) comes from here, so every test reads a document the way
//! a reader's browser shows it, and all of them the same way.

use std::collections::BTreeMap;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};
use unicode_general_category::{get_general_category, GeneralCategory};

/// Every event of `text`, with the bytes of `text` it comes from.
fn events(text: &str) -> Vec<(Event<'_>, Range<usize>)> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    Parser::new_ext(text, options).into_offset_iter().collect()
}

/// The line byte `at` of `text` is on, counted from 1.
pub fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// Where the line holding byte `at` starts.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The whole lines of `text` that `range` touches, without the line break
/// after the last one and without blank lines at the end.
fn whole_lines<'a>(text: &'a str, range: &Range<usize>) -> &'a str {
    let start = line_start(text, range.start);
    let last = range.end.max(start + 1) - 1;
    let end = text[last..].find('\n').map_or(text.len(), |i| last + i);
    let mut lines = &text[start..end];
    while let Some((rest, tail)) = lines.rsplit_once('\n') {
        if !tail.trim().is_empty() {
            break;
        }
        lines = rest;
    }
    lines
}

// ---------------------------------------------------------------------------
// Headings, their anchors, and the sections under them.

/// One heading.
#[derive(Clone, Debug, PartialEq)]
pub struct Heading {
    /// 1 for `#`, up to 6.
    pub level: usize,
    /// Its text as GitHub shows it: a link's text, a code span's code, no
    /// markup.
    pub text: String,
    /// Its first line as written (`## Why not \`ping\`?`).
    pub source: String,
    /// The line it is on, counted from 1.
    pub line: usize,
    /// Where its line starts in the text.
    pub at: usize,
}

/// The headings of `text`, in order (none from inside a code block).
pub fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut open: Option<Heading> = None;
    for (event, range) in events(text) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let first = whole_lines(text, &range).lines().next().unwrap_or("");
                open = Some(Heading {
                    level: level as usize,
                    text: String::new(),
                    source: first.trim_end().to_string(),
                    line: line_of(text, range.start),
                    at: line_start(text, range.start),
                });
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = open.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = open.as_mut() {
                    h.text.push(' ');
                }
            }
            Event::End(TagEnd::Heading(_)) => out.extend(open.take()),
            _ => {}
        }
    }
    out
}

/// The anchor GitHub makes of a heading's text, before a repeat's `-1`,
/// `-2`: in lower case, with every character but letters, marks, numbers,
/// connecting punctuation (`_`), `-` and spaces dropped, and each space
/// turned into `-` (the rule of GitHub's own `github-slugger`).
pub fn slug(text: &str) -> String {
    use GeneralCategory as G;
    text.to_lowercase()
        .chars()
        .filter(|&c| {
            c == '-'
                || c == ' '
                || matches!(
                    get_general_category(c),
                    G::UppercaseLetter
                        | G::LowercaseLetter
                        | G::TitlecaseLetter
                        | G::ModifierLetter
                        | G::OtherLetter
                        | G::NonspacingMark
                        | G::SpacingMark
                        | G::EnclosingMark
                        | G::DecimalNumber
                        | G::LetterNumber
                        | G::OtherNumber
                        | G::ConnectorPunctuation
                )
        })
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `text`'s headings, in order, as GitHub numbers them: the
/// second heading with a given anchor gets `-1`, the third `-2`, skipping
/// any that another heading already has.
pub fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for heading in headings(text) {
        let base = slug(&heading.text);
        let mut anchor = base.clone();
        while seen.contains_key(&anchor) {
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor.clone(), 0);
        out.push(anchor);
    }
    out
}

/// The section of `text` under the first heading whose line starts with
/// `heading` (`## Install`): from that line up to the next heading of the
/// same level or above, or the end.
pub fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let all = headings(text);
    let i = all.iter().position(|h| h.source.starts_with(heading))?;
    let end = all[i + 1..]
        .iter()
        .find(|h| h.level <= all[i].level)
        .map_or(text.len(), |h| h.at);
    Some(&text[all[i].at..end])
}

// ---------------------------------------------------------------------------
// Code.

/// One code block, fenced or indented.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeBlock {
    /// A fenced block's info string (`promql`, `sh`; empty for none); `None`
    /// for an indented block.
    pub fence: Option<String>,
    /// The block as written: its whole lines, fences and indentation
    /// included.
    pub source: String,
    /// The code itself, as a reader sees it: without the fences and the
    /// indentation that makes the block.
    pub code: String,
    /// The line its code starts on, counted from 1.
    pub line: usize,
    /// Where the block starts in the text.
    pub at: usize,
}

/// The code blocks of `text`, in order, those inside list items too.
pub fn code_blocks(text: &str) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut open: Option<CodeBlock> = None;
    for (event, range) in events(text) {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let fence = match kind {
                    CodeBlockKind::Fenced(info) => Some(info.to_string()),
                    CodeBlockKind::Indented => None,
                };
                let line = line_of(text, range.start) + usize::from(fence.is_some());
                open = Some(CodeBlock {
                    fence,
                    source: whole_lines(text, &range).to_string(),
                    code: String::new(),
                    line,
                    at: range.start,
                });
            }
            Event::Text(t) => {
                if let Some(block) = open.as_mut() {
                    block.code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(open.take()),
            _ => {}
        }
    }
    out
}

/// One code span (`` `tlsping -n 5` ``): its code, and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub code: String,
    pub at: usize,
}

/// The code spans of `text`, in order (a code block holds none).
pub fn code_spans(text: &str) -> Vec<Span> {
    events(text)
        .into_iter()
        .filter_map(|(event, range)| match event {
            Event::Code(code) => Some(Span {
                code: code.to_string(),
                at: range.start,
            }),
            _ => None,
        })
        .collect()
}

/// The lines on which a backtick shows as itself: one that opened no code
/// span, because the backtick that should close it is missing.
pub fn stray_backticks(text: &str) -> Vec<usize> {
    let mut in_code = false;
    let mut out = Vec::new();
    for (event, range) in events(text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if !in_code && t.contains('`') => out.push(line_of(text, range.start)),
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Links.

/// Where every link and picture of `text` leads, in order, as written
/// (`docs/tls.md#ocsp`, `https://…`, `mailto:…`).
pub fn links(text: &str) -> Vec<String> {
    events(text)
        .into_iter()
        .filter_map(|(event, _)| match event {
            Event::Start(Tag::Link {
                link_type: LinkType::Email,
                dest_url,
                ..
            }) => Some(format!("mailto:{dest_url}")),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Whether a link leads out of the repository.
pub fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

// ---------------------------------------------------------------------------
// Tables.

/// One row of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Each cell as written (`` `--warmup N` ``), trimmed.
    pub cells: Vec<String>,
    /// The row's line as written.
    pub source: String,
}

/// One table: its header row, then the others.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Row,
    pub rows: Vec<Row>,
}

/// The tables of `text`, in order.
pub fn tables(text: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for (event, range) in events(text) {
        match event {
            Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Row {
                cells: Vec::new(),
                source: whole_lines(text, &range).to_string(),
            }),
            Event::Start(Tag::TableCell) => {
                if let Some(row) = rows.last_mut() {
                    let cell = text[range].trim().trim_matches('|').trim();
                    row.cells.push(cell.to_string());
                }
            }
            Event::End(TagEnd::Table) => {
                let mut all = std::mem::take(&mut rows).into_iter();
                if let Some(header) = all.next() {
                    out.push(Table {
                        header,
                        rows: all.collect(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The blocks, in order.

/// One block of a document: a heading, a paragraph, a list item, a table, a
/// code block, a quote, an HTML block or a rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// `heading N`, `paragraph`, `list item`, `table`, `code block`,
    /// `quote`, `html` or `rule`.
    pub kind: String,
    /// The first line of the heading it sits under (`## Install`), or
    /// `(top)` before the first.
    pub section: String,
    /// Its whole lines as written.
    pub source: String,
}

/// The blocks of `text`, in order. A list item's first paragraph is the
/// item itself; a paragraph after it in the same item is one of its own.
/// Items of a list inside an item are list items too.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::from("(top)");
    // For each list item we are inside: whether a block opened in it yet.
    let mut items: Vec<bool> = Vec::new();
    for (event, range) in events(text) {
        let kind = match &event {
            Event::Start(Tag::Heading { level, .. }) => format!("heading {}", *level as usize),
            Event::Start(Tag::Paragraph) => "paragraph".to_string(),
            Event::Start(Tag::Item) => "list item".to_string(),
            Event::Start(Tag::Table(_)) => "table".to_string(),
            Event::Start(Tag::CodeBlock(_)) => "code block".to_string(),
            Event::Start(Tag::BlockQuote(_)) => "quote".to_string(),
            Event::Start(Tag::HtmlBlock) => "html".to_string(),
            Event::Rule => "rule".to_string(),
            Event::End(TagEnd::Item) => {
                items.pop();
                continue;
            }
            _ => continue,
        };
        // The first block inside an item opens the item's own text.
        let opens_item = items.last() == Some(&false);
        if let Some(started) = items.last_mut() {
            *started = true;
        }
        if kind == "list item" {
            items.push(false);
        } else if kind == "paragraph" && opens_item {
            continue;
        }
        let source = whole_lines(text, &range).to_string();
        if kind.starts_with("heading") {
            section = source.lines().next().unwrap_or("").trim_end().to_string();
        }
        out.push(Block {
            kind,
            section: section.clone(),
            source,
        });
    }
    out
}

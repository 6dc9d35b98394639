//! Reading the `Server-Timing` response header: the server's own account of
//! where its time went, as a list of named metrics with an optional duration
//! and description.
//!
//! A value is a comma-separated list of metrics; each metric is a name followed
//! by zero or more `;`-separated parameters (`name[=value]`), where a value is
//! either a bare token or a double-quoted string with backslash escapes. A
//! response may repeat the header; every value adds to the same list.
//!
//! The parser is lenient and never fails. The choices it makes:
//!
//! - Spaces and tabs are allowed around names, values, `;`, `=` and `,`.
//!   Empty list elements (`a,,b`) are ignored.
//! - A metric name must be a non-empty HTTP token (RFC 9110 `tchar`s). If it is
//!   not, or anything other than `;` or `,` follows it, the whole metric (up to
//!   the next comma outside quotes) is dropped. The name's case is kept.
//! - Parameter names match case-insensitively. Only `dur` and `desc` are read;
//!   any other parameter is ignored. For each of the two only the first
//!   well-formed occurrence counts, even if its value turns out to be unusable.
//! - A parameter that is malformed (empty name, a value that is neither a
//!   token nor a quoted string, text trailing its value, or a quoted string
//!   that never closes) is ignored as if it were absent; the metric keeps
//!   everything else. An unclosed quote swallows the rest of the value.
//! - A parameter written without a value (`desc`, `desc=`) has the empty value.
//! - `dur` is plain decimal notation: digits with at most one `.`, at least one
//!   digit (`12`, `12.5`, `.5`, `5.`), bare or quoted. Signs, exponents,
//!   `inf`/`nan`, surrounding spaces inside quotes, and numbers above
//!   [`MAX_DUR_MS`] (a million seconds) all leave `dur_ms` as `None`.
//! - `desc` is unquoted and unescaped (`\x` stands for `x`); otherwise the
//!   server's text is kept as it came, control characters included. Cleaning
//!   it up for display is the renderer's job.
//! - Limits against hostile servers: once `out` holds [`MAX_METRICS`] entries
//!   nothing more is appended, and names and descriptions are cut to
//!   [`MAX_TEXT_CHARS`] characters (on a character boundary).

use std::borrow::Cow;

/// The most metrics kept in one output list, however many headers add to it.
pub const MAX_METRICS: usize = 64;

/// The most characters kept of a metric's name or description.
pub const MAX_TEXT_CHARS: usize = 256;

/// The longest `dur` taken as a duration: a million seconds (11.6 days). A
/// larger figure is no timing of one response; it would only overflow the
/// statistics built on it.
pub const MAX_DUR_MS: f64 = 1e9;

/// One metric of a `Server-Timing` header: what the server says it spent, by name.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerTiming {
    pub name: String,
    /// `dur`, in milliseconds; `None` when the metric carries no usable duration.
    pub dur_ms: Option<f64>,
    /// `desc`, unquoted and unescaped; `None` when absent.
    pub desc: Option<String>,
}

/// Parses every metric of one header *value* (the text after `Server-Timing:`),
/// appending to `out`. Malformed metrics are skipped, never fatal.
///
/// The value should come without its line ending; [`parse_line`] strips it.
pub fn parse_value(value: &str, out: &mut Vec<ServerTiming>) {
    let mut cur = Cursor { s: value, pos: 0 };
    loop {
        if out.len() >= MAX_METRICS {
            return;
        }
        cur.skip_ows();
        if cur.at_end() {
            return;
        }
        match parse_metric(&mut cur) {
            Some(metric) => out.push(metric),
            None => cur.skip_until(b","),
        }
        // Either way the cursor now sits on a comma or at the end.
        if !cur.eat(b',') {
            return;
        }
    }
}

/// Parses a raw header line as libcurl delivers it (`Server-Timing: ...\r\n`,
/// name matched case-insensitively); returns false (and appends nothing) when the
/// line is another header.
///
/// The field name must be followed directly by the colon, as HTTP requires, so
/// `Server-Timing : x` counts as another header. Bytes that are not UTF-8 are
/// replaced with U+FFFD before parsing. A true return only says the line was a
/// `Server-Timing` header; it may still have added nothing.
pub fn parse_line(line: &[u8], out: &mut Vec<ServerTiming>) -> bool {
    const FIELD: &[u8] = b"server-timing";
    let is_ours = line.len() > FIELD.len()
        && line[..FIELD.len()].eq_ignore_ascii_case(FIELD)
        && line[FIELD.len()] == b':';
    if !is_ours {
        return false;
    }
    let mut value = &line[FIELD.len() + 1..];
    while let [rest @ .., b'\r' | b'\n'] = value {
        value = rest;
    }
    parse_value(&String::from_utf8_lossy(value), out);
    true
}

/// One metric: a name, then `;`-separated parameters. On success the cursor is
/// left on the comma that ends the metric, or at the end of the value; `None`
/// means the metric is unusable and the caller skips what is left of it.
fn parse_metric(cur: &mut Cursor<'_>) -> Option<ServerTiming> {
    let name = cur.token();
    if name.is_empty() {
        return None;
    }
    cur.skip_ows();
    if !matches!(cur.peek(), None | Some(b';' | b',')) {
        return None;
    }
    let mut metric = ServerTiming {
        name: capped(name),
        dur_ms: None,
        desc: None,
    };
    let mut seen_dur = false;
    while cur.eat(b';') {
        let Some((pname, pvalue)) = parse_param(cur) else {
            continue;
        };
        if pname.eq_ignore_ascii_case("dur") {
            if !seen_dur {
                seen_dur = true;
                metric.dur_ms = parse_dur(&pvalue);
            }
        } else if pname.eq_ignore_ascii_case("desc") && metric.desc.is_none() {
            metric.desc = Some(capped(&pvalue));
        }
    }
    Some(metric)
}

/// One parameter, the cursor just past its `;`. Always leaves the cursor on the
/// next `;` or `,` outside quotes, or at the end; `None` for a malformed one.
fn parse_param<'a>(cur: &mut Cursor<'a>) -> Option<(&'a str, Cow<'a, str>)> {
    cur.skip_ows();
    let name = cur.token();
    cur.skip_ows();
    let mut value = Cow::Borrowed("");
    if cur.eat(b'=') {
        cur.skip_ows();
        if cur.peek() == Some(b'"') {
            let mut text = String::new();
            if !cur.quoted(Some(&mut text)) {
                return None; // never closed: the cursor is at the end
            }
            value = Cow::Owned(text);
        } else {
            value = Cow::Borrowed(cur.token());
        }
        cur.skip_ows();
    }
    if name.is_empty() || !matches!(cur.peek(), None | Some(b';' | b',')) {
        cur.skip_until(b";,");
        return None;
    }
    Some((name, value))
}

/// A duration in milliseconds, in plain decimal notation; see the module notes.
fn parse_dur(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
    let dots = bytes.iter().filter(|&&b| b == b'.').count();
    if digits == 0 || dots > 1 || digits + dots != bytes.len() {
        return None;
    }
    let ms: f64 = text.parse().ok()?;
    (ms.is_finite() && (0.0..=MAX_DUR_MS).contains(&ms)).then_some(ms)
}

/// At most [`MAX_TEXT_CHARS`] characters of `text`.
fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

use crate::text::is_tchar;

/// A position in a header value. Every delimiter is ASCII, so the cursor only
/// ever rests on a character boundary.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// The longest run of token characters here; empty when there is none.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_tchar) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// Reads the quoted string that starts here, appending its unescaped text
    /// to `sink` if given. Returns false, leaving the cursor at the end, when
    /// the closing quote never comes.
    fn quoted(&mut self, mut sink: Option<&mut String>) -> bool {
        let body = self.pos + 1;
        let mut chars = self.s[body..].char_indices();
        while let Some((at, c)) = chars.next() {
            let c = match c {
                '"' => {
                    self.pos = body + at + 1;
                    return true;
                }
                '\\' => match chars.next() {
                    Some((_, escaped)) => escaped,
                    None => break,
                },
                c => c,
            };
            if let Some(text) = sink.as_deref_mut() {
                text.push(c);
            }
        }
        self.pos = self.s.len();
        false
    }

    /// Moves to the next byte in `stops` that is outside quotes, or to the end.
    fn skip_until(&mut self, stops: &[u8]) {
        while let Some(b) = self.peek() {
            if stops.contains(&b) {
                return;
            }
            if b == b'"' {
                self.quoted(None);
            } else {
                self.pos += 1;
            }
        }
    }
}

#[cfg(test)]
#[path = "server_timing_tests.rs"]
mod tests;

//! Text rules shared across the crate: server-supplied text on its way to a
//! terminal, how a duration is spelled and converted to milliseconds, and
//! what an HTTP token is. A leaf module: `probe`, `stats`, `cli`, `render`
//! and `run` all use it, and it uses nothing of ours.

use std::time::Duration;

/// The format characters (general category Cf) of Unicode 16.0, as ranges:
/// invisible by design, and among them the bidirectional overrides and
/// isolates (U+202A..U+202E, U+2066..U+2069) that make text read backwards.
/// `tests::format_ranges_are_unicodes_cf` checks the list against a
/// Unicode table, so a newer Unicode shows up as a failing test.
const FORMAT_RANGES: [(char, char); 21] = [
    ('\u{00AD}', '\u{00AD}'),
    ('\u{0600}', '\u{0605}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{06DD}', '\u{06DD}'),
    ('\u{070F}', '\u{070F}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08E2}', '\u{08E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

/// A character a terminal would act on or hide instead of showing: a
/// control character (Cc: C0, DEL, C1, where escape sequences start), a
/// format character (Cf: bidi overrides, zero-width characters, the BOM,
/// the soft hyphen, tags), or the line and paragraph separators (Zl, Zp).
pub fn must_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}')
        || FORMAT_RANGES
            .binary_search_by(|&(lo, hi)| {
                if hi < c {
                    std::cmp::Ordering::Less
                } else if lo > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// Appends the visible escape of `c` (`\x{1b}`, `\x{202e}`): the one
/// spelling of a character that must not reach a terminal as itself.
pub fn push_visible_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = write!(out, "\\x{{{:02x}}}", c as u32);
}

/// Appends `c` as a JSON escape (`\u202e`; a surrogate pair above the
/// BMP), which a JSON reader turns back into the same character.
pub fn push_json_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        let _ = write!(out, "\\u{unit:04x}");
    }
}

/// Server-supplied text made safe for a terminal: every character in
/// `must_escape` is written as a visible escape: the text is shown, never
/// obeyed or hidden. A backslash is doubled where it could be read as part
/// of an escape (before an `x`, another backslash or an escaped character),
/// so no escape can be faked, and shown as it is elsewhere (`\n` typed
/// reads `\n`). JSON and CSV keep the text as sent, unless they are written
/// to a terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars
                .peek()
                .is_some_and(|&next| next == 'x' || next == '\\' || must_escape(next)) =>
            {
                out.push_str("\\\\")
            }
            c if must_escape(c) => push_visible_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `text` with the user information of every URL-like part in it (`user:pw`
/// in `scheme://user:pw@host`, `'user:pw@host'`, `user:pw@host`) replaced by
/// `***`: what any message, file or export shows of a URL that may carry a
/// password (a `--push` URL, a target, a proxy named in libcurl's words).
/// A password may hold an unencoded `/`, `?`, `#`, `'`, a blank or an `@`,
/// which no parser reads as the user meant, so the hidden part of each `@`
/// reaches back past all of them, to the nearest `://`, the nearest quote
/// or `(` that opens a part (at the start or after a blank, `(` or `=`), the
/// `@` before it, or the start of the text. More is hidden than the
/// credentials, never less; text without an `@` is left as it is.
pub fn redact_userinfo(text: &str) -> String {
    let bytes = text.as_bytes();
    // The hidden spans, `start..at` (at: the `@`), in order.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    for (at, _) in text.match_indices('@') {
        let start = userinfo_start(bytes, from, at);
        match spans.last_mut() {
            // Back to the `@` before, hidden too: one span over both.
            Some(last) if start == from && last.1 + 1 == from => last.1 = at,
            _ if start < at => spans.push((start, at)),
            _ => {}
        }
        from = at + 1;
    }
    let mut out = String::with_capacity(text.len());
    let mut kept = 0;
    for (start, at) in spans {
        out.push_str(&text[kept..start]);
        out.push_str("***");
        kept = at;
    }
    out.push_str(&text[kept..]);
    out
}

/// Where the user information before the `@` at `at` starts: just after
/// the nearest `://`, opening quote or `(` in `bytes[from..at]` (`at` itself
/// when they are right before the `@`: nothing to hide), else `from`.
/// Every mark looked for is ASCII, so the index is a character boundary.
fn userinfo_start(bytes: &[u8], from: usize, at: usize) -> usize {
    let opens = |i: usize| i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'(' | b'=');
    (from..=at)
        .rev()
        .find(|&i| {
            (i >= from + 3 && &bytes[i - 3..i] == b"://")
                || (i > from && matches!(bytes[i - 1], b'\'' | b'"' | b'(') && opens(i - 1))
        })
        .unwrap_or(from)
}

/// A token character (RFC 9110 `tchar`): what method and header names are made of.
pub fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A non-empty HTTP token (RFC 9110): an HTTP method or a header name.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// A wall-clock time as RFC 3339 in UTC with milliseconds
/// (`2026-11-30T17:04:10.123Z`), the spelling of every `at`.
pub fn rfc3339_millis(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Whole microseconds (libcurl's timers, the kernel's RTT, a kept record)
/// as a `Duration`.
pub fn micros(us: u32) -> Duration {
    Duration::from_micros(u64::from(us))
}

/// A duration in milliseconds, the unit of every `_ms` figure we print.
pub fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `1.5s`, `400ms`, `2m`: the shortest exact spelling of a duration.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return format!("{}us", d.as_micros());
    }
    if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 && ms.is_multiple_of(100) {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_in_their_shortest_exact_form() {
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_millis(400)), "400ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
    }

    #[test]
    fn server_text_is_shown_not_obeyed() {
        let hostile = "a\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\\b";
        let shown = printable(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(shown, "a\\x{1b}]0;owned\\x{07}\\x{1b}[2J\\x{9b}31m\\b");
        assert_eq!(printable("db-query"), "db-query");
    }

    #[test]
    fn a_backslash_is_doubled_only_where_it_could_fake_an_escape() {
        // As typed: `%{http_code}\n` reads `%{http_code}\n`.
        assert_eq!(printable("%{http_code}\\n"), "%{http_code}\\n");
        assert_eq!(printable("C:\\dir\\"), "C:\\dir\\");
        // A literal `\x{1b}` is told apart from an escaped ESC.
        assert_eq!(printable("\\x{1b}"), "\\\\x{1b}");
        assert_eq!(printable("\u{1b}"), "\\x{1b}");
        assert_eq!(printable("\\\u{1b}"), "\\\\\\x{1b}");
        assert_eq!(printable("\\\\n"), "\\\\\\n");
        // Read back (`\\` is a backslash, `\x{..}` a character, any other
        // backslash itself), every case gives the text it came from.
        for text in [
            "a\\b",
            "\\x",
            "\\\\x",
            "\\\u{1b}x",
            "\\",
            "x\\\\",
            "\u{202e}\\",
        ] {
            assert_eq!(read_back(&printable(text)), text, "{text:?}");
        }
    }

    /// `printable`'s output read back into the text it came from.
    fn read_back(shown: &str) -> String {
        let mut out = String::new();
        let mut rest = shown;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("\\\\") {
                out.push('\\');
                rest = after;
            } else if let Some(after) = rest.strip_prefix("\\x{") {
                let end = after.find('}').unwrap();
                out.push(char::from_u32(u32::from_str_radix(&after[..end], 16).unwrap()).unwrap());
                rest = &after[end + 1..];
            } else {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        out
    }

    #[test]
    fn invisible_and_bidi_characters_are_shown_as_escapes() {
        let cases = [
            ('\u{202E}', "\\x{202e}"),
            ('\u{2066}', "\\x{2066}"),
            ('\u{2067}', "\\x{2067}"),
            ('\u{2068}', "\\x{2068}"),
            ('\u{2069}', "\\x{2069}"),
            ('\u{200B}', "\\x{200b}"),
            ('\u{2028}', "\\x{2028}"),
            ('\u{2029}', "\\x{2029}"),
            ('\u{FEFF}', "\\x{feff}"),
            ('\u{00AD}', "\\x{ad}"),
            ('\u{061C}', "\\x{61c}"),
            ('\u{180E}', "\\x{180e}"),
            ('\u{E0001}', "\\x{e0001}"),
            ('\u{7F}', "\\x{7f}"),
        ];
        for (c, shown) in cases {
            assert_eq!(printable(&format!("a{c}b")), format!("a{shown}b"), "{c:?}");
        }
        // Letters, marks and ordinary spaces of any script stay as they are.
        assert_eq!(
            printable("café 東京 שלום e\u{301}"),
            "café 東京 שלום e\u{301}"
        );
    }

    #[test]
    fn format_ranges_are_unicodes_cf() {
        use unicode_general_category::{get_general_category, GeneralCategory as G};
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let want = matches!(
                get_general_category(c),
                G::Control | G::Format | G::LineSeparator | G::ParagraphSeparator
            );
            assert_eq!(must_escape(c), want, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn user_information_is_hidden_wherever_a_url_sits_in_a_text() {
        let cases = [
            ("https://u:p@pg.test:9091/x", "https://***@pg.test:9091/x"),
            ("u:p@pg.test", "***@pg.test"),
            ("http://pg.test/a", "http://pg.test/a"),
            ("no at sign at all", "no at sign at all"),
            // An `@` after a `/`, `?` or `#` may still end a password.
            ("http://pg.test/a@b", "http://***@b"),
            (
                "http://alice:S3cr/3tPW@127.0.0.1:19091",
                "http://***@127.0.0.1:19091",
            ),
            ("http://alice:S3cr?3tPW@h", "http://***@h"),
            ("http://alice:S3cr#3tPW@h", "http://***@h"),
            (
                "http://a:b@c/d@127.0.0.1:19091/x",
                "http://***@127.0.0.1:19091/x",
            ),
            ("http://a:p@ss@h", "http://***@h"),
            ("http://@h", "http://@h"),
            // libcurl's words, the URL quoted inside them.
            (
                "Unsupported proxy syntax in 'http://puser:Pr0x/yPW@127.0.0.1:19300': Port \
                 number was not a decimal number between 0 and 65535",
                "Unsupported proxy syntax in 'http://***@127.0.0.1:19300': Port number was \
                 not a decimal number between 0 and 65535",
            ),
            (
                "Unsupported proxy syntax in 'puser:Pr0x yPW@127.0.0.1:19300': bad",
                "Unsupported proxy syntax in '***@127.0.0.1:19300': bad",
            ),
            (
                "in 'http://u:it's a b@h' and (x:y@z)",
                "in 'http://***@h' and (***@z)",
            ),
            ("a=u:p@h", "***@h"),
            ("a='u:p@h'", "a='***@h'"),
            ("tab\t'u:p@h'", "tab\t'***@h'"),
            ("ünï: 'ü:p@h'", "ünï: '***@h'"),
        ];
        for (given, shown) in cases {
            assert_eq!(redact_userinfo(given), shown, "{given}");
        }
    }

    #[test]
    fn json_escapes_read_back_as_the_same_character() {
        for c in ['\u{1b}', '\u{9b}', '\u{202E}', '\u{E0041}'] {
            let mut escaped = String::from("\"");
            push_json_escape(&mut escaped, c);
            escaped.push('"');
            assert!(escaped.is_ascii(), "{escaped}");
            let back: String = serde_json::from_str(&escaped).unwrap();
            assert_eq!(back, c.to_string());
        }
    }
}

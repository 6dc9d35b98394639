//! Standard output as every format writes it. Into a file or a pipe the
//! bytes pass untouched, so a machine output keeps a server's text exactly as
//! sent. On a terminal, the characters a terminal would act on or hide
//! (`text::must_escape`: escape sequences, bidi overrides, zero-width
//! characters) are escaped on their way out, the one place for every
//! machine output (`--csv`, `--json`, `--jsonl`, `--write-out`), so none of
//! them can be turned against the person reading it.

use std::io::{self, Write};

use crate::render::Escape;

/// The line structure a format writes itself (CSV's and JSON Lines' LF, a
/// `--write-out` format's `\n`, `\r`, `\t`): kept, though they are control
/// characters. A server's text cannot hold them: libcurl ends a header at
/// the line break, and JSON writes them as escapes.
fn is_layout(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\t')
}

/// A writer that escapes per [`Escape`] (which the format on stdout chose). A character split between two
/// writes waits for its other bytes (at most three), so escaping never
/// depends on where a buffer happened to end.
pub(super) struct Sink<W: Write> {
    out: W,
    escape: Escape,
    /// The start of a UTF-8 sequence whose end has not been written yet.
    partial: Vec<u8>,
    /// The escaped form of one write, reused.
    shown: String,
}

impl<W: Write> Sink<W> {
    pub(super) fn new(out: W, escape: Escape) -> Sink<W> {
        Sink {
            out,
            escape,
            partial: Vec::new(),
            shown: String::new(),
        }
    }

    fn push_text(&mut self, text: &str) {
        for c in text.chars() {
            match self.escape {
                _ if !crate::text::must_escape(c) || is_layout(c) => self.shown.push(c),
                Escape::Json => crate::text::push_json_escape(&mut self.shown, c),
                _ => crate::text::push_visible_escape(&mut self.shown, c),
            }
        }
    }

    /// Escapes `bytes` (after any partial character) into `shown`, keeping
    /// an incomplete last character back; a byte that is not UTF-8 at all
    /// is shown as U+FFFD.
    fn escape_into_shown(&mut self, bytes: &[u8]) {
        self.shown.clear();
        let mut joined = std::mem::take(&mut self.partial);
        joined.extend_from_slice(bytes);
        let mut rest = joined.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_text(text);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // The prefix was just checked to be UTF-8.
                    self.push_text(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.partial.extend_from_slice(bad);
                            break;
                        }
                        Some(n) => {
                            self.shown.push(char::REPLACEMENT_CHARACTER);
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
    }
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.escape == Escape::Off {
            return self.out.write(bytes);
        }
        self.escape_into_shown(bytes);
        self.out.write_all(self.shown.as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(escape: Escape, writes: &[&[u8]]) -> String {
        let mut sink = Sink::new(Vec::new(), escape);
        for w in writes {
            sink.write_all(w).unwrap();
        }
        String::from_utf8(sink.out).unwrap()
    }

    const HOSTILE: &str = "db;desc=\"\u{1b}]0;owned\u{7}\u{202e}lmth.exe\"\r\n";

    #[test]
    fn off_passes_every_byte_through() {
        assert_eq!(through(Escape::Off, &[HOSTILE.as_bytes()]), HOSTILE);
    }

    #[test]
    fn visible_escapes_all_but_the_line_structure() {
        assert_eq!(
            through(Escape::Visible, &[HOSTILE.as_bytes()]),
            "db;desc=\"\\x{1b}]0;owned\\x{07}\\x{202e}lmth.exe\"\r\n"
        );
    }

    #[test]
    fn json_escapes_keep_the_document_valid_and_its_text_intact() {
        let doc = serde_json::to_string_pretty(&serde_json::json!({ "desc": HOSTILE })).unwrap();
        let shown = through(Escape::Json, &[doc.as_bytes()]);
        assert!(
            !shown
                .chars()
                .any(|c| crate::text::must_escape(c) && c != '\n'),
            "{shown:?}"
        );
        assert!(shown.contains("\\u202e"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["desc"], HOSTILE);
    }

    #[test]
    fn a_character_split_between_writes_is_escaped_whole() {
        let bytes = "a\u{202e}b\u{e0041}".as_bytes();
        for cut in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(cut);
            assert_eq!(
                through(Escape::Visible, &[head, tail]),
                "a\\x{202e}b\\x{e0041}",
                "cut at {cut}"
            );
        }
        assert_eq!(through(Escape::Visible, &[b"a\xffb"]), "a\u{fffd}b");
    }
}

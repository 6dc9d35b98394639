//! Lines made of styled segments, cut to the terminal width before any
//! escape code is added, so truncation never breaks a colour sequence.

use crossterm::style::Stylize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    Plain,
    /// Failures.
    Red,
    /// A total well above the running median of its mode.
    Yellow,
    /// Annotations.
    Dim,
    /// Headings.
    Bold,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    segments: Vec<(String, Paint)>,
}

impl Line {
    pub fn new() -> Line {
        Line::default()
    }

    pub fn plain(text: impl Into<String>) -> Line {
        let mut l = Line::new();
        l.push(text, Paint::Plain);
        l
    }

    pub fn push(&mut self, text: impl Into<String>, paint: Paint) -> &mut Line {
        self.segments.push((text.into(), paint));
        self
    }

    pub fn text(&self) -> String {
        self.segments.iter().map(|(t, _)| t.as_str()).collect()
    }

    /// The line cut to `width` characters (trailing spaces dropped), with
    /// colour codes when `color` is set.
    pub fn render(&self, width: usize, color: bool) -> String {
        use std::fmt::Write as _;
        // What would show uncut: trailing padding is invisible.
        let visible = self.text().trim_end().chars().count();
        let cutting = visible > width;
        // A cut line keeps its last column for the `…` that marks the cut,
        // wherever it falls: inside a segment or between two.
        let mut left = if cutting {
            width.saturating_sub(1)
        } else {
            width
        };
        let mut out = String::with_capacity(visible.min(width) + 32);
        let last = self.segments.len().saturating_sub(1);
        for (i, (text, paint)) in self.segments.iter().enumerate() {
            if left == 0 {
                break;
            }
            let n = if text.is_ascii() {
                text.len()
            } else {
                text.chars().count()
            };
            let cut;
            let mut piece: &str = if n > left {
                cut = text.chars().take(left).collect::<String>();
                &cut
            } else {
                text
            };
            left -= n.min(left);
            // Trailing padding is invisible; dropping it keeps lines honest about their width.
            if i == last || left == 0 {
                piece = piece.trim_end();
            }
            if !color || *paint == Paint::Plain || piece.is_empty() {
                out.push_str(piece);
                continue;
            }
            let _ = match paint {
                Paint::Red => write!(out, "{}", piece.red()),
                Paint::Yellow => write!(out, "{}", piece.yellow()),
                Paint::Dim => write!(out, "{}", piece.dim()),
                Paint::Bold => write!(out, "{}", piece.bold()),
                Paint::Plain => Ok(()),
            };
        }
        if cutting {
            out.push('…');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_to_width_and_marks_the_cut() {
        let mut l = Line::new();
        l.push("abcdef", Paint::Plain).push("ghij", Paint::Red);
        assert_eq!(l.render(8, false), "abcdefg…");
        assert_eq!(l.render(100, false), "abcdefghij");
    }

    #[test]
    fn a_segment_dropped_at_the_edge_is_marked_too() {
        let mut l = Line::new();
        l.push("abcdefgh", Paint::Plain).push(" warmup", Paint::Dim);
        // Exactly full before the note: the note is cut, and the cut shows.
        assert_eq!(l.render(8, false), "abcdefg…");
        // Padding alone is never worth a mark.
        let mut padded = Line::new();
        padded
            .push("abcdefgh", Paint::Plain)
            .push("   ", Paint::Plain);
        assert_eq!(padded.render(8, false), "abcdefgh");
    }

    #[test]
    fn colour_only_when_asked() {
        let mut l = Line::new();
        l.push("x", Paint::Red);
        assert_eq!(l.render(10, false), "x");
        assert!(l.render(10, true).contains("\u{1b}["));
    }
}

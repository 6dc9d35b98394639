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
        let mut left = width;
        let mut out = String::new();
        let mut pieces: Vec<(String, Paint)> = Vec::new();
        for (text, paint) in &self.segments {
            if left == 0 {
                break;
            }
            let n = text.chars().count();
            let piece: String = if n > left {
                let mut cut: String = text.chars().take(left.saturating_sub(1)).collect();
                cut.push('…');
                cut
            } else {
                text.clone()
            };
            left = left.saturating_sub(n.min(left));
            pieces.push((piece, *paint));
        }
        // Trailing padding is invisible; dropping it keeps lines honest about their width.
        if let Some((last, _)) = pieces.last_mut() {
            let trimmed = last.trim_end().len();
            last.truncate(trimmed);
        }
        for (text, paint) in pieces {
            if !color || paint == Paint::Plain || text.is_empty() {
                out.push_str(&text);
                continue;
            }
            let styled = match paint {
                Paint::Red => text.red().to_string(),
                Paint::Yellow => text.yellow().to_string(),
                Paint::Dim => text.dim().to_string(),
                Paint::Bold => text.bold().to_string(),
                Paint::Plain => text,
            };
            out.push_str(&styled);
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
    fn colour_only_when_asked() {
        let mut l = Line::new();
        l.push("x", Paint::Red);
        assert_eq!(l.render(10, false), "x");
        assert!(l.render(10, true).contains("\u{1b}["));
    }
}

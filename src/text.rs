//! Text from outside (servers, libcurl's error strings) on its way to a
//! terminal. A leaf module: `probe` (warnings on stderr), `render` and `run`
//! all use it, and it uses nothing of ours.

/// Server-supplied text made safe for a terminal: every control character
/// (C0, DEL, C1 — escape sequences start with them) is written as a visible
/// escape, so the text is shown, never obeyed. JSON and CSV keep it as sent.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\x{{{:02x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_text_is_shown_not_obeyed() {
        let hostile = "a\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\\b";
        let shown = printable(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert_eq!(shown, "a\\x{1b}]0;owned\\x{07}\\x{1b}[2J\\x{9b}31m\\\\b");
        assert_eq!(printable("db-query"), "db-query");
    }
}

//! Text rules shared across the crate: server-supplied text on its way to a
//! terminal, how a duration is spelled and converted to milliseconds, and
//! what an HTTP token is. A leaf module: `probe`, `stats`, `cli`, `render`
//! and `run` all use it, and it uses nothing of ours.

use std::time::Duration;

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
        assert_eq!(shown, "a\\x{1b}]0;owned\\x{07}\\x{1b}[2J\\x{9b}31m\\\\b");
        assert_eq!(printable("db-query"), "db-query");
    }
}

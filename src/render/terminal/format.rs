//! Number and text formatting shared by the human layouts.

use std::time::Duration;

use crate::probe::ErrorKind;
use crate::stats::Delta;

pub use crate::text::{format_duration, printable};

/// Short reason for a failure, as the table cell shows it; `timeout`
/// carries the configured limit.
pub fn reason(kind: ErrorKind, timeout: Duration) -> String {
    match kind {
        ErrorKind::Timeout => format!("timeout ({})", format_duration(timeout)),
        ErrorKind::ConnRefused => "conn refused".into(),
        ErrorKind::ConnReset => "conn reset".into(),
        ErrorKind::DnsFail => "dns fail".into(),
        ErrorKind::Unreachable => "unreachable".into(),
        ErrorKind::CertExpired => "TLS: cert expired".into(),
        ErrorKind::CertName => "TLS: cert name".into(),
        ErrorKind::CertUnknownCa => "TLS: unknown CA".into(),
        ErrorKind::CertInvalid => "TLS: cert invalid".into(),
        ErrorKind::TlsError => "TLS error".into(),
        ErrorKind::ConnClosed => "conn closed".into(),
        ErrorKind::BodyError => "body error".into(),
        ErrorKind::Canceled => "canceled".into(),
        ErrorKind::Error => "error".into(),
    }
}

/// Milliseconds with as many decimals as a small value needs and a large one
/// does not: `0.42`, `12.3`, `482`. At most 7 characters below 10^7 ms.
pub fn ms(d: Duration) -> String {
    cell(Some(d))
}

/// Writes `d` as `ms` does, right-aligned in `width`, or `-` when not measured.
/// The one place the precision rule lives.
pub fn write_cell(out: &mut String, d: Option<Duration>, width: usize) {
    use std::fmt::Write as _;
    let _ = match d.map(crate::text::millis) {
        None => write!(out, "{:>width$}", "-"),
        Some(v) if v < 10.0 => write!(out, "{v:>width$.2}"),
        Some(v) if v < 100.0 => write!(out, "{v:>width$.1}"),
        Some(v) => write!(out, "{v:>width$.0}"),
    };
}

/// A stage cell: the value, or `-` for "not measured".
pub fn cell(d: Option<Duration>) -> String {
    let mut out = String::new();
    write_cell(&mut out, d, 0);
    out
}

/// How a signed figure shows its sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// `+353`, `-1.20`: a gain, whose direction is the point.
    Always,
    /// `353`, `-1.20`: a figure that is usually positive.
    Minus,
}

/// Signed milliseconds by `ms`'s precision rule. A value that prints as
/// zero carries no minus: `-0.00` would claim a direction it does not show.
pub fn signed_ms(d: Delta, sign: Sign) -> String {
    let text = ms(d.abs());
    let zero = !text.chars().any(|c| c.is_ascii_digit() && c != '0');
    match (d.is_negative() && !zero, sign) {
        (true, _) => format!("-{text}"),
        (false, Sign::Always) => format!("+{text}"),
        (false, Sign::Minus) => text,
    }
}

/// Whether `d` prints as zero at `ms`'s precision (`0.00`).
pub fn prints_as_zero(d: Delta) -> bool {
    !ms(d.abs()).chars().any(|c| c.is_ascii_digit() && c != '0')
}

/// Cuts `text` to at most `width` characters, marking the cut with `…`.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// How long a certificate has left, or since when it has expired, in whole
/// days: `expires in 12 days`, `expired 3 days ago`, `expired less than a day ago`.
pub fn cert_expiry(days_left: i32, expired: bool) -> String {
    let days = |n: u32| {
        if n == 1 {
            "1 day".to_string()
        } else {
            format!("{n} days")
        }
    };
    match (days_left.unsigned_abs(), expired) {
        (0, false) => "expires in less than a day".into(),
        (0, true) => "expired less than a day ago".into(),
        (n, false) => format!("expires in {}", days(n)),
        (n, true) => format!("expired {} ago", days(n)),
    }
}

/// Seconds with one decimal, for elapsed times.
pub fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// `text` wrapped at its spaces to `width`, keeping its indent; each
/// continuation two columns further in (at least four). A word longer than
/// the room is left whole for the width cut to mark.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    if text.chars().count() <= width {
        return vec![text.to_string()];
    }
    let indent = text.len() - text.trim_start_matches(' ').len();
    let more = " ".repeat((indent + 2).max(4));
    let mut lines = Vec::new();
    let mut line = " ".repeat(indent);
    let mut bare = true;
    for word in figure_words(text.trim_start_matches(' ')) {
        let len = line.chars().count();
        if !bare && len + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, more.clone()));
            bare = true;
        }
        if !bare {
            line.push(' ');
        }
        line.push_str(&word);
        bare = false;
    }
    lines.push(line);
    lines
}

/// The longest aside in parentheses a wrap keeps whole (`(medians, n = 3)`,
/// `(medians per sample, n = 2)`).
const SHORT_ASIDE: usize = 30;

/// The words of `text`, a figure kept with the word before it (`rest
/// 2.04ms`, `of 40.1ms`, `CI 0.10 .. 0.80`), so a wrap never parts a name
/// from its value; a `·` between facts stays with the fact before it, so
/// no line starts with one; and a short aside in parentheses is one word.
fn figure_words(text: &str) -> Vec<String> {
    let raw: Vec<&str> = text.split(' ').collect();
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let word = raw[i];
        i += 1;
        if word.starts_with('(') && !word.ends_with(')') {
            let end = (i..raw.len()).find(|&j| raw[j].ends_with(')') || raw[j].contains('('));
            if let Some(end) = end.filter(|&j| !raw[j].starts_with('(')) {
                let aside = raw[i - 1..=end].join(" ");
                if aside.chars().count() <= SHORT_ASIDE {
                    words.push(aside);
                    i = end + 1;
                    continue;
                }
            }
        }
        let digits = word.trim_start_matches(['-', '+', '~']);
        // A range's `..` stays with the figures on both sides of it, and
        // `=` with the name before it (`(n = 14)` is never parted).
        let glued =
            digits.starts_with(|c: char| c.is_ascii_digit()) || matches!(word, ".." | "=" | "·");
        match words.last_mut() {
            Some(last) if glued && !last.is_empty() => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    words
}

/// `n` and a noun, singular for one: `1 round`, `3 rounds`.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// The human output's punctuation in ASCII, for a terminal whose locale
/// is not UTF-8 (where the boxes are ASCII too): ` · ` between facts
/// becomes ` | `, the `·` between row notes `,`, the `…` of a cut `~`,
/// `µ` `u`, the `×` of `N round trips × R` `x`. Each stands for one character, so no line grows.
pub fn ascii_punctuation(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    let mut out = text
        .replace(" · ", " | ")
        .replace('…', "~")
        .replace('µ', "u")
        .replace('×', "x");
    // A wrapped line ends with the `·` of the fact before the wrap.
    if out.ends_with(" ·") {
        out.truncate(out.len() - '·'.len_utf8());
        out.push('|');
    }
    out.replace('·', ",")
}

/// A duration as the statistics write one, `-` when not measured.
pub fn with_unit(d: Option<Duration>) -> String {
    d.map(|d| format!("{}ms", ms(d)))
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_never_parted_from_its_equals_sign_and_figure() {
        let text = "  why: tls 44.3ms = 1 round trip of 40.2ms (all resumed) (medians, n = 14)";
        for width in 20..text.len() {
            for line in wrap(text, width) {
                assert!(
                    !line.trim_end().ends_with("(medians, n"),
                    "{width}: {line:?}"
                );
                assert!(!line.trim_start().starts_with("= 14)"), "{width}: {line:?}");
            }
        }
    }

    #[test]
    fn a_short_aside_stays_whole_and_no_line_starts_with_a_dot() {
        let text = "new connection     = 3.75ms: 3 round trips (tcp 1 · tls 1 · srv 1) of 0.01ms \
                    + server 0.52ms + client 0.64ms + rest 2.56ms  (medians, n = 3)";
        for width in 30..text.len() {
            let lines = wrap(text, width);
            for line in &lines {
                assert!(
                    !line.trim_end().ends_with("(medians,"),
                    "{width}: {lines:#?}"
                );
                assert!(!line.trim_start().starts_with('·'), "{width}: {lines:#?}");
            }
            assert!(
                lines.iter().any(|l| l.contains("(medians, n = 3)")),
                "{width}"
            );
        }
        // A long one wraps at its words.
        let long = "why: x (one for a HelloRetryRequest: the server wants P-384, we sent X25519)";
        assert!(wrap(long, 40).len() > 1);
        assert_eq!(
            ascii_punctuation("  other 3.99 · setup 0.22 ·"),
            "  other 3.99 | setup 0.22 |"
        );
    }

    #[test]
    fn ascii_punctuation_keeps_every_line_as_wide() {
        let text = "h2 · TLS1.3 · 0 bytes | 200 warmup·new conn held at 0 µs, cut…";
        let ascii = ascii_punctuation(text);
        assert_eq!(
            ascii,
            "h2 | TLS1.3 | 0 bytes | 200 warmup,new conn held at 0 us, cut~"
        );
        assert!(ascii.is_ascii());
        assert_eq!(ascii.chars().count(), text.chars().count());
    }

    #[test]
    fn precision_follows_magnitude() {
        assert_eq!(ms(Duration::from_micros(420)), "0.42");
        assert_eq!(ms(Duration::from_micros(12_340)), "12.3");
        assert_eq!(ms(Duration::from_millis(482)), "482");
        assert_eq!(ms(Duration::from_millis(99_999)), "99999");
    }

    #[test]
    fn cells_are_right_aligned_at_a_fixed_width() {
        let cases = [
            (0u64, "   0.00"),
            (420, "   0.42"),
            (9_994, "   9.99"),
            (12_340, "   12.3"),
            (99_940, "   99.9"),
            (482_000, "    482"),
            (99_999_000, "  99999"),
        ];
        for (us, want) in cases {
            let mut out = String::new();
            write_cell(&mut out, Some(Duration::from_micros(us)), 7);
            assert_eq!(out, want, "{us} µs");
        }
        let mut out = String::new();
        write_cell(&mut out, None, 7);
        assert_eq!(out, "      -");
    }

    #[test]
    fn signed_values_keep_their_sign() {
        let us = Delta::from_us;
        assert_eq!(signed_ms(us(353_000), Sign::Always), "+353");
        assert_eq!(signed_ms(us(-1_200), Sign::Always), "-1.20");
        assert_eq!(signed_ms(us(353_000), Sign::Minus), "353");
        assert_eq!(signed_ms(us(-1_200), Sign::Minus), "-1.20");
        // Zero at this precision has no direction.
        assert_eq!(signed_ms(us(-4), Sign::Minus), "0.00");
        assert_eq!(signed_ms(us(-4), Sign::Always), "+0.00");
        assert!(prints_as_zero(us(-4)) && !prints_as_zero(us(-6)));
    }

    #[test]
    fn certificate_expiry_says_which_side_of_it_we_are() {
        assert_eq!(cert_expiry(12, false), "expires in 12 days");
        assert_eq!(cert_expiry(1, false), "expires in 1 day");
        assert_eq!(cert_expiry(0, false), "expires in less than a day");
        assert_eq!(cert_expiry(0, true), "expired less than a day ago");
        assert_eq!(cert_expiry(-1, true), "expired 1 day ago");
        assert_eq!(cert_expiry(-3000, true), "expired 3000 days ago");
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}

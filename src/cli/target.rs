//! The words for a target that cannot be measured, and the `-H` header parser.

use crate::probe::{Target, TargetError};

/// The target a user typed, or the usage error that says why it cannot be
/// measured (`Target::parse` says which reason; the words are the CLI's).
/// A target is quoted with its user information hidden (`text::redact_userinfo`):
/// one that cannot be parsed may still carry a password.
pub(super) fn target_arg(input: &str) -> Result<Target, String> {
    let raw = crate::text::redact_userinfo(input.trim());
    Target::parse(input).map_err(|e| match e {
        TargetError::Empty => "the target is empty; give a host or an https:// URL".into(),
        TargetError::LineBreak => "the target contains a line break or NUL; refusing it".into(),
        TargetError::Unparsable(e) => format!("'{raw}' is not a valid host or URL: {e}"),
        TargetError::Scheme(other) => {
            format!("scheme '{other}' is not supported; use https:// or http://")
        }
        TargetError::Credentials => {
            "the URL carries user:password; tlsping does not send credentials, remove them".into()
        }
        TargetError::NoHost => format!("'{raw}' has no host"),
        TargetError::PortZero => "port 0 cannot be dialed".into(),
    })
}

/// `Name: value`, with a token name and a value free of control characters
/// but the horizontal tab (RFC 9110 field values): a line break would smuggle
/// a header of its own, and the other controls are no text a server expects.
pub fn parse_header(text: &str) -> Result<String, String> {
    if let Some(c) = text.chars().find(|&c| c.is_control() && c != '\t') {
        let what = if matches!(c, '\r' | '\n') {
            "a line break"
        } else {
            "a control character"
        };
        // Raw here: the message is escaped once, where it meets stderr.
        return Err(format!(
            "header '{text}' contains {what} ({c}); only a tab may appear in a value"
        ));
    }
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("header '{text}' is not in 'Name: value' form"))?;
    let name = name.trim();
    if !crate::text::is_token(name) {
        return Err(format!(
            "header name '{name}' has characters a header name cannot have"
        ));
    }
    Ok(format!("{name}: {}", value.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_is_worded_with_what_was_typed() {
        let refused = |input: &str| target_arg(input).unwrap_err();
        assert_eq!(
            refused(" "),
            "the target is empty; give a host or an https:// URL"
        );
        assert_eq!(
            refused("https://a.test:99999/ "),
            "'https://a.test:99999/' is not a valid host or URL: invalid port number"
        );
        assert_eq!(
            refused("ftp://a.test/"),
            "scheme 'ftp' is not supported; use https:// or http://"
        );
        assert_eq!(refused("a.test:0"), "port 0 cannot be dialed");
        // A password that no parser reads as meant is not quoted.
        assert_eq!(
            refused("https://bob:Tg/tPW@127.0.0.1:18443/"),
            "'https://***@127.0.0.1:18443/' is not a valid host or URL: invalid port number"
        );
        assert!(refused("https://u@a.test/").contains("user:password"));
        assert!(refused("a.test/\n").contains("line break"));
        assert_eq!(target_arg("a.test").unwrap().url(), "https://a.test/");
    }

    #[test]
    fn headers_need_name_colon_value() {
        assert_eq!(parse_header("X-Test:  1 ").unwrap(), "X-Test: 1");
        for bad in ["novalue", ": v", "Bad Name: v", "X: a\r\nY: b", "X\n: v"] {
            assert!(parse_header(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn header_values_refuse_every_control_but_the_tab() {
        assert_eq!(parse_header("X-T: a\tb").unwrap(), "X-T: a\tb");
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            if c == '\t' {
                continue;
            }
            let text = format!("X-T: a{c}b");
            let e = parse_header(&text).expect_err(&format!("{c:?} accepted"));
            assert!(e.contains("only a tab"), "{e}");
        }
    }
}

//! From what the user typed (`host`, `host:port`, a URL) to a `Target`.

use crate::probe::Target;

fn has_ctl(text: &str) -> bool {
    text.chars().any(|c| c == '\r' || c == '\n' || c == '\0')
}

/// Normalises the target. A missing scheme means https, a missing path `/`.
/// Credentials in the URL are refused: they would be sent on every probe.
pub fn parse_target(input: &str) -> Result<Target, String> {
    let raw = input.trim();
    if raw.is_empty() {
        return Err("the target is empty; give a host or an https:// URL".into());
    }
    if has_ctl(input) {
        return Err("the target contains a line break or NUL; refusing it".into());
    }
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let url = url::Url::parse(&with_scheme)
        .map_err(|e| format!("'{raw}' is not a valid host or URL: {e}"))?;
    let https = match url.scheme() {
        "https" => true,
        "http" => false,
        other => {
            return Err(format!(
                "scheme '{other}' is not supported; use https:// or http://"
            ))
        }
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "the URL carries user:password; tlsping does not send credentials, remove them".into(),
        );
    }
    let host = match url.host() {
        Some(url::Host::Ipv6(v6)) => v6.to_string(),
        Some(h) => h.to_string(),
        None => return Err(format!("'{raw}' has no host")),
    };
    if host.is_empty() {
        return Err(format!("'{raw}' has no host"));
    }
    if url.port() == Some(0) {
        return Err("port 0 cannot be dialed".into());
    }
    let port = url
        .port_or_known_default()
        .unwrap_or(if https { 443 } else { 80 });
    let mut path_and_query = url.path().to_string();
    if path_and_query.is_empty() {
        path_and_query.push('/');
    }
    if let Some(q) = url.query() {
        path_and_query.push('?');
        path_and_query.push_str(q);
    }
    Ok(Target {
        https,
        host,
        port,
        path_and_query,
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
        return Err(format!(
            "header {text:?} contains {what} ({:?}); only a tab may appear in a value",
            c
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
    fn bare_host_becomes_https_root() {
        let t = parse_target("google.com").unwrap();
        assert_eq!(t.url(), "https://google.com/");
        assert_eq!(t.port, 443);
    }

    #[test]
    fn host_port_and_paths_are_kept() {
        assert_eq!(
            parse_target("127.0.0.1:8443").unwrap().url(),
            "https://127.0.0.1:8443/"
        );
        assert_eq!(
            parse_target("http://a.test/x?y=1").unwrap().url(),
            "http://a.test/x?y=1"
        );
        let v6 = parse_target("https://[::1]:9443/p").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 9443));
    }

    #[test]
    fn bad_targets_are_refused() {
        for bad in [
            "",
            "   ",
            "ftp://a.test/",
            "https://u:p@a.test/",
            "a.test:99999",
            "a.test:0",
            "https://a.test/\r\nX: y",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?} accepted");
        }
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

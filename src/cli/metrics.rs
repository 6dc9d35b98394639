//! `--openmetrics`, `--push` and `--label`: checked before anything is
//! dialed, so a label Prometheus would refuse, or a Pushgateway URL that
//! cannot be used, ends the run as a usage error (exit 3).

use crate::probe::{Credentials, PushRoute, PushTarget, PUSH_AUTH_VAR};
use crate::render::openmetrics::{Labels, RESERVED_LABELS};
use crate::text::redact_userinfo;

/// At most this many `--label`s.
pub const MAX_LABELS: usize = 16;
/// A label's name and value are at most this many bytes.
pub const MAX_LABEL_NAME: usize = 128;
pub const MAX_LABEL_VALUE: usize = 1024;
/// A Pushgateway URL is at most this many bytes.
const MAX_PUSH_URL: usize = 2048;

/// Prometheus's rule for a label name: `[a-zA-Z_][a-zA-Z0-9_]*`, and the
/// names starting with `__` are Prometheus's own.
fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

/// Every `--label NAME=VALUE`, in order: valid names, none of ours, none twice.
pub(super) fn parse_labels(given: &[String]) -> Result<Labels, String> {
    if given.len() > MAX_LABELS {
        return Err(format!("at most {MAX_LABELS} --label flags"));
    }
    let mut labels: Labels = Vec::with_capacity(given.len());
    for text in given {
        let (name, value) = text
            .split_once('=')
            .ok_or_else(|| format!("--label '{text}' is not in NAME=VALUE form"))?;
        if name.len() > MAX_LABEL_NAME || !valid_label_name(name) {
            return Err(format!(
                "--label name '{name}' is not a Prometheus label name \
                 ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, at most {MAX_LABEL_NAME} bytes)"
            ));
        }
        if RESERVED_LABELS.contains(&name) {
            return Err(format!(
                "--label name '{name}' is one tlsping sets itself; pick another \
                 (reserved: {})",
                RESERVED_LABELS.join(", ")
            ));
        }
        if labels.iter().any(|(n, _)| n == name) {
            return Err(format!("--label '{name}' is given twice"));
        }
        if value.len() > MAX_LABEL_VALUE {
            return Err(format!(
                "--label {name}: the value is longer than {MAX_LABEL_VALUE} bytes"
            ));
        }
        labels.push((name.to_string(), value.to_string()));
    }
    Ok(labels)
}

/// The most a `--push-auth-file` may hold.
pub(super) const MAX_AUTH_FILE: u64 = 4 << 10;

/// Whether a `--push` URL carries a password.
pub(super) fn has_password(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| u.password().is_some_and(|p| !p.is_empty()))
}

/// `USER:PASSWORD` as credentials; `from` names where it came from.
fn credentials(text: &str, from: &str) -> Result<Credentials, String> {
    let (user, password) = text
        .split_once(':')
        .filter(|(u, _)| !u.is_empty())
        .ok_or_else(|| format!("{from} does not hold USER:PASSWORD"))?;
    if text.chars().any(char::is_control) {
        return Err(format!("{from}: USER:PASSWORD holds a control character"));
    }
    Ok(Credentials {
        user: user.to_string(),
        password: password.to_string(),
    })
}

/// The push's credentials from `--push-auth-file` (the first line of a
/// regular file, at most 4 KiB) or else `TLSPING_PUSH_AUTH`; `None` when
/// neither is given. A value that is not UTF-8 is refused as one with a
/// control character is, never passed over (the push would then go without
/// credentials).
fn auth_from_file_or_env(
    file: Option<&std::path::Path>,
    env: Option<std::ffi::OsString>,
) -> Result<Option<Credentials>, String> {
    if let Some(path) = file {
        let named = format!("--push-auth-file {}", path.display());
        let bytes = crate::files::read_named(&named, path, MAX_AUTH_FILE, "a USER:PASSWORD file")?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{named} is not UTF-8 text"))?;
        let line = text.lines().next().unwrap_or("");
        return credentials(line, &named).map(Some);
    }
    match env.filter(|v| !v.is_empty()) {
        Some(v) => {
            let text = v
                .to_str()
                .ok_or_else(|| format!("{PUSH_AUTH_VAR}: USER:PASSWORD is not UTF-8 text"))?;
            credentials(text, PUSH_AUTH_VAR).map(Some)
        }
        None => Ok(None),
    }
}

/// The push's way, the probes' way: straight to the Pushgateway while the
/// probes dial their pinned address; otherwise (`--no-pin-ip`,
/// `--connect-to`) through the proxy libcurl gives the probes of the run's
/// target (`probe::probes_proxy`), or straight when they go without one. A
/// proxy the probes do not use never sees the push or its credentials.
pub(super) fn push_route(config: &crate::probe::Config) -> PushRoute {
    if config.pin_ip {
        return PushRoute::Direct;
    }
    match crate::probe::probes_proxy(config.target.https, &config.target.host) {
        Some((variable, url)) => PushRoute::Proxy { variable, url },
        None => PushRoute::Direct,
    }
}

/// `--push URL` (with `--push-auth-file`, `TLSPING_PUSH_AUTH`): an http://
/// or https:// URL with a host and no query or fragment (the grouping key
/// is appended to its path), without the trailing `/`, and its credentials
/// apart. Every message shows the URL with its credentials as `***`. An
/// https:// one needs the CA sources the probes would read without
/// `--cacert` to be there (`probe::check_trust_sources`).
pub(super) fn parse_push(
    text: &str,
    auth_file: Option<&std::path::Path>,
    route: PushRoute,
) -> Result<PushTarget, String> {
    let shown = redact_userinfo(text);
    if text.len() > MAX_PUSH_URL {
        return Err(format!(
            "--push: the URL is longer than {MAX_PUSH_URL} bytes"
        ));
    }
    let mut url =
        url::Url::parse(text).map_err(|e| format!("--push '{shown}' is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "--push: scheme '{}' is not supported; use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("--push '{shown}' has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "--push '{shown}': no query or fragment; the grouping key goes on the path"
        ));
    }
    if url.scheme() == "https" {
        crate::probe::check_trust_sources(None).map_err(|e| format!("--push '{shown}': {e}"))?;
    }
    let in_url = if url.username().is_empty() && url.password().is_none() {
        None
    } else {
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|d| d.into_owned())
                .map_err(|_| format!("--push '{shown}': the credentials are not UTF-8"))
        };
        let user = decode(url.username())?;
        let password = decode(url.password().unwrap_or(""))?;
        // Neither can fail on an http(s) URL with a host.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Some(credentials(&format!("{user}:{password}"), "--push's URL")?)
    };
    let given = auth_from_file_or_env(auth_file, std::env::var_os(PUSH_AUTH_VAR))?;
    if in_url.is_some() && auth_file.is_some() {
        return Err(
            "--push: credentials both in the URL and in --push-auth-file; give them once".into(),
        );
    }
    Ok(PushTarget {
        url: url.as_str().trim_end_matches('/').to_string(),
        // The file, else the URL, else the environment.
        auth: if auth_file.is_some() {
            given
        } else {
            in_url.or(given)
        },
        route,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(given: &[&str]) -> Result<Labels, String> {
        parse_labels(&given.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn label_names_follow_prometheus_and_leave_ours_alone() {
        let ok = labels(&["vantage=fra 1", "_x=", "dc2=a=b"]).unwrap();
        assert_eq!(
            ok,
            [
                ("vantage".to_string(), "fra 1".to_string()),
                ("_x".to_string(), String::new()),
                ("dc2".to_string(), "a=b".to_string()),
            ]
        );
        for bad in ["1x=a", "a-b=c", "=v", "__meta=v", "é=v", "novalue"] {
            assert!(labels(&[bad]).is_err(), "{bad} accepted");
        }
        for ours in ["target=x", "job=x", "instance=x", "stage=x", "variant=x"] {
            assert!(
                labels(&[ours]).unwrap_err().contains("sets itself"),
                "{ours}"
            );
        }
        assert!(labels(&["a=1", "a=2"]).unwrap_err().contains("twice"));
        let many: Vec<String> = (0..=MAX_LABELS).map(|i| format!("l{i}=v")).collect();
        assert!(parse_labels(&many).is_err());
        let long = format!("a={}", "v".repeat(MAX_LABEL_VALUE + 1));
        assert!(parse_labels(&[long]).is_err());
    }

    fn push_url(text: &str) -> Result<String, String> {
        parse_push(text, None, PushRoute::Direct).map(|t| t.url)
    }

    #[test]
    fn a_push_url_is_http_with_a_host_and_loses_its_trailing_slash() {
        assert_eq!(
            push_url("http://127.0.0.1:9091/").unwrap(),
            "http://127.0.0.1:9091"
        );
        assert_eq!(
            push_url("https://pg.example/prefix/").unwrap(),
            "https://pg.example/prefix"
        );
        for bad in ["ftp://x/", "127.0.0.1:9091", "http://x/?a=1", "http://x/#f"] {
            assert!(push_url(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn credentials_leave_the_url_and_no_message_shows_the_password() {
        let to = parse_push(
            "http://pusher:s%40cret@127.0.0.1:9091/",
            None,
            PushRoute::Direct,
        )
        .unwrap();
        assert_eq!(to.url, "http://127.0.0.1:9091");
        assert_eq!(
            to.auth,
            Some(Credentials {
                user: "pusher".into(),
                password: "s@cret".into()
            })
        );
        assert!(!format!("{to:?}").contains("cret"), "{to:?}");
        for bad in [
            "http://u:hunter2@x/?q=1",
            "http://u:hunter2@/x",
            "u:hunter2@host:9091",
            "ftp://u:hunter2@x/",
        ] {
            let e = parse_push(bad, None, PushRoute::Direct).unwrap_err();
            assert!(!e.contains("hunter2"), "{bad}: {e}");
        }
        assert_eq!(
            redact_userinfo("https://u:p@pg.test:9091/x"),
            "https://***@pg.test:9091/x"
        );
        assert_eq!(redact_userinfo("u:p@pg.test"), "***@pg.test");
        assert_eq!(redact_userinfo("http://pg.test/a"), "http://pg.test/a");
        // An `@` after a `/`, `?` or `#` may still end a password: more is
        // hidden than the credentials, never less.
        assert_eq!(redact_userinfo("http://pg.test/a@b"), "http://***@b");
        for (given, shown) in [
            (
                "http://alice:S3cr/3tPW@127.0.0.1:19091",
                "http://***@127.0.0.1:19091",
            ),
            (
                "http://alice:S3cr?3tPW@127.0.0.1:19091",
                "http://***@127.0.0.1:19091",
            ),
            (
                "http://alice:S3cr#3tPW@127.0.0.1:19091",
                "http://***@127.0.0.1:19091",
            ),
        ] {
            assert_eq!(redact_userinfo(given), shown, "{given}");
            let e = parse_push(given, None, PushRoute::Direct).unwrap_err();
            assert!(!e.contains("3tPW") && !e.contains("S3cr"), "{given}: {e}");
        }
        assert_eq!(
            redact_userinfo("http://a:b@c/d@127.0.0.1:19091/x"),
            "http://***@127.0.0.1:19091/x"
        );
        assert!(has_password("http://u:p@x/"));
        assert!(!has_password("http://u@x/"));
    }

    #[test]
    fn credentials_come_from_a_regular_file_or_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth");
        std::fs::write(&file, "pusher:pw:with:colons\nignored\n").unwrap();
        let from_file = auth_from_file_or_env(Some(&file), Some("env:pw".into())).unwrap();
        assert_eq!(
            from_file,
            Some(Credentials {
                user: "pusher".into(),
                password: "pw:with:colons".into()
            })
        );
        let from_env = auth_from_file_or_env(None, Some("env:pw".into())).unwrap();
        assert_eq!(from_env.unwrap().user, "env");
        assert_eq!(
            auth_from_file_or_env(None, Some(Default::default())).unwrap(),
            None
        );
        // Not UTF-8: refused, as a control character is, not passed over.
        use std::os::unix::ffi::OsStringExt;
        let bytes = std::ffi::OsString::from_vec(b"alice:pw\xff".to_vec());
        let e = auth_from_file_or_env(None, Some(bytes)).unwrap_err();
        assert_eq!(e, "TLSPING_PUSH_AUTH: USER:PASSWORD is not UTF-8 text");
        let e = auth_from_file_or_env(None, Some("alice:p\tw".into())).unwrap_err();
        assert!(e.contains("control character"), "{e}");
        std::fs::write(&file, "no colon\n").unwrap();
        let e = auth_from_file_or_env(Some(&file), None).unwrap_err();
        assert!(e.contains("USER:PASSWORD"), "{e}");
        let e = auth_from_file_or_env(Some(dir.path()), None).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
}

//! `--openmetrics`, `--push` and `--label`: checked before anything is
//! dialed, so a label Prometheus would refuse, or a Pushgateway URL that
//! cannot be used, ends the run as a usage error (exit 3).

use crate::render::openmetrics::{Labels, RESERVED_LABELS};

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

/// `--push URL`: an http:// or https:// URL with a host and no query or
/// fragment (the grouping key is appended to its path), without the
/// trailing `/`.
pub(super) fn parse_push_url(text: &str) -> Result<String, String> {
    if text.len() > MAX_PUSH_URL {
        return Err(format!(
            "--push: the URL is longer than {MAX_PUSH_URL} bytes"
        ));
    }
    let url = url::Url::parse(text).map_err(|e| format!("--push '{text}' is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "--push: scheme '{}' is not supported; use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("--push '{text}' has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "--push '{text}': no query or fragment; the grouping key goes on the path"
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
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

    #[test]
    fn a_push_url_is_http_with_a_host_and_loses_its_trailing_slash() {
        assert_eq!(
            parse_push_url("http://127.0.0.1:9091/").unwrap(),
            "http://127.0.0.1:9091"
        );
        assert_eq!(
            parse_push_url("https://pg.example/prefix/").unwrap(),
            "https://pg.example/prefix"
        );
        for bad in ["ftp://x/", "127.0.0.1:9091", "http://x/?a=1", "http://x/#f"] {
            assert!(parse_push_url(bad).is_err(), "{bad} accepted");
        }
    }
}

//! What a run measures: a normalised target (scheme, host, port, path and
//! query), from what a user types (`host`, `host:port`, a URL).

/// A normalised target: scheme, host, port and the request path with query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub https: bool,
    /// Host as it appears in the URL (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// Path plus `?query`, always starting with `/`.
    pub path_and_query: String,
}

/// Why a typed target cannot be measured; the command line words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetError {
    /// Nothing but blanks.
    Empty,
    /// A line break or NUL, which would end up in the request line.
    LineBreak,
    /// Not a URL even with `https://` put in front.
    Unparsable(url::ParseError),
    /// A scheme other than https and http (the scheme as typed).
    Scheme(String),
    /// `user:password@`: it would be sent on every probe.
    Credentials,
    NoHost,
    PortZero,
}

impl Target {
    /// Normalises what a user typed. A missing scheme means https, a missing
    /// path `/`. Credentials in the URL are refused: they would be sent on
    /// every probe.
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        let raw = input.trim();
        if raw.is_empty() {
            return Err(TargetError::Empty);
        }
        if input.chars().any(|c| c == '\r' || c == '\n' || c == '\0') {
            return Err(TargetError::LineBreak);
        }
        let with_scheme = if raw.contains("://") {
            raw.to_string()
        } else {
            format!("https://{raw}")
        };
        let url = url::Url::parse(&with_scheme).map_err(TargetError::Unparsable)?;
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(TargetError::Scheme(other.to_string())),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(TargetError::Credentials);
        }
        let host = match url.host() {
            Some(url::Host::Ipv6(v6)) => v6.to_string(),
            Some(h) => h.to_string(),
            None => return Err(TargetError::NoHost),
        };
        if host.is_empty() {
            return Err(TargetError::NoHost);
        }
        if url.port() == Some(0) {
            return Err(TargetError::PortZero);
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

    /// The host as it must appear inside a URL (IPv6 literals bracketed).
    pub fn url_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        let default_port = if self.https { 443 } else { 80 };
        if self.port == default_port {
            format!("{scheme}://{}{}", self.url_host(), self.path_and_query)
        } else {
            format!(
                "{scheme}://{}:{}{}",
                self.url_host(),
                self.port,
                self.path_and_query
            )
        }
    }

    /// The URL for one request; `?_=<seq>` (or `&_=<seq>`) when cache busting.
    pub fn request_url(&self, cache_bust_seq: Option<u64>) -> String {
        let base = self.url();
        match cache_bust_seq {
            None => base,
            Some(seq) => {
                let sep = if self.path_and_query.contains('?') {
                    '&'
                } else {
                    '?'
                };
                format!("{base}{sep}_={seq}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_host_becomes_https_root() {
        let t = Target::parse("google.com").unwrap();
        assert_eq!(t.url(), "https://google.com/");
        assert_eq!(t.port, 443);
    }

    #[test]
    fn host_port_and_paths_are_kept() {
        assert_eq!(
            Target::parse("127.0.0.1:8443").unwrap().url(),
            "https://127.0.0.1:8443/"
        );
        assert_eq!(
            Target::parse("http://a.test/x?y=1").unwrap().url(),
            "http://a.test/x?y=1"
        );
        let v6 = Target::parse("https://[::1]:9443/p").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 9443));
    }

    #[test]
    fn bad_targets_are_refused_with_their_reason() {
        let refused = |input: &str| Target::parse(input).unwrap_err();
        assert_eq!(refused(""), TargetError::Empty);
        assert_eq!(refused("   "), TargetError::Empty);
        assert_eq!(refused("ftp://a.test/"), TargetError::Scheme("ftp".into()));
        assert_eq!(refused("https://u:p@a.test/"), TargetError::Credentials);
        assert!(matches!(
            refused("a.test:99999"),
            TargetError::Unparsable(_)
        ));
        assert_eq!(refused("a.test:0"), TargetError::PortZero);
        assert_eq!(refused("https://a.test/\r\nX: y"), TargetError::LineBreak);
    }

    fn target(path: &str) -> Target {
        Target {
            https: true,
            host: "example.com".into(),
            port: 443,
            path_and_query: path.into(),
        }
    }

    #[test]
    fn cache_bust_appends_with_the_right_separator() {
        assert_eq!(target("/").request_url(Some(3)), "https://example.com/?_=3");
        assert_eq!(
            target("/a?b=1").request_url(Some(4)),
            "https://example.com/a?b=1&_=4"
        );
        assert_eq!(target("/a").request_url(None), "https://example.com/a");
    }

    #[test]
    fn url_keeps_non_default_port_and_brackets_ipv6() {
        let t = Target {
            https: true,
            host: "::1".into(),
            port: 8443,
            path_and_query: "/".into(),
        };
        assert_eq!(t.url(), "https://[::1]:8443/");
    }
}

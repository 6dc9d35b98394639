//! `--push`: one HTTP PUT of the run's figures to a Prometheus Pushgateway,
//! through libcurl as every probe, once stdout and the picture are written. PUT,
//! not POST: it replaces every series of the grouping key, so a series the
//! previous run had and this one lacks (a Server-Timing name, a `0.95`
//! quantile) does not linger beside the new figures.

use std::time::Duration;

use curl::easy::{Easy2, Handler, List, WriteError};

use super::curl_ffi;

/// The whole push, from resolving the host to the last byte of the answer.
pub const PUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// How soon a push notices `stop` while it waits on the network: a signal
/// abandons it well within a quarter of a second, as it ends the run's
/// other waits.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What is kept of the Pushgateway's answer, for the warning.
const ANSWER_LIMIT: usize = 512;

/// The text format the Pushgateway parses; our OpenMetrics text is also
/// valid in it (see `render::openmetrics`).
const CONTENT_TYPE: &str = "Content-Type: text/plain; version=0.0.4; charset=utf-8";

/// Keeps the start of the answer and drops the rest; abandons the push
/// when `stop` says so.
struct Answer {
    kept: Vec<u8>,
    stop: Box<dyn Fn() -> bool>,
}

impl Handler for Answer {
    fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        let room = ANSWER_LIMIT.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
        Ok(data.len())
    }

    fn progress(&mut self, _: f64, _: f64, _: f64, _: f64) -> bool {
        !(self.stop)()
    }
}

/// URL-safe base64 with padding, as the Pushgateway reads a grouping-key
/// value marked `@base64`: OpenSSL's encoder (one line, no breaks) in the
/// URL alphabet.
pub fn base64_url(bytes: &[u8]) -> String {
    openssl::base64::encode_block(bytes)
        .replace('+', "-")
        .replace('/', "_")
}

/// `URL/metrics/job/tlsping/<name>/<value>...`: a value that is not plain
/// (letters, digits, `-`, `_`, `.`) goes as `<name>@base64/<base64>`, so a
/// `/` or an empty value (`=`) cannot break the path.
pub fn grouping_url(base: &str, key: &[(String, String)]) -> String {
    let mut url = format!("{base}/metrics/job/tlsping");
    for (name, value) in key {
        // Only dots would be a path segment that libcurl (and any URL
        // parser) removes as `.`/`..`, and the label with it.
        let plain = !value.is_empty()
            && !value.bytes().all(|b| b == b'.')
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if plain {
            url.push_str(&format!("/{name}/{value}"));
        } else if value.is_empty() {
            // The Pushgateway's spelling of an empty value.
            url.push_str(&format!("/{name}@base64/="));
        } else {
            url.push_str(&format!("/{name}@base64/{}", base64_url(value.as_bytes())));
        }
    }
    url
}

/// Where `--push` goes: the Pushgateway's URL, without credentials, and
/// the credentials apart, so no message or output can print them.
#[derive(Clone)]
pub struct PushTarget {
    /// `http(s)://host[:port][/prefix]`, no user, no password, no `/` at the end.
    pub url: String,
    /// HTTP basic authentication, from `--push-auth-file`,
    /// `TLSPING_PUSH_AUTH` or the URL.
    pub auth: Option<Credentials>,
    /// The probes' proxy rule: `true` when they dial the pinned address
    /// directly (the default), so the push bypasses the environment's
    /// proxy too; `false` (`--no-pin-ip`, `--connect-to`) lets libcurl take
    /// it from `https_proxy` and the rest, as the probes do.
    pub direct: bool,
}

/// A user and a password, never printed: `Debug` says only that they are there.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<hidden>)")
    }
}

impl std::fmt::Debug for PushTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushTarget")
            .field("url", &self.url)
            .field("auth", &self.auth)
            .field("direct", &self.direct)
            .finish()
    }
}

/// PUTs `body` to the group `key` at `to`. `stop` is asked every
/// `STOP_POLL` while the push waits (and at libcurl's progress checks):
/// `true` abandons the push (a signal came while it was under way). `Err` says why it did not arrive:
/// libcurl's error, or the status and the start of the answer.
pub fn push(
    to: &PushTarget,
    key: &[(String, String)],
    body: &str,
    stop: Box<dyn Fn() -> bool>,
) -> Result<(), String> {
    let url = grouping_url(&to.url, key);
    let mut easy = Easy2::new(Answer {
        kept: Vec::new(),
        stop,
    });
    let failed = |e: curl::Error| e.to_string();
    easy.url(&url).map_err(failed)?;
    easy.custom_request("PUT").map_err(failed)?;
    easy.post_fields_copy(body.as_bytes()).map_err(failed)?;
    let mut headers = List::new();
    headers.append(CONTENT_TYPE).map_err(failed)?;
    easy.http_headers(headers).map_err(failed)?;
    easy.timeout(PUSH_TIMEOUT).map_err(failed)?;
    easy.connect_timeout(PUSH_TIMEOUT).map_err(failed)?;
    // No signal may interrupt the resolver; the timeout still holds.
    easy.signal(false).map_err(failed)?;
    easy.progress(true).map_err(failed)?;
    // Lets the handle go without waiting for a lookup still running in
    // libcurl's resolver thread: a name server that never answers would
    // otherwise hold the process past `PUSH_TIMEOUT`, until the system's own
    // resolver gives up (its timeout times its attempts).
    curl_ffi::quick_exit(&mut easy).map_err(failed)?;
    if to.direct {
        // As the probes: straight to the host, whatever the environment says.
        easy.proxy("").map_err(failed)?;
    }
    if let Some(auth) = &to.auth {
        let mut basic = curl::easy::Auth::new();
        basic.basic(true);
        easy.http_auth(&basic).map_err(failed)?;
        easy.username(&auth.user).map_err(failed)?;
        easy.password(&auth.password).map_err(failed)?;
    }
    if url.starts_with("https://") {
        // The system's trust store, found as for the probes (SSL_CERT_FILE,
        // SSL_CERT_DIR, the usual places), and read with the same limit:
        // OpenSSL reading `SSL_CERT_FILE=/dev/zero` itself would never end.
        let found = openssl_probe::probe();
        if let Some(file) = found.cert_file {
            let named = format!("the CA bundle {}", file.display());
            let pem =
                crate::files::read_named(&named, &file, crate::files::CA_LIMIT, "a CA bundle")?;
            easy.ssl_cainfo_blob(&pem).map_err(failed)?;
        } else if let Some(dir) = found.cert_dir {
            easy.capath(dir).map_err(failed)?;
        }
    }
    // On a multi handle of its own, so that a wait that hangs (a
    // connection, a handshake, an answer) is cut every `STOP_POLL` to ask
    // `stop`; libcurl's own progress callback comes once a second at most.
    let multi = curl::multi::Multi::new();
    // Its resolver threads are the multi handle's: they too are let go.
    curl_ffi::multi_quick_exit(&multi).map_err(|e| e.to_string())?;
    let stop = || (easy.get_ref().stop)();
    if let Err(e) = curl_ffi::perform_polling(&multi, &easy, &stop, STOP_POLL) {
        if e.is_aborted_by_callback() {
            return Err("a signal came while it was under way; abandoned".into());
        }
        return Err(failed(e));
    }
    let code = easy.response_code().map_err(failed)?;
    if (200..300).contains(&code) {
        return Ok(());
    }
    let answer = String::from_utf8_lossy(&easy.get_ref().kept);
    Err(format!(
        "the Pushgateway answered {code}: {}",
        answer.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_url_matches_the_rfc_vectors_in_the_url_alphabet() {
        // RFC 4648's test vectors, in the URL-safe alphabet.
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (raw, encoded) in cases {
            assert_eq!(base64_url(raw.as_bytes()), encoded, "{raw}");
        }
        // 0xfb 0xff: `+/` in the standard alphabet, `-_` here.
        assert_eq!(base64_url(&[0xfb, 0xff]), "-_8=");
    }

    #[test]
    fn a_value_that_is_not_plain_goes_as_base64() {
        let key = [
            ("target".to_string(), "https://a.test/x".to_string()),
            ("vantage".to_string(), "fra1".to_string()),
            ("empty".to_string(), String::new()),
            ("dots".to_string(), "..".to_string()),
        ];
        assert_eq!(
            grouping_url("http://pg:9091", &key),
            "http://pg:9091/metrics/job/tlsping/target@base64/aHR0cHM6Ly9hLnRlc3QveA==\
             /vantage/fra1/empty@base64/=/dots@base64/Li4="
        );
    }
}

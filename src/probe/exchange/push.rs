//! `--push`: one HTTP PUT of the run's figures to a Prometheus Pushgateway,
//! through libcurl as every probe, once stdout and the picture are written. PUT,
//! not POST: it replaces every series of the grouping key, so a series the
//! previous run had and this one lacks (a Server-Timing name, a `0.95`
//! quantile) does not linger beside the new figures.
//!
//! The push takes the probes' way and trusts what they trust: the proxy
//! the probes use or none (`PushRoute`, `probes_proxy`), and the trust
//! store they load, from the same sources by the same code (`TrustStore`),
//! `--cacert` and `-k` aside. Its credentials never reach a message: the
//! answer of a gateway they were sent to is never quoted (`PushError`).

use std::time::Duration;

use curl::easy::{Easy2, Handler, List, WriteError};

use super::curl_ffi;
use super::trust::TrustStore;
use super::types::ProbeError;

/// The environment variable that may hold the push's `USER:PASSWORD`: read
/// by `cli`, named in `render`'s warnings, so it lives below both.
pub const PUSH_AUTH_VAR: &str = "TLSPING_PUSH_AUTH";

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
/// when `stop` says so; installs the trust store in an https push's TLS
/// set-up, as the probes' handler does.
struct Answer {
    kept: Vec<u8>,
    /// More came than was kept.
    cut: bool,
    stop: Box<dyn Fn() -> bool>,
    trust: Option<TrustStore>,
}

impl Handler for Answer {
    fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        let room = ANSWER_LIMIT.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
        self.cut |= data.len() > room;
        Ok(data.len())
    }

    fn progress(&mut self, _: f64, _: f64, _: f64, _: f64) -> bool {
        !(self.stop)()
    }

    // The curl crate's callback signature: only libcurl calls it, with its own SSL_CTX.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn ssl_ctx(&mut self, ssl_ctx: *mut std::os::raw::c_void) -> Result<(), curl::Error> {
        if let Some(trust) = &self.trust {
            // SAFETY: libcurl calls this callback with the SSL_CTX it is
            // setting up for this transfer, before any handshake uses it.
            unsafe { curl_ffi::install_trust_store(ssl_ctx, trust.store()) };
        }
        Ok(())
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
    /// [`PUSH_AUTH_VAR`] or the URL.
    pub auth: Option<Credentials>,
    /// Straight to the Pushgateway, or through the probes' proxy.
    pub route: PushRoute,
}

/// The push's way, the probes' way: one rule for every combination of the
/// proxy variables.
#[derive(Clone, PartialEq, Eq)]
pub enum PushRoute {
    /// Straight to the Pushgateway, whatever the environment says: the
    /// probes dial the pinned address (the default), or they go without a
    /// proxy themselves.
    Direct,
    /// Through the proxy the probes use (`probes_proxy`), named by
    /// `variable`; libcurl still goes straight to a Pushgateway whose host
    /// `NO_PROXY` (or `no_proxy`) names.
    Proxy { variable: &'static str, url: String },
}

impl std::fmt::Debug for PushRoute {
    /// The variable, not the proxy's URL, which may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushRoute::Direct => f.write_str("Direct"),
            PushRoute::Proxy { variable, .. } => write!(f, "Proxy({variable})"),
        }
    }
}

/// The value of an environment variable, as libcurl reads one: a variable
/// that is set but empty counts as unset.
fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The proxy libcurl gives a transfer to `https`/`http` `host` when nothing
/// but the environment sets one (the probes of a run that does not pin its
/// address): none when `no_proxy` (else `NO_PROXY`) names the host; else
/// `https_proxy`, then `HTTPS_PROXY`, for https, or `http_proxy` alone for
/// http (libcurl never reads `HTTP_PROXY`, which a CGI request's `Proxy:`
/// header could set); then `all_proxy`, then `ALL_PROXY`. The variable and
/// its value. libcurl's own order and matching (its `proxy.c`), so the
/// push never takes a proxy the probes do not.
pub fn probes_proxy(https: bool, host: &str) -> Option<(&'static str, String)> {
    probes_proxy_in(&env_value, https, host)
}

fn probes_proxy_in(
    env: &dyn Fn(&str) -> Option<String>,
    https: bool,
    host: &str,
) -> Option<(&'static str, String)> {
    let no_proxy = env("no_proxy").or_else(|| env("NO_PROXY"));
    if no_proxy.is_some_and(|list| no_proxy_names(host, &list)) {
        return None;
    }
    let order: &[&'static str] = if https {
        &["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    } else {
        &["http_proxy", "all_proxy", "ALL_PROXY"]
    };
    order
        .iter()
        .find_map(|&name| env(name).map(|value| (name, value)))
}

/// Whether a `NO_PROXY` list names `host`, as libcurl matches it: `*`
/// alone names every host; otherwise the entries, separated by commas (with
/// blanks around them; a blank with no comma ends the list), name a host
/// name and its subdomains (`example.com` and `.example.com` both match
/// `www.example.com`, not `notexample.com`; case and a trailing dot aside),
/// or an address and a CIDR range for an address host.
pub fn no_proxy_names(host: &str, list: &str) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr};
    if host.is_empty() || list.is_empty() {
        return false;
    }
    if list == "*" {
        return true;
    }
    let v4 = host.parse::<Ipv4Addr>().ok();
    let v6 = host.parse::<Ipv6Addr>().ok();
    let name = if v4.is_none() && v6.is_none() {
        host.strip_suffix('.').unwrap_or(host)
    } else {
        host
    };
    let blank = |c: char| c == ' ' || c == '\t';
    let mut rest = list;
    loop {
        rest = rest.trim_start_matches(blank);
        let end = rest
            .find(|c: char| blank(c) || c == ',')
            .unwrap_or(rest.len());
        let (token, after) = rest.split_at(end);
        if !token.is_empty() {
            let matched = match (v4, v6) {
                (Some(addr), _) => ip_entry_names(token, |net, bits| {
                    let net: Ipv4Addr = net.parse().ok()?;
                    if bits > 32 {
                        return None;
                    }
                    let mask = match bits {
                        0 | 32 => u32::MAX,
                        b => u32::MAX << (32 - b),
                    };
                    Some((u32::from(addr) ^ u32::from(net)) & mask == 0)
                }),
                (None, Some(addr)) => ip_entry_names(token, |net, bits| {
                    let net: Ipv6Addr = net.parse().ok()?;
                    let bits = if bits == 0 { 128 } else { bits };
                    if bits > 128 {
                        return None;
                    }
                    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                    Some((u128::from(addr) ^ u128::from(net)) & mask == 0)
                }),
                (None, None) => host_entry_names(token, name),
            };
            if matched {
                return true;
            }
        }
        rest = after.trim_start_matches(blank);
        if !rest.starts_with(',') {
            return false;
        }
        rest = rest.trim_start_matches(',');
    }
}

/// An entry against a host name: `example.com` names it and its subdomains.
fn host_entry_names(token: &str, name: &str) -> bool {
    let token = token.strip_suffix('.').unwrap_or(token);
    let token = token.strip_prefix('.').unwrap_or(token);
    if token.len() == name.len() {
        token.eq_ignore_ascii_case(name)
    } else if token.len() < name.len() {
        let cut = name.len() - token.len();
        name.as_bytes()[cut - 1] == b'.'
            && name
                .get(cut..)
                .is_some_and(|tail| tail.eq_ignore_ascii_case(token))
    } else {
        false
    }
}

/// An entry against an address host: `ADDR` or `ADDR/BITS`; `matches`
/// compares the two (`None`: the entry is no address of that family).
fn ip_entry_names(token: &str, matches: impl Fn(&str, u32) -> Option<bool>) -> bool {
    // libcurl copies an entry into 128 bytes; a longer one names nothing.
    if token.len() >= 128 {
        return false;
    }
    let (net, bits) = match token.split_once('/') {
        Some((net, bits)) => match bits.parse::<u32>() {
            Ok(b) if b <= 128 && bits.bytes().all(|c| c.is_ascii_digit()) => (net, b),
            _ => return false,
        },
        None => (token, 0),
    };
    matches(net, bits).unwrap_or(false)
}

/// What of the Pushgateway's answer a message may quote, when the push
/// carried no credentials: its lines, blank ones dropped, joined by ` | `
/// (at most `ANSWER_LIMIT` bytes of it were kept; the last line of a cut
/// answer goes too). Text for `text::printable` to escape before a terminal.
fn quotable_answer(answer: &[u8], cut: bool) -> String {
    let text = String::from_utf8_lossy(answer);
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.trim_end_matches('\r').trim())
        .collect();
    if cut {
        lines.pop();
    }
    lines.retain(|l| !l.is_empty());
    lines.join(" | ")
}

/// Why a push did not arrive.
#[derive(Clone, Debug, PartialEq)]
pub enum PushError {
    /// It could not be set up (the trust store, an option libcurl refused).
    Setup(String),
    /// libcurl could not deliver it: classified and worded as a probe's
    /// failure is (the user information of a URL in the words hidden).
    Transfer(ProbeError),
    /// `stop` said so while it waited: a signal, or the deadline one set.
    Abandoned,
    /// The Pushgateway answered with a status outside 2xx.
    Answered {
        status: u16,
        /// The start of its answer (`quotable_answer`), when the push
        /// carried no credentials; `None` when it did: an answer may echo
        /// the request, and no filter finds every spelling of a secret
        /// (wrapped, split, escaped), so such an answer is never quoted.
        quoted: Option<String>,
    },
}

/// How a push that was abandoned (`PushError::Abandoned`) came to be: the
/// caller knows, since it set `stop`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushAbandoned {
    /// A signal came while it was under way.
    BySignal,
    /// It began after a signal (stdout given up) and had not arrived when
    /// the time for the run's ending ran out, `at` after the signal (a
    /// stopped run leaves `grace` after it).
    AtDeadline { at: Duration, grace: Duration },
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
            .field("route", &self.route)
            .finish()
    }
}

/// libcurl's words for an error outside a transfer (setting an option up),
/// the user information of any URL in them hidden.
fn setup_error(e: curl::Error) -> PushError {
    PushError::Setup(super::sample::error_words(&e))
}

/// PUTs `body` to the group `key` at `to`. `stop` is asked every
/// `STOP_POLL` while the push waits (and at libcurl's progress checks):
/// `true` abandons the push. `Err` says why it did not arrive.
pub fn push(
    to: &PushTarget,
    key: &[(String, String)],
    body: &str,
    stop: Box<dyn Fn() -> bool>,
) -> Result<(), PushError> {
    let easy = request(to, &grouping_url(&to.url, key), body, stop)?;
    // On a multi handle of its own, so that a wait that hangs (a
    // connection, a handshake, an answer) is cut every `STOP_POLL` to ask
    // `stop`; libcurl's own progress callback comes once a second at most.
    let multi = curl::multi::Multi::new();
    // Its resolver threads are the multi handle's: they too are let go.
    curl_ffi::multi_quick_exit(&multi).map_err(|e| PushError::Setup(e.to_string()))?;
    let stop = || (easy.get_ref().stop)();
    if let Err(e) = curl_ffi::perform_polling(&multi, &easy, &stop, STOP_POLL) {
        if e.is_aborted_by_callback() {
            return Err(PushError::Abandoned);
        }
        let status = easy.response_code().unwrap_or(0) as u16;
        let connected = easy.connect_time().is_ok_and(|t| !t.is_zero());
        return Err(PushError::Transfer(super::sample::classify(
            &e, &easy, status, connected,
        )));
    }
    let code = easy.response_code().map_err(setup_error)?;
    if (200..300).contains(&code) {
        return Ok(());
    }
    let answer = easy.get_ref();
    Err(PushError::Answered {
        status: u16::try_from(code).unwrap_or(u16::MAX),
        quoted: to
            .auth
            .is_none()
            .then(|| quotable_answer(&answer.kept, answer.cut)),
    })
}

/// The PUT of `body` to `url`, set up on a handle of its own: the probes'
/// trust and route, the credentials, the timeouts.
fn request(
    to: &PushTarget,
    url: &str,
    body: &str,
    stop: Box<dyn Fn() -> bool>,
) -> Result<Easy2<Answer>, PushError> {
    // The store the probes load when no --cacert is given: SSL_CERT_FILE,
    // else the SSL_CERT_DIR list, else the system's bundle, each read with
    // the same limit (OpenSSL reading `SSL_CERT_FILE=/dev/zero` itself
    // would never end).
    let trust = if url.starts_with("https://") {
        Some(TrustStore::load(None).map_err(PushError::Setup)?)
    } else {
        None
    };
    let mut easy = Easy2::new(Answer {
        kept: Vec::new(),
        cut: false,
        stop,
        trust,
    });
    let failed = setup_error;
    easy.url(url).map_err(failed)?;
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
    match &to.route {
        // As the probes: straight to the host, whatever the environment says.
        PushRoute::Direct => easy.proxy("").map_err(failed)?,
        // The probes' proxy, never one picked by the push's own scheme;
        // libcurl still reads NO_PROXY for the Pushgateway's host.
        PushRoute::Proxy { url, .. } => easy.proxy(url).map_err(failed)?,
    }
    if let Some(auth) = &to.auth {
        let mut basic = curl::easy::Auth::new();
        basic.basic(true);
        easy.http_auth(&basic).map_err(failed)?;
        easy.username(&auth.user).map_err(failed)?;
        easy.password(&auth.password).map_err(failed)?;
    }
    if easy.get_ref().trust.is_some() {
        // No CA file or directory of libcurl's own: the store above is
        // installed as the TLS set-up starts (`Answer::ssl_ctx`).
        curl_ffi::clear_ca_locations(&mut easy).map_err(failed)?;
    }
    Ok(easy)
}

#[cfg(test)]
#[path = "push_tests.rs"]
mod tests;

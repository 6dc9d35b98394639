//! The one place warnings are issued and worded: each goes to stderr as
//! `tlsping: warning: <text>` when it happens (through `text::printable`: a warning
//! can quote a server, a redirect's `Location` say) and is kept as it is for
//! `warnings[]` in the JSON document. `probe` and the command line hand over
//! their reasons as data (`Valve`, `Notice`, `SettingWarning`); every
//! sentence about a run's facts is made here.

use std::time::Duration;

use crate::probe::{
    Axis, Config, ErrorKind, HttpVersion, Method, Notice, PreflightFailed, ProbeError, Proto,
    RetryAfter, RunInfo, SettingWarning, Target, TlsFacts, Valve,
};

#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<String>,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    /// Says `text` on stderr now, as `tlsping: warning: <text>`, escaped,
    /// and keeps it as it is (`warnings[]` has no prefix). A stderr
    /// that is closed or full costs the warning, never the run: the error
    /// is ignored, as `Exit::report` does (`eprintln!` would panic, and the
    /// release build aborts on a panic).
    pub fn warn(&mut self, text: impl Into<String>) {
        use std::io::Write as _;
        let text = text.into();
        let line = format!("tlsping: warning: {}\n", crate::text::printable(&text));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
        self.list.push(text);
    }

    pub fn list(&self) -> &[String] {
        &self.list
    }
}

/// The warning for `Server-Timing` metric names the statistics did not
/// follow (`stats::ServerTimings::untracked`), if there were any.
pub fn untracked_metrics(names: &[String]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "Server-Timing: the server used more than {} metric names; the statistics follow the \
         first {} and leave out {}{}",
        crate::stats::MAX_TRACKED_METRICS,
        crate::stats::MAX_TRACKED_METRICS,
        names.join(", "),
        if names.len() >= crate::stats::MAX_TRACKED_METRICS {
            " and maybe more"
        } else {
            ""
        }
    ))
}

/// The warning for a run that asked for early data and never got to send
/// any, saying why when the samples tell: no session was resumed (the server
/// gave no ticket), or sessions were resumed but the tickets allow none.
pub fn early_data_unsent(t: &crate::stats::Tally) -> Option<String> {
    if t.early_data_asked() < 2 || t.early_data_sent() > 0 {
        return None;
    }
    Some(if t.early_data_resumed == 0 {
        "--early-data: no request went as early data: the server gave no session this client \
         could resume"
            .to_string()
    } else {
        format!(
            "--early-data: no request went as early data: {} resumed a session, but the \
             server's session tickets allow none",
            super::format::count(t.early_data_resumed, "cold probe", "cold probes")
        )
    })
}

/// The note for handshakes with a message the reader could not make sense
/// of (a server that sends what TLS does not allow, or a bug of ours): the
/// facts of that message are `null` in those probes' anatomy, and this
/// says why.
pub fn unreadable_handshakes(t: &crate::stats::Tally) -> Option<String> {
    (t.unreadable_handshakes > 0).then(|| {
        format!(
            "{} cold probe{} had a handshake message that could not be read: what it \
             would have told (sig_alg, cert_bytes, a HelloRetryRequest's group...) is null",
            t.unreadable_handshakes,
            if t.unreadable_handshakes == 1 {
                ""
            } else {
                "s"
            },
        )
    })
}

/// The warning for a run in which libcurl connected before its own lookup
/// ended, so that `dns` and `tcp` ran side by side.
pub fn dns_overlap(t: &crate::stats::Tally) -> Option<String> {
    (t.dns_overlaps > 0).then(|| {
        format!(
            "libcurl began connecting on its first DNS answer while a second was still due, on \
             {} cold probe{}: its lookup went on beside tcp (by up to {}ms, dns_overlap_ms); dns \
             ends and tcp starts where the socket opened",
            t.dns_overlaps,
            if t.dns_overlaps == 1 { "" } else { "s" },
            super::format::ms(t.longest_overlap)
        )
    })
}

/// What a notice from the rounds says to a person (`info` names the variants).
pub fn notice_text(notice: &Notice, info: &RunInfo) -> String {
    match *notice {
        Notice::VariantStopped { variant, failures } => {
            let label = info
                .compare
                .as_ref()
                .map_or_else(|| variant.to_string(), |c| c.label(variant).to_string());
            format!(
                "--compare: {label} failed {failures} probes in a row and is left out of the \
                 rounds that remain; the other variants go on"
            )
        }
        Notice::VariantBackedOff { variant, valve } => {
            let (axis, label) = info.compare.as_ref().map_or_else(
                || ("target", variant.to_string()),
                |c| (c.axis.as_str(), c.label(variant).to_string()),
            );
            format!(
                "--compare {axis}: {label}: {}",
                target_backed_off(&valve, false)
            )
        }
        Notice::BodyCapped {
            cap_bytes,
            h2: true,
        } => format!(
            "a response body is over the {} KiB cap: it is not read to the end; \
             on HTTP/2 only its stream is reset, and warm keeps its connection",
            cap_bytes / 1024
        ),
        Notice::BodyCapped {
            cap_bytes,
            h2: false,
        } => format!(
            "a response body is over the {} KiB cap: it is not read to the end, so \
             its connection cannot be reused and warm will open a new one every round",
            cap_bytes / 1024
        ),
    }
}

/// What the server answered that trips a valve (`server answered 503 with
/// Retry-After 30s`), and why that stops probing it, worded to follow the
/// word `stopping` or `left out`.
fn server_asked(v: &Valve) -> Option<(String, &'static str)> {
    // The header's value as read (a number, so nothing of the server's
    // text reaches the line), or that it could not be read.
    let retry_after = |asked: &RetryAfter| match asked {
        RetryAfter::Seconds(secs) => format!("Retry-After {secs}s"),
        RetryAfter::Unreadable => "a Retry-After that could not be read".into(),
    };
    match v {
        Valve::TooManyRequests(asked) => Some((
            match asked {
                Some(asked) => format!(
                    "server answered 429 Too Many Requests with {}",
                    retry_after(asked)
                ),
                None => "server answered 429 Too Many Requests".into(),
            },
            " to respect its rate limit",
        )),
        Valve::BackOff(asked) => {
            let asked = retry_after(asked);
            Some((
                format!("server answered 503 with {asked}"),
                ", it asked clients to back off",
            ))
        }
        Valve::ConsecutiveFailures(_)
        | Valve::EveryVariantFailing(_)
        | Valve::EveryVariantLeftOut => None,
    }
}

/// Why a safety valve stopped the run; also the `preflight_error` text of a
/// run the preflight's answer stopped before round 1.
pub fn valve(v: &Valve) -> String {
    if let Some((answer, why)) = server_asked(v) {
        return format!("{answer}: stopping{why}");
    }
    match v {
        Valve::ConsecutiveFailures(n) => format!("{n} probes failed in a row: stopping"),
        Valve::EveryVariantFailing(n) => {
            format!("every variant had {n} probes fail in a row: stopping")
        }
        Valve::EveryVariantLeftOut => {
            "every variant is left out of the rounds (see above): stopping".into()
        }
        Valve::TooManyRequests(_) | Valve::BackOff(_) => unreachable!("worded above"),
    }
}

/// Under `--compare target=`: why a target whose server asked it to back
/// off is left out of the rounds that remain (`preflight`: of the whole
/// run, its preflight got that answer). The other targets, services of
/// their own, go on.
fn target_backed_off(v: &Valve, preflight: bool) -> String {
    let (answer, why) = server_asked(v).unwrap_or_else(|| (valve(v), ""));
    if preflight {
        format!("{answer} to its preflight: it is left out{why}")
    } else {
        format!("{answer}: it is left out of the rounds that remain{why}")
    }
}

/// Why a `--compare target=` variant cannot run: its preflight's answer
/// tripped a valve (the warning's reason and its `unavailable` text).
pub fn target_preflight_backed_off(v: &Valve) -> String {
    target_backed_off(v, true)
}

/// The warning for a valve the preflight tripped (of `variant`, with
/// `--compare`): no round ran.
pub fn preflight_valve(v: &Valve, variant: Option<&str>) -> String {
    let of = variant.map_or_else(String::new, |label| format!(" of {label}"));
    format!("preflight{of}: {}; no rounds were run", valve(v))
}

/// A failed probe in a line: what went wrong, and libcurl's own words as
/// they came. They can quote the server (a certificate's name): like every
/// sentence here, the line is escaped once, where it reaches stderr
/// (`Warnings::warn`, or `Exit::report` for a run's last words).
pub fn probe_failure(e: &ProbeError, timeout: Duration) -> String {
    format!("{} ({})", super::format::reason(e.kind, timeout), e.text)
}

/// The error line of a run (of `cfg`) whose preflight failed, with what to
/// try next when what it learned tells.
pub fn preflight_failed(cfg: &Config, f: &PreflightFailed) -> String {
    format!(
        "preflight to {} failed: {}",
        cfg.target.url(),
        failure_and_next_step(cfg, f)
    )
}

/// A failed preflight in a line, and what to try next.
fn failure_and_next_step(cfg: &Config, f: &PreflightFailed) -> String {
    let failure = probe_failure(&f.error, cfg.settings.timeout);
    match next_step(cfg, f) {
        Some(step) => format!("{failure}; {step}"),
        None => failure,
    }
}

/// `target` over the other scheme, on the same port.
fn other_scheme(target: &Target) -> String {
    let mut other = target.clone();
    other.https = !other.https;
    other.url()
}

/// Whether OpenSSL's (or libcurl's) `text` says any of `words`, in any case.
fn says_any(text: &str, words: &[&str]) -> bool {
    let lower = text.to_ascii_lowercase();
    words.iter().any(|w| lower.contains(w))
}

/// OpenSSL's words for a first answer that is not TLS at all: the bytes
/// of a plain HTTP response read as a TLS record.
fn not_tls(text: &str) -> bool {
    says_any(
        text,
        &[
            "wrong version number",
            "packet length too long",
            "http request",
        ],
    )
}

/// OpenSSL's words for a handshake with no TLS version both sides take.
fn no_common_version(text: &str) -> bool {
    says_any(
        text,
        &[
            "alert protocol version",
            "unsupported protocol",
            "no protocols available",
        ],
    )
}

/// What to try after a TLS error (of a run of `cfg`) that OpenSSL's words
/// explain: no common version, or a server that wants a client certificate.
fn tls_next_step(cfg: &Config, text: &str) -> Option<String> {
    let own_cert = cfg.settings.client_cert.is_some();
    if no_common_version(text) {
        return Some(match cfg.settings.tls_max {
            Some(crate::probe::TlsMax::V1_2) => {
                "the server does not take TLS 1.2, the one version --tls-max 1.2 leaves: it may \
                 speak only TLS 1.3; drop --tls-max"
                    .into()
            }
            _ => "the server takes neither TLS 1.2 nor TLS 1.3, the versions offered: it may \
                  speak only an older one"
                .into(),
        });
    }
    if !own_cert && says_any(text, &["certificate required"]) {
        return Some(
            "the server asks for a client certificate: give one with --cert FILE and --key FILE"
                .into(),
        );
    }
    if own_cert
        && says_any(
            text,
            &["bad certificate", "unknown ca", "certificate unknown"],
        )
    {
        return Some("the server refused the client certificate given with --cert".into());
    }
    if !own_cert && says_any(text, &["alert handshake failure"]) {
        return Some(
            "the server refused the handshake: it may want a client certificate (--cert FILE \
             --key FILE), or a cipher or group this client did not offer"
                .into(),
        );
    }
    None
}

/// What to try after a preflight failure, from what the failure and the
/// preflight's progress say; `None` where they say nothing to try.
fn next_step(cfg: &Config, f: &PreflightFailed) -> Option<String> {
    let target = &cfg.target;
    match f.error.kind {
        ErrorKind::CertUnknownCa => Some(
            "if you trust this server, name its CA with --cacert FILE (or SSL_CERT_FILE), \
             or skip the check with -k"
                .into(),
        ),
        ErrorKind::CertName => {
            let names = match &f.cert_names {
                Some((names, count)) if !names.is_empty() => {
                    let more = count.saturating_sub(names.len());
                    let more = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    format!("the certificate is for {}{more}; ", names.join(", "))
                }
                _ => String::new(),
            };
            Some(format!(
                "{names}measure a name it is for (--connect-to keeps the address), or skip the \
                 check with -k"
            ))
        }
        ErrorKind::TlsError if target.https && not_tls(&f.error.text) => Some(format!(
            "the server did not answer in TLS: does this port speak plain HTTP? ({})",
            other_scheme(target)
        )),
        ErrorKind::TlsError if target.https => tls_next_step(cfg, &f.error.text),
        ErrorKind::ConnRefused => Some(NOTHING_LISTENS.into()),
        _ if !target.https && f.speaks_tls => Some(format!(
            "this port speaks TLS: measure {}",
            other_scheme(target)
        )),
        ErrorKind::Timeout if f.unanswered && f.method == Method::Head => Some(format!(
            "{}the HEAD request went out, and nothing came back: a server that does not \
             answer HEAD is measured with -X GET",
            match f.tls {
                Some(tls) if f.handshake.is_some() => {
                    format!("TCP and {} completed, ", tls.version_label())
                }
                _ => String::new(),
            }
        )),
        _ => None,
    }
}

/// The warning for an `http://` target that answered 400 on a port that
/// speaks TLS.
pub fn plain_http_to_tls_port(target: &Target, status: u16) -> String {
    format!(
        "{} answered {status}, and its port speaks TLS: a plain HTTP request went to an HTTPS \
         port; measure {}",
        target.url(),
        other_scheme(target)
    )
}

/// `--http-version` asked for one version and the server answered over another.
pub fn http_version_refused(asked: HttpVersion, got: Proto) -> String {
    let name = match asked {
        HttpVersion::V2 => "2",
        HttpVersion::V1_1 => "1.1",
        HttpVersion::Auto => "auto",
    };
    format!(
        "--http-version {name} was asked for, but the server answered over {}; \
         nothing was measured (drop the flag to measure what the server offers)",
        got.as_str()
    )
}

/// The warning for a first response that is a redirect.
pub fn redirect(status: u16, location: &str) -> String {
    format!(
        "the first response is a redirect ({status}) to {location}; redirects are not followed, \
         consider re-running against it"
    )
}

/// The warning for a server certificate close to (or past) its end.
pub fn certificate_expiry(days_left: i32, expired: bool) -> String {
    format!(
        "the server certificate {}",
        super::format::cert_expiry(days_left, expired)
    )
}

/// Why `--compare addr` without a list has nothing to compare.
pub fn one_address(host: &str, only: std::net::IpAddr) -> String {
    format!("--compare addr: {host} resolves to one address ({only}); nothing to compare")
}

/// Why the addresses of `--compare addr` could not be found.
pub fn address_lookup_failed(host: &str, e: &crate::probe::AddressLookupError) -> String {
    match e {
        crate::probe::AddressLookupError::Failed(e) => {
            format!("looking up {host} for --compare addr: {e}")
        }
        crate::probe::AddressLookupError::NoAddress => format!("{host} resolves to no address"),
        crate::probe::AddressLookupError::TimedOut(t) => format!(
            "looking up {host} for --compare addr: no answer within {}",
            crate::text::format_duration(*t)
        ),
        crate::probe::AddressLookupError::Interrupted => INTERRUPTED_BEFORE_ROUNDS.into(),
    }
}

/// A signal stopped the rounds: what it was, and how far they got (the
/// table's header said how many were asked). `None` for every other ending:
/// a safety valve has its own warning, a closed stdout is a reader that
/// had enough, and a failed output is told with the exit.
pub fn ending(e: &crate::render::Ending) -> Option<String> {
    use crate::render::StoppedBy;
    let by = match e.stopped_by? {
        StoppedBy::Interrupt => "interrupted (Ctrl+C)",
        StoppedBy::Terminate => "terminated (SIGTERM)",
        StoppedBy::HangUp => "hung up (SIGHUP)",
        _ => return None,
    };
    let ran = match (e.asked, e.completed) {
        (0, 1) => "1 round".to_string(),
        (0, n) => format!("{n} rounds"),
        (asked, n) => format!("{n} of {asked} rounds"),
    };
    let cut = e
        .cut
        .map(|r| format!("; round {r} was cut short"))
        .unwrap_or_default();
    Some(format!("{by} after {ran}{cut}"))
}

/// A signal came before round 1: the run ends with nothing measured.
pub const INTERRUPTED_BEFORE_ROUNDS: &str = "interrupted before round 1: nothing was measured";

/// Why a variant (of `cfg`) cannot run: its preflight failed.
pub fn variant_preflight_failed(cfg: &Config, f: &PreflightFailed) -> String {
    format!("its preflight failed: {}", failure_and_next_step(cfg, f))
}

/// Why a variant cannot run: the server answered over another HTTP version.
pub fn variant_answered_over(proto: Option<Proto>) -> String {
    format!(
        "the server answered over {}",
        proto.map_or("no HTTP", |p| p.as_str())
    )
}

/// Why a variant cannot run: the server settled on another TLS version.
pub fn variant_negotiated(tls: &TlsFacts) -> String {
    format!("the server negotiated {}", tls.version_label())
}

/// Why a variant that sends early data cannot run: the server's answer to
/// its preflight allows none (TLS 1.2, or session tickets without early
/// data); `None` where it may, or cannot tell (no ticket read).
pub fn variant_without_early_data(tls: &TlsFacts) -> Option<String> {
    if tls.version != "TLSv1.3" {
        return Some(format!(
            "early data needs TLS 1.3 and the server negotiated {}",
            tls.version_label()
        ));
    }
    (tls.ticket_early_data == Some(0))
        .then(|| "the server's session tickets allow no early data".to_string())
}

/// The warning for a variant left out of the whole run (`why` from above).
pub fn variant_cannot_run(axis: Axis, label: &str, why: &str) -> String {
    format!("--compare {}: {label} cannot run: {why}", axis.as_str())
}

/// The `preflight_error` text of a comparison none of whose variants can run.
pub const NO_VARIANT_CAN_RUN: &str = "no variant can run";

/// The error line of a comparison none of whose variants can run.
pub fn no_variant_can_run(axis: Axis) -> String {
    format!("--compare {}: {NO_VARIANT_CAN_RUN}", axis.as_str())
}

/// At most this many probes are named in a warning; the rest are counted.
const MAX_NAMED_PROBES: usize = 8;

/// The warning for probes whose stages leave much of the total unexplained
/// (`stats::large_residual`: their rounds and modes), naming them and the
/// flag that shows `other` (the table shows it under `-v` only).
pub fn large_residual(probes: &[(u32, crate::probe::Mode)]) -> Option<String> {
    let (first, rest) = probes.split_first()?;
    let name = |&(round, mode): &(u32, crate::probe::Mode)| format!("{round} ({})", mode.as_str());
    let mut named: Vec<String> = std::iter::once(first)
        .chain(rest)
        .take(MAX_NAMED_PROBES)
        .map(name)
        .collect();
    let more = probes.len().saturating_sub(MAX_NAMED_PROBES);
    if more > 0 {
        named.push(format!("{more} more"));
    }
    let list = match named.split_last() {
        Some((last, others)) if !others.is_empty() => format!("{} and {last}", others.join(", ")),
        _ => named.join(""),
    };
    Some(format!(
        "'other' is above 20% of total (and 1ms or more) in round{} {list}: time no stage \
         accounts for; -v shows it in every row",
        if probes.len() == 1 { "" } else { "s" }
    ))
}

/// How a push that was abandoned came to be (`run` knows: the signals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushAbandoned {
    /// A signal came while it was under way.
    BySignal,
    /// It began after a signal (stdout given up) and had not arrived when
    /// the time for the run's ending ran out, `at` after the signal (a
    /// stopped run leaves `grace` after it).
    AtDeadline { at: Duration, grace: Duration },
}

/// What to check when a connection was refused: libcurl's words before it
/// name the address and port it dialed.
const NOTHING_LISTENS: &str =
    "nothing listens at that address and port: is the server up, and is that its port?";

/// Why `--push` (to `to`) did not arrive, in a line, with what to try
/// next: a failed transfer is worded as a probe's failure is
/// (`probe_failure`), from the same classification.
pub fn push_failed(e: &crate::probe::PushError, abandoned: PushAbandoned) -> String {
    use crate::probe::PushError;
    match e {
        PushError::Setup(words) => words.clone(),
        PushError::Transfer(failure) => {
            let said = probe_failure(failure, crate::probe::PUSH_TIMEOUT);
            match push_next_step(failure) {
                Some(step) => format!("{said}; {step}"),
                None => said,
            }
        }
        PushError::Abandoned => match abandoned {
            PushAbandoned::BySignal => "a signal came while it was under way; abandoned".into(),
            PushAbandoned::AtDeadline { at, grace } => format!(
                "abandoned at the deadline the signal set: it began after the signal that \
                 stopped the run and had not arrived {} after it (a stopped run leaves within {})",
                crate::text::format_duration(at),
                crate::text::format_duration(grace)
            ),
        },
        PushError::Answered { status, quoted } => {
            let told = match quoted {
                None => format!(
                    "the Pushgateway answered {status} (its answer is not shown: the push \
                     carried credentials)"
                ),
                Some(q) if q.is_empty() => format!("the Pushgateway answered {status}"),
                Some(q) => format!("the Pushgateway answered {status}: {q}"),
            };
            match (status, quoted.is_none()) {
                (401 | 403, true) => format!("{told}; check the credentials it sent"),
                (401 | 403, false) => format!(
                    "{told}; it wants credentials: give USER:PASSWORD in --push-auth-file or {}",
                    crate::probe::PUSH_AUTH_VAR
                ),
                _ => told,
            }
        }
    }
}

/// What to try after a push that libcurl could not deliver.
fn push_next_step(failure: &ProbeError) -> Option<String> {
    match failure.kind {
        ErrorKind::CertUnknownCa
        | ErrorKind::CertName
        | ErrorKind::CertExpired
        | ErrorKind::CertInvalid => Some(
            "the push trusts what the probes trust without --cacert (SSL_CERT_FILE, \
             SSL_CERT_DIR, else the system's CAs); --cacert and -k apply to the probes only, so \
             name the Pushgateway's CA in SSL_CERT_FILE or SSL_CERT_DIR"
                .into(),
        ),
        ErrorKind::ConnRefused => Some(NOTHING_LISTENS.replace("the server", "the Pushgateway")),
        ErrorKind::TlsError if not_tls(&failure.text) => Some(
            "the Pushgateway did not answer in TLS: does its port speak plain HTTP (--push \
             http://...)?"
                .into(),
        ),
        ErrorKind::DnsFail => Some("check the host name --push gives".into()),
        _ => None,
    }
}

/// What the command line noticed about the settings, before the run starts.
pub fn setting(w: &SettingWarning) -> String {
    match *w {
        SettingWarning::IntervalRaised { asked, floor } => {
            let floor = crate::text::format_duration(floor);
            format!(
                "interval {} is below the {floor} floor; using {floor}",
                crate::text::format_duration(asked)
            )
        }
        SettingWarning::WarmupCoversEveryRound { warmup, count } => {
            if count == 1 {
                format!("--warmup {warmup} covers the only round: the statistics will be empty")
            } else {
                format!("--warmup {warmup} covers all {count} rounds: the statistics will be empty")
            }
        }
        SettingWarning::UnpinnedBothModes => {
            "--no-pin-ip with both modes: cold resolves every round while warm keeps its first \
             connection, so the two may measure different servers"
                .into()
        }
        SettingWarning::ProxyBypassed { variable } => format!(
            "{variable} is set but the pinned address is dialed directly, bypassing the proxy \
             (so is --push); use --no-pin-ip to measure through it"
        ),
        SettingWarning::PushPasswordInUrl => format!(
            "--push: a password in the URL can be read by every local user in the process \
             list; put USER:PASSWORD in --push-auth-file or {} instead",
            crate::probe::PUSH_AUTH_VAR
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_that_stopped_the_rounds_is_told_with_how_far_they_got() {
        use crate::render::{Ending, StoppedBy};
        let ending = |completed, asked, cut, stopped_by| Ending {
            completed,
            asked,
            cut,
            stopped_by,
        };
        let said = |e| super::ending(&e);
        assert_eq!(
            said(ending(7, 20, Some(8), Some(StoppedBy::Interrupt))).as_deref(),
            Some("interrupted (Ctrl+C) after 7 of 20 rounds; round 8 was cut short")
        );
        assert_eq!(
            said(ending(3, 0, None, Some(StoppedBy::Terminate))).as_deref(),
            Some("terminated (SIGTERM) after 3 rounds")
        );
        assert_eq!(
            said(ending(1, 0, None, Some(StoppedBy::HangUp))).as_deref(),
            Some("hung up (SIGHUP) after 1 round")
        );
        // Every other ending is told elsewhere, or is no news.
        for by in [
            None,
            Some(StoppedBy::StdoutClosed),
            Some(StoppedBy::OutputFailed),
            Some(StoppedBy::SafetyValve),
            Some(StoppedBy::Preflight),
        ] {
            assert_eq!(said(ending(2, 20, None, by)), None, "{by:?}");
        }
        assert_eq!(said(Ending::complete(20)), None);
    }

    #[test]
    fn an_overlap_of_dns_and_tcp_is_said_once_with_its_size() {
        assert_eq!(dns_overlap(&crate::stats::Tally::default()), None);
        let text = dns_overlap(&crate::stats::Tally {
            dns_overlaps: 3,
            longest_overlap: std::time::Duration::from_micros(40_800),
            ..Default::default()
        })
        .unwrap();
        assert!(text.contains("on 3 cold probes"), "{text}");
        assert!(text.contains("by up to 40.8ms"), "{text}");
    }

    #[test]
    fn an_unreadable_handshake_message_is_said_once_with_its_count() {
        assert_eq!(unreadable_handshakes(&crate::stats::Tally::default()), None);
        let two = crate::stats::Tally {
            unreadable_handshakes: 2,
            ..Default::default()
        };
        let text = unreadable_handshakes(&two).unwrap();
        assert!(
            text.starts_with("2 cold probes had a handshake message"),
            "{text}"
        );
    }

    #[test]
    fn early_data_never_sent_says_why() {
        // Outcomes: accepted, rejected, not sent.
        let t = |asked: u64, resumed, sent: u64| {
            let mut t = crate::stats::Tally {
                early_data_resumed: resumed,
                ..Default::default()
            };
            t.early_data[0] = [sent, 0, asked - sent];
            t
        };
        assert_eq!(early_data_unsent(&t(5, 4, 4)), None);
        assert_eq!(
            early_data_unsent(&t(1, 0, 0)),
            None,
            "round 1 alone proves nothing"
        );
        assert!(early_data_unsent(&t(5, 0, 0))
            .unwrap()
            .contains("no session this client could resume"));
        assert!(early_data_unsent(&t(5, 4, 0)).unwrap().contains(
            "4 cold probes resumed a session, but the server's session tickets allow none"
        ));
    }

    #[test]
    fn valves_say_what_the_server_asked_for() {
        assert_eq!(
            valve(&Valve::BackOff(RetryAfter::Seconds(30))),
            "server answered 503 with Retry-After 30s: stopping, it asked clients to back off"
        );
        assert!(valve(&Valve::BackOff(RetryAfter::Unreadable))
            .contains("a Retry-After that could not be read"));
        assert_eq!(
            valve(&Valve::ConsecutiveFailures(3)),
            "3 probes failed in a row: stopping"
        );
        assert_eq!(
            valve(&Valve::TooManyRequests(None)),
            "server answered 429 Too Many Requests: stopping to respect its rate limit"
        );
        assert_eq!(
            valve(&Valve::TooManyRequests(Some(RetryAfter::Seconds(120)))),
            "server answered 429 Too Many Requests with Retry-After 120s: stopping to respect \
             its rate limit"
        );
        assert_eq!(
            target_preflight_backed_off(&Valve::BackOff(RetryAfter::Seconds(7))),
            "server answered 503 with Retry-After 7s to its preflight: it is left out, it \
             asked clients to back off"
        );
        assert_eq!(
            preflight_valve(&Valve::TooManyRequests(None), Some("TLS1.2")),
            "preflight of TLS1.2: server answered 429 Too Many Requests: stopping to respect \
             its rate limit; no rounds were run"
        );
    }

    #[test]
    fn setting_warnings_name_the_values() {
        let raised = SettingWarning::IntervalRaised {
            asked: Duration::from_millis(50),
            floor: Duration::from_millis(200),
        };
        assert_eq!(
            setting(&raised),
            "interval 50ms is below the 200ms floor; using 200ms"
        );
        let proxy = SettingWarning::ProxyBypassed {
            variable: "HTTPS_PROXY",
        };
        assert!(setting(&proxy).starts_with("HTTPS_PROXY is set"));
    }

    #[test]
    fn untracked_metric_names_are_named_in_the_warning() {
        assert_eq!(untracked_metrics(&[]), None);
        let text = untracked_metrics(&["cdn".into(), "edge".into()]).unwrap();
        assert!(text.contains("more than 64 metric names"), "{text}");
        assert!(text.ends_with("leave out cdn, edge"), "{text}");
        let many: Vec<String> = (0..64).map(|i| format!("m{i}")).collect();
        assert!(untracked_metrics(&many)
            .unwrap()
            .ends_with("and maybe more"));
    }
}

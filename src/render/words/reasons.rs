//! Why a run ended before round 1, why a `--compare` variant could not
//! run, why a safety valve stopped the rounds, why a push did not arrive:
//! each said from its facts (`probe::EndReason`, `Valve`, `PushError`),
//! with what to try next where the facts tell. libcurl's and a server's
//! words are quoted as they came; like every sentence here, a line is
//! escaped once, where it reaches stderr (`Warnings::warn`, or
//! `Exit::report` for a run's last words), and kept as it is in a file.

use std::time::Duration;

use crate::probe::{
    AddressLookupError, Axis, EndReason, ErrorKind, HttpVersion, Method, PreflightFailed,
    ProbeError, Proto, PushAbandoned, PushError, RetryAfter, Target, TlsFacts, TlsMax, Valve,
};

/// Why the run ended before round 1 (`run.preflight_error` in JSON and
/// CSV), or why a variant could not run (its `error`): libcurl's own
/// words for a preflight that failed, ours for the rest.
pub fn reason(r: &EndReason) -> String {
    match r {
        EndReason::PreflightFailed(f) => f.error.text.clone(),
        EndReason::Interrupted => INTERRUPTED_BEFORE_ROUNDS.into(),
        EndReason::Valve(v) => valve(v),
        EndReason::TargetBackedOff(v) => target_backed_off(v, true),
        EndReason::HttpVersionRefused { asked, got } => http_version_refused(*asked, *got),
        EndReason::AnsweredOver(proto) => format!(
            "the server answered over {}",
            proto.map_or("no HTTP", |p| p.as_str())
        ),
        EndReason::Negotiated(tls) => negotiated(tls),
        EndReason::NoEarlyData(tls) => no_early_data(tls),
        EndReason::OneAddress { host, addr } => {
            format!(
                "--compare addr: {host} resolves to one address ({addr}); nothing to compare: \
                 name the addresses to measure (--compare addr=A,B)"
            )
        }
        EndReason::AddressLookupFailed { host, error } => address_lookup_failed(host, error),
        EndReason::NoVariantCanRun { first, .. } => match first {
            Some(first) => reason(first),
            None => NO_VARIANT_CAN_RUN.into(),
        },
        EndReason::CalibrationServer(e) => format!("--calibrate could not start its server: {e}"),
    }
}

/// The line on stderr of a run that ended before round 1 for `r`: a
/// failed preflight with its URL and what to try next, a comparison by
/// its axis; the rest as `reason` says them.
pub fn last_words(r: &EndReason) -> String {
    match r {
        EndReason::PreflightFailed(f) => preflight_failed(f),
        EndReason::NoVariantCanRun { axis, .. } => {
            format!("--compare {}: {NO_VARIANT_CAN_RUN}", axis.as_str())
        }
        _ => reason(r),
    }
}

/// Why a variant of `axis` cannot run, for its warning: a failed
/// preflight with what to try next (a target of its own as a single
/// run's, with its URL), the rest as `reason` says them.
pub fn cannot_run(axis: Axis, r: &EndReason) -> String {
    match r {
        EndReason::PreflightFailed(f) if axis.own_endpoints() => preflight_failed(f),
        EndReason::PreflightFailed(f) => {
            format!("its preflight failed: {}", failure_and_next_step(f))
        }
        _ => reason(r),
    }
}

/// A signal came before round 1: the run ends with nothing measured.
const INTERRUPTED_BEFORE_ROUNDS: &str = "interrupted before round 1: nothing was measured";

/// The `preflight_error` text of a comparison none of whose variants can
/// run (when none was tried).
const NO_VARIANT_CAN_RUN: &str = "no variant can run";

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

/// Why a safety valve stopped the run; also the `preflight_error` text of
/// a run the preflight's answer stopped before round 1.
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
pub fn target_backed_off(v: &Valve, preflight: bool) -> String {
    let (answer, why) = server_asked(v).unwrap_or_else(|| (valve(v), ""));
    if preflight {
        format!("{answer} to its preflight: it is left out{why}")
    } else {
        format!("{answer}: it is left out of the rounds that remain{why}")
    }
}

/// A failed probe in a line: what went wrong, and libcurl's own words as
/// they came. They can quote the server (a certificate's name).
pub fn probe_failure(e: &ProbeError, timeout: Duration) -> String {
    format!("{} ({})", super::format::reason(e.kind, timeout), e.text)
}

/// The error line of a run whose preflight failed, with what to try next
/// when what it learned tells.
fn preflight_failed(f: &PreflightFailed) -> String {
    format!(
        "preflight to {} failed: {}",
        f.target.url(),
        failure_and_next_step(f)
    )
}

/// A failed preflight in a line, and what to try next.
fn failure_and_next_step(f: &PreflightFailed) -> String {
    let failure = probe_failure(&f.error, f.timeout);
    match next_step(f) {
        Some(step) => format!("{failure}; {step}"),
        None => failure,
    }
}

/// `target` over the other scheme, on the same port.
pub fn other_scheme(target: &Target) -> String {
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

/// What to try after a TLS error (of the preflight `f`) that OpenSSL's
/// words explain: no common version, or a server that wants a client
/// certificate.
fn tls_next_step(f: &PreflightFailed, text: &str) -> Option<String> {
    let own_cert = f.client_cert;
    if no_common_version(text) {
        return Some(match f.tls_max {
            Some(TlsMax::V1_2) => {
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
fn next_step(f: &PreflightFailed) -> Option<String> {
    let target = &f.target;
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
        ErrorKind::TlsError if target.https => tls_next_step(f, &f.error.text),
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

/// `--http-version` asked for one version and the server answered over another.
fn http_version_refused(asked: HttpVersion, got: Proto) -> String {
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

/// Why a variant cannot run: the server settled on another TLS version.
fn negotiated(tls: &TlsFacts) -> String {
    format!("the server negotiated {}", tls.version_label())
}

/// Why a variant that sends early data cannot run: the server negotiated
/// TLS 1.2, or its session tickets allow no early data.
fn no_early_data(tls: &TlsFacts) -> String {
    if tls.version != "TLSv1.3" {
        return format!(
            "early data needs TLS 1.3 and the server negotiated {}",
            tls.version_label()
        );
    }
    "the server's session tickets allow no early data".into()
}

/// Why the addresses of `--compare addr` could not be found.
fn address_lookup_failed(host: &str, e: &AddressLookupError) -> String {
    match e {
        AddressLookupError::Failed(e) => format!("looking up {host} for --compare addr: {e}"),
        AddressLookupError::NoAddress => format!("{host} resolves to no address"),
        AddressLookupError::TimedOut(t) => format!(
            "looking up {host} for --compare addr: no answer within {}",
            crate::text::format_duration(*t)
        ),
        AddressLookupError::Interrupted => INTERRUPTED_BEFORE_ROUNDS.into(),
    }
}

/// What to check when a connection was refused: libcurl's words before it
/// name the address and port it dialed.
const NOTHING_LISTENS: &str =
    "nothing listens at that address and port: is the server up, and is that its port?";

/// Why `--push` did not arrive, in a line, with what to try next: a
/// failed transfer is worded as a probe's failure is (`probe_failure`),
/// from the same classification; one abandoned, as `abandoned` says it
/// came to be.
pub fn push_failed(e: &PushError, abandoned: PushAbandoned) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_says_how_to_name_the_ones_to_compare() {
        let why = EndReason::OneAddress {
            host: "a.test".into(),
            addr: "192.0.2.1".parse().unwrap(),
        };
        assert_eq!(
            reason(&why),
            "--compare addr: a.test resolves to one address (192.0.2.1); nothing to compare: \
             name the addresses to measure (--compare addr=A,B)"
        );
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
            reason(&EndReason::TargetBackedOff(Valve::BackOff(
                RetryAfter::Seconds(7)
            ))),
            "server answered 503 with Retry-After 7s to its preflight: it is left out, it \
             asked clients to back off"
        );
    }

    fn failed(kind: ErrorKind, text: &str, url: &str) -> Box<PreflightFailed> {
        let error = ProbeError {
            kind,
            text: text.into(),
        };
        let target = Target::parse(url).unwrap();
        Box::new(PreflightFailed::bare(
            error,
            target,
            Method::Head,
            Duration::from_secs(5),
        ))
    }

    #[test]
    fn a_failed_preflight_is_libcurls_words_in_json_and_a_line_with_a_next_step_on_stderr() {
        let refused = EndReason::PreflightFailed(failed(
            ErrorKind::ConnRefused,
            "Failed to connect to 127.0.0.1 port 9: Connection refused",
            "https://127.0.0.1:9/",
        ));
        assert_eq!(
            reason(&refused),
            "Failed to connect to 127.0.0.1 port 9: Connection refused"
        );
        assert_eq!(
            last_words(&refused),
            "preflight to https://127.0.0.1:9/ failed: conn refused (Failed to connect to \
             127.0.0.1 port 9: Connection refused); nothing listens at that address and port: \
             is the server up, and is that its port?"
        );
        assert!(cannot_run(Axis::Tls, &refused).starts_with("its preflight failed: conn refused"));
        assert!(cannot_run(Axis::Target, &refused).starts_with("preflight to https://127.0.0.1:9/"));
    }

    #[test]
    fn a_comparison_that_cannot_run_names_its_axis_on_stderr_and_its_first_reason_in_json() {
        let first = EndReason::AnsweredOver(Some(Proto::Http11));
        let none = EndReason::NoVariantCanRun {
            axis: Axis::Http,
            first: Some(Box::new(first)),
        };
        assert_eq!(reason(&none), "the server answered over http/1.1");
        assert_eq!(last_words(&none), "--compare http: no variant can run");
        let untried = EndReason::NoVariantCanRun {
            axis: Axis::Http,
            first: None,
        };
        assert_eq!(reason(&untried), "no variant can run");
        assert_eq!(
            reason(&EndReason::Interrupted),
            "interrupted before round 1: nothing was measured"
        );
        assert_eq!(
            last_words(&EndReason::Interrupted),
            reason(&EndReason::Interrupted)
        );
    }
}

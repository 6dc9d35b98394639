//! The one place warnings are issued and worded: each goes to stderr as
//! `tlsping: <text>` when it happens (through `text::printable`: a warning
//! can quote a server, a redirect's `Location` say) and is kept as it is for
//! `warnings[]` in the JSON document. `probe` and the command line hand over
//! their reasons as data (`Valve`, `Notice`, `SettingWarning`); every
//! sentence about a run's facts is made here.

use std::time::Duration;

use crate::probe::{
    Axis, HttpVersion, Notice, ProbeError, Proto, RetryAfter, RunInfo, SettingWarning, TlsFacts,
    Valve,
};

#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<String>,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    /// Says `text` on stderr now, escaped, and keeps it as it is. A stderr
    /// that is closed or full costs the warning, never the run: the error
    /// is ignored, as `Exit::report` does (`eprintln!` would panic, and the
    /// release build aborts on a panic).
    pub fn warn(&mut self, text: impl Into<String>) {
        use std::io::Write as _;
        let text = text.into();
        let line = format!("tlsping: {}\n", crate::text::printable(&text));
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
            "--early-data: no request went as early data: {} cold probes resumed a session, but \
             the server's session tickets allow none",
            t.early_data_resumed
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
    match v {
        Valve::TooManyRequests => Some((
            "server answered 429 Too Many Requests".into(),
            " to respect its rate limit",
        )),
        Valve::BackOff(asked) => {
            let asked = match asked {
                RetryAfter::Seconds(secs) => format!("Retry-After {secs}s"),
                RetryAfter::Unreadable => "a Retry-After that could not be read".into(),
            };
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
        Valve::TooManyRequests | Valve::BackOff(_) => unreachable!("worded above"),
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

/// The error line of a run whose preflight failed.
pub fn preflight_failed(url: &str, e: &ProbeError, timeout: Duration) -> String {
    format!("preflight to {url} failed: {}", probe_failure(e, timeout))
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

/// A signal came before round 1: the run ends with nothing measured.
pub const INTERRUPTED_BEFORE_ROUNDS: &str = "interrupted before round 1: nothing was measured";

/// Why a variant cannot run: its preflight failed.
pub fn variant_preflight_failed(e: &ProbeError, timeout: Duration) -> String {
    format!("its preflight failed: {}", probe_failure(e, timeout))
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

/// The warning for samples whose stages leave much of the total unexplained
/// (`stats::large_residual`).
pub const LARGE_RESIDUAL: &str =
    "'other' is above 20% of total (and 1ms or more) on some samples: time no stage accounts for";

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
            format!("--warmup {warmup} covers all {count} rounds: the statistics will be empty")
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
            crate::cli::PUSH_AUTH_VAR
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            valve(&Valve::TooManyRequests),
            "server answered 429 Too Many Requests: stopping to respect its rate limit"
        );
        assert_eq!(
            target_preflight_backed_off(&Valve::BackOff(RetryAfter::Seconds(7))),
            "server answered 503 with Retry-After 7s to its preflight: it is left out, it \
             asked clients to back off"
        );
        assert_eq!(
            preflight_valve(&Valve::TooManyRequests, Some("TLS1.2")),
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

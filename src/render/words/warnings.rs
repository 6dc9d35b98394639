//! Every warning in words (`text`), said where it is written: on stderr
//! as `tlsping: warning: <text>` when it happens (`Warnings::warn`,
//! through `text::printable`: a warning can quote a server, a redirect's
//! `Location` say), and as it is in `warnings[]` of the JSON document.
//! What a warning says comes as data (`stats::Warning`); whether to give
//! one is decided where it happens (the command line, the preflight, the
//! rounds, the statistics), never here.

use std::time::Duration;

use crate::probe::{Mode, Notice, SettingWarning, Valve};
use crate::stats::Warning;

use super::format;
use super::reasons;

/// The warnings of a run, in the order they came: each is said on stderr
/// as it comes and kept, as data, for the outputs that write them at the
/// end (`Finished::warnings`).
#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<Warning>,
    /// Lines kept back from stderr (`hold`) until `release`.
    held: Option<String>,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    /// Says `warning` on stderr now, as `tlsping: warning: <text>`,
    /// escaped, and keeps it. A stderr that is closed or full costs the
    /// warning, never the run: the error is ignored, as `Exit::report`
    /// does (`eprintln!` would panic, and the release build aborts on a
    /// panic).
    pub fn warn(&mut self, warning: Warning) {
        use std::io::Write as _;
        let line = format!(
            "tlsping: warning: {}\n",
            crate::text::printable(&text(&warning))
        );
        match &mut self.held {
            Some(held) => held.push_str(&line),
            None => {
                let _ = std::io::stderr().lock().write_all(line.as_bytes());
            }
        }
        self.list.push(warning);
    }

    /// From now on keeps the lines back from stderr until `release`: after
    /// a signal, a stderr nobody reads (`2>&1 | stuck`) must not block the
    /// files and the push the run still owes (a write to it is not
    /// interrupted by the signal). They are kept as they are said, in order.
    pub fn hold(&mut self) {
        self.held.get_or_insert_with(String::new);
    }

    /// Writes the lines kept back since `hold` (then nothing is held).
    pub fn release(&mut self) {
        use std::io::Write as _;
        if let Some(held) = self.held.take() {
            let _ = std::io::stderr().lock().write_all(held.as_bytes());
        }
    }

    pub fn list(&self) -> &[Warning] {
        &self.list
    }
}

/// What `w` says, as `warnings[]` keeps it (stderr adds `tlsping:
/// warning: ` and escapes it).
pub fn text(w: &Warning) -> String {
    // Under `--compare target=` each endpoint's sentences start with its label.
    let of = |label: &Option<String>, text: String| match label {
        Some(label) => format!("{label}: {text}"),
        None => text,
    };
    match w {
        Warning::Setting(s) => setting(s),
        Warning::Redirect {
            of: label,
            status,
            location,
        } => of(
            label,
            format!(
                "the first response is a redirect ({status}) to {location}; redirects are not \
                 followed, consider re-running against it"
            ),
        ),
        Warning::PlainHttpToTlsPort {
            of: label,
            target,
            status,
        } => of(
            label,
            format!(
                "{} answered {status}, and its port speaks TLS: a plain HTTP request went to an \
                 HTTPS port; measure {}",
                target.url(),
                reasons::other_scheme(target)
            ),
        ),
        Warning::CertificateExpiry {
            of: label,
            days_left,
            expired,
        } => of(
            label,
            format!(
                "the server certificate {}",
                format::cert_expiry(*days_left, *expired)
            ),
        ),
        Warning::PreflightValve { of: label, valve } => preflight_valve(valve, label.as_deref()),
        Warning::VariantCannotRun { axis, label, why } => format!(
            "--compare {}: {label} cannot run: {}",
            axis.as_str(),
            reasons::cannot_run(*axis, why)
        ),
        Warning::Rounds { notice, variant } => notice_text(notice, variant.as_ref()),
        Warning::Valve(v) => reasons::valve(v),
        Warning::Stopped(e) => stopped(e),
        Warning::LargeResidual(probes) => large_residual(probes),
        Warning::UntrackedMetrics(names) => untracked_metrics(names),
        Warning::EarlyDataUnsent { resumed } => early_data_unsent(*resumed),
        Warning::DnsOverlap { probes, longest } => dns_overlap(*probes, *longest),
        Warning::UnreadableHandshakes(n) => unreadable_handshakes(*n),
    }
}

/// `Server-Timing` metric names the statistics did not follow
/// (`stats::ServerTimings::untracked`).
fn untracked_metrics(names: &[String]) -> String {
    format!(
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
    )
}

/// A run that asked for early data and never got to send any, saying why:
/// no session was resumed (the server gave no ticket), or sessions were
/// resumed (`resumed` cold probes) but the tickets allow none.
fn early_data_unsent(resumed: u64) -> String {
    if resumed == 0 {
        "--early-data: no request went as early data: the server gave no session this client \
         could resume"
            .to_string()
    } else {
        format!(
            "--early-data: no request went as early data: {} resumed a session, but the \
             server's session tickets allow none",
            format::count(resumed, "cold probe", "cold probes")
        )
    }
}

/// Handshakes with a message the reader could not make sense of (a server
/// that sends what TLS does not allow, or a bug of ours): the facts of
/// that message are `null` in those probes' anatomy, and this says why.
fn unreadable_handshakes(n: u64) -> String {
    format!(
        "{n} cold probe{} had a handshake message that could not be read: what it would have \
         told (sig_alg, cert_bytes, a HelloRetryRequest's group...) is null",
        if n == 1 { "" } else { "s" },
    )
}

/// A run in which libcurl connected before its own lookup ended, so that
/// `dns` and `tcp` ran side by side.
fn dns_overlap(probes: u64, longest: Duration) -> String {
    format!(
        "libcurl began connecting on its first DNS answer while a second was still due, on \
         {probes} cold probe{}: its lookup went on beside tcp (by up to {}ms, dns_overlap_ms); dns \
         ends and tcp starts where the socket opened",
        if probes == 1 { "" } else { "s" },
        format::ms(longest)
    )
}

/// What a notice from the rounds says to a person; `variant` is the axis
/// and label of the `--compare` variant it is about.
fn notice_text(notice: &Notice, variant: Option<&(crate::probe::Axis, String)>) -> String {
    match *notice {
        Notice::VariantStopped {
            variant: index,
            failures,
        } => {
            let label = variant.map_or_else(|| index.to_string(), |(_, label)| label.clone());
            format!(
                "--compare: {label} failed {failures} probes in a row and is left out of the \
                 rounds that remain; the other variants go on"
            )
        }
        Notice::VariantBackedOff {
            variant: index,
            valve,
        } => {
            let (axis, label) = variant.map_or_else(
                || ("target", index.to_string()),
                |(axis, label)| (axis.as_str(), label.clone()),
            );
            format!(
                "--compare {axis}: {label}: {}",
                reasons::target_backed_off(&valve, false)
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

/// A valve the preflight tripped (of `variant`, with `--compare`): no
/// round ran.
fn preflight_valve(v: &Valve, variant: Option<&str>) -> String {
    let of = variant.map_or_else(String::new, |label| format!(" of {label}"));
    format!("preflight{of}: {}; no rounds were run", reasons::valve(v))
}

/// A signal stopped the rounds: what it was, and how far they got (the
/// table's header said how many were asked).
fn stopped(e: &crate::probe::Ending) -> String {
    use crate::probe::StoppedBy;
    let by = match e.stopped_by {
        Some(StoppedBy::Terminate) => "terminated (SIGTERM)",
        Some(StoppedBy::HangUp) => "hung up (SIGHUP)",
        _ => "interrupted (Ctrl+C)",
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
    format!("{by} after {ran}{cut}")
}

/// At most this many probes are named in a warning; the rest are counted.
const MAX_NAMED_PROBES: usize = 8;

/// Probes whose stages leave much of the total unexplained (their rounds
/// and modes), naming them and the flag that shows `other` (the table
/// shows it under `-v` only).
fn large_residual(probes: &[(u32, Mode)]) -> String {
    let name = |&(round, mode): &(u32, Mode)| format!("{round} ({})", mode.as_str());
    let mut named: Vec<String> = probes.iter().take(MAX_NAMED_PROBES).map(name).collect();
    let more = probes.len().saturating_sub(MAX_NAMED_PROBES);
    if more > 0 {
        named.push(format!("{more} more"));
    }
    let list = match named.split_last() {
        Some((last, others)) if !others.is_empty() => format!("{} and {last}", others.join(", ")),
        _ => named.join(""),
    };
    format!(
        "'other' is above 20% of total (and 1ms or more) in round{} {list}: time no stage \
         accounts for; -v shows it in every row",
        if probes.len() == 1 { "" } else { "s" }
    )
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
    use crate::probe::{Ending, RetryAfter, StoppedBy};

    #[test]
    fn a_signal_that_stopped_the_rounds_is_told_with_how_far_they_got() {
        let said = |completed, asked, cut, by| {
            text(&Warning::Stopped(Ending {
                completed,
                asked,
                cut,
                stopped_by: Some(by),
            }))
        };
        assert_eq!(
            said(7, 20, Some(8), StoppedBy::Interrupt),
            "interrupted (Ctrl+C) after 7 of 20 rounds; round 8 was cut short"
        );
        assert_eq!(
            said(3, 0, None, StoppedBy::Terminate),
            "terminated (SIGTERM) after 3 rounds"
        );
        assert_eq!(
            said(1, 0, None, StoppedBy::HangUp),
            "hung up (SIGHUP) after 1 round"
        );
    }

    #[test]
    fn an_overlap_of_dns_and_tcp_is_said_once_with_its_size() {
        let text = text(&Warning::DnsOverlap {
            probes: 3,
            longest: Duration::from_micros(40_800),
        });
        assert!(text.contains("on 3 cold probes"), "{text}");
        assert!(text.contains("by up to 40.8ms"), "{text}");
    }

    #[test]
    fn an_unreadable_handshake_message_is_said_once_with_its_count() {
        let text = text(&Warning::UnreadableHandshakes(2));
        assert!(
            text.starts_with("2 cold probes had a handshake message"),
            "{text}"
        );
    }

    #[test]
    fn early_data_never_sent_says_why() {
        assert!(text(&Warning::EarlyDataUnsent { resumed: 0 })
            .contains("no session this client could resume"));
        assert!(text(&Warning::EarlyDataUnsent { resumed: 4 }).contains(
            "4 cold probes resumed a session, but the server's session tickets allow none"
        ));
    }

    #[test]
    fn a_preflight_valve_names_its_variant() {
        let w = Warning::PreflightValve {
            of: Some("TLS1.2".into()),
            valve: Valve::TooManyRequests(None),
        };
        assert_eq!(
            text(&w),
            "preflight of TLS1.2: server answered 429 Too Many Requests: stopping to respect \
             its rate limit; no rounds were run"
        );
        let notice = Notice::VariantBackedOff {
            variant: 1,
            valve: Valve::BackOff(RetryAfter::Seconds(7)),
        };
        let named = Warning::Rounds {
            notice,
            variant: Some((crate::probe::Axis::Target, "b".into())),
        };
        assert_eq!(
            text(&named),
            "--compare target: b: server answered 503 with Retry-After 7s: it is left out of \
             the rounds that remain, it asked clients to back off"
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
        let text = text(&Warning::UntrackedMetrics(vec![
            "cdn".into(),
            "edge".into(),
        ]));
        assert!(text.contains("more than 64 metric names"), "{text}");
        assert!(text.ends_with("leave out cdn, edge"), "{text}");
        let many: Vec<String> = (0..64).map(|i| format!("m{i}")).collect();
        assert!(super::text(&Warning::UntrackedMetrics(many)).ends_with("and maybe more"));
    }

    #[test]
    fn many_probes_with_a_large_residual_are_counted_past_eight() {
        let probes: Vec<(u32, Mode)> = (1..=10).map(|r| (r, Mode::Cold)).collect();
        let said = text(&Warning::LargeResidual(probes));
        assert!(said.contains("rounds 1 (cold), 2 (cold)"), "{said}");
        assert!(said.contains("8 (cold) and 2 more:"), "{said}");
        let one = text(&Warning::LargeResidual(vec![(3, Mode::Warm)]));
        assert!(one.contains("in round 3 (warm): "), "{one}");
    }
}

//! The one place warnings are issued: each goes to stderr as `tlsping: <text>`
//! when it happens (through `text::printable`: a warning can quote a server,
//! a redirect's `Location` say) and is kept as it is for `warnings[]` in the
//! JSON document.

use crate::probe::{Notice, RunInfo};

#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<String>,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        let text = text.into();
        eprintln!("tlsping: {}", crate::text::printable(&text));
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

/// What the early-data probes of a run came to: how many cold probes asked
/// for it, how many resumed a session, and how many sent early data at all
/// (accepted or rejected).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EarlyDataTally {
    pub asked: usize,
    pub resumed: usize,
    pub sent: usize,
}

impl EarlyDataTally {
    /// Counts one sample (only cold probes made with `--early-data`, or the
    /// `on` variant of `--compare early-data`, say anything about it).
    pub fn add(&mut self, s: &crate::probe::Sample) {
        if s.mode != crate::probe::Mode::Cold || s.early_data.is_none() {
            return;
        }
        self.asked += 1;
        if s.tls.is_some_and(|t| t.resumed) {
            self.resumed += 1;
        }
        if s.early_data != Some(crate::probe::EarlyData::NotSent) {
            self.sent += 1;
        }
    }
}

/// The warning for a run that asked for early data and never got to send
/// any, saying why when the samples tell: no session was resumed (the server
/// gave no ticket), or sessions were resumed but the tickets allow none.
pub fn early_data_unsent(t: EarlyDataTally) -> Option<String> {
    if t.asked < 2 || t.sent > 0 {
        return None;
    }
    Some(if t.resumed == 0 {
        "--early-data: no request went as early data: the server gave no session this client \
         could resume"
            .to_string()
    } else {
        format!(
            "--early-data: no request went as early data: {} cold probes resumed a session, but \
             the server's session tickets allow none",
            t.resumed
        )
    })
}

/// Cold probes whose `dns` overlapped their `tcp` (`Sample::dns_overlap`):
/// how many, and the longest overlap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverlapTally {
    pub probes: usize,
    pub longest: std::time::Duration,
}

impl OverlapTally {
    pub fn add(&mut self, s: &crate::probe::Sample) {
        if let Some(d) = s.dns_overlap() {
            self.probes += 1;
            self.longest = self.longest.max(d);
        }
    }
}

/// The warning for a run in which libcurl connected before its own lookup
/// ended, so that `dns` and `tcp` ran side by side.
pub fn dns_overlap(t: OverlapTally) -> Option<String> {
    (t.probes > 0).then(|| {
        format!(
            "libcurl began connecting on its first DNS answer while a second was still due, on \
             {} cold probe{}: its lookup went on beside tcp (by up to {}ms, dns_overlap_ms); dns \
             ends and tcp starts where the socket opened",
            t.probes,
            if t.probes == 1 { "" } else { "s" },
            super::format::ms(t.longest)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlap_of_dns_and_tcp_is_said_once_with_its_size() {
        assert_eq!(dns_overlap(OverlapTally::default()), None);
        let text = dns_overlap(OverlapTally {
            probes: 3,
            longest: std::time::Duration::from_micros(40_800),
        })
        .unwrap();
        assert!(text.contains("on 3 cold probes"), "{text}");
        assert!(text.contains("by up to 40.8ms"), "{text}");
    }

    #[test]
    fn early_data_never_sent_says_why() {
        let t = |asked, resumed, sent| EarlyDataTally {
            asked,
            resumed,
            sent,
        };
        assert_eq!(early_data_unsent(t(5, 4, 4)), None);
        assert_eq!(
            early_data_unsent(t(1, 0, 0)),
            None,
            "round 1 alone proves nothing"
        );
        assert!(early_data_unsent(t(5, 0, 0))
            .unwrap()
            .contains("no session this client could resume"));
        assert!(early_data_unsent(t(5, 4, 0)).unwrap().contains(
            "4 cold probes resumed a session, but the server's session tickets allow none"
        ));
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

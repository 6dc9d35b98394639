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

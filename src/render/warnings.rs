//! The one place warnings are issued: each goes to stderr as `tlsping: <text>`
//! when it happens (control characters escaped: a warning can quote a server,
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

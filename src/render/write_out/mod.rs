//! `--write-out FORMAT`: one sample as text in curl's `-w` syntax and
//! vocabulary, so that scripts written for `curl -w` read tlsping's samples
//! unchanged.
//!
//! Every variable curl 8.22 answers for a transfer is answered here from
//! the probe's own transfer, with curl's spelling, units and JSON types;
//! `%{json}` is curl's object, with our `mode`, `round`, `variant` and
//! `warmup` added at its end (curl has none of these keys), and
//! `%{tlsping_json}` is our own sample object. Names match without regard
//! to case, as curl 7.88 matches them (later curl is strict; accepting both
//! breaks no script). Where curl warns about an unknown variable and goes
//! on, we refuse the format: a script must not read an empty field as a
//! measurement. Names curl knows that cannot apply to a probe (an output
//! file, FTP, other output streams) are refused with their own message.
//!
//! Floor 3 of `render`: reads the field table (`render::fields`) and the
//! output contract; its tests use `--json`'s sample object.

mod curl_json;
mod format;
mod values;
mod vars;

use std::io::{Read, Write};

use super::output::Output;
use crate::probe::{Capture, CompareInfo, HeaderCapture, RunInfo, Sample};

use format::Piece;
pub use format::{MAX_FORMAT_BYTES, MAX_HEADER_NAME};
use vars::Var;
pub use vars::Variable;

/// Every variable a format may name, curl's then ours, each with what it
/// means (the man page's WRITE-OUT VARIABLES).
pub fn variables() -> Vec<Variable> {
    vars::every_variable()
}

/// A parsed `--write-out` format, ready to render any number of samples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOut {
    pieces: Vec<Piece>,
}

/// The `--write-out` argument as given: a format, `@file` or `@-` (stdin),
/// each read within `MAX_FORMAT_BYTES`.
pub fn parse(arg: &str) -> Result<WriteOut, String> {
    parse_with_stdin(arg, &mut std::io::stdin().lock())
}

fn parse_with_stdin(arg: &str, stdin: &mut dyn Read) -> Result<WriteOut, String> {
    parse_format(&format::read_source(arg, stdin)?)
}

/// A format string itself (no `@file`).
pub fn parse_format(fmt: &str) -> Result<WriteOut, String> {
    Ok(WriteOut {
        pieces: format::parse_pieces(fmt)?,
    })
}

impl WriteOut {
    /// What the probes must read of each transfer for this format: libcurl's
    /// facts, the response headers it names, the certificates; nothing more.
    pub fn needs(&self) -> Capture {
        let mut capture = Capture::default();
        let mut names = Vec::new();
        let mut all_headers = false;
        for piece in &self.pieces {
            match piece {
                Piece::Text(_) => {}
                Piece::Header(name) => {
                    capture.facts = true;
                    if !names.iter().any(|n: &String| n.eq_ignore_ascii_case(name)) {
                        names.push(name.to_ascii_lowercase());
                    }
                }
                Piece::Var(var) => {
                    capture.facts |= var.needs_facts();
                    // curl's `%{json}` carries the certificates too.
                    capture.certs |= matches!(var, Var::Certs | Var::Json);
                    all_headers |= *var == Var::HeaderJson;
                }
            }
        }
        capture.headers = if all_headers {
            HeaderCapture::All
        } else if names.is_empty() {
            HeaderCapture::None
        } else {
            HeaderCapture::Named(names)
        };
        capture
    }

    /// One sample as the format asks; `compare` is the run's comparison,
    /// when it is one (`%{variant}` is empty otherwise).
    pub fn render(&self, s: &Sample, compare: Option<&CompareInfo>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Header(name) => {
                    let headers = s.transfer.as_deref().map_or(&[][..], |f| &f.headers[..]);
                    if let Some((_, v)) = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
                    {
                        out.push_str(v);
                    }
                }
                Piece::Var(Var::Json) => out.push_str(&curl_json::curl_object(s, compare)),
                Piece::Var(Var::HeaderJson) => {
                    let headers = s.transfer.as_deref().map_or(&[][..], |f| &f.headers[..]);
                    out.push_str(&curl_json::header_object(headers));
                }
                Piece::Var(Var::TlspingJson) => {
                    let json = super::json::SampleJson::new(s, compare);
                    // A derived Serialize of strings and numbers into a String cannot fail.
                    out.push_str(&serde_json::to_string(&json).unwrap_or_default());
                }
                Piece::Var(var) => {
                    curl_json::write_text(&mut out, &values::value(*var, s, compare));
                }
            }
        }
        out
    }
}

/// `--write-out` as an output: the format for every sample as it finishes.
pub struct WriteOutStream<W: Write> {
    out: W,
    format: WriteOut,
    /// `--compare`: names each sample's variant (`%{variant}`).
    compare: Option<CompareInfo>,
}

impl<W: Write> WriteOutStream<W> {
    pub fn new(out: W, format: WriteOut) -> WriteOutStream<W> {
        WriteOutStream {
            out,
            format,
            compare: None,
        }
    }
}

impl<W: Write> Output for WriteOutStream<W> {
    fn start(&mut self, info: &RunInfo) -> std::io::Result<()> {
        self.compare = info.compare.clone();
        Ok(())
    }

    fn sample(&mut self, s: &Sample) -> std::io::Result<()> {
        let text = self.format.render(s, self.compare.as_ref());
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_vars;

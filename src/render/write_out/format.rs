//! Reading a `--write-out` format: from the argument, a file or stdin, each
//! within `MAX_FORMAT_BYTES`, and parsed by curl's rules into pieces.

use std::io::Read;

use super::vars::{lookup, Known, Var};

/// The most bytes a format may have, wherever it comes from: far above any
/// real format, and a `@/dev/zero` or an endless stdin stops at once.
pub const MAX_FORMAT_BYTES: usize = 64 * 1024;

/// The longest header name `%header{}` takes (curl's limit too).
pub const MAX_HEADER_NAME: usize = 255;

/// A piece of a parsed format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Piece {
    Text(String),
    Var(Var),
    /// `%header{name}`: the first response header of that name.
    Header(String),
}

/// The `--write-out` argument (a format, `@file`, or `@-` for stdin) as text.
pub(super) fn read_source(arg: &str, stdin: &mut dyn Read) -> Result<String, String> {
    let Some(source) = arg.strip_prefix('@') else {
        if arg.len() > MAX_FORMAT_BYTES {
            return Err(too_long("the format"));
        }
        return Ok(arg.to_string());
    };
    let (name, bytes) = if source == "-" {
        let bytes =
            read_bounded(stdin).map_err(|e| format!("--write-out: cannot read stdin: {e}"))?;
        ("stdin", bytes)
    } else {
        // A regular file or a pipe (`@<(...)`), opened without waiting.
        let path = std::path::Path::new(source);
        let limit = MAX_FORMAT_BYTES as u64;
        let bytes = crate::files::read_capped_as(path, limit, crate::files::Kind::RegularOrPipe)
            .map_err(|e| match e {
                crate::files::ReadError::TooLarge => too_long(source),
                e => crate::files::read_error_text(
                    &format!("--write-out: cannot read {source}"),
                    limit,
                    "a format",
                    e,
                ),
            })?;
        (source, bytes)
    };
    if bytes.len() > MAX_FORMAT_BYTES {
        return Err(too_long(name));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| format!("--write-out: {name} is not UTF-8 text"))?;
    Ok(from_file(&text))
}

/// Up to one byte more than a format may have, so "too long" is seen
/// without reading the rest.
fn read_bounded(source: &mut dyn Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    source
        .take(MAX_FORMAT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn too_long(what: &str) -> String {
    format!(
        "--write-out: {what} is longer than {MAX_FORMAT_BYTES} bytes, the most a format may have"
    )
}

/// What curl keeps of a format read from a file: each line up to its first
/// CR, the lines joined without their newlines. A newline in the output
/// is written `\n` in the file, as on the command line.
fn from_file(text: &str) -> String {
    text.split('\n')
        .map(|line| line.split('\r').next().unwrap_or(""))
        .collect()
}

/// A format string itself, by curl's rules: `%{name}` is a variable,
/// `%header{name}` a response header, `%%` a literal `%`, `\n` `\r` `\t`
/// are escapes, and anything else, a lone `%` or `\` included, is printed
/// as written (so `\\` stays two backslashes, as in curl).
pub(super) fn parse_pieces(fmt: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = fmt;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        let mut piece = None;
        rest = match c {
            '%' => {
                if let Some(r) = after.strip_prefix('%') {
                    text.push('%');
                    r
                } else if let Some((name, r)) = braced(after, "") {
                    piece = Some(variable(name)?);
                    r
                } else if let Some((name, r)) = braced(after, "header") {
                    if name.len() > MAX_HEADER_NAME {
                        return Err(format!(
                            "--write-out: %header{{}} takes a name of at most \
                             {MAX_HEADER_NAME} bytes"
                        ));
                    }
                    piece = Some(Piece::Header(name.to_string()));
                    r
                } else if let Some(directive) = ["output", "time"]
                    .into_iter()
                    .find_map(|d| braced(after, d).map(|(arg, _)| (d, arg)))
                {
                    return Err(not_here_directive(directive));
                } else {
                    // A lone `%`, a brace never closed, or `%` before any
                    // other character: curl prints both characters as they are.
                    text.push('%');
                    match after.chars().next() {
                        Some(next) => {
                            text.push(next);
                            &after[next.len_utf8()..]
                        }
                        None => after,
                    }
                }
            }
            '\\' => match after.chars().next() {
                Some(next) => {
                    match next {
                        'n' => text.push('\n'),
                        'r' => text.push('\r'),
                        't' => text.push('\t'),
                        other => {
                            text.push('\\');
                            text.push(other);
                        }
                    }
                    &after[next.len_utf8()..]
                }
                None => {
                    text.push('\\');
                    after
                }
            },
            other => {
                text.push(other);
                after
            }
        };
        if let Some(piece) = piece {
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
            }
            pieces.push(piece);
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// `directive{arg}rest` (what follows a `%`): the argument and the rest.
fn braced<'a>(after: &'a str, directive: &str) -> Option<(&'a str, &'a str)> {
    after
        .strip_prefix(directive)?
        .strip_prefix('{')?
        .split_once('}')
}

fn variable(name: &str) -> Result<Piece, String> {
    match lookup(name) {
        Some(Known::Var(var)) => Ok(Piece::Var(var)),
        Some(Known::NotHere { why, .. }) => Err(format!(
            "--write-out: curl's %{{{name}}} is not supported here: {why}"
        )),
        None => Err(format!(
            "unknown --write-out variable: '{name}' (every variable is listed under \
             WRITE-OUT VARIABLES in 'man tlsping')"
        )),
    }
}

fn not_here_directive((directive, arg): (&str, &str)) -> String {
    let why = match directive {
        "output" => "tlsping writes the format to standard output only",
        _ => "the wall-clock time a probe started is `at` in %{tlsping_json}",
    };
    format!("--write-out: curl's %{directive}{{{arg}}} is not supported here: {why}")
}

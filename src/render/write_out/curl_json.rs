//! Values as text and as JSON, and the two objects curl writes itself:
//! `%{json}` (every variable, curl's keys and types) and `%{header_json}`.

use std::fmt::Write as _;

use crate::probe::{CompareInfo, Sample};

use super::values::{value, Value};
use super::vars::{curl_vocabulary, ours_in_json, Known, Var};

/// `12.345678`: whole seconds, a point and six digits, from integer
/// microseconds (no float, so no rounding), as curl prints every time.
fn seconds(out: &mut String, us: u64) {
    let _ = write!(out, "{}.{:06}", us / 1_000_000, us % 1_000_000);
}

/// A value as `%{name}` prints it.
pub(super) fn write_text(out: &mut String, v: &Value) {
    let _ = match v {
        Value::Seconds(us) => {
            seconds(out, *us);
            Ok(())
        }
        Value::Number(n) => write!(out, "{n}"),
        // curl: `%03ld`, so no response is `000`.
        Value::Code(n) => write!(out, "{n:03}"),
        Value::Text(t) => out.write_str(t),
        Value::Bool(b) => write!(out, "{b}"),
        Value::Null => Ok(()),
    };
}

/// A value as `%{json}` writes it.
fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Seconds(us) => seconds(out, *us),
        Value::Number(n) | Value::Code(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Text(t) => json_string(out, t),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Null => out.push_str("null"),
    }
}

/// A JSON string: serde_json escapes exactly what curl does (quote,
/// backslash, the named controls, `\u00XX` for the rest below 0x20).
fn json_string(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()));
}

fn key(out: &mut String, name: &str) {
    json_string(out, name);
    out.push(':');
}

/// curl's `%{json}`: every variable in curl's order with curl's types
/// (numbers for codes, sizes and ids, seconds as numbers, strings, `null`
/// where there is no answer), then `curl_version`, then ours: `mode`,
/// `round`, `variant` (null outside a comparison) and `warmup`.
pub(super) fn curl_object(s: &Sample, compare: Option<&CompareInfo>) -> String {
    let mut out = String::from("{");
    for &(name, known) in curl_vocabulary() {
        let v = match known {
            // curl lists neither inside the object.
            Known::Var(Var::Json | Var::HeaderJson) => continue,
            Known::Var(var) => value(var, s, compare),
            Known::NotHere { in_json: true, .. } => Value::Null,
            Known::NotHere { .. } => continue,
        };
        key(&mut out, name);
        write_json(&mut out, &v);
        out.push(',');
    }
    key(&mut out, "curl_version");
    json_string(&mut out, crate::probe::curl_version());
    for (name, var) in ours_in_json() {
        out.push(',');
        key(&mut out, name);
        write_json(&mut out, &value(var, s, compare));
    }
    out.push('}');
    out
}

/// curl's `%{header_json}`: each header name once, lower-cased, with every
/// value it had in order, one name per line.
pub(super) fn header_object(headers: &[(String, String)]) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for (i, (name, _)) in headers.iter().enumerate() {
        if headers[..i]
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            continue;
        }
        if !first {
            out.push_str(",\n");
        }
        first = false;
        key(&mut out, &name.to_ascii_lowercase());
        out.push('[');
        let values = headers[i..]
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name));
        for (j, (_, v)) in values.enumerate() {
            if j > 0 {
                out.push(',');
            }
            json_string(&mut out, v);
        }
        out.push(']');
    }
    out.push_str("\n}");
    out
}

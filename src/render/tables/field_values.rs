//! What a sample's field is (`Field`: its JSON key, unit, CSV column,
//! write-out variable, and how it is read), the value it reads
//! (`FieldValue`) and the small readers the table is made of, and how the
//! named round trips are written as a CSV cell and as JSON. The table
//! itself is `fields::FIELDS`.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use crate::probe::handshake_messages::{group_name, name_or_hex};
use crate::probe::{CompareInfo, HandshakeAnatomy, RunInfo, Sample, ServerTiming, TlsExtra};
use crate::text::micros;

/// How a field's figure is measured, which decides how each format writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A duration in milliseconds: JSON a number to the microsecond, CSV
    /// three decimals.
    Ms,
    /// A duration in whole microseconds: an integer in JSON and CSV; curl's
    /// seconds with six decimals in write-out.
    Us,
    /// A count or a code: an integer.
    Count,
    Flag,
    Text,
    /// A wall-clock instant: RFC 3339, UTC, milliseconds.
    DateTime,
    /// `Server-Timing` metrics: a JSON array, one CSV cell in the header's syntax.
    Metrics,
    /// A handshake's round trips beyond the first (`tls_extra`): a JSON
    /// array of objects, one CSV cell (`extras_cell`).
    Extras,
}

/// One field of one sample, before a format writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue<'a> {
    /// Not measured or not applicable: JSON `null`, an empty CSV cell.
    Null,
    Time(Duration),
    Int(i64),
    Bool(bool),
    Text(Cow<'a, str>),
    Wall(SystemTime),
    Metrics(&'a [ServerTiming]),
    Extras(&'a [TlsExtra]),
}

/// Where a field sits in a JSON sample object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonKey {
    Top(&'static str),
    /// Inside an object of its own (`curl`); the fields of one such object
    /// are next to each other in the table.
    Nested(&'static str, &'static str),
}

/// A CSV column: its name and its place in the default order (0 first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub at: u8,
    /// `--csv-time-first` moves it to just after `round`.
    pub time: bool,
}

/// A `--write-out` variable that is a sample field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutVar {
    /// One of curl's names: in `%{json}` among curl's keys, in curl's order.
    Curl(&'static str),
    /// Ours: in `%{json}` after `curl_version`, where curl has no such key.
    Ours(&'static str),
}

impl WriteOutVar {
    pub fn name(self) -> &'static str {
        match self {
            WriteOutVar::Curl(n) | WriteOutVar::Ours(n) => n,
        }
    }
}

/// When a field appears at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Always,
    /// A JSON sample leaves the key out when there is no value (a CSV
    /// column is always there).
    JsonWhenSet,
    /// `--compare` runs only: a JSON key and a last CSV column.
    Compare,
}

/// How a field is read from a sample (the comparison names the variant).
pub type Read = for<'a> fn(&'a Sample, Option<&'a CompareInfo>) -> FieldValue<'a>;

/// A field's value in the one CSV row of a run that ended before round 1.
pub type ReadPreflight = for<'a> fn(&'a RunInfo) -> FieldValue<'a>;

pub struct Field {
    pub json: JsonKey,
    pub unit: Unit,
    /// What the field means, in one line (the man page's OUTPUT FIELDS).
    pub about: &'static str,
    pub read: Read,
    pub csv: Option<Column>,
    pub write_out: Option<WriteOutVar>,
    pub shown: Shown,
    /// Empty in the preflight row unless given.
    pub preflight: Option<ReadPreflight>,
}

impl Field {
    pub(super) const fn new(json: JsonKey, unit: Unit, about: &'static str, read: Read) -> Field {
        Field {
            json,
            unit,
            about,
            read,
            csv: None,
            write_out: None,
            shown: Shown::Always,
            preflight: None,
        }
    }

    pub(super) const fn csv(mut self, name: &'static str, at: u8) -> Field {
        self.csv = Some(Column {
            name,
            at,
            time: false,
        });
        self
    }

    /// A time column (`t_ms`, `at`), which `--csv-time-first` moves.
    pub(super) const fn time_csv(mut self, name: &'static str, at: u8) -> Field {
        self.csv = Some(Column {
            name,
            at,
            time: true,
        });
        self
    }

    pub(super) const fn write_out(mut self, var: WriteOutVar) -> Field {
        self.write_out = Some(var);
        self
    }

    pub(super) const fn shown(mut self, shown: Shown) -> Field {
        self.shown = shown;
        self
    }

    pub(super) const fn preflight(mut self, read: ReadPreflight) -> Field {
        self.preflight = Some(read);
        self
    }

    pub fn value<'a>(&self, s: &'a Sample, compare: Option<&'a CompareInfo>) -> FieldValue<'a> {
        (self.read)(s, compare)
    }
}

pub(super) fn time(d: Option<Duration>) -> FieldValue<'static> {
    d.map_or(FieldValue::Null, FieldValue::Time)
}

pub(super) fn micros_field(v: u32) -> FieldValue<'static> {
    FieldValue::Time(micros(v))
}

pub(super) fn int(v: impl Into<i64>) -> FieldValue<'static> {
    FieldValue::Int(v.into())
}

pub(super) fn text(t: Option<&str>) -> FieldValue<'_> {
    t.map_or(FieldValue::Null, |t| FieldValue::Text(Cow::Borrowed(t)))
}

pub(super) fn owned(t: Option<String>) -> FieldValue<'static> {
    t.map_or(FieldValue::Null, |t| FieldValue::Text(Cow::Owned(t)))
}

pub(super) fn flag(b: Option<bool>) -> FieldValue<'static> {
    b.map_or(FieldValue::Null, FieldValue::Bool)
}

pub(super) fn count(n: Option<impl Into<i64>>) -> FieldValue<'static> {
    n.map_or(FieldValue::Null, int)
}

pub(super) fn anatomy(s: &Sample) -> Option<&HandshakeAnatomy> {
    s.anatomy.as_deref()
}

/// A key-exchange group's name (`0x` and hex for one without).
pub fn group_label(code: u16) -> Cow<'static, str> {
    name_or_hex(group_name(code), code)
}

/// The named round trips as one CSV cell (and write-out's `%{tls_extra}`):
/// each as its kind, details in parentheses, `|` between them:
/// `hello_retry(P-384;sent=X25519MLKEM768 X25519)|initial_window(21344)`.
pub fn extras_cell(extra: &[TlsExtra]) -> String {
    let mut cell = String::new();
    for (i, e) in extra.iter().enumerate() {
        if i > 0 {
            cell.push('|');
        }
        cell.push_str(e.kind());
        match e {
            TlsExtra::HelloRetry { group, sent } => {
                let group = group.map_or(Cow::Borrowed("?"), group_label);
                let sent: Vec<_> = sent.iter().map(|&g| group_label(g)).collect();
                cell.push_str(&format!("({group};sent={})", sent.join(" ")));
            }
            TlsExtra::InitialWindow { flight_bytes } => {
                cell.push_str(&format!("({flight_bytes})"));
            }
            TlsExtra::SplitFlight { first_bytes, .. } => {
                cell.push_str(&format!("({first_bytes})"));
            }
            TlsExtra::Loss { recovery } => {
                cell.push_str(&format!("({:.3})", crate::text::millis(*recovery)));
            }
            TlsExtra::Tls12 => {}
        }
    }
    cell
}

/// One named round trip as a JSON object: `kind`, then its details.
pub struct ExtraJson<'a>(pub &'a TlsExtra);

impl serde::Serialize for ExtraJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", self.0.kind())?;
        match self.0 {
            TlsExtra::HelloRetry { group, sent } => {
                map.serialize_entry("group", &group.map(group_label))?;
                let sent: Vec<_> = sent.iter().map(|&g| group_label(g)).collect();
                map.serialize_entry("sent", &sent)?;
            }
            TlsExtra::InitialWindow { flight_bytes } => {
                map.serialize_entry("flight_bytes", flight_bytes)?;
            }
            TlsExtra::SplitFlight { first_bytes, .. } => {
                map.serialize_entry("first_bytes", first_bytes)?;
            }
            TlsExtra::Loss { recovery } => {
                map.serialize_entry("recovery_ms", &super::json_numbers::json_ms(*recovery))?;
            }
            TlsExtra::Tls12 => {}
        }
        map.end()
    }
}

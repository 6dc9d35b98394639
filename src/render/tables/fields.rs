//! The one table of a sample's fields. `--json` (and a `--jsonl` sample
//! line), `--csv` (both column orders and the row of a run that ended at its
//! preflight) and the write-out variables that are sample fields are all
//! written from it, and tests hold the JSON Schemas and docs/output.md's CSV
//! header to it. A new field is one row here (and whatever reads it into the
//! `Sample`); the formats pick it up.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use crate::probe::handshake_messages::{group_name, name_or_hex, sig_scheme_name};
use crate::probe::{
    tls_version_label, CompareInfo, HandshakeAnatomy, RunInfo, Sample, ServerTiming, TlsExtra,
};
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
    const fn new(json: JsonKey, unit: Unit, about: &'static str, read: Read) -> Field {
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

    const fn csv(mut self, name: &'static str, at: u8) -> Field {
        self.csv = Some(Column {
            name,
            at,
            time: false,
        });
        self
    }

    /// A time column (`t_ms`, `at`), which `--csv-time-first` moves.
    const fn time_csv(mut self, name: &'static str, at: u8) -> Field {
        self.csv = Some(Column {
            name,
            at,
            time: true,
        });
        self
    }

    const fn write_out(mut self, var: WriteOutVar) -> Field {
        self.write_out = Some(var);
        self
    }

    const fn shown(mut self, shown: Shown) -> Field {
        self.shown = shown;
        self
    }

    const fn preflight(mut self, read: ReadPreflight) -> Field {
        self.preflight = Some(read);
        self
    }

    pub fn value<'a>(&self, s: &'a Sample, compare: Option<&'a CompareInfo>) -> FieldValue<'a> {
        (self.read)(s, compare)
    }
}

fn time(d: Option<Duration>) -> FieldValue<'static> {
    d.map_or(FieldValue::Null, FieldValue::Time)
}

fn micros_field(v: u32) -> FieldValue<'static> {
    FieldValue::Time(micros(v))
}

fn int(v: impl Into<i64>) -> FieldValue<'static> {
    FieldValue::Int(v.into())
}

fn text(t: Option<&str>) -> FieldValue<'_> {
    t.map_or(FieldValue::Null, |t| FieldValue::Text(Cow::Borrowed(t)))
}

fn owned(t: Option<String>) -> FieldValue<'static> {
    t.map_or(FieldValue::Null, |t| FieldValue::Text(Cow::Owned(t)))
}

fn flag(b: Option<bool>) -> FieldValue<'static> {
    b.map_or(FieldValue::Null, FieldValue::Bool)
}

fn count(n: Option<impl Into<i64>>) -> FieldValue<'static> {
    n.map_or(FieldValue::Null, int)
}

fn anatomy(s: &Sample) -> Option<&HandshakeAnatomy> {
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

use JsonKey::{Nested, Top};
use Unit::{Count, DateTime, Extras, Flag, Metrics, Ms, Text, Us};
use WriteOutVar::{Curl, Ours};

/// Every sample field, in the order of a JSON sample object. CSV places:
/// the Go tool's 24 columns first (0–23, up to `error` in the header
/// docs/output.md prints), then ours in the order they were added; `variant`
/// is always last. Never rename or reorder what is published; a new field
/// gets the next CSV place (and `variant` moves one on).
pub static FIELDS: [Field; 58] = [
    Field::new(
        Top("round"),
        Count,
        "the round's number, from 1 (0 in the row of a run that ended at its preflight)",
        |s, _| int(s.round),
    )
    .csv("round", 0)
    .write_out(Ours("round"))
    .preflight(|_| FieldValue::Int(0)),
    Field::new(
        Top("t_ms"),
        Ms,
        "when the probe started, in ms from the start of the rounds (monotonic clock)",
        |s, _| time(s.t),
    )
    .time_csv("t_ms", 39),
    Field::new(
        Top("at"),
        DateTime,
        "when the probe started on the wall clock: RFC 3339, UTC, milliseconds",
        |s, _| s.at.map_or(FieldValue::Null, FieldValue::Wall),
    )
    .time_csv("at", 40),
    Field::new(
        Top("mode"),
        Text,
        "cold (a new connection) or warm (a kept one); preflight: the run ended before round 1",
        |s, _| text(Some(s.mode.as_str())),
    )
    .csv("mode", 1)
    .write_out(Ours("mode"))
    .preflight(|_| text(Some("preflight"))),
    Field::new(Top("dns_ms"), Ms, "cold: the name lookup", |s, _| {
        time(s.dns())
    })
    .csv("dns_ms", 3)
    .preflight(|info| time(info.dns_first)),
    Field::new(Top("tcp_ms"), Ms, "cold: the TCP connect", |s, _| {
        time(s.tcp())
    })
    .csv("tcp_ms", 4)
    .preflight(|info| time(info.preflight_tcp)),
    Field::new(Top("tls_ms"), Ms, "cold: the TLS handshake", |s, _| {
        time(s.tls())
    })
    .csv("tls_ms", 5)
    .preflight(|info| time(info.preflight_tls)),
    Field::new(
        Top("wait_ms"),
        Ms,
        "warm: until the request could be written on the kept connection",
        |s, _| time(s.wait()),
    )
    .csv("wait_ms", 6),
    Field::new(
        Top("srv_ms"),
        Ms,
        "from the request fully sent to the first byte of the response",
        |s, _| time(s.srv()),
    )
    .csv("srv_ms", 7),
    Field::new(
        Top("total_ms"),
        Ms,
        "the whole probe on tlsping's own clock, to the end of the body",
        |s, _| time(s.total()),
    )
    .csv("total_ms", 8),
    Field::new(
        Top("other_ms"),
        Ms,
        "what the stages leave of total_ms: writing the request, reading the body, our own work",
        |s, _| time(s.other()),
    )
    .csv("other_ms", 9),
    Field::new(
        Top("reused"),
        Flag,
        "the probe ran on a connection that already existed",
        |s, _| flag(Some(s.reused())),
    )
    .csv("reused", 10),
    Field::new(
        Top("new_conn"),
        Flag,
        "a warm probe had to open a connection (the server had not kept the old one); \
         always false for a cold probe, whose connection is new by design",
        |s, _| flag(Some(s.new_conn())),
    )
    .csv("new_conn", 11),
    Field::new(
        Top("retries"),
        Count,
        "times libcurl sent the request again on a new connection after the kept one died",
        |s, _| int(s.retries),
    )
    .csv("retries", 12),
    Field::new(
        Top("status"),
        Count,
        "the HTTP status code; 0 when no response came",
        |s, _| int(s.status),
    )
    .csv("status", 13)
    .preflight(|info| int(info.preflight_status)),
    Field::new(
        Top("proto"),
        Text,
        "the HTTP version of the response: http/1.0, http/1.1 or h2",
        |s, _| text(s.proto.map(|p| p.as_str())),
    )
    .csv("proto", 14)
    .preflight(|info| text(info.proto.map(|p| p.as_str()))),
    Field::new(
        Top("tls_version"),
        Text,
        "TLS1.2 or TLS1.3, on a probe that made a handshake",
        |s, _| owned(s.tls.map(|f| tls_version_label(f.version))),
    )
    .csv("tls_version", 15)
    .preflight(|info| owned(info.tls.map(|f| tls_version_label(f.version)))),
    Field::new(
        Top("alpn"),
        Text,
        "the protocol the handshake agreed on by ALPN",
        |s, _| text(s.tls.and_then(|f| f.alpn).map(|p| p.as_str())),
    )
    .csv("alpn", 16)
    .preflight(|info| text(info.tls.and_then(|f| f.alpn).map(|p| p.as_str()))),
    Field::new(
        Top("tls_resumed"),
        Flag,
        "the handshake resumed an earlier session instead of a full exchange",
        |s, _| flag(s.tls.map(|f| f.resumed)),
    )
    .csv("tls_resumed", 17)
    .preflight(|info| flag(info.tls.map(|f| f.resumed))),
    Field::new(
        Top("cert_chain_len"),
        Count,
        "certificates the server sent, its own included (0 on a resumed handshake)",
        |s, _| count(s.tls.and_then(|f| f.chain_len)),
    )
    .csv("cert_chain_len", 18)
    .preflight(|info| count(info.tls.and_then(|f| f.chain_len)))
    .shown(Shown::JsonWhenSet),
    Field::new(
        Top("tls_cipher"),
        Text,
        "the cipher suite, as OpenSSL names it",
        |s, _| text(s.tls.map(|f| f.cipher)),
    ),
    Field::new(
        Top("tls_group"),
        Text,
        "the key-exchange group, e.g. X25519MLKEM768",
        |s, _| text(s.tls.and_then(|f| f.group)),
    ),
    Field::new(
        Top("cert_days_left"),
        Count,
        "whole days until the server's certificate expires",
        |s, _| count(s.tls.and_then(|f| f.cert_days_left)),
    ),
    Field::new(
        Top("bytes"),
        Count,
        "body bytes read (at most 64 KiB)",
        |s, _| int(s.bytes),
    )
    .csv("bytes", 19),
    Field::new(
        Top("addr"),
        Text,
        "the address the probe connected to",
        |s, _| owned(s.addr.map(|a| a.to_string())),
    )
    .csv("addr", 20)
    .preflight(|info| owned(info.addr.map(|a| a.to_string()))),
    Field::new(
        Top("warmup"),
        Flag,
        "the probe is in a leading round left out of the statistics (--warmup)",
        |s, _| flag(Some(s.warmup)),
    )
    .csv("warmup", 2)
    .write_out(Ours("warmup")),
    Field::new(
        Top("body_overflow"),
        Flag,
        "the body was longer than the 64 KiB tlsping reads, and reading stopped there",
        |s, _| flag(Some(s.body_overflow)),
    )
    .csv("body_overflow", 21),
    Field::new(
        Top("error_kind"),
        Text,
        "why the probe got no response, one of FAILURE KINDS; empty when it got one",
        |s, _| text(s.error.as_ref().map(|e| e.kind.slug())),
    )
    .csv("error_kind", 22)
    .preflight(|info| text(info.preflight_error.as_ref().map(|e| e.kind.slug()))),
    Field::new(
        Top("error"),
        Text,
        "the failure in libcurl's (or tlsping's) own words",
        |s, _| text(s.error.as_ref().map(|e| e.text.as_str())),
    )
    .csv("error", 23)
    .preflight(|info| text(info.preflight_error.as_ref().map(|e| e.text.as_str()))),
    // libcurl's raw cumulative timers (CURLINFO_*_TIME_T), as libcurl gives them.
    Field::new(
        Nested("curl", "namelookup_us"),
        Us,
        "libcurl's timer: from the start to the name resolved",
        |s, _| micros_field(s.timers.namelookup_us),
    )
    .csv("curl_namelookup_us", 24)
    .write_out(Curl("time_namelookup")),
    Field::new(
        Nested("curl", "connect_us"),
        Us,
        "libcurl's timer: from the start to TCP connected",
        |s, _| micros_field(s.timers.connect_us),
    )
    .csv("curl_connect_us", 25)
    .write_out(Curl("time_connect")),
    Field::new(
        Nested("curl", "appconnect_us"),
        Us,
        "libcurl's timer: from the start to the TLS handshake done",
        |s, _| micros_field(s.timers.appconnect_us),
    )
    .csv("curl_appconnect_us", 26)
    .write_out(Curl("time_appconnect")),
    Field::new(
        Nested("curl", "pretransfer_us"),
        Us,
        "libcurl's timer: from the start to about to send the request",
        |s, _| micros_field(s.timers.pretransfer_us),
    )
    .csv("curl_pretransfer_us", 27)
    .write_out(Curl("time_pretransfer")),
    Field::new(
        Nested("curl", "posttransfer_us"),
        Us,
        "libcurl's timer: from the start to the request sent",
        |s, _| micros_field(s.timers.posttransfer_us),
    )
    .csv("curl_posttransfer_us", 28)
    .write_out(Curl("time_posttransfer")),
    Field::new(
        Nested("curl", "starttransfer_us"),
        Us,
        "libcurl's timer: from the start to the first response byte",
        |s, _| micros_field(s.timers.starttransfer_us),
    )
    .csv("curl_starttransfer_us", 29)
    .write_out(Curl("time_starttransfer")),
    Field::new(
        Nested("curl", "total_us"),
        Us,
        "libcurl's timer: the whole transfer",
        |s, _| micros_field(s.timers.total_us),
    )
    .csv("curl_total_us", 30)
    .write_out(Curl("time_total")),
    Field::new(
        Nested("curl", "num_connects"),
        Count,
        "new connections libcurl opened for the transfer",
        |s, _| int(s.timers.num_connects),
    )
    .csv("curl_num_connects", 31)
    .write_out(Curl("num_connects")),
    // Where the time went: the client's own work inside `tls`, the kernel's
    // view of the connection, the server's own account.
    Field::new(
        Top("tls_setup_ms"),
        Ms,
        "cold: the client's own work inside tls_ms, before its ClientHello left",
        |s, _| time(s.tls_setup()),
    )
    .csv("tls_setup_ms", 32),
    Field::new(
        Top("tls_finish_ms"),
        Ms,
        "cold: the client's own work inside tls_ms on the server's last flight",
        |s, _| time(s.tls_finish()),
    )
    .csv("tls_finish_ms", 33),
    Field::new(
        Top("tcp_rtt_ms"),
        Ms,
        "the kernel's smoothed round-trip time of the connection (TCP_INFO)",
        |s, _| time(s.tcp_info.map(|k| micros(k.rtt_us))),
    )
    .csv("tcp_rtt_ms", 34),
    Field::new(
        Top("tcp_min_rtt_ms"),
        Ms,
        "the lowest round-trip time the kernel saw on the connection",
        |s, _| time(s.tcp_info.and_then(|k| k.min_rtt_us).map(micros)),
    )
    .csv("tcp_min_rtt_ms", 35),
    Field::new(
        Top("retrans"),
        Count,
        "segments the kernel retransmitted during the probe",
        |s, _| count(s.tcp_info.map(|k| k.retrans)),
    )
    .csv("retrans", 36),
    Field::new(
        Top("server_timing"),
        Metrics,
        "the response's Server-Timing metrics, as the server sent them",
        |s, _| FieldValue::Metrics(&s.server_timing),
    )
    .csv("server_timing", 37),
    Field::new(
        Top("early_data"),
        Text,
        "--early-data: accepted, rejected or not_sent",
        |s, _| text(s.early_data.map(|e| e.as_str())),
    )
    .csv("early_data", 38),
    Field::new(
        Top("dns_overlap_ms"),
        Ms,
        "--no-pin-ip: how long libcurl's lookup went on after the socket opened (in tcp_ms)",
        |s, _| time(s.dns_overlap()),
    )
    .csv("dns_overlap_ms", 41),
    Field::new(
        Top("ocsp_stapled"),
        Flag,
        "full handshakes: whether the server stapled an OCSP response",
        |s, _| flag(s.tls.and_then(|f| f.ocsp).map(|o| o.stapled())),
    )
    .csv("ocsp_stapled", 42),
    Field::new(
        Top("ocsp_status"),
        Text,
        "full handshakes: what the stapled OCSP response says of the certificate",
        |s, _| text(s.tls.and_then(|f| f.ocsp).and_then(|o| o.status())),
    )
    .csv("ocsp_status", 43),
    // Why the handshake cost what it did (probes that made one).
    Field::new(
        Top("tls_round_trips"),
        Count,
        "how many times the client waited on the server inside the handshake",
        |s, _| count(anatomy(s).and_then(|a| a.round_trips)),
    )
    .csv("tls_round_trips", 44)
    .write_out(Ours("tls_round_trips")),
    Field::new(
        Top("tls_extra"),
        Extras,
        "each round trip beyond the first, named (hello_retry, tls12, initial_window, split_flight, loss)",
        |s, _| {
            anatomy(s)
                .and_then(|a| a.extra.as_deref())
                .map_or(FieldValue::Null, FieldValue::Extras)
        },
    )
    .csv("tls_extra", 45)
    .write_out(Ours("tls_extra")),
    Field::new(
        Top("server_handshake_ms"),
        Ms,
        "the server's own time in the handshake: tls_ms less our work, the round trips and the transmission",
        |s, _| time(anatomy(s).and_then(|a| a.server_handshake)),
    )
    .csv("server_handshake_ms", 46)
    .write_out(Ours("time_server_handshake")),
    Field::new(
        Top("tls_transmission_ms"),
        Ms,
        "the time the server's flights took to arrive beyond their round trips (pacing, loss recovery)",
        |s, _| time(anatomy(s).and_then(|a| a.transmission)),
    )
    .csv("tls_transmission_ms", 51)
    .write_out(Ours("time_tls_transmission")),
    Field::new(
        Top("sig_alg"),
        Text,
        "the signature scheme of the server's handshake, e.g. ecdsa_secp256r1_sha256",
        |s, _| {
            owned(
                anatomy(s)
                    .and_then(|a| a.sig_alg)
                    .map(|c| name_or_hex(sig_scheme_name(c), c).into_owned()),
            )
        },
    )
    .csv("sig_alg", 47)
    .write_out(Ours("sig_alg")),
    Field::new(
        Top("server_key"),
        Text,
        "the public key of the server's certificate, e.g. RSA-2048, EC P-256, Ed25519",
        |s, _| text(anatomy(s).and_then(|a| a.server_key.as_deref())),
    )
    .csv("server_key", 48)
    .write_out(Ours("server_key")),
    Field::new(
        Top("cert_bytes"),
        Count,
        "the size of the server's Certificate message",
        |s, _| count(anatomy(s).and_then(|a| a.cert_bytes)),
    )
    .csv("cert_bytes", 49)
    .write_out(Ours("cert_bytes")),
    Field::new(
        Top("server_flight_bytes"),
        Count,
        "every TLS record the server sent up to its Finished",
        |s, _| count(anatomy(s).and_then(|a| a.server_flight_bytes)),
    )
    .csv("server_flight_bytes", 50)
    .write_out(Ours("server_flight_bytes")),
    Field::new(
        Top("server_time_ms"),
        Ms,
        "the server's time after the request: its request record out to the response's first record in, less the min RTT",
        |s, _| time(s.stages().server.map(micros)),
    )
    .csv("server_time_ms", 52)
    .write_out(Ours("time_server")),
    Field::new(
        Top("response_held_ms"),
        Ms,
        "where the server's TCP held its response for our ACK of what it sent first after the request: the hold beyond that round trip",
        |s, _| time(s.stages().held.map(micros)),
    )
    .csv("response_held_ms", 53)
    .write_out(Ours("time_response_held")),
    Field::new(
        Top("variant"),
        Text,
        "--compare: the label of the variant the probe measured",
        |s, compare| text(compare.map(|c| c.label(s.variant))),
    )
    .csv("variant", 54)
    .write_out(Ours("variant"))
    .shown(Shown::Compare),
];

/// The fields with a CSV column, in the order of the header: `compared`
/// adds `variant`; `time_first` (`--csv-time-first`) moves the time
/// columns to just after `round`, every other column keeping its order.
pub fn csv_columns(compared: bool, time_first: bool) -> Vec<(&'static Field, Column)> {
    let mut columns: Vec<(&'static Field, Column)> = FIELDS
        .iter()
        .filter(|f| compared || f.shown != Shown::Compare)
        .filter_map(|f| f.csv.map(|c| (f, c)))
        .collect();
    columns.sort_by_key(|(_, c)| c.at);
    if time_first {
        // `round` stays first; the stable sort keeps every other order.
        columns.sort_by_key(|(_, c)| match (c.at, c.time) {
            (0, _) => 0,
            (_, true) => 1,
            _ => 2,
        });
    }
    columns
}

/// The index in `FIELDS` of the field a write-out variable names (in any
/// case, as every write-out name matches).
pub fn by_write_out(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| {
        f.write_out
            .is_some_and(|v| v.name().eq_ignore_ascii_case(name))
    })
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;

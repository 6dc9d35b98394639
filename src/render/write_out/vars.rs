//! The variables: every one curl 8.22 has, in curl's own (sorted) order,
//! then ours; and what each reads of a sample. The variables that are
//! sample fields (libcurl's timers, `num_connects`, `mode`, `round`,
//! `variant`, `warmup`) are named in the field table (`render::fields`) and
//! read from it; the rest are here.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::probe::{CompareInfo, ErrorKind, Proto, Sample, TransferFacts, UrlPart, UrlParts};
use crate::render::fields::{self, FieldValue, WriteOutVar, FIELDS};

/// A variable we answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Var {
    Certs,
    ConnId,
    ContentType,
    ErrorMsg,
    ExitCode,
    HeaderJson,
    HttpCode,
    HttpConnect,
    HttpVersion,
    Json,
    LocalIp,
    LocalPort,
    Method,
    NumCerts,
    NumHeaders,
    NumRedirects,
    NumRetries,
    ProxySslVerifyResult,
    ProxyUsed,
    RedirectUrl,
    Referer,
    RemoteIp,
    RemotePort,
    Scheme,
    SizeDelivered,
    SizeDownload,
    SizeHeader,
    SizeRequest,
    SizeUpload,
    SpeedDownload,
    SpeedUpload,
    SslVerifyResult,
    /// `time_queue`: not a sample field (libcurl's answer after the transfer).
    TimeQueue,
    TimeRedirect,
    TlsEarlyData,
    /// The URL asked for (`url`), or one part of it (`url.host`).
    Url(Option<UrlPart>),
    /// The URL libcurl ended at (`url_effective`), or one part of it (`urle.host`).
    UrlEffective(Option<UrlPart>),
    UrlNum,
    XferId,
    /// A sample field, by its index in `fields::FIELDS`.
    Field(usize),
    // Ours.
    TlspingJson,
}

/// What a name curl knows means here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Known {
    Var(Var),
    /// curl has it, but nothing in tlsping can answer it; `why` says so.
    /// `in_json`: curl's `%{json}` lists it, where we print `null`.
    NotHere {
        why: &'static str,
        in_json: bool,
    },
}

const NO_FILE: &str = "tlsping keeps no response body, so it writes no file";
const ONE_STREAM: &str = "tlsping writes the format to standard output only";

/// Every variable of curl 8.22's `--write-out` that is not a sample field,
/// in its order (sorted; `vocabulary` adds the fields in their places). The
/// brace directives `%header{}`, `%output{}` and `%time{}` are read by the
/// parser.
const CURL: [(&str, Known); 65] = {
    use Known::{NotHere, Var as V};
    use UrlPart as P;
    [
        ("certs", V(Var::Certs)),
        ("conn_id", V(Var::ConnId)),
        ("content_type", V(Var::ContentType)),
        ("errormsg", V(Var::ErrorMsg)),
        ("exitcode", V(Var::ExitCode)),
        (
            "filename_effective",
            NotHere {
                why: NO_FILE,
                in_json: true,
            },
        ),
        (
            "ftp_entry_path",
            NotHere {
                why: "tlsping speaks HTTPS and HTTP only, never FTP",
                in_json: true,
            },
        ),
        ("header_json", V(Var::HeaderJson)),
        ("http_code", V(Var::HttpCode)),
        ("http_connect", V(Var::HttpConnect)),
        ("http_version", V(Var::HttpVersion)),
        ("json", V(Var::Json)),
        ("local_ip", V(Var::LocalIp)),
        ("local_port", V(Var::LocalPort)),
        ("method", V(Var::Method)),
        ("num_certs", V(Var::NumCerts)),
        ("num_headers", V(Var::NumHeaders)),
        ("num_redirects", V(Var::NumRedirects)),
        ("num_retries", V(Var::NumRetries)),
        (
            "onerror",
            NotHere {
                why: "every sample gets its line; keep the failed ones by %{exitcode}",
                in_json: false,
            },
        ),
        ("proxy_ssl_verify_result", V(Var::ProxySslVerifyResult)),
        ("proxy_used", V(Var::ProxyUsed)),
        ("redirect_url", V(Var::RedirectUrl)),
        ("referer", V(Var::Referer)),
        ("remote_ip", V(Var::RemoteIp)),
        ("remote_port", V(Var::RemotePort)),
        ("response_code", V(Var::HttpCode)),
        ("scheme", V(Var::Scheme)),
        ("size_delivered", V(Var::SizeDelivered)),
        ("size_download", V(Var::SizeDownload)),
        ("size_header", V(Var::SizeHeader)),
        ("size_request", V(Var::SizeRequest)),
        ("size_upload", V(Var::SizeUpload)),
        ("speed_download", V(Var::SpeedDownload)),
        ("speed_upload", V(Var::SpeedUpload)),
        ("ssl_verify_result", V(Var::SslVerifyResult)),
        (
            "stderr",
            NotHere {
                why: ONE_STREAM,
                in_json: false,
            },
        ),
        (
            "stdout",
            NotHere {
                why: ONE_STREAM,
                in_json: false,
            },
        ),
        ("time_queue", V(Var::TimeQueue)),
        ("time_redirect", V(Var::TimeRedirect)),
        ("tls_earlydata", V(Var::TlsEarlyData)),
        ("url", V(Var::Url(None))),
        ("url.fragment", V(Var::Url(Some(P::Fragment)))),
        ("url.host", V(Var::Url(Some(P::Host)))),
        ("url.options", V(Var::Url(Some(P::Options)))),
        ("url.password", V(Var::Url(Some(P::Password)))),
        ("url.path", V(Var::Url(Some(P::Path)))),
        ("url.port", V(Var::Url(Some(P::Port)))),
        ("url.query", V(Var::Url(Some(P::Query)))),
        ("url.scheme", V(Var::Url(Some(P::Scheme)))),
        ("url.user", V(Var::Url(Some(P::User)))),
        ("url.zoneid", V(Var::Url(Some(P::ZoneId)))),
        ("url_effective", V(Var::UrlEffective(None))),
        ("urle.fragment", V(Var::UrlEffective(Some(P::Fragment)))),
        ("urle.host", V(Var::UrlEffective(Some(P::Host)))),
        ("urle.options", V(Var::UrlEffective(Some(P::Options)))),
        ("urle.password", V(Var::UrlEffective(Some(P::Password)))),
        ("urle.path", V(Var::UrlEffective(Some(P::Path)))),
        ("urle.port", V(Var::UrlEffective(Some(P::Port)))),
        ("urle.query", V(Var::UrlEffective(Some(P::Query)))),
        ("urle.scheme", V(Var::UrlEffective(Some(P::Scheme)))),
        ("urle.user", V(Var::UrlEffective(Some(P::User)))),
        ("urle.zoneid", V(Var::UrlEffective(Some(P::ZoneId)))),
        ("urlnum", V(Var::UrlNum)),
        ("xfer_id", V(Var::XferId)),
    ]
};

/// Every name curl 8.22 has, in curl's (sorted) order, which is the order
/// of `%{json}`: those above with the fields that carry one of curl's names.
pub(super) fn curl_vocabulary() -> &'static [(&'static str, Known)] {
    static ALL: OnceLock<Vec<(&'static str, Known)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = CURL.to_vec();
        all.extend(
            FIELDS
                .iter()
                .enumerate()
                .filter_map(|(i, f)| match f.write_out {
                    Some(WriteOutVar::Curl(name)) => Some((name, Known::Var(Var::Field(i)))),
                    _ => None,
                }),
        );
        all.sort_by_key(|(name, _)| *name);
        all
    })
}

/// Our own names that are sample fields, sorted: the last keys of
/// `%{json}`, after `curl_version` (curl has none of them).
pub(super) fn ours_in_json() -> impl Iterator<Item = (&'static str, Var)> {
    let mut ours: Vec<(&'static str, Var)> = FIELDS
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match f.write_out {
            Some(WriteOutVar::Ours(name)) => Some((name, Var::Field(i))),
            _ => None,
        })
        .collect();
    ours.sort_by_key(|(name, _)| *name);
    ours.into_iter()
}

/// A name in a format: a field's, curl's, ours, or unknown (`None`).
pub(super) fn lookup(name: &str) -> Option<Known> {
    if let Some(i) = fields::by_write_out(name) {
        return Some(Known::Var(Var::Field(i)));
    }
    if name.eq_ignore_ascii_case("tlsping_json") {
        return Some(Known::Var(Var::TlspingJson));
    }
    CURL.iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, k)| k)
}

impl Var {
    /// Answered from libcurl's facts about the transfer (`TransferFacts`),
    /// which the probe reads only when the format asks.
    pub(super) fn needs_facts(self) -> bool {
        !matches!(
            self,
            Var::HttpCode
                | Var::HttpVersion
                | Var::RemoteIp
                | Var::RemotePort
                | Var::NumCerts
                | Var::NumRetries
                | Var::UrlNum
                | Var::Field(_)
                | Var::TlspingJson
        )
    }
}

/// One variable's value for one sample, before it is written as text or JSON.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value<'a> {
    /// Microseconds, written as seconds with six decimals (a number in JSON).
    Seconds(u64),
    Number(i64),
    /// A status code: at least three digits as text (`000`), a number in JSON.
    Code(i64),
    Text(Cow<'a, str>),
    Bool(bool),
    /// Nothing as text, `null` in JSON.
    Null,
}

/// What libcurl would say about a transfer that never started.
static NOT_STARTED: TransferFacts = TransferFacts::NOT_STARTED;

/// The value of a plain variable (not `%{json}`, `%{header_json}` or
/// `%{tlsping_json}`, which the caller writes whole).
pub(super) fn value<'a>(var: Var, s: &'a Sample, compare: Option<&'a CompareInfo>) -> Value<'a> {
    let facts = s.transfer.as_deref().unwrap_or(&NOT_STARTED);
    let text = |t: &'a Option<String>| t.as_deref().map_or(Value::Null, |t| Value::Text(t.into()));
    match var {
        Var::Certs => Value::Text(facts.certs.concat().into()),
        Var::ConnId => Value::Number(facts.conn_id),
        Var::ContentType => text(&facts.content_type),
        Var::ErrorMsg => match &s.transfer {
            Some(f) => text(&f.error_message),
            None => s
                .error
                .as_ref()
                .map_or(Value::Null, |e| Value::Text(e.text.as_str().into())),
        },
        Var::ExitCode => Value::Number(exit_code(s)),
        Var::HttpCode => Value::Code(i64::from(s.status)),
        Var::HttpConnect => Value::Code(facts.http_connect),
        Var::HttpVersion => Value::Text(http_version(s.proto).into()),
        Var::LocalIp => text(&facts.local_ip),
        Var::LocalPort => Value::Number(facts.local_port),
        Var::Method => text(&facts.method),
        Var::NumCerts => Value::Number(i64::from(s.tls.and_then(|t| t.chain_len).unwrap_or(0))),
        Var::NumHeaders => Value::Number(i64::from(facts.num_headers)),
        Var::NumRedirects => Value::Number(facts.num_redirects),
        // curl counts its own --retry attempts; tlsping never repeats a probe.
        Var::NumRetries | Var::UrlNum => Value::Number(0),
        Var::ProxySslVerifyResult => Value::Number(facts.proxy_ssl_verify_result),
        Var::ProxyUsed => Value::Number(facts.proxy_used),
        Var::RedirectUrl => text(&facts.redirect_url),
        Var::Referer => text(&facts.referer),
        // curl prints an empty address and port 0 when no connection was made.
        Var::RemoteIp => Value::Text(s.addr.map_or(String::new(), |a| a.ip().to_string()).into()),
        Var::RemotePort => Value::Number(i64::from(s.addr.map_or(0, |a| a.port()))),
        Var::Scheme => text(&facts.scheme),
        Var::SizeDelivered => Value::Number(facts.size_delivered),
        Var::SizeDownload => Value::Number(facts.size_download),
        Var::SizeHeader => Value::Number(facts.size_header),
        Var::SizeRequest => Value::Number(facts.size_request),
        Var::SizeUpload => Value::Number(facts.size_upload),
        Var::SpeedDownload => Value::Number(facts.speed_download),
        Var::SpeedUpload => Value::Number(facts.speed_upload),
        Var::SslVerifyResult => Value::Number(facts.ssl_verify_result),
        Var::TimeQueue => Value::Seconds(facts.queue_us.max(0) as u64),
        Var::TimeRedirect => Value::Seconds(facts.redirect_us.max(0) as u64),
        Var::TlsEarlyData => Value::Number(facts.early_data_sent),
        Var::Url(part) => {
            let url = Some(facts.url.as_str()).filter(|u| !u.is_empty());
            url_value(url, part)
        }
        Var::UrlEffective(part) => url_value(facts.url_effective.as_deref(), part),
        Var::XferId => Value::Number(facts.xfer_id),
        Var::Field(i) => field_value(FIELDS[i].value(s, compare)),
        Var::Json | Var::HeaderJson | Var::TlspingJson => Value::Null,
    }
}

/// A sample field as curl would give it: every duration in seconds.
fn field_value(v: FieldValue<'_>) -> Value<'_> {
    match v {
        FieldValue::Time(d) => Value::Seconds(u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
        FieldValue::Int(n) => Value::Number(n),
        FieldValue::Bool(b) => Value::Bool(b),
        FieldValue::Text(t) => Value::Text(t),
        FieldValue::Wall(t) => Value::Text(crate::text::rfc3339_millis(t).into()),
        FieldValue::Extras(extra) => Value::Text(fields::extras_cell(extra).into()),
        FieldValue::Null | FieldValue::Metrics(_) => Value::Null,
    }
}

/// curl's exit code for the probe: libcurl's result, or for a probe that
/// failed before libcurl ran (our own lookup, a handle that could not be
/// set up) the code curl gives the same failure.
fn exit_code(s: &Sample) -> i64 {
    if let Some(facts) = &s.transfer {
        return i64::from(facts.exit_code);
    }
    match s.error.as_deref().map(|e| e.kind) {
        None => 0,
        Some(ErrorKind::DnsFail) => 6,
        Some(ErrorKind::Timeout) => 28,
        Some(ErrorKind::Canceled) => 42,
        Some(_) => 2,
    }
}

fn url_value(url: Option<&str>, part: Option<UrlPart>) -> Value<'_> {
    match (url, part) {
        (None, _) => Value::Null,
        (Some(url), None) => Value::Text(url.into()),
        (Some(url), Some(part)) => UrlParts::parse(url)
            .and_then(|u| u.get(part))
            .map_or(Value::Null, |p| Value::Text(p.into())),
    }
}

/// curl's `http_version`: `0` without a response, `1` for HTTP/1.0.
fn http_version(proto: Option<Proto>) -> &'static str {
    match proto {
        None => "0",
        Some(Proto::Http10) => "1",
        Some(Proto::Http11) => "1.1",
        Some(Proto::H2) => "2",
        Some(Proto::H3) => "3",
    }
}

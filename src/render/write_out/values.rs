//! What a variable reads of a sample: libcurl's facts about the transfer
//! (`TransferFacts`), the sample's own, or a field of the field table, in
//! curl's units and types.

use std::borrow::Cow;

use super::vars::Var;
use crate::probe::{CompareInfo, ErrorKind, Proto, Sample, TransferFacts, UrlPart, UrlParts};
use crate::render::fields::{self, FieldValue, FIELDS};

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

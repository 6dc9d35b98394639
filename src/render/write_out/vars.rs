//! The variables: every one curl 8.22 has, in curl's own (sorted) order,
//! then ours, each with what it means (what each reads of a sample is
//! `values`). The variables that are sample fields (libcurl's timers,
//! `num_connects`, `mode`, `round`, `variant`, `warmup`) are named in the
//! field table (`render::fields`); the rest are here.

use std::sync::OnceLock;

use crate::probe::UrlPart;
use crate::render::fields::{self, WriteOutVar, FIELDS};

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
const CURL: [(&str, &str, Known); 65] = {
    use Known::{NotHere, Var as V};
    use UrlPart as P;
    [
        (
            "certs",
            "the server's certificates, as curl prints them (PEM among the details)",
            V(Var::Certs),
        ),
        (
            "conn_id",
            "libcurl's number for the connection",
            V(Var::ConnId),
        ),
        (
            "content_type",
            "the response's Content-Type",
            V(Var::ContentType),
        ),
        (
            "errormsg",
            "the failure in libcurl's words; empty when the probe got a response",
            V(Var::ErrorMsg),
        ),
        (
            "exitcode",
            "the exit code curl would give the transfer (0, 6 for a lookup, 28 for a timeout, ...)",
            V(Var::ExitCode),
        ),
        (
            "filename_effective",
            "curl's output file",
            NotHere {
                why: NO_FILE,
                in_json: true,
            },
        ),
        (
            "ftp_entry_path",
            "curl's FTP entry path",
            NotHere {
                why: "tlsping speaks HTTPS and HTTP only, never FTP",
                in_json: true,
            },
        ),
        (
            "header_json",
            "every response header, as a JSON object",
            V(Var::HeaderJson),
        ),
        (
            "http_code",
            "the HTTP status code, three digits (000 without a response)",
            V(Var::HttpCode),
        ),
        (
            "http_connect",
            "the status code of a proxy's answer to CONNECT",
            V(Var::HttpConnect),
        ),
        (
            "http_version",
            "the HTTP version of the response: 1, 1.1 or 2 (0 without one)",
            V(Var::HttpVersion),
        ),
        (
            "json",
            "curl's JSON object of every variable, then mode, round, variant and warmup",
            V(Var::Json),
        ),
        (
            "local_ip",
            "the local address of the connection",
            V(Var::LocalIp),
        ),
        (
            "local_port",
            "the local port of the connection",
            V(Var::LocalPort),
        ),
        ("method", "the request method", V(Var::Method)),
        (
            "num_certs",
            "certificates in the server's chain",
            V(Var::NumCerts),
        ),
        ("num_headers", "headers in the response", V(Var::NumHeaders)),
        ("num_redirects", "redirects followed", V(Var::NumRedirects)),
        (
            "num_retries",
            "curl's --retry attempts; always 0, tlsping never repeats a probe",
            V(Var::NumRetries),
        ),
        (
            "onerror",
            "curl's switch to print only for a failed transfer",
            NotHere {
                why: "every sample gets its line; keep the failed ones by %{exitcode}",
                in_json: false,
            },
        ),
        (
            "proxy_ssl_verify_result",
            "the result of verifying an HTTPS proxy's certificate",
            V(Var::ProxySslVerifyResult),
        ),
        (
            "proxy_used",
            "1 when the transfer went through a proxy",
            V(Var::ProxyUsed),
        ),
        (
            "redirect_url",
            "where a redirect response points",
            V(Var::RedirectUrl),
        ),
        ("referer", "the Referer header sent", V(Var::Referer)),
        ("remote_ip", "the address connected to", V(Var::RemoteIp)),
        ("remote_port", "the port connected to", V(Var::RemotePort)),
        ("response_code", "the same as http_code", V(Var::HttpCode)),
        ("scheme", "the scheme of the URL used", V(Var::Scheme)),
        (
            "size_delivered",
            "body bytes delivered",
            V(Var::SizeDelivered),
        ),
        ("size_download", "body bytes received", V(Var::SizeDownload)),
        ("size_header", "header bytes received", V(Var::SizeHeader)),
        (
            "size_request",
            "bytes of the request sent",
            V(Var::SizeRequest),
        ),
        ("size_upload", "bytes uploaded", V(Var::SizeUpload)),
        (
            "speed_download",
            "the average speed of the download, in bytes per second",
            V(Var::SpeedDownload),
        ),
        (
            "speed_upload",
            "the average speed of the upload, in bytes per second",
            V(Var::SpeedUpload),
        ),
        (
            "ssl_verify_result",
            "the result of verifying the server's certificate (0 when it passed)",
            V(Var::SslVerifyResult),
        ),
        (
            "stderr",
            "curl's switch to standard error",
            NotHere {
                why: ONE_STREAM,
                in_json: false,
            },
        ),
        (
            "stdout",
            "curl's switch back to standard output",
            NotHere {
                why: ONE_STREAM,
                in_json: false,
            },
        ),
        (
            "time_queue",
            "seconds the transfer waited in libcurl's queue",
            V(Var::TimeQueue),
        ),
        (
            "time_redirect",
            "seconds spent on redirects",
            V(Var::TimeRedirect),
        ),
        (
            "tls_earlydata",
            "bytes sent as TLS early data",
            V(Var::TlsEarlyData),
        ),
        ("url", "the URL asked for", V(Var::Url(None))),
        (
            "url.fragment",
            "the fragment part of url",
            V(Var::Url(Some(P::Fragment))),
        ),
        (
            "url.host",
            "the host part of url",
            V(Var::Url(Some(P::Host))),
        ),
        (
            "url.options",
            "the options part of url",
            V(Var::Url(Some(P::Options))),
        ),
        (
            "url.password",
            "the password part of url",
            V(Var::Url(Some(P::Password))),
        ),
        (
            "url.path",
            "the path part of url",
            V(Var::Url(Some(P::Path))),
        ),
        (
            "url.port",
            "the port part of url",
            V(Var::Url(Some(P::Port))),
        ),
        (
            "url.query",
            "the query part of url",
            V(Var::Url(Some(P::Query))),
        ),
        (
            "url.scheme",
            "the scheme part of url",
            V(Var::Url(Some(P::Scheme))),
        ),
        (
            "url.user",
            "the user part of url",
            V(Var::Url(Some(P::User))),
        ),
        (
            "url.zoneid",
            "the zoneid part of url",
            V(Var::Url(Some(P::ZoneId))),
        ),
        (
            "url_effective",
            "the URL libcurl ended at",
            V(Var::UrlEffective(None)),
        ),
        (
            "urle.fragment",
            "the fragment part of url_effective",
            V(Var::UrlEffective(Some(P::Fragment))),
        ),
        (
            "urle.host",
            "the host part of url_effective",
            V(Var::UrlEffective(Some(P::Host))),
        ),
        (
            "urle.options",
            "the options part of url_effective",
            V(Var::UrlEffective(Some(P::Options))),
        ),
        (
            "urle.password",
            "the password part of url_effective",
            V(Var::UrlEffective(Some(P::Password))),
        ),
        (
            "urle.path",
            "the path part of url_effective",
            V(Var::UrlEffective(Some(P::Path))),
        ),
        (
            "urle.port",
            "the port part of url_effective",
            V(Var::UrlEffective(Some(P::Port))),
        ),
        (
            "urle.query",
            "the query part of url_effective",
            V(Var::UrlEffective(Some(P::Query))),
        ),
        (
            "urle.scheme",
            "the scheme part of url_effective",
            V(Var::UrlEffective(Some(P::Scheme))),
        ),
        (
            "urle.user",
            "the user part of url_effective",
            V(Var::UrlEffective(Some(P::User))),
        ),
        (
            "urle.zoneid",
            "the zoneid part of url_effective",
            V(Var::UrlEffective(Some(P::ZoneId))),
        ),
        (
            "urlnum",
            "the URL's place in curl's list; always 0",
            V(Var::UrlNum),
        ),
        (
            "xfer_id",
            "libcurl's number for the transfer",
            V(Var::XferId),
        ),
    ]
};

/// Every name curl 8.22 has, in curl's (sorted) order, which is the order
/// of `%{json}`: those above with the fields that carry one of curl's names.
pub(super) fn curl_vocabulary() -> &'static [(&'static str, Known)] {
    static ALL: OnceLock<Vec<(&'static str, Known)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<(&'static str, Known)> = CURL.iter().map(|&(n, _, k)| (n, k)).collect();
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
    if let Some(&(_, _, var)) = OURS.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)) {
        return Some(Known::Var(var));
    }
    CURL.iter()
        .find(|(known, _, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, _, k)| k)
}

/// Our own variables that are not sample fields.
const OURS: [(&str, &str, Var); 1] = [(
    "tlsping_json",
    "tlsping's own JSON object of the sample, as a --jsonl sample line has it",
    Var::TlspingJson,
)];

/// One variable as the man page lists it (`super::variables`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    pub name: &'static str,
    /// What it gives, in one line.
    pub about: &'static str,
    /// curl has it but tlsping refuses it, and why.
    pub refused: Option<&'static str>,
    /// One of curl's names (else one of ours).
    pub of_curl: bool,
}

/// Every name a format may use: curl's in curl's (sorted) order, then
/// ours, sorted; each with what it means, from the tables above and the
/// field table.
pub(super) fn every_variable() -> Vec<Variable> {
    let fields = FIELDS.iter().filter_map(|f| {
        f.write_out.map(|var| Variable {
            name: var.name(),
            about: f.about,
            refused: None,
            of_curl: matches!(var, WriteOutVar::Curl(_)),
        })
    });
    let (mut all, mut ours): (Vec<Variable>, Vec<Variable>) = CURL
        .iter()
        .map(|&(name, about, known)| Variable {
            name,
            about,
            refused: match known {
                Known::NotHere { why, .. } => Some(why),
                Known::Var(_) => None,
            },
            of_curl: true,
        })
        .chain(fields)
        .chain(OURS.iter().map(|&(name, about, _)| Variable {
            name,
            about,
            refused: None,
            of_curl: false,
        }))
        .partition(|v| v.of_curl);
    all.sort_by_key(|v| v.name);
    ours.sort_by_key(|v| v.name);
    all.extend(ours);
    all
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

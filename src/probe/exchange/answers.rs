//! What libcurl answers about a finished transfer (`curl_easy_getinfo` and
//! the header API, through `curl_ffi`), in the probe's own types: its
//! timers, the HTTP version, what became of early data, the verification
//! verdict, and the facts `--write-out` reads. Read once `perform` has
//! returned, on the easy handle before it is dropped, never inside a timed
//! interval.

use curl::easy::Easy2;

use super::config::EarlyData;
use super::curl_ffi::{self, info::*};
use super::transfer::{HeaderCapture, TransferFacts, MAX_HEADERS, MAX_HEADER_BYTES, MAX_TEXT};
use super::types::{CurlTimers, Proto};

/// libcurl's own timers for the last transfer of `easy`.
pub(super) fn timers<H>(easy: &Easy2<H>) -> CurlTimers {
    let us = |info| curl_ffi::timer_us(easy, info);
    CurlTimers {
        namelookup_us: us(CURLINFO_NAMELOOKUP_TIME_T),
        connect_us: us(CURLINFO_CONNECT_TIME_T),
        appconnect_us: us(CURLINFO_APPCONNECT_TIME_T),
        pretransfer_us: us(CURLINFO_PRETRANSFER_TIME_T),
        posttransfer_us: us(CURLINFO_POSTTRANSFER_TIME_T),
        starttransfer_us: us(CURLINFO_STARTTRANSFER_TIME_T),
        total_us: us(CURLINFO_TOTAL_TIME_T),
        num_connects: easy.num_connects().unwrap_or(0) as u32,
    }
}

/// Whether the last transfer sent TLS early data and what the server made of
/// it: libcurl's signed byte count (> 0 accepted, < 0 rejected, 0 none).
pub(super) fn early_data<H>(easy: &Easy2<H>) -> EarlyData {
    match curl_ffi::off_t(easy, CURLINFO_EARLYDATA_SENT_T) {
        Some(v) if v > 0 => EarlyData::Accepted,
        Some(v) if v < 0 => EarlyData::Rejected,
        _ => EarlyData::NotSent,
    }
}

/// OpenSSL's certificate verification verdict (an `X509_V_ERR_*` value).
pub(super) fn verify_result<H>(easy: &Easy2<H>) -> i64 {
    curl_ffi::long(easy, CURLINFO_SSL_VERIFYRESULT).unwrap_or(0)
}

/// The HTTP version the last response used.
pub(super) fn http_version<H>(easy: &Easy2<H>) -> Option<Proto> {
    match curl_ffi::long(easy, CURLINFO_HTTP_VERSION)? {
        CURL_HTTP_VERSION_1_0 => Some(Proto::Http10),
        CURL_HTTP_VERSION_1_1 => Some(Proto::Http11),
        CURL_HTTP_VERSION_2_0 => Some(Proto::H2),
        CURL_HTTP_VERSION_3 => Some(Proto::H3),
        _ => None,
    }
}

/// libcurl's answers about the last transfer of `easy`, as `--write-out`
/// reads them, with the response headers `wanted` asks for. What only we
/// know (the result, the URL asked for, the certificates) is left as
/// `NOT_STARTED` has it.
pub(super) fn transfer_facts<H>(easy: &Easy2<H>, wanted: &HeaderCapture) -> TransferFacts {
    let (num_headers, headers) = response_headers(easy, wanted);
    let text = |info| curl_ffi::text(easy, info, MAX_TEXT);
    let long = |info| curl_ffi::long(easy, info).unwrap_or(0);
    let off_t = |info| curl_ffi::off_t(easy, info).unwrap_or(0);
    TransferFacts {
        url_effective: text(CURLINFO_EFFECTIVE_URL),
        method: text(CURLINFO_EFFECTIVE_METHOD),
        scheme: text(CURLINFO_SCHEME),
        content_type: text(CURLINFO_CONTENT_TYPE),
        redirect_url: text(CURLINFO_REDIRECT_URL),
        referer: text(CURLINFO_REFERER),
        local_ip: text(CURLINFO_LOCAL_IP),
        local_port: long(CURLINFO_LOCAL_PORT),
        size_download: off_t(CURLINFO_SIZE_DOWNLOAD_T),
        size_delivered: off_t(CURLINFO_SIZE_DELIVERED),
        size_upload: off_t(CURLINFO_SIZE_UPLOAD_T),
        size_header: long(CURLINFO_HEADER_SIZE),
        size_request: long(CURLINFO_REQUEST_SIZE),
        speed_download: off_t(CURLINFO_SPEED_DOWNLOAD_T),
        speed_upload: off_t(CURLINFO_SPEED_UPLOAD_T),
        ssl_verify_result: long(CURLINFO_SSL_VERIFYRESULT),
        proxy_ssl_verify_result: long(CURLINFO_PROXY_SSL_VERIFYRESULT),
        http_connect: long(CURLINFO_HTTP_CONNECTCODE),
        num_redirects: long(CURLINFO_REDIRECT_COUNT),
        proxy_used: long(CURLINFO_USED_PROXY),
        conn_id: off_t(CURLINFO_CONN_ID),
        xfer_id: off_t(CURLINFO_XFER_ID),
        queue_us: off_t(CURLINFO_QUEUE_TIME_T),
        redirect_us: off_t(CURLINFO_REDIRECT_TIME_T),
        early_data_sent: off_t(CURLINFO_EARLYDATA_SENT_T),
        num_headers,
        headers,
        ..TransferFacts::NOT_STARTED
    }
}

/// The headers of the last response: how many there were, and copies of
/// those `wanted` asks for (within `MAX_HEADERS` and `MAX_HEADER_BYTES`).
fn response_headers<H>(easy: &Easy2<H>, wanted: &HeaderCapture) -> (u32, Vec<(String, String)>) {
    let mut count = 0u32;
    let mut kept = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    curl_ffi::each_response_header(easy, |name, value| {
        count = count.saturating_add(1);
        let cost = name.len() + value.len();
        if kept.len() < MAX_HEADERS && cost <= budget && wanted.wants(name) {
            budget -= cost;
            let value = String::from_utf8_lossy(value).into_owned();
            kept.push((name.to_string(), value));
        }
    });
    (count, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl curl::easy::Handler for Quiet {}

    #[test]
    fn a_handle_that_ran_nothing_reads_as_nothing() {
        let easy = Easy2::new(Quiet);
        assert_eq!(timers(&easy), CurlTimers::default());
        assert_eq!(http_version(&easy), None);
        assert_eq!(early_data(&easy), EarlyData::NotSent);
        assert_eq!(verify_result(&easy), 0);
        let facts = transfer_facts(&easy, &HeaderCapture::All);
        assert_eq!((facts.num_headers, facts.headers.len()), (0, 0));
    }
}

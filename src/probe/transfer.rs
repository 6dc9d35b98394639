//! What libcurl can still say about a transfer once `perform` has returned:
//! the answers behind curl's `--write-out` variables that a `Sample` does not
//! carry (content type, sizes, speeds, ids, response headers, the server's
//! certificates as text). Read only when the output asks (`Capture`), on the
//! easy handle before it is dropped, never inside a timed interval.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_long, c_uint, c_void};

use curl::easy::Easy2;
use curl_sys::{CURLcode, CURL, CURLE_OK, CURLINFO};

use super::collector::Collector;

/// Response headers kept per probe, at most: enough for any real response,
/// small enough that a hostile one cannot make a sample large.
pub const MAX_HEADERS: usize = 100;
/// Bytes of header names and values kept per probe, at most.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Bytes kept of any other text the server chose (content type, redirect URL).
pub const MAX_TEXT: usize = 8 * 1024;
/// Certificates of the server's chain kept as text, at most.
pub const MAX_CERTS: usize = 10;

/// What the output reads of each transfer beyond the sample's own fields.
/// The default reads nothing: a run without `--write-out` pays for none of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// libcurl's answers about the transfer (`TransferFacts`).
    pub facts: bool,
    /// Which response headers to copy.
    pub headers: HeaderCapture,
    /// The certificates the server sent, as curl's `%{certs}` prints them.
    pub certs: bool,
}

impl Capture {
    /// Nothing is read.
    pub fn is_empty(&self) -> bool {
        !self.facts && !self.certs && self.headers == HeaderCapture::None
    }
}

/// Response headers a format reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HeaderCapture {
    #[default]
    None,
    /// Only headers of these names (any case).
    Named(Vec<String>),
    All,
}

impl HeaderCapture {
    fn wants(&self, name: &str) -> bool {
        match self {
            HeaderCapture::None => false,
            HeaderCapture::Named(names) => names.iter().any(|n| n.eq_ignore_ascii_case(name)),
            HeaderCapture::All => true,
        }
    }
}

/// libcurl's account of one transfer, as `curl_easy_getinfo` and the header
/// API give it after `perform`. Numbers are libcurl's own (bytes, bytes per
/// second, microseconds); `None` where libcurl has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferFacts {
    /// libcurl's result code (`CURLcode`): 0 for a response, also one we
    /// stopped reading at `BODY_CAP` on purpose.
    pub exit_code: i32,
    /// libcurl's own words for a failure (its error buffer, else its text for the code).
    pub error_message: Option<String>,
    /// The URL this probe asked for, as handed to libcurl.
    pub url: String,
    pub url_effective: Option<String>,
    pub method: Option<String>,
    pub scheme: Option<String>,
    pub content_type: Option<String>,
    pub redirect_url: Option<String>,
    pub referer: Option<String>,
    pub local_ip: Option<String>,
    pub local_port: i64,
    pub size_download: i64,
    pub size_delivered: i64,
    pub size_upload: i64,
    pub size_header: i64,
    pub size_request: i64,
    pub speed_download: i64,
    pub speed_upload: i64,
    pub ssl_verify_result: i64,
    pub proxy_ssl_verify_result: i64,
    pub http_connect: i64,
    pub num_redirects: i64,
    pub proxy_used: i64,
    /// libcurl's ids of the connection and of the transfer (-1: none).
    pub conn_id: i64,
    pub xfer_id: i64,
    pub queue_us: i64,
    pub redirect_us: i64,
    /// Bytes sent as TLS early data; negative when the server refused them.
    pub early_data_sent: i64,
    /// Headers of the last response (libcurl's count, not only those kept).
    pub num_headers: u32,
    /// The headers `Capture` asked for, in the order they came, within
    /// `MAX_HEADERS` and `MAX_HEADER_BYTES`.
    pub headers: Vec<(String, String)>,
    /// Each certificate the server sent in this probe's own handshake, as
    /// curl's certificate info prints it (at most `MAX_CERTS`).
    pub certs: Vec<String>,
}

impl TransferFacts {
    /// What curl reports for a transfer that never started: no ids, nothing
    /// counted. A probe that failed in our own lookup, before libcurl ran,
    /// has this.
    pub const NOT_STARTED: TransferFacts = TransferFacts {
        exit_code: 0,
        error_message: None,
        url: String::new(),
        url_effective: None,
        method: None,
        scheme: None,
        content_type: None,
        redirect_url: None,
        referer: None,
        local_ip: None,
        local_port: 0,
        size_download: 0,
        size_delivered: 0,
        size_upload: 0,
        size_header: 0,
        size_request: 0,
        speed_download: 0,
        speed_upload: 0,
        ssl_verify_result: 0,
        proxy_ssl_verify_result: 0,
        http_connect: 0,
        num_redirects: 0,
        proxy_used: 0,
        conn_id: -1,
        xfer_id: -1,
        queue_us: 0,
        redirect_us: 0,
        early_data_sent: 0,
        num_headers: 0,
        headers: Vec::new(),
        certs: Vec::new(),
    };
}

// curl.h (8.x) info ids that curl-sys does not export.
const CURLINFO_STRING: CURLINFO = 0x100000;
const CURLINFO_LONG: CURLINFO = 0x200000;
const CURLINFO_OFF_T: CURLINFO = 0x600000;
const CURLINFO_SIZE_UPLOAD_T: CURLINFO = CURLINFO_OFF_T + 7;
const CURLINFO_SIZE_DOWNLOAD_T: CURLINFO = CURLINFO_OFF_T + 8;
const CURLINFO_SPEED_DOWNLOAD_T: CURLINFO = CURLINFO_OFF_T + 9;
const CURLINFO_SPEED_UPLOAD_T: CURLINFO = CURLINFO_OFF_T + 10;
const CURLINFO_PROXY_SSL_VERIFYRESULT: CURLINFO = CURLINFO_LONG + 47;
const CURLINFO_SCHEME: CURLINFO = CURLINFO_STRING + 49;
const CURLINFO_REDIRECT_TIME_T: CURLINFO = CURLINFO_OFF_T + 55;
const CURLINFO_EFFECTIVE_METHOD: CURLINFO = CURLINFO_STRING + 58;
const CURLINFO_REFERER: CURLINFO = CURLINFO_STRING + 60;
const CURLINFO_XFER_ID: CURLINFO = CURLINFO_OFF_T + 63;
const CURLINFO_CONN_ID: CURLINFO = CURLINFO_OFF_T + 64;
const CURLINFO_QUEUE_TIME_T: CURLINFO = CURLINFO_OFF_T + 65;
const CURLINFO_USED_PROXY: CURLINFO = CURLINFO_LONG + 66;
const CURLINFO_EARLYDATA_SENT_T: CURLINFO = CURLINFO_OFF_T + 68;
const CURLINFO_SIZE_DELIVERED: CURLINFO = CURLINFO_OFF_T + 71;

/// `struct curl_header` from curl/header.h.
#[repr(C)]
struct CurlHeader {
    name: *mut c_char,
    value: *mut c_char,
    amount: usize,
    index: usize,
    origin: c_uint,
    anchor: *mut c_void,
}

/// curl/header.h: a header the server sent (not a trailer, 1xx or CONNECT one).
const CURLH_HEADER: c_uint = 1;

extern "C" {
    // libcurl's header API (7.84+), compiled into curl-sys but not bound there.
    fn curl_easy_nextheader(
        easy: *mut CURL,
        origin: c_uint,
        request: c_int,
        prev: *mut CurlHeader,
    ) -> *mut CurlHeader;
}

/// Everything `capture` asks for about the transfer `easy` just ran for
/// `url`, which ended in `result`. Call after `perform` returned.
pub(super) fn read(
    easy: &Easy2<Collector>,
    capture: &Capture,
    url: &str,
    result: &Result<(), curl::Error>,
) -> TransferFacts {
    let raw = easy.raw();
    let collector = easy.get_ref();
    let (exit_code, error_message) = match result {
        Ok(()) => (0, None),
        Err(e) if e.is_write_error() && collector.body_overflow => (0, None),
        Err(e) => {
            let text = e.extra_description().unwrap_or(e.description());
            (e.code() as i32, Some(text.to_string()))
        }
    };
    let (num_headers, headers) = response_headers(raw, &capture.headers);
    let certs = if capture.certs {
        collector
            .chain
            .iter()
            .take(MAX_CERTS)
            .map(|cert| super::cert_text::curl_certinfo(cert))
            .collect()
    } else {
        Vec::new()
    };
    TransferFacts {
        exit_code,
        error_message,
        url: url.to_string(),
        url_effective: string(raw, curl_sys::CURLINFO_EFFECTIVE_URL),
        method: string(raw, CURLINFO_EFFECTIVE_METHOD),
        scheme: string(raw, CURLINFO_SCHEME),
        content_type: string(raw, curl_sys::CURLINFO_CONTENT_TYPE),
        redirect_url: string(raw, curl_sys::CURLINFO_REDIRECT_URL),
        referer: string(raw, CURLINFO_REFERER),
        local_ip: string(raw, curl_sys::CURLINFO_LOCAL_IP),
        local_port: long(raw, curl_sys::CURLINFO_LOCAL_PORT),
        size_download: off_t(raw, CURLINFO_SIZE_DOWNLOAD_T),
        size_delivered: off_t(raw, CURLINFO_SIZE_DELIVERED),
        size_upload: off_t(raw, CURLINFO_SIZE_UPLOAD_T),
        size_header: long(raw, curl_sys::CURLINFO_HEADER_SIZE),
        size_request: long(raw, curl_sys::CURLINFO_REQUEST_SIZE),
        speed_download: off_t(raw, CURLINFO_SPEED_DOWNLOAD_T),
        speed_upload: off_t(raw, CURLINFO_SPEED_UPLOAD_T),
        ssl_verify_result: long(raw, curl_sys::CURLINFO_SSL_VERIFYRESULT),
        proxy_ssl_verify_result: long(raw, CURLINFO_PROXY_SSL_VERIFYRESULT),
        http_connect: long(raw, curl_sys::CURLINFO_HTTP_CONNECTCODE),
        num_redirects: long(raw, curl_sys::CURLINFO_REDIRECT_COUNT),
        proxy_used: long(raw, CURLINFO_USED_PROXY),
        conn_id: off_t(raw, CURLINFO_CONN_ID),
        xfer_id: off_t(raw, CURLINFO_XFER_ID),
        queue_us: off_t(raw, CURLINFO_QUEUE_TIME_T),
        redirect_us: off_t(raw, CURLINFO_REDIRECT_TIME_T),
        early_data_sent: off_t(raw, CURLINFO_EARLYDATA_SENT_T),
        num_headers,
        headers,
        certs,
    }
}

/// libcurl's description of itself and the libraries it uses
/// (`libcurl/8.22.0 OpenSSL/3.6.1 ...`), which ends curl's `%{json}`.
pub fn curl_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        // SAFETY: curl_version takes nothing and returns libcurl's own
        // NUL-terminated text (never freed by us), copied at once; the
        // OnceLock makes this the only call.
        let text = unsafe { curl_sys::curl_version() };
        if text.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, so a NUL-terminated string (above).
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}

/// A string libcurl holds for the last transfer, copied (within `MAX_TEXT`).
fn string(raw: *mut CURL, info: CURLINFO) -> Option<String> {
    let mut value: *const c_char = std::ptr::null();
    // SAFETY: `raw` is the live handle of an `Easy2` our caller borrows; the
    // STRING family writes one `char*` (or NULL) through `&mut value`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    if rc != CURLE_OK || value.is_null() {
        return None;
    }
    // SAFETY: a non-NULL answer is a NUL-terminated string owned by the
    // handle, unchanged until the handle is used again; copied right here.
    let text = unsafe { CStr::from_ptr(value) }.to_string_lossy();
    Some(bounded(&text, MAX_TEXT).to_string())
}

#[allow(clippy::useless_conversion)] // c_long is i32 on some targets
fn long(raw: *mut CURL, info: CURLINFO) -> i64 {
    let mut value: c_long = 0;
    // SAFETY: as in `string`; the LONG family writes one `long`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    if rc == CURLE_OK {
        i64::from(value)
    } else {
        0
    }
}

fn off_t(raw: *mut CURL, info: CURLINFO) -> i64 {
    let mut value: curl_sys::curl_off_t = 0;
    // SAFETY: as in `string`; the OFF_T family writes one `curl_off_t`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    if rc == CURLE_OK {
        value
    } else {
        0
    }
}

/// The headers of the last response, as libcurl stored them while it read
/// them: how many there were, and copies of those `wanted` asks for.
fn response_headers(raw: *mut CURL, wanted: &HeaderCapture) -> (u32, Vec<(String, String)>) {
    let mut count = 0u32;
    let mut kept = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    let mut prev: *mut CurlHeader = std::ptr::null_mut();
    loop {
        // SAFETY: `raw` is live (see `string`); `prev` is NULL or the entry
        // libcurl returned last, and the handle has not been used since, so
        // libcurl's list is unchanged. request -1 is the last request.
        let header = unsafe { curl_easy_nextheader(raw, CURLH_HEADER, -1, prev) };
        if header.is_null() {
            break;
        }
        count = count.saturating_add(1);
        // SAFETY: a non-NULL entry is libcurl's, valid until the next call on
        // the handle; its name and value are NUL-terminated strings.
        let (name, value) = unsafe {
            let h = &*header;
            (CStr::from_ptr(h.name), CStr::from_ptr(h.value))
        };
        let name = name.to_string_lossy();
        let cost = name.len() + value.to_bytes().len();
        if kept.len() < MAX_HEADERS && cost <= budget && wanted.wants(&name) {
            budget -= cost;
            kept.push((name.into_owned(), value.to_string_lossy().into_owned()));
        }
        prev = header;
    }
    (count, kept)
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        assert_eq!(bounded("abc", 8), "abc");
        assert_eq!(bounded("abcdef", 4), "abcd");
        // 'é' is two bytes: a cut inside it keeps the character out.
        assert_eq!(bounded("aé", 2), "a");
    }

    #[test]
    fn named_headers_match_without_regard_to_case() {
        let named = HeaderCapture::Named(vec!["server".into()]);
        assert!(named.wants("Server"));
        assert!(!named.wants("date"));
        assert!(HeaderCapture::All.wants("date"));
        assert!(!HeaderCapture::None.wants("server"));
        assert!(Capture::default().is_empty());
    }
}

//! `curl_easy_getinfo` and the header API for what `--write-out` reads
//! of a finished transfer beyond the sample (`transfer::TransferFacts`),
//! and libcurl's description of itself. Every reader takes the `Easy2`,
//! whose borrow keeps the handle and its answers alive.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_long, c_uint, c_void};

use curl::easy::Easy2;
use curl_sys::{CURLcode, CURL, CURLE_OK, CURLINFO};

use crate::probe::transfer::{
    HeaderCapture, TransferFacts, MAX_HEADERS, MAX_HEADER_BYTES, MAX_TEXT,
};

// curl.h (8.x) info ids that curl-sys does not export.
// The family of an id is in its high bits: what libcurl writes for it.
const CURLINFO_TYPEMASK: CURLINFO = 0xf00000;
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

/// libcurl's answers about the last transfer of `easy`, as `--write-out`
/// reads them, with the response headers `wanted` asks for. What only we
/// know (the result, the URL asked for, the certificates) is left as
/// `NOT_STARTED` has it.
pub fn transfer_facts<H>(easy: &Easy2<H>, wanted: &HeaderCapture) -> TransferFacts {
    let (num_headers, headers) = response_headers(easy, wanted);
    TransferFacts {
        url_effective: string(easy, curl_sys::CURLINFO_EFFECTIVE_URL),
        method: string(easy, CURLINFO_EFFECTIVE_METHOD),
        scheme: string(easy, CURLINFO_SCHEME),
        content_type: string(easy, curl_sys::CURLINFO_CONTENT_TYPE),
        redirect_url: string(easy, curl_sys::CURLINFO_REDIRECT_URL),
        referer: string(easy, CURLINFO_REFERER),
        local_ip: string(easy, curl_sys::CURLINFO_LOCAL_IP),
        local_port: long(easy, curl_sys::CURLINFO_LOCAL_PORT),
        size_download: off_t(easy, CURLINFO_SIZE_DOWNLOAD_T),
        size_delivered: off_t(easy, CURLINFO_SIZE_DELIVERED),
        size_upload: off_t(easy, CURLINFO_SIZE_UPLOAD_T),
        size_header: long(easy, curl_sys::CURLINFO_HEADER_SIZE),
        size_request: long(easy, curl_sys::CURLINFO_REQUEST_SIZE),
        speed_download: off_t(easy, CURLINFO_SPEED_DOWNLOAD_T),
        speed_upload: off_t(easy, CURLINFO_SPEED_UPLOAD_T),
        ssl_verify_result: long(easy, curl_sys::CURLINFO_SSL_VERIFYRESULT),
        proxy_ssl_verify_result: long(easy, CURLINFO_PROXY_SSL_VERIFYRESULT),
        http_connect: long(easy, curl_sys::CURLINFO_HTTP_CONNECTCODE),
        num_redirects: long(easy, curl_sys::CURLINFO_REDIRECT_COUNT),
        proxy_used: long(easy, CURLINFO_USED_PROXY),
        conn_id: off_t(easy, CURLINFO_CONN_ID),
        xfer_id: off_t(easy, CURLINFO_XFER_ID),
        queue_us: off_t(easy, CURLINFO_QUEUE_TIME_T),
        redirect_us: off_t(easy, CURLINFO_REDIRECT_TIME_T),
        early_data_sent: off_t(easy, CURLINFO_EARLYDATA_SENT_T),
        num_headers,
        headers,
        ..TransferFacts::NOT_STARTED
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

/// A string libcurl holds for the last transfer of `easy`, copied (within
/// `MAX_TEXT`); `None` for an id of another family.
fn string<H>(easy: &Easy2<H>, info: CURLINFO) -> Option<String> {
    if info & CURLINFO_TYPEMASK != CURLINFO_STRING {
        return None;
    }
    let mut value: *const c_char = std::ptr::null();
    // SAFETY: the borrowed `Easy2` keeps its handle alive; the STRING family
    // (checked above) writes one `char*` (or NULL) through `&mut value`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(easy.raw(), info, &mut value) };
    if rc != CURLE_OK || value.is_null() {
        return None;
    }
    // SAFETY: a non-NULL answer is a NUL-terminated string owned by the
    // handle, unchanged until the handle is used again; copied right here.
    let text = unsafe { CStr::from_ptr(value) }.to_string_lossy();
    Some(bounded(&text, MAX_TEXT).to_string())
}

/// A number of the LONG family for the last transfer of `easy` (0: none, or
/// an id of another family).
#[allow(clippy::useless_conversion)] // c_long is i32 on some targets
fn long<H>(easy: &Easy2<H>, info: CURLINFO) -> i64 {
    if info & CURLINFO_TYPEMASK != CURLINFO_LONG {
        return 0;
    }
    let mut value: c_long = 0;
    // SAFETY: as in `string`; the LONG family writes one `long`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(easy.raw(), info, &mut value) };
    if rc == CURLE_OK {
        i64::from(value)
    } else {
        0
    }
}

/// A number of the OFF_T family for the last transfer of `easy` (0: none,
/// or an id of another family).
fn off_t<H>(easy: &Easy2<H>, info: CURLINFO) -> i64 {
    if info & CURLINFO_TYPEMASK != CURLINFO_OFF_T {
        return 0;
    }
    let mut value: curl_sys::curl_off_t = 0;
    // SAFETY: as in `string`; the OFF_T family writes one `curl_off_t`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(easy.raw(), info, &mut value) };
    if rc == CURLE_OK {
        value
    } else {
        0
    }
}

/// The headers of the last response, as libcurl stored them while it read
/// them: how many there were, and copies of those `wanted` asks for.
fn response_headers<H>(easy: &Easy2<H>, wanted: &HeaderCapture) -> (u32, Vec<(String, String)>) {
    let mut count = 0u32;
    let mut kept = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    let mut prev: *mut CurlHeader = std::ptr::null_mut();
    loop {
        // SAFETY: the borrowed `Easy2` keeps its handle alive; `prev` is NULL
        // or the entry libcurl returned last, and the handle has not been
        // used since (it is borrowed shared), so libcurl's list is unchanged.
        // request -1 is the last request.
        let header = unsafe { curl_easy_nextheader(easy.raw(), CURLH_HEADER, -1, prev) };
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

    struct Quiet;
    impl curl::easy::Handler for Quiet {}

    #[test]
    fn a_handle_that_ran_nothing_has_no_answers_and_families_are_kept_apart() {
        let easy = Easy2::new(Quiet);
        let facts = transfer_facts(&easy, &HeaderCapture::All);
        assert_eq!((facts.num_headers, facts.headers.len()), (0, 0));
        assert_eq!(string(&easy, CURLINFO_CONN_ID), None);
        assert_eq!(long(&easy, CURLINFO_SCHEME), 0);
        assert_eq!(off_t(&easy, CURLINFO_USED_PROXY), 0);
    }
}

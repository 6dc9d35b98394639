//! `curl_easy_getinfo` for what the `curl` crate does not read: libcurl's
//! microsecond timers, the early-data count, the verification verdict, the
//! HTTP version. The raw readers are `unsafe fn`s with the handle's
//! liveness as their contract; the readers of a finished transfer take the
//! `Easy2` itself, which proves it.

use std::os::raw::c_long;

use curl::easy::Easy2;
use curl_sys::{CURLcode, CURL, CURLE_OK, CURLINFO};

use crate::probe::config::EarlyData;
use crate::probe::types::{CurlTimers, Proto};

// curl.h: the family of an info id is in its high bits, and says what
// libcurl writes through the pointer it is given.
const CURLINFO_TYPEMASK: CURLINFO = 0xf00000;
pub(super) const CURLINFO_OFF_T: CURLINFO = 0x600000;
// Constants from curl.h (8.10+) that curl-sys does not export.
const CURLINFO_TOTAL_TIME_T: CURLINFO = CURLINFO_OFF_T + 50;
pub(super) const CURLINFO_NAMELOOKUP_TIME_T: CURLINFO = CURLINFO_OFF_T + 51;
const CURLINFO_CONNECT_TIME_T: CURLINFO = CURLINFO_OFF_T + 52;
const CURLINFO_PRETRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 53;
const CURLINFO_STARTTRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 54;
pub(super) const CURLINFO_APPCONNECT_TIME_T: CURLINFO = CURLINFO_OFF_T + 56;
const CURLINFO_POSTTRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 67;
// curl.h (8.11+): bytes of TLS early data sent; negative when the server
// rejected them, 0 when none were sent.
const CURLINFO_EARLYDATA_SENT_T: CURLINFO = CURLINFO_OFF_T + 68;
const CURLINFO_HTTP_VERSION: CURLINFO = curl_sys::CURLINFO_LONG + 46;

// curl.h: CURL_HTTP_VERSION_* as reported by CURLINFO_HTTP_VERSION.
const CURL_HTTP_VERSION_1_0: c_long = 1;
const CURL_HTTP_VERSION_1_1: c_long = 2;
const CURL_HTTP_VERSION_2_0: c_long = 3;
const CURL_HTTP_VERSION_3: c_long = 30;

/// A number of the OFF_T family (a timer, a count); 0 when libcurl has none
/// or it is negative.
///
/// # Safety
/// `raw` must be an easy handle alive for the whole call: an `Easy2`'s own
/// (borrowed by the caller), or a `LiveHandle`'s inside a callback of its
/// running transfer. `info` must be of the OFF_T family.
pub(super) unsafe fn off_t_raw(raw: *mut CURL, info: CURLINFO) -> u64 {
    let mut value: curl_sys::curl_off_t = 0;
    // SAFETY: a live handle (the caller's contract); the OFF_T family
    // writes one curl_off_t through `&mut value`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    if rc == CURLE_OK && value > 0 {
        value as u64
    } else {
        0
    }
}

/// A timer in microseconds, saturating at u32::MAX (71 minutes).
///
/// # Safety
/// As for `off_t_raw`.
pub(super) unsafe fn us_raw(raw: *mut CURL, info: CURLINFO) -> u32 {
    // SAFETY: the caller's contract is `off_t_raw`'s.
    unsafe { off_t_raw(raw, info) }.min(u64::from(u32::MAX)) as u32
}

/// A timer of the last transfer of `easy`, in microseconds; 0 for an id
/// outside the OFF_T family (libcurl would write another type).
fn timer_us<H>(easy: &Easy2<H>, info: CURLINFO) -> u32 {
    if info & CURLINFO_TYPEMASK != CURLINFO_OFF_T {
        return 0;
    }
    // SAFETY: the borrowed `Easy2` keeps its handle alive; the family is checked above.
    unsafe { us_raw(easy.raw(), info) }
}

/// A number of the LONG family for the last transfer of `easy`; `None`
/// when libcurl has none, or for an id of another family.
fn long<H>(easy: &Easy2<H>, info: CURLINFO) -> Option<c_long> {
    if info & CURLINFO_TYPEMASK != curl_sys::CURLINFO_LONG {
        return None;
    }
    let mut value: c_long = 0;
    // SAFETY: the borrowed `Easy2` keeps its handle alive; the LONG family
    // (checked above) writes one `long`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(easy.raw(), info, &mut value) };
    (rc == CURLE_OK).then_some(value)
}

/// libcurl's own timers for the last transfer of `easy`.
pub fn timers<H>(easy: &Easy2<H>) -> CurlTimers {
    CurlTimers {
        namelookup_us: timer_us(easy, CURLINFO_NAMELOOKUP_TIME_T),
        connect_us: timer_us(easy, CURLINFO_CONNECT_TIME_T),
        appconnect_us: timer_us(easy, CURLINFO_APPCONNECT_TIME_T),
        pretransfer_us: timer_us(easy, CURLINFO_PRETRANSFER_TIME_T),
        posttransfer_us: timer_us(easy, CURLINFO_POSTTRANSFER_TIME_T),
        starttransfer_us: timer_us(easy, CURLINFO_STARTTRANSFER_TIME_T),
        total_us: timer_us(easy, CURLINFO_TOTAL_TIME_T),
        num_connects: easy.num_connects().unwrap_or(0) as u32,
    }
}

/// Whether the last transfer sent TLS early data and what the server made of
/// it: libcurl's signed byte count (> 0 accepted, < 0 rejected, 0 none).
pub fn early_data<H>(easy: &Easy2<H>) -> EarlyData {
    let mut value: curl_sys::curl_off_t = 0;
    // SAFETY: the handle is live (borrowed); the OFF_T family writes one
    // curl_off_t through `&mut value`.
    let rc =
        unsafe { curl_sys::curl_easy_getinfo(easy.raw(), CURLINFO_EARLYDATA_SENT_T, &mut value) };
    match (rc, value) {
        (CURLE_OK, v) if v > 0 => EarlyData::Accepted,
        (CURLE_OK, v) if v < 0 => EarlyData::Rejected,
        _ => EarlyData::NotSent,
    }
}

/// OpenSSL's certificate verification verdict (an `X509_V_ERR_*` value).
pub fn verify_result<H>(easy: &Easy2<H>) -> i64 {
    #[allow(clippy::useless_conversion)] // c_long is i32 on some targets
    long(easy, curl_sys::CURLINFO_SSL_VERIFYRESULT)
        .map(i64::from)
        .unwrap_or(0)
}

/// The HTTP version the last response used.
pub fn http_version<H>(easy: &Easy2<H>) -> Option<Proto> {
    match long(easy, CURLINFO_HTTP_VERSION)? {
        CURL_HTTP_VERSION_1_0 => Some(Proto::Http10),
        CURL_HTTP_VERSION_1_1 => Some(Proto::Http11),
        CURL_HTTP_VERSION_2_0 => Some(Proto::H2),
        CURL_HTTP_VERSION_3 => Some(Proto::H3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl curl::easy::Handler for Quiet {}

    #[test]
    fn a_handle_that_ran_nothing_reads_as_nothing_and_families_are_kept_apart() {
        let easy = Easy2::new(Quiet);
        assert_eq!(timers(&easy), CurlTimers::default());
        assert_eq!(http_version(&easy), None);
        assert_eq!(early_data(&easy), EarlyData::NotSent);
        // An id of one family is never read as another.
        assert_eq!(long(&easy, CURLINFO_TOTAL_TIME_T), None);
        assert_eq!(timer_us(&easy, CURLINFO_HTTP_VERSION), 0);
        assert_eq!(long(&easy, CURLINFO_HTTP_VERSION), Some(0));
    }
}

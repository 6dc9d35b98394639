//! `curl_easy_getinfo`, called in one place (`getinfo`), and the readers
//! of a finished transfer built on it. Those take the `Easy2` itself, whose
//! borrow keeps the handle and its answers alive; `LiveHandle` reads with
//! `getinfo` from inside a callback of the running transfer.

use std::ffi::CStr;

use curl::easy::Easy2;
use curl_sys::{CURL, CURLE_OK};

use super::info::{Family, Info, Long, OffT, Str};

/// libcurl's answer for `info` about the transfer of `raw`; `None` when it
/// has none.
///
/// # Safety
/// `raw` must be an easy handle alive for the whole call: an `Easy2`'s own
/// (borrowed by the caller), or a `LiveHandle`'s inside a callback of its
/// running transfer.
pub(super) unsafe fn getinfo<F: Family>(raw: *mut CURL, info: Info<F>) -> Option<F::Value> {
    let mut value = F::EMPTY;
    // SAFETY: a live handle (the caller's contract); `info` is of the family
    // `F` (checked where it was made), for which libcurl writes one
    // `F::Value` through the pointer.
    let rc = unsafe { curl_sys::curl_easy_getinfo(raw, info.id(), &mut value as *mut F::Value) };
    (rc == CURLE_OK).then_some(value)
}

/// A number of the LONG family for the last transfer of `easy`; `None`
/// when libcurl has none.
#[allow(clippy::useless_conversion)] // c_long is i32 on some targets
pub fn long<H>(easy: &Easy2<H>, info: Info<Long>) -> Option<i64> {
    // SAFETY: the borrowed `Easy2` keeps its handle alive.
    unsafe { getinfo(easy.raw(), info) }.map(i64::from)
}

/// A number of the OFF_T family for the last transfer of `easy`, as
/// libcurl has it (a negative one included); `None` when it has none.
pub fn off_t<H>(easy: &Easy2<H>, info: Info<OffT>) -> Option<i64> {
    // SAFETY: the borrowed `Easy2` keeps its handle alive.
    unsafe { getinfo(easy.raw(), info) }
}

/// A number of the OFF_T family (a timer, a count); 0 when libcurl has none
/// or it is negative.
///
/// # Safety
/// As for `getinfo`.
pub(super) unsafe fn count_raw(raw: *mut CURL, info: Info<OffT>) -> u64 {
    // SAFETY: the caller's contract is `getinfo`'s.
    let value = unsafe { getinfo(raw, info) };
    value.filter(|&v| v > 0).map_or(0, |v| v as u64)
}

/// A timer in microseconds, saturating at u32::MAX (71 minutes); 0 when
/// libcurl has none.
///
/// # Safety
/// As for `getinfo`.
pub(super) unsafe fn us_raw(raw: *mut CURL, info: Info<OffT>) -> u32 {
    // SAFETY: the caller's contract is `getinfo`'s.
    unsafe { count_raw(raw, info) }.min(u64::from(u32::MAX)) as u32
}

/// A timer of the last transfer of `easy`, in microseconds (0: none).
pub fn timer_us<H>(easy: &Easy2<H>, info: Info<OffT>) -> u32 {
    // SAFETY: the borrowed `Easy2` keeps its handle alive.
    unsafe { us_raw(easy.raw(), info) }
}

/// A string libcurl holds for the last transfer of `easy`, copied (within
/// `max` bytes, cut at a character boundary).
pub fn text<H>(easy: &Easy2<H>, info: Info<Str>, max: usize) -> Option<String> {
    // SAFETY: the borrowed `Easy2` keeps its handle alive.
    let value = unsafe { getinfo(easy.raw(), info) }?;
    if value.is_null() {
        return None;
    }
    // SAFETY: a non-NULL answer is a NUL-terminated string owned by the
    // handle, unchanged until the handle is used again; copied right here.
    let text = unsafe { CStr::from_ptr(value) }.to_string_lossy();
    Some(bounded(&text, max).to_string())
}

/// No list libcurl hands us is walked further than this.
const MAX_CERTINFO_ENTRIES: usize = 256;

/// The PEM of the first certificate (the server's own) that libcurl
/// gathered in the last transfer of `easy`, set to (`CURLOPT_CERTINFO`).
/// libcurl gathers them before it checks the certificate, so a transfer
/// that check failed has them too. Copied within `max` bytes; `None`
/// without one.
pub fn first_certificate_pem<H>(easy: &Easy2<H>, max: usize) -> Option<String> {
    // SAFETY: the borrowed `Easy2` keeps its handle alive.
    let info = unsafe { getinfo(easy.raw(), super::info::CURLINFO_CERTINFO) }?;
    let info = info.cast::<curl_sys::curl_certinfo>().cast_const();
    if info.is_null() {
        return None;
    }
    // SAFETY: for CURLINFO_CERTINFO libcurl writes a pointer to its own
    // `struct curl_certinfo`, owned by the handle and left as it is until
    // the handle is used again (it is borrowed for this call); read only.
    let info = unsafe { &*info };
    if info.num_of_certs < 1 || info.certinfo.is_null() {
        return None;
    }
    // SAFETY: `certinfo` points to `num_of_certs` (at least one) list heads.
    let mut entry = unsafe { *info.certinfo };
    for _ in 0..MAX_CERTINFO_ENTRIES {
        if entry.is_null() {
            break;
        }
        // SAFETY: a non-NULL node of libcurl's list, alive as above.
        let node = unsafe { &*entry };
        if !node.data.is_null() {
            // SAFETY: each node holds a NUL-terminated `Key:value` string of libcurl's.
            let text = unsafe { CStr::from_ptr(node.data) }.to_bytes();
            if let Some(pem) = text.strip_prefix(b"Cert:") {
                return Some(bounded(&String::from_utf8_lossy(pem), max).to_string());
            }
        }
        entry = node.next;
    }
    None
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
    use super::super::info::*;
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
    fn a_handle_that_ran_nothing_has_no_answers() {
        let easy = Easy2::new(Quiet);
        assert_eq!(timer_us(&easy, CURLINFO_TOTAL_TIME_T), 0);
        assert_eq!(off_t(&easy, CURLINFO_EARLYDATA_SENT_T), Some(0));
        assert_eq!(off_t(&easy, CURLINFO_CONN_ID), Some(-1));
        assert_eq!(long(&easy, CURLINFO_HTTP_VERSION), Some(0));
        assert_eq!(text(&easy, CURLINFO_SCHEME, 64), None);
        assert_eq!(first_certificate_pem(&easy, 1 << 16), None);
    }
}

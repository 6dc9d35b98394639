//! libcurl's header API (`curl_easy_nextheader`): the headers of a finished
//! transfer's last response, as libcurl stored them while it read them.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};

use curl::easy::Easy2;
use curl_sys::CURL;

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

/// Shows `each` every header of the last response of `easy`, in the order
/// it came: its name, and its value's bytes, both borrowed from libcurl for
/// the call (copy what is kept).
pub fn each_response_header<H>(easy: &Easy2<H>, mut each: impl FnMut(&str, &[u8])) {
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
        // SAFETY: a non-NULL entry is libcurl's, valid until the next call on
        // the handle; its name and value are NUL-terminated strings, borrowed
        // only until `each` returns.
        let (name, value) = unsafe {
            let h = &*header;
            (CStr::from_ptr(h.name), CStr::from_ptr(h.value))
        };
        each(&name.to_string_lossy(), value.to_bytes());
        prev = header;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl curl::easy::Handler for Quiet {}

    #[test]
    fn a_handle_that_ran_nothing_has_no_headers() {
        let easy = Easy2::new(Quiet);
        let mut seen = 0;
        each_response_header(&easy, |_, _| seen += 1);
        assert_eq!(seen, 0);
    }
}

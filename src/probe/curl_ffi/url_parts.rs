//! The parts of a URL as libcurl's URL API splits them, which is how curl
//! answers its `url.*` and `urle.*` write-out variables: the same parser,
//! so the same answers (the default port filled in, a missing part absent).

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uint};

/// One part of a URL (curl's `CURLUPart`, in curl's numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlPart {
    Scheme = 1,
    User = 2,
    Password = 3,
    Options = 4,
    Host = 5,
    Port = 6,
    Path = 7,
    Query = 8,
    Fragment = 9,
    ZoneId = 10,
}

#[repr(C)]
struct Curlu {
    _private: [u8; 0],
}

// curl/urlapi.h flags curl's write-out parses and reads with.
const CURLU_DEFAULT_PORT: c_uint = 1 << 0;
const CURLU_NON_SUPPORT_SCHEME: c_uint = 1 << 3;
const CURLU_GUESS_SCHEME: c_uint = 1 << 9;
const CURLUPART_URL: c_int = 0;
const CURLUE_OK: c_int = 0;

extern "C" {
    // libcurl's URL API (7.62+), compiled into curl-sys but not bound there.
    fn curl_url() -> *mut Curlu;
    fn curl_url_cleanup(handle: *mut Curlu);
    fn curl_url_set(handle: *mut Curlu, what: c_int, part: *const c_char, flags: c_uint) -> c_int;
    fn curl_url_get(
        handle: *const Curlu,
        what: c_int,
        part: *mut *mut c_char,
        flags: c_uint,
    ) -> c_int;
}

/// A URL parsed by libcurl; freed on drop.
pub struct UrlParts(*mut Curlu);

impl UrlParts {
    /// `None` when libcurl cannot parse `url`.
    pub fn parse(url: &str) -> Option<UrlParts> {
        let text = CString::new(url).ok()?;
        // SAFETY: curl_url has no preconditions; it returns a handle we own or NULL.
        let handle = unsafe { curl_url() };
        if handle.is_null() {
            return None;
        }
        let parts = UrlParts(handle);
        // SAFETY: our live handle and a NUL-terminated string, which libcurl
        // copies before returning.
        let rc = unsafe {
            curl_url_set(
                parts.0,
                CURLUPART_URL,
                text.as_ptr(),
                CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME,
            )
        };
        (rc == CURLUE_OK).then_some(parts)
    }

    /// One part, `None` when the URL has none (no query, no user...).
    pub fn get(&self, part: UrlPart) -> Option<String> {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: our live handle; on success libcurl points `out` at a new
        // string we must release with curl_free.
        let rc = unsafe { curl_url_get(self.0, part as c_int, &mut out, CURLU_DEFAULT_PORT) };
        if rc != CURLUE_OK || out.is_null() {
            return None;
        }
        // SAFETY: `out` is libcurl's NUL-terminated string, copied, then freed once.
        unsafe {
            let text = CStr::from_ptr(out).to_string_lossy().into_owned();
            curl_sys::curl_free(out as *mut std::os::raw::c_void);
            Some(text)
        }
    }
}

impl Drop for UrlParts {
    fn drop(&mut self) {
        // SAFETY: we own the handle (from `parse`) and free it once.
        unsafe { curl_url_cleanup(self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_libcurls_with_the_default_port() {
        let url = UrlParts::parse("https://user:pw@example.test/a/b?q=1#top").unwrap();
        assert_eq!(url.get(UrlPart::Scheme).as_deref(), Some("https"));
        assert_eq!(url.get(UrlPart::User).as_deref(), Some("user"));
        assert_eq!(url.get(UrlPart::Password).as_deref(), Some("pw"));
        assert_eq!(url.get(UrlPart::Host).as_deref(), Some("example.test"));
        assert_eq!(url.get(UrlPart::Port).as_deref(), Some("443"));
        assert_eq!(url.get(UrlPart::Path).as_deref(), Some("/a/b"));
        assert_eq!(url.get(UrlPart::Query).as_deref(), Some("q=1"));
        assert_eq!(url.get(UrlPart::Fragment).as_deref(), Some("top"));
        assert_eq!(url.get(UrlPart::Options), None);
        assert_eq!(url.get(UrlPart::ZoneId), None);

        let bare = UrlParts::parse("https://[::1]:8443/").unwrap();
        assert_eq!(bare.get(UrlPart::Host).as_deref(), Some("[::1]"));
        assert_eq!(bare.get(UrlPart::Port).as_deref(), Some("8443"));
        assert_eq!(bare.get(UrlPart::Query), None);
        assert_eq!(bare.get(UrlPart::User), None);
        assert!(UrlParts::parse("https://exa mple/").is_none());
        assert!(UrlParts::parse("nul\0byte").is_none());
    }
}

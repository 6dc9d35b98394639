//! `curl_easy_setopt`, called in one place (`setopt`), for the options the
//! `curl` crate has no method for: each defined once below, typed by what
//! it takes, and the simple ones set here.

use std::marker::PhantomData;
use std::os::raw::{c_long, c_void};

use curl::easy::Easy2;
use curl_sys::{CURLoption, CURLE_OK};

/// What the options of one kind take (curl.h's `CURLOPTTYPE_*` ranges).
pub trait Takes {
    /// The argument libcurl reads for such an option.
    type Value: Copy;
    /// The kind's range of option ids.
    const IDS: std::ops::Range<CURLoption>;
}

/// A `long` (`CURLOPTTYPE_LONG`).
#[derive(Clone, Copy, Debug)]
pub struct Long;
/// A pointer: a string, data, or a callback (`CURLOPTTYPE_OBJECTPOINT`,
/// `_FUNCTIONPOINT`).
#[derive(Clone, Copy, Debug)]
pub struct Ptr;

impl Takes for Long {
    type Value = c_long;
    const IDS: std::ops::Range<CURLoption> =
        curl_sys::CURLOPTTYPE_LONG..curl_sys::CURLOPTTYPE_OBJECTPOINT;
}

impl Takes for Ptr {
    type Value = *const c_void;
    const IDS: std::ops::Range<CURLoption> =
        curl_sys::CURLOPTTYPE_OBJECTPOINT..curl_sys::CURLOPTTYPE_OFF_T;
}

/// An option that takes what `T` says.
#[derive(Clone, Copy, Debug)]
pub struct Opt<T>(CURLoption, PhantomData<T>);

impl<T: Takes> Opt<T> {
    /// `id` as an option taking `T`; one of another kind is refused when the
    /// constant is compiled.
    const fn of(id: CURLoption) -> Opt<T> {
        assert!(
            id >= T::IDS.start && id < T::IDS.end,
            "an option of another kind"
        );
        Opt(id, PhantomData)
    }
}

/// A string: the key-exchange groups to offer (OpenSSL names).
const CURLOPT_SSL_EC_CURVES: Opt<Ptr> = Opt::of(curl_sys::CURLOPTTYPE_OBJECTPOINT + 298);
/// The whole `CURLSSLOPT_*` mask.
const CURLOPT_SSL_OPTIONS: Opt<Long> = Opt::of(curl_sys::CURLOPT_SSL_OPTIONS);
/// A string, or NULL for none.
pub(super) const CURLOPT_CAINFO: Opt<Ptr> = Opt::of(curl_sys::CURLOPT_CAINFO);
/// A string, or NULL for none.
pub(super) const CURLOPT_CAPATH: Opt<Ptr> = Opt::of(curl_sys::CURLOPT_CAPATH);
/// A `curl_closesocket_callback`, and the pointer it is given.
pub(super) const CURLOPT_CLOSESOCKETFUNCTION: Opt<Ptr> =
    Opt::of(curl_sys::CURLOPT_CLOSESOCKETFUNCTION);
pub(super) const CURLOPT_CLOSESOCKETDATA: Opt<Ptr> = Opt::of(curl_sys::CURLOPT_CLOSESOCKETDATA);
/// curl.h (7.80+): a `curl_prereq_callback`, and the pointer it is given.
pub(super) const CURLOPT_PREREQFUNCTION: Opt<Ptr> =
    Opt::of(curl_sys::CURLOPTTYPE_FUNCTIONPOINT + 312);
pub(super) const CURLOPT_PREREQDATA: Opt<Ptr> = Opt::of(curl_sys::CURLOPTTYPE_OBJECTPOINT + 313);
/// curl.h (8.3): 1 lets the handle go without waiting for its resolver thread.
const CURLOPT_QUICK_EXIT: Opt<Long> = Opt::of(curl_sys::CURLOPTTYPE_LONG + 322);

// curl.h: CURLSSLOPT_EARLYDATA, a bit of CURLOPT_SSL_OPTIONS.
const CURLSSLOPT_EARLYDATA: c_long = 1 << 6;

/// Sets `opt` on the handle of `easy`; libcurl's refusal as the `curl`
/// crate reports its own.
///
/// # Safety
/// `value` must be what libcurl documents for `opt` and live as long as
/// libcurl keeps it: a string it copies, a callback of the option's
/// prototype, data that outlives every use libcurl makes of it.
pub(super) unsafe fn setopt<H, T: Takes>(
    easy: &Easy2<H>,
    opt: Opt<T>,
    value: T::Value,
) -> Result<(), curl::Error> {
    // SAFETY: the borrowed `Easy2` keeps its handle alive; `opt` takes a
    // `T::Value` (checked where it was made), and the value is what the
    // option documents (the caller's contract).
    let rc = unsafe { curl_sys::curl_easy_setopt(easy.raw(), opt.0, value) };
    if rc == CURLE_OK {
        Ok(())
    } else {
        Err(curl::Error::new(rc))
    }
}

/// Offers exactly these key-exchange groups (`X25519:P-256`, OpenSSL names;
/// libcurl copies the string).
pub fn set_curves<H>(easy: &mut Easy2<H>, list: &str) -> Result<(), curl::Error> {
    let c = std::ffi::CString::new(list)
        .map_err(|_| curl::Error::new(curl_sys::CURLE_BAD_FUNCTION_ARGUMENT))?;
    // SAFETY: the option takes a C string, which libcurl copies before
    // returning, so `c` may go after this call.
    unsafe { setopt(easy, CURLOPT_SSL_EC_CURVES, c.as_ptr().cast()) }
}

/// Lets libcurl send the request as TLS 1.3 early data when it resumes a
/// session that allows it (this sets the whole CURLOPT_SSL_OPTIONS mask,
/// which nothing else of ours sets).
pub fn allow_early_data<H>(easy: &mut Easy2<H>) -> Result<(), curl::Error> {
    // SAFETY: CURLOPT_SSL_OPTIONS takes a mask of CURLSSLOPT_* bits.
    unsafe { setopt(easy, CURLOPT_SSL_OPTIONS, CURLSSLOPT_EARLYDATA) }
}

/// Lets the handle go without waiting for a lookup still running in
/// libcurl's resolver thread (`CURLOPT_QUICK_EXIT`).
pub fn quick_exit<H>(easy: &mut Easy2<H>) -> Result<(), curl::Error> {
    // SAFETY: QUICK_EXIT takes 0 or 1.
    unsafe { setopt(easy, CURLOPT_QUICK_EXIT, 1) }
}

/// A long, on a multi handle: libcurl (8.22) keeps its resolver threads
/// per multi handle and joins them when the multi goes, unless this is 1.
const CURLMOPT_QUICK_EXIT: curl_sys::CURLMoption = curl_sys::CURLOPTTYPE_LONG + 21;

/// Lets `multi` go without waiting for a lookup still running in one of
/// its resolver threads (`CURLMOPT_QUICK_EXIT`), as `quick_exit` does for
/// a handle that runs without a multi handle of ours.
pub fn multi_quick_exit(multi: &curl::multi::Multi) -> Result<(), curl::MultiError> {
    // SAFETY: the multi handle is live for this call, and QUICK_EXIT reads
    // one long, 0 or 1.
    let rc = unsafe { curl_sys::curl_multi_setopt(multi.raw(), CURLMOPT_QUICK_EXIT, 1 as c_long) };
    if rc == curl_sys::CURLM_OK {
        Ok(())
    } else {
        Err(curl::MultiError::new(rc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_handle_takes_the_quick_exit() {
        assert!(multi_quick_exit(&curl::multi::Multi::new()).is_ok());
    }

    #[test]
    fn an_option_of_another_kind_is_refused() {
        // In a constant this is a compile error; here, a panic.
        let ptr = curl_sys::CURLOPT_CAINFO;
        assert!(std::panic::catch_unwind(|| Opt::<Long>::of(ptr)).is_err());
        let long = curl_sys::CURLOPT_SSL_OPTIONS;
        assert!(std::panic::catch_unwind(|| Opt::<Ptr>::of(long)).is_err());
    }

    struct Quiet;
    impl curl::easy::Handler for Quiet {}

    #[test]
    fn libcurls_refusal_is_an_error() {
        let mut easy = Easy2::new(Quiet);
        assert!(set_curves(&mut easy, "X25519:P-256").is_ok());
        assert!(allow_early_data(&mut easy).is_ok());
        assert!(quick_exit(&mut easy).is_ok());
        assert!(set_curves(&mut easy, "nul\0byte").is_err());
        // libcurl refuses a string option longer than CURL_MAX_INPUT_LENGTH.
        let long = "X25519:".repeat(8_000_000 / 7 + 1);
        let refused = set_curves(&mut easy, &long).unwrap_err();
        assert_eq!(refused.code(), curl_sys::CURLE_BAD_FUNCTION_ARGUMENT);
    }
}

//! Every `CURLINFO_*` id we read, defined once, each typed by the family
//! libcurl writes for it, so no id can be read as another family's value
//! (`getinfo` writes through a pointer of the family's type).

use std::marker::PhantomData;
use std::os::raw::{c_long, c_void};

use curl_sys::{curl_off_t, curl_socket_t, CURLINFO};

/// One family of info ids (the high bits of an id): what libcurl writes for them.
pub trait Family {
    /// The value libcurl writes through the pointer it is given.
    type Value: Copy;
    /// The value before libcurl writes one.
    const EMPTY: Self::Value;
    /// The family's bits in an id (curl.h's `CURLINFO_STRING`, `_LONG`...).
    const BITS: CURLINFO;
}

/// A `char*` owned by the handle (or NULL).
#[derive(Clone, Copy, Debug)]
pub struct Str;
/// A `long`.
#[derive(Clone, Copy, Debug)]
pub struct Long;
/// A pointer to libcurl's own data (`CURLINFO_PTR`, the same bits as `_SLIST`).
#[derive(Clone, Copy, Debug)]
pub struct Ptr;
/// A `curl_socket_t`.
#[derive(Clone, Copy, Debug)]
pub struct Socket;
/// A `curl_off_t` (timers in microseconds, sizes, counts, ids).
#[derive(Clone, Copy, Debug)]
pub struct OffT;

impl Family for Str {
    type Value = *const std::os::raw::c_char;
    const EMPTY: Self::Value = std::ptr::null();
    const BITS: CURLINFO = curl_sys::CURLINFO_STRING;
}

impl Family for Long {
    type Value = c_long;
    const EMPTY: c_long = 0;
    const BITS: CURLINFO = curl_sys::CURLINFO_LONG;
}

impl Family for Ptr {
    type Value = *mut c_void;
    const EMPTY: Self::Value = std::ptr::null_mut();
    const BITS: CURLINFO = 0x400000;
}

impl Family for Socket {
    type Value = curl_socket_t;
    const EMPTY: curl_socket_t = -1;
    const BITS: CURLINFO = 0x500000;
}

impl Family for OffT {
    type Value = curl_off_t;
    const EMPTY: curl_off_t = 0;
    const BITS: CURLINFO = 0x600000;
}

/// An info id of the family `F`.
#[derive(Clone, Copy, Debug)]
pub struct Info<F>(CURLINFO, PhantomData<F>);

impl<F: Family> Info<F> {
    /// `id` as one of family `F`; an id of another family is refused when
    /// the constant is compiled.
    pub(super) const fn of(id: CURLINFO) -> Info<F> {
        assert!(
            id & curl_sys::CURLINFO_TYPEMASK == F::BITS,
            "an info id of another family"
        );
        Info(id, PhantomData)
    }

    pub(super) fn id(self) -> CURLINFO {
        self.0
    }
}

// Strings.
pub const CURLINFO_EFFECTIVE_URL: Info<Str> = Info::of(curl_sys::CURLINFO_EFFECTIVE_URL);
pub const CURLINFO_CONTENT_TYPE: Info<Str> = Info::of(curl_sys::CURLINFO_CONTENT_TYPE);
pub const CURLINFO_REDIRECT_URL: Info<Str> = Info::of(curl_sys::CURLINFO_REDIRECT_URL);
pub const CURLINFO_LOCAL_IP: Info<Str> = Info::of(curl_sys::CURLINFO_LOCAL_IP);
// curl.h ids that curl-sys does not export, from here on.
pub const CURLINFO_SCHEME: Info<Str> = Info::of(Str::BITS + 49);
pub const CURLINFO_EFFECTIVE_METHOD: Info<Str> = Info::of(Str::BITS + 58);
pub const CURLINFO_REFERER: Info<Str> = Info::of(Str::BITS + 60);

// Longs.
pub const CURLINFO_HEADER_SIZE: Info<Long> = Info::of(curl_sys::CURLINFO_HEADER_SIZE);
pub const CURLINFO_REQUEST_SIZE: Info<Long> = Info::of(curl_sys::CURLINFO_REQUEST_SIZE);
/// OpenSSL's certificate verification verdict (an `X509_V_ERR_*` value).
pub const CURLINFO_SSL_VERIFYRESULT: Info<Long> = Info::of(curl_sys::CURLINFO_SSL_VERIFYRESULT);
pub const CURLINFO_REDIRECT_COUNT: Info<Long> = Info::of(curl_sys::CURLINFO_REDIRECT_COUNT);
pub const CURLINFO_HTTP_CONNECTCODE: Info<Long> = Info::of(curl_sys::CURLINFO_HTTP_CONNECTCODE);
pub const CURLINFO_LOCAL_PORT: Info<Long> = Info::of(curl_sys::CURLINFO_LOCAL_PORT);
/// The HTTP version of the last response (`CURL_HTTP_VERSION_*` below).
pub const CURLINFO_HTTP_VERSION: Info<Long> = Info::of(Long::BITS + 46);
pub const CURLINFO_PROXY_SSL_VERIFYRESULT: Info<Long> = Info::of(Long::BITS + 47);
pub const CURLINFO_USED_PROXY: Info<Long> = Info::of(Long::BITS + 66);

// curl.h: CURL_HTTP_VERSION_* as reported by CURLINFO_HTTP_VERSION.
pub const CURL_HTTP_VERSION_1_0: i64 = 1;
pub const CURL_HTTP_VERSION_1_1: i64 = 2;
pub const CURL_HTTP_VERSION_2_0: i64 = 3;
pub const CURL_HTTP_VERSION_3: i64 = 30;

// Pointers and sockets: read inside callbacks only (`LiveHandle`).
/// The connection's `struct curl_tlssessioninfo`.
pub(super) const CURLINFO_TLS_SSL_PTR: Info<Ptr> = Info::of(Ptr::BITS + 45);
/// The certificates libcurl gathered (`CURLOPT_CERTINFO`): a `struct
/// curl_certinfo`, read after the transfer (`first_certificate_pem`).
pub(super) const CURLINFO_CERTINFO: Info<Ptr> = Info::of(curl_sys::CURLINFO_CERTINFO);
/// The socket of the connection the transfer is using right now.
pub(super) const CURLINFO_ACTIVESOCKET: Info<Socket> = Info::of(Socket::BITS + 44);

// Timers (µs), sizes, speeds and ids.
pub const CURLINFO_SIZE_UPLOAD_T: Info<OffT> = Info::of(OffT::BITS + 7);
pub const CURLINFO_SIZE_DOWNLOAD_T: Info<OffT> = Info::of(OffT::BITS + 8);
pub const CURLINFO_SPEED_DOWNLOAD_T: Info<OffT> = Info::of(OffT::BITS + 9);
pub const CURLINFO_SPEED_UPLOAD_T: Info<OffT> = Info::of(OffT::BITS + 10);
pub const CURLINFO_TOTAL_TIME_T: Info<OffT> = Info::of(OffT::BITS + 50);
pub const CURLINFO_NAMELOOKUP_TIME_T: Info<OffT> = Info::of(OffT::BITS + 51);
pub const CURLINFO_CONNECT_TIME_T: Info<OffT> = Info::of(OffT::BITS + 52);
pub const CURLINFO_PRETRANSFER_TIME_T: Info<OffT> = Info::of(OffT::BITS + 53);
pub const CURLINFO_STARTTRANSFER_TIME_T: Info<OffT> = Info::of(OffT::BITS + 54);
pub const CURLINFO_REDIRECT_TIME_T: Info<OffT> = Info::of(OffT::BITS + 55);
pub const CURLINFO_APPCONNECT_TIME_T: Info<OffT> = Info::of(OffT::BITS + 56);
pub const CURLINFO_XFER_ID: Info<OffT> = Info::of(OffT::BITS + 63);
pub const CURLINFO_CONN_ID: Info<OffT> = Info::of(OffT::BITS + 64);
pub const CURLINFO_QUEUE_TIME_T: Info<OffT> = Info::of(OffT::BITS + 65);
pub const CURLINFO_POSTTRANSFER_TIME_T: Info<OffT> = Info::of(OffT::BITS + 67);
/// curl.h (8.11+): bytes of TLS early data sent; negative when the server
/// rejected them, 0 when none were sent.
pub const CURLINFO_EARLYDATA_SENT_T: Info<OffT> = Info::of(OffT::BITS + 68);
pub const CURLINFO_SIZE_DELIVERED: Info<OffT> = Info::of(OffT::BITS + 71);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_of_another_family_is_refused() {
        // In a constant this is a compile error; here, a panic.
        let id = CURLINFO_HTTP_VERSION.id();
        assert!(std::panic::catch_unwind(|| Info::<OffT>::of(id)).is_err());
        let id = CURLINFO_TOTAL_TIME_T.id();
        assert!(std::panic::catch_unwind(|| Info::<Long>::of(id)).is_err());
        assert_eq!(Info::<OffT>::of(id).id(), id);
    }
}

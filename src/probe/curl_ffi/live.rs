//! The easy handle as a handler sees it from inside libcurl's callbacks:
//! libcurl's lookup timer so far, the kernel's view of the connection, and
//! the TLS connection itself once its handshake is done, lent for the
//! length of a call.

use std::ffi::CStr;
use std::os::raw::c_void;
use std::ptr;

use curl::easy::Easy2;
use curl_sys::CURL;
use foreign_types::ForeignTypeRef;
use openssl::ssl::SslRef;

use super::getinfo;
use super::info::{
    CURLINFO_ACTIVESOCKET, CURLINFO_APPCONNECT_TIME_T, CURLINFO_NAMELOOKUP_TIME_T,
    CURLINFO_TLS_SSL_PTR,
};
use super::sockets::KernelTcp;

const CURLSSLBACKEND_OPENSSL: i32 = 1;

/// `struct curl_tlssessioninfo` from curl.h.
#[repr(C)]
struct TlsSessionInfo {
    backend: i32,
    internals: *mut c_void,
}

/// A raw easy handle that a handler may use from inside libcurl's callbacks.
/// Its methods are `unsafe`: the caller promises to be inside a callback of
/// the transfer running on this handle. One is made only from the `Easy2`
/// that owns the handler (`of`), and kept in that handler, so the pointer
/// lives as long as the handler can be called; a handler on no handle
/// holds `none`, which reads nothing.
#[derive(Clone, Copy, Debug)]
pub struct LiveHandle(*mut CURL);

impl LiveHandle {
    pub fn none() -> LiveHandle {
        LiveHandle(ptr::null_mut())
    }

    pub fn of<H>(easy: &Easy2<H>) -> LiveHandle {
        LiveHandle(easy.raw())
    }

    /// libcurl's name-lookup timer as it stands now: 0 while its lookup is
    /// still going on (libcurl 8.22 may connect on the first answer, A,
    /// while it waits for AAAA), else the lookup's end on its time line.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this handle.
    pub unsafe fn namelookup_so_far_us(self) -> u32 {
        if self.0.is_null() {
            return 0;
        }
        // SAFETY: inside a callback of the running transfer (the caller's
        // contract), so the handle is alive.
        unsafe { getinfo::us_raw(self.0, CURLINFO_NAMELOOKUP_TIME_T) }
    }

    /// The kernel's view of the transfer's TCP connection (`TCP_INFO` on the
    /// socket libcurl is using right now): smoothed RTT, minimum RTT (when
    /// the kernel reports it) and segments retransmitted over the
    /// connection's life, all as the kernel gives them.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this
    /// handle, while its connection is open.
    pub unsafe fn tcp_info(self) -> Option<KernelTcp> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: `self.0` is the running transfer's handle (caller's contract).
        let sock = unsafe { getinfo::getinfo(self.0, CURLINFO_ACTIVESOCKET) };
        let sock = sock.filter(|&s| s >= 0)?;
        // The socket stays open at least until this callback returns.
        super::sockets::read_tcp_info(sock)
    }

    /// Lends `read` the TLS connection of a handshake this transfer made,
    /// once it is complete, for the length of the call; `None` before that,
    /// and throughout a transfer on a reused connection (libcurl leaves its
    /// appconnect timer at 0 then), or without TLS.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this
    /// handle: the `SSL*` read here belongs to the connection and may be freed
    /// as soon as the transfer ends.
    pub unsafe fn with_new_handshake<R>(self, read: impl FnOnce(&SslRef) -> R) -> Option<R> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: inside a callback of the running transfer (the caller's
        // contract), so the handle is alive.
        let appconnect = unsafe { getinfo::count_raw(self.0, CURLINFO_APPCONNECT_TIME_T) };
        if appconnect == 0 {
            return None;
        }
        // SAFETY: `self.0` is the handle whose transfer is running right now
        // (we are inside its callback); TLS_SSL_PTR writes one pointer to a
        // libcurl-owned struct that stays valid for the rest of this callback.
        let info = unsafe { getinfo::getinfo(self.0, CURLINFO_TLS_SSL_PTR) };
        let info = info.filter(|p| !p.is_null())? as *const TlsSessionInfo;
        // SAFETY: non-null pointer to libcurl's curl_tlssessioninfo, valid
        // during this callback (see above); we copy the two fields out.
        let (backend, internals) = unsafe { ((*info).backend, (*info).internals) };
        if backend != CURLSSLBACKEND_OPENSSL || internals.is_null() {
            return None;
        }
        // SAFETY: with the OpenSSL backend, `internals` is the connection's
        // `SSL*`, alive while the transfer is; the borrow ends when `read`
        // returns, before this function does, and the openssl crate's
        // accessors `read` may call keep OpenSSL's own rules (taking the
        // OCSP staple out of it is `take_first_response`'s, which says why).
        let ssl: &SslRef = unsafe { SslRef::from_ptr(internals as *mut openssl_sys::SSL) };
        Some(read(ssl))
    }
}

/// The key-exchange group of the live connection `ssl` (OpenSSL's name),
/// borrowed from it.
pub fn group_name(ssl: &SslRef) -> Option<&CStr> {
    // SAFETY: `ssl` is live for the borrow; the returned C string is NULL or
    // OpenSSL's own name from its table of groups, alive at least as long as
    // the connection, and returned under `ssl`'s borrow.
    unsafe {
        let name = openssl_sys::SSL_get0_group_name(ssl.as_ptr());
        (!name.is_null()).then(|| CStr::from_ptr(name))
    }
}

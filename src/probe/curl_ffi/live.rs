//! The easy handle as a handler sees it from inside libcurl's callbacks:
//! libcurl's lookup timer so far, the kernel's view of the connection, and
//! the TLS connection's facts once its handshake is done.

use std::os::raw::c_void;
use std::ptr;

use curl::easy::Easy2;
use curl_sys::{CURL, CURLE_OK, CURLINFO};
use foreign_types::ForeignTypeRef;
use openssl::ssl::SslRef;

use super::getinfo;
use super::sockets::KernelTcp;
use crate::probe::ocsp::TakenStaple;
use crate::probe::types::{Proto, TlsFacts};

const CURLINFO_PTR: CURLINFO = 0x400000;
const CURLINFO_TLS_SSL_PTR: CURLINFO = CURLINFO_PTR + 45;
// curl.h: CURLINFO_SOCKET is 0x500000; ACTIVESOCKET writes a curl_socket_t.
const CURLINFO_ACTIVESOCKET: CURLINFO = 0x500000 + 44;
const CURLSSLBACKEND_OPENSSL: i32 = 1;

/// `struct curl_tlssessioninfo` from curl.h.
#[repr(C)]
struct TlsSessionInfo {
    backend: i32,
    internals: *mut c_void,
}

/// Names of key-exchange groups, kept for the whole run: there are only a
/// handful, and a `&'static str` keeps `TlsFacts` small and `Copy`.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// What a callback reads off the live TLS connection: the facts, and the
/// server's leaf certificate (a counted reference) to examine after the transfer.
pub struct LiveTls {
    pub facts: TlsFacts,
    pub leaf: Option<openssl::x509::X509>,
}

/// A raw easy handle that a handler may use from inside libcurl's callbacks.
/// Its methods are `unsafe`: the caller promises to be inside a callback of
/// the transfer running on this handle. The only place that sets one is
/// `ProbeHandle::new`, from the `Easy2` that owns the handler (the field is
/// private to `probe`), so the pointer lives as long as the handler can be called.
#[derive(Clone, Copy, Debug)]
pub struct LiveHandle(*mut CURL);

impl LiveHandle {
    pub(crate) fn none() -> LiveHandle {
        LiveHandle(ptr::null_mut())
    }

    pub(crate) fn of<H>(easy: &Easy2<H>) -> LiveHandle {
        LiveHandle(easy.raw())
    }

    /// libcurl's name-lookup timer as it stands now: 0 while its lookup is
    /// still going on (libcurl 8.22 may connect on the first answer, A,
    /// while it waits for AAAA), else the lookup's end on its time line.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this handle.
    pub(crate) unsafe fn namelookup_so_far_us(self) -> u32 {
        if self.0.is_null() {
            return 0;
        }
        // SAFETY: inside a callback of the running transfer (the caller's
        // contract), so the handle is alive; a timer is of the OFF_T family.
        unsafe { getinfo::us_raw(self.0, getinfo::CURLINFO_NAMELOOKUP_TIME_T) }
    }

    /// The kernel's view of the transfer's TCP connection (`TCP_INFO` on the
    /// socket libcurl is using right now): smoothed RTT, minimum RTT (when
    /// the kernel reports it) and segments retransmitted over the
    /// connection's life, all as the kernel gives them.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this
    /// handle, while its connection is open.
    pub(crate) unsafe fn tcp_info(self) -> Option<KernelTcp> {
        if self.0.is_null() {
            return None;
        }
        let mut sock: curl_sys::curl_socket_t = -1;
        // SAFETY: `self.0` is the running transfer's handle (caller's
        // contract); ACTIVESOCKET writes one curl_socket_t.
        let rc = unsafe { curl_sys::curl_easy_getinfo(self.0, CURLINFO_ACTIVESOCKET, &mut sock) };
        if rc != CURLE_OK || sock < 0 {
            return None;
        }
        // The socket stays open at least until this callback returns.
        super::sockets::read_tcp_info(sock)
    }

    /// The TLS facts of a handshake this transfer made, once it is complete;
    /// `None` before that, and throughout a transfer on a reused connection
    /// (libcurl leaves its appconnect timer at 0 then), or without TLS. A
    /// full handshake's OCSP staple is taken into `staple`.
    ///
    /// `chain` receives counted references to the certificates the server
    /// sent, as many as fit in the room it already has (none without room),
    /// so nothing is allocated here.
    ///
    /// # Safety
    /// Call only from a libcurl callback of the transfer running on this
    /// handle: the `SSL*` read here belongs to the connection and may be freed
    /// as soon as the transfer ends.
    pub(crate) unsafe fn tls_facts_of_new_handshake(
        self,
        chain: &mut Vec<openssl::x509::X509>,
        staple: &mut TakenStaple,
    ) -> Option<LiveTls> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: inside a callback of the running transfer (the caller's
        // contract), so the handle is alive; a timer is of the OFF_T family.
        let appconnect = unsafe { getinfo::off_t_raw(self.0, getinfo::CURLINFO_APPCONNECT_TIME_T) };
        if appconnect == 0 {
            return None;
        }
        let mut info: *mut TlsSessionInfo = ptr::null_mut();
        // SAFETY: `self.0` is the handle whose transfer is running right now
        // (we are inside its callback); TLS_SSL_PTR writes one pointer to a
        // libcurl-owned struct that stays valid for the rest of this callback.
        let rc = unsafe { curl_sys::curl_easy_getinfo(self.0, CURLINFO_TLS_SSL_PTR, &mut info) };
        if rc != CURLE_OK || info.is_null() {
            return None;
        }
        // SAFETY: non-null pointer to libcurl's curl_tlssessioninfo, valid
        // during this callback (see above); we copy the two fields out.
        let (backend, internals) = unsafe { ((*info).backend, (*info).internals) };
        if backend != CURLSSLBACKEND_OPENSSL || internals.is_null() {
            return None;
        }
        // SAFETY: with the OpenSSL backend, `internals` is the connection's
        // `SSL*`, alive while the transfer is; the borrow below ends before
        // this function returns, and we only call read-only accessors (and
        // take the OCSP staple out of it, which `ocsp::take_first_response` justifies).
        let ssl: &SslRef = unsafe { SslRef::from_ptr(internals as *mut openssl_sys::SSL) };
        // SAFETY: `ssl` is live (above); the returned C string belongs to it
        // and is copied (interned) before this function returns.
        let group = unsafe {
            let name = openssl_sys::SSL_get0_group_name(ssl.as_ptr());
            (!name.is_null()).then(|| intern(&std::ffi::CStr::from_ptr(name).to_string_lossy()))
        };
        let facts = TlsFacts {
            version: ssl.version_str(),
            alpn: ssl.selected_alpn_protocol().and_then(Proto::from_alpn),
            resumed: ssl.session_reused(),
            // A resumed handshake carries no certificates at all: that is 0, not unknown.
            chain_len: match ssl.peer_cert_chain() {
                Some(chain) => Some(chain.len().min(255) as u8),
                None if ssl.session_reused() => Some(0),
                None => None,
            },
            cipher: ssl.current_cipher().map(|c| c.name()).unwrap_or(""),
            group,
            cert_days_left: None,
            cert_expired: false,
            cert_not_after: None,
            ocsp: None,
        };
        if !facts.resumed {
            staple.take_from(ssl);
        }
        if let Some(sent) = ssl.peer_cert_chain() {
            let room = chain.capacity() - chain.len();
            chain.extend(sent.iter().take(room).map(|c| c.to_owned()));
        }
        // A counted reference: examining the certificate waits until the transfer is over.
        Some(LiveTls {
            facts,
            leaf: ssl.peer_certificate(),
        })
    }
}

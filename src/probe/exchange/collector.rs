//! The libcurl handler that watches one transfer at a time: response
//! headers and body as they arrive, the TLS facts while the connection is
//! live, the kernel's TCP view, and the SSL_CTX and socket hooks. What a
//! transfer's callbacks leave (the handshake's stamps, the sockets it
//! opened and their readings at close, a panic) is kept here, with the
//! handle that ran it, never per thread.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use curl::easy::{Handler, WriteError};

use super::cancel::Cancel;
use super::curl_ffi::{self, codes, CaughtPanic, CloseWatch, KeepsPanic, KernelTcp, LiveHandle};
use super::live_tls;
use super::ocsp::TakenStaple;
use super::transfer_stamps::TransferStamps;
use super::trust::TrustStore;
use super::types::TlsFacts;

/// Bodies are read up to this many bytes; a longer body ends the transfer.
pub const BODY_CAP: u64 = 64 * 1024;

/// Watches one transfer at a time. Reset before each `perform`.
pub struct Collector {
    /// The easy handle this handler belongs to (set by `ProbeHandle::new`;
    /// null for a handler on no handle, which then reads nothing).
    pub(super) live: LiveHandle,
    trust: Option<Arc<TrustStore>>,
    /// When the last response byte (header or body) reached us.
    pub(super) last_byte: Option<Instant>,
    cancel: Cancel,
    pub(super) tls: Option<TlsFacts>,
    /// The server's leaf certificate, examined once the transfer is over.
    pub(super) leaf: Option<openssl::x509::X509>,
    /// The certificates the server sent, when the output prints them: room
    /// for them is made once (`keep_chain`), so taking them allocates nothing.
    pub(super) chain: Vec<openssl::x509::X509>,
    /// A full handshake's OCSP staple, judged once the transfer is over.
    pub(super) staple: TakenStaple,
    /// Requests libcurl sent during this `perform`. Shared, not boxed:
    /// libcurl writes through a pointer to it, and a heap value of its own
    /// keeps that pointer clear of every `&mut` to the handler.
    pub(super) requests_sent: Arc<AtomicU32>,
    /// The TLS facts of this transfer's handshake were taken (or there was none).
    tls_taken: bool,
    pub(super) body_bytes: u64,
    pub(super) body_overflow: bool,
    pub(super) location: Option<String>,
    /// The response's `Retry-After` value, read once the transfer is over.
    pub(super) retry_after: Option<super::retry_after::RawValue>,
    header_lines: u32,
    /// When `perform` was called, on CLOCK_MONOTONIC (µs): libcurl starts
    /// this transfer's time line a few microseconds later.
    pub(super) perform_started_us: Option<u64>,
    /// When the response's first header line reached us (CLOCK_MONOTONIC
    /// µs): the records taken up before it hold the response's first.
    pub(super) first_header_us: Option<u64>,
    /// The first socket libcurl opened for this transfer: when (CLOCK_MONOTONIC
    /// µs) and libcurl's name-lookup timer at that moment (0 while its lookup
    /// was still going on; see `socket_opened_at`).
    pub(super) socket_opened: Option<(u64, u32)>,
    /// The record of the sockets this handle's connections opened and of
    /// their closes (a cold runner's, shared by its handles; else the
    /// handle's own): libcurl's close-socket callback points at it.
    pub(super) close_watch: Arc<CloseWatch>,
    /// The socket this transfer opened last: the connection's, whose
    /// reading at close `close_watch` keeps (never that of an older
    /// connection libcurl happens to close meanwhile).
    pub(super) opened_socket: Option<curl_ffi::curl_socket_t>,
    /// The socket this handle opened last, in this transfer or before (a
    /// kept connection's): its close is no longer read once another opens.
    last_socket: Option<curl_ffi::curl_socket_t>,
    /// What OpenSSL's callbacks report of this handle's connections; each
    /// connection's SSL_CTX holds a reference too (see `TransferStamps`).
    pub(super) stamps: Arc<TransferStamps>,
    /// A panic one of the callbacks below caught, raised once libcurl has
    /// returned (`curl_ffi::guarded`).
    caught: CaughtPanic,
    /// `TCP_INFO` read when the response's headers ended.
    pub(super) tcp: Option<KernelTcp>,
    /// Retransmissions already counted on the open connection (warm reuse).
    pub(super) retrans_counted: u32,
    /// `Server-Timing` header lines as received, parsed once the transfer is over.
    pub(super) server_timing_raw: Vec<u8>,
}

impl Collector {
    /// The run's interrupt flag, which the transfers this collects end at.
    pub(super) fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    pub fn new(cancel: Cancel, trust: Option<Arc<TrustStore>>) -> Collector {
        Collector {
            live: LiveHandle::none(),
            trust,
            last_byte: None,
            cancel,
            tls: None,
            leaf: None,
            chain: Vec::new(),
            staple: TakenStaple::default(),
            requests_sent: Arc::default(),
            tls_taken: false,
            body_bytes: 0,
            body_overflow: false,
            location: None,
            retry_after: None,
            header_lines: 0,
            perform_started_us: None,
            first_header_us: None,
            socket_opened: None,
            close_watch: Arc::new(CloseWatch::new()),
            opened_socket: None,
            last_socket: None,
            stamps: TransferStamps::new(),
            caught: CaughtPanic::default(),
            tcp: None,
            retrans_counted: 0,
            // Room for a few headers, so the header callback need not allocate.
            server_timing_raw: Vec::with_capacity(1024),
        }
    }

    /// The counter libcurl's pre-request callback increments: never
    /// replaced (only `reset`), so its address is stable; the caller keeps
    /// this reference as long as libcurl may write to it.
    pub(super) fn requests_counter(&self) -> Arc<AtomicU32> {
        Arc::clone(&self.requests_sent)
    }

    /// Body bytes read by the last transfer (never more than `BODY_CAP`).
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// The run's trust anchors (`None` with `-k`).
    pub(super) fn anchors(&self) -> Option<&openssl::x509::store::X509StoreRef> {
        self.trust.as_deref().map(TrustStore::store)
    }

    /// The last response's `Location`, trimmed.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// Keep up to `max` certificates of each handshake's chain.
    pub(super) fn keep_chain(&mut self, max: usize) {
        self.chain.reserve_exact(max);
    }

    /// Takes the TLS facts once the handshake of this transfer is complete.
    /// Called from libcurl's callbacks only.
    fn take_tls(&mut self) {
        if self.tls_taken {
            return;
        }
        // SAFETY: we are inside a callback of the transfer running on the
        // handle `live` was taken from (set in `ProbeHandle::new`; a collector
        // without a handle holds a null one, which reads nothing).
        if let Some(live) = unsafe {
            self.live
                .with_new_handshake(|ssl| live_tls::read(ssl, &mut self.chain, &mut self.staple))
        } {
            self.tls = Some(live.facts);
            self.leaf = live.leaf;
            self.tls_taken = true;
        }
    }

    pub(super) fn reset(&mut self) {
        self.last_byte = None;
        self.tls = None;
        self.leaf = None;
        self.chain.clear();
        self.staple.clear();
        self.tls_taken = false;
        self.requests_sent.store(0, Ordering::Relaxed);
        self.body_bytes = 0;
        self.body_overflow = false;
        self.location = None;
        self.retry_after = None;
        self.header_lines = 0;
        self.perform_started_us = None;
        self.first_header_us = None;
        self.socket_opened = None;
        self.opened_socket = None;
        self.tcp = None;
        self.server_timing_raw.clear();
        self.stamps.reset();
    }

    /// The kernel's reading as libcurl closed the socket this transfer
    /// opened last, once it is closed.
    pub(super) fn tcp_at_close(&self) -> Option<KernelTcp> {
        self.close_watch.at_close(self.opened_socket?)
    }

    /// Raises a panic one of this handler's callbacks kept, once libcurl
    /// has returned.
    pub(super) fn raise_caught(&mut self) {
        self.caught.raise();
    }
}

impl KeepsPanic for Collector {
    fn caught_panic(&mut self) -> &mut CaughtPanic {
        &mut self.caught
    }
}

/// libcurl's callbacks, each run through `curl_ffi::guarded`: a panic in
/// one aborts the transfer and is raised again once libcurl has returned
/// (the multi interface the cold probes run on would otherwise swallow it);
/// a release build aborts the process instead (see `curl_ffi::perform`).
impl Handler for Collector {
    fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        curl_ffi::guarded(self, Ok(0), |c| c.on_write(data))
    }

    fn header(&mut self, data: &[u8]) -> bool {
        curl_ffi::guarded(self, false, |c| c.on_header(data))
    }

    // The curl crate's callback signature: only libcurl calls it, with its own SSL_CTX.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn ssl_ctx(&mut self, ssl_ctx: *mut std::os::raw::c_void) -> Result<(), curl::Error> {
        let aborted = Err(curl::Error::new(codes::CURLE_ABORTED_BY_CALLBACK));
        curl_ffi::guarded(self, aborted, |c| c.on_ssl_ctx(ssl_ctx))
    }

    fn open_socket(
        &mut self,
        family: std::os::raw::c_int,
        socktype: std::os::raw::c_int,
        protocol: std::os::raw::c_int,
    ) -> Option<curl_ffi::curl_socket_t> {
        curl_ffi::guarded(self, None, |c| c.on_open_socket(family, socktype, protocol))
    }

    fn progress(&mut self, _dltotal: f64, _dlnow: f64, _ultotal: f64, _ulnow: f64) -> bool {
        curl_ffi::guarded(self, false, |c| c.on_progress())
    }
}

impl Collector {
    fn on_write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        self.last_byte = Some(Instant::now());
        let len = data.len() as u64;
        if self.body_bytes + len > BODY_CAP {
            // Stop reading: returning less than we were given ends the
            // transfer. This chunk was refused, so `body_bytes` stays what
            // was read.
            self.body_overflow = true;
            return Ok(0);
        }
        self.body_bytes += len;
        Ok(data.len())
    }

    fn on_header(&mut self, data: &[u8]) -> bool {
        self.last_byte = Some(Instant::now());
        if self.header_lines == 0 {
            self.first_header_us
                .get_or_insert_with(curl_ffi::monotonic_us);
            self.take_tls();
        }
        self.header_lines += 1;
        if data == b"\r\n" || data == b"\n" {
            // The headers ended (the clock has its stamp): ask the kernel
            // about the connection while it is certainly open.
            // SAFETY: inside a callback of the transfer running on `live`'s handle.
            if let Some(tcp) = unsafe { self.live.tcp_info() } {
                self.tcp = Some(tcp);
            }
        } else if data.starts_with(b"HTTP/") {
            // A new response (after a 1xx): forget the previous one's headers.
            self.location = None;
            self.retry_after = None;
            self.server_timing_raw.clear();
        } else if data.len() > 14 && data[..14].eq_ignore_ascii_case(b"server-timing:") {
            self.server_timing_raw.extend_from_slice(data);
        } else if data.len() > 12 && data[..12].eq_ignore_ascii_case(b"retry-after:") {
            self.retry_after = Some(super::retry_after::RawValue::of(&data[12..]));
        } else if data.len() > 9 && data[..9].eq_ignore_ascii_case(b"location:") {
            let value = String::from_utf8_lossy(&data[9..]).trim().to_string();
            self.location = Some(value);
        }
        true
    }

    // The curl crate's callback signature: only libcurl calls it, with its own SSL_CTX.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn on_ssl_ctx(&mut self, ssl_ctx: *mut std::os::raw::c_void) -> Result<(), curl::Error> {
        if let Some(trust) = &self.trust {
            // SAFETY: libcurl calls this callback with the SSL_CTX it is setting up.
            unsafe { curl_ffi::install_trust_store(ssl_ctx, trust.store()) };
        }
        // SAFETY: as above (for both).
        unsafe {
            curl_ffi::stamp_handshake(ssl_ctx, self.stamps.clone());
            curl_ffi::request_staple(ssl_ctx);
        }
        Ok(())
    }

    fn on_open_socket(
        &mut self,
        family: std::os::raw::c_int,
        socktype: std::os::raw::c_int,
        protocol: std::os::raw::c_int,
    ) -> Option<curl_ffi::curl_socket_t> {
        // The first socket (happy eyeballs may open a second) starts `tcp`
        // when libcurl connects before its lookup has ended.
        if self.socket_opened.is_none() {
            let now = curl_ffi::monotonic_us();
            // SAFETY: libcurl opens sockets from inside the transfer running
            // on `live`'s handle.
            let lookup = unsafe { self.live.namelookup_so_far_us() };
            self.socket_opened = Some((now, lookup));
        }
        // A new connection starts its own retransmission count.
        self.retrans_counted = 0;
        let sock = curl_ffi::open_socket(family, socktype, protocol)?;
        self.close_watch.opened(sock, self.last_socket);
        self.last_socket = Some(sock);
        self.opened_socket = Some(sock);
        self.stamps.socket_opened(sock);
        Some(sock)
    }

    fn on_progress(&mut self) -> bool {
        // Also catches a handshake that completed before the transfer failed
        // (say, a server that then never answers): its facts still count.
        self.take_tls();
        !self.cancel.is_canceled()
    }
}

#[cfg(test)]
#[path = "transfer_state_tests.rs"]
mod transfer_state_tests;

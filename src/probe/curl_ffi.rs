//! Every call into libcurl and OpenSSL that the `curl` crate does not wrap.
//! Each `unsafe` block is short and says why it holds; the rest of the crate
//! only sees the safe functions and types below.

use std::cell::Cell;
use std::os::raw::{c_int, c_long, c_void};
use std::ptr;

use curl::easy::Easy2;
use curl_sys::{CURLcode, CURL, CURLE_OK, CURLINFO};
use foreign_types::ForeignTypeRef;
use openssl::ssl::SslRef;

use super::config::EarlyData;
use super::ocsp::TakenStaple;
use super::types::{CurlTimers, Proto, TlsFacts};

// Constants from curl.h (8.10+) that curl-sys does not export.
const CURLINFO_OFF_T: CURLINFO = 0x600000;
const CURLINFO_PTR: CURLINFO = 0x400000;
const CURLINFO_TOTAL_TIME_T: CURLINFO = CURLINFO_OFF_T + 50;
const CURLINFO_NAMELOOKUP_TIME_T: CURLINFO = CURLINFO_OFF_T + 51;
const CURLINFO_CONNECT_TIME_T: CURLINFO = CURLINFO_OFF_T + 52;
const CURLINFO_PRETRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 53;
const CURLINFO_STARTTRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 54;
const CURLINFO_APPCONNECT_TIME_T: CURLINFO = CURLINFO_OFF_T + 56;
const CURLINFO_POSTTRANSFER_TIME_T: CURLINFO = CURLINFO_OFF_T + 67;
// curl.h (8.11+): bytes of TLS early data sent; negative when the server
// rejected them, 0 when none were sent.
const CURLINFO_EARLYDATA_SENT_T: CURLINFO = CURLINFO_OFF_T + 68;
// curl.h: CURLOPT_SSL_EC_CURVES (a string option) and CURLSSLOPT_EARLYDATA.
const CURLOPT_SSL_EC_CURVES: curl_sys::CURLoption = curl_sys::CURLOPTTYPE_OBJECTPOINT + 298;
const CURLSSLOPT_EARLYDATA: c_long = 1 << 6;
const CURLINFO_TLS_SSL_PTR: CURLINFO = CURLINFO_PTR + 45;
const CURLINFO_HTTP_VERSION: CURLINFO = curl_sys::CURLINFO_LONG + 46;
// curl.h: CURLINFO_SOCKET is 0x500000; ACTIVESOCKET writes a curl_socket_t.
const CURLINFO_ACTIVESOCKET: CURLINFO = 0x500000 + 44;
const CURLSSLBACKEND_OPENSSL: i32 = 1;

// curl.h: CURL_HTTP_VERSION_* as reported by CURLINFO_HTTP_VERSION.
const CURL_HTTP_VERSION_1_0: c_long = 1;
const CURL_HTTP_VERSION_1_1: c_long = 2;
const CURL_HTTP_VERSION_2_0: c_long = 3;
const CURL_HTTP_VERSION_3: c_long = 30;

extern "C" {
    // libcrypto (OpenSSL >= 1.1.0), linked through openssl-sys; not bound there.
    fn X509_STORE_up_ref(store: *mut openssl_sys::X509_STORE) -> std::os::raw::c_int;
    // libssl: the handshake-progress and message callbacks of every SSL made
    // from a context.
    fn SSL_CTX_set_info_callback(
        ctx: *mut openssl_sys::SSL_CTX,
        cb: Option<unsafe extern "C" fn(*const openssl_sys::SSL, c_int, c_int)>,
    );
    fn SSL_CTX_set_msg_callback(
        ctx: *mut openssl_sys::SSL_CTX,
        cb: Option<
            unsafe extern "C" fn(
                c_int,
                c_int,
                c_int,
                *const c_void,
                usize,
                *mut openssl_sys::SSL,
                *mut c_void,
            ),
        >,
    );
}

// ssl3.h: the message callback's pseudo content type for a record header, and
// the record type byte of a handshake record.
const SSL3_RT_HEADER: c_int = 0x100;
const SSL3_RT_HANDSHAKE_BYTE: u8 = 22;

// ssl.h: SSL_ST_CONNECT | SSL_CB_EXIT.
const SSL_CB_CONNECT_EXIT: c_int = 0x1000 | 0x02;

/// Now on CLOCK_MONOTONIC, in microseconds: the clock libcurl's own timers
/// read (`curlx_now` with `HAVE_CLOCK_GETTIME_MONOTONIC`, as curl-sys builds
/// it), so our stamps and libcurl's timers can be placed on one time line.
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer;
    // CLOCK_MONOTONIC exists on every Linux kernel this builds for.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}

/// What the handshake callbacks saw of the current transfer on this thread.
#[derive(Clone, Copy, Debug, Default)]
struct Stamps {
    /// Our first ClientHello's record about to be written (CLOCK_MONOTONIC µs; 0 = not yet).
    hello_us: u64,
    /// The client is waiting for server data (after the ClientHello, or after
    /// OpenSSL handed control back to libcurl to wait for the socket).
    waiting: bool,
    /// Start of the stretch of client work going on now (0 = none).
    stretch_from_us: u64,
    /// Client work on server data in stretches already ended.
    work_us: u64,
    /// A stretch was paused for a send of ours, to resume after it.
    in_send: bool,
    /// Any server data was taken up after our ClientHello.
    replied: bool,
}

impl Stamps {
    fn pause(&mut self, now: u64) {
        if self.stretch_from_us > 0 {
            self.work_us += now.saturating_sub(self.stretch_from_us);
            self.stretch_from_us = 0;
        }
    }
}

thread_local! {
    /// A thread-local, so OpenSSL's callbacks need no pointer into our data:
    /// libcurl's easy interface runs a transfer and its callbacks on the
    /// thread that called `perform`, and a thread runs one transfer at a time.
    static STAMPS: Cell<Stamps> = const {
        Cell::new(Stamps {
            hello_us: 0,
            waiting: false,
            stretch_from_us: 0,
            work_us: 0,
            in_send: false,
            replied: false,
        })
    };
}

fn with_stamps(f: impl FnOnce(&mut Stamps)) {
    STAMPS.with(|c| {
        let mut s = c.get();
        f(&mut s);
        c.set(s);
    });
}

/// Forgets the handshake stamps of an earlier transfer on this thread.
pub(crate) fn handshake_stamps_clear() {
    STAMPS.with(|c| c.set(Stamps::default()));
}

/// When the ClientHello of the transfer just run on this thread was about to
/// be written to libcurl's socket.
pub(crate) fn client_hello_sent_us() -> Option<u64> {
    let us = STAMPS.with(|c| c.get()).hello_us;
    (us > 0).then_some(us)
}

/// The client's own work on the server's handshake data, for the transfer
/// just run on this thread, with the handshake done at `done_us`: every
/// stretch from taking up server data after a wait to the next wait (or to
/// done), less our own sends. `None` when no server data was taken up or the
/// stamps are out of order.
pub(crate) fn client_finish_us(done_us: u64) -> Option<u64> {
    let s = STAMPS.with(|c| c.get());
    if !s.replied || (s.stretch_from_us > 0 && s.stretch_from_us > done_us) {
        return None;
    }
    let open = if s.stretch_from_us > 0 {
        done_us - s.stretch_from_us
    } else {
        0
    };
    Some(s.work_us + open)
}

/// OpenSSL's message callback.
///
/// The ClientHello's record header is reported just before the record is
/// written to libcurl's socket: that ends the set-up. From then on the client
/// waits for the server; the first data it reads after any wait starts a
/// stretch of its own work, which the next wait (see `on_handshake_step`)
/// ends. Our sends pause a stretch (record header, before the write) and
/// resume it (message reported, after the write), so a server that the
/// kernel runs during our send on the same machine never counts as ours.
///
/// # Safety
/// Only OpenSSL calls this (`SSL_CTX_set_msg_callback`): `ssl` is the live
/// connection whose record was just handled, and `buf` holds `len` bytes
/// for the length of the call.
unsafe extern "C" fn on_tls_message(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut openssl_sys::SSL,
    _arg: *mut c_void,
) {
    // Records after the handshake (TLS 1.3 session tickets after our
    // Finished, application data) are no part of it.
    // SAFETY: OpenSSL passes the live SSL whose record was just handled.
    if unsafe { openssl_sys::SSL_is_init_finished(ssl) } == 1 {
        return;
    }
    let now = monotonic_us();
    with_stamps(|s| {
        if write_p == 1 && content_type == SSL3_RT_HEADER {
            // SAFETY: for a record header `buf` holds its `len` (5) bytes,
            // valid during this call; the first byte is the record type.
            let record = (len > 0 && !buf.is_null()).then(|| unsafe { *(buf as *const u8) });
            if s.hello_us == 0 {
                if record == Some(SSL3_RT_HANDSHAKE_BYTE) {
                    s.hello_us = now;
                    s.waiting = true;
                }
            } else if s.stretch_from_us > 0 {
                s.pause(now);
                s.in_send = true;
            }
        } else if write_p == 1 {
            if s.in_send {
                s.in_send = false;
                s.stretch_from_us = now;
            }
        } else if s.hello_us > 0 && s.waiting && s.stretch_from_us == 0 {
            s.waiting = false;
            s.replied = true;
            s.stretch_from_us = now;
        }
    });
}

/// OpenSSL's info callback: an "exit" of the client's handshake with a
/// negative result means it hands control back to libcurl to wait for the
/// socket (or fails, which ends the handshake anyway). It reads none of its
/// pointers, so it is a safe function where OpenSSL expects an unsafe one.
extern "C" fn on_handshake_step(_ssl: *const openssl_sys::SSL, where_: c_int, ret: c_int) {
    if where_ & SSL_CB_CONNECT_EXIT == SSL_CB_CONNECT_EXIT && ret < 0 {
        let now = monotonic_us();
        with_stamps(|s| {
            s.pause(now);
            s.in_send = false;
            if s.hello_us > 0 {
                s.waiting = true;
            }
        });
    }
}

/// Has every connection made from this SSL_CTX stamp when its first
/// ClientHello leaves (`client_hello_sent_us`) and time the client's own
/// work on the server's replies (`client_finish_us`). This takes OpenSSL's
/// message callback, which libcurl uses only for the TLS part of its verbose
/// trace (`TLSPING_CURL_VERBOSE`, a debugging aid).
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the CURLOPT_SSL_CTX_FUNCTION
/// callback now running.
pub(crate) unsafe fn stamp_handshake(ssl_ctx: *mut c_void) {
    let ctx = ssl_ctx as *mut openssl_sys::SSL_CTX;
    // SAFETY: a live SSL_CTX (the caller's contract); both callbacks are plain
    // functions that touch no data of ours beyond a thread-local, so they stay
    // valid for as long as OpenSSL keeps the context.
    unsafe {
        SSL_CTX_set_info_callback(ctx, Some(on_handshake_step));
        SSL_CTX_set_msg_callback(ctx, Some(on_tls_message));
    }
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

/// One `TCP_INFO` reading of a live connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelTcp {
    pub rtt_us: u32,
    pub min_rtt_us: Option<u32>,
    /// Segments retransmitted since the connection opened, less those the
    /// receiver reported as duplicates (D-SACK): the losses actually recovered.
    pub total_retrans: u32,
}

/// A socket for libcurl, opened the way the `curl` crate's default does
/// (close-on-exec), so overriding the open-socket callback changes nothing else.
pub fn open_socket(
    family: c_int,
    socktype: c_int,
    protocol: c_int,
) -> Option<curl_sys::curl_socket_t> {
    // SAFETY: socket(2) takes plain integers and returns a new descriptor or -1.
    let fd = unsafe { libc::socket(family, socktype | libc::SOCK_CLOEXEC, protocol) };
    if fd >= 0 {
        OPENED_SOCKET.with(|c| c.set(fd));
        // A reading from an older connection's close is not this one's.
        TCP_AT_CLOSE.with(|c| c.set(None));
    }
    (fd >= 0).then_some(fd)
}

thread_local! {
    /// The `TCP_INFO` reading taken as libcurl closed the socket this
    /// transfer opened (see `STAMPS` for why a thread-local is enough).
    static TCP_AT_CLOSE: Cell<Option<KernelTcp>> = const { Cell::new(None) };
    /// The socket this transfer opened last: only its close is read, never
    /// that of an older connection libcurl happens to close meanwhile (a
    /// dead kept connection found on reuse, say).
    static OPENED_SOCKET: Cell<curl_sys::curl_socket_t> = const { Cell::new(-1) };
}

/// Forgets a reading taken when an earlier transfer's socket closed.
pub(crate) fn tcp_at_close_clear() {
    TCP_AT_CLOSE.with(|c| c.set(None));
    OPENED_SOCKET.with(|c| c.set(-1));
}

/// The reading taken when the transfer just run on this thread closed its socket.
pub(crate) fn tcp_at_close() -> Option<KernelTcp> {
    TCP_AT_CLOSE.with(|c| c.get())
}

/// `TCP_INFO` of an open TCP socket.
fn read_tcp_info(sock: c_int) -> Option<KernelTcp> {
    // SAFETY: tcp_info is plain integers; all-zero is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `info` and reports
    // how many it wrote; an fd that is not a TCP socket only makes it fail.
    let rc = unsafe {
        libc::getsockopt(
            sock,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut libc::tcp_info as *mut c_void,
            &mut len,
        )
    };
    if rc != 0 || info.tcpi_rtt == 0 {
        return None;
    }
    // Older kernels fill a shorter struct: only trust fields it reached.
    let reaches = |end: usize| (len as usize) >= end;
    let min_rtt_end = std::mem::offset_of!(libc::tcp_info, tcpi_min_rtt) + 4;
    let retrans_end = std::mem::offset_of!(libc::tcp_info, tcpi_total_retrans) + 4;
    let dsack_end = std::mem::offset_of!(libc::tcp_info, tcpi_dsack_dups) + 4;
    // A retransmission the receiver reports as a duplicate (D-SACK) was not a
    // loss: typically a tail-loss probe sent while a busy peer was slow to
    // acknowledge. Those are taken out where the kernel reports them (5.2+).
    let spurious = if reaches(dsack_end) {
        info.tcpi_dsack_dups
    } else {
        0
    };
    Some(KernelTcp {
        rtt_us: info.tcpi_rtt,
        min_rtt_us: (reaches(min_rtt_end)
            && info.tcpi_min_rtt > 0
            && info.tcpi_min_rtt != u32::MAX)
            .then_some(info.tcpi_min_rtt),
        total_retrans: if reaches(retrans_end) {
            info.tcpi_total_retrans.saturating_sub(spurious)
        } else {
            0
        },
    })
}

/// The sockets of a cold runner's connections that libcurl has opened and
/// not yet closed (see `cold_driver`): the open-socket callback adds each,
/// and libcurl's close-socket callback of every connection made with it
/// (which points at this) takes it out again, so a socket is forgotten
/// before its number can be reused.
#[derive(Debug)]
pub struct CloseWatch {
    /// -1 marks a free slot. Happy eyeballs has at most two sockets open at
    /// once; a socket that finds no free slot is simply not followed.
    open: [std::sync::atomic::AtomicI32; 4],
}

impl CloseWatch {
    pub fn new() -> CloseWatch {
        CloseWatch {
            open: std::array::from_fn(|_| std::sync::atomic::AtomicI32::new(-1)),
        }
    }

    pub(crate) fn opened(&self, sock: curl_sys::curl_socket_t) {
        use std::sync::atomic::Ordering::Relaxed;
        for slot in &self.open {
            if slot.compare_exchange(-1, sock, Relaxed, Relaxed).is_ok() {
                return;
            }
        }
    }

    fn closed(&self, sock: curl_sys::curl_socket_t) {
        use std::sync::atomic::Ordering::Relaxed;
        for slot in &self.open {
            let _ = slot.compare_exchange(sock, -1, Relaxed, Relaxed);
        }
    }

    /// A socket of ours that libcurl has opened and not closed yet.
    pub fn open_socket(&self) -> Option<curl_sys::curl_socket_t> {
        self.open
            .iter()
            .map(|slot| slot.load(std::sync::atomic::Ordering::Relaxed))
            .find(|&sock| sock >= 0)
    }
}

impl Default for CloseWatch {
    fn default() -> CloseWatch {
        CloseWatch::new()
    }
}

/// libcurl's close-socket callback: one last `TCP_INFO` reading, a word to
/// the runner that watches this connection (if any), then the close libcurl
/// would have made itself.
extern "C" fn close_socket(clientp: *mut c_void, sock: curl_sys::curl_socket_t) -> c_int {
    if OPENED_SOCKET.with(|c| c.get()) == sock {
        if let Some(tcp) = read_tcp_info(sock) {
            TCP_AT_CLOSE.with(|c| c.set(Some(tcp)));
        }
    }
    if !clientp.is_null() {
        // SAFETY: a non-null `clientp` is the `CloseWatch` registered with
        // `read_tcp_info_at_close`, whose contract keeps it alive for as long
        // as libcurl may close a connection made with it.
        unsafe { &*(clientp as *const CloseWatch) }.closed(sock);
    }
    // SAFETY: libcurl hands over a descriptor it opened and no longer uses.
    unsafe { libc::close(sock) }
}

/// Has libcurl read the kernel's view of each socket just before closing it,
/// so a probe whose connection ends without a response still gets one, and
/// tell `watch` (when given) about every close.
///
/// # Safety
/// libcurl copies the watch's address into every connection this handle
/// makes, and such a connection can outlive the handle (a graceful close in
/// a multi handle's shutdown list): `watch` must stay alive until every
/// connection made with it is closed, i.e. until the multi handle that runs
/// the transfers is cleaned up. A null `watch` has no such requirement.
pub(crate) unsafe fn read_tcp_info_at_close<H>(
    easy: &mut Easy2<H>,
    watch: *const CloseWatch,
) -> Result<(), curl::Error> {
    let cb: extern "C" fn(*mut c_void, curl_sys::curl_socket_t) -> c_int = close_socket;
    // SAFETY: the handle is live; the callback has libcurl's prototype
    // (curl_closesocket_callback); the data pointer is null or lives as long
    // as the caller's contract says.
    let rc = unsafe {
        let rc = curl_sys::curl_easy_setopt(
            easy.raw(),
            curl_sys::CURLOPT_CLOSESOCKETFUNCTION,
            cb as *const c_void,
        );
        if rc == CURLE_OK {
            curl_sys::curl_easy_setopt(easy.raw(), curl_sys::CURLOPT_CLOSESOCKETDATA, watch)
        } else {
            rc
        }
    };
    if rc == CURLE_OK {
        Ok(())
    } else {
        Err(curl::Error::new(rc))
    }
}

/// Runs the transfer of `easy` to its end on `multi` and takes it off the
/// multi again, whatever the outcome. The multi's own connections in a
/// graceful close advance meanwhile, as in any `curl_multi_perform`.
pub(crate) fn perform_on<H>(
    multi: &curl::multi::Multi,
    easy: &Easy2<H>,
) -> Result<(), curl::Error> {
    // SAFETY: both handles are live for this whole call, and the easy handle
    // is removed from the multi below before we return, so the multi never
    // refers to it past this borrow.
    let rc = unsafe { curl_sys::curl_multi_add_handle(multi.raw(), easy.raw()) };
    if rc != curl_sys::CURLM_OK {
        return Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
    }
    let result = loop {
        if multi.perform().is_err() {
            break Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
        }
        // Only this transfer is on the multi: a finished one is ours.
        let mut done = None;
        multi.messages(|m| {
            if let Some(r) = m.result() {
                done = Some(r);
            }
        });
        if let Some(r) = done {
            // libcurl's own words for a failure (its error buffer), as
            // `Easy2::perform` attaches them.
            break r.map_err(|mut e| {
                if let Some(text) = easy.take_error_buf() {
                    e.set_extra(text);
                }
                e
            });
        }
        // libcurl shortens the wait to its own next timeout; a second is
        // what `curl_easy_perform` waits at most between progress checks.
        if multi
            .wait(&mut [], std::time::Duration::from_secs(1))
            .is_err()
        {
            break Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
        }
    };
    // SAFETY: as above; removing a handle that finished is always allowed.
    unsafe { curl_sys::curl_multi_remove_handle(multi.raw(), easy.raw()) };
    result
}

/// Ends the connection on `sock` from our side (`shutdown(2)`, both ways),
/// so libcurl's graceful close of it finishes at its next read instead of
/// waiting for a server that never answers its close_notify. The descriptor
/// stays libcurl's to close.
///
/// # Safety
/// `sock` must be a socket libcurl opened on this thread's handles and has
/// not closed yet (a `CloseWatch::open_socket`), so the number cannot name
/// another file.
pub(crate) unsafe fn hang_up(sock: curl_sys::curl_socket_t) {
    // SAFETY: an open socket of libcurl's (the caller's contract); shutdown
    // only changes the connection's state, never the descriptor.
    unsafe { libc::shutdown(sock, libc::SHUT_RDWR) };
}

/// `struct curl_tlssessioninfo` from curl.h.
#[repr(C)]
struct TlsSessionInfo {
    backend: i32,
    internals: *mut c_void,
}

/// A timer in microseconds, saturating at u32::MAX (71 minutes).
fn getinfo_us(raw: *mut CURL, info: CURLINFO) -> u32 {
    getinfo_off_t(raw, info).min(u64::from(u32::MAX)) as u32
}

fn getinfo_off_t(raw: *mut CURL, info: CURLINFO) -> u64 {
    let mut value: curl_sys::curl_off_t = 0;
    // SAFETY: this private helper is only given a live handle: `easy.raw()` of
    // an `Easy2` the caller borrows, or a `LiveHandle` inside one of that
    // handle's callbacks. The OFF_T family writes one curl_off_t through `&mut value`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    if rc == CURLE_OK && value > 0 {
        value as u64
    } else {
        0
    }
}

fn getinfo_long(raw: *mut CURL, info: CURLINFO) -> Option<c_long> {
    let mut value: c_long = 0;
    // SAFETY: as in `getinfo_off_t`; the LONG family writes one `long`.
    let rc: CURLcode = unsafe { curl_sys::curl_easy_getinfo(raw, info, &mut value) };
    (rc == CURLE_OK).then_some(value)
}

/// libcurl's own timers for the last transfer of `easy`.
pub fn timers<H>(easy: &Easy2<H>) -> CurlTimers {
    let raw = easy.raw();
    CurlTimers {
        namelookup_us: getinfo_us(raw, CURLINFO_NAMELOOKUP_TIME_T),
        connect_us: getinfo_us(raw, CURLINFO_CONNECT_TIME_T),
        appconnect_us: getinfo_us(raw, CURLINFO_APPCONNECT_TIME_T),
        pretransfer_us: getinfo_us(raw, CURLINFO_PRETRANSFER_TIME_T),
        posttransfer_us: getinfo_us(raw, CURLINFO_POSTTRANSFER_TIME_T),
        starttransfer_us: getinfo_us(raw, CURLINFO_STARTTRANSFER_TIME_T),
        total_us: getinfo_us(raw, CURLINFO_TOTAL_TIME_T),
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

/// Offers exactly these key-exchange groups (`X25519:P-256`, OpenSSL names;
/// libcurl copies the string).
pub fn set_curves<H>(easy: &mut Easy2<H>, list: &str) -> Result<(), curl::Error> {
    let c = std::ffi::CString::new(list)
        .map_err(|_| curl::Error::new(curl_sys::CURLE_BAD_FUNCTION_ARGUMENT))?;
    // SAFETY: the handle is live; the option takes a C string, which
    // libcurl copies before returning, so `c` may go after this call.
    let rc = unsafe { curl_sys::curl_easy_setopt(easy.raw(), CURLOPT_SSL_EC_CURVES, c.as_ptr()) };
    if rc == CURLE_OK {
        Ok(())
    } else {
        Err(curl::Error::new(rc))
    }
}

/// Lets libcurl send the request as TLS 1.3 early data when it resumes a
/// session that allows it (this sets the whole CURLOPT_SSL_OPTIONS mask,
/// which nothing else of ours sets).
pub fn allow_early_data<H>(easy: &mut Easy2<H>) -> Result<(), curl::Error> {
    // SAFETY: the handle is live; CURLOPT_SSL_OPTIONS takes one long.
    let rc = unsafe {
        curl_sys::curl_easy_setopt(
            easy.raw(),
            curl_sys::CURLOPT_SSL_OPTIONS,
            CURLSSLOPT_EARLYDATA,
        )
    };
    if rc == CURLE_OK {
        Ok(())
    } else {
        Err(curl::Error::new(rc))
    }
}

/// OpenSSL's certificate verification verdict (an `X509_V_ERR_*` value).
pub fn verify_result<H>(easy: &Easy2<H>) -> i64 {
    #[allow(clippy::useless_conversion)] // c_long is i32 on some targets
    getinfo_long(easy.raw(), curl_sys::CURLINFO_SSL_VERIFYRESULT)
        .map(i64::from)
        .unwrap_or(0)
}

/// The HTTP version the last response used.
pub fn http_version<H>(easy: &Easy2<H>) -> Option<Proto> {
    match getinfo_long(easy.raw(), CURLINFO_HTTP_VERSION)? {
        CURL_HTTP_VERSION_1_0 => Some(Proto::Http10),
        CURL_HTTP_VERSION_1_1 => Some(Proto::Http11),
        CURL_HTTP_VERSION_2_0 => Some(Proto::H2),
        CURL_HTTP_VERSION_3 => Some(Proto::H3),
        _ => None,
    }
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
        getinfo_us(self.0, CURLINFO_NAMELOOKUP_TIME_T)
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
        read_tcp_info(sock)
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
        if self.0.is_null() || getinfo_off_t(self.0, CURLINFO_APPCONNECT_TIME_T) == 0 {
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

/// Makes libcurl load no CA file or directory of its own for this handle:
/// the run's shared store is installed from the SSL_CTX callback instead.
pub fn clear_ca_locations<H>(easy: &mut Easy2<H>) -> Result<(), curl::Error> {
    for opt in [curl_sys::CURLOPT_CAINFO, curl_sys::CURLOPT_CAPATH] {
        // SAFETY: the handle is live; a NULL string is documented for both
        // options as "use no file/directory", and libcurl copies nothing.
        let rc = unsafe {
            curl_sys::curl_easy_setopt(easy.raw(), opt, ptr::null::<std::os::raw::c_char>())
        };
        if rc != CURLE_OK {
            return Err(curl::Error::new(rc));
        }
    }
    Ok(())
}

/// Installs `store` as the trust store of the SSL_CTX libcurl is setting up.
/// `ssl_ctx` must be the pointer libcurl passed to the CURLOPT_SSL_CTX_FUNCTION callback.
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the callback now running.
pub(crate) unsafe fn install_trust_store(
    ssl_ctx: *mut c_void,
    store: &openssl::x509::store::X509StoreRef,
) {
    let store_ptr = store.as_ptr();
    // SAFETY: libcurl calls the SSL_CTX callback with its live `SSL_CTX*`
    // before any handshake uses it. The store is alive (borrowed); we take
    // one more reference for the SSL_CTX, which set_cert_store adopts and
    // releases when the SSL_CTX is freed, so it never outlives its owner.
    unsafe {
        if X509_STORE_up_ref(store_ptr) == 1 {
            openssl_sys::SSL_CTX_set_cert_store(ssl_ctx as *mut openssl_sys::SSL_CTX, store_ptr);
        }
    }
}

const CURLOPT_PREREQFUNCTION: curl_sys::CURLoption = curl_sys::CURLOPTTYPE_FUNCTIONPOINT + 312;
const CURLOPT_PREREQDATA: curl_sys::CURLoption = curl_sys::CURLOPTTYPE_OBJECTPOINT + 313;
const CURL_PREREQFUNC_OK: std::os::raw::c_int = 0;

extern "C" fn count_request(
    clientp: *mut c_void,
    _primary_ip: *mut std::os::raw::c_char,
    _local_ip: *mut std::os::raw::c_char,
    _primary_port: std::os::raw::c_int,
    _local_port: std::os::raw::c_int,
) -> std::os::raw::c_int {
    // SAFETY: `clientp` is the `AtomicU32` registered in `count_requests`,
    // alive whenever libcurl calls us (that function's contract).
    let counter = unsafe { &*(clientp as *const std::sync::atomic::AtomicU32) };
    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CURL_PREREQFUNC_OK
}

/// Has libcurl add one to `counter` for every request it is about to send.
/// One `perform` sending two means libcurl retried on a new connection after
/// the kept one died under the first.
///
/// # Safety
/// libcurl keeps the pointer: `counter` must stay at its address, alive, for
/// as long as `easy` exists (`ProbeHandle` holds a reference to the shared
/// counter and drops it only after the easy handle).
pub(crate) unsafe fn count_requests<H>(
    easy: &Easy2<H>,
    counter: *const std::sync::atomic::AtomicU32,
) -> Result<(), curl::Error> {
    let cb: extern "C" fn(
        *mut c_void,
        *mut std::os::raw::c_char,
        *mut std::os::raw::c_char,
        std::os::raw::c_int,
        std::os::raw::c_int,
    ) -> std::os::raw::c_int = count_request;
    // SAFETY: the handle is live; the callback has libcurl's prototype
    // (curl_prereq_callback) and the data pointer outlives the handle (above).
    let rc = unsafe {
        let rc =
            curl_sys::curl_easy_setopt(easy.raw(), CURLOPT_PREREQFUNCTION, cb as *const c_void);
        if rc == CURLE_OK {
            curl_sys::curl_easy_setopt(easy.raw(), CURLOPT_PREREQDATA, counter as *const c_void)
        } else {
            rc
        }
    };
    if rc == CURLE_OK {
        Ok(())
    } else {
        Err(curl::Error::new(rc))
    }
}

/// Versions actually linked into this binary.
pub fn library_versions() -> (String, String, Option<String>) {
    let v = curl::Version::get();
    let tls = v.ssl_version().unwrap_or("none").to_string();
    let h2 = v.nghttp2_version().map(|s| s.to_string());
    (v.version().to_string(), tls, h2)
}

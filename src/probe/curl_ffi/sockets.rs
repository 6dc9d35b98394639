//! The sockets of libcurl's connections: opening them, the kernel's
//! `TCP_INFO` (also read as a socket closes), and the watch a cold runner
//! keeps on the sockets still open.

use std::cell::Cell;
use std::os::raw::{c_int, c_void};

use curl::easy::Easy2;

use super::setopt::{setopt, CURLOPT_CLOSESOCKETDATA, CURLOPT_CLOSESOCKETFUNCTION};

/// One `TCP_INFO` reading of a live connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelTcp {
    pub rtt_us: u32,
    pub min_rtt_us: Option<u32>,
    /// Segments retransmitted since the connection opened, less those the
    /// receiver reported as duplicates (D-SACK): the losses actually recovered.
    pub total_retrans: u32,
    /// The peer's segments that arrived out of order (a hole before them:
    /// one of its segments was lost; 0 where the kernel does not say, 5.4+).
    pub rcv_ooopack: u32,
    /// The segment size this end sends with (from the peer's advertised
    /// one and the path), and the largest it received so far (0: unknown):
    /// on a path alike both ways, the larger is the peer's segment size.
    pub snd_mss: u32,
    pub rcv_mss: u32,
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
    /// transfer opened: libcurl runs a transfer's callbacks on the thread
    /// that drives it (`curl_easy_perform`, or `curl_multi_perform` on a
    /// cold runner's multi handle), and a thread drives one transfer at a
    /// time (a cold runner puts one easy handle at a time on its multi).
    static TCP_AT_CLOSE: Cell<Option<KernelTcp>> = const { Cell::new(None) };
    /// The socket this transfer opened last: only its close is read, never
    /// that of an older connection libcurl happens to close meanwhile (a
    /// dead kept connection found on reuse, or the previous cold probe's
    /// connection, which the multi handle may still be closing).
    static OPENED_SOCKET: Cell<curl_sys::curl_socket_t> = const { Cell::new(-1) };
}

/// Forgets a reading taken when an earlier transfer's socket closed.
pub fn tcp_at_close_clear() {
    TCP_AT_CLOSE.with(|c| c.set(None));
    OPENED_SOCKET.with(|c| c.set(-1));
}

/// The reading taken when the transfer just run on this thread closed its socket.
pub fn tcp_at_close() -> Option<KernelTcp> {
    TCP_AT_CLOSE.with(|c| c.get())
}

/// `TCP_INFO` of an open TCP socket.
pub(super) fn read_tcp_info(sock: c_int) -> Option<KernelTcp> {
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
    let ooo_end = std::mem::offset_of!(libc::tcp_info, tcpi_rcv_ooopack) + 4;
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
        rcv_ooopack: if reaches(ooo_end) {
            info.tcpi_rcv_ooopack
        } else {
            0
        },
        snd_mss: info.tcpi_snd_mss,
        rcv_mss: info.tcpi_rcv_mss,
    })
}

/// `TCP_INFO` of the socket the transfer running on this thread opened
/// last (`open_socket`), while it is open: what a callback inside the
/// transfer can read of the connection.
pub fn tcp_now() -> Option<KernelTcp> {
    let sock = OPENED_SOCKET.with(|c| c.get());
    (sock >= 0).then(|| read_tcp_info(sock)).flatten()
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

    pub fn opened(&self, sock: curl_sys::curl_socket_t) {
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
pub unsafe fn read_tcp_info_at_close<H>(
    easy: &mut Easy2<H>,
    watch: *const CloseWatch,
) -> Result<(), curl::Error> {
    let cb: extern "C" fn(*mut c_void, curl_sys::curl_socket_t) -> c_int = close_socket;
    // SAFETY: the callback has libcurl's prototype (curl_closesocket_callback);
    // the data pointer is null or lives as long as the caller's contract says.
    unsafe {
        setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, cb as *const c_void)?;
        setopt(easy, CURLOPT_CLOSESOCKETDATA, watch.cast())
    }
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
pub unsafe fn hang_up(sock: curl_sys::curl_socket_t) {
    // SAFETY: an open socket of libcurl's (the caller's contract); shutdown
    // only changes the connection's state, never the descriptor.
    unsafe { libc::shutdown(sock, libc::SHUT_RDWR) };
}

//! The sockets of libcurl's connections: opening them, the kernel's
//! `TCP_INFO` (also read as a socket closes), and the watch a cold runner
//! keeps on the sockets still open.

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
    (fd >= 0).then_some(fd)
}

/// `TCP_INFO` of an open TCP socket (`None` for a descriptor that is not
/// one, or one the kernel has no round trip for yet).
pub fn read_tcp_info(sock: c_int) -> Option<KernelTcp> {
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

/// The sockets of a handle's connections (of a cold runner's handles: of
/// all of them) that libcurl has opened, and the kernel's last word on the
/// one each handle opened last. The open-socket callback adds each
/// (`opened`), and libcurl's close-socket callback of every connection made
/// with it (which points at this) marks it closed, so a socket is known
/// closed before its number can be reused, and reads `TCP_INFO` of a
/// handle's last, so a transfer whose connection closed without a response
/// still has a reading of it.
#[derive(Debug)]
pub struct CloseWatch {
    slots: std::sync::Mutex<[Watched; 4]>,
}

/// One socket a `CloseWatch` follows.
#[derive(Clone, Copy, Debug)]
struct Watched {
    /// -1 marks a free slot.
    sock: curl_sys::curl_socket_t,
    open: bool,
    /// Opened last by its handle: only its close is read (the
    /// connection's, never a happy-eyeballs loser's opened before it, nor
    /// an older connection's of the same handle).
    last: bool,
    /// The `TCP_INFO` reading taken as libcurl closed it.
    at_close: Option<KernelTcp>,
}

impl Watched {
    const FREE: Watched = Watched {
        sock: -1,
        open: false,
        last: false,
        at_close: None,
    };
}

impl CloseWatch {
    pub fn new() -> CloseWatch {
        CloseWatch {
            slots: std::sync::Mutex::new([Watched::FREE; 4]),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, [Watched; 4]> {
        // A slot is written whole: a panic elsewhere leaves them readable.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// libcurl opened `sock` for a connection watched here, after
    /// `instead_of`, the socket the same handle opened last before it
    /// (whose close is then no longer read). Happy eyeballs has at most two
    /// sockets open at once: it takes the slot of an earlier socket of the
    /// same number, else a free one, else one closed (its reading
    /// forgotten); a socket that finds none is not followed.
    pub fn opened(
        &self,
        sock: curl_sys::curl_socket_t,
        instead_of: Option<curl_sys::curl_socket_t>,
    ) {
        let mut slots = self.slots();
        for w in slots.iter_mut().filter(|w| Some(w.sock) == instead_of) {
            w.last = false;
        }
        let at = (slots.iter().position(|w| w.sock == sock))
            .or_else(|| slots.iter().position(|w| w.sock < 0))
            .or_else(|| slots.iter().position(|w| !w.open));
        if let Some(at) = at {
            slots[at] = Watched {
                sock,
                open: true,
                last: true,
                at_close: None,
            };
        }
    }

    fn closed(&self, sock: curl_sys::curl_socket_t) {
        let mut slots = self.slots();
        for slot in slots.iter_mut().filter(|w| w.open && w.sock == sock) {
            slot.open = false;
            slot.at_close = if slot.last { read_tcp_info(sock) } else { None };
        }
    }

    /// A socket of ours that libcurl has opened and not closed yet.
    pub fn open_socket(&self) -> Option<curl_sys::curl_socket_t> {
        self.slots().iter().find(|w| w.open).map(|w| w.sock)
    }

    /// The reading taken as libcurl closed `sock`; `None` while it is open,
    /// when a socket was opened after it, or when the kernel said nothing.
    pub fn at_close(&self, sock: curl_sys::curl_socket_t) -> Option<KernelTcp> {
        let slots = self.slots();
        let slot = slots.iter().find(|w| w.sock == sock && !w.open)?;
        slot.at_close
    }
}

impl Default for CloseWatch {
    fn default() -> CloseWatch {
        CloseWatch::new()
    }
}

/// libcurl's close-socket callback: a word to the watch of the handle that
/// made the connection (one last `TCP_INFO` reading), then the close
/// libcurl would have made itself.
extern "C" fn close_socket(clientp: *mut c_void, sock: curl_sys::curl_socket_t) -> c_int {
    if !clientp.is_null() {
        // SAFETY: a non-null `clientp` is the `CloseWatch` registered with
        // `read_tcp_info_at_close`, whose contract keeps it alive for as long
        // as libcurl may close a connection made with it.
        unsafe { &*(clientp as *const CloseWatch) }.closed(sock);
    }
    // SAFETY: libcurl hands over a descriptor it opened and no longer uses.
    unsafe { libc::close(sock) }
}

/// Has libcurl tell `watch` (when given) about every close of a socket,
/// which it reads the kernel's view of just before (`CloseWatch::at_close`):
/// so a probe whose connection ends without a response still gets one.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_watch_keeps_each_sockets_reading_at_its_close() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let a = std::net::TcpStream::connect(addr).unwrap();
        let b = std::net::TcpStream::connect(addr).unwrap();
        // A byte each way, so the kernel has a round trip for `a`.
        let (mut peer, _) = listener.accept().unwrap();
        (&a).write_all(b"x").unwrap();
        peer.read_exact(&mut [0u8]).unwrap();
        let (fa, fb) = (a.as_raw_fd(), b.as_raw_fd());
        let watch = CloseWatch::new();
        watch.opened(fb, None);
        watch.opened(fa, Some(fb));
        assert_eq!(watch.open_socket(), Some(fb));
        assert_eq!(watch.at_close(fa), None, "open: no reading yet");
        // libcurl's close-socket callback, as libcurl calls it.
        let clientp = &watch as *const CloseWatch as *mut c_void;
        assert_eq!(close_socket(clientp, fa), 0);
        std::mem::forget(a);
        assert!(watch.at_close(fa).is_some_and(|k| k.rtt_us > 0));
        assert_eq!(watch.open_socket(), Some(fb), "the other is still open");
        assert_eq!(watch.at_close(fb), None);
        // Opened before the last: its close is noted, not read.
        watch.closed(fb);
        assert_eq!(watch.open_socket(), None);
        assert_eq!(watch.at_close(fb), None);
        // A socket opened later under the same number starts afresh.
        watch.opened(fa, None);
        assert_eq!(watch.at_close(fa), None);
        assert_eq!(watch.open_socket(), Some(fa));
        drop(b);
    }
}

//! The stamps of one transfer (`TransferStamps`): where OpenSSL's callbacks
//! report the moments of the connections a transfer's handle makes
//! (`curl_ffi::stamp_handshake` has each connection's SSL_CTX keep a
//! counted reference to them, so a connection that outlives its transfer
//! still reports to its own), and what the sample reads of them once the
//! transfer is over. The collector owns them; a warm transfer on a kept
//! connection reports to the same ones, started over before each transfer.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::curl_ffi::{self, HandshakeMoments};
use super::handshake_shape::{HandshakeKernel, Shape};
use super::handshake_stamps::{Reply, Stamps};

/// What the callbacks saw of one transfer's connection, and the socket it
/// opened last (the handshake's end reads its `TCP_INFO`).
#[derive(Debug)]
pub(crate) struct TransferStamps {
    /// Written by the callbacks, on the thread running the transfer, and
    /// read once it is over: never two at once. A callback that found it
    /// taken all the same would drop its moment rather than wait.
    stamps: Mutex<Stamps>,
    socket: AtomicI32,
}

impl TransferStamps {
    pub(crate) fn new() -> Arc<TransferStamps> {
        Arc::new(TransferStamps {
            stamps: Mutex::new(Stamps::EMPTY),
            socket: AtomicI32::new(-1),
        })
    }

    /// Forgets what an earlier transfer of the same handle saw (a kept
    /// connection reports here again).
    pub(crate) fn reset(&self) {
        self.socket.store(-1, Ordering::Relaxed);
        // Before the clock starts: wait for the lock (never skipped, as a
        // callback's `record` may be), a poisoned one included.
        *self.stamps.lock().unwrap_or_else(PoisonError::into_inner) = Stamps::EMPTY;
    }

    /// The transfer opened `sock` (the last one it opened is the connection's).
    pub(crate) fn socket_opened(&self, sock: curl_ffi::curl_socket_t) {
        self.socket.store(sock, Ordering::Relaxed);
    }

    /// Notes a moment.
    fn record(&self, f: impl FnOnce(&mut Stamps)) {
        if let Ok(mut s) = self.stamps.try_lock() {
            f(&mut s);
        }
    }

    fn read<T>(&self, f: impl FnOnce(&Stamps) -> T) -> T {
        f(&self.stamps.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The shape of the transfer's handshake; `None` when no ClientHello
    /// of ours left.
    pub(crate) fn shape(&self) -> Option<Shape> {
        self.read(Stamps::shape)
    }

    /// When the transfer's ClientHello was about to be written to libcurl's socket.
    pub(crate) fn client_hello_sent_us(&self) -> Option<u64> {
        self.read(Stamps::client_hello_sent_us)
    }

    /// The client's own work in the transfer's handshake, with libcurl's
    /// handshake-done stamp at `done_us` (`Stamps::client_finish_us`).
    pub(crate) fn client_finish_us(&self, done_us: u64) -> Option<u64> {
        self.read(|s| s.client_finish_us(done_us))
    }

    /// The request's record written and its response's first record come
    /// in (`Stamps::reply`).
    pub(crate) fn reply(&self, first_byte_us: u64) -> Option<Reply> {
        self.read(|s| s.reply(first_byte_us))
    }

    /// The session tickets the transfer read: how many, and the most early
    /// data one allows.
    pub(crate) fn tickets(&self) -> (u8, u32) {
        self.read(Stamps::tickets)
    }
}

/// The callbacks run on the thread driving the transfer: its CPU clock is
/// the client's.
impl HandshakeMoments for TransferStamps {
    fn header_written(&self, now_us: u64, record_type: u8) {
        self.record(|s| s.header_written(now_us, record_type, curl_ffi::thread_cpu_us));
    }

    fn message_written(&self, _now_us: u64, content_type: i32, message: &[u8]) {
        self.record(|s| s.message_written(content_type, message));
    }

    fn server_data(&self, now_us: u64, content_type: i32, data: &[u8]) {
        self.record(|s| s.server_data(now_us, content_type, data));
    }

    fn waiting_for_socket(&self, now_us: u64) {
        self.record(|s| s.waiting_for_socket(now_us));
    }

    fn handshake_done(&self, now_us: u64) {
        let sock = self.socket.load(Ordering::Relaxed);
        self.record(|s| {
            s.handshake_done(now_us, curl_ffi::thread_cpu_us, || {
                let k = (sock >= 0)
                    .then(|| curl_ffi::read_tcp_info(sock))
                    .flatten()?;
                Some(HandshakeKernel {
                    retrans: k.total_retrans,
                    ooo: k.rcv_ooopack,
                    mss: k.snd_mss.max(k.rcv_mss),
                    min_rtt_us: k.min_rtt_us.unwrap_or(0),
                })
            })
        });
    }

    fn data_read(&self, now_us: u64, bytes: usize) {
        self.record(|s| s.data_read(now_us, bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::handshake_messages::RT_HEADER;

    /// The message callback's pseudo content type of a TLS 1.3 record's
    /// inner content type (ssl3.h).
    const RT_INNER: i32 = 0x101;

    /// One moment as a callback reports it to a recorder.
    enum Step {
        /// Our record header or message (content type, bytes).
        Ours(i32, Vec<u8>),
        /// The server's record header, inner type or message.
        Theirs(i32, Vec<u8>),
        /// A read brought data in.
        Read,

        /// OpenSSL hands control back to libcurl.
        Wait,
        /// The handshake is done.
        Done,
    }

    /// One probe as the callbacks report it to the transfer's recorder
    /// (through the trait object the FFI callbacks find), each moment read
    /// off CLOCK_MONOTONIC as they do; with `bytes` false the same calls
    /// carry nothing to read (what the callbacks cost without the parser).
    fn one_handshake(stamps: &TransferStamps, bytes: bool, steps: &[Step]) {
        stamps.reset();
        let moments: &dyn HandshakeMoments = stamps;
        for step in steps {
            let t = curl_ffi::monotonic_us();
            match step {
                Step::Ours(0x100, data) => {
                    moments.header_written(t, data.first().copied().unwrap_or(0))
                }
                Step::Ours(ct, data) => {
                    moments.message_written(t, *ct, if bytes { data } else { &[] })
                }
                Step::Theirs(ct, data) => {
                    let keep = bytes || *ct == RT_HEADER || *ct == RT_INNER;
                    moments.server_data(t, *ct, if keep { data } else { &[] })
                }
                Step::Read => moments.data_read(t, 1_000),
                Step::Wait => moments.waiting_for_socket(t),
                Step::Done => moments.handshake_done(t),
            }
        }
    }

    /// The work the callbacks add per probe, timed over many replays of a
    /// cold probe (a TLS 1.3 handshake, two session tickets, a request and
    /// its response): every callback's clock reading, the parser, the two
    /// readings of the thread's CPU clock and the `TCP_INFO` one at the
    /// handshake's end (`cargo test --release --lib -- --ignored
    /// callback_cost --nocapture`; a debug build gives an upper bound).
    #[test]
    #[ignore]
    fn callback_cost() {
        use std::hint::black_box;
        let mut exts = Vec::new();
        for kind in [
            0u16, 11, 10, 35, 22, 23, 13, 43, 45, 51, 5, 16, 18, 27, 65281,
        ] {
            exts.extend(kind.to_be_bytes());
            let body: Vec<u8> = if kind == 51 {
                let mut shares = Vec::new();
                for (g, n) in [(0x11ecu16, 1216usize), (0x001d, 32)] {
                    shares.extend(g.to_be_bytes());
                    shares.extend((n as u16).to_be_bytes());
                    shares.extend(vec![7u8; n]);
                }
                let mut v = (shares.len() as u16).to_be_bytes().to_vec();
                v.extend(shares);
                v
            } else {
                vec![1u8; 12]
            };
            exts.extend((body.len() as u16).to_be_bytes());
            exts.extend(body);
        }
        let mut ch = vec![3, 3];
        ch.extend([9u8; 32]);
        ch.push(32);
        ch.extend([1u8; 32]);
        ch.extend([0, 6, 0x13, 1, 0x13, 2, 0x13, 3, 1, 0]);
        ch.extend((exts.len() as u16).to_be_bytes());
        ch.extend(exts);
        let hs = |kind: u8, body: Vec<u8>| {
            let n = body.len() as u32;
            let mut v = vec![kind, (n >> 16) as u8, (n >> 8) as u8, n as u8];
            v.extend(body);
            v
        };
        let header = |ct: u8, n: usize| vec![ct, 3, 3, (n >> 8) as u8, n as u8];
        let mut sh = vec![3, 3];
        sh.extend([5u8; 32]);
        sh.extend([32]);
        sh.extend([1u8; 32]);
        sh.extend([
            0x13, 1, 0, 0, 46, 0, 43, 0, 2, 3, 4, 0, 51, 0, 36, 0, 0x1d, 0, 32,
        ]);
        sh.extend([8u8; 32]);
        let mut nst = 7200u32.to_be_bytes().to_vec();
        nst.extend([0, 0, 0, 9, 1, 0, 0, 64]);
        nst.extend([5u8; 64]);
        nst.extend([0, 8, 0, 0x2a, 0, 4, 0, 0, 0x40, 0]);
        use Step::*;
        let steps: Vec<Step> = vec![
            Ours(0x100, header(22, ch.len() + 4)),
            Ours(22, hs(1, ch)),
            Wait,
            Read,
            Theirs(0x100, header(22, 122)),
            Theirs(22, hs(2, sh)),
            Theirs(0x100, header(20, 1)),
            Theirs(20, vec![1]),
            Theirs(0x100, header(23, 30)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(8, vec![0, 2, 0, 0])),
            Theirs(0x100, header(23, 4100)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(11, vec![0u8; 4090])),
            Theirs(0x100, header(23, 100)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(15, [vec![4, 3, 0, 72], vec![0u8; 72]].concat())),
            Theirs(0x100, header(23, 53)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(20, vec![0u8; 32])),
            Ours(0x100, header(20, 1)),
            Ours(20, vec![1]),
            Ours(0x100, header(23, 53)),
            Ours(0x101, vec![22]),
            Ours(22, hs(20, vec![0u8; 32])),
            Done,
            // The request, then two tickets and the response in one read.
            Ours(0x100, header(23, 60)),
            Ours(0x101, vec![23]),
            Read,
            Theirs(0x100, header(23, nst.len() + 4 + 17)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(4, nst.clone())),
            Theirs(0x100, header(23, nst.len() + 4 + 17)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(4, nst)),
            Theirs(0x100, header(23, 120)),
            Theirs(0x101, vec![23]),
        ];
        // A socket, as libcurl's would be, so the `TCP_INFO` reading at the
        // handshake's end is a real system call.
        let sock = curl_ffi::open_socket(libc::AF_INET, libc::SOCK_STREAM, 0).unwrap();
        let stamps = TransferStamps::new();
        stamps.socket_opened(sock);
        one_handshake(&stamps, true, &steps);
        let seen = stamps.shape().unwrap();
        assert_eq!(
            seen.messages.sent_shares.unwrap().as_slice(),
            &[0x11ec, 0x1d]
        );
        assert_eq!(seen.messages.sig_scheme, Some(0x0403));
        assert!(seen.messages.server_finished && !seen.messages.malformed);
        assert_eq!(stamps.tickets(), (2, 0x4000));
        assert!(stamps.reply(u64::MAX).is_some());
        let n = 100_000;
        let time = |f: &dyn Fn()| {
            let start = std::time::Instant::now();
            for _ in 0..n {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(n)
        };
        let with = time(&|| {
            one_handshake(&stamps, black_box(true), black_box(&steps));
            black_box(stamps.shape());
        });
        let without = time(&|| {
            one_handshake(&stamps, black_box(false), black_box(&steps));
            black_box(stamps.shape());
        });
        let cpu = time(&|| {
            black_box(curl_ffi::thread_cpu_us());
        });
        let tcp = time(&|| {
            black_box(curl_ffi::read_tcp_info(black_box(sock)));
        });
        // SAFETY: the socket opened above, closed once.
        unsafe { libc::close(sock) };
        // Straight to stderr (a measurement to read, run by hand with
        // --ignored); a stderr that cannot take it costs nothing else.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "per probe ({} callbacks): {with:.0} ns in all, {without:.0} ns without the parser \
             ({:.0} ns added by it); of the whole, one CPU-clock reading {cpu:.0} ns (two a \
             probe) and the TCP_INFO reading {tcp:.0} ns",
            steps.len(),
            with - without
        );
    }
}

//! The delay line under [`super::path::DelayedPath`]: one thread moves every
//! IP packet between the two TUN devices, each one `delay` after it read it,
//! in the order read. Everything it holds is allocated before it starts, so
//! the line itself adds no allocation to a packet's time, and what it holds
//! is bounded ([`QUEUE_PACKETS`] a direction; beyond that it drops, as a
//! router with a full queue would).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Room for one packet: the TUN devices keep the default MTU of 1500, and
/// without IFF_VNET_HDR the kernel segments before the device, so nothing
/// larger is ever read.
const SLOT: usize = 2048;

/// Packets held at once in each direction.
pub const QUEUE_PACKETS: usize = 1024;

/// How long before a packet is due the line stops sleeping and polls
/// without waiting instead: a sleeping thread wakes 20–100 µs late here (the
/// timer, then a virtual CPU to run on), a polling one within a few µs.
/// The price is a core held at real-time priority for that long before
/// every packet, which on a 2-core machine is often the core the far end
/// was just woken on: `benches/fidelity_path.rs` measures both sides of
/// that trade (`FIDELITY_SPIN_US`).
pub const WAKE_EARLY: Duration = Duration::from_micros(100);

/// The direction a packet travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toward {
    Server,
    Client,
    /// Both directions, each counting its own segments.
    Both,
}

/// A deterministic loss: of the TCP segments that carry data toward
/// `toward`, every `every`-th (counted over the path's life, across
/// connections) is dropped. SYNs, pure ACKs and FINs always pass, so every
/// connection opens and a loss costs a data retransmission (a timeout of
/// about 200 ms or a tail-loss probe), never a 1 s SYN timeout.
#[derive(Clone, Copy, Debug)]
pub struct Loss {
    pub toward: Toward,
    /// At least 2: with 1 no data would ever arrive.
    pub every: u32,
}

/// What the line has done, updated as it works.
#[derive(Debug, Default)]
pub struct Counters {
    forwarded: AtomicU64,
    lost: AtomicU64,
    overflowed: AtomicU64,
    late_sum_ns: AtomicU64,
    late_max_ns: AtomicU64,
    peak_held: AtomicU64,
}

/// A copy of [`Counters`] at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelaySeen {
    /// Packets delivered to the far side.
    pub forwarded: u64,
    /// Packets dropped by the chosen [`Loss`].
    pub lost: u64,
    /// Packets dropped because [`QUEUE_PACKETS`] were already held.
    pub overflowed: u64,
    /// How late after its due time a packet went out, on average and at
    /// worst: the timer's lateness, not counting the wake-up on arrival
    /// (a round trip timed end to end counts both).
    pub late_mean: Duration,
    pub late_max: Duration,
    /// The most packets held at once in one direction.
    pub peak_held: u64,
}

impl Counters {
    pub fn snapshot(&self) -> RelaySeen {
        let forwarded = self.forwarded.load(Ordering::Relaxed);
        let late_sum = self.late_sum_ns.load(Ordering::Relaxed);
        RelaySeen {
            forwarded,
            lost: self.lost.load(Ordering::Relaxed),
            overflowed: self.overflowed.load(Ordering::Relaxed),
            late_mean: Duration::from_nanos(late_sum.checked_div(forwarded).unwrap_or(0)),
            late_max: Duration::from_nanos(self.late_max_ns.load(Ordering::Relaxed)),
            peak_held: self.peak_held.load(Ordering::Relaxed),
        }
    }
}

/// Bytes of TCP payload in an IPv4 or IPv6 packet (0 for anything else, or
/// for a packet too short to say). IPv6 extension headers are not followed:
/// the kernels on this path send none with TCP.
fn tcp_payload_len(p: &[u8]) -> usize {
    const TCP: u8 = 6;
    let (tcp_at, ip_end) = match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 && p[9] == TCP => (
            usize::from(p[0] & 0x0f) * 4,
            usize::from(u16::from_be_bytes([p[2], p[3]])),
        ),
        Some(6) if p.len() >= 40 && p[6] == TCP => {
            (40, 40 + usize::from(u16::from_be_bytes([p[4], p[5]])))
        }
        _ => return 0,
    };
    let Some(&offset) = p.get(tcp_at + 12) else {
        return 0;
    };
    ip_end
        .min(p.len())
        .saturating_sub(tcp_at + usize::from(offset >> 4) * 4)
}

/// One direction: packets read from `from`, held in a ring, written to `to`.
struct Line {
    from: RawFd,
    to: RawFd,
    slots: Vec<u8>,
    lens: Vec<usize>,
    due: Vec<Instant>,
    head: usize,
    held: usize,
    /// Where a packet is read when the ring is full, to be dropped.
    spill: Vec<u8>,
    loss_every: Option<u64>,
    data_segments: u64,
}

impl Line {
    fn new(from: RawFd, to: RawFd, loss_every: Option<u32>) -> Line {
        Line {
            from,
            to,
            slots: vec![0; SLOT * QUEUE_PACKETS],
            lens: vec![0; QUEUE_PACKETS],
            due: vec![Instant::now(); QUEUE_PACKETS],
            head: 0,
            held: 0,
            spill: vec![0; SLOT],
            loss_every: loss_every.map(u64::from),
            data_segments: 0,
        }
    }

    fn next_due(&self) -> Option<Instant> {
        (self.held > 0).then(|| self.due[self.head])
    }

    /// Reads every packet waiting on `from` (the descriptor is non-blocking).
    fn take_waiting(&mut self, delay: Duration, counters: &Counters) {
        loop {
            let full = self.held == QUEUE_PACKETS;
            let at = (self.head + self.held) % QUEUE_PACKETS;
            let buf = if full {
                &mut self.spill[..]
            } else {
                &mut self.slots[at * SLOT..(at + 1) * SLOT]
            };
            // SAFETY: `buf` is a live, writable slice of exactly `buf.len()`
            // bytes, and `from` is a TUN descriptor the relay owns until it
            // returns; read(2) writes at most that many bytes.
            let n = unsafe { libc::read(self.from, buf.as_mut_ptr().cast(), buf.len()) };
            let Ok(n) = usize::try_from(n) else {
                return; // EAGAIN: nothing more waiting (or the device went away)
            };
            if n == 0 {
                return;
            }
            let now = Instant::now();
            if full {
                counters.overflowed.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if let Some(every) = self.loss_every {
                if tcp_payload_len(&buf[..n]) > 0 {
                    self.data_segments += 1;
                    if self.data_segments.is_multiple_of(every) {
                        counters.lost.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                }
            }
            self.lens[at] = n;
            self.due[at] = now + delay;
            self.held += 1;
            counters
                .peak_held
                .fetch_max(self.held as u64, Ordering::Relaxed);
        }
    }

    /// Writes out every held packet whose time has come.
    fn send_due(&mut self, counters: &Counters) {
        while self.held > 0 {
            let now = Instant::now();
            let due = self.due[self.head];
            if due > now {
                return;
            }
            let packet = &self.slots[self.head * SLOT..][..self.lens[self.head]];
            // SAFETY: `packet` is a live slice of initialised bytes; `to` is a
            // TUN descriptor the relay owns until it returns. A failed write
            // (the far side gone) loses the packet, as a link would.
            unsafe { libc::write(self.to, packet.as_ptr().cast(), packet.len()) };
            let late = u64::try_from((now - due).as_nanos()).unwrap_or(u64::MAX);
            counters.forwarded.fetch_add(1, Ordering::Relaxed);
            counters.late_sum_ns.fetch_add(late, Ordering::Relaxed);
            counters.late_max_ns.fetch_max(late, Ordering::Relaxed);
            self.head = (self.head + 1) % QUEUE_PACKETS;
            self.held -= 1;
        }
    }
}

/// Asks for this thread to be woken on time. A real-time priority (root
/// only; ignored where refused) has the scheduler run it as soon as its timer
/// or a packet wakes it, even on a machine busy with builds: measured here,
/// a sleep's mean lateness drops from 20–100 µs, with outliers of several
/// ms, to under 20 µs. It never waits for a core behind a build, and it takes
/// one only to move packets or for the last [`WAKE_EARLY`] before one is
/// due, so it cannot starve the machine. Where it is refused, no timer slack
/// at least (50 µs by default).
fn be_punctual() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only
    // this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let lowest = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler(2) reads one sched_param, which `lowest`
    // is and which lives across the call; pid 0 is this thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &lowest) };
}

/// Runs the line between the TUN devices until the other end of `stop`
/// closes or a device fails, polling for the last `spin` before each
/// packet is due (see [`WAKE_EARLY`]). The devices close when this returns.
pub fn run(
    client_tun: OwnedFd,
    server_tun: OwnedFd,
    stop: UnixStream,
    (delay, spin): (Duration, Duration),
    loss: Option<Loss>,
    counters: Arc<Counters>,
) {
    be_punctual();
    let every = |toward| {
        loss.filter(|l| l.toward == toward || l.toward == Toward::Both)
            .map(|l| l.every)
    };
    let (client, server) = (client_tun.as_raw_fd(), server_tun.as_raw_fd());
    let mut lines = [
        Line::new(client, server, every(Toward::Server)),
        Line::new(server, client, every(Toward::Client)),
    ];
    loop {
        for line in &mut lines {
            line.send_due(&counters);
        }
        let wait = lines.iter().filter_map(Line::next_due).min().map(|due| {
            let left = due
                .saturating_duration_since(Instant::now())
                .saturating_sub(spin);
            libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            }
        });
        let mut fds = [stop.as_raw_fd(), client, server].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let timeout = wait.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        // SAFETY: `fds` is a live array of three pollfd, `timeout` is null
        // or points at `wait`, which outlives the call; no signal mask.
        let ready = unsafe { libc::ppoll(fds.as_mut_ptr(), 3, timeout, std::ptr::null()) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[0].revents != 0 || fds[1..].iter().any(|p| p.revents & !libc::POLLIN != 0) {
            return;
        }
        for (line, polled) in lines.iter_mut().zip(&fds[1..]) {
            if polled.revents & libc::POLLIN != 0 {
                line.take_waiting(delay, &counters);
            }
        }
    }
}

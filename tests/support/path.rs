//! A real delayed network path: two network namespaces made by the test, a
//! client end and a server end, each with a TUN device, joined by a relay in
//! user space that holds every IP packet (SYN and ACK included) `delay` in
//! each direction ([`super::relay`]). Unlike [`super::delay`], which holds
//! back the server's writes above TCP, the kernels at both ends see a real
//! round trip of 2 × delay: connect time, TLS flights and the kernel's own
//! RTT (TCP_INFO) all read it, and a chosen [`Loss`] makes TCP retransmit.
//!
//! ```ignore
//! let Some(path) = DelayedPath::for_test(Duration::from_millis(15), None) else {
//!     return; // skipped (or failed, under CI)
//! };
//! let server = path.in_server(|| {
//!     start(ServerOpts { bind: Some(SERVER_V4.into()), ..Default::default() })
//! });
//! let out = path.in_client(|| support::tlsping(&["--resolve", ..]));
//! ```
//!
//! A thread is in a namespace, not a process: `in_client` / `in_server` run
//! a closure on a new thread moved into that end. What it starts there stays
//! there: threads it spawns (a test server's runtime), processes it spawns
//! (the binary) and sockets it opens (usable afterwards from any thread).
//! Dropping the path stops the relay and closes both devices; the namespaces
//! end with the last thread or socket still in them. Needs root and `ip`
//! (iproute2); [`DelayedPath::new`] gives `None` where it cannot be made.
//!
//! Addresses are from the ranges reserved for benchmarking (RFC 2544,
//! RFC 5180), so they can never be a real host.

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::relay;
pub use super::relay::{Counters, Loss, RelaySeen, Toward, QUEUE_PACKETS, WAKE_EARLY};

pub const CLIENT_V4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
pub const SERVER_V4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
pub const CLIENT_V6: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 1);
pub const SERVER_V6: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 2);

/// The TUN device's name at both ends (each end is its own namespace).
const DEVICE: &str = "delayline";

/// The two ends and the relay between them; dropped, the relay stops.
pub struct DelayedPath {
    client_ns: OwnedFd,
    server_ns: OwnedFd,
    delay: Duration,
    stop: Option<UnixStream>,
    relay: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

/// One end: its namespace (held open, so it outlives the thread that made
/// it) and its TUN device.
struct End {
    ns: OwnedFd,
    tun: OwnedFd,
}

fn ip(args: &[&str]) -> io::Result<()> {
    let status = Command::new("ip").args(args).status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("ip {}: {status}", args.join(" "))))
    }
}

/// A TUN device named [`DEVICE`] in the calling thread's namespace, carrying
/// bare IP packets (no packet-information header), its descriptor non-blocking.
fn open_tun() -> io::Result<OwnedFd> {
    let file = File::options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/net/tun")?;
    // SAFETY: ifreq is plain data (a name and a union of integers and
    // addresses), for which all zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in req.ifr_name.iter_mut().zip(DEVICE.bytes()) {
        *to = from as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one ifreq, which `req` is and which
    // lives across the call; the descriptor is open.
    if unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file.into())
}

/// Makes a namespace on a thread of its own, with the TUN device up and
/// carrying `v4`/24 and `v6`/64, so each end's address is on-link through it.
fn make_end(v4: Ipv4Addr, v6: Ipv6Addr) -> io::Result<End> {
    std::thread::spawn(move || {
        // SAFETY: unshare(2) takes no pointers; CLONE_NEWNET moves only this
        // thread (and what it starts from now on) into a new namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let ns = File::open("/proc/thread-self/ns/net")?.into();
        let tun = open_tun()?;
        ip(&["addr", "add", &format!("{v4}/24"), "dev", DEVICE])?;
        // No duplicate detection: the address is usable at once, not after
        // a second of probing.
        ip(&[
            "-6",
            "addr",
            "add",
            &format!("{v6}/64"),
            "dev",
            DEVICE,
            "nodad",
        ])?;
        // A device queue deeper than the relay's, so a burst the relay is
        // too slow to read at once waits for it instead of being dropped
        // before it (the relay's own bound is the one that counts).
        ip(&["link", "set", DEVICE, "txqueuelen", "4096", "up"])?;
        Ok(End { ns, tun })
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")))
}

/// Runs `f` on a new thread moved into the namespace `ns`.
fn run_in<T: Send>(ns: &OwnedFd, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let thread = scope.spawn(|| {
            // SAFETY: setns(2) takes the namespace descriptor, which `ns`
            // keeps open; it moves only this thread.
            let moved = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(moved, 0, "setns: {}", io::Error::last_os_error());
            f()
        });
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

impl DelayedPath {
    /// A path holding every packet `delay` each way (round trip 2 × delay),
    /// dropping what `loss` chooses. `None` where namespaces or TUN devices
    /// cannot be made here (not root, no `ip`, no /dev/net/tun).
    pub fn new(delay: Duration, loss: Option<Loss>) -> Option<DelayedPath> {
        DelayedPath::with_spin(delay, loss, relay::WAKE_EARLY)
    }

    /// [`DelayedPath::new`] with the relay polling for `spin` before each
    /// packet is due instead of [`relay::WAKE_EARLY`] (zero: it only sleeps).
    pub fn with_spin(delay: Duration, loss: Option<Loss>, spin: Duration) -> Option<DelayedPath> {
        if let Some(loss) = loss {
            assert!(loss.every >= 2, "dropping every segment would deliver none");
        }
        let client = make_end(CLIENT_V4, CLIENT_V6).ok()?;
        let server = make_end(SERVER_V4, SERVER_V6).ok()?;
        // The relay ends when this pair's other end closes (on drop).
        let (stop, stop_seen) = UnixStream::pair().ok()?;
        let counters = Arc::new(Counters::default());
        let relay = {
            let counters = counters.clone();
            let (client_tun, server_tun) = (client.tun, server.tun);
            std::thread::Builder::new()
                .name("delay-line".into())
                .spawn(move || {
                    relay::run(
                        client_tun,
                        server_tun,
                        stop_seen,
                        (delay, spin),
                        loss,
                        counters,
                    )
                })
                .ok()?
        };
        Some(DelayedPath {
            client_ns: client.ns,
            server_ns: server.ns,
            delay,
            stop: Some(stop),
            relay: Some(relay),
            counters,
        })
    }

    /// [`DelayedPath::new`] for a test: where the path cannot be made it
    /// prints one line and gives `None` (the test returns, skipped), but
    /// under `CI=true` it fails, since CI runs as root with iproute2.
    pub fn for_test(delay: Duration, loss: Option<Loss>) -> Option<DelayedPath> {
        if !super::have("ip") {
            return None;
        }
        let path = DelayedPath::new(delay, loss);
        if path.is_none() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must be able to make a delayed path (root, /dev/net/tun, iproute2)"
            );
            // Past libtest's capture, as `have` does: a skip must be seen.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "skipped: cannot make network namespaces joined by TUN devices here (needs root)"
            );
        }
        path
    }

    /// The one-way delay; a round trip is twice this.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Runs `f` in the client's namespace (where [`CLIENT_V4`] and
    /// [`CLIENT_V6`] live) and returns what it returns.
    pub fn in_client<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        run_in(&self.client_ns, f)
    }

    /// Runs `f` in the server's namespace (where [`SERVER_V4`] and
    /// [`SERVER_V6`] live); a test server started here keeps running there.
    pub fn in_server<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        run_in(&self.server_ns, f)
    }

    /// What the relay has done so far.
    pub fn relay_seen(&self) -> RelaySeen {
        self.counters.snapshot()
    }

    /// The relay's counters, shared with its thread (which drops its
    /// reference when it ends).
    pub fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }
}

impl Drop for DelayedPath {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(relay) = self.relay.take() {
            let _ = relay.join();
        }
    }
}

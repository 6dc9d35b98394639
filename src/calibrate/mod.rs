//! A small HTTPS server on the loopback interface, for `tlsping --calibrate`.
//!
//! Calibration asks how fast this machine's client side can possibly be: the
//! same libcurl and OpenSSL the probes use, talking to a server on 127.0.0.1
//! that answers at once. The server here is deliberately plain: blocking
//! sockets, one thread per connection, HTTP/1.1 with keep-alive, and a fixed
//! short body. It needs nothing beyond `openssl` and the standard library, and
//! works without any network. tlsping sends no request body, so the server
//! reads none: a request that declares one is answered and its connection
//! closed (`connection.rs`).
//!
//! The certificate is made fresh at start. It is self-signed and marked as a
//! CA, so the client can use it as its only trust anchor and keep full
//! verification (chain and host name) switched on, as in a real probe.
//!
//! Nothing in the request path sleeps or polls: `accept` and reads block, so a
//! new connection or request is picked up as soon as the kernel delivers it.
//! Reads wake up every 100 ms only to notice a stop request or an idle limit.

#![deny(unsafe_code)]

pub mod cert;
mod connection;

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use openssl::asn1::Asn1Time;
use openssl::error::ErrorStack;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{
    select_next_proto, AlpnError, SslAcceptor, SslMethod, SslSessionCacheMode, SslVersion,
};
use openssl::x509::extension::BasicConstraints;
use openssl::x509::X509;

use cert::CertSpec;

/// The body sent for every request other than HEAD.
const BODY: &[u8] = b"tlsping calibration\n";

/// Longest request head (request line and headers, blank line included).
const MAX_HEAD: usize = 16 * 1024;

/// How often a blocked read wakes up to look at the stop flag and the clock.
/// It adds no latency: data that arrives ends the read at once.
const TICK: Duration = Duration::from_millis(100);

/// How long a connection may sit without a complete request before it is
/// closed. Generous, so keep-alive survives long gaps between rounds.
const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// How long a TLS handshake may take from accept to finish.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);

/// How long one write may block (a client that does not read is dropped).
const WRITE_LIMIT: Duration = Duration::from_secs(2);

/// Connections served at once; more are closed as soon as they are accepted.
const MAX_CONNECTIONS: usize = 256;

/// How long the accept thread, once stopping, waits for connection threads.
const CONNECTION_GRACE: Duration = Duration::from_millis(500);

/// How long `Drop` waits for the accept thread before leaving it behind.
const STOP_LIMIT: Duration = Duration::from_secs(1);

/// ALPN protocols the server will pick, in wire format: HTTP/1.1 only.
const ALPN_HTTP11: &[u8] = b"\x08http/1.1";

/// State shared by the handle, the accept thread and the connection threads.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    connections: AtomicU64,
    requests: AtomicU64,
    resumed: AtomicU64,
}

/// A TLS 1.3 HTTP/1.1 server on 127.0.0.1 with a certificate made at start.
///
/// TLS 1.2 is accepted too. Dropping the value stops the server.
pub struct FloorServer {
    addr: SocketAddr,
    certificate: X509,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FloorServer {
    /// Binds 127.0.0.1:0, makes a fresh key + self-signed certificate
    /// (subject CN=localhost, subjectAltName DNS:localhost and IP:127.0.0.1,
    /// valid from now-1day to now+30days, P-256 ECDSA key, SHA-256 signature,
    /// basicConstraints CA:TRUE so it can serve as its own trust anchor),
    /// and starts serving on background threads.
    ///
    /// The error names the step that failed.
    pub fn start() -> Result<FloorServer, String> {
        let (certificate, key) = make_identity()
            .map_err(|e| format!("calibration server: cannot make a certificate: {e}"))?;
        let acceptor = make_acceptor(&certificate, &key)
            .map_err(|e| format!("calibration server: cannot set up TLS: {e}"))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| format!("calibration server: cannot listen on 127.0.0.1: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("calibration server: cannot read the bound address: {e}"))?;
        let shared = Arc::new(Shared::default());
        let for_thread = Arc::clone(&shared);
        let accept_thread = thread::Builder::new()
            .name("calibrate-accept".into())
            .spawn(move || accept_loop(listener, acceptor, for_thread))
            .map_err(|e| format!("calibration server: cannot start a thread: {e}"))?;
        Ok(FloorServer {
            addr,
            certificate,
            shared,
            accept_thread: Some(accept_thread),
        })
    }

    /// The port the server listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The certificate, to be used as the only trust anchor by the client.
    pub fn certificate(&self) -> &X509 {
        &self.certificate
    }

    /// TCP connections taken on so far (counted at accept, before the TLS
    /// handshake; connections refused for being over the limit are not counted).
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Requests answered so far (counted just before the answer is written,
    /// so a client that has read an answer always sees it counted).
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// TLS handshakes so far that resumed an earlier session (counted before
    /// the first request on that connection is read).
    pub fn resumed(&self) -> u64 {
        self.shared.resumed.load(Ordering::SeqCst)
    }
}

impl Drop for FloorServer {
    /// Stops the server: raises the stop flag, wakes the blocked `accept` with
    /// a connection of its own, and joins the accept thread, which first gives
    /// connection threads a short grace period to finish. Waits at most about
    /// a second; a thread still running after that is left to end by itself
    /// (each one notices the flag within 100 ms, or when a blocked write times out).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let Some(accept_thread) = self.accept_thread.take() else {
            return;
        };
        // The accept thread sees the flag when `accept` returns; this makes it return.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        let deadline = Instant::now() + STOP_LIMIT;
        while !accept_thread.is_finished() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        if accept_thread.is_finished() {
            let _ = accept_thread.join();
        }
    }
}

/// A P-256 key and a self-signed certificate for `localhost` and 127.0.0.1
/// that can also act as its own CA.
fn make_identity() -> Result<(X509, PKey<Private>), ErrorStack> {
    let key = cert::p256_key()?;
    let a_day_ago = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .saturating_sub(24 * 60 * 60);
    let not_before = Asn1Time::from_unix(a_day_ago.try_into().unwrap_or(0))?;
    let not_after = Asn1Time::days_from_now(30)?;
    let spec = CertSpec {
        common_name: "localhost",
        not_before: &not_before,
        not_after: &not_after,
        extensions: vec![BasicConstraints::new().critical().ca().build()?],
        subject_key_id: true,
        dns_names: &["localhost"],
        ip_addresses: &["127.0.0.1"],
    };
    let certificate = cert::issue(spec, &key, None)?;
    Ok((certificate, key))
}

/// The TLS side: TLS 1.2 at least (1.3 preferred), HTTP/1.1 by ALPN, session
/// tickets on (OpenSSL's default of two per TLS 1.3 handshake) and the server
/// session cache on for TLS 1.2 session ids.
fn make_acceptor(certificate: &X509, key: &PKey<Private>) -> Result<SslAcceptor, ErrorStack> {
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    builder.set_certificate(certificate)?;
    builder.set_private_key(key)?;
    builder.check_private_key()?;
    // Pick http/1.1 when offered; a client offering only h2 gets no ALPN
    // answer at all (and then speaks HTTP/1.1 by default).
    builder.set_alpn_select_callback(|_, offered| {
        select_next_proto(ALPN_HTTP11, offered).ok_or(AlpnError::NOACK)
    });
    builder.set_session_cache_mode(SslSessionCacheMode::SERVER);
    builder.set_session_id_context(b"tlsping-calibrate")?;
    Ok(builder.build())
}

/// Takes connections until the stop flag is raised, one thread each.
fn accept_loop(listener: TcpListener, acceptor: SslAcceptor, shared: Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    // `incoming` never ends by itself; the stop flag ends the loop.
    for incoming in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let tcp = match incoming {
            Ok(tcp) => tcp,
            Err(_) => {
                // Out of descriptors or an aborted connection: do not spin.
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        workers.retain(|w| !w.is_finished());
        if workers.len() >= MAX_CONNECTIONS {
            continue; // dropping `tcp` closes it
        }
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let acceptor = acceptor.clone();
        let for_worker = Arc::clone(&shared);
        let spawned = thread::Builder::new()
            .name("calibrate-conn".into())
            .spawn(move || connection::serve_connection(tcp, &acceptor, &for_worker));
        if let Ok(worker) = spawned {
            workers.push(worker);
        }
    }
    let deadline = Instant::now() + CONNECTION_GRACE;
    while workers.iter().any(|w| !w.is_finished()) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    for worker in workers {
        if worker.is_finished() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

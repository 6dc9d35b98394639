//! A small HTTPS server on the loopback interface, for `tlsping --calibrate`.
//!
//! Calibration asks how fast this machine's client side can possibly be: the
//! same libcurl and OpenSSL the probes use, talking to a server on 127.0.0.1
//! that answers at once. The server here is deliberately plain: blocking
//! sockets, one thread per connection, HTTP/1.1 with keep-alive, and a fixed
//! short body. It needs nothing beyond `openssl` and the standard library, and
//! works without any network.
//!
//! The certificate is made fresh at start. It is self-signed and marked as a
//! CA, so the client can use it as its only trust anchor and keep full
//! verification (chain and host name) switched on, as in a real probe.
//!
//! Nothing in the request path sleeps or polls: `accept` and reads block, so a
//! new connection or request is picked up as soon as the kernel delivers it.
//! Reads wake up every 100 ms only to notice a stop request or an idle limit.

#![deny(unsafe_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{
    select_next_proto, AlpnError, HandshakeError, SslAcceptor, SslMethod, SslSessionCacheMode,
    SslStream, SslVersion,
};
use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName, SubjectKeyIdentifier};
use openssl::x509::{X509NameBuilder, X509};

/// The body sent for every request other than HEAD.
const BODY: &[u8] = b"tlsping calibration\n";

/// Longest request head (request line and headers, blank line included).
const MAX_HEAD: usize = 16 * 1024;

/// Largest request body that is read and thrown away; a longer one (or one
/// without a length) is answered and the connection closed after the answer.
const MAX_BODY: u64 = 64 * 1024;

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
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = PKey::from_ec_key(EcKey::generate(&group)?)?;

    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("CN", "localhost")?;
    let name = name.build();

    // A random positive serial; the top bit is set so it is never zero.
    let mut serial = BigNum::new()?;
    serial.rand(63, MsbOption::ONE, false)?;

    let a_day_ago = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .saturating_sub(24 * 60 * 60);
    let not_before = Asn1Time::from_unix(a_day_ago.try_into().unwrap_or(0))?;
    let not_after = Asn1Time::days_from_now(30)?;

    let mut builder = X509::builder()?;
    builder.set_version(2)?; // X.509 v3
    let serial = serial.to_asn1_integer()?;
    builder.set_serial_number(&serial)?;
    builder.set_subject_name(&name)?;
    builder.set_issuer_name(&name)?;
    builder.set_pubkey(&key)?;
    builder.set_not_before(&not_before)?;
    builder.set_not_after(&not_after)?;
    builder.append_extension(BasicConstraints::new().critical().ca().build()?)?;
    let subject_key_id = SubjectKeyIdentifier::new().build(&builder.x509v3_context(None, None))?;
    builder.append_extension(subject_key_id)?;
    let alt_names = SubjectAlternativeName::new()
        .dns("localhost")
        .ip("127.0.0.1")
        .build(&builder.x509v3_context(None, None))?;
    builder.append_extension(alt_names)?;
    builder.sign(&key, MessageDigest::sha256())?;
    Ok((builder.build(), key))
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
            .spawn(move || serve_connection(tcp, &acceptor, &for_worker));
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

/// One connection: handshake, then requests until the client closes, asks to
/// close, misbehaves, goes idle too long, or the server stops.
fn serve_connection(tcp: TcpStream, acceptor: &SslAcceptor, shared: &Shared) {
    // Each answer is one write; Nagle would only add a delay of our own making.
    let _ = tcp.set_nodelay(true);
    if tcp.set_read_timeout(Some(TICK)).is_err()
        || tcp.set_write_timeout(Some(WRITE_LIMIT)).is_err()
    {
        return;
    }
    let Some(mut tls) = handshake(tcp, acceptor, &shared.stop) else {
        return;
    };
    if tls.ssl().session_reused() {
        shared.resumed.fetch_add(1, Ordering::SeqCst);
    }

    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    // Every pass answers one request or ends the connection; reads inside are
    // bounded by the idle deadline and the stop flag.
    loop {
        let deadline = Instant::now() + IDLE_LIMIT;
        let Some(head_len) = read_head(&mut tls, &mut buf, &shared.stop, deadline) else {
            break;
        };
        let Some(request) = parse_head(&buf[..head_len]) else {
            break;
        };
        buf.drain(..head_len);

        let mut close = request.close;
        match request.body {
            BodyFraming::Length(0) => {}
            BodyFraming::Length(n) if n <= MAX_BODY => {
                if !discard_body(&mut tls, &mut buf, n, &shared.stop, deadline) {
                    break;
                }
            }
            // Too long to read or not framed by a length: answer, then close.
            BodyFraming::Length(_) | BodyFraming::Unframed => close = true,
        }

        shared.requests.fetch_add(1, Ordering::SeqCst);
        let answer = response(request.head_only, close);
        if tls.write_all(&answer).and_then(|()| tls.flush()).is_err() {
            break;
        }
        if close {
            let _ = tls.shutdown();
            break;
        }
    }
}

/// Runs the server side of the TLS handshake, retrying while the socket's
/// read timeout merely ticks; `None` if it fails, times out or the server stops.
fn handshake(
    tcp: TcpStream,
    acceptor: &SslAcceptor,
    stop: &AtomicBool,
) -> Option<SslStream<TcpStream>> {
    let deadline = Instant::now() + HANDSHAKE_LIMIT;
    let mut attempt = acceptor.accept(tcp);
    loop {
        match attempt {
            Ok(tls) => return Some(tls),
            Err(HandshakeError::WouldBlock(mid)) => {
                if stop.load(Ordering::SeqCst) || Instant::now() >= deadline {
                    return None;
                }
                attempt = mid.handshake();
            }
            Err(_) => return None,
        }
    }
}

/// Reads more bytes into `buf`. False on end of stream, error, stop or deadline.
fn fill(
    tls: &mut SslStream<TcpStream>,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
    deadline: Instant,
) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        if stop.load(Ordering::SeqCst) || Instant::now() >= deadline {
            return false;
        }
        match tls.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            // The read timeout ticked (or a signal): look at the flag and clock again.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => return false,
        }
    }
}

/// Reads until `buf` starts with a whole request head and returns its length
/// (blank line included). Empty lines before a request are skipped. `None`
/// if the head grows past [`MAX_HEAD`] or reading stops.
fn read_head(
    tls: &mut SslStream<TcpStream>,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
    deadline: Instant,
) -> Option<usize> {
    let mut searched = 0;
    loop {
        let blank = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if blank > 0 {
            buf.drain(..blank);
            searched = 0;
        }
        if let Some(at) = find_blank_line(&buf[searched..]) {
            return Some(searched + at + 4);
        }
        if buf.len() >= MAX_HEAD {
            return None;
        }
        // The terminator may straddle what has been read so far and what comes next.
        searched = buf.len().saturating_sub(3);
        if !fill(tls, buf, stop, deadline) {
            return None;
        }
    }
}

/// Position of the first CRLFCRLF in `bytes`.
fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Reads and throws away a request body of `len` bytes, some of which may
/// already be in `buf`. False if the body does not arrive.
fn discard_body(
    tls: &mut SslStream<TcpStream>,
    buf: &mut Vec<u8>,
    len: u64,
    stop: &AtomicBool,
    deadline: Instant,
) -> bool {
    // `len` is at most MAX_BODY, so it fits in usize.
    let mut left = usize::try_from(len).unwrap_or(usize::MAX);
    loop {
        let have = left.min(buf.len());
        buf.drain(..have);
        left -= have;
        if left == 0 {
            return true;
        }
        if !fill(tls, buf, stop, deadline) {
            return false;
        }
    }
}

/// How the request body is delimited.
#[derive(Debug, PartialEq, Eq)]
enum BodyFraming {
    /// `Content-Length` (0 when absent).
    Length(u64),
    /// `Transfer-Encoding` present: the body's end is not known without decoding it.
    Unframed,
}

/// What the server needs from a request head.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    /// HEAD: the answer carries headers only.
    head_only: bool,
    /// The client wants the connection closed after this answer.
    close: bool,
    body: BodyFraming,
}

/// Parses a request head (request line, headers, blank line). `None` for
/// anything malformed, which ends the connection without an answer.
fn parse_head(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || method.is_empty() || target.is_empty() {
        return None;
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return None,
    };

    let mut close_asked = false;
    let mut keep_alive_asked = false;
    let mut length: Option<u64> = None;
    let mut unframed = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                close_asked |= token.eq_ignore_ascii_case("close");
                keep_alive_asked |= token.eq_ignore_ascii_case("keep-alive");
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            let n: u64 = value.parse().ok()?;
            if length.is_some_and(|seen| seen != n) {
                return None;
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            unframed = true;
        }
    }

    Some(Request {
        head_only: method == "HEAD",
        // HTTP/1.0 closes unless it asks for keep-alive.
        close: close_asked || (http10 && !keep_alive_asked),
        body: if unframed {
            BodyFraming::Unframed
        } else {
            BodyFraming::Length(length.unwrap_or(0))
        },
    })
}

/// The whole answer to one request, ready for a single write.
fn response(head_only: bool, close: bool) -> Vec<u8> {
    let connection = if close { "close" } else { "keep-alive" };
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: text/plain\r\nConnection: {}\r\n\r\n",
        BODY.len(),
        connection
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(BODY);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::ssl::{SslConnector, SslSession};
    use openssl::x509::store::X509StoreBuilder;

    /// A client context that trusts only the server's own certificate.
    fn connector(server: &FloorServer) -> SslConnector {
        let mut store = X509StoreBuilder::new().unwrap();
        store.add_cert(server.certificate().clone()).unwrap();
        let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
        builder.set_cert_store(store.build());
        builder.set_alpn_protos(b"\x02h2\x08http/1.1").unwrap();
        builder.build()
    }

    fn tcp(server: &FloorServer) -> TcpStream {
        let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, server.port())).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        tcp
    }

    /// Connects with full verification of the name `localhost`.
    fn connect(server: &FloorServer) -> SslStream<TcpStream> {
        connector(server).connect("localhost", tcp(server)).unwrap()
    }

    /// Sends one request and reads its answer: (status line, headers, body).
    fn exchange(
        tls: &mut SslStream<TcpStream>,
        method: &str,
        extra: &str,
    ) -> (String, Vec<(String, String)>, Vec<u8>) {
        exchange_with_body(tls, method, extra, "")
    }

    /// Like `exchange`, with a request body after the head.
    fn exchange_with_body(
        tls: &mut SslStream<TcpStream>,
        method: &str,
        extra: &str,
        request_body: &str,
    ) -> (String, Vec<(String, String)>, Vec<u8>) {
        let request =
            format!("{method} / HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n{request_body}");
        tls.write_all(request.as_bytes()).unwrap();
        tls.flush().unwrap();

        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        let head_end = loop {
            if let Some(at) = find_blank_line(&buf) {
                break at + 4;
            }
            let n = tls.read(&mut chunk).unwrap();
            assert!(n > 0, "connection closed before the response head");
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
        let mut lines = head.trim_end().split("\r\n");
        let status = lines.next().unwrap().to_string();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (k, v) = l.split_once(':').unwrap();
                (k.trim().to_ascii_lowercase(), v.trim().to_string())
            })
            .collect();
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap();
        let mut body = buf[head_end..].to_vec();
        if method != "HEAD" {
            while body.len() < length {
                let n = tls.read(&mut chunk).unwrap();
                assert!(n > 0, "connection closed inside the body");
                body.extend_from_slice(&chunk[..n]);
            }
        }
        (status, headers, body)
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn head_then_get_on_one_connection() {
        let server = FloorServer::start().unwrap();
        let mut tls = connect(&server);
        assert_eq!(
            tls.ssl().selected_alpn_protocol(),
            Some(&b"http/1.1"[..]),
            "h2 must not be chosen"
        );

        let (status, headers, body) = exchange(&mut tls, "HEAD", "");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(
            header(&headers, "content-length"),
            Some(BODY.len().to_string().as_str())
        );
        assert_eq!(header(&headers, "connection"), Some("keep-alive"));
        assert!(body.is_empty(), "HEAD answer carried a body");

        let (status, headers, body) = exchange(&mut tls, "GET", "Range: bytes=0-0\r\n");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(
            header(&headers, "content-length"),
            Some(BODY.len().to_string().as_str())
        );
        assert_eq!(header(&headers, "content-type"), Some("text/plain"));
        assert_eq!(body, BODY);

        assert_eq!(server.connections(), 1);
        assert_eq!(server.requests(), 2);
        assert_eq!(server.resumed(), 0);
    }

    #[test]
    fn request_body_is_skipped_and_close_is_honoured() {
        let server = FloorServer::start().unwrap();
        let mut tls = connect(&server);
        let (status, _, body) =
            exchange_with_body(&mut tls, "POST", "Content-Length: 5\r\n", "hello");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(body, BODY);
        let (_, headers, _) = exchange(&mut tls, "GET", "Connection: close\r\n");
        assert_eq!(header(&headers, "connection"), Some("close"));
        let mut rest = Vec::new();
        // After `Connection: close` the server sends close_notify and closes.
        assert_eq!(tls.read_to_end(&mut rest).unwrap(), 0);
        assert_eq!(server.requests(), 2);
    }

    /// The client side of resumption: `set_session` is `unsafe` in the
    /// `openssl` crate because the session must come from the same context,
    /// which holds here (both connections use the one `connector`).
    #[allow(unsafe_code)]
    fn connect_resuming(
        connector: &SslConnector,
        session: &SslSession,
        tcp: TcpStream,
    ) -> SslStream<TcpStream> {
        let mut ssl = connector
            .configure()
            .unwrap()
            .into_ssl("localhost")
            .unwrap();
        // SAFETY: `session` was made by a connection from this same `connector`.
        unsafe { ssl.set_session(session).unwrap() };
        let mut tls = SslStream::new(ssl, tcp).unwrap();
        tls.connect().unwrap();
        tls
    }

    #[test]
    fn tls13_with_resumption() {
        let server = FloorServer::start().unwrap();
        let connector = connector(&server);

        let mut first = connector.connect("localhost", tcp(&server)).unwrap();
        assert_eq!(first.ssl().version2(), Some(SslVersion::TLS1_3));
        assert!(!first.ssl().session_reused());
        // TLS 1.3 tickets come after the handshake; reading an answer takes them in.
        let (status, _, _) = exchange(&mut first, "GET", "");
        assert_eq!(status, "HTTP/1.1 200 OK");
        let session = first.ssl().session().unwrap().to_owned();

        let mut second = connect_resuming(&connector, &session, tcp(&server));
        assert_eq!(second.ssl().version2(), Some(SslVersion::TLS1_3));
        assert!(second.ssl().session_reused(), "client did not resume");
        let (status, _, body) = exchange(&mut second, "GET", "");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(body, BODY);

        assert_eq!(server.resumed(), 1);
        assert_eq!(server.connections(), 2);
        assert_eq!(server.requests(), 2);
    }

    #[test]
    fn drop_is_bounded_with_open_clients() {
        let server = FloorServer::start().unwrap();
        // One client mid-keep-alive, one that never starts its handshake.
        let mut idle = connect(&server);
        let _ = exchange(&mut idle, "GET", "");
        let _silent = tcp(&server);
        let started = Instant::now();
        drop(server);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "drop took {took:?}");
        // The server side of the kept-alive connection is gone as well: the
        // read ends (EOF, clean or not) instead of running into its timeout.
        idle.get_ref()
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut rest = Vec::new();
        if let Err(e) = idle.read_to_end(&mut rest) {
            assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "connection still open after drop: {e}"
            );
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn certificate_has_the_promised_shape() {
        let server = FloorServer::start().unwrap();
        let cert = server.certificate();
        let cn = cert
            .subject_name()
            .entries_by_nid(Nid::COMMONNAME)
            .next()
            .unwrap()
            .data()
            .to_string()
            .unwrap();
        assert_eq!(cn, "localhost");
        let names = cert.subject_alt_names().unwrap();
        assert!(names.iter().any(|n| n.dnsname() == Some("localhost")));
        assert!(names
            .iter()
            .any(|n| n.ipaddress() == Some(&[127, 0, 0, 1][..])));
        assert!(cert.verify(&cert.public_key().unwrap()).unwrap());
        assert_eq!(
            cert.signature_algorithm().object().nid(),
            Nid::ECDSA_WITH_SHA256
        );
        let now = Asn1Time::days_from_now(0).unwrap();
        let before = cert.not_before().diff(&now).unwrap();
        assert_eq!(before.days, 1, "not_before should be a day ago");
        let after = now.diff(cert.not_after()).unwrap();
        let after_secs = i64::from(after.days) * 86_400 + i64::from(after.secs);
        assert!(
            (after_secs - 30 * 86_400).abs() < 60,
            "not_after off by {after:?}"
        );
    }

    #[test]
    fn parse_head_cases() {
        let req = |s: &str| parse_head(s.as_bytes());
        assert_eq!(
            req("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(Request {
                head_only: false,
                close: false,
                body: BodyFraming::Length(0)
            })
        );
        assert_eq!(
            req("HEAD / HTTP/1.1\r\nconnection: Keep-Alive, CLOSE\r\n\r\n"),
            Some(Request {
                head_only: true,
                close: true,
                body: BodyFraming::Length(0)
            })
        );
        assert!(req("GET / HTTP/1.0\r\n\r\n").unwrap().close);
        assert!(
            !req("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                .unwrap()
                .close
        );
        assert_eq!(
            req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                .unwrap()
                .body,
            BodyFraming::Unframed
        );
        assert_eq!(req("GET / HTTP/2\r\n\r\n"), None);
        assert_eq!(req("GET /\r\n\r\n"), None);
        assert_eq!(req("GET / HTTP/1.1\r\nno colon\r\n\r\n"), None);
        assert_eq!(
            req("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            None
        );
        assert_eq!(req("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), None);
    }
}

//! Raw fault servers on 127.0.0.1: blocking std sockets and OpenSSL, one
//! thread per connection, bounded in connections and in time. The first
//! `ok_first` connections are served normally (so the preflight and early
//! probes succeed); every later connection gets the chosen fault.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{AlpnError, SslAcceptor, SslMethod, SslStream, SslVerifyMode, SslVersion};
use openssl::x509::extension::SubjectAlternativeName;
use openssl::x509::{X509NameBuilder, X509};

use super::pki::{ca, leaf, CertKind};

/// No server accepts more connections than this.
const MAX_CONNS: usize = 64;
/// No server (or connection) lives longer than this, whatever the test does.
const MAX_LIFETIME: Duration = Duration::from_secs(30);
/// How often blocked threads look at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// What a connection after the first `ok_first` ones gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No fault: every connection is served normally.
    None,
    /// TLS handshake, read the request, never answer (until the client leaves).
    Hang,
    /// Read the start of the ClientHello, then reset the connection (RST).
    ResetInHandshake,
    /// TLS handshake, read the request, send part of the headers, then RST.
    ResetInResponse,
    /// Close the TCP connection (FIN) right after accepting it.
    CloseOnAccept,
    /// TLS handshake, read the request, close without a byte of response.
    CloseAfterRequest,
    /// Headers announcing `Content-Length: 100`, then 10 bytes and close.
    ShortBody,
    /// Answer the ClientHello with plaintext HTTP, as a non-TLS server would.
    Plaintext,
    /// TLS handshake, read the request, answer with a line that is not HTTP.
    NotHttp,
    /// Answer with a redirect whose `Location` carries terminal escape
    /// sequences (set the title, clear the screen, turn text red).
    HostileRedirect,
    /// Serve the first request on the connection with keep-alive, then close
    /// as soon as the second arrives: the client finds out only after sending it.
    DropSecondRequest,
    /// Answer every request with exactly these bytes, a whole response the
    /// connection stays open after: text no HTTP library would send (raw
    /// control characters in a header value, say).
    Answer(&'static [u8]),
}

/// How a fault server behaves.
#[derive(Clone)]
pub struct FaultOpts {
    /// Connections served normally before the fault starts (1 = the preflight).
    pub ok_first: usize,
    pub fault: Fault,
    /// The certificate and key to present; `None` = a good leaf from the test CA.
    pub leaf: Option<(X509, PKey<Private>)>,
    /// Demand a client certificate (the client has none).
    pub client_cert: bool,
    /// Cap the server at TLS 1.2.
    pub tls12: bool,
    /// How many connections get the fault before service is normal again
    /// (`None` = every one after `ok_first`).
    pub faulty: Option<usize>,
    /// A connection whose first byte is not a TLS handshake record (a
    /// plain HTTP request) gets what nginx answers plain HTTP on an HTTPS
    /// port with: a 400, then a close.
    pub plain_http_400: bool,
}

impl Default for FaultOpts {
    fn default() -> Self {
        FaultOpts {
            ok_first: 1,
            fault: Fault::None,
            leaf: None,
            client_cert: false,
            tls12: false,
            faulty: None,
            plain_http_400: false,
        }
    }
}

/// What the fault server saw.
#[derive(Default, Debug)]
pub struct FaultCounters {
    pub accepted: AtomicUsize,
    /// Requests read completely (head of the request up to the blank line).
    pub requests: AtomicUsize,
    /// Connections that got the fault.
    pub faulted: AtomicUsize,
}

pub struct FaultServer {
    pub addr: SocketAddr,
    pub counters: Arc<FaultCounters>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FaultServer {
    /// `https://localhost:<port>/` — the name the test certificates are issued for.
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A port on 127.0.0.1 that was free a moment ago and has nothing listening.
pub fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

fn new_key() -> PKey<Private> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
    PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("PKey")
}

/// A leaf for localhost that is wrong in a way other than name, expiry or CA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadLeaf {
    /// notBefore is tomorrow.
    NotYetValid,
    /// Names the test CA as issuer, but is signed by another key.
    BadSignature,
}

pub fn bad_leaf(kind: BadLeaf) -> (X509, PKey<Private>) {
    let key = new_key();
    let mut name = X509NameBuilder::new().expect("name");
    name.append_entry_by_text("CN", "localhost").expect("CN");
    let name = name.build();
    let mut b = X509::builder().expect("builder");
    b.set_version(2).expect("version");
    let mut bn = BigNum::new().expect("bignum");
    bn.rand(64, MsbOption::MAYBE_ZERO, false).expect("rand");
    b.set_serial_number(&bn.to_asn1_integer().expect("serial"))
        .expect("serial");
    b.set_subject_name(&name).expect("subject");
    b.set_issuer_name(ca().cert.subject_name()).expect("issuer");
    b.set_pubkey(&key).expect("pubkey");
    let (from, to) = match kind {
        BadLeaf::NotYetValid => (1, 30),
        BadLeaf::BadSignature => (0, 30),
    };
    b.set_not_before(&Asn1Time::days_from_now(from).expect("time"))
        .expect("not before");
    b.set_not_after(&Asn1Time::days_from_now(to).expect("time"))
        .expect("not after");
    let mut san = SubjectAlternativeName::new();
    san.dns("localhost").ip("127.0.0.1");
    let ctx = b.x509v3_context(Some(&ca().cert), None);
    let san = san.build(&ctx).expect("SAN");
    b.append_extension(san).expect("SAN");
    let signer = match kind {
        BadLeaf::NotYetValid => ca().key.clone(),
        BadLeaf::BadSignature => new_key(),
    };
    b.sign(&signer, MessageDigest::sha256()).expect("sign");
    (b.build(), key)
}

fn acceptor(opts: &FaultOpts) -> SslAcceptor {
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).expect("acceptor");
    let (cert, key) = opts.leaf.clone().unwrap_or_else(|| leaf(CertKind::Good));
    b.set_certificate(&cert).expect("certificate");
    b.set_private_key(&key).expect("key");
    if opts.tls12 {
        b.set_max_proto_version(Some(SslVersion::TLS1_2))
            .expect("max version");
    }
    if opts.client_cert {
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    b.set_alpn_select_callback(|_, client| {
        openssl::ssl::select_next_proto(b"\x08http/1.1", client).ok_or(AlpnError::NOACK)
    });
    b.build()
}

/// Starts a fault server on 127.0.0.1 port 0; dropped, it stops and joins its threads.
pub fn start_faulty(opts: FaultOpts) -> FaultServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1:0");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("local address");
    let counters = Arc::new(FaultCounters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let acceptor = Arc::new(acceptor(&opts));
    let (c, s) = (counters.clone(), stop.clone());
    let thread = std::thread::spawn(move || accept_loop(listener, opts, acceptor, c, s));
    FaultServer {
        addr,
        counters,
        stop,
        thread: Some(thread),
    }
}

fn accept_loop(
    listener: TcpListener,
    opts: FaultOpts,
    acceptor: Arc<SslAcceptor>,
    counters: Arc<FaultCounters>,
    stop: Arc<AtomicBool>,
) {
    let born = Instant::now();
    let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
    let mut index = 0;
    while !stop.load(Ordering::SeqCst) && born.elapsed() < MAX_LIFETIME && index < MAX_CONNS {
        match listener.accept() {
            Ok((stream, _)) => {
                counters.accepted.fetch_add(1, Ordering::SeqCst);
                let past_fault = opts.faulty.is_some_and(|n| index >= opts.ok_first + n);
                let fault = if index < opts.ok_first || past_fault {
                    Fault::None
                } else {
                    opts.fault
                };
                index += 1;
                let conn = Conn {
                    plain_http_400: opts.plain_http_400,
                    acceptor: acceptor.clone(),
                    counters: counters.clone(),
                    stop: stop.clone(),
                    deadline: born + MAX_LIFETIME,
                };
                let handle = std::thread::spawn(move || conn.serve(stream, fault));
                if let Ok(mut list) = conns.lock() {
                    list.push(handle);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL / 5),
            Err(_) => std::thread::sleep(POLL / 5),
        }
    }
    drop(listener);
    // Connection threads see the stop flag (or their deadline) within POLL.
    while !stop.load(Ordering::SeqCst) && born.elapsed() < MAX_LIFETIME {
        std::thread::sleep(POLL);
    }
    let handles = match conns.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(_) => Vec::new(),
    };
    for h in handles {
        let _ = h.join();
    }
}

struct Conn {
    plain_http_400: bool,
    acceptor: Arc<SslAcceptor>,
    counters: Arc<FaultCounters>,
    stop: Arc<AtomicBool>,
    deadline: Instant,
}

/// Sets SO_LINGER to 0 so that closing the socket sends a RST instead of a FIN.
#[cfg(target_os = "linux")]
fn linger_zero(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Linger {
        l_onoff: i32,
        l_linger: i32,
    }
    extern "C" {
        fn setsockopt(fd: i32, level: i32, name: i32, value: *const Linger, len: u32) -> i32;
    }
    const SOL_SOCKET: i32 = 1;
    const SO_LINGER: i32 = 13;
    let value = Linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid open socket and a correctly sized, initialised `struct linger`.
    let rc = unsafe {
        setsockopt(
            stream.as_raw_fd(),
            SOL_SOCKET,
            SO_LINGER,
            &value,
            std::mem::size_of::<Linger>() as u32,
        )
    };
    assert_eq!(rc, 0, "setsockopt(SO_LINGER) failed");
}

/// Elsewhere: closing a socket with unread received data also sends a RST.
#[cfg(not(target_os = "linux"))]
fn linger_zero(_stream: &TcpStream) {}

impl Conn {
    fn alive(&self) -> bool {
        !self.stop.load(Ordering::SeqCst) && Instant::now() < self.deadline
    }

    /// Whether the client's first byte is not a TLS handshake record;
    /// `None` when it sent nothing in time.
    fn plain_first(&self, stream: &TcpStream) -> Option<bool> {
        let _ = stream.set_read_timeout(Some(POLL));
        let mut first = [0u8; 1];
        while self.alive() {
            match stream.peek(&mut first) {
                Ok(0) => return None,
                Ok(_) => return Some(first[0] != 0x16),
                Err(e) if timed_out(&e) => {}
                Err(_) => return None,
            }
        }
        None
    }

    fn serve(self, stream: TcpStream, fault: Fault) {
        let _ = stream.set_nodelay(true);
        if self.plain_http_400 && self.plain_first(&stream) == Some(true) {
            let mut s = &stream;
            let _ = s.read(&mut [0u8; 4096]);
            let body = "The plain HTTP request was sent to HTTPS port\n";
            let _ = write!(
                s,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            std::thread::sleep(POLL);
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        if fault != Fault::None {
            self.counters.faulted.fetch_add(1, Ordering::SeqCst);
        }
        match fault {
            Fault::CloseOnAccept => {
                // A FIN, then read whatever the client still sends: closing
                // with unread data would turn the FIN into a RST.
                let _ = stream.shutdown(Shutdown::Write);
                self.drain(&stream);
            }
            Fault::ResetInHandshake => {
                // Wait for the first bytes of the ClientHello, take 5 of them
                // (the record header) and leave the rest unread, then reset.
                let _ = stream.set_read_timeout(Some(POLL));
                let mut head = [0u8; 5];
                let mut got = 0;
                let mut s = &stream;
                while got < head.len() && self.alive() {
                    match s.read(&mut head[got..]) {
                        Ok(0) => return,
                        Ok(n) => got += n,
                        Err(e) if timed_out(&e) => {}
                        Err(_) => return,
                    }
                }
                linger_zero(&stream);
            }
            Fault::Plaintext => {
                let _ = stream.set_read_timeout(Some(POLL));
                let mut buf = [0u8; 512];
                let mut s = &stream;
                while self.alive() {
                    match s.read(&mut buf) {
                        Ok(0) => return,
                        Ok(_) => break,
                        Err(e) if timed_out(&e) => {}
                        Err(_) => return,
                    }
                }
                let _ = s.write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                std::thread::sleep(POLL);
                let _ = stream.shutdown(Shutdown::Both);
            }
            _ => self.serve_tls(stream, fault),
        }
    }

    fn serve_tls(self, stream: TcpStream, fault: Fault) {
        // A bounded handshake: the read timeout turns a silent client into an error.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let raw = match stream.try_clone() {
            Ok(raw) => raw,
            Err(_) => return,
        };
        let mut tls = match self.acceptor.accept(stream) {
            Ok(tls) => tls,
            Err(_) => {
                // OpenSSL has sent its alert; let the client read it rather
                // than reset the connection under it.
                self.drain(&raw);
                return;
            }
        };
        let _ = raw.set_read_timeout(Some(POLL));
        let mut served_here = 0;
        loop {
            let method = match self.read_request(&mut tls) {
                Some(m) => m,
                None => return,
            };
            self.counters.requests.fetch_add(1, Ordering::SeqCst);
            served_here += 1;
            let fault = match fault {
                Fault::DropSecondRequest if served_here == 1 => Fault::None,
                other => other,
            };
            match fault {
                Fault::DropSecondRequest => {
                    let _ = raw.shutdown(Shutdown::Both);
                    return;
                }
                Fault::None => {
                    let body: &[u8] = if method == "HEAD" {
                        b""
                    } else {
                        b"0123456789abcdef"
                    };
                    let head = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n";
                    if tls.write_all(head.as_bytes()).is_err()
                        || tls.write_all(body).is_err()
                        || tls.flush().is_err()
                    {
                        return;
                    }
                }
                Fault::Hang => {
                    // Hold the connection open until the client gives up or we stop.
                    while self.alive() {
                        match tls.ssl_read(&mut [0u8; 256]) {
                            Ok(0) => return,
                            Ok(_) => {}
                            Err(e) if e.io_error().is_some_and(timed_out) => {}
                            Err(e) if e.code() == openssl::ssl::ErrorCode::WANT_READ => {}
                            Err(_) => return,
                        }
                    }
                    return;
                }
                Fault::ResetInResponse => {
                    let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n");
                    let _ = tls.flush();
                    std::thread::sleep(Duration::from_millis(20));
                    linger_zero(&raw);
                    return;
                }
                Fault::CloseAfterRequest => {
                    let _ = tls.shutdown();
                    let _ = raw.shutdown(Shutdown::Both);
                    return;
                }
                Fault::HostileRedirect => {
                    let _ = tls.write_all(
                        b"HTTP/1.1 301 Moved Permanently\r\nLocation: \x1b]0;owned\x07\x1b[2J\x1b[31mhttps://elsewhere.test/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    let _ = tls.flush();
                    std::thread::sleep(Duration::from_millis(20));
                    let _ = tls.shutdown();
                    let _ = raw.shutdown(Shutdown::Both);
                    return;
                }
                Fault::Answer(response) => {
                    if tls.write_all(response).is_err() || tls.flush().is_err() {
                        return;
                    }
                }
                Fault::NotHttp => {
                    let _ = tls.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n");
                    let _ = tls.flush();
                    std::thread::sleep(Duration::from_millis(20));
                    let _ = tls.shutdown();
                    let _ = raw.shutdown(Shutdown::Both);
                    return;
                }
                Fault::ShortBody => {
                    let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
                    let _ = tls.write_all(b"0123456789");
                    let _ = tls.flush();
                    std::thread::sleep(Duration::from_millis(20));
                    let _ = tls.shutdown();
                    let _ = raw.shutdown(Shutdown::Both);
                    return;
                }
                // Handled before the handshake.
                Fault::CloseOnAccept | Fault::ResetInHandshake | Fault::Plaintext => return,
            }
        }
    }

    /// Reads and discards until the client closes (or the server stops).
    fn drain(&self, stream: &TcpStream) {
        let _ = stream.set_read_timeout(Some(POLL));
        let mut s = stream;
        let mut buf = [0u8; 1024];
        while self.alive() {
            match s.read(&mut buf) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if timed_out(&e) => {}
                Err(_) => return,
            }
        }
    }

    /// Reads one request head (through the blank line) and returns its method;
    /// `None` when the client closed, an error happened or the server stops.
    fn read_request(&self, tls: &mut SslStream<TcpStream>) -> Option<String> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if !self.alive() || head.len() > 16 * 1024 {
                return None;
            }
            match tls.ssl_read(&mut byte) {
                Ok(0) => return None,
                Ok(_) => head.push(byte[0]),
                Err(e) if e.io_error().is_some_and(timed_out) => {}
                Err(e) if e.code() == openssl::ssl::ErrorCode::WANT_READ => {}
                Err(_) => return None,
            }
        }
        let text = String::from_utf8_lossy(&head);
        text.split(' ').next().map(str::to_string)
    }
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

//! An HTTPS test server inside the test process, on loopback port 0: HTTP/1.1
//! and HTTP/2 over TLS 1.3 or 1.2, counting TCP connections and full versus
//! resumed handshakes so tests can check what the tool claims. On request it
//! restricts its key-exchange groups, requires a client certificate, or
//! accepts TLS 1.3 early data, or staples an OCSP response, and it records
//! what every handshake negotiated ([`HandshakeSeen`]).

use std::ffi::CStr;
use std::net::SocketAddr;
use std::os::raw::c_int;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use foreign_types::ForeignTypeRef;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use openssl::ssl::{AlpnError, Ssl, SslAcceptor, SslMethod, SslRef, SslVerifyMode, SslVersion};
use openssl::x509::store::X509StoreBuilder;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_openssl::SslStream;

pub use super::cut::FlightCut;
use super::cut::{CutState, CutStream};
use super::delay::DelayedStream;
use super::ocsp::Staple;
use super::pki::{client_ca, leaf, CertKind};
use super::server_streams::EarlyFirst;

#[derive(Clone, Debug)]
pub struct ServerOpts {
    /// Offer h2 in ALPN (HTTP/1.1 is always offered).
    pub h2: bool,
    /// Cap the server at TLS 1.2.
    pub tls12: bool,
    /// Issue session tickets (resumption possible).
    pub tickets: bool,
    /// Answer HEAD with this status (405 or 501) instead of serving it.
    pub refuse_head: Option<u16>,
    pub status: u16,
    pub body_len: usize,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
    /// Close the connection after each response (HTTP/1.1 only).
    pub close_each: bool,
    pub cert: CertKind,
    /// Deliver every byte the server sends this much later (see `delay.rs`).
    pub delay: Option<Duration>,
    /// Listen on [::1] instead of 127.0.0.1.
    pub ipv6: bool,
    /// Listen on this address instead (one the test added in a network
    /// namespace of its own); wins over `ipv6`.
    pub bind: Option<std::net::IpAddr>,
    /// Listen on this port instead of one the system picks (a second
    /// server on another loopback address, same port as the first).
    pub port: Option<u16>,
    /// `Some((n, code))`: requests from the n-th on (0-based, counted over the
    /// whole server, preflight included) are answered with `code` instead of `status`.
    pub status_from: Option<(usize, u16)>,
    /// Restrict the key-exchange groups to this OpenSSL groups list
    /// (`SSL_CTX_set1_groups_list` syntax, e.g. `"P-256"` or `"X25519:P-384"`).
    pub groups: Option<String>,
    /// Require a client certificate signed by the test client CA
    /// (`pki::client_ca`); a handshake without one fails.
    pub require_client_cert: bool,
    /// Accept TLS 1.3 early data (up to 16 KiB) on resumed sessions; the
    /// request it carries is served like any other. Needs `tickets`.
    pub early_data: bool,
    /// With `early_data`: answer an HTTP/1.1 request that came whole in the
    /// early data at once, before the handshake ends (0.5-RTT data), as nginx
    /// does. The session ticket for the next resumption then leaves only
    /// once the client's Finished is in: after the response.
    pub answer_early: bool,
    /// Staple this OCSP response (see `ocsp.rs`) to every handshake whose
    /// client asks for one.
    pub staple: Option<Staple>,
    /// Wait this long once a ClientHello is read, before answering it (the
    /// server's own handshake time, as a slow signer or a busy CPU gives).
    pub hello_wait: Option<Duration>,
    /// Write the first flight in two parts (see [`FlightCut`]).
    pub flight_cut: Option<FlightCut>,
}

impl Default for ServerOpts {
    fn default() -> Self {
        ServerOpts {
            h2: false,
            tls12: false,
            tickets: true,
            refuse_head: None,
            status: 200,
            body_len: 16,
            headers: Vec::new(),
            close_each: false,
            cert: CertKind::Good,
            delay: None,
            ipv6: false,
            bind: None,
            port: None,
            status_from: None,
            groups: None,
            require_client_cert: false,
            early_data: false,
            answer_early: false,
            staple: None,
            hello_wait: None,
            flight_cut: None,
        }
    }
}

/// What the server saw.
#[derive(Default, Debug)]
pub struct Counters {
    pub tcp_accepted: AtomicUsize,
    pub full_handshakes: AtomicUsize,
    pub resumed_handshakes: AtomicUsize,
    pub failed_handshakes: AtomicUsize,
    /// Method and Range header of every request, in order.
    pub requests: Mutex<Vec<(String, Option<String>)>>,
    /// Path with query, User-Agent and `X-Test` header of every request, in order.
    pub seen: Mutex<Vec<(String, String, Option<String>)>>,
    /// What every completed handshake negotiated, in order of completion.
    pub handshakes: Mutex<Vec<HandshakeSeen>>,
    /// Full handshakes whose client asked for a stapled OCSP response, on a
    /// server with `staple` set (its status callback ran; OpenSSL does not
    /// consult it on a resumed handshake, which sends no certificate).
    pub status_requests: AtomicUsize,
    /// With `flight_cut`, the server's own log of each first flight: the
    /// bytes it wrote first, and how long it paused before the rest.
    pub flight_cuts: Mutex<Vec<(usize, Duration)>>,
}

/// The server's side of TLS 1.3 early data on one handshake
/// (`SSL_get_early_data_status`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EarlyData {
    /// The client sent none (or the server does not accept any).
    #[default]
    NotSent,
    /// The client sent some and the server refused it.
    Rejected,
    /// The client sent some and the server used it.
    Accepted,
}

/// One completed handshake as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandshakeSeen {
    /// Key-exchange group (`SSL_get0_group_name`: `"secp256r1"`, `"x25519"`,
    /// `"X25519MLKEM768"`...); `None` where none was negotiated (a resumed
    /// TLS 1.2 handshake).
    pub group: Option<String>,
    /// `"TLSv1.3"` or `"TLSv1.2"` (`SSL_get_version`).
    pub version: String,
    /// The ALPN protocol selected, if any.
    pub alpn: Option<String>,
    pub resumed: bool,
    /// The CN of the client certificate, when one was presented (a resumed
    /// session carries the one of its full handshake).
    pub client_cert_subject: Option<String>,
    pub early_data: EarlyData,
    /// How many bytes of early data were read (and handed to HTTP first).
    pub early_bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub tcp: usize,
    pub full: usize,
    pub resumed: usize,
    pub requests: usize,
}

impl Counters {
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            tcp: self.tcp_accepted.load(Ordering::SeqCst),
            full: self.full_handshakes.load(Ordering::SeqCst),
            resumed: self.resumed_handshakes.load(Ordering::SeqCst),
            requests: self.requests.lock().unwrap().len(),
        }
    }

    /// A copy of every handshake recorded so far.
    pub fn handshakes(&self) -> Vec<HandshakeSeen> {
        self.handshakes.lock().unwrap().clone()
    }
}

impl std::ops::Sub for Snapshot {
    type Output = Snapshot;
    fn sub(self, o: Snapshot) -> Snapshot {
        Snapshot {
            tcp: self.tcp - o.tcp,
            full: self.full - o.full,
            resumed: self.resumed - o.resumed,
            requests: self.requests - o.requests,
        }
    }
}

pub struct TestServer {
    pub addr: SocketAddr,
    /// The DER size of the leaf certificate the server sends.
    pub leaf_der_len: usize,
    pub counters: Arc<Counters>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// `https://localhost:<port>/` — the name the certificate is issued for.
    pub fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }
}

/// The handshakes `server` recorded, once `n` are in or after 2 s: it records
/// them on its own thread, and a client may be done before that has run.
pub fn handshakes(server: &TestServer, n: usize) -> Vec<HandshakeSeen> {
    for _ in 0..100 {
        let seen = server.counters.handshakes();
        if seen.len() >= n {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    server.counters.handshakes()
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn acceptor(opts: &ServerOpts, counters: &Arc<Counters>) -> (SslAcceptor, usize) {
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
    let (cert, key) = leaf(opts.cert);
    let leaf_der_len = cert.to_der().unwrap().len();
    if let Some(wait) = opts.hello_wait {
        // Blocks the server's one worker for the wait: the test's only
        // connection then is this one.
        b.set_client_hello_callback(move |_, _| {
            std::thread::sleep(wait);
            Ok(openssl::ssl::ClientHelloResponse::SUCCESS)
        });
    }
    if let Some(staple) = &opts.staple {
        let der = super::ocsp::response(&cert, staple);
        let counters = counters.clone();
        b.set_status_callback(move |ssl| {
            counters.status_requests.fetch_add(1, Ordering::SeqCst);
            ssl.set_ocsp_status(&der)?;
            Ok(true)
        })
        .unwrap();
    }
    b.set_certificate(&cert).unwrap();
    b.set_private_key(&key).unwrap();
    if opts.tls12 {
        b.set_max_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    }
    if !opts.tickets {
        b.set_options(openssl::ssl::SslOptions::NO_TICKET);
        b.set_num_tickets(0).unwrap();
        b.set_session_cache_mode(openssl::ssl::SslSessionCacheMode::OFF);
    }
    if let Some(groups) = &opts.groups {
        b.set_groups_list(groups).unwrap();
    }
    if opts.require_client_cert {
        let (ca, _) = client_ca();
        let mut store = X509StoreBuilder::new().unwrap();
        store.add_cert(ca.clone()).unwrap();
        b.set_verify_cert_store(store.build()).unwrap();
        // Named in the CertificateRequest, so a client can pick its certificate.
        b.add_client_ca(ca).unwrap();
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
        // With peer verification on, OpenSSL refuses to resume a session
        // (fatal "session id context uninitialized") unless this is set.
        b.set_session_id_context(b"tlsping-test-mtls").unwrap();
    }
    if opts.early_data {
        // Leaves the session cache on: OpenSSL's anti-replay protection
        // accepts early data only for a ticket it finds there (then drops it:
        // every ticket is single use).
        b.set_max_early_data(16384).unwrap();
    }
    let h2 = opts.h2;
    b.set_alpn_select_callback(move |_, client| {
        let ours: &[u8] = if h2 {
            b"\x02h2\x08http/1.1"
        } else {
            b"\x08http/1.1"
        };
        openssl::ssl::select_next_proto(ours, client).ok_or(AlpnError::NOACK)
    });
    (b.build(), leaf_der_len)
}

fn respond(
    req: &Request<hyper::body::Incoming>,
    opts: &ServerOpts,
    index: usize,
) -> Response<Full<Bytes>> {
    let is_head = req.method() == hyper::Method::HEAD;
    let normal = match opts.status_from {
        Some((from, code)) if index >= from => code,
        _ => opts.status,
    };
    let (status, body) = match opts.refuse_head {
        Some(code) if is_head => (code, Vec::new()),
        // A HEAD answer announces the length but carries no body (h2 treats
        // DATA on a HEAD stream as a protocol error).
        _ if is_head => (normal, Vec::new()),
        _ => (normal, vec![b'x'; opts.body_len]),
    };
    let mut resp = Response::builder().status(status);
    if is_head && opts.refuse_head.is_none() {
        resp = resp.header("content-length", opts.body_len.to_string());
    }
    for (k, v) in &opts.headers {
        resp = resp.header(k.as_str(), v.as_str());
    }
    if opts.close_each {
        resp = resp.header("connection", "close");
    }
    resp.body(Full::new(Bytes::from(body))).unwrap()
}

async fn serve_conn(
    stream: tokio::net::TcpStream,
    acceptor: Arc<SslAcceptor>,
    opts: Arc<ServerOpts>,
    counters: Arc<Counters>,
) {
    // Whole responses in one write: no Nagle stall that is the server's
    // artefact, unless the test asks for one.
    let _ = stream.set_nodelay(!opts.flight_cut.is_some_and(FlightCut::nagle));
    if let Some(cut) = opts.flight_cut {
        let cut = CutStream {
            inner: stream,
            cut,
            state: CutState::First,
            counters: counters.clone(),
            first: 0,
            held: Vec::new(),
        };
        return serve_tls(cut, acceptor, opts, counters).await;
    }
    match opts.delay {
        Some(d) => {
            if let Ok(delayed) = DelayedStream::new(stream, d) {
                serve_tls(delayed, acceptor, opts, counters).await
            }
        }
        None => serve_tls(stream, acceptor, opts, counters).await,
    }
}

async fn serve_tls<S>(
    stream: S,
    acceptor: Arc<SslAcceptor>,
    opts: Arc<ServerOpts>,
    counters: Arc<Counters>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut ssl = Ssl::new(acceptor.context()).unwrap();
    if opts.early_data {
        // `read_early_data` needs the server role set before the first read.
        ssl.set_accept_state();
    }
    let mut tls = SslStream::new(ssl, stream).unwrap();
    let mut early = Vec::new();
    let answer = opts.answer_early.then(|| (&*opts, &*counters));
    if opts.early_data && read_early_data(&mut tls, &mut early, answer).await.is_err() {
        counters.failed_handshakes.fetch_add(1, Ordering::SeqCst);
        return;
    }
    // An early request answered already is not served again.
    let early_len = early.len();
    if opts.answer_early && early.windows(4).any(|w| w == b"\r\n\r\n") {
        early.clear();
    }
    if Pin::new(&mut tls).accept().await.is_err() {
        counters.failed_handshakes.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if tls.ssl().session_reused() {
        counters.resumed_handshakes.fetch_add(1, Ordering::SeqCst);
    } else {
        counters.full_handshakes.fetch_add(1, Ordering::SeqCst);
    }
    let seen = handshake_seen(tls.ssl(), early_len);
    counters.handshakes.lock().unwrap().push(seen);
    let svc_counters = counters.clone();
    let svc_opts = opts.clone();
    let svc = service_fn(move |req: Request<hyper::body::Incoming>| {
        let range = req
            .headers()
            .get("range")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let path = req
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default();
        svc_counters.seen.lock().unwrap().push((
            path,
            header("user-agent").unwrap_or_default(),
            header("x-test"),
        ));
        let index = {
            let mut requests = svc_counters.requests.lock().unwrap();
            requests.push((req.method().to_string(), range));
            requests.len() - 1
        };
        let resp = respond(&req, &svc_opts, index);
        async move { Ok::<_, std::convert::Infallible>(resp) }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder.http1().keep_alive(!opts.close_each);
    let io = EarlyFirst {
        early,
        pos: 0,
        inner: tls,
    };
    let _ = builder.serve_connection(TokioIo::new(io), svc).await;
}

extern "C" {
    // In libssl since 1.1.1; openssl-sys does not declare it.
    fn SSL_get_early_data_status(s: *const openssl_sys::SSL) -> c_int;
}

/// Reads the client's early data (`SSL_read_early_data`) until OpenSSL says
/// there is no more, which also drives the handshake up to the server's
/// first flight; `accept` completes it.
async fn read_early_data<S>(
    tls: &mut SslStream<S>,
    into: &mut Vec<u8>,
    answer: Option<(&ServerOpts, &Counters)>,
) -> Result<(), ()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut buf = [0u8; 4096];
    let mut answered = false;
    loop {
        match Pin::new(&mut *tls).read_early_data(&mut buf).await {
            Ok(0) => return Ok(()),
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(_) => return Err(()),
        }
        if let Some((opts, counters)) = answer {
            if !answered && into.windows(4).any(|w| w == b"\r\n\r\n") {
                answered = true;
                let head = early_answer(into, opts, counters);
                if Pin::new(&mut *tls).write_early_data(&head).await.is_err() {
                    return Err(());
                }
            }
        }
    }
}

/// The answer to an HTTP/1.1 request read whole from early data: its status
/// and headers (a HEAD answer, or a GET's with the body length 0), the
/// request counted as any other.
fn early_answer(request: &[u8], opts: &ServerOpts, counters: &Counters) -> Vec<u8> {
    let line = String::from_utf8_lossy(request);
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    counters
        .seen
        .lock()
        .unwrap()
        .push((path, String::new(), None));
    counters.requests.lock().unwrap().push((method, None));
    let mut head = format!("HTTP/1.1 {} OK\r\ncontent-length: 0\r\n", opts.status);
    for (k, v) in &opts.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// What a completed handshake negotiated, read from the live connection.
fn handshake_seen(ssl: &SslRef, early_bytes: usize) -> HandshakeSeen {
    // SAFETY: `ssl` is a live SSL whose handshake completed; the name
    // returned is a static string owned by OpenSSL (or null).
    let group = unsafe {
        let name = openssl_sys::SSL_get0_group_name(ssl.as_ptr());
        (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
    };
    // SAFETY: as above; the call only reads the connection's state.
    let early_data = match unsafe { SSL_get_early_data_status(ssl.as_ptr()) } {
        2 => EarlyData::Accepted,
        1 => EarlyData::Rejected,
        _ => EarlyData::NotSent,
    };
    let client_cert_subject = ssl.peer_certificate().and_then(|cert| {
        cert.subject_name()
            .entries_by_nid(openssl::nid::Nid::COMMONNAME)
            .next()
            .and_then(|e| e.data().to_string().ok())
    });
    HandshakeSeen {
        group,
        version: ssl.version_str().to_string(),
        alpn: ssl
            .selected_alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
        resumed: ssl.session_reused(),
        client_cert_subject,
        early_data,
        early_bytes,
    }
}

/// Starts a server on 127.0.0.1 port 0 in its own thread; dropped, it stops.
pub fn start(opts: ServerOpts) -> TestServer {
    let ip = opts.bind.unwrap_or(if opts.ipv6 {
        std::net::Ipv6Addr::LOCALHOST.into()
    } else {
        std::net::Ipv4Addr::LOCALHOST.into()
    });
    let listener = std::net::TcpListener::bind(SocketAddr::new(ip, opts.port.unwrap_or(0)))
        .unwrap_or_else(|e| panic!("binding {ip} port {:?}: {e}", opts.port));
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let (acceptor, leaf_der_len) = acceptor(&opts, &counters);
    let acceptor = Arc::new(acceptor);
    let opts = Arc::new(opts);
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let c = counters.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    accepted = listener.accept() => {
                        if let Ok((stream, _)) = accepted {
                            c.tcp_accepted.fetch_add(1, Ordering::SeqCst);
                            tokio::spawn(serve_conn(stream, acceptor.clone(), opts.clone(), c.clone()));
                        }
                    }
                }
            }
        });
        rt.shutdown_timeout(Duration::from_millis(100));
    });
    TestServer {
        addr,
        leaf_der_len,
        counters,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

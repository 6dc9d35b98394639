//! An HTTPS test server inside the test process, on loopback port 0: HTTP/1.1
//! and HTTP/2 over TLS 1.3 or 1.2, counting TCP connections and full versus
//! resumed handshakes so tests can check what the tool claims.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use openssl::ssl::{AlpnError, Ssl, SslAcceptor, SslMethod, SslVersion};
use tokio_openssl::SslStream;

use super::delay::DelayedStream;
use super::pki::{leaf, CertKind};

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
    /// `Some((n, code))`: requests from the n-th on (0-based, counted over the
    /// whole server, preflight included) are answered with `code` instead of `status`.
    pub status_from: Option<(usize, u16)>,
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
            status_from: None,
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

fn acceptor(opts: &ServerOpts) -> SslAcceptor {
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).unwrap();
    let (cert, key) = leaf(opts.cert);
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
    let h2 = opts.h2;
    b.set_alpn_select_callback(move |_, client| {
        let ours: &[u8] = if h2 {
            b"\x02h2\x08http/1.1"
        } else {
            b"\x08http/1.1"
        };
        openssl::ssl::select_next_proto(ours, client).ok_or(AlpnError::NOACK)
    });
    b.build()
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
    // Whole responses in one write: no Nagle stall that is the server's artefact.
    let _ = stream.set_nodelay(true);
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
    let ssl = Ssl::new(acceptor.context()).unwrap();
    let mut tls = SslStream::new(ssl, stream).unwrap();
    if Pin::new(&mut tls).accept().await.is_err() {
        counters.failed_handshakes.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if tls.ssl().session_reused() {
        counters.resumed_handshakes.fetch_add(1, Ordering::SeqCst);
    } else {
        counters.full_handshakes.fetch_add(1, Ordering::SeqCst);
    }
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
    let _ = builder.serve_connection(TokioIo::new(tls), svc).await;
}

/// Starts a server on 127.0.0.1 port 0 in its own thread; dropped, it stops.
pub fn start(opts: ServerOpts) -> TestServer {
    let listener = match opts.bind {
        Some(ip) => std::net::TcpListener::bind(SocketAddr::new(ip, 0)).unwrap(),
        None => {
            std::net::TcpListener::bind(if opts.ipv6 { "[::1]:0" } else { "127.0.0.1:0" }).unwrap()
        }
    };
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let acceptor = Arc::new(acceptor(&opts));
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
        counters,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

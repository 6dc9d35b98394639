//! What cold and warm probes share: the libcurl handler that watches one
//! transfer, the options every request gets, and turning libcurl's result
//! into a `Sample`.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curl::easy::{Easy2, Handler, HttpVersion as CurlHttp, IpResolve, List, WriteError};

use super::config::{Config, HttpVersion, IpVersion};
use super::curl_ffi::{self, KernelTcp, LiveHandle};
use super::errors::classify;
use super::trust::TrustStore;
use super::types::{CurlTimers, Mode, ProbeError, Sample, TcpFacts, TlsFacts};

/// Bodies are read up to this many bytes; a longer body ends the transfer.
pub const BODY_CAP: u64 = 64 * 1024;

/// Set from the Ctrl+C handler; probes in flight abort at libcurl's next progress check.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    flag: AtomicBool,
    lock: std::sync::Mutex<()>,
    wake: std::sync::Condvar,
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    pub fn cancel(&self) {
        self.0.flag.store(true, Ordering::SeqCst);
        // Taking the lock orders this wake-up after a sleeper's flag check.
        let _guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.0.wake.notify_all();
    }

    pub fn is_canceled(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed)
    }

    /// Sleeps until `until`; wakes at once on cancel. `true` if the time came.
    pub fn sleep_until(&self, until: Instant) -> bool {
        let mut guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.is_canceled() {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            guard = match self.0.wake.wait_timeout(guard, until - now) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

/// How the request is made, settled once by the preflight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    Head,
    /// GET with `Range: bytes=0-0`, after the server refused HEAD.
    RangedGet,
    Custom(String),
}

impl Method {
    pub fn label(&self) -> &str {
        match self {
            Method::Head => "HEAD",
            Method::RangedGet => "GET",
            Method::Custom(m) => m,
        }
    }
}

/// Watches one transfer at a time. Reset before each `perform`.
pub struct Collector {
    live: LiveHandle,
    trust: Option<Arc<TrustStore>>,
    /// When the last response byte (header or body) reached us.
    pub last_byte: Option<Instant>,
    cancel: Cancel,
    pub tls: Option<TlsFacts>,
    /// The server's leaf certificate, examined once the transfer is over.
    leaf: Option<openssl::x509::X509>,
    /// Requests libcurl sent during this `perform` (boxed: libcurl keeps its address).
    requests_sent: Box<std::sync::atomic::AtomicU32>,
    /// The TLS facts of this transfer's handshake were taken (or there was none).
    tls_taken: bool,
    pub body_bytes: u64,
    pub body_overflow: bool,
    pub location: Option<String>,
    /// The response carried `Retry-After` (libcurl reports 0 for "now" or a
    /// date it cannot use, so presence is tracked here).
    retry_after_seen: bool,
    header_lines: u32,
    /// This transfer's time line start on CLOCK_MONOTONIC (see
    /// `LiveHandle::timeline_start_us`), taken when libcurl opened a socket.
    timeline_start_us: Option<u64>,
    /// `TCP_INFO` read when the response's headers ended.
    tcp: Option<KernelTcp>,
    /// Retransmissions already counted on the open connection (warm reuse).
    retrans_counted: u32,
    /// `Server-Timing` header lines as received, parsed once the transfer is over.
    server_timing_raw: Vec<u8>,
}

impl Collector {
    pub fn new(cancel: Cancel, trust: Option<Arc<TrustStore>>) -> Collector {
        Collector {
            live: LiveHandle::none(),
            trust,
            last_byte: None,
            cancel,
            tls: None,
            leaf: None,
            requests_sent: Box::default(),
            tls_taken: false,
            body_bytes: 0,
            body_overflow: false,
            location: None,
            retry_after_seen: false,
            header_lines: 0,
            timeline_start_us: None,
            tcp: None,
            retrans_counted: 0,
            // Room for a few headers, so the header callback need not allocate.
            server_timing_raw: Vec::with_capacity(1024),
        }
    }

    /// The counter libcurl's pre-request callback increments. It is boxed and
    /// never replaced, so its address is stable for the handle's whole life.
    pub(crate) fn requests_counter(&self) -> &std::sync::atomic::AtomicU32 {
        &self.requests_sent
    }

    /// Takes the TLS facts once the handshake of this transfer is complete.
    /// Called from libcurl's callbacks only.
    fn take_tls(&mut self) {
        if self.tls_taken {
            return;
        }
        // SAFETY: we are inside a callback of the transfer running on the
        // handle `live` was taken from (set in `new_handle`; a collector
        // without a handle holds a null one, which reads nothing).
        if let Some(live) = unsafe { self.live.tls_facts_of_new_handshake() } {
            self.tls = Some(live.facts);
            self.leaf = live.leaf;
            self.tls_taken = true;
        }
    }

    fn reset(&mut self) {
        self.last_byte = None;
        self.tls = None;
        self.leaf = None;
        self.tls_taken = false;
        self.requests_sent
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.body_bytes = 0;
        self.body_overflow = false;
        self.location = None;
        self.retry_after_seen = false;
        self.header_lines = 0;
        self.timeline_start_us = None;
        self.tcp = None;
        self.server_timing_raw.clear();
        curl_ffi::handshake_stamps_clear();
        curl_ffi::tcp_at_close_clear();
    }
}

impl Handler for Collector {
    fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        self.last_byte = Some(Instant::now());
        let len = data.len() as u64;
        if self.body_bytes + len > BODY_CAP {
            // Stop reading: returning less than we were given ends the
            // transfer. This chunk was refused, so `body_bytes` stays what
            // was read.
            self.body_overflow = true;
            return Ok(0);
        }
        self.body_bytes += len;
        Ok(data.len())
    }

    fn header(&mut self, data: &[u8]) -> bool {
        self.last_byte = Some(Instant::now());
        if self.header_lines == 0 {
            self.take_tls();
        }
        self.header_lines += 1;
        if data == b"\r\n" || data == b"\n" {
            // The headers ended (the clock has its stamp): ask the kernel
            // about the connection while it is certainly open.
            // SAFETY: inside a callback of the transfer running on `live`'s handle.
            if let Some(tcp) = unsafe { self.live.tcp_info() } {
                self.tcp = Some(tcp);
            }
        } else if data.starts_with(b"HTTP/") {
            // A new response (after a 1xx): forget the previous one's headers.
            self.location = None;
            self.retry_after_seen = false;
            self.server_timing_raw.clear();
        } else if data.len() > 14 && data[..14].eq_ignore_ascii_case(b"server-timing:") {
            self.server_timing_raw.extend_from_slice(data);
        } else if data.len() > 12 && data[..12].eq_ignore_ascii_case(b"retry-after:") {
            self.retry_after_seen = true;
        } else if data.len() > 9 && data[..9].eq_ignore_ascii_case(b"location:") {
            let value = String::from_utf8_lossy(&data[9..]).trim().to_string();
            self.location = Some(value);
        }
        true
    }

    // The curl crate's callback signature: only libcurl calls it, with its own SSL_CTX.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn ssl_ctx(&mut self, ssl_ctx: *mut std::os::raw::c_void) -> Result<(), curl::Error> {
        if let Some(trust) = &self.trust {
            // SAFETY: libcurl calls this callback with the SSL_CTX it is setting up.
            unsafe { curl_ffi::install_trust_store(ssl_ctx, trust) };
        }
        // SAFETY: as above.
        unsafe { curl_ffi::stamp_handshake(ssl_ctx) };
        Ok(())
    }

    fn open_socket(
        &mut self,
        family: std::os::raw::c_int,
        socktype: std::os::raw::c_int,
        protocol: std::os::raw::c_int,
    ) -> Option<curl_sys::curl_socket_t> {
        // SAFETY: libcurl opens sockets from inside the transfer running on
        // `live`'s handle. Several sockets (happy eyeballs) keep the earliest.
        if let Some(start) = unsafe { self.live.timeline_start_us() } {
            self.timeline_start_us = Some(self.timeline_start_us.map_or(start, |s| s.min(start)));
        }
        // A new connection starts its own retransmission count.
        self.retrans_counted = 0;
        curl_ffi::open_socket(family, socktype, protocol)
    }

    fn progress(&mut self, _dltotal: f64, _dlnow: f64, _ultotal: f64, _ulnow: f64) -> bool {
        // Also catches a handshake that completed before the transfer failed
        // (say, a server that then never answers): its facts still count.
        self.take_tls();
        !self.cancel.is_canceled()
    }
}

/// A fresh easy handle with the handler wired to it, configured with every
/// option that does not change per round.
pub fn new_handle(
    cfg: &Config,
    env: &ProbeEnv,
    method: &Method,
    pin: Option<SocketAddr>,
) -> Result<Easy2<Collector>, curl::Error> {
    let mut easy = Easy2::new(Collector::new(env.cancel.clone(), env.trust.clone()));
    if env.trust.is_some() {
        curl_ffi::clear_ca_locations(&mut easy)?;
    }
    let live = LiveHandle::of(&easy);
    easy.get_mut().live = live;
    // SAFETY: no code of ours replaces a handle's handler: handles only ever
    // reset its fields (`prepare`), so the counter outlives every transfer.
    unsafe { curl_ffi::count_requests(&mut easy)? };
    curl_ffi::read_tcp_info_at_close(&mut easy)?;
    easy.url(&cfg.target.url())?;
    easy.useragent(&format!("tlsping/{}", env!("CARGO_PKG_VERSION")))?;
    easy.follow_location(false)?;
    if std::env::var_os("TLSPING_CURL_VERBOSE").is_some() {
        easy.verbose(true)?;
    }
    easy.progress(true)?;
    easy.timeout(cfg.timeout)?;
    easy.http_version(match cfg.http_version {
        HttpVersion::Auto => CurlHttp::V2TLS,
        HttpVersion::V1_1 => CurlHttp::V11,
        HttpVersion::V2 => CurlHttp::V2TLS,
    })?;
    easy.ip_resolve(match cfg.ip_version {
        IpVersion::Any => IpResolve::Any,
        IpVersion::V4 => IpResolve::V4,
        IpVersion::V6 => IpResolve::V6,
    })?;
    if cfg.insecure {
        // A deliberate, user-chosen switch: nothing is verified at all.
        easy.ssl_verify_peer(false)?;
        easy.ssl_verify_host(false)?;
    }
    let mut headers = List::new();
    for h in &cfg.headers {
        headers.append(h)?;
    }
    match method {
        Method::Head => easy.nobody(true)?,
        Method::RangedGet => {
            easy.get(true)?;
            easy.range("0-0")?;
        }
        Method::Custom(m) => {
            if m == "GET" {
                easy.get(true)?;
            } else if m == "HEAD" {
                easy.nobody(true)?;
            } else {
                easy.custom_request(m)?;
            }
        }
    }
    easy.http_headers(headers)?;
    if let Some(addr) = pin {
        // Dial the pinned address while the URL host still drives SNI,
        // the Host header and certificate checks.
        let ip = match addr.ip() {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        let mut resolve = List::new();
        // An IPv6 literal host is bracketed, as libcurl reads the entry
        // up to the first ':' otherwise (`fd00::1:443:…` would be host `fd00`).
        resolve.append(&format!(
            "{}:{}:{}",
            cfg.target.url_host(),
            cfg.target.port,
            ip
        ))?;
        easy.resolve(resolve)?;
    }
    if cfg.pin_ip {
        // A pinned run (the preflight included, which picks the address) goes
        // straight to the server: a proxy from the environment would become the peer.
        easy.proxy("")?;
    }
    Ok(easy)
}

/// What every probe of a run shares: the interrupt flag and the trust store.
#[derive(Clone)]
pub struct ProbeEnv {
    pub cancel: Cancel,
    /// `None` with `-k`, where nothing is verified.
    pub trust: Option<Arc<TrustStore>>,
}

impl ProbeEnv {
    /// Loads the trust store once; `Err` names the CA source that failed.
    pub fn new(cfg: &Config, cancel: Cancel) -> Result<ProbeEnv, String> {
        let trust = if cfg.insecure || !cfg.target.https {
            None
        } else {
            Some(Arc::new(TrustStore::load(cfg.ca_file.as_deref())?))
        };
        Ok(ProbeEnv { cancel, trust })
    }

    /// An environment whose anchors are given rather than loaded (`-k` still
    /// wins: nothing is verified then).
    pub fn with_trust(cfg: &Config, cancel: Cancel, store: TrustStore) -> ProbeEnv {
        let trust = (!cfg.insecure && cfg.target.https).then(|| Arc::new(store));
        ProbeEnv { cancel, trust }
    }
}

/// Clears what the handler saw on the previous transfer.
pub fn prepare(easy: &mut Easy2<Collector>) {
    easy.get_mut().reset();
}

/// Everything libcurl knows about the transfer that just ended, as a sample.
pub struct Finished {
    pub result: Result<(), curl::Error>,
    pub own_dns: Option<Duration>,
    /// When the clock started (before DNS for cold, before the transfer for warm).
    pub start: Instant,
    /// When `perform` returned.
    pub returned: Instant,
}

pub fn to_sample(
    easy: &mut Easy2<Collector>,
    mode: Mode,
    round: u32,
    https: bool,
    done: Finished,
) -> Sample {
    let timers = curl_ffi::timers(easy);
    // The response ends at its last byte as delivered to our callbacks: the
    // blank line after the headers of a HEAD answer, the last body chunk of a
    // GET. libcurl's own wrap-up after that (its "done" handling, closing a
    // cold connection) is not the server's time. A chunked terminator or an
    // HTTP/2 END_STREAM that arrives in a frame of its own is not seen here;
    // servers send it with the last data in practice.
    let end = match (&done.result, easy.get_ref().last_byte) {
        (Ok(()), Some(last)) => last,
        (Err(e), Some(last)) if e.is_write_error() && easy.get_ref().body_overflow => last,
        _ => done.returned,
    };
    let wall_total = end.saturating_duration_since(done.start);
    let status = easy.response_code().unwrap_or(0) as u16;
    let addr = match (easy.primary_ip(), easy.primary_port()) {
        (Ok(Some(ip)), Ok(port)) if !ip.is_empty() => ip
            .parse::<IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, port)),
        _ => None,
    };
    let proto = if status > 0 {
        curl_ffi::http_version(easy)
    } else {
        None
    };
    let retry_after = easy.get_ref().retry_after_seen.then(|| {
        curl_ffi::retry_after(easy)
            .unwrap_or(0)
            .min(u64::from(u32::MAX)) as u32
    });
    let (tls_setup, tls_finish) = client_work(easy.get_ref(), &timers);
    let tcp_info = tcp_facts(easy.get_mut());
    let mut server_timing = Vec::new();
    for line in easy
        .get_ref()
        .server_timing_raw
        .split_inclusive(|&b| b == b'\n')
    {
        super::server_timing::parse_line(line, &mut server_timing);
    }
    let collector = easy.get_ref();
    let body_overflow = collector.body_overflow;
    let error = match &done.result {
        Ok(()) => None,
        // We stopped reading on purpose; the response itself is fine.
        Err(e) if e.is_write_error() && body_overflow => None,
        Err(e) => Some(Box::new(classify(e, easy, status))),
    };
    // TLS facts belong only to probes that made a handshake.
    let tls = if timers.num_connects > 0 {
        collector.tls.map(|mut facts| {
            facts.cert_days_left = collector.leaf.as_ref().and_then(days_left);
            facts
        })
    } else {
        None
    };
    Sample {
        round,
        mode,
        warmup: false,
        own_dns: done.own_dns,
        wall_total: Some(wall_total),
        timers,
        status,
        proto,
        tls,
        // A second request inside one transfer is libcurl retrying on a new
        // connection after the kept one died under the first.
        retries: collector
            .requests_sent
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(1)
            .min(255) as u8,
        bytes: collector.body_bytes as u32,
        addr,
        body_overflow,
        retry_after,
        https,
        error,
        tls_setup,
        tls_finish,
        tcp_info,
        server_timing: server_timing.into_boxed_slice(),
    }
}

/// Our own work at both ends of the handshake, for a transfer that made
/// exactly one new connection with one: from TCP connected to the ClientHello
/// leaving (set-up), and our work on the server's replies until libcurl's
/// handshake-done timer (finish). libcurl's timers are put on CLOCK_MONOTONIC
/// with the start taken at socket opening, against our stamps from OpenSSL's
/// callbacks. `None` where a piece is missing or the stamps are out of order
/// (connected ≤ ClientHello ≤ done must hold): a wrong figure is never shown.
fn client_work(c: &Collector, timers: &CurlTimers) -> (Option<Duration>, Option<Duration>) {
    if timers.num_connects != 1 || timers.connect_us == 0 || timers.appconnect_us == 0 {
        return (None, None);
    }
    let (Some(start), Some(hello)) = (c.timeline_start_us, curl_ffi::client_hello_sent_us()) else {
        return (None, None);
    };
    let connected = start + u64::from(timers.connect_us);
    let done = start + u64::from(timers.appconnect_us);
    if !(connected <= hello && hello <= done) {
        return (None, None);
    }
    let setup = Duration::from_micros(hello - connected);
    let finish = curl_ffi::client_finish_us(done)
        .filter(|&us| us <= done - hello)
        .map(Duration::from_micros);
    (Some(setup), finish)
}

/// The kernel's view for this probe: read when the headers ended, else when
/// libcurl closed the socket; retransmissions counted once per connection.
fn tcp_facts(c: &mut Collector) -> Option<TcpFacts> {
    let reading = c.tcp.or_else(curl_ffi::tcp_at_close)?;
    let retrans = reading.total_retrans.saturating_sub(c.retrans_counted);
    c.retrans_counted = reading.total_retrans;
    Some(TcpFacts {
        rtt_us: reading.rtt_us,
        min_rtt_us: reading.min_rtt_us,
        retrans,
    })
}

/// Whole days from now until the certificate's notAfter.
fn days_left(cert: &openssl::x509::X509) -> Option<i32> {
    let now = openssl::asn1::Asn1Time::days_from_now(0).ok()?;
    now.diff(cert.not_after()).ok().map(|d| d.days)
}

/// A sample for a probe that failed before libcurl was asked to transfer:
/// our own DNS lookup failed after `wall` (`Some`), or setting up the
/// handle failed before any clock ran (`None`: nothing was measured).
pub fn failed_before_transfer(
    mode: Mode,
    round: u32,
    https: bool,
    err: ProbeError,
    wall: Option<Duration>,
) -> Sample {
    Sample {
        round,
        mode,
        warmup: false,
        own_dns: None,
        wall_total: wall,
        timers: Default::default(),
        status: 0,
        proto: None,
        tls: None,
        retries: 0,
        bytes: 0,
        addr: None,
        body_overflow: false,
        retry_after: None,
        https,
        error: Some(Box::new(err)),
        tls_setup: None,
        tls_finish: None,
        tcp_info: None,
        server_timing: Box::default(),
    }
}

/// A probe whose handle could not be set up: an `error` sample, nothing measured.
pub fn setup_failure(mode: Mode, round: u32, https: bool, e: &dyn std::fmt::Display) -> Sample {
    let err = ProbeError {
        kind: super::types::ErrorKind::Error,
        text: e.to_string(),
    };
    failed_before_transfer(mode, round, https, err, None)
}

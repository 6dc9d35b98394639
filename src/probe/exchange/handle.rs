//! The probe handle: one libcurl easy handle with our handler, configured
//! with every option a request of this run gets. It owns everything libcurl
//! keeps a pointer to (the handler's counter and the handle itself), and never
//! hands out the handler mutably, so no safe code can free what a transfer
//! will write through.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curl::easy::{Easy2, HttpVersion as CurlHttp, IpResolve, List, SslVersion};

use super::collector::Collector;
use super::config::{Config, HttpVersion, IpVersion, Method, TlsMax};
use super::curl_ffi::{self, CloseWatch, LiveHandle};
use super::env::ProbeEnv;
use super::sample::{self, Outcome};
use super::transfer::{Capture, MAX_CERTS};
use super::types::{Mode, Sample};

/// An easy handle ready for probes.
pub struct ProbeHandle {
    // Private, and no `&mut` to it or its handler ever leaves this file:
    // libcurl holds pointers into the handler (see `new`).
    easy: Easy2<Collector>,
    /// The request counter libcurl writes through; dropped after `easy`
    /// (fields drop in order), so it outlives the handle that points at it.
    _counter: std::sync::Arc<std::sync::atomic::AtomicU32>,
    /// `--early-data`: samples say what became of it.
    early_data: bool,
    /// What the output reads of each transfer beyond the sample.
    capture: Capture,
    /// The URL of the next request, as handed to libcurl.
    url: String,
    /// The watch on this handle's connections' sockets (a cold runner's,
    /// or the handle's own), which libcurl points at (see
    /// `read_tcp_info_at_close`): held here too, dropped after `easy`, so
    /// it is alive whenever this handle's transfers can close a socket.
    _close_watch: Arc<CloseWatch>,
}

impl ProbeHandle {
    /// A fresh handle for `url`, configured with every option that does not
    /// change per round; `dial` is the address to connect to (SNI, Host and the
    /// certificate check keep the URL's host).
    pub fn new(
        cfg: &Config,
        env: &ProbeEnv,
        method: &Method,
        url: &str,
        dial: Option<SocketAddr>,
    ) -> Result<ProbeHandle, curl::Error> {
        ProbeHandle::build(cfg, env, method, url, dial, None)
    }

    /// A handle for one cold probe, whose transfer runs on the cold runner's
    /// multi handle (`cold_driver`): it connects anew and closes after its
    /// one transfer; it resolves anew (no name cached from an earlier
    /// round); it keeps TLS sessions in the multi's cache only with
    /// `--resume on`; and every close of its connections is reported to
    /// `watch`, which the runner keeps alive as long as its multi.
    pub(crate) fn for_cold_probe(
        cfg: &Config,
        env: &ProbeEnv,
        method: &Method,
        url: &str,
        dial: Option<SocketAddr>,
        watch: &Arc<CloseWatch>,
    ) -> Result<ProbeHandle, curl::Error> {
        let mut h = ProbeHandle::build(cfg, env, method, url, dial, Some(Arc::clone(watch)))?;
        h.easy.forbid_reuse(true)?;
        h.easy.fresh_connect(true)?;
        h.easy.dns_cache_timeout(Duration::ZERO)?;
        h.easy.ssl_sessionid_cache(cfg.settings.resume)?;
        Ok(h)
    }

    fn build(
        cfg: &Config,
        env: &ProbeEnv,
        method: &Method,
        url: &str,
        dial: Option<SocketAddr>,
        close_watch: Option<Arc<CloseWatch>>,
    ) -> Result<ProbeHandle, curl::Error> {
        let mut easy = Easy2::new(Collector::new(env.cancel.clone(), env.trust.clone()));
        if let Some(watch) = close_watch {
            easy.get_mut().close_watch = watch;
        }
        let close_watch = Arc::clone(&easy.get_ref().close_watch);
        // Registered before anything can fail, and never replaced: the
        // handler lives inside `easy` (boxed by the curl crate) for as long
        // as the handle does.
        easy.get_mut().live = LiveHandle::of(&easy);
        let counter = easy.get_ref().requests_counter();
        // The certificates are kept for curl's certificate info when the
        // output asks, and always for the handshake's account (which names
        // the large ones of a flight past the initial window).
        easy.get_mut().keep_chain(MAX_CERTS);
        // SAFETY: the counter is a heap value of its own that this handle
        // keeps a reference to in `_counter`, dropped after `easy`; so it
        // stays put and alive until libcurl's handle is cleaned up.
        unsafe { curl_ffi::count_requests(&easy, std::sync::Arc::as_ptr(&counter))? };
        if env.trust.is_some() {
            curl_ffi::clear_ca_locations(&mut easy)?;
        }
        // SAFETY: the watch is held by this handle (`_close_watch`, dropped
        // after `easy`, whose clean-up closes the connections libcurl keeps
        // for it) and, a cold runner's, by the runner, which keeps it until
        // its multi handle, and with it every connection these transfers
        // made, is gone (`ColdDriver` drops the multi first).
        unsafe { curl_ffi::read_tcp_info_at_close(&mut easy, Arc::as_ptr(&close_watch))? };
        easy.url(url)?;
        easy.useragent(&format!("tlsping/{}", env!("CARGO_PKG_VERSION")))?;
        easy.follow_location(false)?;
        if std::env::var_os("TLSPING_CURL_VERBOSE").is_some() {
            easy.verbose(true)?;
        }
        easy.progress(true)?;
        easy.timeout(cfg.settings.timeout)?;
        set_tls(&mut easy, cfg)?;
        set_request(&mut easy, cfg, method)?;
        set_addressing(&mut easy, cfg, dial)?;
        Ok(ProbeHandle {
            easy,
            _counter: counter,
            early_data: cfg.settings.early_data,
            capture: cfg.capture.clone(),
            url: url.to_string(),
            _close_watch: close_watch,
        })
    }

    /// The URL of the next request (cache busting changes it per round).
    pub fn set_url(&mut self, url: &str) -> Result<(), curl::Error> {
        self.easy.url(url)?;
        url.clone_into(&mut self.url);
        Ok(())
    }

    /// The whole-transfer timeout of the next request.
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), curl::Error> {
        self.easy.timeout(timeout)
    }

    /// Keep an idle connection at least this long (warm: survive the interval).
    pub fn keep_idle(&mut self, age: Duration) -> Result<(), curl::Error> {
        self.easy.maxage_conn(age)
    }

    /// Forgets what the handler saw on the previous transfer. Call before
    /// the clock starts: it is our work, not the probe's.
    pub fn forget_previous(&mut self) {
        self.easy.get_mut().reset();
    }

    /// Runs one transfer; returns libcurl's result and when it returned.
    pub fn perform(&mut self) -> (Result<(), curl::Error>, Instant) {
        self.stamp_perform();
        let result = self.easy.perform();
        let returned = Instant::now();
        // A panic our callbacks kept (`curl_ffi::guarded`) is raised here.
        self.easy.get_mut().raise_caught();
        (result, returned)
    }

    /// Runs one transfer on `multi` (the cold runner's, or one of its own
    /// for the preflight), as `perform` does, but abandoned at once when
    /// the run is interrupted, even in a handshake that hangs.
    pub(crate) fn perform_on(
        &mut self,
        multi: &curl::multi::Multi,
    ) -> (Result<(), curl::Error>, Instant) {
        self.stamp_perform();
        let cancel = self.easy.get_ref().cancel().clone();
        let result = curl_ffi::perform_on(multi, &mut self.easy, &|| cancel.is_canceled());
        (result, Instant::now())
    }

    /// When libcurl is asked to start: where its time line starts, give or
    /// take a few microseconds (see `sample::timeline_start_us`).
    fn stamp_perform(&mut self) {
        self.easy.get_mut().perform_started_us = Some(curl_ffi::monotonic_us());
    }

    /// Has libcurl gather the server's certificates in its handshakes
    /// (`CURLOPT_CERTINFO`), before it checks them: so that a failed
    /// check can say which names the certificate is for. Inside the
    /// handshake, so for the preflight only, which is in no statistic.
    pub(crate) fn gather_certificates(&mut self) -> Result<(), curl::Error> {
        self.easy.certinfo(true)
    }

    /// Has the next transfer connect (and make its TLS handshake) and send
    /// no request.
    pub(crate) fn connect_only(&mut self) -> Result<(), curl::Error> {
        self.easy.connect_only(true)
    }

    /// The names the server's certificate of the last transfer is for, and
    /// how many it has (`cert_text::names`), when libcurl gathered it.
    pub(crate) fn certificate_names(&self) -> Option<(Vec<String>, usize)> {
        let pem = curl_ffi::first_certificate_pem(&self.easy, 1 << 16)?;
        let cert = openssl::x509::X509::from_pem(pem.as_bytes()).ok()?;
        Some(super::cert_text::names(&cert))
    }

    /// The last response's `Location`, if any.
    pub fn location(&self) -> Option<&str> {
        self.easy.get_ref().location()
    }

    /// Everything libcurl and the handler know about the transfer that just
    /// ended, as a sample.
    pub fn sample(&mut self, mode: Mode, round: u32, https: bool, done: Outcome) -> Sample {
        let tcp = sample::tcp_facts(self.easy.get_mut());
        let facts = (!self.capture.is_empty())
            .then(|| sample::transfer_facts(&self.easy, &self.capture, &self.url, &done.result));
        let mut sample = sample::build(&self.easy, tcp, self.early_data, mode, round, https, done);
        sample.transfer = facts.map(Box::new);
        sample
    }
}

/// The protocol a handle speaks: HTTP version, address family, the TLS
/// versions, groups and early data, a client certificate, verification.
fn set_tls(easy: &mut Easy2<Collector>, cfg: &Config) -> Result<(), curl::Error> {
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
    // TLS 1.2 is the floor whatever is asked; `--tls-max` sets the ceiling.
    let max = match cfg.settings.tls_max {
        Some(TlsMax::V1_2) => SslVersion::Tlsv12,
        Some(TlsMax::V1_3) => SslVersion::Tlsv13,
        None => SslVersion::Default,
    };
    easy.ssl_min_max_version(SslVersion::Tlsv12, max)?;
    if let Some(curves) = &cfg.settings.curves {
        curl_ffi::set_curves(easy, curves)?;
    }
    if cfg.settings.early_data {
        curl_ffi::allow_early_data(easy)?;
    }
    // The bytes read before the run, which libcurl copies: without a
    // key of its own, libcurl takes the key from the certificate's PEM.
    if let Some(cert) = &cfg.settings.client_cert {
        easy.ssl_cert_blob(&cert.pem)?;
    }
    if let Some(key) = &cfg.client_key {
        easy.ssl_key_blob(&key.pem)?;
    }
    if cfg.insecure {
        // A deliberate, user-chosen switch: nothing is verified at all.
        easy.ssl_verify_peer(false)?;
        easy.ssl_verify_host(false)?;
    }
    Ok(())
}

/// The request: its method and extra headers.
fn set_request(
    easy: &mut Easy2<Collector>,
    cfg: &Config,
    method: &Method,
) -> Result<(), curl::Error> {
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
    Ok(())
}

/// Where a handle connects: `--connect-to`, `--resolve` and the pinned
/// address, and no proxy when pinned.
fn set_addressing(
    easy: &mut Easy2<Collector>,
    cfg: &Config,
    dial: Option<SocketAddr>,
) -> Result<(), curl::Error> {
    if !cfg.settings.connect_to.is_empty() {
        let mut list = List::new();
        for entry in &cfg.settings.connect_to {
            list.append(entry)?;
        }
        easy.connect_to(list)?;
    }
    let mut resolve = List::new();
    // The user's entries first: libcurl loads them in order and a later
    // entry for the same host and port replaces an earlier one.
    for entry in &cfg.settings.resolve {
        resolve.append(entry)?;
    }
    if let Some(addr) = dial {
        // Dial the pinned address while the URL host still drives SNI,
        // the Host header and certificate checks.
        let ip = match addr.ip() {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        // An IPv6 literal host is bracketed, as libcurl reads the entry
        // up to the first ':' otherwise (`fd00::1:443:…` would be host `fd00`).
        resolve.append(&format!(
            "{}:{}:{}",
            cfg.target.url_host(),
            cfg.target.port,
            ip
        ))?;
    }
    if dial.is_some() || !cfg.settings.resolve.is_empty() {
        easy.resolve(resolve)?;
    }
    if cfg.pin_ip {
        // A pinned run (the preflight included, which picks the address) goes
        // straight to the server: a proxy from the environment would become the peer.
        easy.proxy("")?;
    }
    Ok(())
}

//! The one request before the rounds: it settles the method, the address to
//! pin, the protocol and the TLS version. It is in no statistic.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::config::{Config, Method};
use super::ending::PreflightFailed;
use super::env::ProbeEnv;
use super::handle::ProbeHandle;
use super::resolver::Resolver;
use super::sample::{self, Outcome};
use super::types::{ErrorKind, Mode, ProbeError, Proto, Sample, TlsFacts};
use super::valve::Valve;

#[derive(Debug)]
pub struct Preflight {
    pub method: Method,
    pub addr: Option<SocketAddr>,
    pub proto: Option<Proto>,
    pub tls: Option<TlsFacts>,
    pub status: u16,
    pub bytes: u32,
    /// Our own timed lookup of the host before the preflight request.
    pub dns_first: Option<Duration>,
    /// `Location` when the first response was a redirect.
    pub redirect: Option<String>,
    /// A safety valve the preflight's own answer tripped (429, 503 with Retry-After).
    pub stop: Option<Valve>,
    /// Its own connect and handshake (in no statistic).
    pub tcp: Option<Duration>,
    pub handshake: Option<Duration>,
    /// An `http://` target answered 400 and its port completed a TLS
    /// handshake: a plain HTTP request went to an HTTPS port.
    pub plain_http_to_tls_port: bool,
}

/// A preflight (of `cfg`) that failed before it learned anything: what it
/// was asked, and the error.
fn bare(cfg: &Config, error: ProbeError, method: Method) -> PreflightFailed {
    PreflightFailed {
        tls_max: cfg.settings.tls_max,
        client_cert: cfg.settings.client_cert.is_some(),
        ..PreflightFailed::bare(error, cfg.target.clone(), method, cfg.settings.timeout)
    }
}

/// The preflight's request: its sample, the `Location` it was answered
/// with, and, when its certificate was refused for its name, the names
/// the certificate is for.
type Answer = (Sample, Option<String>, Option<(Vec<String>, usize)>);

fn one_request(cfg: &Config, env: &ProbeEnv, method: &Method) -> Answer {
    let https = cfg.target.https;
    let mut handle = match ProbeHandle::new(cfg, env, method, &cfg.target.url(), None) {
        Ok(handle) => handle,
        Err(e) => return (sample::setup_failure(Mode::Cold, 0, https, &e), None, None),
    };
    // The preflight is in no statistic: libcurl may do the work of
    // gathering the certificates inside its handshake.
    // (A handle that cannot tells a refused name without them.)
    if https && !cfg.insecure {
        let _ = handle.gather_certificates();
    }
    handle.forget_previous();
    // A multi handle of its own, so that a signal ends the preflight at
    // once, even in a handshake that hangs (`ProbeHandle::perform_on`).
    let multi = curl::multi::Multi::new();
    let start = Instant::now();
    let (result, returned) = handle.perform_on(&multi);
    let location = handle.location().map(str::to_string);
    let done = Outcome {
        result,
        own_dns: None,
        start,
        returned,
    };
    let sample = handle.sample(Mode::Cold, 0, https, done);
    let names = sample
        .error
        .as_ref()
        .filter(|e| e.kind == ErrorKind::CertName)
        .and_then(|_| handle.certificate_names());
    (sample, location, names)
}

/// Whether the port of an `http://` target completes a TLS handshake
/// (verification off, no request sent: libcurl connects only), asked
/// once the plain request failed or was answered 400, as an HTTPS port
/// answers plain HTTP. One more connection, outside every statistic;
/// a signal ends it as it ends the preflight.
fn port_speaks_tls(cfg: &Config, env: &ProbeEnv, dial: Option<SocketAddr>) -> bool {
    let mut tls = cfg.clone();
    tls.target.https = true;
    tls.insecure = true;
    let Ok(mut handle) = ProbeHandle::new(&tls, env, &Method::Head, &tls.target.url(), dial) else {
        return false;
    };
    if handle.connect_only().is_err() {
        return false;
    }
    handle.forget_previous();
    let multi = curl::multi::Multi::new();
    let (result, _) = handle.perform_on(&multi);
    result.is_ok() && !env.cancel.is_canceled()
}

/// Failures a TLS port gives a plain HTTP request: a close, a reset, an
/// answer that is not HTTP (a TLS alert), or nothing at all.
fn plain_request_to_tls_port(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ConnClosed | ErrorKind::ConnReset | ErrorKind::Error | ErrorKind::Timeout
    )
}

/// What a failed preflight learned, from its sample.
fn failed(
    cfg: &Config,
    env: &ProbeEnv,
    method: Method,
    mut sample: Sample,
    cert_names: Option<(Vec<String>, usize)>,
    dns_first: Option<Duration>,
) -> Box<PreflightFailed> {
    let error = *sample.error.take().expect("a failed sample");
    let connected = sample.timers.connect_us > 0;
    let speaks_tls = !cfg.target.https
        && connected
        && plain_request_to_tls_port(error.kind)
        && !env.cancel.is_canceled()
        && port_speaks_tls(cfg, env, sample.addr);
    let t = &sample.timers;
    Box::new(PreflightFailed {
        unanswered: t.pretransfer_us > 0 && t.starttransfer_us == 0 && sample.status == 0,
        addr: sample.addr,
        tls: sample.tls,
        dns: dns_first.or(sample.dns()),
        tcp: sample.tcp(),
        handshake: sample.tls(),
        cert_names,
        speaks_tls,
        ..bare(cfg, error, method)
    })
}

/// Runs the preflight. `Err` means nothing can be measured; it says what
/// the preflight learned before it failed.
pub fn run(cfg: &Config, env: &ProbeEnv) -> Result<Preflight, Box<PreflightFailed>> {
    let mut method = match &cfg.method {
        Some(m) => Method::Custom(m.clone()),
        None => Method::Head,
    };
    let dns_first = if cfg.pin_ip && !cfg.dns_overridden() {
        let mut resolver =
            Resolver::new(&cfg.target.host, cfg.target.port, Some(env.cancel.clone()));
        match resolver.lookup(Instant::now() + cfg.settings.timeout) {
            Ok(took) => Some(took),
            Err(e) => return Err(Box::new(bare(cfg, e, method))),
        }
    } else {
        None
    };
    let (mut sample, mut location, mut names) = one_request(cfg, env, &method);
    if method == Method::Head && sample.ok() && (sample.status == 405 || sample.status == 501) {
        // The server refuses HEAD: switch to a one-byte GET for the whole run,
        // here and not mid-run, so no round ever costs two connections.
        method = Method::RangedGet;
        (sample, location, names) = one_request(cfg, env, &method);
    }
    if sample.error.is_some() {
        return Err(failed(cfg, env, method, sample, names, dns_first));
    }
    let redirect = if (300..400).contains(&sample.status) {
        location
    } else {
        None
    };
    let plain_http_to_tls_port = !cfg.target.https
        && sample.status == 400
        && !env.cancel.is_canceled()
        && port_speaks_tls(cfg, env, sample.addr);
    Ok(Preflight {
        method,
        addr: sample.addr,
        proto: sample.proto,
        tls: sample.tls,
        status: sample.status,
        bytes: sample.bytes,
        // Unpinned, libcurl resolved the host itself: its lookup is the one we have.
        dns_first: dns_first.or(sample.dns()),
        redirect,
        stop: sample.valve(),
        tcp: sample.tcp(),
        handshake: sample.tls(),
        plain_http_to_tls_port,
    })
}

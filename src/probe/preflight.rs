//! The one request before the rounds: it settles the method, the address to
//! pin, the protocol and the TLS version. It is in no statistic.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::config::{Config, Method};
use super::env::ProbeEnv;
use super::handle::ProbeHandle;
use super::resolver::Resolver;
use super::sample::{self, Outcome};
use super::types::{Mode, ProbeError, Proto, Sample, TlsFacts};
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
}

fn one_request(cfg: &Config, env: &ProbeEnv, method: &Method) -> (Sample, Option<String>) {
    let https = cfg.target.https;
    let mut handle = match ProbeHandle::new(cfg, env, method, &cfg.target.url(), None) {
        Ok(handle) => handle,
        Err(e) => return (sample::setup_failure(Mode::Cold, 0, https, &e), None),
    };
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
    (sample, location)
}

/// Runs the preflight. `Err` means nothing can be measured.
pub fn run(cfg: &Config, env: &ProbeEnv) -> Result<Preflight, ProbeError> {
    let dns_first = if cfg.pin_ip && !cfg.dns_overridden() {
        let mut resolver =
            Resolver::new(&cfg.target.host, cfg.target.port, Some(env.cancel.clone()));
        Some(resolver.lookup(Instant::now() + cfg.settings.timeout)?)
    } else {
        None
    };
    let mut method = match &cfg.method {
        Some(m) => Method::Custom(m.clone()),
        None => Method::Head,
    };
    let (mut sample, mut location) = one_request(cfg, env, &method);
    if method == Method::Head && sample.ok() && (sample.status == 405 || sample.status == 501) {
        // The server refuses HEAD: switch to a one-byte GET for the whole run,
        // here and not mid-run, so no round ever costs two connections.
        method = Method::RangedGet;
        (sample, location) = one_request(cfg, env, &method);
    }
    if let Some(err) = sample.error.take() {
        return Err(*err);
    }
    let redirect = if (300..400).contains(&sample.status) {
        location
    } else {
        None
    };
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
    })
}

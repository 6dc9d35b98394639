//! The cold probe: a brand-new easy handle and a brand-new connection every round.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::config::{Config, Method};
use super::curl_ffi::SessionShare;
use super::env::ProbeEnv;
use super::handle::ProbeHandle;
use super::resolver::Resolver;
use super::sample::{self, Outcome};
use super::types::{Mode, Sample};

pub struct ColdRunner {
    cfg: Config,
    method: Method,
    dial: Option<SocketAddr>,
    env: ProbeEnv,
    /// One TLS session cache for all cold handles, so round 2 on can resume.
    share: Option<SessionShare>,
    /// Our own timed lookup; only when the dial target is pinned and the
    /// host's address is not given on the command line.
    resolver: Option<Resolver>,
}

impl ColdRunner {
    pub fn new(
        cfg: &Config,
        env: &ProbeEnv,
        method: Method,
        dial: Option<SocketAddr>,
    ) -> ColdRunner {
        let share = if cfg.resume {
            SessionShare::new()
        } else {
            None
        };
        let resolver = dial
            .filter(|_| !cfg.dns_overridden())
            .map(|_| Resolver::new(&cfg.target.host, cfg.target.port, Some(env.cancel.clone())));
        ColdRunner {
            cfg: cfg.clone(),
            method,
            dial,
            env: env.clone(),
            share,
            resolver,
        }
    }

    pub fn probe(&mut self, round: u32, url: &str) -> Sample {
        let https = self.cfg.target.https;
        // Everything up to the clock start is our own set-up and stays out of the stages.
        let made = ProbeHandle::new(
            &self.cfg,
            &self.env,
            &self.method,
            url,
            self.dial,
            self.share.as_ref(),
        );
        // A brand-new handle has no connection to reuse (the share holds TLS
        // sessions only); closing after the transfer keeps it from lingering.
        let mut handle = match made.and_then(|mut h| h.close_after_transfer().map(|_| h)) {
            Ok(h) => h,
            Err(e) => return sample::setup_failure(Mode::Cold, round, https, &e),
        };
        handle.forget_previous();
        if let Some(resolver) = &mut self.resolver {
            resolver.prepare();
        }

        let start = Instant::now();
        let deadline = start + self.cfg.timeout;
        let mut own_dns = None;
        if let Some(resolver) = &mut self.resolver {
            // Pinned: libcurl never resolves, so the DNS stage is our own lookup.
            match resolver.lookup(deadline) {
                Ok(took) => own_dns = Some(took),
                Err(err) => {
                    let wall = Some(start.elapsed());
                    return sample::failed_before_transfer(Mode::Cold, round, https, err, wall);
                }
            }
            // One deadline from DNS to the end of the body.
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            if let Err(e) = handle.set_timeout(left) {
                return sample::setup_failure(Mode::Cold, round, https, &e);
            }
        }
        let (result, returned) = handle.perform();
        let done = Outcome {
            result,
            own_dns,
            start,
            returned,
        };
        handle.sample(Mode::Cold, round, https, done)
    }
}

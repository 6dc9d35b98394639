//! The cold probe: a brand-new easy handle and a brand-new connection every round.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::cold_driver::ColdDriver;
use super::config::{Config, Method};
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
    /// The multi handle every cold transfer runs on: one TLS session cache
    /// for all of them, and each connection's graceful close (see `cold_driver`).
    driver: ColdDriver,
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
        let resolver = dial
            .filter(|_| !cfg.dns_overridden())
            .map(|_| Resolver::new(&cfg.target.host, cfg.target.port, Some(env.cancel.clone())));
        ColdRunner {
            cfg: cfg.clone(),
            method,
            dial,
            env: env.clone(),
            driver: ColdDriver::new(),
            resolver,
        }
    }

    pub fn probe(&mut self, round: u32, url: &str) -> Sample {
        let https = self.cfg.target.https;
        // Everything up to the clock start is our own set-up and stays out of
        // the stages, the end of the previous probe's close included.
        self.driver.finish_close(&self.env.cancel);
        let made = ProbeHandle::for_cold_probe(
            &self.cfg,
            &self.env,
            &self.method,
            url,
            self.dial,
            self.driver.watch(),
        );
        let mut handle = match made {
            Ok(h) => h,
            Err(e) => return sample::setup_failure(Mode::Cold, round, https, &e),
        };
        handle.forget_previous();
        if let Some(resolver) = &mut self.resolver {
            resolver.prepare();
        }

        let start = Instant::now();
        let deadline = start + self.cfg.settings.timeout;
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
        let (result, returned) = self.driver.perform(&mut handle);
        let done = Outcome {
            result,
            own_dns,
            start,
            returned,
        };
        let sample = handle.sample(Mode::Cold, round, https, done);
        let rtt = sample
            .tcp_info
            .map(|t| crate::text::micros(t.min_rtt_us.unwrap_or(t.rtt_us)));
        self.driver.closing_after(rtt);
        sample
    }

    /// Lets the last probe's connection finish closing (and the server's
    /// late session tickets arrive) until `until`: called while the
    /// scheduler waits, never inside a probe.
    pub fn settle(&self, until: Instant, cancel: &Cancel) {
        self.driver.settle(until, cancel);
    }
}

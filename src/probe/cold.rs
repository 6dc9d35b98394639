//! The cold probe: a brand-new easy handle and a brand-new connection every round.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::config::Config;
use super::curl_ffi::{SessionShare, SharedEasy};
use super::resolver::Resolver;
use super::transfer::{self, Finished, Method, ProbeEnv};
use super::types::{Mode, Sample};

pub struct ColdRunner {
    cfg: Config,
    method: Method,
    pin: Option<SocketAddr>,
    env: ProbeEnv,
    /// One TLS session cache for all cold handles, so round 2 on can resume.
    share: Option<SessionShare>,
    /// Our own timed lookup; only when the dial target is pinned.
    resolver: Option<Resolver>,
}

impl ColdRunner {
    pub fn new(
        cfg: &Config,
        env: &ProbeEnv,
        method: Method,
        pin: Option<SocketAddr>,
    ) -> ColdRunner {
        let share = if cfg.resume {
            SessionShare::new()
        } else {
            None
        };
        let resolver =
            pin.map(|_| Resolver::new(&cfg.target.host, cfg.target.port, Some(env.cancel.clone())));
        ColdRunner {
            cfg: cfg.clone(),
            method,
            pin,
            env: env.clone(),
            share,
            resolver,
        }
    }

    pub fn probe(&mut self, round: u32, url: &str) -> Sample {
        let https = self.cfg.target.https;
        // Everything up to the clock start is our own set-up and stays out of the stages.
        let easy = match transfer::new_handle(&self.cfg, &self.env, &self.method, self.pin) {
            Ok(easy) => easy,
            Err(e) => return transfer::setup_failure(Mode::Cold, round, https, &e),
        };
        let mut handle = match &self.share {
            Some(share) => match SharedEasy::attach(easy, share) {
                Ok(h) => h,
                Err(e) => return transfer::setup_failure(Mode::Cold, round, https, &e),
            },
            None => SharedEasy::unshared(easy),
        };
        let easy = handle.easy_mut();
        // A brand-new handle has no connection to reuse (the share holds TLS
        // sessions only); forbidding reuse closes this one after the probe.
        let configured = easy.url(url).and_then(|_| easy.forbid_reuse(true));
        if let Err(e) = configured {
            return transfer::setup_failure(Mode::Cold, round, https, &e);
        }
        transfer::prepare(easy);
        if let Some(resolver) = &mut self.resolver {
            resolver.prepare();
        }

        let start = Instant::now();
        let deadline = start + self.cfg.timeout;
        let mut own_dns = None;
        if let Some(resolver) = &mut self.resolver {
            // Pinned: libcurl never resolves, so the DNS stage is our own lookup.
            match resolver.lookup(deadline) {
                Ok(found) => own_dns = Some(found.took),
                Err(err) => {
                    let wall = Some(start.elapsed());
                    return transfer::failed_before_transfer(Mode::Cold, round, https, err, wall);
                }
            }
            // One deadline from DNS to the end of the body.
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            if let Err(e) = easy.timeout(left) {
                return transfer::setup_failure(Mode::Cold, round, https, &e);
            }
        }
        let result = easy.perform();
        let returned = Instant::now();
        let done = Finished {
            result,
            own_dns,
            start,
            returned,
        };
        transfer::to_sample(easy, Mode::Cold, round, https, done)
    }
}

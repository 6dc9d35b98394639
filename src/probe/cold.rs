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
    resolver: Resolver,
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
        ColdRunner {
            resolver: Resolver::new(cfg.ip_version, Some(env.cancel.clone())),
            cfg: cfg.clone(),
            method,
            pin,
            env: env.clone(),
            share,
        }
    }

    pub fn probe(&mut self, round: u32, url: &str) -> Sample {
        let https = self.cfg.target.https;
        // Everything up to the clock start is our own set-up and stays out of the stages.
        let easy = match transfer::new_handle(&self.cfg, &self.env, &self.method, self.pin) {
            Ok(easy) => easy,
            Err(e) => return setup_failure(round, https, e),
        };
        let mut handle = match &self.share {
            Some(share) => match SharedEasy::attach(easy, share) {
                Ok(h) => h,
                Err(e) => return setup_failure(round, https, e),
            },
            None => SharedEasy::unshared(easy),
        };
        let easy = &mut handle.easy;
        let configured = easy
            .url(url)
            .and_then(|_| easy.fresh_connect(true))
            .and_then(|_| easy.forbid_reuse(true));
        if let Err(e) = configured {
            return setup_failure(round, https, e);
        }
        transfer::prepare(easy);

        let start = Instant::now();
        let deadline = start + self.cfg.timeout;
        let mut own_dns = None;
        if self.pin.is_some() {
            // Pinned: libcurl never resolves, so the DNS stage is our own lookup.
            match self
                .resolver
                .lookup(&self.cfg.target.host, self.cfg.target.port, deadline)
            {
                Ok(found) => own_dns = Some(found.took),
                Err(err) => {
                    return transfer::failed_before_transfer(
                        Mode::Cold,
                        round,
                        https,
                        err,
                        start.elapsed(),
                    )
                }
            }
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            if let Err(e) = easy.timeout(left) {
                return setup_failure(round, https, e);
            }
        }
        let result = easy.perform();
        let returned = Instant::now();
        transfer::to_sample(
            easy,
            Mode::Cold,
            round,
            https,
            Finished {
                result,
                own_dns,
                start,
                returned,
            },
        )
    }
}

fn setup_failure(round: u32, https: bool, e: curl::Error) -> Sample {
    let err = super::types::ProbeError {
        kind: super::types::ErrorKind::Error,
        text: e.to_string(),
    };
    let mut s = transfer::failed_before_transfer(Mode::Cold, round, https, err, Duration::ZERO);
    s.wall_total = None;
    s
}

//! The warm probe: one easy handle for the whole run, so every round after the
//! first rides the connection libcurl keeps open.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use curl::easy::Easy2;

use super::config::Config;
use super::transfer::{self, Collector, Finished, Method, ProbeEnv};
use super::types::{Mode, Sample};

/// libcurl closes connections idle longer than this by default (118 s).
const LIBCURL_DEFAULT_MAXAGE: Duration = Duration::from_secs(118);

pub struct WarmRunner {
    easy: Result<Easy2<Collector>, String>,
    https: bool,
}

impl WarmRunner {
    pub fn new(
        cfg: &Config,
        env: &ProbeEnv,
        method: Method,
        pin: Option<SocketAddr>,
    ) -> WarmRunner {
        let easy = transfer::new_handle(cfg, env, &method, pin).and_then(|mut easy| {
            // Keep the idle connection for at least two intervals, so a long
            // --interval still measures reuse instead of libcurl's idle reaper.
            let keep = (cfg.interval * 2 + cfg.timeout).max(LIBCURL_DEFAULT_MAXAGE);
            easy.maxage_conn(keep)?;
            Ok(easy)
        });
        WarmRunner {
            easy: easy.map_err(|e| e.to_string()),
            https: cfg.target.https,
        }
    }

    pub fn probe(&mut self, round: u32, url: Option<&str>) -> Sample {
        let https = self.https;
        let easy = match &mut self.easy {
            Ok(easy) => easy,
            Err(text) => return transfer::setup_failure(Mode::Warm, round, https, text),
        };
        if let Some(url) = url {
            if let Err(e) = easy.url(url) {
                return transfer::setup_failure(Mode::Warm, round, https, &e);
            }
        }
        transfer::prepare(easy);
        let start = Instant::now();
        let result = easy.perform();
        let returned = Instant::now();
        let done = Finished {
            result,
            own_dns: None,
            start,
            returned,
        };
        transfer::to_sample(easy, Mode::Warm, round, https, done)
    }
}

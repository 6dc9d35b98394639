//! The warm probe: one easy handle for the whole run, so every round after the
//! first rides the connection libcurl keeps open.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::config::{Config, Method};
use super::env::ProbeEnv;
use super::handle::ProbeHandle;
use super::sample::{self, Outcome};
use super::types::{Mode, Sample};

/// libcurl closes connections idle longer than this by default (118 s).
const LIBCURL_DEFAULT_MAXAGE: Duration = Duration::from_secs(118);

pub struct WarmRunner {
    handle: Result<ProbeHandle, String>,
    https: bool,
}

impl WarmRunner {
    pub fn new(
        cfg: &Config,
        env: &ProbeEnv,
        method: Method,
        dial: Option<SocketAddr>,
    ) -> WarmRunner {
        let url = cfg.target.url();
        let handle = ProbeHandle::new(cfg, env, &method, &url, dial).and_then(|mut h| {
            // Keep the idle connection for at least two intervals, so a long
            // --interval still measures reuse instead of libcurl's idle reaper.
            h.keep_idle(
                (cfg.settings.interval * 2 + cfg.settings.timeout).max(LIBCURL_DEFAULT_MAXAGE),
            )?;
            Ok(h)
        });
        WarmRunner {
            handle: handle.map_err(|e| e.to_string()),
            https: cfg.target.https,
        }
    }

    pub fn probe(&mut self, round: u32, url: Option<&str>) -> Sample {
        let https = self.https;
        let handle = match &mut self.handle {
            Ok(handle) => handle,
            Err(text) => return sample::setup_failure(Mode::Warm, round, https, text),
        };
        if let Some(url) = url {
            if let Err(e) = handle.set_url(url) {
                return sample::setup_failure(Mode::Warm, round, https, &e);
            }
        }
        handle.forget_previous();
        let start = Instant::now();
        let (result, returned) = handle.perform();
        let done = Outcome {
            result,
            own_dns: None,
            start,
            returned,
        };
        handle.sample(Mode::Warm, round, https, done)
    }
}

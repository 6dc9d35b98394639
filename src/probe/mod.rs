//! Measuring: the preflight, the cold and warm probes on libcurl, and the
//! scheduler. Owns every shared data type; knows nothing of statistics or output.

mod cold;
mod config;
pub mod curl_ffi;
mod errors;
mod preflight;
mod resolver;
mod scheduler;
pub mod server_timing;
pub mod synthetic;
mod transfer;
mod trust;
mod types;
mod warm;
mod warnings;

pub use config::{Config, HttpVersion, IpVersion, ModeSel, Order, Target};
pub use errors::{kind_of, Evidence};
pub use preflight::{run as preflight, Preflight};
pub use scheduler::{
    round_modes, run_rounds, EarlyStop, Observer, Rounds, MAX_CONSECUTIVE_FAILURES,
};
pub use transfer::{Cancel, Collector, Method, ProbeEnv, BODY_CAP};
pub use trust::{check_sources as check_trust_sources, TrustStore};
pub use types::{
    tls_version_label, CurlTimers, ErrorKind, Mode, ProbeError, Proto, RunInfo, Sample,
    ServerTiming, TcpFacts, TlsFacts,
};
pub use warnings::Warnings;

/// The run's facts for the header line and `run` in JSON.
pub fn run_info(cfg: &Config, pre: &Preflight) -> RunInfo {
    RunInfo {
        method: pre.method.label().to_string(),
        addr: pre.addr,
        proto: pre.proto,
        tls: pre.tls,
        ip_pinned: cfg.pin_ip && pre.addr.is_some(),
        dns_first: pre.dns_first,
        preflight_status: pre.status,
        preflight_bytes: pre.bytes,
        ..settled_by(cfg)
    }
}

/// The run's facts when the preflight failed: what the command line settled,
/// and the preflight's error; nothing the server would have told us.
pub fn run_info_failed(cfg: &Config, err: ProbeError) -> RunInfo {
    RunInfo {
        preflight_error: Some(err),
        ..settled_by(cfg)
    }
}

/// What the command line and this binary settle, before the server says anything.
fn settled_by(cfg: &Config) -> RunInfo {
    let (libcurl_version, tls_library, _) = curl_ffi::library_versions();
    RunInfo {
        url: cfg.target.url(),
        host: cfg.target.host.clone(),
        method: cfg.method.clone().unwrap_or_else(|| "HEAD".into()),
        addr: None,
        proto: None,
        tls: None,
        ip_pinned: false,
        dns_first: None,
        preflight_status: 0,
        preflight_bytes: 0,
        count: cfg.count,
        interval: cfg.interval,
        timeout: cfg.timeout,
        order: cfg.order,
        mode: cfg.mode,
        warmup: cfg.warmup,
        resume: cfg.resume,
        libcurl_version,
        tls_library,
        calibration: cfg.calibrate,
        preflight_error: None,
    }
}

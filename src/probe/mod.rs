//! Measuring: the preflight, the cold and warm probes on libcurl, and the
//! scheduler. Owns every shared data type; knows nothing of statistics or output.

// Bottom-up, no file importing one above it: curl_ffi (every raw call into
// libcurl and OpenSSL; imports nothing of probe) <- target, transfer, ocsp,
// retry_after, server_timing, handshake_messages (pure, no FFI) <-
// handshake_stamps, cancel, trust, cert_text, push, wakeup <- config <- axes,
// valve <- types <- answers, live_tls <- collector, env, errors, anatomy <-
// sample <- handle <- cold_driver, resolver <- cold,
// warm, preflight, compare, stop_rules <- scheduler.
mod anatomy;
mod answers;
mod axes;
mod cancel;
mod cert_text;
mod cold;
mod cold_driver;
mod collector;
mod compare;
mod config;
mod curl_ffi;
mod env;
mod errors;
mod handle;
pub mod handshake_messages;
mod handshake_stamps;
mod live_tls;
mod ocsp;
mod preflight;
mod push;
mod resolver;
mod retry_after;
mod sample;
mod scheduler;
pub mod server_timing;
mod stages;
mod stop_rules;
mod target;
mod transfer;
mod trust;
mod types;
mod valve;
mod wakeup;
mod warm;

pub use axes::{Axis, AxisSpec, AxisValue, Defaults, FixedBy, Labels, Requirement, Values, AXES};
pub use cancel::Cancel;
pub use collector::{Collector, BODY_CAP};
pub use compare::{
    addresses_of, variant_order, variants, AddressLookupError, Compare, ComparedValue, Variant,
    MAX_VARIANTS,
};
pub use config::{
    entry_head, Config, EarlyData, HttpVersion, IpVersion, Method, ModeChoice, Order, PemFile,
    RunSettings, SettingWarning, TlsMax,
};
pub use curl_ffi::{curl_version, library_versions, UrlPart, UrlParts};
pub use env::ProbeEnv;
pub use preflight::{run as preflight, Preflight};
pub use push::{push, Credentials, PushTarget, PUSH_TIMEOUT};
pub use retry_after::RetryAfter;
pub use sample::Outcome;
pub use scheduler::{
    round_modes, run_variants, EarlyStop, Notice, Observer, Rounds, RunStart, VariantSetup,
};
pub use stages::{whole_us, Stage, Stages};
pub use target::{Target, TargetError};
pub use transfer::{Capture, HeaderCapture, TransferFacts};
pub use trust::{check_sources as check_trust_sources, TrustStore};
pub use types::{
    tls_version_label, CertSize, CompareInfo, CurlTimers, ErrorKind, HandshakeAnatomy, Mode,
    OcspStaple, ProbeError, Proto, RunInfo, Sample, ServerTiming, TcpFacts, TlsExtra, TlsFacts,
    VariantInfo,
};
pub use valve::Valve;
pub use wakeup::{WakeupPin, CPU_DMA_LATENCY};

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
        https: cfg.target.https,
        host: cfg.target.host.clone(),
        method: cfg.method.clone().unwrap_or_else(|| "HEAD".into()),
        addr: None,
        proto: None,
        tls: None,
        ip_pinned: false,
        dns_first: None,
        preflight_status: 0,
        preflight_bytes: 0,
        settings: cfg.settings.clone(),
        libcurl_version,
        tls_library,
        cpu_wakeup_pinned: false,
        cpu_wakeup_why_not: None,
        compare: None,
        started_at: None,
        preflight_error: None,
    }
}

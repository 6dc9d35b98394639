//! Measuring: the preflight, the cold and warm probes on libcurl, and the
//! scheduler. Owns every shared data type; knows nothing of statistics or output.

// Its folders are floors, bottom-up, and a file imports only from its own
// floor and those below it (`FLOORS` in tests/source_layout/folders.rs
// holds the order and checks it): curl_ffi (every raw call into libcurl
// and OpenSSL) <- reply (what a reply carries, as data) <- settings (what a
// run is asked to do) <- data (the shared types) <- tls (the handshake) <-
// exchange (one transfer, into a Sample) <- rounds (the probes, the
// scheduler). Each folder's mod.rs imports for its files what they take
// from the floors below, and this file names the modules the rest of the
// crate reads through it.
mod curl_ffi;
mod data;
mod exchange;
mod reply;
mod rounds;
mod settings;
mod tls;

use data::{ending, run_info, stages, types};
use exchange::{collector, env, push, sample};
use reply::{retry_after, transfer, valve};
use rounds::{preflight, scheduler, wakeup};
use settings::{axes, cancel, compare, config, target};
use tls::trust;

pub use reply::server_timing;
pub use tls::handshake_messages;

pub use axes::{Axis, AxisSpec, AxisValue, Defaults, Endpoint, Labels, Requirement, Values, AXES};
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
pub use ending::{EndReason, Ending, PreflightFailed, StoppedBy};
pub use env::ProbeEnv;
pub use preflight::{run as preflight, Preflight};
pub use push::{
    probes_proxy, push, Credentials, PushAbandoned, PushError, PushRoute, PushTarget,
    PUSH_AUTH_VAR, PUSH_TIMEOUT,
};
pub use retry_after::RetryAfter;
pub use run_info::{CompareInfo, RunInfo, VariantInfo, WakeupNotHeld};
pub use sample::Outcome;
pub use scheduler::{
    round_modes, run_variants, EarlyStop, Notice, Observer, Rounds, RunStart, VariantSetup,
};
pub use stages::{whole_us, Stage, Stages};
pub use target::{Target, TargetError};
pub use transfer::{Capture, HeaderCapture, TransferFacts};
pub use trust::{check_sources as check_trust_sources, TrustStore};
pub use types::{
    tls_version_label, CertSize, CurlTimers, ErrorKind, HandshakeAnatomy, Mode, OcspStaple,
    ProbeError, Proto, Sample, ServerTiming, TcpFacts, TlsExtra, TlsFacts,
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
        preflight_tcp: pre.tcp,
        preflight_tls: pre.handshake,
        preflight_status: pre.status,
        preflight_bytes: pre.bytes,
        ..settled_by(cfg)
    }
}

/// The run's facts when it ended before round 1 (`why`): what the command
/// line settled; nothing the server would have told us.
pub fn run_info_failed(cfg: &Config, why: EndReason) -> RunInfo {
    RunInfo {
        preflight_error: Some(why),
        ..settled_by(cfg)
    }
}

/// The run's facts when the preflight failed, with what it learned before
/// it did: the address it connected to, the TLS handshake it completed,
/// the stages it went through.
pub fn run_info_preflight_failed(cfg: &Config, failed: Box<PreflightFailed>) -> RunInfo {
    RunInfo {
        method: failed.method.label().to_string(),
        addr: failed.addr,
        tls: failed.tls,
        dns_first: failed.dns,
        preflight_tcp: failed.tcp,
        preflight_tls: failed.handshake,
        ..run_info_failed(cfg, EndReason::PreflightFailed(failed))
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
        preflight_tcp: None,
        preflight_tls: None,
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

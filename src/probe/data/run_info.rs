//! What the run reports of itself (`RunInfo`): the facts its preflight
//! settled, the settings it ran with, why it ended before round 1 if it
//! did, and under `--compare` every variant and why one could not run.

use std::net::SocketAddr;
use std::time::Duration;

use super::axes::Axis;
use super::config::RunSettings;
use super::ending::EndReason;
use super::types::{Proto, TlsFacts};

/// Facts settled once per run by the preflight, plus the settings used.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub url: String,
    /// The target is `https://` (the same fact as `Sample::https`).
    pub https: bool,
    pub host: String,
    pub method: String,
    pub addr: Option<SocketAddr>,
    pub proto: Option<Proto>,
    pub tls: Option<TlsFacts>,
    pub ip_pinned: bool,
    pub dns_first: Option<Duration>,
    /// The preflight's own connect and TLS handshake, as far as it got
    /// (`None`: not reached, or not made); in no statistic.
    pub preflight_tcp: Option<Duration>,
    pub preflight_tls: Option<Duration>,
    pub preflight_status: u16,
    pub preflight_bytes: u32,
    /// The settings as given (`--calibrate` among them: the server is
    /// tlsping's own, in this process, on 127.0.0.1).
    pub settings: RunSettings,
    pub libcurl_version: String,
    pub tls_library: String,
    /// The CPU's wake-up latency was held at 0 µs for the rounds
    /// (`WakeupPin`); when it was not, why not.
    pub cpu_wakeup_pinned: bool,
    pub cpu_wakeup_why_not: Option<WakeupNotHeld>,
    /// When the rounds started, on the wall clock (`run.started_at`); the
    /// zero point of every sample's `t`. `None` when no round ran.
    pub started_at: Option<std::time::SystemTime>,
    /// `--compare`: the axis, every variant and which of them could run.
    pub compare: Option<CompareInfo>,
    /// Why the run ended before round 1: the preflight failed, was refused
    /// by a safety valve, or negotiated another HTTP version than asked.
    pub preflight_error: Option<EndReason>,
}

/// What the run reports about one variant (`run.compare` in JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct VariantInfo {
    pub label: String,
    pub value: String,
    /// Why it could not run at all (its preflight failed, or the server
    /// answered it in another way than the variant asks); `None` when it ran.
    pub unavailable: Option<EndReason>,
    /// The address its preflight settled on.
    pub addr: Option<SocketAddr>,
    /// The HTTP version its preflight was answered over.
    pub proto: Option<Proto>,
    /// The TLS facts of its preflight (its certificate's lifetime, say):
    /// under `--compare target=` each endpoint has its own.
    pub tls: Option<TlsFacts>,
}

impl VariantInfo {
    /// A variant by its label and axis value, before its preflight says
    /// whether it runs and where.
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> VariantInfo {
        VariantInfo {
            label: label.into(),
            value: value.into(),
            unavailable: None,
            addr: None,
            proto: None,
            tls: None,
        }
    }
}

/// The comparison a run made, for the header and `run.compare`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareInfo {
    pub axis: Axis,
    /// Every variant asked for, in order; a sample's `variant` indexes this.
    pub variants: Vec<VariantInfo>,
    /// Probes per round once the variants that cannot run are left out.
    pub probes_per_round: usize,
}

impl CompareInfo {
    /// The label of variant `index` (a sample's `variant`).
    pub fn label(&self, index: u8) -> &str {
        self.variants
            .get(usize::from(index))
            .map_or("?", |v| v.label.as_str())
    }
}

/// Why the CPU's wake-up latency was not held at 0 µs (`WakeupPin`), with
/// the device's path and the system's error as they came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WakeupNotHeld {
    /// The device could not be opened or written.
    Failed { path: String, error: String },
    /// What is at the path is not the kernel's PM QoS device.
    NotTheDevice { path: String },
}

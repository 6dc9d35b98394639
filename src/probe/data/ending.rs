//! How a run ended, as data: how far its rounds got and what stopped them
//! (`Ending`, `StoppedBy`), and why it ended before round 1, or why a
//! `--compare` variant could not run (`EndReason`), with what a failed
//! preflight learned (`PreflightFailed`). Nothing here is worded: the
//! outputs say each where they write it (`render::reasons`), and a
//! server's or libcurl's text is kept as it came.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::axes::Axis;
use super::compare::AddressLookupError;
use super::config::{HttpVersion, Method, TlsMax};
use super::target::Target;
use super::types::{ErrorKind, ProbeError, Proto, TlsFacts};
use super::valve::Valve;

/// How the rounds ended: how many ran, of how many asked, and what stopped
/// them before the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// Rounds whose every probe ran to its end (warmup rounds included).
    pub completed: u32,
    /// The rounds asked for (`-n`); 0: until interrupted.
    pub asked: u32,
    /// The round cut off after some of its probes ran, if one was.
    pub cut: Option<u32>,
    /// What ended the rounds before `asked` ran (`None`: all of them ran).
    pub stopped_by: Option<StoppedBy>,
}

impl Ending {
    /// A run whose `asked` rounds all ran.
    pub fn complete(asked: u32) -> Ending {
        Ending {
            completed: asked,
            asked,
            cut: None,
            stopped_by: None,
        }
    }
}

/// What ended the rounds early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoppedBy {
    /// Ctrl+C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    HangUp,
    /// The reader of standard output closed it (`| head`).
    StdoutClosed,
    /// An output could not be written.
    OutputFailed,
    /// A safety valve (failures in a row, a server asking to back off).
    SafetyValve,
    /// The run ended before round 1 (`run.preflight_error` says why).
    Preflight,
}

impl StoppedBy {
    /// Every value, in the order of the JSON Schema's enum.
    pub const ALL: [StoppedBy; 7] = [
        StoppedBy::Interrupt,
        StoppedBy::Terminate,
        StoppedBy::HangUp,
        StoppedBy::StdoutClosed,
        StoppedBy::OutputFailed,
        StoppedBy::SafetyValve,
        StoppedBy::Preflight,
    ];

    /// Its slug in `--json` (`ending.stopped_by`) and `--openmetrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Interrupt => "interrupt",
            StoppedBy::Terminate => "terminate",
            StoppedBy::HangUp => "hangup",
            StoppedBy::StdoutClosed => "stdout_closed",
            StoppedBy::OutputFailed => "output_failed",
            StoppedBy::SafetyValve => "safety_valve",
            StoppedBy::Preflight => "preflight",
        }
    }

    /// The rounds a signal stopped (`signal`, a SIGINT, SIGTERM or SIGHUP)
    /// are stopped by this.
    pub fn signal(signal: i32) -> StoppedBy {
        match signal {
            libc::SIGTERM => StoppedBy::Terminate,
            libc::SIGHUP => StoppedBy::HangUp,
            _ => StoppedBy::Interrupt,
        }
    }

    /// Whether a signal stopped the rounds.
    pub fn is_signal(self) -> bool {
        matches!(
            self,
            StoppedBy::Interrupt | StoppedBy::Terminate | StoppedBy::HangUp
        )
    }
}

/// Why a run ended before round 1 (`RunInfo::preflight_error`), or why a
/// `--compare` variant could not run at all (`VariantInfo::unavailable`):
/// what happened, with its facts.
#[derive(Clone, Debug, PartialEq)]
pub enum EndReason {
    /// The preflight failed: libcurl's error, and what it learned first.
    PreflightFailed(Box<PreflightFailed>),
    /// A signal came before round 1: nothing was measured.
    Interrupted,
    /// The preflight's answer tripped a safety valve: the server asked
    /// clients to back off (every variant's server, with `--compare`).
    Valve(Valve),
    /// Under `--compare target=`: that target's server asked it to back
    /// off at its preflight; the others, services of their own, go on.
    TargetBackedOff(Valve),
    /// `--http-version` asked for one version and the server answered over
    /// another.
    HttpVersionRefused { asked: HttpVersion, got: Proto },
    /// A variant that asks for one HTTP version was answered over another
    /// (`None`: over no HTTP at all).
    AnsweredOver(Option<Proto>),
    /// A variant that asks for a TLS version (its ceiling) got another.
    Negotiated(TlsFacts),
    /// A variant that sends early data got a server that takes none
    /// (`TlsFacts::refuses_early_data`).
    NoEarlyData(TlsFacts),
    /// `--compare addr` without a list: the host has one address.
    OneAddress { host: String, addr: IpAddr },
    /// `--compare addr` without a list: the host's addresses could not be
    /// looked up.
    AddressLookupFailed {
        host: String,
        error: AddressLookupError,
    },
    /// `--compare`: no variant can run. `first` is why the first that was
    /// tried cannot, if one was.
    NoVariantCanRun {
        axis: Axis,
        first: Option<Box<EndReason>>,
    },
    /// `--calibrate`'s own server could not start (its error).
    CalibrationServer(String),
}

impl EndReason {
    /// The failure kind it is reported as (`preflight_error_kind`, a
    /// variant's `error_kind`).
    pub fn kind(&self) -> ErrorKind {
        match self {
            EndReason::PreflightFailed(f) => f.error.kind,
            EndReason::Interrupted => ErrorKind::Canceled,
            EndReason::AddressLookupFailed { .. } => ErrorKind::DnsFail,
            EndReason::NoVariantCanRun {
                first: Some(first), ..
            } => first.kind(),
            EndReason::Valve(_)
            | EndReason::TargetBackedOff(_)
            | EndReason::HttpVersionRefused { .. }
            | EndReason::AnsweredOver(_)
            | EndReason::Negotiated(_)
            | EndReason::NoEarlyData(_)
            | EndReason::OneAddress { .. }
            | EndReason::NoVariantCanRun { first: None, .. }
            | EndReason::CalibrationServer(_) => ErrorKind::Error,
        }
    }
}

/// A preflight that failed, what it was asked, and what it learned before
/// it did: where it connected, the handshake it completed, how far it got.
/// None of it is in a statistic; the outputs keep it, and the error line
/// says what to try next from it.
#[derive(Clone, Debug, PartialEq)]
pub struct PreflightFailed {
    pub error: ProbeError,
    /// The target it went to, and the settings the advice after a failure
    /// reads: the timeout, the TLS ceiling, whether a client certificate
    /// was given.
    pub target: Target,
    pub timeout: Duration,
    pub tls_max: Option<TlsMax>,
    pub client_cert: bool,
    /// What it asked with.
    pub method: Method,
    pub addr: Option<SocketAddr>,
    pub tls: Option<TlsFacts>,
    /// The stages it went through (`None`: not reached, or not made).
    pub dns: Option<Duration>,
    pub tcp: Option<Duration>,
    pub handshake: Option<Duration>,
    /// The request went out, and not a byte of an answer came back.
    pub unanswered: bool,
    /// The names the server's certificate is for, the first few, and how
    /// many it has: known when the certificate was checked and refused.
    pub cert_names: Option<(Vec<String>, usize)>,
    /// An `http://` target's port completed a TLS handshake, asked after
    /// the plain request failed: an HTTPS port.
    pub speaks_tls: bool,
}

impl PreflightFailed {
    /// A preflight to `target`, asked with `method` and its `timeout`,
    /// that failed with `error` before it learned anything (no TLS ceiling,
    /// no client certificate: `..` sets them from the run's settings).
    pub fn bare(error: ProbeError, target: Target, method: Method, timeout: Duration) -> Self {
        PreflightFailed {
            error,
            target,
            timeout,
            tls_max: None,
            client_cert: false,
            method,
            addr: None,
            tls: None,
            dns: None,
            tcp: None,
            handshake: None,
            unanswered: false,
            cert_names: None,
            speaks_tls: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_its_kind() {
        let refused = ProbeError {
            kind: ErrorKind::ConnRefused,
            text: "Failed to connect".into(),
        };
        let url = Target::parse("https://example.test/").unwrap();
        let failed = PreflightFailed::bare(refused, url, Method::Head, Duration::from_secs(5));
        let preflight = EndReason::PreflightFailed(Box::new(failed));
        assert_eq!(preflight.kind(), ErrorKind::ConnRefused);
        assert_eq!(EndReason::Interrupted.kind(), ErrorKind::Canceled);
        let lookup = EndReason::AddressLookupFailed {
            host: "example.test".into(),
            error: AddressLookupError::NoAddress,
        };
        assert_eq!(lookup.kind(), ErrorKind::DnsFail);
        let none = |first| EndReason::NoVariantCanRun {
            axis: Axis::Tls,
            first,
        };
        assert_eq!(
            none(Some(Box::new(preflight))).kind(),
            ErrorKind::ConnRefused
        );
        assert_eq!(none(None).kind(), ErrorKind::Error);
        assert_eq!(
            EndReason::AnsweredOver(Some(Proto::Http11)).kind(),
            ErrorKind::Error
        );
    }

    #[test]
    fn only_the_three_signals_are_signals() {
        let by: Vec<StoppedBy> = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
            .map(StoppedBy::signal)
            .into();
        assert_eq!(
            by,
            [
                StoppedBy::Interrupt,
                StoppedBy::Terminate,
                StoppedBy::HangUp
            ]
        );
        let signals: Vec<StoppedBy> = StoppedBy::ALL
            .into_iter()
            .filter(|s| s.is_signal())
            .collect();
        assert_eq!(signals, by);
    }

    #[test]
    fn every_way_the_rounds_stop_is_in_the_schema() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schema/tlsping.schema.json")).unwrap();
        let listed = &schema["properties"]["ending"]["properties"]["stopped_by"]["enum"];
        let mut want: Vec<serde_json::Value> =
            StoppedBy::ALL.iter().map(|s| s.as_str().into()).collect();
        want.push(serde_json::Value::Null);
        assert_eq!(listed, &serde_json::Value::Array(want));
    }
}

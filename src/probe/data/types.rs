//! The shared data types: everything `stats` and `render` read comes from here.

use std::net::SocketAddr;
use std::time::Duration;

use super::axes::Axis;
pub use super::ocsp::OcspStaple;
pub use super::server_timing::ServerTiming;
use super::stages::{whole_us, Stage, Stages};
use super::valve::Valve;
use crate::text::micros;

/// Which kind of connection a probe measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A brand-new connection: DNS, TCP, TLS and the request.
    Cold,
    /// The request on a connection kept open from earlier rounds.
    Warm,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Cold => "cold",
            Mode::Warm => "warm",
        }
    }
}

/// The HTTP protocol a response came back on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Http10,
    Http11,
    H2,
    H3,
}

impl Proto {
    /// The spelling used in every output (`h2`, `http/1.1`), which is also the ALPN id.
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Http10 => "http/1.0",
            Proto::Http11 => "http/1.1",
            Proto::H2 => "h2",
            Proto::H3 => "h3",
        }
    }

    pub fn from_alpn(id: &[u8]) -> Option<Proto> {
        match id {
            b"h2" => Some(Proto::H2),
            b"http/1.1" => Some(Proto::Http11),
            b"http/1.0" => Some(Proto::Http10),
            b"h3" => Some(Proto::H3),
            _ => None,
        }
    }
}

/// Why a probe got no HTTP response. The slug is part of the JSON/CSV schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Timeout,
    ConnRefused,
    ConnReset,
    DnsFail,
    Unreachable,
    CertExpired,
    CertName,
    CertUnknownCa,
    CertInvalid,
    TlsError,
    ConnClosed,
    BodyError,
    Canceled,
    Error,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::Timeout,
        ErrorKind::ConnRefused,
        ErrorKind::ConnReset,
        ErrorKind::DnsFail,
        ErrorKind::Unreachable,
        ErrorKind::CertExpired,
        ErrorKind::CertName,
        ErrorKind::CertUnknownCa,
        ErrorKind::CertInvalid,
        ErrorKind::TlsError,
        ErrorKind::ConnClosed,
        ErrorKind::BodyError,
        ErrorKind::Canceled,
        ErrorKind::Error,
    ];

    /// Stable machine-readable name (`error_kind`).
    pub fn slug(self) -> &'static str {
        self.row().0
    }

    /// What the kind means, in one line (the man page's FAILURE KINDS).
    pub fn about(self) -> &'static str {
        self.row().1
    }

    /// Each kind's slug and meaning: one row per kind, so a new kind cannot
    /// come without both.
    const fn row(self) -> (&'static str, &'static str) {
        match self {
            ErrorKind::Timeout => ("timeout", "the probe did not finish within --timeout"),
            ErrorKind::ConnRefused => (
                "conn_refused",
                "the TCP connection was refused (nothing listens on the port) or could not be made",
            ),
            ErrorKind::ConnReset => ("conn_reset", "the peer reset the connection"),
            ErrorKind::DnsFail => ("dns_fail", "the host name could not be resolved"),
            ErrorKind::Unreachable => (
                "unreachable",
                "no route to the network or host of the address",
            ),
            ErrorKind::CertExpired => (
                "cert_expired",
                "the server's certificate is past its notAfter date",
            ),
            ErrorKind::CertName => (
                "cert_name",
                "the server's certificate does not name the host asked for",
            ),
            ErrorKind::CertUnknownCa => (
                "cert_unknown_ca",
                "the certificate chain does not lead to a trusted CA (self-signed, \
                 missing intermediate, private CA: see --cacert)",
            ),
            ErrorKind::CertInvalid => (
                "cert_invalid",
                "the certificate failed verification another way (not yet valid, \
                 bad signature, unusable key)",
            ),
            ErrorKind::TlsError => (
                "tls_error",
                "the TLS handshake failed (no common version, group or cipher, \
                 an alert from the server)",
            ),
            ErrorKind::ConnClosed => (
                "conn_closed",
                "the peer closed the connection before a whole response came",
            ),
            ErrorKind::BodyError => (
                "body_error",
                "a response began, but its body could not be read whole",
            ),
            ErrorKind::Canceled => ("canceled", "Ctrl+C or a signal stopped the probe"),
            ErrorKind::Error => (
                "error",
                "any other failure; the error field has libcurl's words",
            ),
        }
    }
}

/// A failed probe: the stable kind and libcurl's own words.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeError {
    pub kind: ErrorKind,
    pub text: String,
}

/// libcurl's cumulative timers for one transfer, in microseconds from the start
/// of that transfer, exactly as `curl_easy_getinfo(*_TIME_T)` reports them.
/// libcurl leaves a timer at 0 when the transfer never reached that point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CurlTimers {
    // u32 microseconds hold 71 minutes, above the longest timeout a probe may have.
    pub namelookup_us: u32,
    pub connect_us: u32,
    pub appconnect_us: u32,
    pub pretransfer_us: u32,
    pub posttransfer_us: u32,
    pub starttransfer_us: u32,
    pub total_us: u32,
    /// New connections libcurl opened for this transfer (`CURLINFO_NUM_CONNECTS`).
    pub num_connects: u32,
}

/// What the live TLS connection said about itself, read while the transfer ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsFacts {
    /// `TLSv1.3` as OpenSSL spells it; rendered as `TLS1.3`.
    pub version: &'static str,
    pub alpn: Option<Proto>,
    /// The handshake reused a session (ticket or id) instead of a full exchange.
    pub resumed: bool,
    /// Certificates the server sent (leaf included); 0 on a resumed handshake.
    pub chain_len: Option<u8>,
    pub cipher: &'static str,
    /// Key-exchange group, e.g. `X25519MLKEM768` (a post-quantum hybrid).
    pub group: Option<&'static str>,
    /// Whole days until the server certificate's notAfter, cut toward zero:
    /// negative from a full day past it, and 0 on either side of it.
    pub cert_days_left: Option<i32>,
    /// The notAfter is past (what `cert_days_left` 0 cannot say).
    pub cert_expired: bool,
    /// The leaf's notAfter as a Unix time in seconds (`--openmetrics`).
    pub cert_not_after: Option<i64>,
    /// What the server stapled (OCSP); `None` on a resumed handshake, which
    /// carries no certificate and so no staple.
    pub ocsp: Option<OcspStaple>,
    /// The TLS 1.3 session tickets the transfer read: the most early data
    /// one of them allows (0: none allows any); `None` when none was read.
    pub ticket_early_data: Option<u32>,
}

impl TlsFacts {
    /// `TLSv1.3` → `TLS1.3`, the spelling of the Go tlsping (the tool this one follows).
    pub fn version_label(&self) -> String {
        tls_version_label(self.version)
    }
}

pub fn tls_version_label(openssl_name: &str) -> String {
    openssl_name.replacen("TLSv", "TLS", 1)
}

/// The kernel's account of a probe's TCP connection (`TCP_INFO`), read
/// while the connection was still open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFacts {
    /// Smoothed round-trip time, as the kernel estimates it.
    pub rtt_us: u32,
    /// The lowest round-trip time the kernel saw on this connection.
    pub min_rtt_us: Option<u32>,
    /// Segments retransmitted during this probe (on a reused connection,
    /// only those since the previous probe read it).
    pub retrans: u32,
}

/// A round trip of a handshake beyond the first, named (`tls_extra`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsExtra {
    /// The server answered our key shares with a HelloRetryRequest for
    /// `group` (a TLS code point; `None` when unreadable); `sent` are the
    /// groups we had sent shares for, in order.
    HelloRetry { group: Option<u16>, sent: Vec<u16> },
    /// TLS 1.2's own second round trip.
    Tls12,
    /// The server's flight of `flight_bytes` came in two bursts, the second
    /// after the congestion window opened.
    InitialWindow { flight_bytes: u32 },
    /// The server wrote the first `first_bytes` of a flight (less than a
    /// segment) on their own, and its TCP held the rest until our ACK of
    /// them came back (Nagle's algorithm); `ack_delay`, what our kernel
    /// delayed that ACK by, where the wait shows it (the round trip's
    /// span less one; in the advice, not in the outputs' fields).
    SplitFlight {
        first_bytes: u32,
        ack_delay: Duration,
    },
    /// A segment was lost and sent again: the wait that ended with it took
    /// `recovery` (a round trip of it counted, the rest is transmission).
    Loss { recovery: Duration },
}

impl TlsExtra {
    /// The kind's name in every output.
    pub fn kind(&self) -> &'static str {
        match self {
            TlsExtra::HelloRetry { .. } => "hello_retry",
            TlsExtra::Tls12 => "tls12",
            TlsExtra::InitialWindow { .. } => "initial_window",
            TlsExtra::SplitFlight { .. } => "split_flight",
            TlsExtra::Loss { .. } => "loss",
        }
    }

    /// Every kind, in the order the summaries count them.
    pub const KINDS: [&'static str; 5] = [
        "hello_retry",
        "tls12",
        "initial_window",
        "split_flight",
        "loss",
    ];
}

/// One certificate the server sent, as the chain advice names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertSize {
    /// Its place in the chain (0: the leaf).
    pub index: u8,
    /// Its DER size.
    pub bytes: u32,
    /// Its key (`RSA-4096`, `EC P-256`...), where it is one we name.
    pub key: Option<String>,
}

/// Why a handshake cost what it did, for a probe that made one: its round
/// trips, each one beyond the first named, the server's own time and what
/// the server sent. `None` in a field where it could not be told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandshakeAnatomy {
    /// Waits on the server inside `tls` (`tls_round_trips`).
    pub round_trips: Option<u8>,
    /// Every round trip beyond the first, named; `None` with `round_trips`.
    pub extra: Option<Vec<TlsExtra>>,
    /// The server's own time in the handshake: its replies to our flights
    /// and its pauses inside its own (`tls` less the client's set-up and
    /// finish, the round trips at the kernel's min RTT and the
    /// transmission). With `transmission` and the rest, it adds up to `tls`.
    pub server_handshake: Option<Duration>,
    /// The time the server's flights took to arrive after their first
    /// bytes, less the round trips counted inside them and the server's own
    /// pauses: pacing, a slow link, the part of a loss's recovery beyond its
    /// round trip, an ACK our kernel delayed.
    pub transmission: Option<Duration>,
    /// The server's signature scheme (a TLS code point).
    pub sig_alg: Option<u16>,
    /// The leaf certificate's key, e.g. `RSA-4096`, `EC P-256`, `Ed25519`.
    pub server_key: Option<String>,
    /// The Certificate message, its header included.
    pub cert_bytes: Option<u32>,
    /// Every server record up to and including its Finished.
    pub server_flight_bytes: Option<u32>,
    /// The certificates the server sent, their sizes and keys: only where
    /// a flight crossed the initial window (for the advice that names them).
    pub certs: Vec<CertSize>,
    /// A handshake message did not add up (a length past its bytes): the
    /// facts it would have given are `None`. No output field shows it: the
    /// run's warnings say in how many cold probes it happened.
    pub unreadable: bool,
}

/// One probe's result. Stages are derived from the raw timers so that the
/// numbers we print and the numbers libcurl reported can never drift apart.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub round: u32,
    pub mode: Mode,
    /// When the probe started, on the monotonic clock, from the start of the
    /// rounds (`t_ms`); `None` outside the rounds (the preflight).
    pub t: Option<Duration>,
    /// When the probe started on the wall clock (`at`), read just before
    /// the probe, outside every timed interval.
    pub at: Option<std::time::SystemTime>,
    /// With `--compare`: the index of this probe's variant in
    /// `RunInfo::compare` (0 without a comparison).
    pub variant: u8,
    pub warmup: bool,
    /// Our own timed lookup (cold probes with a pinned address); `None` otherwise.
    pub own_dns: Option<Duration>,
    /// Wall clock for the whole probe, taken around the work by us; `None` if
    /// no clock ran (the handle could not even be set up). A probe that failed
    /// in our own DNS lookup has the time until that failure.
    pub wall_total: Option<Duration>,
    pub timers: CurlTimers,
    /// HTTP status, 0 when no response arrived.
    pub status: u16,
    pub proto: Option<Proto>,
    /// Present only when this probe performed a TLS handshake.
    pub tls: Option<TlsFacts>,
    pub retries: u8,
    pub bytes: u32,
    pub addr: Option<SocketAddr>,
    pub body_overflow: bool,
    /// What a `Retry-After` header said, when the response carried one.
    pub retry_after: Option<super::retry_after::RetryAfter>,
    /// `true` for an https URL: a missing TLS stage is then "not reached", not "not applicable".
    pub https: bool,
    pub error: Option<Box<ProbeError>>,
    /// Cold probes that made a handshake: from TCP connected (libcurl's
    /// connect timer) to our ClientHello handed to the socket, i.e. the
    /// client's own work at the start of the `tls` stage.
    pub tls_setup: Option<Duration>,
    /// Cold probes that made a handshake: from the server's last handshake
    /// flight starting to arrive to the handshake done (libcurl's appconnect
    /// timer), i.e. our own reading of the server's reply.
    pub tls_finish: Option<Duration>,
    /// From the request's last record written to the first record of its
    /// response come in, on our own stamps (TLS records, not libcurl's
    /// timers): a round trip and the server's time after the request.
    pub reply_wait: Option<Duration>,
    /// From the request's last record written to the server's first data
    /// after it come in, where the response came in a later read behind a
    /// session ticket (one the server wrote with that first data, which its
    /// TCP may have held back with the response for our ACK: `Stages::held`).
    pub reply_first: Option<Duration>,
    /// The kernel's view of the connection, when one was open.
    pub tcp_info: Option<TcpFacts>,
    /// When libcurl opened the connection's (first) socket, on libcurl's
    /// own time line (the origin of every `CurlTimers` value); `None` when
    /// no socket was opened or the moment could not be placed.
    pub socket_open: Option<Duration>,
    /// What the server said it spent (`Server-Timing`), in header order.
    pub server_timing: Box<[ServerTiming]>,
    /// With `--early-data`: what became of the request as TLS early data.
    /// `None` when the flag is off.
    pub early_data: Option<super::config::EarlyData>,
    /// libcurl's further answers about the transfer, only when the output
    /// asks for them (`Config::capture`) and only until it has shown them.
    pub transfer: Option<Box<super::transfer::TransferFacts>>,
    /// Probes that made a handshake: its round trips and the server's part.
    pub anatomy: Option<Box<HandshakeAnatomy>>,
}

fn diff(later: u32, earlier: u32) -> Option<u32> {
    (later > 0).then(|| later.saturating_sub(earlier))
}

impl Sample {
    /// A probe of `mode` in `round` before anything is known about it: no
    /// timers, no response, no error. Every other constructor starts here.
    pub fn new(round: u32, mode: Mode, https: bool) -> Sample {
        Sample {
            round,
            mode,
            t: None,
            at: None,
            variant: 0,
            warmup: false,
            own_dns: None,
            wall_total: None,
            timers: CurlTimers::default(),
            status: 0,
            proto: None,
            tls: None,
            retries: 0,
            bytes: 0,
            addr: None,
            body_overflow: false,
            retry_after: None,
            https,
            error: None,
            tls_setup: None,
            tls_finish: None,
            reply_wait: None,
            reply_first: None,
            tcp_info: None,
            socket_open: None,
            server_timing: Box::default(),
            early_data: None,
            transfer: None,
            anatomy: None,
        }
    }

    /// A safety valve this answer trips, which stops the run: the server
    /// asked clients to slow down or back off.
    pub fn valve(&self) -> Option<Valve> {
        Valve::tripped_by(self.status, self.retry_after)
    }

    /// An HTTP response arrived (any status).
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.status > 0
    }

    /// The warm probe ran on a connection that already existed.
    pub fn reused(&self) -> bool {
        self.wall_total.is_some()
            && self.timers.num_connects == 0
            && (self.timers.pretransfer_us > 0 || self.status > 0)
    }

    /// The probe had to open a connection. For cold that is the point; for warm
    /// it is worth reporting (the server did not keep the connection).
    pub fn new_conn(&self) -> bool {
        self.mode == Mode::Warm && self.timers.num_connects > 0
    }

    /// Every stage of this probe in whole microseconds: the one place the
    /// rules below live. Each accessor (`dns`, `tcp`, ...) reads it, and so
    /// do the statistics (`stats::Record` keeps exactly these values).
    ///
    /// - `dns` (cold): our own lookup when we made one; else libcurl's, up
    ///   to where its connection began (`connect_from_us`), so `dns` and
    ///   `tcp` never share time and a cold probe's stages add up.
    /// - `tcp` (cold): from there to connected, which is `curl -w`'s
    ///   `time_connect − time_namelookup` unless libcurl's lookup went on
    ///   beside the connect (`dns_overlap`).
    /// - `tls` (cold, https): `appconnect − connect`.
    /// - `wait` (warm): until the request could be written; on a re-dial it
    ///   swallows the connect and the handshake.
    /// - `srv`: from the request fully sent to the first response byte.
    ///   libcurl's posttransfer timer marks "request sent"; pretransfer would
    ///   also count the time spent writing the request, which is ours.
    /// - `total`: our own wall clock around the probe.
    /// - `tls_setup`, `tls_finish`: our own stamps (see the fields), never
    ///   more than `tls` leaves for them.
    /// - `server`: the server's time after the request, `reply_wait` less
    ///   the kernel's min RTT, never below 0.
    pub fn stages(&self) -> Stages {
        let t = &self.timers;
        let cold = self.mode == Mode::Cold;
        let from = self.connect_from_us();
        let tls = (cold && self.https)
            .then(|| diff(t.appconnect_us, t.connect_us))
            .flatten();
        let tls_setup = tls.and_then(|tls| self.tls_setup.map(|d| whole_us(d).min(tls)));
        let tls_finish = tls
            .zip(tls_setup)
            .and_then(|(tls, setup)| self.tls_finish.map(|d| whole_us(d).min(tls - setup)));
        let srv = (t.starttransfer_us > 0 && self.status > 0).then(|| {
            let sent = if t.posttransfer_us > 0 {
                t.posttransfer_us
            } else {
                t.pretransfer_us
            };
            t.starttransfer_us.saturating_sub(sent)
        });
        let min_rtt = self
            .tcp_info
            .and_then(|k| k.min_rtt_us)
            .map(|v| v.min(u32::MAX - 1));
        let (server, held) = match (srv.and(self.reply_wait), min_rtt) {
            (Some(wait), Some(r)) => {
                super::stages::reply_parts(whole_us(wait), self.reply_first.map(whole_us), r)
            }
            _ => (None, None),
        };
        Stages {
            dns: cold
                .then(|| self.own_dns.map(whole_us).or((from > 0).then_some(from)))
                .flatten(),
            tcp: cold.then(|| diff(t.connect_us, from)).flatten(),
            tls,
            wait: (!cold && (t.pretransfer_us > 0 || self.status > 0)).then_some(t.pretransfer_us),
            srv,
            total: self.wall_total.map(whole_us),
            tls_setup,
            tls_finish,
            rtt: self.tcp_info.map(|k| k.rtt_us.min(u32::MAX - 1)),
            min_rtt,
            server,
            held,
        }
    }

    /// Where libcurl's connection began on its time line: the end of its
    /// lookup, or the socket's opening when that came first (the lookup
    /// went on beside the connect), or came with no lookup stamped at all
    /// (libcurl gave up on a late answer once connected).
    fn connect_from_us(&self) -> u32 {
        let lookup = self.timers.namelookup_us;
        match self.socket_open.map(whole_us) {
            Some(open) if lookup == 0 || open < lookup => open,
            _ => lookup,
        }
    }

    /// Cold probes where libcurl resolved the name itself (`--no-pin-ip`):
    /// how long its lookup went on after it had opened the connection's
    /// socket. libcurl connects on the first answer (A) when the second
    /// (AAAA) is late, and takes the late one while connecting: this much
    /// of the lookup ran beside `tcp` (and is in no stage but `tcp`).
    /// `None` without an overlap.
    pub fn dns_overlap(&self) -> Option<Duration> {
        if self.mode != Mode::Cold || self.own_dns.is_some() {
            return None;
        }
        let open = whole_us(self.socket_open?);
        (self.timers.namelookup_us > open).then(|| micros(self.timers.namelookup_us - open))
    }

    fn stage(&self, stage: Stage) -> Option<Duration> {
        self.stages().get(stage).map(micros)
    }

    pub fn dns(&self) -> Option<Duration> {
        self.stage(Stage::Dns)
    }

    pub fn tcp(&self) -> Option<Duration> {
        self.stage(Stage::Tcp)
    }

    pub fn tls(&self) -> Option<Duration> {
        self.stage(Stage::Tls)
    }

    pub fn wait(&self) -> Option<Duration> {
        self.stage(Stage::Wait)
    }

    pub fn srv(&self) -> Option<Duration> {
        self.stage(Stage::Srv)
    }

    pub fn total(&self) -> Option<Duration> {
        self.stage(Stage::Total)
    }

    /// What the stages leave unexplained: header writing, body reading, our call overhead.
    pub fn other(&self) -> Option<Duration> {
        self.stage(Stage::Other)
    }

    /// The client's own work inside `tls` before its ClientHello left.
    pub fn tls_setup(&self) -> Option<Duration> {
        self.stages().tls_setup.map(micros)
    }

    /// See `Stages::tls_after_setup`.
    pub fn tls_after_setup(&self) -> Option<Duration> {
        self.stages().tls_after_setup().map(micros)
    }

    /// The client's work on the server's last flight.
    pub fn tls_finish(&self) -> Option<Duration> {
        self.stages().tls_finish.map(micros)
    }

    /// See `Stages::tls_network_server`.
    pub fn tls_network_server(&self) -> Option<Duration> {
        self.stages().tls_network_server().map(micros)
    }

    /// The connection lost segments and recovered them during this probe,
    /// so its stages include a retransmission wait.
    pub fn retransmitted(&self) -> bool {
        self.tcp_info.is_some_and(|t| t.retrans > 0)
    }
}

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
    pub settings: super::config::RunSettings,
    pub libcurl_version: String,
    pub tls_library: String,
    /// The CPU's wake-up latency was held at 0 µs for the rounds
    /// (`WakeupPin`); when it was not, why not.
    pub cpu_wakeup_pinned: bool,
    pub cpu_wakeup_why_not: Option<String>,
    /// When the rounds started, on the wall clock (`run.started_at`); the
    /// zero point of every sample's `t`. `None` when no round ran.
    pub started_at: Option<std::time::SystemTime>,
    /// `--compare`: the axis, every variant and which of them could run.
    pub compare: Option<CompareInfo>,
    /// Why the run ended before round 1: the preflight failed, was refused
    /// by a safety valve, or negotiated another HTTP version than asked.
    pub preflight_error: Option<ProbeError>,
}

/// What the run reports about one variant (`run.compare` in JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct VariantInfo {
    pub label: String,
    pub value: String,
    /// Why it could not run at all (its preflight failed, or the server
    /// answered it in another way than the variant asks); `None` when it ran.
    pub unavailable: Option<ProbeError>,
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

#[cfg(test)]
#[path = "types_tests.rs"]
mod tests;

//! What a run is asked to do, already validated by the command line.

use std::time::Duration;

use super::target::Target;

/// Which probes run each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeChoice {
    Both,
    Cold,
    Warm,
}

impl ModeChoice {
    /// Every choice, in the order `--help` lists them (by `as_str`).
    pub const ALL: [ModeChoice; 3] = [ModeChoice::Both, ModeChoice::Cold, ModeChoice::Warm];

    pub fn as_str(self) -> &'static str {
        match self {
            ModeChoice::Both => "both",
            ModeChoice::Cold => "cold",
            ModeChoice::Warm => "warm",
        }
    }
}

/// The order of the two probes inside a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Odd rounds cold first, even rounds warm first.
    Alternate,
    ColdFirst,
    WarmFirst,
}

impl Order {
    /// Every order, in the order `--help` lists them (by `as_str`).
    pub const ALL: [Order; 3] = [Order::Alternate, Order::ColdFirst, Order::WarmFirst];

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Alternate => "alternate",
            Order::ColdFirst => "cold-first",
            Order::WarmFirst => "warm-first",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpVersion {
    /// h2 when the server offers it over TLS, else HTTP/1.1.
    Auto,
    V1_1,
    V2,
}

/// `--tls-max`: the highest TLS version offered (the lowest is always 1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsMax {
    V1_2,
    V1_3,
}

impl TlsMax {
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMax::V1_2 => "1.2",
            TlsMax::V1_3 => "1.3",
        }
    }

    /// The version as OpenSSL names it (`SSL_get_version`, `TlsFacts::version`).
    pub fn openssl_name(self) -> &'static str {
        match self {
            TlsMax::V1_2 => "TLSv1.2",
            TlsMax::V1_3 => "TLSv1.3",
        }
    }
}

/// Whether a cold probe's request went out as TLS 1.3 early data (0-RTT),
/// as libcurl saw the server answer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EarlyData {
    /// Sent with the ClientHello and accepted by the server.
    Accepted,
    /// Sent, and refused by the server: libcurl sent it again after the handshake.
    Rejected,
    /// Not sent: no resumable session with early data allowed, or a reused connection.
    NotSent,
}

impl EarlyData {
    pub fn as_str(self) -> &'static str {
        match self {
            EarlyData::Accepted => "accepted",
            EarlyData::Rejected => "rejected",
            EarlyData::NotSent => "not_sent",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpVersion {
    Any,
    V4,
    V6,
}

/// How the request is made, settled once by the preflight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    Head,
    /// GET with `Range: bytes=0-0`, after the server refused HEAD.
    RangedGet,
    Custom(String),
}

impl Method {
    pub fn label(&self) -> &str {
        match self {
            Method::Head => "HEAD",
            Method::RangedGet => "GET",
            Method::Custom(m) => m,
        }
    }
}

/// Something about the settings a person should know before the run
/// starts, noticed by the command line (`render::warnings` words it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingWarning {
    /// The interval asked for was below the floor and the floor is used.
    IntervalRaised { asked: Duration, floor: Duration },
    /// `--warmup` leaves no round for the statistics.
    WarmupCoversEveryRound { warmup: u32, count: u32 },
    /// `--no-pin-ip` with both modes: cold resolves anew every round while
    /// warm keeps its connection, so they may reach different servers.
    UnpinnedBothModes,
    /// A proxy is set in this environment variable, but the pinned address
    /// is dialed directly.
    ProxyBypassed { variable: &'static str },
    /// `--push`'s URL carries a password, which every local user can read
    /// in the process list.
    PushPasswordInUrl,
}

/// A PEM file named on the command line (`--cert`, `--key`), read once with
/// a size limit before the run: libcurl gets the bytes, so no handshake
/// reads the file again (no file I/O inside a `tls` stage) and what is used
/// is what was checked.
#[derive(Clone, PartialEq)]
pub struct PemFile {
    pub path: std::path::PathBuf,
    pub pem: std::sync::Arc<[u8]>,
}

impl std::fmt::Debug for PemFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} bytes)", self.path.display(), self.pem.len())
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub target: Target,
    /// What the run reports it was asked for (`run.*` in JSON, the header),
    /// one type that `RunInfo` carries whole.
    pub settings: RunSettings,
    /// `None` = HEAD with the ranged-GET fallback settled by the preflight.
    pub method: Option<String>,
    pub http_version: HttpVersion,
    pub cache_bust: bool,
    pub pin_ip: bool,
    pub ip_version: IpVersion,
    pub insecure: bool,
    /// Extra request headers, each already checked to be `Name: value`.
    pub headers: Vec<String>,
    /// Trust anchors from this PEM file instead of the system's.
    pub ca_file: Option<std::path::PathBuf>,
    /// `--key`: the private key of `settings.client_cert` when it is not
    /// in the certificate's file.
    pub client_key: Option<PemFile>,
    /// What the output reads of each transfer beyond the sample (`--write-out`).
    pub capture: super::transfer::Capture,
}

impl Config {
    /// The target's address comes from the command line: a `--resolve` or
    /// `--connect-to` entry for its host and port, so there is no lookup of
    /// ours to time. (An entry for another host changes nothing here.)
    pub fn dns_overridden(&self) -> bool {
        let port = self.target.port.to_string();
        let url_host = self.target.url_host();
        // `--connect-to` leaves HOST or PORT empty to match any.
        let for_target = |entry: &String, any_ok: bool| {
            entry_head(entry).is_some_and(|(h, p, _)| {
                let host_ok = (any_ok && h.is_empty())
                    || h.eq_ignore_ascii_case(&self.target.host)
                    || h.eq_ignore_ascii_case(&url_host);
                host_ok && ((any_ok && p.is_empty()) || p == port)
            })
        };
        self.settings.resolve.iter().any(|e| for_target(e, false))
            || self.settings.connect_to.iter().any(|e| for_target(e, true))
    }
}

/// The settings a run reports as given: what `Config` holds of them and
/// `RunInfo` carries whole (`run.*` in JSON, `render::run_fields`), so a
/// new one is a field here, a row there, and its flag.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    /// Rounds to run; 0 means until interrupted.
    pub count: u32,
    pub interval: Duration,
    pub timeout: Duration,
    pub mode: ModeChoice,
    pub order: Order,
    pub warmup: u32,
    /// Share TLS sessions across cold probes (resumption from round 2).
    pub resume: bool,
    /// `--calibrate`: measure tlsping's own in-process server on 127.0.0.1.
    pub calibrate: bool,
    /// `--tls-max`: `None` offers what the TLS library offers (1.3).
    pub tls_max: Option<TlsMax>,
    /// `--curves`: the key-exchange groups offered, OpenSSL names joined by
    /// `:`; the first gets a key share in the ClientHello.
    pub curves: Option<String>,
    /// `--resolve` entries (`HOST:PORT:ADDR[,ADDR]`, curl's syntax).
    pub resolve: Vec<String>,
    /// `--connect-to` entries (`HOST:PORT:CONNECT-HOST:CONNECT-PORT`).
    pub connect_to: Vec<String>,
    /// `--cert`: a client certificate (PEM), with its key unless `--key`.
    pub client_cert: Option<PemFile>,
    /// `--early-data`: resumed cold probes send the request as TLS 1.3 early data.
    pub early_data: bool,
}

impl Default for RunSettings {
    /// The documented defaults.
    fn default() -> RunSettings {
        RunSettings {
            count: 10,
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            mode: ModeChoice::Both,
            order: Order::Alternate,
            warmup: 1,
            resume: true,
            calibrate: false,
            tls_max: None,
            curves: None,
            resolve: Vec::new(),
            connect_to: Vec::new(),
            client_cert: None,
            early_data: false,
        }
    }
}

/// The HOST and PORT a `--resolve` or `--connect-to` entry starts with
/// (curl's `HOST:PORT:...`; a leading `+` dropped, a bracketed IPv6 host
/// kept whole), and the rest after them; `None` without both colons.
pub fn entry_head(entry: &str) -> Option<(&str, &str, &str)> {
    let entry = entry.strip_prefix('+').unwrap_or(entry);
    let host_end = match entry.strip_prefix('[') {
        Some(inner) => inner.find(']')? + 2,
        None => entry.find(':')?,
    };
    let (host, rest) = entry.split_at(host_end);
    let (port, rest) = rest.strip_prefix(':')?.split_once(':')?;
    Some((host, port, rest))
}

impl Config {
    /// A config with the documented defaults, for `target`.
    pub fn new(target: Target) -> Config {
        Config {
            target,
            settings: RunSettings::default(),
            method: None,
            http_version: HttpVersion::Auto,
            cache_bust: false,
            pin_ip: true,
            ip_version: IpVersion::Any,
            insecure: false,
            headers: Vec::new(),
            ca_file: None,
            client_key: None,
            capture: super::transfer::Capture::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_heads_split_like_curl() {
        assert_eq!(
            entry_head("+example.test:443:192.0.2.7,192.0.2.8"),
            Some(("example.test", "443", "192.0.2.7,192.0.2.8"))
        );
        assert_eq!(
            entry_head("[2001:db8::1]:443:[::1]:8443"),
            Some(("[2001:db8::1]", "443", "[::1]:8443"))
        );
        assert_eq!(
            entry_head("::127.0.0.1:9000"),
            Some(("", "", "127.0.0.1:9000"))
        );
        assert_eq!(entry_head("example.test:443"), None);
        assert_eq!(entry_head("[2001:db8::1:443:x"), None);
    }

    #[test]
    fn only_entries_for_the_target_replace_our_lookup() {
        let mut c = Config::new(Target::parse("https://example.test:8443/").unwrap());
        assert!(!c.dns_overridden());
        c.settings.resolve = vec!["other.test:8443:127.0.0.1".into()];
        assert!(!c.dns_overridden());
        c.settings.resolve = vec!["example.test:443:127.0.0.1".into()];
        assert!(!c.dns_overridden());
        c.settings.resolve = vec!["+EXAMPLE.test:8443:127.0.0.1".into()];
        assert!(c.dns_overridden());
        c.settings.resolve.clear();
        c.settings.connect_to = vec!["::127.0.0.1:9000".into()];
        assert!(c.dns_overridden(), "an empty host and port match any");
        c.settings.connect_to = vec!["other.test::127.0.0.1:9000".into()];
        assert!(!c.dns_overridden());
    }
}

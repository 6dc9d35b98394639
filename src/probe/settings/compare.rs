//! `--compare`: several ways of connecting measured in the same rounds.
//! An axis names what differs (IP family, address, TLS version, key-exchange
//! group, HTTP version, resumption, early data, the target); each value is a variant,
//! a copy of the run's configuration with that one thing changed.

use std::net::{IpAddr, ToSocketAddrs};

pub use super::axes::ComparedValue;
use super::axes::{Axis, AxisValue};
use super::config::Config;

/// Most variants one run compares (`addr` stops there).
pub const MAX_VARIANTS: usize = 8;

/// `--compare AXIS[=A,B,...]` as checked by the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compare {
    pub axis: Axis,
    /// The values in the order given (the first is the baseline); empty for
    /// `addr` without a list, whose variants come from a lookup.
    pub values: Vec<ComparedValue>,
}

impl Compare {
    /// The variants are the addresses the target's name resolves to
    /// (`addresses_of`), found when the run starts.
    pub fn looks_up_addresses(&self) -> bool {
        self.values.is_empty()
    }

    /// Some variant is an https:// target of its own (`--compare target=`).
    pub fn has_https_target(&self) -> bool {
        self.values
            .iter()
            .any(|v| matches!(&v.value, AxisValue::Target(t) if t.https))
    }
}

/// One variant: its label in tables and JSON, and its configuration.
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: String,
    /// The axis value as given (`1.2`, `X25519`, `192.0.2.7`).
    pub value: String,
    pub config: Config,
}

/// Why `addresses_of` found nothing to compare.
#[derive(Debug)]
pub enum AddressLookupError {
    /// The resolver failed.
    Failed(std::io::Error),
    /// It answered with no address at all.
    NoAddress,
    /// It gave no answer within the run's timeout.
    TimedOut(std::time::Duration),
    /// A signal ended the run while it was looking.
    Interrupted,
}

/// How often a waiting lookup looks at the interrupt flag.
const LOOKUP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The addresses libcurl gives a name it never asks the resolver about:
/// `localhost` and every name under `.localhost` (RFC 6761) are ::1, then
/// 127.0.0.1, whatever the system's hosts file says. A run to such a name
/// dials these, so these are what `--compare addr` compares.
fn libcurls_own_addresses(host: &str) -> Option<Vec<IpAddr>> {
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost")).then(|| {
        vec![
            IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        ]
    })
}

/// The addresses `host` resolves to, in the resolver's order, without
/// repeats, at most `MAX_VARIANTS`; looked up once, before anything is
/// timed; for the names libcurl resolves itself, its own answer
/// (`libcurls_own_addresses`). The system resolver runs on a thread of its own, so the wait for
/// it ends at `timeout` or at the first signal (`cancel`); a lookup given
/// up on finishes on its own, its answer dropped.
pub fn addresses_of(
    host: &str,
    port: u16,
    timeout: std::time::Duration,
    cancel: &super::cancel::Cancel,
) -> Result<Vec<IpAddr>, AddressLookupError> {
    if cancel.is_canceled() {
        return Err(AddressLookupError::Interrupted);
    }
    if let Some(own) = libcurls_own_addresses(host) {
        return Ok(own);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let host = host.to_string();
    std::thread::spawn(move || {
        let _ = tx.send((host.as_str(), port).to_socket_addrs());
    });
    let until = std::time::Instant::now() + timeout;
    let found = loop {
        if cancel.is_canceled() {
            return Err(AddressLookupError::Interrupted);
        }
        let now = std::time::Instant::now();
        if now >= until {
            return Err(AddressLookupError::TimedOut(timeout));
        }
        match rx.recv_timeout(LOOKUP_POLL.min(until - now)) {
            Ok(answer) => break answer.map_err(AddressLookupError::Failed)?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(AddressLookupError::NoAddress)
            }
        }
    };
    let mut out: Vec<IpAddr> = Vec::new();
    for a in found {
        if !out.contains(&a.ip()) {
            out.push(a.ip());
        }
    }
    if out.is_empty() {
        return Err(AddressLookupError::NoAddress);
    }
    out.truncate(MAX_VARIANTS);
    Ok(out)
}

/// The variants of `cmp` over the base configuration `cfg`. `addrs` are the
/// addresses for an `addr` comparison without a list.
pub fn variants(cfg: &Config, cmp: &Compare, addrs: &[IpAddr]) -> Vec<Variant> {
    let spec = cmp.axis.spec();
    let looked_up: Vec<ComparedValue> = addrs
        .iter()
        .map(|a| ComparedValue {
            text: a.to_string(),
            value: AxisValue::Addr(*a),
        })
        .collect();
    let values = if cmp.looks_up_addresses() {
        &looked_up
    } else {
        &cmp.values
    };
    let labels = spec.labels.of(values);
    values
        .iter()
        .zip(labels)
        .map(|(v, label)| {
            let mut config = cfg.clone();
            (spec.apply)(&mut config, &v.value);
            Variant {
                label,
                value: v.text.clone(),
                config,
            }
        })
        .collect()
}

/// The order of the variants in round `round` (1-based): rotated by one
/// each round, so over k rounds every variant runs first once.
pub fn variant_order(count: usize, round: u32) -> Vec<usize> {
    if count == 0 {
        return Vec::new();
    }
    let first = (round.saturating_sub(1) as usize) % count;
    (0..count).map(|i| (first + i) % count).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_lookup_ends_at_a_signal_and_at_its_timeout() {
        let canceled = crate::probe::Cancel::new();
        canceled.cancel();
        let started = std::time::Instant::now();
        let e = addresses_of(
            "localhost",
            443,
            std::time::Duration::from_secs(30),
            &canceled,
        );
        assert!(matches!(e, Err(AddressLookupError::Interrupted)), "{e:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let found = addresses_of(
            "127.0.0.1",
            443,
            std::time::Duration::from_secs(5),
            &crate::probe::Cancel::new(),
        )
        .unwrap();
        assert_eq!(found, ["127.0.0.1".parse::<IpAddr>().unwrap()]);
        // The names libcurl resolves itself, as it dials them.
        for name in ["localhost", "LocalHost.", "api.localhost"] {
            let found = addresses_of(
                name,
                443,
                std::time::Duration::from_secs(5),
                &Default::default(),
            );
            assert_eq!(
                found.unwrap(),
                [
                    "::1".parse::<IpAddr>().unwrap(),
                    "127.0.0.1".parse().unwrap()
                ],
                "{name}"
            );
        }
    }
    use crate::probe::TlsMax;

    #[test]
    fn rotation_puts_every_variant_first_equally_often() {
        for k in 1..=MAX_VARIANTS {
            let mut firsts = vec![0; k];
            for round in 1..=(3 * k as u32) {
                let order = variant_order(k, round);
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..k).collect::<Vec<_>>(), "a permutation");
                firsts[order[0]] += 1;
            }
            assert!(firsts.iter().all(|&n| n == 3), "{k}: {firsts:?}");
        }
    }

    #[test]
    fn each_variant_changes_only_its_axis() {
        let cfg = Config::new(crate::probe::Target::parse("https://example.test:8443/x").unwrap());
        let value = |text: &str, max| ComparedValue {
            text: text.into(),
            value: AxisValue::Tls(max),
        };
        let tls = variants(
            &cfg,
            &Compare {
                axis: Axis::Tls,
                values: vec![value("1.2", TlsMax::V1_2), value("1.3", TlsMax::V1_3)],
            },
            &[],
        );
        assert_eq!(tls[0].label, "TLS1.2");
        assert_eq!(tls[0].config.settings.tls_max, Some(TlsMax::V1_2));
        assert_eq!(tls[1].config.settings.tls_max, Some(TlsMax::V1_3));
        assert_eq!(tls[1].config.target, cfg.target);
        let addr = variants(
            &cfg,
            &Compare {
                axis: Axis::Addr,
                values: Vec::new(),
            },
            &["127.0.0.2".parse().unwrap(), "::1".parse().unwrap()],
        );
        assert_eq!(
            addr[0].config.settings.resolve,
            ["example.test:8443:127.0.0.2"]
        );
        assert_eq!(addr[1].config.settings.resolve, ["example.test:8443:[::1]"]);
        assert_eq!(addr[1].label, "::1");
    }
}

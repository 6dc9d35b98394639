//! The flags that shape one connection: the TLS version ceiling, the
//! key-exchange groups, where the host's address comes from, a client
//! certificate and TLS early data. Checked here, before anything is dialed.

use std::path::PathBuf;

use crate::probe::{entry_head, Config, ModeChoice, PemFile, TlsMax};

use super::UsageError;

/// `--tls-max`: `1.2` or `1.3`.
/// What `--tls-max` takes.
pub const TLS_MAX_VALUES: [&str; 2] = ["1.2", "1.3"];

pub fn parse_tls_max(v: &str) -> Result<TlsMax, String> {
    match v {
        "1.2" => Ok(TlsMax::V1_2),
        "1.3" => Ok(TlsMax::V1_3),
        "1.0" | "1.1" | "1" => Err(format!(
            "--tls-max {v}: the lowest version tlsping offers is TLS 1.2"
        )),
        other => Err(format!(
            "--tls-max '{other}' is not one of {}",
            TLS_MAX_VALUES.join(", ")
        )),
    }
}

/// `--curves X25519,P-256` (or `:` between names): the groups as one
/// OpenSSL list, checked by the TLS library compiled in, so a name it does
/// not know is a usage error rather than a handshake failure on every probe.
pub fn parse_curves(v: &str) -> Result<String, UsageError> {
    let names: Vec<&str> = v
        .split([',', ':'])
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err(UsageError("--curves needs at least one group name".into()));
    }
    let names: Vec<&str> = names.into_iter().map(canonical_group).collect();
    let list = names.join(":");
    let mut ctx = openssl::ssl::SslContextBuilder::new(openssl::ssl::SslMethod::tls_client())
        .map_err(|e| UsageError(format!("--curves: {e}")))?;
    for name in &names {
        if ctx.set_groups_list(name).is_err() {
            return Err(UsageError(format!(
                "--curves: '{name}' is not a key-exchange group this build's OpenSSL knows \
                 (try X25519, P-256, P-384, X25519MLKEM768)"
            )));
        }
    }
    Ok(list)
}

/// Group names as OpenSSL spells them, so `run.curves` reads the same
/// however the user typed them (OpenSSL itself matches names in any case);
/// the SEC names of the NIST curves then become `P-256`, `P-384`, `P-521`.
const GROUP_NAMES: &[&str] = &[
    "X25519",
    "X448",
    "P-256",
    "P-384",
    "P-521",
    "secp256r1",
    "secp384r1",
    "secp521r1",
    "prime256v1",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
    "brainpoolP256r1tls13",
    "brainpoolP384r1tls13",
    "brainpoolP512r1tls13",
];

fn canonical_group(name: &str) -> &str {
    let known = GROUP_NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name);
    // One spelling for each NIST curve, the one the help gives and the
    // outputs use for a negotiated group (`tls_group`, `group=`).
    match known {
        "secp256r1" | "prime256v1" => "P-256",
        "secp384r1" => "P-384",
        "secp521r1" => "P-521",
        other => other,
    }
}

/// A port in an entry: digits that fit a u16 (`allow_empty`: `--connect-to`'s wildcard).
fn port_ok(p: &str, allow_empty: bool) -> bool {
    (allow_empty && p.is_empty()) || p.parse::<u16>().is_ok_and(|n| n > 0)
}

/// `--resolve HOST:PORT:ADDR[,ADDR...]`, curl's syntax (IPv6 addresses in brackets or bare).
pub fn check_resolve(entry: &str) -> Result<(), UsageError> {
    let bad = || {
        UsageError(format!(
            "--resolve '{entry}' is not HOST:PORT:ADDR (curl's syntax, e.g. example.com:443:192.0.2.7)"
        ))
    };
    let (host, port, addrs) = entry_head(entry).ok_or_else(bad)?;
    if host.is_empty() || host.starts_with('-') || !port_ok(port, false) || addrs.is_empty() {
        return Err(bad());
    }
    for addr in addrs.split(',') {
        let bare = addr.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<std::net::IpAddr>().is_err() {
            return Err(UsageError(format!(
                "--resolve '{entry}': '{addr}' is not an IP address"
            )));
        }
    }
    Ok(())
}

/// `--connect-to HOST:PORT:CONNECT-HOST:CONNECT-PORT`, curl's syntax: an
/// empty HOST or PORT matches any; CONNECT-HOST may be a bracketed IPv6 address.
pub fn check_connect_to(entry: &str) -> Result<(), UsageError> {
    let bad = || {
        UsageError(format!(
            "--connect-to '{entry}' is not HOST:PORT:CONNECT-HOST:CONNECT-PORT \
             (curl's syntax, e.g. example.com:443:127.0.0.1:8443)"
        ))
    };
    let (_host, port, rest) = entry_head(entry).ok_or_else(bad)?;
    if !port_ok(port, true) {
        return Err(bad());
    }
    let (to_host, to_port) = if let Some(inner) = rest.strip_prefix('[') {
        let (addr, after) = inner.split_once(']').ok_or_else(bad)?;
        (addr, after.strip_prefix(':').ok_or_else(bad)?)
    } else {
        rest.rsplit_once(':').ok_or_else(bad)?
    };
    if to_host.contains(':') && !rest.starts_with('[') {
        return Err(bad());
    }
    if !port_ok(to_port, true) {
        return Err(bad());
    }
    Ok(())
}

/// A PEM file named by a flag, read now (bounded by `files::CLIENT_PEM_LIMIT`)
/// so that a missing, unreadable or oversized file is a usage error before
/// anything is dialed, and no handshake reads it again. A regular file or a
/// pipe will do (`--key <(pass show key)`); a device or a directory will not,
/// and the bound keeps an endless pipe out.
fn read_pem(flag: &str, path: &std::path::Path) -> Result<PemFile, UsageError> {
    let named = format!("{flag} {}", path.display());
    let what = if flag == "--key" {
        "a private key"
    } else {
        "a client certificate"
    };
    let pem = crate::files::read_named_as(
        &named,
        path,
        crate::files::CLIENT_PEM_LIMIT,
        what,
        crate::files::Kind::RegularOrPipe,
    )
    .map_err(UsageError)?;
    Ok(PemFile {
        path: path.to_path_buf(),
        pem: pem.into(),
    })
}

/// Parses the client certificate and its key now, as the handshake will,
/// so an empty, garbled, encrypted or mismatched pair is a usage error with
/// nothing sent, not a failed probe after a TCP connect.
fn check_client_pair(cert: &PemFile, key: Option<&PemFile>) -> Result<(), UsageError> {
    use openssl::pkey::PKey;
    use openssl::x509::X509;
    let cert_named = format!("--cert {}", cert.path.display());
    let leaf = X509::stack_from_pem(&cert.pem)
        .ok()
        .and_then(|chain| chain.into_iter().next())
        .ok_or_else(|| UsageError(format!("{cert_named} holds no PEM certificate")))?;
    let (key_pem, key_named) = match key {
        Some(k) => (&k.pem, format!("--key {}", k.path.display())),
        None => (&cert.pem, cert_named.clone()),
    };
    let mut asked_passphrase = false;
    let pkey = PKey::private_key_from_pem_callback(key_pem, |_| {
        asked_passphrase = true;
        Ok(0)
    })
    .map_err(|_| {
        UsageError(if asked_passphrase {
            format!(
                "{key_named}: the private key is encrypted, and tlsping takes no passphrase \
                 (`openssl pkey -in KEY -out PLAIN` decrypts it)"
            )
        } else if key.is_none() {
            format!("{key_named} holds no PEM private key; give it with --key")
        } else {
            format!("{key_named} holds no PEM private key")
        })
    })?;
    let matches = leaf
        .public_key()
        .is_ok_and(|public| public.public_eq(&pkey));
    if !matches {
        return Err(UsageError(format!(
            "{key_named}: the private key is not the one of the certificate in {cert_named}"
        )));
    }
    Ok(())
}

/// Why early data cannot be sent with the rest of `config`, or `None`: the
/// one rule for `--early-data` and `--compare early-data`.
pub fn early_data_refusal(config: &Config) -> Option<String> {
    // Anyone on the path can replay early data: only methods a server may
    // safely see twice (HEAD, the default, GET, OPTIONS).
    if let Some(m) = config
        .method
        .as_deref()
        .filter(|m| !matches!(*m, "HEAD" | "GET" | "OPTIONS"))
    {
        return Some(format!(
            "early data can be replayed, and {m} is not safe to repeat"
        ));
    }
    if config.settings.tls_max == Some(TlsMax::V1_2) {
        return Some("early data is a TLS 1.3 feature; drop --tls-max 1.2".into());
    }
    if !config.settings.resume {
        return Some("early data rides on a resumed session; drop --resume off".into());
    }
    if config.settings.mode == ModeChoice::Warm {
        return Some(
            "early data applies to cold probes (a kept connection sends no handshake); \
             use -m cold or -m both"
                .into(),
        );
    }
    None
}

/// What the connection flags asked for, before they are applied.
pub struct ConnectionArgs {
    pub tls_max: Option<TlsMax>,
    pub curves: Option<String>,
    pub resolve: Vec<String>,
    pub connect_to: Vec<String>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub early_data: bool,
}

/// Checks the connection flags against each other and the rest of the
/// configuration, and applies them to `config`.
pub fn apply(a: ConnectionArgs, config: &mut Config) -> Result<(), UsageError> {
    if config.settings.calibrate && (!a.resolve.is_empty() || !a.connect_to.is_empty()) {
        return Err(UsageError(
            "--calibrate measures its own server on 127.0.0.1; drop --resolve and --connect-to"
                .into(),
        ));
    }
    let tls_flag = if a.tls_max.is_some() {
        Some("--tls-max")
    } else if a.curves.is_some() {
        Some("--curves")
    } else if a.cert.is_some() {
        Some("--cert")
    } else if a.early_data {
        Some("--early-data")
    } else {
        None
    };
    if let (Some(flag), false) = (tls_flag, config.target.https) {
        return Err(UsageError(format!(
            "{flag} shapes the TLS handshake, and {} is plain http://",
            config.target.url()
        )));
    }
    if let Some(curves) = &a.curves {
        config.settings.curves = Some(parse_curves(curves)?);
    }
    for entry in &a.resolve {
        check_resolve(entry)?;
    }
    for entry in &a.connect_to {
        check_connect_to(entry)?;
    }
    let client_cert = a
        .cert
        .as_deref()
        .map(|p| read_pem("--cert", p))
        .transpose()?;
    let client_key = a.key.as_deref().map(|p| read_pem("--key", p)).transpose()?;
    if let Some(cert) = &client_cert {
        check_client_pair(cert, client_key.as_ref())?;
    }
    config.settings.tls_max = a.tls_max;
    if a.early_data {
        if let Some(why) = early_data_refusal(config) {
            return Err(UsageError(format!("--early-data: {why}")));
        }
    }
    config.settings.resolve = a.resolve;
    if !a.connect_to.is_empty() {
        // The entries say where to connect: pinning the preflight's address
        // would override them.
        config.pin_ip = false;
    }
    config.settings.connect_to = a.connect_to;
    config.settings.client_cert = client_cert;
    config.client_key = client_key;
    config.settings.early_data = a.early_data;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_take_commas_or_colons_and_any_case() {
        assert_eq!(parse_curves("X25519,P-256").unwrap(), "X25519:P-256");
        assert_eq!(parse_curves("x25519 : p-256").unwrap(), "X25519:P-256");
        assert_eq!(parse_curves("x25519mlkem768").unwrap(), "X25519MLKEM768");
        assert_eq!(parse_curves("X25519MLKEM768").unwrap(), "X25519MLKEM768");
        // The NIST curves by one name, the one the outputs use.
        assert_eq!(
            parse_curves("secp256r1,prime256v1,SECP384R1,secp521r1").unwrap(),
            "P-256:P-256:P-384:P-521"
        );
        assert!(parse_curves("X25519,nosuchgroup").is_err());
        assert!(parse_curves(",").is_err());
    }

    #[test]
    fn resolve_entries_follow_curls_syntax() {
        assert!(check_resolve("example.com:443:192.0.2.7").is_ok());
        assert!(check_resolve("example.com:443:192.0.2.7,[2001:db8::1]").is_ok());
        assert!(check_resolve("example.com:443:2001:db8::1").is_ok());
        assert!(check_resolve("example.com:443").is_err());
        assert!(check_resolve("example.com:https:192.0.2.7").is_err());
        assert!(check_resolve("example.com:443:not-an-ip").is_err());
        assert!(check_resolve("-example.com:443").is_err());
    }

    #[test]
    fn connect_to_entries_follow_curls_syntax() {
        assert!(check_connect_to("example.com:443:127.0.0.1:8443").is_ok());
        assert!(check_connect_to("::[::1]:8443").is_ok());
        assert!(check_connect_to("example.com:443:backend.test:").is_ok());
        // A bracketed IPv6 host is one host, its colons included.
        assert!(check_connect_to("[2001:db8::1]:443:127.0.0.1:8443").is_ok());
        assert!(check_connect_to("example.com:443:127.0.0.1").is_err());
        assert!(check_connect_to("example.com:443:::1:8443").is_err());
        assert!(check_connect_to("example.com:x:127.0.0.1:8443").is_err());
    }

    #[test]
    fn tls_max_is_12_or_13() {
        assert_eq!(parse_tls_max("1.2"), Ok(TlsMax::V1_2));
        assert_eq!(parse_tls_max("1.3"), Ok(TlsMax::V1_3));
        assert!(parse_tls_max("1.1").unwrap_err().contains("lowest"));
        assert!(parse_tls_max("2").is_err());
    }
}

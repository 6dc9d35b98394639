//! One certificate as libcurl's certificate info describes it (what curl's
//! `%{certs}` prints): `Label:value` lines in libcurl's order, then the PEM.
//! Made after the transfer from a counted reference taken during it, so
//! none of this work is inside a timed interval (libcurl's own
//! CURLOPT_CERTINFO would do it inside the handshake).

use std::fmt::Write as _;

use openssl::bn::BigNumRef;
use openssl::nid::Nid;
use openssl::x509::X509Ref;

use super::curl_ffi::{extension_lines, name_one_line};

/// A big number as OpenSSL's BN_print writes it: upper-case hex, no leading zeros.
fn bn_hex(n: &BigNumRef) -> String {
    let hex = n.to_hex_str().map(|h| h.to_string()).unwrap_or_default();
    let (sign, digits) = match hex.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", hex.as_str()),
    };
    let digits = digits.trim_start_matches('0');
    format!("{sign}{}", if digits.is_empty() { "0" } else { digits })
}

/// The certificate's description, line by line as libcurl gathers it
/// (Subject, Issuer, Version, Serial Number, algorithms, extensions, dates,
/// an RSA key's size and parameters, Signature), then the PEM. Each line
/// ends in a newline, as curl prints them.
pub(crate) fn curl_certinfo(cert: &X509Ref) -> String {
    let mut lines: Vec<(String, String)> = vec![
        ("Subject".into(), name_one_line(cert.subject_name())),
        ("Issuer".into(), name_one_line(cert.issuer_name())),
        ("Version".into(), format!("{:x}", cert.version())),
    ];
    if let Ok(serial) = cert.serial_number().to_bn() {
        let sign = if serial.is_negative() { "-" } else { "" };
        let digits: String = serial.to_vec().iter().map(|b| format!("{b:02x}")).collect();
        lines.push(("Serial Number".into(), format!("{sign}{digits}")));
    }
    lines.push((
        "Signature Algorithm".into(),
        cert.signature_algorithm().object().to_string(),
    ));
    let key = cert.public_key().ok();
    if let Some(key) = &key {
        if let Ok(name) = Nid::from_raw(key.id().as_raw()).long_name() {
            lines.push(("Public Key Algorithm".into(), name.to_string()));
        }
    }
    lines.extend(extension_lines(cert));
    lines.push(("Start date".into(), cert.not_before().to_string()));
    lines.push(("Expire date".into(), cert.not_after().to_string()));
    if let Some(rsa) = key.as_ref().and_then(|k| k.rsa().ok()) {
        lines.push(("RSA Public Key".into(), rsa.n().num_bits().to_string()));
        lines.push(("rsa(n)".into(), bn_hex(rsa.n())));
        lines.push(("rsa(e)".into(), bn_hex(rsa.e())));
    }
    let signature: String = cert
        .signature()
        .as_slice()
        .iter()
        .map(|b| format!("{b:02x}:"))
        .collect();
    lines.push(("Signature".into(), signature));

    let mut text = String::new();
    for (label, value) in lines {
        let _ = write!(text, "{label}:{value}");
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    // curl prints the PEM without its `Cert:` label.
    if let Ok(pem) = cert.to_pem() {
        text.push_str(&String::from_utf8_lossy(&pem));
    }
    text
}

/// At most this many of a certificate's names are kept, each at most
/// `MAX_NAME_CHARS` characters: a server picks them, and a certificate
/// may carry thousands.
pub const MAX_NAMES: usize = 8;
const MAX_NAME_CHARS: usize = 100;

/// The names a certificate is for: its subject alternative names (DNS
/// names and IP addresses), or its subject's common name when it has
/// none; at most `MAX_NAMES` of them, and how many there are in all.
/// Raw, as the server wrote them: the line that shows them escapes them.
pub(crate) fn names(cert: &X509Ref) -> (Vec<String>, usize) {
    let mut all: Vec<String> = match cert.subject_alt_names() {
        Some(sans) => sans
            .iter()
            .filter_map(|name| {
                name.dnsname().map(str::to_string).or_else(|| {
                    name.ipaddress().and_then(|ip| match ip.len() {
                        4 => <[u8; 4]>::try_from(ip)
                            .ok()
                            .map(|b| std::net::IpAddr::from(b).to_string()),
                        16 => <[u8; 16]>::try_from(ip)
                            .ok()
                            .map(|b| std::net::IpAddr::from(b).to_string()),
                        _ => None,
                    })
                })
            })
            .collect(),
        None => Vec::new(),
    };
    if all.is_empty() {
        all = cert
            .subject_name()
            .entries_by_nid(Nid::COMMONNAME)
            .filter_map(|e| e.data().to_string().ok())
            .collect();
    }
    let count = all.len();
    all.truncate(MAX_NAMES);
    for name in &mut all {
        if name.chars().count() > MAX_NAME_CHARS {
            *name = name.chars().take(MAX_NAME_CHARS - 1).chain(['…']).collect();
        }
    }
    (all, count)
}

#[cfg(test)]
mod tests {
    use openssl::asn1::Asn1Time;
    use openssl::bn::BigNum;
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::rsa::Rsa;
    use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
    use openssl::x509::{X509NameBuilder, X509};

    use super::*;

    /// A self-signed RSA certificate with two extensions and a name that
    /// needs quoting.
    fn certificate() -> X509 {
        let key = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
        let mut name = X509NameBuilder::new().unwrap();
        name.append_entry_by_text("O", "Acme, Inc").unwrap();
        name.append_entry_by_text("CN", "example.test").unwrap();
        let name = name.build();
        let mut b = X509::builder().unwrap();
        b.set_version(2).unwrap();
        let serial = BigNum::from_hex_str("01A2B3")
            .unwrap()
            .to_asn1_integer()
            .unwrap();
        b.set_serial_number(&serial).unwrap();
        b.set_subject_name(&name).unwrap();
        b.set_issuer_name(&name).unwrap();
        b.set_pubkey(&key).unwrap();
        b.set_not_before(&Asn1Time::from_str("20260101000000Z").unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::from_str("20270101000000Z").unwrap())
            .unwrap();
        b.append_extension(BasicConstraints::new().critical().ca().build().unwrap())
            .unwrap();
        let san = SubjectAlternativeName::new()
            .dns("example.test")
            .build(&b.x509v3_context(None, None))
            .unwrap();
        b.append_extension(san).unwrap();
        b.sign(&key, MessageDigest::sha256()).unwrap();
        b.build()
    }

    #[test]
    fn a_certificates_names_are_its_alternative_names_bounded() {
        let cert = certificate();
        assert_eq!(names(&cert), (vec!["example.test".to_string()], 1));
        // Many long names: the first few, each cut, and the count of all.
        let key = PKey::from_rsa(Rsa::generate(2048).unwrap()).unwrap();
        let mut b = X509::builder().unwrap();
        b.set_pubkey(&key).unwrap();
        let mut san = SubjectAlternativeName::new();
        for i in 0..20 {
            san.dns(&format!("{}{i}.test", "a".repeat(300)));
        }
        san.ip("10.0.0.1");
        let san = san.build(&b.x509v3_context(None, None)).unwrap();
        b.append_extension(san).unwrap();
        b.sign(&key, MessageDigest::sha256()).unwrap();
        let (kept, count) = names(&b.build());
        assert_eq!((kept.len(), count), (MAX_NAMES, 21));
        assert!(kept
            .iter()
            .all(|n| n.chars().count() == MAX_NAME_CHARS && n.ends_with('…')));
    }

    #[test]
    fn lines_follow_libcurls_order_and_spelling() {
        let cert = certificate();
        let text = curl_certinfo(&cert);
        let labels: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("-----BEGIN"))
            .map(|l| l.split_once(':').map_or(l, |(label, _)| label))
            .collect();
        assert_eq!(
            labels,
            [
                "Subject",
                "Issuer",
                "Version",
                "Serial Number",
                "Signature Algorithm",
                "Public Key Algorithm",
                "X509v3 Basic Constraints",
                "X509v3 Subject Alternative Name",
                "Start date",
                "Expire date",
                "RSA Public Key",
                "rsa(n)",
                "rsa(e)",
                "Signature",
            ],
            "{text}"
        );
        let has = |line: &str| text.lines().any(|l| l == line);
        // The comma in O makes OpenSSL quote the value, as libcurl prints it.
        assert!(
            has("Subject:O = \"Acme, Inc\", CN = example.test"),
            "{text}"
        );
        assert!(has("Version:2"), "{text}");
        assert!(has("Serial Number:01a2b3"), "{text}");
        assert!(has("Signature Algorithm:sha256WithRSAEncryption"), "{text}");
        assert!(has("Public Key Algorithm:rsaEncryption"), "{text}");
        assert!(has("X509v3 Basic Constraints:CA:TRUE"), "{text}");
        assert!(
            has("X509v3 Subject Alternative Name:DNS:example.test"),
            "{text}"
        );
        assert!(has("Start date:Jan  1 00:00:00 2026 GMT"), "{text}");
        assert!(has("RSA Public Key:2048"), "{text}");
        assert!(has("rsa(e):10001"), "{text}");
        let pem = String::from_utf8(cert.to_pem().unwrap()).unwrap();
        assert!(text.ends_with(&pem), "{text}");
    }

    #[test]
    fn big_numbers_print_as_bn_print_does() {
        let n = BigNum::from_u32(65537).unwrap();
        assert_eq!(bn_hex(&n), "10001");
        assert_eq!(bn_hex(&BigNum::new().unwrap()), "0");
        let mut negative = BigNum::from_u32(255).unwrap();
        negative.set_negative(true);
        assert_eq!(bn_hex(&negative), "-FF");
    }
}

//! One certificate as libcurl's certificate info describes it (what curl's
//! `%{certs}` prints): `Label:value` lines in libcurl's order, then the PEM.
//! Made after the transfer from a counted reference taken during it, so
//! none of this work is inside a timed interval (libcurl's own
//! CURLOPT_CERTINFO would do it inside the handshake).

use std::fmt::Write as _;
use std::os::raw::{c_int, c_ulong};

use foreign_types::ForeignTypeRef;
use openssl::asn1::Asn1ObjectRef;
use openssl::bn::BigNumRef;
use openssl::nid::Nid;
use openssl::x509::{X509NameRef, X509Ref};

// openssl/x509.h: XN_FLAG_ONELINE, the flags libcurl prints names with
// (RFC 2253 escaping, quotes, `, ` between parts, ` = ` inside them).
const XN_FLAG_ONELINE: c_ulong = 0x0082_031f;

extern "C" {
    // libcrypto, linked through openssl-sys, which does not bind these two.
    fn X509_NAME_print_ex(
        out: *mut openssl_sys::BIO,
        name: *const openssl_sys::X509_NAME,
        indent: c_int,
        flags: c_ulong,
    ) -> c_int;
    fn ASN1_STRING_print(out: *mut openssl_sys::BIO, s: *const openssl_sys::ASN1_STRING) -> c_int;
}

/// A memory BIO that OpenSSL's printers write into; freed on drop.
struct MemBio(*mut openssl_sys::BIO);

impl MemBio {
    fn new() -> Option<MemBio> {
        // SAFETY: BIO_s_mem returns a static method table; BIO_new returns a
        // new BIO we own, or NULL.
        let bio = unsafe { openssl_sys::BIO_new(openssl_sys::BIO_s_mem()) };
        (!bio.is_null()).then_some(MemBio(bio))
    }

    /// What has been written so far.
    fn text(&self) -> String {
        let mut data: *mut std::os::raw::c_char = std::ptr::null_mut();
        // SAFETY: `self.0` is our live memory BIO; BIO_get_mem_data points
        // `data` at its buffer and returns the length, valid until the BIO
        // is written to or freed, and copied before either.
        unsafe {
            let len = openssl_sys::BIO_get_mem_data(self.0, &mut data);
            if data.is_null() || len <= 0 {
                return String::new();
            }
            let bytes = std::slice::from_raw_parts(data as *const u8, len as usize);
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

impl Drop for MemBio {
    fn drop(&mut self) {
        // SAFETY: we own the BIO (from `new`) and nothing else frees it.
        unsafe { openssl_sys::BIO_free_all(self.0) }
    }
}

/// A name on one line, as libcurl prints Subject and Issuer (`CN = example.com`).
fn one_line(name: &X509NameRef) -> String {
    let Some(bio) = MemBio::new() else {
        return String::new();
    };
    // SAFETY: both pointers are live for the call (our BIO, the borrowed name).
    unsafe { X509_NAME_print_ex(bio.0, name.as_ptr(), 0, XN_FLAG_ONELINE) };
    bio.text()
}

/// Each extension as libcurl lists it: its name, and OpenSSL's text for its value.
fn extensions(cert: &X509Ref) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // SAFETY: the certificate is live (borrowed) for the whole loop; the count
    // and each extension pointer are read-only views into it.
    let count = unsafe { openssl_sys::X509_get_ext_count(cert.as_ptr()) };
    for i in 0..count.max(0) {
        let Some(bio) = MemBio::new() else { break };
        // SAFETY: `i` is below the count, so X509_get_ext returns one of the
        // certificate's own extensions; the object and data it points to live
        // as long as the certificate. Printing only reads them.
        let name = unsafe {
            let ext = openssl_sys::X509_get_ext(cert.as_ptr(), i);
            if ext.is_null() {
                continue;
            }
            let object = openssl_sys::X509_EXTENSION_get_object(ext);
            if openssl_sys::X509V3_EXT_print(bio.0, ext, 0, 0) != 1 {
                let data = openssl_sys::X509_EXTENSION_get_data(ext);
                ASN1_STRING_print(bio.0, data as *const openssl_sys::ASN1_STRING);
            }
            Asn1ObjectRef::from_ptr(object).to_string()
        };
        out.push((name, bio.text()));
    }
    out
}

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
pub(super) fn curl_certinfo(cert: &X509Ref) -> String {
    let mut lines: Vec<(String, String)> = vec![
        ("Subject".into(), one_line(cert.subject_name())),
        ("Issuer".into(), one_line(cert.issuer_name())),
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
    lines.extend(extensions(cert));
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

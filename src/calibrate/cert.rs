//! Certificates made at run time: a P-256 key and an X.509 v3 certificate
//! for it, signed by an issuer or by itself. `--calibrate` makes its
//! server's this way; the tests (`tests/support/pki.rs`) make their CAs and
//! leaves with the same two calls.

use openssl::asn1::Asn1TimeRef;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, PKeyRef, Private};
use openssl::x509::extension::{SubjectAlternativeName, SubjectKeyIdentifier};
use openssl::x509::{X509Extension, X509NameBuilder, X509Ref, X509};

/// A fresh P-256 key.
pub fn p256_key() -> Result<PKey<Private>, ErrorStack> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    PKey::from_ec_key(EcKey::generate(&group)?)
}

/// What a certificate says about its subject.
pub struct CertSpec<'a> {
    /// The subject's CN (and the issuer's, when self-signed).
    pub common_name: &'a str,
    pub not_before: &'a Asn1TimeRef,
    pub not_after: &'a Asn1TimeRef,
    /// Extensions that need no context (basic constraints, key usage,
    /// extended key usage), in order.
    pub extensions: Vec<X509Extension>,
    /// Add a subjectKeyIdentifier.
    pub subject_key_id: bool,
    /// subjectAltName entries; none of either leaves the extension out.
    pub dns_names: &'a [&'a str],
    pub ip_addresses: &'a [&'a str],
}

/// The certificate `spec` describes for `key`, signed (SHA-256) by
/// `issuer`'s certificate and key, or by `key` itself. Its serial is random,
/// positive and never zero.
pub fn issue(
    spec: CertSpec,
    key: &PKeyRef<Private>,
    issuer: Option<(&X509Ref, &PKeyRef<Private>)>,
) -> Result<X509, ErrorStack> {
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("CN", spec.common_name)?;
    let name = name.build();
    let mut serial = BigNum::new()?;
    serial.rand(63, MsbOption::ONE, false)?;
    let serial = serial.to_asn1_integer()?;

    let mut builder = X509::builder()?;
    builder.set_version(2)?; // X.509 v3
    builder.set_serial_number(&serial)?;
    builder.set_subject_name(&name)?;
    match issuer {
        Some((cert, _)) => builder.set_issuer_name(cert.subject_name())?,
        None => builder.set_issuer_name(&name)?,
    }
    builder.set_pubkey(key)?;
    builder.set_not_before(spec.not_before)?;
    builder.set_not_after(spec.not_after)?;
    for extension in spec.extensions {
        builder.append_extension(extension)?;
    }
    let issuer_cert = issuer.map(|(cert, _)| cert);
    if spec.subject_key_id {
        let id = SubjectKeyIdentifier::new().build(&builder.x509v3_context(issuer_cert, None))?;
        builder.append_extension(id)?;
    }
    if !spec.dns_names.is_empty() || !spec.ip_addresses.is_empty() {
        let mut alt_names = SubjectAlternativeName::new();
        for dns in spec.dns_names {
            alt_names.dns(dns);
        }
        for ip in spec.ip_addresses {
            alt_names.ip(ip);
        }
        let alt_names = alt_names.build(&builder.x509v3_context(issuer_cert, None))?;
        builder.append_extension(alt_names)?;
    }
    let signer = issuer.map_or(key, |(_, issuer_key)| issuer_key);
    builder.sign(signer, MessageDigest::sha256())?;
    Ok(builder.build())
}

//! Certificates made at test time: one CA per test process and leaf
//! certificates signed by it (or deliberately broken ones).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{
    BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName,
};
use openssl::x509::{X509NameBuilder, X509};

pub struct Ca {
    pub cert: X509,
    pub key: PKey<Private>,
    /// The CA certificate as a PEM file, for `--cacert` / `SSL_CERT_FILE`.
    pub pem_path: PathBuf,
}

fn new_key() -> PKey<Private> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap()
}

fn serial() -> openssl::asn1::Asn1Integer {
    let mut bn = BigNum::new().unwrap();
    bn.rand(64, MsbOption::MAYBE_ZERO, false).unwrap();
    bn.to_asn1_integer().unwrap()
}

fn make_ca(cn: &str) -> (X509, PKey<Private>) {
    let key = new_key();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&serial()).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(30).unwrap())
        .unwrap();
    b.append_extension(BasicConstraints::new().critical().ca().build().unwrap())
        .unwrap();
    b.append_extension(
        KeyUsage::new()
            .critical()
            .key_cert_sign()
            .crl_sign()
            .build()
            .unwrap(),
    )
    .unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    (b.build(), key)
}

/// The test process's CA, created on first use.
pub fn ca() -> &'static Ca {
    static CA: OnceLock<Ca> = OnceLock::new();
    CA.get_or_init(|| {
        let (cert, key) = make_ca("tlsping test CA");
        let dir = std::env::temp_dir().join(format!("tlsping-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pem_path = dir.join("ca.pem");
        std::fs::write(&pem_path, cert.to_pem().unwrap()).unwrap();
        Ca {
            cert,
            key,
            pem_path,
        }
    })
}

/// How the server's certificate should be (un)trustworthy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CertKind {
    Good,
    Expired,
    WrongName,
    UnknownCa,
}

/// A leaf for `localhost`, `tlsping.test` (a name only `--resolve` and
/// `--connect-to` can reach), 127.0.0.1 and ::1 (or a broken variant),
/// signed by the test CA.
pub fn leaf(kind: CertKind) -> (X509, PKey<Private>) {
    let key = new_key();
    let (issuer_cert, issuer_key) = match kind {
        CertKind::UnknownCa => {
            let (c, k) = make_ca("somebody else's CA");
            (c, k)
        }
        _ => (ca().cert.clone(), ca().key.clone()),
    };
    let mut name = X509NameBuilder::new().unwrap();
    let cn = if kind == CertKind::WrongName {
        "wrong.example"
    } else {
        "localhost"
    };
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&serial()).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(issuer_cert.subject_name()).unwrap();
    b.set_pubkey(&key).unwrap();
    if kind == CertKind::Expired {
        b.set_not_before(&Asn1Time::from_unix(1_500_000_000).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::from_unix(1_500_086_400).unwrap())
            .unwrap();
    } else {
        b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::days_from_now(30).unwrap())
            .unwrap();
    }
    let mut san = SubjectAlternativeName::new();
    if kind == CertKind::WrongName {
        san.dns("wrong.example");
    } else {
        san.dns("localhost")
            .dns("tlsping.test")
            .ip("127.0.0.1")
            .ip("::1");
    }
    let ctx = b.x509v3_context(Some(&issuer_cert), None);
    let san = san.build(&ctx).unwrap();
    b.append_extension(san).unwrap();
    b.sign(&issuer_key, MessageDigest::sha256()).unwrap();
    (b.build(), key)
}

/// The subject CN of every client certificate [`client_identity`] makes.
pub const CLIENT_CN: &str = "tlsping test client";

/// The CA that signs client certificates, created on first use: a CA of its
/// own, so a server that requires client certificates trusts nothing the
/// server-side CA signed.
pub fn client_ca() -> &'static (X509, PKey<Private>) {
    static CLIENT_CA: OnceLock<(X509, PKey<Private>)> = OnceLock::new();
    CLIENT_CA.get_or_init(|| make_ca("tlsping test client CA"))
}

/// A client certificate (subject CN [`CLIENT_CN`], clientAuth) signed by
/// [`client_ca`], written with its key as `client-cert.pem` and
/// `client-key.pem` (PKCS#8) into `dir`, which the caller owns. Returns both
/// paths and the client CA a server must trust to accept it.
pub fn client_identity(dir: &Path) -> (PathBuf, PathBuf, X509) {
    let (ca_cert, ca_key) = client_ca();
    let key = new_key();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", CLIENT_CN).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&serial()).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(ca_cert.subject_name()).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(30).unwrap())
        .unwrap();
    b.append_extension(BasicConstraints::new().critical().build().unwrap())
        .unwrap();
    b.append_extension(
        KeyUsage::new()
            .critical()
            .digital_signature()
            .build()
            .unwrap(),
    )
    .unwrap();
    b.append_extension(ExtendedKeyUsage::new().client_auth().build().unwrap())
        .unwrap();
    b.sign(ca_key, MessageDigest::sha256()).unwrap();
    let cert = b.build();
    std::fs::create_dir_all(dir).unwrap();
    let cert_path = dir.join("client-cert.pem");
    let key_path = dir.join("client-key.pem");
    std::fs::write(&cert_path, cert.to_pem().unwrap()).unwrap();
    std::fs::write(&key_path, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    (cert_path, key_path, ca_cert.clone())
}

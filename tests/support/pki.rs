//! Certificates made at test time: one CA per test process and leaf
//! certificates signed by it (or deliberately broken ones), made with the
//! library's own certificate builder (`tlsping::calibrate::cert`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use openssl::asn1::Asn1Time;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{BasicConstraints, ExtendedKeyUsage, KeyUsage};
use openssl::x509::X509;
use tlsping::calibrate::cert::{issue, p256_key, CertSpec};

pub struct Ca {
    pub cert: X509,
    pub key: PKey<Private>,
    /// The CA certificate as a PEM file, for `--cacert` / `SSL_CERT_FILE`.
    pub pem_path: PathBuf,
}

fn new_key() -> PKey<Private> {
    p256_key().unwrap()
}

/// From now for 30 days: what every good certificate of the tests gets.
fn valid_for_a_month() -> (Asn1Time, Asn1Time) {
    (
        Asn1Time::days_from_now(0).unwrap(),
        Asn1Time::days_from_now(30).unwrap(),
    )
}

fn make_ca(cn: &str) -> (X509, PKey<Private>) {
    let key = new_key();
    let (from, to) = valid_for_a_month();
    let spec = CertSpec {
        common_name: cn,
        not_before: &from,
        not_after: &to,
        extensions: vec![
            BasicConstraints::new().critical().ca().build().unwrap(),
            KeyUsage::new()
                .critical()
                .key_cert_sign()
                .crl_sign()
                .build()
                .unwrap(),
        ],
        subject_key_id: false,
        dns_names: &[],
        ip_addresses: &[],
    };
    (issue(spec, &key, None).unwrap(), key)
}

/// The folder of the test process's CA file. A static is never dropped,
/// so the folder is removed when the process exits (`remove_ca_dir`), also
/// after a failed test: the test harness exits through `exit(3)`.
static CA_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Removes the CA's folder; registered with `atexit(3)` once it exists.
extern "C" fn remove_ca_dir() {
    if let Some(dir) = CA_DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The test process's CA, created on first use; its file's folder is this
/// process's own (a new random name) and goes when the process exits.
pub fn ca() -> &'static Ca {
    static CA: OnceLock<Ca> = OnceLock::new();
    CA.get_or_init(|| {
        let (cert, key) = make_ca("tlsping test CA");
        // A directory made new, and the file in it too: never a path
        // someone else could have prepared (the tests run as root).
        let dir = super::temp::private_dir("tlsping-test-");
        // `get_or_init` runs this once per process, so the folder is set
        // once and the handler registered once.
        let _ = CA_DIR.set(dir.clone());
        // SAFETY: atexit(3) only records a function pointer; the function
        // takes nothing, and reads a static that is set before this line.
        let registered = unsafe { libc::atexit(remove_ca_dir) };
        assert_eq!(registered, 0, "atexit");
        let pem_path = dir.join("ca.pem");
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&pem_path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &cert.to_pem().unwrap()))
            .unwrap();
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
    /// Signed by the test CA, no subjectAltName, and a subject CN
    /// ([`HOSTILE_CN`]) with an escape sequence in it, which libcurl quotes
    /// when the name does not match.
    HostileName,
    /// A good leaf on an RSA-4096 key (the server's signature is then
    /// milliseconds of its CPU).
    Rsa4096,
    /// A good leaf of more than 20 KB ([`BIG_LEAF_NAMES`] extra DNS names),
    /// above a server's initial congestion window with the rest of its flight.
    Big,
}

/// The extra DNS names of a [`CertKind::Big`] leaf, each 24 bytes in the
/// certificate (`host-NNNN.tlsping.test` and its 2-byte header).
pub const BIG_LEAF_NAMES: usize = 900;

/// The CN of a [`CertKind::HostileName`] certificate: ESC, then the start
/// of a colour sequence.
pub const HOSTILE_CN: &str = "evil\u{1b}[31m.test";

/// A leaf for `localhost`, `tlsping.test` and `my-host.tlsping.test` (names
/// only `--resolve` and `--connect-to` can reach; the second has a dash, as
/// many host names do), 127.0.0.1 and ::1 (or a broken variant), signed by
/// the test CA.
pub fn leaf(kind: CertKind) -> (X509, PKey<Private>) {
    let key = if kind == CertKind::Rsa4096 {
        let rsa = openssl::rsa::Rsa::generate(4096).unwrap();
        PKey::from_rsa(rsa).unwrap()
    } else {
        new_key()
    };
    let (issuer_cert, issuer_key) = match kind {
        CertKind::UnknownCa => {
            let (c, k) = make_ca("somebody else's CA");
            (c, k)
        }
        _ => (ca().cert.clone(), ca().key.clone()),
    };
    let many: Vec<String> = (0..BIG_LEAF_NAMES)
        .map(|i| format!("host-{i:04}.tlsping.test"))
        .collect();
    let mut big: Vec<&str> = vec!["localhost", "tlsping.test", "my-host.tlsping.test"];
    big.extend(many.iter().map(String::as_str));
    let (cn, dns_names, ip_addresses): (&str, &[&str], &[&str]) = if kind == CertKind::Big {
        ("localhost", &big, &["127.0.0.1", "::1"])
    } else if kind == CertKind::WrongName {
        ("wrong.example", &["wrong.example"], &[])
    } else if kind == CertKind::HostileName {
        (HOSTILE_CN, &[], &[])
    } else {
        (
            "localhost",
            &["localhost", "tlsping.test", "my-host.tlsping.test"],
            &["127.0.0.1", "::1"],
        )
    };
    let (from, to) = if kind == CertKind::Expired {
        (
            Asn1Time::from_unix(1_500_000_000).unwrap(),
            Asn1Time::from_unix(1_500_086_400).unwrap(),
        )
    } else {
        valid_for_a_month()
    };
    let spec = CertSpec {
        common_name: cn,
        not_before: &from,
        not_after: &to,
        extensions: Vec::new(),
        subject_key_id: false,
        dns_names,
        ip_addresses,
    };
    let cert = issue(spec, &key, Some((&issuer_cert, &issuer_key))).unwrap();
    (cert, key)
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
    let (from, to) = valid_for_a_month();
    let spec = CertSpec {
        common_name: CLIENT_CN,
        not_before: &from,
        not_after: &to,
        extensions: vec![
            BasicConstraints::new().critical().build().unwrap(),
            KeyUsage::new()
                .critical()
                .digital_signature()
                .build()
                .unwrap(),
            ExtendedKeyUsage::new().client_auth().build().unwrap(),
        ],
        subject_key_id: false,
        dns_names: &[],
        ip_addresses: &[],
    };
    let cert = issue(spec, &key, Some((ca_cert, ca_key))).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let cert_path = dir.join("client-cert.pem");
    let key_path = dir.join("client-key.pem");
    std::fs::write(&cert_path, cert.to_pem().unwrap()).unwrap();
    std::fs::write(&key_path, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    (cert_path, key_path, ca_cert.clone())
}

//! The certificate trust store, built once per run and handed to every
//! handshake, so no probe pays for reading and parsing the CA bundle inside
//! its `tls` stage. Verification stays as strict as libcurl's own set-up.

use std::path::{Path, PathBuf};

use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::X509;

/// A reference-counted OpenSSL store; each SSL_CTX takes its own reference.
pub struct TrustStore {
    store: X509Store,
}

/// An anchor source named by the environment (set and not empty).
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Checks, before anything is dialed, that the anchors the run was told to
/// use exist: `--cacert`, else `SSL_CERT_FILE`, else `SSL_CERT_DIR`. A named
/// source that is missing is an error, never a silent fall-back to the
/// system's store (which would verify against other anchors than asked).
pub fn check_sources(ca_file: Option<&Path>) -> Result<(), String> {
    if let Some(f) = ca_file {
        return match std::fs::metadata(f) {
            Ok(m) if m.is_file() => Ok(()),
            Ok(_) => Err(format!("--cacert {}: not a file", f.display())),
            Err(e) => Err(format!("--cacert {}: {e}", f.display())),
        };
    }
    // A FIFO or a device is neither: reading one could wait for ever.
    let check = |name: &str, p: &Path, want_dir: bool| match std::fs::metadata(p) {
        Ok(m) if (want_dir && m.is_dir()) || (!want_dir && m.is_file()) => Ok(()),
        Ok(_) => Err(format!(
            "{name}={} is not a {}",
            p.display(),
            if want_dir {
                "directory"
            } else {
                "regular file"
            }
        )),
        Err(e) => Err(format!(
            "{name}={}: {e}; unset it to use the system's CA certificates",
            p.display()
        )),
    };
    if let Some(p) = env_path("SSL_CERT_FILE") {
        return check("SSL_CERT_FILE", &p, false);
    }
    if let Some(dirs) = env_path("SSL_CERT_DIR") {
        // OpenSSL takes a list of directories, `:`-separated.
        for dir in std::env::split_paths(&dirs) {
            check("SSL_CERT_DIR", &dir, true)?;
        }
    }
    Ok(())
}

/// Where the anchors come from, with how a message names it.
enum Source {
    /// A PEM bundle.
    File {
        path: PathBuf,
        named: String,
    },
    /// Hashed directories, `:`-separated as OpenSSL takes them.
    Dirs {
        list: PathBuf,
        named: String,
    },
    None,
}

/// `--cacert`, else `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the system bundle
/// that openssl-probe finds.
fn locate(ca_file: Option<&Path>) -> Source {
    let file = |path: PathBuf, named: String| Source::File { path, named };
    if let Some(f) = ca_file {
        return file(f.to_path_buf(), format!("--cacert {}", f.display()));
    }
    if let Some(f) = env_path("SSL_CERT_FILE") {
        let named = format!("SSL_CERT_FILE={}", f.display());
        return file(f, named);
    }
    if let Some(list) = env_path("SSL_CERT_DIR") {
        let named = format!("SSL_CERT_DIR={}", list.display());
        return Source::Dirs { list, named };
    }
    let probe = openssl_probe::probe();
    match (probe.cert_file, probe.cert_dir) {
        (Some(f), _) => {
            let named = format!("CA file {}", f.display());
            file(f, named)
        }
        (None, Some(list)) => {
            let named = format!("the system's CA directory {}", list.display());
            Source::Dirs { list, named }
        }
        (None, None) => Source::None,
    }
}

/// The certificates in a PEM bundle, read with the `CA_LIMIT`.
fn file_certificates(path: &Path, named: &str) -> Result<Vec<X509>, String> {
    let pem = crate::files::read_named(named, path, crate::files::CA_LIMIT, "a CA bundle")?;
    let certs = X509::stack_from_pem(&pem).map_err(|e| format!("parsing {named}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{named} holds no certificate"));
    }
    Ok(certs)
}

/// A name OpenSSL looks a certificate up by in a hashed directory:
/// `<8 lowercase hex digits>.<n>` (what `openssl rehash` makes; `.r<n>` are CRLs).
fn is_hashed_name(name: &str) -> bool {
    let Some((hash, n)) = name.split_once('.') else {
        return false;
    };
    hash.len() == 8
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

/// The certificates of hashed directories, the entries OpenSSL would look
/// in. Read here, once, instead of by OpenSSL during a handshake (so no
/// `tls` stage reads a file), and bounded: all of them together at most
/// `CA_LIMIT`, the limit of one bundle. A dangling link (a certificate
/// removed without a rehash) is passed over, as OpenSSL would.
fn dir_certificates(list: &Path, named: &str) -> Result<Vec<X509>, String> {
    let mut budget = crate::files::CA_LIMIT;
    let mut certs = Vec::new();
    for dir in std::env::split_paths(list) {
        let unreadable = |e: std::io::Error| format!("{named}: {}: {e}", dir.display());
        for entry in std::fs::read_dir(&dir).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            if !entry.file_name().to_str().is_some_and(is_hashed_name) {
                continue;
            }
            let path = entry.path();
            let pem = match crate::files::read_capped(&path, budget) {
                Ok(pem) => pem,
                Err(crate::files::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    continue
                }
                Err(crate::files::ReadError::TooLarge) => {
                    return Err(format!(
                        "the certificates in {named} hold more than {}, the limit for CA \
                         certificates (reached at {})",
                        crate::files::size_text(crate::files::CA_LIMIT),
                        path.display()
                    ))
                }
                Err(e) => {
                    let named = format!("{named}: {}", path.display());
                    return Err(crate::files::read_error_text(
                        &named,
                        budget,
                        "CA certificates",
                        e,
                    ));
                }
            };
            budget -= pem.len() as u64;
            let found = X509::stack_from_pem(&pem)
                .map_err(|e| format!("parsing {named}: {}: {e}", path.display()))?;
            certs.extend(found);
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "{named} holds no certificate under a hashed name (`openssl rehash DIR` makes them)"
        ));
    }
    Ok(certs)
}

impl TrustStore {
    /// A store holding exactly these anchors (the `--calibrate` server's own
    /// certificate), with the same flags as a loaded one.
    pub fn from_certificates(certs: &[X509]) -> Result<TrustStore, String> {
        let mut builder = X509StoreBuilder::new().map_err(|e| e.to_string())?;
        for cert in certs {
            builder.add_cert(cert.clone()).map_err(|e| e.to_string())?;
        }
        builder
            .set_flags(X509VerifyFlags::TRUSTED_FIRST | X509VerifyFlags::PARTIAL_CHAIN)
            .map_err(|e| e.to_string())?;
        Ok(TrustStore {
            store: builder.build(),
        })
    }

    /// The anchors the run was told to use, each file read with a size
    /// limit (`files::CA_LIMIT`); `Err` names the source and what is wrong.
    pub fn load(ca_file: Option<&Path>) -> Result<TrustStore, String> {
        let certs = match locate(ca_file) {
            Source::File { path, named } => file_certificates(&path, &named)?,
            Source::Dirs { list, named } => dir_certificates(&list, &named)?,
            Source::None => {
                return Err("no CA certificates found; set SSL_CERT_FILE or use --cacert".into())
            }
        };
        let mut builder = X509StoreBuilder::new().map_err(|e| e.to_string())?;
        for cert in certs {
            // Duplicates (a bundle listing one twice, a directory's hash
            // links) are harmless; skip OpenSSL's complaint.
            let _ = builder.add_cert(cert);
        }
        // The same flags libcurl sets on the store it builds itself.
        builder
            .set_flags(X509VerifyFlags::TRUSTED_FIRST | X509VerifyFlags::PARTIAL_CHAIN)
            .map_err(|e| e.to_string())?;
        Ok(TrustStore {
            store: builder.build(),
        })
    }

    /// The OpenSSL store, for the SSL_CTX callback to take a reference to.
    pub(crate) fn store(&self) -> &openssl::x509::store::X509StoreRef {
        &self.store
    }
}

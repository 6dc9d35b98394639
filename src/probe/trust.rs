//! The certificate trust store, built once per run and handed to every
//! handshake, so no probe pays for reading and parsing the CA bundle inside
//! its `tls` stage. Verification stays as strict as libcurl's own set-up.

use std::path::{Path, PathBuf};

use openssl::x509::store::{X509Lookup, X509Store, X509StoreBuilder};
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
    let check = |name: &str, p: &Path, want_dir: bool| match std::fs::metadata(p) {
        Ok(m) if m.is_dir() == want_dir => Ok(()),
        Ok(_) => Err(format!(
            "{name}={} is not a {}",
            p.display(),
            if want_dir { "directory" } else { "file" }
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

/// Where the anchors come from: `--cacert`, else `SSL_CERT_FILE`/`SSL_CERT_DIR`,
/// else the system bundle that openssl-probe finds.
fn locate(ca_file: Option<&Path>) -> (Option<PathBuf>, Option<PathBuf>) {
    if let Some(f) = ca_file {
        return (Some(f.to_path_buf()), None);
    }
    if let Some(f) = env_path("SSL_CERT_FILE") {
        return (Some(f), None);
    }
    if let Some(d) = env_path("SSL_CERT_DIR") {
        return (None, Some(d));
    }
    let probe = openssl_probe::probe();
    (probe.cert_file, probe.cert_dir)
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

    pub fn load(ca_file: Option<&Path>) -> Result<TrustStore, String> {
        let (file, dir) = locate(ca_file);
        let mut builder = X509StoreBuilder::new().map_err(|e| e.to_string())?;
        if let Some(file) = &file {
            let pem = std::fs::read(file)
                .map_err(|e| format!("reading CA file {}: {e}", file.display()))?;
            let certs = X509::stack_from_pem(&pem)
                .map_err(|e| format!("parsing CA file {}: {e}", file.display()))?;
            if certs.is_empty() {
                return Err(format!("CA file {} holds no certificate", file.display()));
            }
            for cert in certs {
                // Duplicates in a bundle are harmless; skip OpenSSL's complaint.
                let _ = builder.add_cert(cert);
            }
        } else if let Some(dir) = &dir {
            // No bundle file: fall back to a hashed directory, looked up lazily.
            let lookup = builder
                .add_lookup(X509Lookup::hash_dir())
                .map_err(|e| e.to_string())?;
            lookup
                .add_dir(&dir.to_string_lossy(), openssl::ssl::SslFiletype::PEM)
                .map_err(|e| format!("CA directory {}: {e}", dir.display()))?;
        } else {
            return Err("no CA certificates found; set SSL_CERT_FILE or use --cacert".into());
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

//! OCSP responses made at test time for the test server to staple: signed
//! by the test CA with the `openssl` CLI (the `openssl` crate cannot sign
//! one), for the leaf the server was just given. Tests that staple one call
//! `support::have("openssl")` (and `have("faketime")` for a stale one) first.
//!
//! The in-process server's OpenSSL (3.6) staples only a response that names
//! its certificate; [`StatusFileServer`] runs `openssl s_server
//! -status_file` instead, which staples whatever it is given (as older
//! servers do, e.g. the response of a certificate since replaced).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use openssl::x509::X509;

use super::pki::{ca, leaf, CertKind};

/// What the test server staples to every handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Staple {
    /// A response from the test CA, valid for a day, saying the leaf is good...
    Good,
    /// ...revoked...
    Revoked,
    /// ...or unknown to it.
    Unknown,
    /// Good, but made three days ago and valid for one (under `faketime`).
    Stale,
    /// Good, signed by a self-made responder that nothing trusts.
    UntrustedSigner,
    /// Good, signed by the test CA, about another serial than the leaf's
    /// (only [`StatusFileServer`] staples it).
    OtherCert,
    /// These bytes as they are (OpenSSL staples only what decodes as an
    /// OCSP response).
    Der(Vec<u8>),
}

/// An OCSP response that is well formed but holds no answer: the
/// responder's `tryLater` (RFC 6960), which carries no basic response.
pub const TRY_LATER: [u8; 5] = [0x30, 0x03, 0x0a, 0x01, 0x03];

/// A directory of its own for each response made in this process.
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("tlsping-ocsp-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One line of an `openssl ca` index: the leaf valid (`V`) or revoked (`R`).
fn index_line(leaf: &X509, revoked: bool) -> String {
    let serial = leaf.serial_number().to_bn().unwrap().to_hex_str().unwrap();
    let (kind, revoked_at) = if revoked {
        ("R", "240101000000Z")
    } else {
        ("V", "")
    };
    format!("{kind}\t300101000000Z\t{revoked_at}\t{serial}\tunknown\t/CN=localhost\n")
}

/// The DER response `staple` stands for, about `leaf` (issued by the test CA).
pub fn response(leaf: &X509, staple: &Staple) -> Vec<u8> {
    if let Staple::Der(bytes) = staple {
        return bytes.clone();
    }
    let dir = scratch();
    let ca = ca();
    std::fs::write(dir.join("ca.pem"), ca.cert.to_pem().unwrap()).unwrap();
    std::fs::write(
        dir.join("ca.key"),
        ca.key.private_key_to_pem_pkcs8().unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("leaf.pem"), leaf.to_pem().unwrap()).unwrap();
    let index = match staple {
        Staple::Revoked => index_line(leaf, true),
        Staple::Unknown => String::new(),
        _ => index_line(leaf, false),
    };
    std::fs::write(dir.join("index.txt"), index).unwrap();
    let (signer, key) = if *staple == Staple::UntrustedSigner {
        run(
            &dir,
            "openssl",
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "rogue.key",
                "-out",
                "rogue.pem",
                "-subj",
                "/CN=nobody's responder",
                "-days",
                "2",
            ],
        );
        ("rogue.pem", "rogue.key")
    } else {
        ("ca.pem", "ca.key")
    };
    let mut args = vec![
        "ocsp",
        "-index",
        "index.txt",
        "-rsigner",
        signer,
        "-rkey",
        key,
        "-CA",
        "ca.pem",
        "-issuer",
        "ca.pem",
        "-no_nonce",
        "-respout",
        "resp.der",
        "-ndays",
        "1",
    ];
    if *staple == Staple::OtherCert {
        args.extend(["-serial", "0x1234"]);
    } else {
        args.extend(["-cert", "leaf.pem"]);
    }
    if *staple == Staple::Stale {
        let mut faked = vec!["-f", "-3d", "openssl"];
        faked.extend(args);
        run(&dir, "faketime", &faked);
    } else {
        run(&dir, "openssl", &args);
    }
    let der = std::fs::read(dir.join("resp.der")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    der
}

/// `openssl s_server -www` on 127.0.0.1, a leaf from the test CA, stapling
/// a response to every full handshake (or, `with_flags`, none); killed when
/// dropped. It answers `GET` only (tlsping needs `-X GET`) and closes each
/// connection.
pub struct StatusFileServer {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

impl StatusFileServer {
    /// Staples `staple`; `with_chain` sends the test CA after the leaf, so
    /// a client without the CA's file still has the leaf's issuer.
    pub fn start(staple: &Staple, with_chain: bool) -> StatusFileServer {
        let (cert, key) = leaf(CertKind::Good);
        let der = response(&cert, staple);
        let mut args = vec!["-status_file", "resp.der"];
        if with_chain {
            args.extend(["-cert_chain", "chain.pem"]);
        }
        StatusFileServer::spawn((cert, key), &args, |dir| {
            std::fs::write(dir.join("resp.der"), &der).unwrap()
        })
    }

    /// `openssl s_server -www` with a leaf from the test CA and the flags
    /// `extra` (`-tls1_3`, `-Verify 1`), stapling nothing.
    pub fn with_flags(extra: &[&str]) -> StatusFileServer {
        StatusFileServer::spawn(leaf(CertKind::Good), extra, |_| {})
    }

    /// Writes the leaf, its key and the CA into a directory of its own
    /// (and what `more` adds), and starts the server there.
    fn spawn(
        (cert, key): (X509, openssl::pkey::PKey<openssl::pkey::Private>),
        extra: &[&str],
        more: impl FnOnce(&Path),
    ) -> StatusFileServer {
        let dir = scratch();
        std::fs::write(dir.join("leaf.pem"), cert.to_pem().unwrap()).unwrap();
        std::fs::write(
            dir.join("leaf.key"),
            key.private_key_to_pem_pkcs8().unwrap(),
        )
        .unwrap();
        std::fs::write(dir.join("chain.pem"), ca().cert.to_pem().unwrap()).unwrap();
        more(&dir);
        let mut args = vec![
            "s_server",
            "-accept",
            "127.0.0.1:0",
            "-cert",
            "leaf.pem",
            "-key",
            "leaf.key",
            "-www",
        ];
        args.extend_from_slice(extra);
        let mut child = Command::new("openssl")
            .args(&args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting openssl s_server");
        // It says where it listens before it accepts: `ACCEPT 127.0.0.1:<port>`.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = lines.by_ref().map_while(Result::ok).find_map(|line| {
            line.strip_prefix("ACCEPT 127.0.0.1:")
                .and_then(|p| p.trim().parse().ok())
        });
        let Some(port) = port else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("openssl s_server named no port");
        };
        // Whatever it says later is read and dropped, so it never blocks
        // on (or dies of) a full or closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        StatusFileServer { child, dir, port }
    }

    /// The URL on the address the leaf names (127.0.0.1).
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }
}

impl Drop for StatusFileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

//! The in-process test server (`tests/support/server.rs`) checked on its
//! own: the features the tests of the TLS controls lean on (group
//! restriction, client certificates, early data) and what it records of
//! every handshake, met by a small blocking client built on the `openssl`
//! crate, so a failure here points at the server, not at tlsping.
//!
//! Everything is on loopback.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::raw::c_int;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foreign_types::ForeignTypeRef;
use openssl::ssl::{
    SslConnector, SslFiletype, SslMethod, SslSession, SslSessionCacheMode, SslStream, SslVersion,
};
use support::pki::{client_identity, CLIENT_CN};
use support::server::EarlyData;
use support::{ca, handshakes, start, ServerOpts, TempDir};

// ------------------------------------------------- a small openssl client

extern "C" {
    // In libssl since 1.1.1; openssl-sys does not declare it.
    fn SSL_get_early_data_status(s: *const openssl_sys::SSL) -> c_int;
}

const HEAD: &[u8] = b"HEAD / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// How the test client is set up.
#[derive(Default)]
struct ClientOpts<'a> {
    groups: Option<&'a str>,
    max: Option<SslVersion>,
    alpn: Option<&'a [u8]>,
    identity: Option<(&'a Path, &'a Path)>,
}

/// A client trusting the test CA; sessions it is handed (TLS 1.3 tickets
/// arrive after the handshake) land in the returned list, as copies: OpenSSL
/// marks a client's own session objects unresumable behind its back (when a
/// newer ticket replaces one, or a connection is freed without a shutdown).
fn client(o: ClientOpts) -> (SslConnector, Arc<Mutex<Vec<SslSession>>>) {
    let mut b = SslConnector::builder(SslMethod::tls_client()).unwrap();
    b.set_ca_file(&ca().pem_path).unwrap();
    if let Some(groups) = o.groups {
        b.set_groups_list(groups).unwrap();
    }
    b.set_max_proto_version(o.max).unwrap();
    if let Some(alpn) = o.alpn {
        b.set_alpn_protos(alpn).unwrap();
    }
    if let Some((cert, key)) = o.identity {
        b.set_certificate_chain_file(cert).unwrap();
        b.set_private_key_file(key, SslFiletype::PEM).unwrap();
    }
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let keep = sessions.clone();
    b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
    b.set_new_session_callback(move |_, s| keep.lock().unwrap().push(copy(&s)));
    (b.build(), sessions)
}

/// Reads until the end of the response head (HEAD has no body); `None` when
/// the connection fails or ends first.
fn read_head(s: &mut SslStream<TcpStream>) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&got).into_owned())
}

/// A fresh copy of a session, resumable whatever became of the original.
fn copy(s: &SslSession) -> SslSession {
    SslSession::from_der(&s.to_der().unwrap()).unwrap()
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// One HEAD over a new connection (resuming `session` if given); the
/// response head, or `None` if the handshake or the exchange failed.
fn head_once(
    c: &SslConnector,
    addr: SocketAddr,
    session: Option<&SslSession>,
) -> Option<(String, bool)> {
    let mut ssl = c.configure().unwrap().into_ssl("localhost").unwrap();
    if let Some(s) = session {
        // SAFETY: the session came from a context with the same method.
        unsafe { ssl.set_session(&copy(s)).unwrap() };
    }
    let mut s = SslStream::new(ssl, tcp(addr)).unwrap();
    s.connect().ok()?;
    s.write_all(HEAD).ok()?;
    let head = read_head(&mut s)?;
    let _ = s.shutdown();
    Some((head, s.ssl().session_reused()))
}

// ------------------------------------------------ the server, directly

#[test]
fn server_records_version_alpn_and_group_of_every_handshake() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let (h2, _) = client(ClientOpts {
        alpn: Some(b"\x02h2\x08http/1.1"),
        ..Default::default()
    });
    // An h2 client that speaks HTTP/1.1 would be refused; the handshake is
    // all that matters here.
    let mut s = SslStream::new(
        h2.configure().unwrap().into_ssl("localhost").unwrap(),
        tcp(server.addr),
    )
    .unwrap();
    s.connect().unwrap();
    drop(s);
    assert_eq!(handshakes(&server, 1).len(), 1);
    let (tls12, _) = client(ClientOpts {
        alpn: Some(b"\x08http/1.1"),
        max: Some(SslVersion::TLS1_2),
        // P-256 too: in TLS 1.2 the client's groups also bound the curve of
        // an ECDSA certificate, and the test leaf is a P-256 one.
        groups: Some("P-384:P-256"),
        ..Default::default()
    });
    let (head, _) = head_once(&tls12, server.addr, None).expect("a TLS 1.2 exchange");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    let seen = handshakes(&server, 2);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert_eq!(seen[0].version, "TLSv1.3", "{seen:#?}");
    assert_eq!(seen[0].alpn.as_deref(), Some("h2"), "{seen:#?}");
    assert!(seen[0].group.is_some(), "{seen:#?}");
    assert!(!seen[0].resumed);
    assert_eq!(seen[0].early_data, EarlyData::NotSent);
    assert_eq!(seen[0].client_cert_subject, None);
    assert_eq!(seen[1].version, "TLSv1.2", "{seen:#?}");
    assert_eq!(seen[1].alpn.as_deref(), Some("http/1.1"), "{seen:#?}");
    assert_eq!(seen[1].group.as_deref(), Some("secp384r1"), "{seen:#?}");
}

#[test]
fn server_restricts_its_groups_to_the_list_it_is_given() {
    let server = start(ServerOpts {
        groups: Some("P-256".into()),
        ..Default::default()
    });
    // OpenSSL's default client offers key shares for other groups first:
    // the server asks again (HelloRetryRequest) for P-256.
    let (default_client, _) = client(ClientOpts::default());
    let (head, _) = head_once(&default_client, server.addr, None).expect("P-256 is in the list");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let seen = handshakes(&server, 1);
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(seen[0].group.as_deref(), Some("secp256r1"), "{seen:#?}");

    // A client with nothing in common gets no handshake.
    let (x25519_only, _) = client(ClientOpts {
        groups: Some("X25519"),
        ..Default::default()
    });
    assert!(head_once(&x25519_only, server.addr, None).is_none());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(server.counters.handshakes().len(), 1);
    assert_eq!(
        server
            .counters
            .failed_handshakes
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}

#[test]
fn server_requires_a_client_certificate_and_records_its_name() {
    let dir = TempDir::new("mtls-server");
    let (cert, key, client_ca) = client_identity(dir.path());
    assert_eq!(
        client_ca.subject_name().to_der().unwrap(),
        support::pki::client_ca().0.subject_name().to_der().unwrap()
    );
    let server = start(ServerOpts {
        require_client_cert: true,
        ..Default::default()
    });

    // Without a certificate: TLS 1.3 lets the client finish first, so the
    // refusal arrives when it reads; no response either way.
    let (anonymous, _) = client(ClientOpts::default());
    assert!(head_once(&anonymous, server.addr, None).is_none());
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.counters.handshakes().is_empty());
    assert_eq!(
        server
            .counters
            .failed_handshakes
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );

    let (with_id, sessions) = client(ClientOpts {
        identity: Some((&cert, &key)),
        ..Default::default()
    });
    let (head, resumed) = head_once(&with_id, server.addr, None).expect("a client certificate");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(!resumed);
    // And the session resumes, the certificate's name carried along (this
    // needs a session id context on the server).
    let session = sessions.lock().unwrap().last().cloned().expect("a ticket");
    let (head, resumed) =
        head_once(&with_id, server.addr, Some(&session)).expect("a resumed exchange");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(resumed, "the second connection resumes");

    let seen = handshakes(&server, 2);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert_eq!(seen[0].client_cert_subject.as_deref(), Some(CLIENT_CN));
    assert!(!seen[0].resumed);
    assert_eq!(seen[1].client_cert_subject.as_deref(), Some(CLIENT_CN));
    assert!(seen[1].resumed);
}

#[test]
fn server_refuses_a_client_certificate_from_another_ca() {
    let dir = TempDir::new("mtls-wrong-ca");
    let server = start(ServerOpts {
        require_client_cert: true,
        ..Default::default()
    });
    // The server's own leaf, signed by the server-side CA, as a client identity.
    let (leaf, leaf_key) = support::pki::leaf(support::CertKind::Good);
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, leaf.to_pem().unwrap()).unwrap();
    std::fs::write(&key, leaf_key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    let (wrong, _) = client(ClientOpts {
        identity: Some((&cert, &key)),
        ..Default::default()
    });
    assert!(head_once(&wrong, server.addr, None).is_none());
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.counters.handshakes().is_empty());
}

/// Resumes `session` sending `HEAD` as early data; returns the response head
/// and the client's early-data status (0 not sent, 1 rejected, 2 accepted).
/// A rejected request is sent again after the handshake, as clients must.
fn early_head(c: &SslConnector, addr: SocketAddr, session: &SslSession) -> (String, c_int) {
    assert!(session.max_early_data() > 0, "the ticket allows early data");
    let mut ssl = c.configure().unwrap().into_ssl("localhost").unwrap();
    // SAFETY: the session came from a context with the same method.
    unsafe { ssl.set_session(&copy(session)).unwrap() };
    ssl.set_connect_state();
    let mut s = SslStream::new(ssl, tcp(addr)).unwrap();
    let n = s.write_early_data(HEAD).expect("early data written");
    assert_eq!(n, HEAD.len());
    s.connect().expect("the handshake");
    // SAFETY: a live SSL; the call only reads its state.
    let status = unsafe { SSL_get_early_data_status(s.ssl().as_ptr()) };
    if status != 2 {
        s.write_all(HEAD).unwrap();
    }
    let head = read_head(&mut s).expect("a response");
    let _ = s.shutdown();
    (head, status)
}

#[test]
fn server_accepts_early_data_on_a_resumed_session_with_alpn() {
    let server = start(ServerOpts {
        early_data: true,
        ..Default::default()
    });
    let (c, sessions) = client(ClientOpts {
        alpn: Some(b"\x08http/1.1"),
        ..Default::default()
    });
    let (head, _) = head_once(&c, server.addr, None).expect("a first exchange");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let tickets: Vec<SslSession> = sessions.lock().unwrap().drain(..).collect();
    assert!(tickets.len() >= 2, "OpenSSL sends two tickets by default");

    let (head, status) = early_head(&c, server.addr, &tickets[0]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(status, 2, "the client saw its early data accepted");

    // The same ticket again: OpenSSL's anti-replay made it single use, so the
    // server has no session for it; the early data is rejected, the
    // handshake is full and the request is served all the same.
    let (head, status) = early_head(&c, server.addr, &tickets[0]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(status, 1, "a replayed ticket's early data is rejected");

    // A TLS 1.2 client meets the same server (no early data in 1.2).
    let (tls12, _) = client(ClientOpts {
        max: Some(SslVersion::TLS1_2),
        ..Default::default()
    });
    let (head, _) = head_once(&tls12, server.addr, None).expect("a TLS 1.2 exchange");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    let seen = handshakes(&server, 4);
    assert_eq!(seen.len(), 4, "{seen:#?}");
    assert_eq!(seen[3].version, "TLSv1.2", "{seen:#?}");
    assert_eq!(seen[3].early_data, EarlyData::NotSent, "{seen:#?}");
    assert_eq!(seen[0].early_data, EarlyData::NotSent, "{seen:#?}");
    assert_eq!(seen[1].early_data, EarlyData::Accepted, "{seen:#?}");
    assert!(seen[1].resumed, "{seen:#?}");
    assert_eq!(seen[1].alpn.as_deref(), Some("http/1.1"));
    assert_eq!(seen[1].early_bytes, HEAD.len(), "{seen:#?}");
    assert_eq!(seen[2].early_data, EarlyData::Rejected, "{seen:#?}");
    assert!(!seen[2].resumed, "{seen:#?}");
    assert_eq!(seen[2].early_bytes, 0, "{seen:#?}");
    // Four requests, the accepted early one among them, each answered once.
    let requests = server.counters.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(requests.iter().all(|(m, _)| m == "HEAD"), "{requests:?}");
}

#[test]
fn server_without_early_data_issues_tickets_that_allow_none() {
    let server = start(ServerOpts::default());
    let (c, sessions) = client(ClientOpts::default());
    head_once(&c, server.addr, None).expect("an exchange");
    let ticket = sessions.lock().unwrap().last().cloned().expect("a ticket");
    assert_eq!(ticket.max_early_data(), 0);
    let seen = handshakes(&server, 1);
    assert_eq!(seen[0].early_data, EarlyData::NotSent);
    assert_eq!(seen[0].early_bytes, 0);
}

#[test]
fn the_test_ca_folder_goes_when_the_test_binary_exits_even_after_a_failure() {
    // The CA is a static, never dropped: its folder must still go when the
    // process exits, also when a test failed. The child (this binary, this
    // test alone) makes the CA, says where its folder is, and fails.
    const NAME: &str = "the_test_ca_folder_goes_when_the_test_binary_exits_even_after_a_failure";
    if std::env::var_os("TLSPING_TEST_CA_CHILD").is_some() {
        let folder = support::ca().pem_path.parent().unwrap().to_path_buf();
        println!("\nca-folder {}", folder.display());
        panic!("failing on purpose");
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads", "1"])
        .env("TLSPING_TEST_CA_CHILD", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(101),
        "the child's test failed: {said}"
    );
    let folder = said
        .lines()
        .find_map(|l| l.split_once("ca-folder ").map(|(_, f)| f))
        .unwrap_or_else(|| panic!("the child named no folder: {said}"));
    assert!(folder.contains("tlsping-test-"), "{folder}");
    assert!(
        !Path::new(folder).exists(),
        "{folder} was left behind after the test binary exited"
    );
}

//! The calibration server as a client sees it: real TLS connections on
//! 127.0.0.1, with full verification of its own certificate.

use std::io::{ErrorKind, Read, Write};

use openssl::nid::Nid;
use openssl::ssl::{SslConnector, SslSession, SslStream};
use openssl::x509::store::X509StoreBuilder;

use super::connection::find_blank_line;
use super::*;

/// A client context that trusts only the server's own certificate.
fn connector(server: &FloorServer) -> SslConnector {
    let mut store = X509StoreBuilder::new().unwrap();
    store.add_cert(server.certificate().clone()).unwrap();
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_cert_store(store.build());
    builder.set_alpn_protos(b"\x02h2\x08http/1.1").unwrap();
    builder.build()
}

fn tcp(server: &FloorServer) -> TcpStream {
    let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, server.port())).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    tcp
}

/// Connects with full verification of the name `localhost`.
fn connect(server: &FloorServer) -> SslStream<TcpStream> {
    connector(server).connect("localhost", tcp(server)).unwrap()
}

/// Sends one request head and reads its answer: (status line, headers, body).
fn exchange(
    tls: &mut SslStream<TcpStream>,
    method: &str,
    extra: &str,
) -> (String, Vec<(String, String)>, Vec<u8>) {
    let request = format!("{method} / HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n");
    tls.write_all(request.as_bytes()).unwrap();
    tls.flush().unwrap();

    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    let head_end = loop {
        if let Some(at) = find_blank_line(&buf) {
            break at + 4;
        }
        let n = tls.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed before the response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let mut lines = head.trim_end().split("\r\n");
    let status = lines.next().unwrap().to_string();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    let mut body = buf[head_end..].to_vec();
    if method != "HEAD" {
        while body.len() < length {
            let n = tls.read(&mut chunk).unwrap();
            assert!(n > 0, "connection closed inside the body");
            body.extend_from_slice(&chunk[..n]);
        }
    }
    (status, headers, body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn head_then_get_on_one_connection() {
    let server = FloorServer::start().unwrap();
    let mut tls = connect(&server);
    assert_eq!(
        tls.ssl().selected_alpn_protocol(),
        Some(&b"http/1.1"[..]),
        "h2 must not be chosen"
    );

    let (status, headers, body) = exchange(&mut tls, "HEAD", "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        header(&headers, "content-length"),
        Some(BODY.len().to_string().as_str())
    );
    assert_eq!(header(&headers, "connection"), Some("keep-alive"));
    assert!(body.is_empty(), "HEAD answer carried a body");

    let (status, headers, body) = exchange(&mut tls, "GET", "Range: bytes=0-0\r\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        header(&headers, "content-length"),
        Some(BODY.len().to_string().as_str())
    );
    assert_eq!(header(&headers, "content-type"), Some("text/plain"));
    assert_eq!(body, BODY);

    assert_eq!(server.connections(), 1);
    assert_eq!(server.requests(), 2);
    assert_eq!(server.resumed(), 0);
}

#[test]
fn close_is_honoured_and_a_request_with_a_body_ends_its_connection() {
    let server = FloorServer::start().unwrap();
    for (method, extra) in [
        ("GET", "Connection: close\r\n"),
        // The body is never read (nor sent here): the answer ends the connection.
        ("POST", "Content-Length: 5\r\n"),
        ("POST", "Transfer-Encoding: chunked\r\n"),
    ] {
        let mut tls = connect(&server);
        let (status, headers, body) = exchange(&mut tls, method, extra);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(body, BODY);
        assert_eq!(header(&headers, "connection"), Some("close"), "{extra}");
        let mut rest = Vec::new();
        // The server sends close_notify and closes.
        assert_eq!(tls.read_to_end(&mut rest).unwrap(), 0, "{extra}");
    }
    assert_eq!(server.requests(), 3);
}

/// The client side of resumption: `set_session` is `unsafe` in the
/// `openssl` crate because the session must come from the same context,
/// which holds here (both connections use the one `connector`).
#[allow(unsafe_code)]
fn connect_resuming(
    connector: &SslConnector,
    session: &SslSession,
    tcp: TcpStream,
) -> SslStream<TcpStream> {
    let mut ssl = connector
        .configure()
        .unwrap()
        .into_ssl("localhost")
        .unwrap();
    // SAFETY: `session` was made by a connection from this same `connector`.
    unsafe { ssl.set_session(session).unwrap() };
    let mut tls = SslStream::new(ssl, tcp).unwrap();
    tls.connect().unwrap();
    tls
}

#[test]
fn tls13_with_resumption() {
    let server = FloorServer::start().unwrap();
    let connector = connector(&server);

    let mut first = connector.connect("localhost", tcp(&server)).unwrap();
    assert_eq!(first.ssl().version2(), Some(SslVersion::TLS1_3));
    assert!(!first.ssl().session_reused());
    // TLS 1.3 tickets come after the handshake; reading an answer takes them in.
    let (status, _, _) = exchange(&mut first, "GET", "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let session = first.ssl().session().unwrap().to_owned();

    let mut second = connect_resuming(&connector, &session, tcp(&server));
    assert_eq!(second.ssl().version2(), Some(SslVersion::TLS1_3));
    assert!(second.ssl().session_reused(), "client did not resume");
    let (status, _, body) = exchange(&mut second, "GET", "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, BODY);

    assert_eq!(server.resumed(), 1);
    assert_eq!(server.connections(), 2);
    assert_eq!(server.requests(), 2);
}

#[test]
fn drop_is_bounded_with_open_clients() {
    let server = FloorServer::start().unwrap();
    // One client mid-keep-alive, one that never starts its handshake.
    let mut idle = connect(&server);
    let _ = exchange(&mut idle, "GET", "");
    let _silent = tcp(&server);
    let started = Instant::now();
    drop(server);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "drop took {took:?}");
    // The server side of the kept-alive connection is gone as well: the
    // read ends (EOF, clean or not) instead of running into its timeout.
    idle.get_ref()
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut rest = Vec::new();
    if let Err(e) = idle.read_to_end(&mut rest) {
        assert!(
            !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "connection still open after drop: {e}"
        );
    }
    assert!(rest.is_empty());
}

#[test]
fn certificate_has_the_promised_shape() {
    let server = FloorServer::start().unwrap();
    let cert = server.certificate();
    let cn = cert
        .subject_name()
        .entries_by_nid(Nid::COMMONNAME)
        .next()
        .unwrap()
        .data()
        .to_string()
        .unwrap();
    assert_eq!(cn, "localhost");
    let names = cert.subject_alt_names().unwrap();
    assert!(names.iter().any(|n| n.dnsname() == Some("localhost")));
    assert!(names
        .iter()
        .any(|n| n.ipaddress() == Some(&[127, 0, 0, 1][..])));
    assert!(cert.verify(&cert.public_key().unwrap()).unwrap());
    assert_eq!(
        cert.signature_algorithm().object().nid(),
        Nid::ECDSA_WITH_SHA256
    );
    let now = Asn1Time::days_from_now(0).unwrap();
    let before = cert.not_before().diff(&now).unwrap();
    assert_eq!(before.days, 1, "not_before should be a day ago");
    let after = now.diff(cert.not_after()).unwrap();
    let after_secs = i64::from(after.days) * 86_400 + i64::from(after.secs);
    assert!(
        (after_secs - 30 * 86_400).abs() < 60,
        "not_after off by {after:?}"
    );
}

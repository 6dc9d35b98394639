//! What the built-in OpenSSL offers in a ClientHello, read off the wire.
//!
//! OpenSSL is configured with parts left out to keep the binary small
//! (build-support/openssl-configure, vendor-notes.md). None of them may change
//! what a handshake offers: these lists are the ClientHello of the build
//! before any part was left out, and a `no-*` option that drops a suite, a
//! group or a signature algorithm fails here.

mod support;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The fields of a ClientHello a configuration change could move.
#[derive(Debug, Default, PartialEq)]
struct Offer {
    cipher_suites: Vec<Code>,
    /// Extension types, in the order they were sent.
    extensions: Vec<Code>,
    groups: Vec<Code>,
    key_shares: Vec<Code>,
    signature_algorithms: Vec<Code>,
    versions: Vec<Code>,
    alpn: Vec<String>,
}

/// A 16-bit code point of the protocol, shown in hex as the registries list it.
#[derive(PartialEq)]
struct Code(u16);

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04x}", self.0)
    }
}

fn codes(list: &[u16]) -> Vec<Code> {
    list.iter().copied().map(Code).collect()
}

const TLS13_SUITES: [u16; 3] = [
    0x1302, // TLS_AES_256_GCM_SHA384
    0x1303, // TLS_CHACHA20_POLY1305_SHA256
    0x1301, // TLS_AES_128_GCM_SHA256
];

const TLS12_SUITES: [u16; 27] = [
    0xc02c, 0xc030, 0x009f, // ECDHE-ECDSA, ECDHE-RSA, DHE-RSA: AES256-GCM-SHA384
    0xcca9, 0xcca8, 0xccaa, // the same three with CHACHA20-POLY1305
    0xc02b, 0xc02f, 0x009e, // AES128-GCM-SHA256
    0xc024, 0xc028, 0x006b, // AES256 CBC, SHA384 (DHE: SHA256)
    0xc023, 0xc027, 0x0067, // AES128 CBC, SHA256
    0xc00a, 0xc014, 0x0039, // AES256 CBC, SHA1
    0xc009, 0xc013, 0x0033, // AES128 CBC, SHA1
    0x009d, 0x009c, // RSA key exchange: AES256-GCM-SHA384, AES128-GCM-SHA256
    0x003d, 0x003c, // AES256-SHA256, AES128-SHA256
    0x0035, 0x002f, // AES256-SHA, AES128-SHA
];

const EXTENSIONS: [u16; 13] = [
    0xff01, // renegotiation_info
    0,      // server_name
    11,     // ec_point_formats
    10,     // supported_groups
    5,      // status_request: tlsping asks every full handshake for an OCSP staple
    16,     // application_layer_protocol_negotiation
    22,     // encrypt_then_mac
    23,     // extended_master_secret
    49,     // post_handshake_auth
    13,     // signature_algorithms
    43,     // supported_versions
    45,     // psk_key_exchange_modes
    51,     // key_share
];

const DEFAULT_GROUPS: [u16; 8] = [
    0x11ec, // X25519MLKEM768
    0x001d, // x25519
    0x0017, // secp256r1
    0x001e, // x448
    0x0018, // secp384r1
    0x0019, // secp521r1
    0x0100, // ffdhe2048
    0x0101, // ffdhe3072
];

const SIGNATURE_ALGORITHMS: [u16; 26] = [
    0x0905, 0x0906, 0x0904, // mldsa65, mldsa87, mldsa44
    0x0403, 0x0503, 0x0603, // ecdsa_secp256r1_sha256, _secp384r1_sha384, _secp521r1_sha512
    0x0807, 0x0808, // ed25519, ed448
    0x081a, 0x081b, 0x081c, // ecdsa_brainpoolP256r1tls13_sha256, P384 sha384, P512 sha512
    0x0809, 0x080a, 0x080b, // rsa_pss_pss_sha256, sha384, sha512
    0x0804, 0x0805, 0x0806, // rsa_pss_rsae_sha256, sha384, sha512
    0x0401, 0x0501, 0x0601, // rsa_pkcs1_sha256, sha384, sha512
    0x0303, 0x0301, 0x0302, // ecdsa_sha224, rsa_pkcs1_sha224, dsa_sha224
    0x0402, 0x0502, 0x0602, // dsa_sha256, sha384, sha512
];

fn expected(groups: &[u16], key_shares: &[u16]) -> Offer {
    Offer {
        cipher_suites: codes(&[TLS13_SUITES.as_slice(), &TLS12_SUITES].concat()),
        extensions: codes(&EXTENSIONS),
        groups: codes(groups),
        key_shares: codes(key_shares),
        signature_algorithms: codes(&SIGNATURE_ALGORITHMS),
        versions: codes(&[0x0304, 0x0303]),
        alpn: vec!["h2".into(), "http/1.1".into()],
    }
}

#[test]
fn the_default_client_hello_offers_every_suite_group_and_signature_it_did() {
    let offer = client_hello(&[]);
    assert_eq!(offer, expected(&DEFAULT_GROUPS, &[0x11ec, 0x001d]));
}

#[test]
fn curves_still_reaches_every_family_of_group() {
    // Hybrid ML-KEM, brainpool, the larger finite-field groups, a binary
    // curve, secp256k1 and X448: one of each kind OpenSSL can offer.
    let curves = "X25519MLKEM768:SecP384r1MLKEM1024:brainpoolP512r1tls13:ffdhe8192:\
                  sect571r1:secp256k1:X448";
    let offer = client_hello(&["--curves", curves]);
    let groups = [0x11ec, 0x11ed, 0x0021, 0x0104, 0x000e, 0x0016, 0x001e];
    assert_eq!(offer, expected(&groups, &[0x11ec]));
}

/// The first ClientHello tlsping sends (its preflight's) with `args`, to a
/// listener that reads it and hangs up.
fn client_hello(args: &[&str]) -> Offer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let resolve = format!("localhost:{port}:127.0.0.1");
    let url = format!("https://localhost:{port}/");
    let mut cmd_args = vec!["-n", "1", "-w", "3s", "--resolve", &resolve];
    cmd_args.extend_from_slice(args);
    cmd_args.push(&url);
    let mut child = support::command(&cmd_args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let hello = accept(&listener).map(|mut conn| read_handshake_message(&mut conn));
    let _ = child.kill();
    let _ = child.wait();
    parse(&hello.expect("tlsping never connected"))
}

fn accept(listener: &TcpListener) -> Option<TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok((conn, _)) = listener.accept() {
            conn.set_nonblocking(false).unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            return Some(conn);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// The first handshake message, joined from as many records as it spans.
fn read_handshake_message(conn: &mut TcpStream) -> Vec<u8> {
    let mut message = Vec::new();
    loop {
        let mut header = [0u8; 5];
        conn.read_exact(&mut header).unwrap();
        assert_eq!(header[0], 22, "not a handshake record");
        let mut fragment = vec![0u8; usize::from(u16::from_be_bytes([header[3], header[4]]))];
        conn.read_exact(&mut fragment).unwrap();
        message.extend_from_slice(&fragment);
        if message.len() >= 4 {
            let body = u32::from_be_bytes([0, message[1], message[2], message[3]]) as usize;
            if message.len() >= 4 + body {
                message.truncate(4 + body);
                return message;
            }
        }
    }
}

fn parse(message: &[u8]) -> Offer {
    assert_eq!(message[0], 1, "not a ClientHello");
    let mut r = Reader(&message[4..]);
    r.take(2 + 32); // legacy_version, random
    let session_id = r.u8() as usize;
    r.take(session_id);
    let mut offer = Offer {
        cipher_suites: u16s(r.vec16()),
        ..Offer::default()
    };
    let compression = r.u8() as usize;
    r.take(compression);
    let mut extensions = Reader(r.vec16());
    while !extensions.0.is_empty() {
        let kind = extensions.u16();
        let mut body = Reader(extensions.vec16());
        offer.extensions.push(Code(kind));
        match kind {
            10 => offer.groups = u16s(body.vec16()),
            13 => offer.signature_algorithms = u16s(body.vec16()),
            43 => {
                let n = body.u8() as usize;
                offer.versions = u16s(body.take(n));
            }
            51 => {
                let mut shares = Reader(body.vec16());
                while !shares.0.is_empty() {
                    offer.key_shares.push(Code(shares.u16()));
                    shares.vec16();
                }
            }
            16 => {
                let mut names = Reader(body.vec16());
                while !names.0.is_empty() {
                    let n = names.u8() as usize;
                    offer
                        .alpn
                        .push(String::from_utf8_lossy(names.take(n)).into());
                }
            }
            _ => {}
        }
    }
    offer
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u16(&mut self) -> u16 {
        let b = self.take(2);
        u16::from_be_bytes([b[0], b[1]])
    }
    fn vec16(&mut self) -> &'a [u8] {
        let n = usize::from(self.u16());
        self.take(n)
    }
}

fn u16s(bytes: &[u8]) -> Vec<Code> {
    bytes
        .chunks_exact(2)
        .map(|b| Code(u16::from_be_bytes([b[0], b[1]])))
        .collect()
}

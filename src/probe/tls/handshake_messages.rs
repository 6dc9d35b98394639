//! What a handshake's own messages say about its shape, read from the bytes
//! OpenSSL's message callback passes (`handshake_stamps` feeds them in, one
//! call per record header or message): the server's record bytes, our
//! ClientHello's key shares, a HelloRetryRequest and the group it asks for,
//! the Certificate message's size, the signature scheme of the server's
//! CertificateVerify (TLS 1.2: its ServerKeyExchange) and its Finished.
//!
//! Pure and small: no FFI, no allocation, fixed-size facts only (this runs
//! inside the timed handshake). Every length is read from the bytes at hand
//! and checked against them: a message that does not add up leaves its fact
//! unknown (`None`) and sets `malformed`, never a panic or a read past the
//! slice.

/// The message callback's pseudo content type of a record header (ssl3.h).
pub const RT_HEADER: i32 = 0x100;
/// The content type of a handshake message.
pub const RT_HANDSHAKE: i32 = 22;

/// How many of our ClientHello's key shares are kept (OpenSSL sends one or
/// two by default).
pub const MAX_SHARES: usize = 4;

/// RFC 8446 4.1.3: the `random` of a ServerHello that is a HelloRetryRequest.
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
const CERTIFICATE: u8 = 11;
const SERVER_KEY_EXCHANGE: u8 = 12;
const CERTIFICATE_VERIFY: u8 = 15;
const FINISHED: u8 = 20;
const NEW_SESSION_TICKET: u8 = 4;
const KEY_SHARE: u16 = 0x0033;
const EARLY_DATA: u16 = 0x002a;

/// The key-exchange groups of our ClientHello's key shares, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shares {
    groups: [u16; MAX_SHARES],
    len: u8,
}

impl Shares {
    pub fn as_slice(&self) -> &[u16] {
        &self.groups[..usize::from(self.len)]
    }

    fn push(&mut self, group: u16) {
        if usize::from(self.len) < MAX_SHARES {
            self.groups[usize::from(self.len)] = group;
            self.len += 1;
        }
    }
}

/// What the messages of one handshake said so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageFacts {
    /// Our first ClientHello's key shares; `None` until it is read (or when
    /// it could not be).
    pub sent_shares: Option<Shares>,
    /// The server answered with a HelloRetryRequest.
    pub hello_retry: bool,
    /// The group the HelloRetryRequest asks for (`None`: unreadable).
    pub retry_group: Option<u16>,
    /// The Certificate message's size, its 4-byte header included.
    pub cert_bytes: Option<u32>,
    /// The server's signature scheme (TLS 1.3 CertificateVerify, TLS 1.2
    /// ServerKeyExchange).
    pub sig_scheme: Option<u16>,
    /// The server's Finished was read.
    pub server_finished: bool,
    /// Every server record (header included) up to and including the one
    /// that carried its Finished.
    pub server_record_bytes: u32,
    /// A message did not add up (its facts are left unknown).
    pub malformed: bool,
}

impl MessageFacts {
    /// Nothing read yet.
    pub const EMPTY: MessageFacts = MessageFacts {
        sent_shares: None,
        hello_retry: false,
        retry_group: None,
        cert_bytes: None,
        sig_scheme: None,
        server_finished: false,
        server_record_bytes: 0,
        malformed: false,
    };

    /// A record header or message from the server; returns the bytes of the
    /// record it announced (0 for anything but a record header, or once the
    /// server's Finished is in).
    pub fn server(&mut self, content_type: i32, data: &[u8]) -> u32 {
        match content_type {
            RT_HEADER => {
                if self.server_finished {
                    return 0;
                }
                match record_len(data) {
                    Some(n) => {
                        self.server_record_bytes = self.server_record_bytes.saturating_add(n);
                        n
                    }
                    None => {
                        self.malformed = true;
                        0
                    }
                }
            }
            RT_HANDSHAKE => {
                self.server_message(data);
                0
            }
            _ => 0,
        }
    }

    /// A message of ours: only our first ClientHello is read (its key shares).
    pub fn ours(&mut self, content_type: i32, data: &[u8]) {
        if content_type != RT_HANDSHAKE || self.sent_shares.is_some() {
            return;
        }
        if data.first() == Some(&CLIENT_HELLO) {
            self.sent_shares = client_shares(data);
            self.malformed |= self.sent_shares.is_none();
        }
    }

    fn server_message(&mut self, data: &[u8]) {
        let Some((kind, body)) = message(data) else {
            self.malformed = true;
            return;
        };
        let read = match kind {
            SERVER_HELLO => self.server_hello(body),
            CERTIFICATE => {
                // The whole message, header included (`message` checked
                // that the slice is exactly it).
                self.cert_bytes = u32::try_from(data.len()).ok();
                Some(())
            }
            CERTIFICATE_VERIFY => {
                self.sig_scheme = Reader::new(body).u16();
                self.sig_scheme.map(drop)
            }
            SERVER_KEY_EXCHANGE => {
                self.sig_scheme = key_exchange_scheme(body);
                self.sig_scheme.map(drop)
            }
            FINISHED => {
                self.server_finished = true;
                Some(())
            }
            _ => Some(()),
        };
        self.malformed |= read.is_none();
    }

    /// A ServerHello: a HelloRetryRequest names the group it wants.
    fn server_hello(&mut self, body: &[u8]) -> Option<()> {
        let mut r = Reader::new(body);
        r.take(2)?; // legacy_version
        if r.take(32)? != HRR_RANDOM {
            return Some(());
        }
        self.hello_retry = true;
        let session_id = r.u8()?;
        r.take(usize::from(session_id))?;
        r.take(2 + 1)?; // cipher_suite, legacy_compression_method
        let mut exts = Reader::new(r.vec16()?);
        while !exts.is_empty() {
            let kind = exts.u16()?;
            let data = exts.vec16()?;
            if kind == KEY_SHARE {
                self.retry_group = Some(Reader::new(data).u16()?);
            }
        }
        Some(())
    }
}

/// A TLS 1.3 NewSessionTicket (RFC 8446 4.6.1), read after the handshake:
/// how much early data a resumption with it may send (its `early_data`
/// extension's `max_early_data_size`; 0 without one). `None` for any other
/// message, or one that does not add up.
pub fn ticket_early_data(data: &[u8]) -> Option<u32> {
    let (kind, body) = message(data)?;
    if kind != NEW_SESSION_TICKET {
        return None;
    }
    let mut r = Reader::new(body);
    r.take(4 + 4)?; // ticket_lifetime, ticket_age_add
    r.vec8()?; // ticket_nonce
    r.vec16()?; // ticket
    let mut exts = Reader::new(r.vec16()?);
    let mut max = 0;
    while !exts.is_empty() {
        let kind = exts.u16()?;
        let data = exts.vec16()?;
        if kind == EARLY_DATA {
            max = Reader::new(data).u32()?;
        }
    }
    r.is_empty().then_some(max)
}

/// A record header's announced size, the 5-byte header included.
pub fn record_len(header: &[u8]) -> Option<u32> {
    let mut r = Reader::new(header);
    r.take(3)?; // content type, legacy version
    let len = r.u16()?;
    Some(5 + u32::from(len))
}

/// A handshake message's type and body, when the slice is exactly one
/// message (its 24-bit length agrees with what is there).
fn message(data: &[u8]) -> Option<(u8, &[u8])> {
    let mut r = Reader::new(data);
    let kind = r.u8()?;
    let len = r.u24()?;
    let body = r.take(len as usize)?;
    r.is_empty().then_some((kind, body))
}

/// Our ClientHello's key-share groups, in order (at most `MAX_SHARES`).
fn client_shares(data: &[u8]) -> Option<Shares> {
    let (_, body) = message(data)?;
    let mut r = Reader::new(body);
    r.take(2 + 32)?; // legacy_version, random
    r.vec8()?; // legacy_session_id
    r.vec16()?; // cipher_suites
    r.vec8()?; // legacy_compression_methods
    let mut shares = Shares::default();
    let mut exts = Reader::new(r.vec16()?);
    while !exts.is_empty() {
        let kind = exts.u16()?;
        let data = exts.vec16()?;
        if kind == KEY_SHARE {
            let mut entries = Reader::new(Reader::new(data).vec16()?);
            while !entries.is_empty() {
                let group = entries.u16()?;
                entries.vec16()?; // key_exchange
                shares.push(group);
            }
        }
    }
    Some(shares)
}

/// TLS 1.2 ServerKeyExchange: the signature scheme after the key-exchange
/// parameters (ECDHE's named curve and point, or DHE's p, g and Ys), taken
/// only when the signature then ends the message exactly.
fn key_exchange_scheme(body: &[u8]) -> Option<u16> {
    let ecdhe = || {
        let mut r = Reader::new(body);
        (r.u8()? == 3).then_some(())?; // named_curve
        r.take(2)?;
        r.vec8()?; // the public point
        signed_end(r)
    };
    let dhe = || {
        let mut r = Reader::new(body);
        for _ in 0..3 {
            r.vec16()?; // dh_p, dh_g, dh_Ys
        }
        signed_end(r)
    };
    ecdhe().or_else(dhe)
}

/// The scheme of a `DigitallySigned` that ends the message.
fn signed_end(mut r: Reader<'_>) -> Option<u16> {
    let scheme = r.u16()?;
    r.vec16()?;
    r.is_empty().then_some(scheme)
}

/// A cursor over a byte slice: every read is checked, none panics.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b }
    }

    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u24(&mut self) -> Option<u32> {
        self.take(3)
            .map(|b| u32::from_be_bytes([0, b[0], b[1], b[2]]))
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
}

/// A key-exchange group by its TLS code point, as `--curves` spells it
/// (the NIST curves as P-256, P-384, P-521; the rest as OpenSSL names
/// them); `None` for one it does not know (shown in hex).
pub fn group_name(code: u16) -> Option<&'static str> {
    Some(match code {
        0x0017 => "P-256",
        0x0018 => "P-384",
        0x0019 => "P-521",
        0x001a => "brainpoolP256r1",
        0x001b => "brainpoolP384r1",
        0x001c => "brainpoolP512r1",
        0x001d => "X25519",
        0x001e => "X448",
        0x001f => "brainpoolP256r1tls13",
        0x0020 => "brainpoolP384r1tls13",
        0x0021 => "brainpoolP512r1tls13",
        0x0100 => "ffdhe2048",
        0x0101 => "ffdhe3072",
        0x0102 => "ffdhe4096",
        0x0103 => "ffdhe6144",
        0x0104 => "ffdhe8192",
        0x0200 => "MLKEM512",
        0x0201 => "MLKEM768",
        0x0202 => "MLKEM1024",
        0x11eb => "SecP256r1MLKEM768",
        0x11ec => "X25519MLKEM768",
        0x11ed => "SecP384r1MLKEM1024",
        _ => return None,
    })
}

/// A TLS SignatureScheme by its code point (RFC 8446 names); `None` for one
/// not listed (shown in hex).
pub fn sig_scheme_name(code: u16) -> Option<&'static str> {
    Some(match code {
        0x0201 => "rsa_pkcs1_sha1",
        0x0203 => "ecdsa_sha1",
        0x0401 => "rsa_pkcs1_sha256",
        0x0501 => "rsa_pkcs1_sha384",
        0x0601 => "rsa_pkcs1_sha512",
        0x0403 => "ecdsa_secp256r1_sha256",
        0x0503 => "ecdsa_secp384r1_sha384",
        0x0603 => "ecdsa_secp521r1_sha512",
        0x0804 => "rsa_pss_rsae_sha256",
        0x0805 => "rsa_pss_rsae_sha384",
        0x0806 => "rsa_pss_rsae_sha512",
        0x0807 => "ed25519",
        0x0808 => "ed448",
        0x0809 => "rsa_pss_pss_sha256",
        0x080a => "rsa_pss_pss_sha384",
        0x080b => "rsa_pss_pss_sha512",
        0x081a => "ecdsa_brainpoolP256r1tls13_sha256",
        0x081b => "ecdsa_brainpoolP384r1tls13_sha384",
        0x081c => "ecdsa_brainpoolP512r1tls13_sha512",
        0x0904 => "mldsa44",
        0x0905 => "mldsa65",
        0x0906 => "mldsa87",
        _ => return None,
    })
}

/// A code point's name, or `0x` and four hex digits.
pub fn name_or_hex(name: Option<&'static str>, code: u16) -> std::borrow::Cow<'static, str> {
    match name {
        Some(n) => n.into(),
        None => format!("0x{code:04x}").into(),
    }
}

#[cfg(test)]
#[path = "handshake_messages_tests.rs"]
mod tests;

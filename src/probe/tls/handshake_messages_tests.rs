use super::*;

fn u16b(v: u16) -> [u8; 2] {
    v.to_be_bytes()
}

fn vec16(body: &[u8]) -> Vec<u8> {
    let mut v = u16b(body.len() as u16).to_vec();
    v.extend_from_slice(body);
    v
}

fn handshake(kind: u8, body: &[u8]) -> Vec<u8> {
    let n = body.len() as u32;
    let mut v = vec![kind, (n >> 16) as u8, (n >> 8) as u8, n as u8];
    v.extend_from_slice(body);
    v
}

fn ext(kind: u16, data: &[u8]) -> Vec<u8> {
    let mut v = u16b(kind).to_vec();
    v.extend(vec16(data));
    v
}

/// A ClientHello with key shares for `groups` (32-byte dummy keys) and
/// another extension before them.
fn client_hello(groups: &[u16]) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend([7u8; 32]);
    body.push(32);
    body.extend([1u8; 32]);
    body.extend(vec16(&[0x13, 0x01, 0x13, 0x02]));
    body.extend([1, 0]);
    let mut entries = Vec::new();
    for &g in groups {
        entries.extend(u16b(g));
        entries.extend(vec16(&[9u8; 32]));
    }
    let mut exts = ext(0x000a, &[0, 2, 0, 0x1d]);
    exts.extend(ext(KEY_SHARE, &vec16(&entries)));
    body.extend(vec16(&exts));
    handshake(CLIENT_HELLO, &body)
}

fn server_hello(random: [u8; 32], key_share: &[u8]) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend(random);
    body.push(0);
    body.extend([0x13, 0x01, 0]);
    let mut exts = ext(0x002b, &[3, 4]);
    exts.extend(ext(KEY_SHARE, key_share));
    body.extend(vec16(&exts));
    handshake(SERVER_HELLO, &body)
}

#[test]
fn our_key_shares_are_read_in_order() {
    let mut m = MessageFacts::default();
    m.ours(RT_HANDSHAKE, &client_hello(&[0x11ec, 0x001d]));
    assert_eq!(m.sent_shares.unwrap().as_slice(), &[0x11ec, 0x001d]);
    // The second ClientHello (after a HelloRetryRequest) changes nothing.
    m.ours(RT_HANDSHAKE, &client_hello(&[0x0018]));
    assert_eq!(m.sent_shares.unwrap().as_slice(), &[0x11ec, 0x001d]);
    assert!(!m.malformed);
}

#[test]
fn more_shares_than_kept_keep_the_first_ones() {
    let mut m = MessageFacts::default();
    m.ours(RT_HANDSHAKE, &client_hello(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(m.sent_shares.unwrap().as_slice(), &[1, 2, 3, 4]);
}

#[test]
fn a_hello_retry_request_names_its_group() {
    let mut m = MessageFacts::default();
    m.server(RT_HANDSHAKE, &server_hello(HRR_RANDOM, &u16b(0x0018)));
    assert!(m.hello_retry);
    assert_eq!(m.retry_group, Some(0x0018));
    assert_eq!(group_name(0x0018), Some("P-384"));
    let mut plain = MessageFacts::default();
    plain.server(RT_HANDSHAKE, &server_hello([5; 32], &[0, 0x1d, 0, 1, 9]));
    assert!(!plain.hello_retry && !plain.malformed);
}

#[test]
fn records_count_until_the_servers_finished() {
    let mut m = MessageFacts::default();
    assert_eq!(m.server(RT_HEADER, &[22, 3, 3, 0, 90]), 95);
    assert_eq!(m.server(RT_HEADER, &[23, 3, 3, 0x40, 0x11]), 5 + 0x4011);
    m.server(RT_HANDSHAKE, &handshake(CERTIFICATE, &[0u8; 3000]));
    m.server(
        RT_HANDSHAKE,
        &handshake(CERTIFICATE_VERIFY, &[0x08, 0x04, 0, 1, 0xaa]),
    );
    m.server(RT_HANDSHAKE, &handshake(FINISHED, &[0u8; 32]));
    assert_eq!(m.server(RT_HEADER, &[23, 3, 3, 1, 0]), 0, "after Finished");
    assert_eq!(m.server_record_bytes, 95 + 5 + 0x4011);
    assert_eq!(m.cert_bytes, Some(3004));
    assert_eq!(m.sig_scheme, Some(0x0804));
    assert_eq!(sig_scheme_name(0x0804), Some("rsa_pss_rsae_sha256"));
    assert!(m.server_finished && !m.malformed);
}

#[test]
fn tls12_key_exchange_gives_its_signature_scheme() {
    // ECDHE: named_curve secp256r1, a 65-byte point, then rsa_pkcs1_sha256.
    let mut body = vec![3, 0, 0x17, 65];
    body.extend([4u8; 65]);
    body.extend(u16b(0x0401));
    body.extend(vec16(&[1u8; 256]));
    let mut m = MessageFacts::default();
    m.server(RT_HANDSHAKE, &handshake(SERVER_KEY_EXCHANGE, &body));
    assert_eq!(m.sig_scheme, Some(0x0401));
    // DHE: p, g, Ys, then rsa_pss_rsae_sha256.
    let mut body = vec16(&[0xffu8; 256]);
    body.extend(vec16(&[2]));
    body.extend(vec16(&[0x11u8; 256]));
    body.extend(u16b(0x0804));
    body.extend(vec16(&[1u8; 256]));
    let mut m = MessageFacts::default();
    m.server(RT_HANDSHAKE, &handshake(SERVER_KEY_EXCHANGE, &body));
    assert_eq!(m.sig_scheme, Some(0x0804));
}

#[test]
fn hostile_messages_leave_facts_unknown() {
    let ch = client_hello(&[0x001d]);
    // Every truncation of a ClientHello, HRR and CertificateVerify.
    let hrr = server_hello(HRR_RANDOM, &u16b(0x0018));
    for cut in 0..ch.len() {
        let mut m = MessageFacts::default();
        m.ours(RT_HANDSHAKE, &ch[..cut]);
        assert_eq!(m.sent_shares, None, "cut {cut}");
    }
    for cut in 0..hrr.len() {
        let mut m = MessageFacts::default();
        m.server(RT_HANDSHAKE, &hrr[..cut]);
        assert_eq!(m.retry_group, None, "cut {cut}");
        assert!(m.malformed, "cut {cut}");
    }
    // Lengths past the buffer: the message's own, an extension's, a vector's.
    let mut m = MessageFacts::default();
    m.server(RT_HANDSHAKE, &[CERTIFICATE, 0xff, 0xff, 0xff, 1, 2, 3]);
    assert_eq!(m.cert_bytes, None);
    assert!(m.malformed);
    let mut long_ext = ch.clone();
    let at = long_ext.len() - 2 - 2 - 2 - 32; // the key share's vector length
    long_ext[at] = 0xff;
    let mut m = MessageFacts::default();
    m.ours(RT_HANDSHAKE, &long_ext);
    assert_eq!(m.sent_shares, None);
    // A huge share count made of zero-length entries stops at the slice.
    let mut entries = Vec::new();
    for _ in 0..15_000 {
        entries.extend([0, 0x1d, 0, 0]);
    }
    let mut body = vec![3, 3];
    body.extend([0u8; 32]);
    body.extend([0, 0, 2, 0x13, 1, 1, 0]);
    body.extend(vec16(&ext(KEY_SHARE, &vec16(&entries[..60_000]))));
    let mut m = MessageFacts::default();
    m.ours(RT_HANDSHAKE, &handshake(CLIENT_HELLO, &body));
    assert_eq!(m.sent_shares.unwrap().as_slice(), &[0x1d; 4]);
    // A short record header, an empty message, a key exchange that does
    // not end where its signature does.
    let mut m = MessageFacts::default();
    assert_eq!(m.server(RT_HEADER, &[22, 3]), 0);
    m.server(RT_HANDSHAKE, &[]);
    m.server(
        RT_HANDSHAKE,
        &handshake(SERVER_KEY_EXCHANGE, &[3, 0, 0x17, 200]),
    );
    assert_eq!(m.sig_scheme, None);
    assert!(m.malformed);
    assert_eq!(m.server_record_bytes, 0);
}

#[test]
fn unknown_code_points_are_shown_in_hex() {
    assert_eq!(name_or_hex(group_name(0x1234), 0x1234), "0x1234");
    assert_eq!(name_or_hex(group_name(0x001d), 0x001d), "X25519");
    assert_eq!(name_or_hex(sig_scheme_name(0xfe01), 0xfe01), "0xfe01");
}

/// Random bytes, and valid messages with random bytes flipped, in every
/// position the callback can pass them: nothing panics, and nothing counted
/// exceeds what was given.
#[test]
fn random_and_mutated_input_is_survived() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let valid = [
        client_hello(&[0x11ec, 0x001d]),
        server_hello(HRR_RANDOM, &u16b(0x0018)),
        handshake(CERTIFICATE_VERIFY, &[0x08, 0x04, 0, 1, 0xaa]),
        handshake(SERVER_KEY_EXCHANGE, &[3, 0, 0x17, 1, 4, 4, 1, 0, 1, 9]),
    ];
    for round in 0..20_000 {
        let mut data = if round % 2 == 0 {
            let len = (next() % 300) as usize;
            (0..len).map(|_| next() as u8).collect::<Vec<u8>>()
        } else {
            valid[(next() % valid.len() as u64) as usize].clone()
        };
        for _ in 0..(next() % 4) {
            if !data.is_empty() {
                let at = (next() % data.len() as u64) as usize;
                data[at] = next() as u8;
            }
        }
        let cut = (next() % (data.len() as u64 + 1)) as usize;
        let data = &data[..cut];
        let mut m = MessageFacts::default();
        m.ours(RT_HANDSHAKE, data);
        assert!(m.server(RT_HEADER, data) <= 5 + 0xffff);
        m.server(RT_HANDSHAKE, data);
        if let Some(n) = m.cert_bytes {
            assert_eq!(n as usize, data.len());
        }
        if let Some(shares) = m.sent_shares {
            assert!(shares.as_slice().len() <= MAX_SHARES);
        }
    }
}

/// A TLS 1.3 NewSessionTicket, with an early_data extension of `max` when given.
fn ticket(max: Option<u32>) -> Vec<u8> {
    let mut body = 7200u32.to_be_bytes().to_vec();
    body.extend(9u32.to_be_bytes());
    body.extend([1, 0]); // nonce
    body.extend(vec16(&[5u8; 40]));
    let exts = max.map_or(Vec::new(), |m| ext(EARLY_DATA, &m.to_be_bytes()));
    body.extend(vec16(&exts));
    handshake(NEW_SESSION_TICKET, &body)
}

#[test]
fn a_ticket_says_how_much_early_data_it_allows() {
    assert_eq!(ticket_early_data(&ticket(Some(16_384))), Some(16_384));
    assert_eq!(ticket_early_data(&ticket(None)), Some(0));
    // Not a ticket, cut short, or a length past its bytes: nothing.
    assert_eq!(ticket_early_data(&handshake(FINISHED, &[0; 32])), None);
    let t = ticket(Some(1));
    for cut in 0..t.len() {
        assert_eq!(ticket_early_data(&t[..cut]), None, "cut at {cut}");
    }
    let mut long = t.clone();
    long[3] += 1;
    assert_eq!(ticket_early_data(&long), None);
}

//! What a server (or a middlebox) controls in a handshake: the bytes
//! OpenSSL's message callback lends us, fed to the same parser the probes
//! use, as any sequence of record headers and messages in either
//! direction. It must never panic or read past a slice, and what it counts
//! must stay within what it was given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsping::probe::handshake_messages::{
    group_name, name_or_hex, sig_scheme_name, ticket_early_data, MessageFacts, RT_HANDSHAKE,
    RT_HEADER, MAX_SHARES,
};

fuzz_target!(|data: &[u8]| {
    let mut facts = MessageFacts::default();
    let mut headers = 0u64;
    // Each piece: one byte of framing (direction, content type, length),
    // then that many bytes (or what is left).
    let mut rest = data;
    while let Some((&frame, tail)) = rest.split_first() {
        let len = usize::from(frame >> 2) * 7 % (tail.len() + 1);
        let (piece, after) = tail.split_at(len);
        rest = after;
        match frame & 3 {
            0 => {
                let n = facts.server(RT_HEADER, piece);
                assert!(n <= 5 + 0xffff);
                headers += 1;
            }
            1 => {
                assert_eq!(facts.server(RT_HANDSHAKE, piece), 0);
                // A post-handshake message: a NewSessionTicket's early
                // data allowance, or nothing.
                let _ = ticket_early_data(piece);
            }
            2 => facts.ours(RT_HANDSHAKE, piece),
            _ => {
                facts.server(frame.into(), piece);
            }
        }
    }
    assert!(u64::from(facts.server_record_bytes) <= headers * (5 + 0xffff));
    if let Some(shares) = facts.sent_shares {
        assert!(shares.as_slice().len() <= MAX_SHARES);
    }
    if let Some(n) = facts.cert_bytes {
        assert!(n as usize <= data.len());
    }
    for code in [facts.retry_group, facts.sig_scheme].into_iter().flatten() {
        let _ = name_or_hex(group_name(code), code);
        let _ = name_or_hex(sig_scheme_name(code), code);
    }
});

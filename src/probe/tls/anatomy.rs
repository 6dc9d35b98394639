//! Why a handshake cost what it did (`HandshakeAnatomy`), derived once the
//! transfer is over: from the handshake's shape (`handshake_stamps`), the
//! version it negotiated, the client's own work inside `tls` and the
//! kernel's min RTT. Nothing here runs inside a timed interval.
//!
//! The round trips are the waits on the server: each wait that began after
//! a send of ours (a ClientHello, a second one after a HelloRetryRequest,
//! TLS 1.2's Finished flight) and ended with server data is one; a wait in
//! the middle of a server flight is one more, the congestion window's
//! (`initial_window`), when it lasted at least max(½ × min RTT, 1 ms) with
//! at least 4000 bytes of that flight already arriving.

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::x509::X509Ref;

use super::handshake_stamps::{Shape, GAP_MIN_US};
use super::stages::Stages;
use super::types::{HandshakeAnatomy, TlsExtra, TlsFacts};

/// What one handshake's facts say, with the kernel's min RTT (µs) of its
/// connection and the leaf certificate the server sent.
pub(crate) fn derive(
    shape: &Shape,
    tls: &TlsFacts,
    stages: &Stages,
    min_rtt_us: Option<u32>,
    leaf: Option<&X509Ref>,
) -> HandshakeAnatomy {
    let m = &shape.messages;
    let (round_trips, extra) = match round_trips(shape, tls, min_rtt_us) {
        Some((n, extra)) => (Some(n), Some(extra)),
        None => (None, None),
    };
    HandshakeAnatomy {
        round_trips,
        extra,
        server_handshake: server_time(stages, round_trips, min_rtt_us),
        sig_alg: m.sig_scheme,
        server_key: if tls.resumed {
            None
        } else {
            leaf.and_then(key_label)
        },
        cert_bytes: m.cert_bytes,
        server_flight_bytes: m.server_finished.then_some(m.server_record_bytes),
        unreadable: m.malformed,
    }
}

/// The round trips and every one beyond the first, named; `None` where the
/// handshake's shape cannot tell (no server Finished read, a long gap left
/// out for want of room that would count, or a long gap to judge without a
/// min RTT).
fn round_trips(
    shape: &Shape,
    tls: &TlsFacts,
    min_rtt_us: Option<u32>,
) -> Option<(u8, Vec<TlsExtra>)> {
    let m = &shape.messages;
    if shape.answered_waits == 0 || !m.server_finished {
        return None;
    }
    let mut extra = Vec::new();
    if m.hello_retry {
        extra.push(TlsExtra::HelloRetry {
            group: m.retry_group,
            sent: m.sent_shares.map_or(Vec::new(), |s| s.as_slice().to_vec()),
        });
    }
    // A full TLS 1.2 handshake has its second round trip whether or not a
    // wait for it was seen (on a fast path the answer can be in the socket
    // before the client would wait); a resumed one has none.
    if tls.version == "TLSv1.2" && (shape.answered_waits >= 2 || !tls.resumed) {
        extra.push(TlsExtra::Tls12);
    }
    let gaps = shape.gaps();
    if !gaps.is_empty() {
        let threshold = (u64::from(min_rtt_us?) / 2).max(GAP_MIN_US);
        // A gap left out for want of room would have counted: unknown.
        if u64::from(shape.longest_dropped_us) >= threshold {
            return None;
        }
        for gap in gaps.iter().filter(|g| u64::from(g.us) >= threshold) {
            extra.push(TlsExtra::InitialWindow {
                flight_bytes: shape.flight_bytes[usize::from(gap.flight)],
            });
        }
    }
    let windows = extra
        .iter()
        .filter(|e| matches!(e, TlsExtra::InitialWindow { .. }))
        .count();
    // The protocol's own round trips happened even where a wait for one
    // went unseen: a HelloRetryRequest and TLS 1.2 each add one to the first.
    let protocol = 1 + extra.len() - windows;
    let n = usize::from(shape.answered_waits).max(protocol) + windows;
    Some((u8::try_from(n).unwrap_or(u8::MAX), extra))
}

/// `tls` less the client's set-up and finish less the round trips at the
/// kernel's min RTT, floored at 0; `None` when an input is missing.
fn server_time(
    stages: &Stages,
    round_trips: Option<u8>,
    min_rtt_us: Option<u32>,
) -> Option<std::time::Duration> {
    let with_rtt = Stages {
        min_rtt: Some(min_rtt_us?),
        ..*stages
    };
    let us = with_rtt.server_handshake(round_trips?)?;
    Some(std::time::Duration::from_micros(u64::from(us)))
}

/// The leaf's key as people name it: `RSA-4096`, `EC P-256`, `Ed25519`.
fn key_label(leaf: &X509Ref) -> Option<String> {
    let key = leaf.public_key().ok()?;
    Some(match key.id() {
        Id::RSA => format!("RSA-{}", key.bits()),
        Id::DSA => format!("DSA-{}", key.bits()),
        Id::ED25519 => "Ed25519".to_string(),
        Id::ED448 => "Ed448".to_string(),
        Id::EC => {
            let curve = key.ec_key().ok()?.group().curve_name();
            let name = match curve {
                Some(Nid::X9_62_PRIME256V1) => "P-256".to_string(),
                Some(Nid::SECP384R1) => "P-384".to_string(),
                Some(Nid::SECP521R1) => "P-521".to_string(),
                Some(nid) => nid.short_name().ok()?.to_string(),
                None => return Some("EC".to_string()),
            };
            format!("EC {name}")
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::handshake_stamps::Gap;
    use super::*;

    fn tls(version: &'static str) -> TlsFacts {
        TlsFacts {
            version,
            alpn: None,
            resumed: false,
            chain_len: Some(1),
            cipher: "",
            group: None,
            cert_days_left: None,
            cert_expired: false,
            cert_not_after: None,
            ocsp: None,
        }
    }

    fn finished(answered: u8) -> Shape {
        let mut s = Shape {
            answered_waits: answered,
            ..Default::default()
        };
        s.messages.server_finished = true;
        s
    }

    #[test]
    fn a_hello_retry_is_two_round_trips_even_when_one_wait_went_unseen() {
        let mut s = finished(1);
        s.messages.hello_retry = true;
        let (n, extra) = round_trips(&s, &tls("TLSv1.3"), Some(40_000)).unwrap();
        assert_eq!(n, 2);
        assert!(
            matches!(extra[..], [TlsExtra::HelloRetry { .. }]),
            "{extra:?}"
        );
        // Seen twice, still two.
        let mut s = finished(2);
        s.messages.hello_retry = true;
        assert_eq!(round_trips(&s, &tls("TLSv1.3"), Some(40_000)).unwrap().0, 2);
    }

    #[test]
    fn a_long_gap_late_in_a_flight_is_the_window_s() {
        let mut s = finished(1);
        s.flight_bytes[0] = 21_344;
        s.gaps[0] = Gap {
            us: 19_000,
            flight: 0,
        };
        s.gap_count = 1;
        // Under half the min RTT: scheduling, not a round trip.
        let (n, extra) = round_trips(&s, &tls("TLSv1.3"), Some(40_000)).unwrap();
        assert_eq!((n, extra), (1, vec![]));
        let (n, extra) = round_trips(&s, &tls("TLSv1.3"), Some(38_000)).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            extra,
            vec![TlsExtra::InitialWindow {
                flight_bytes: 21_344
            }]
        );
        assert_eq!(round_trips(&s, &tls("TLSv1.3"), None), None);
    }

    #[test]
    fn tls12_names_its_second_round_trip_and_server_time_is_what_is_left() {
        let (n, extra) = round_trips(&finished(2), &tls("TLSv1.2"), Some(40_000)).unwrap();
        assert_eq!((n, extra), (2, vec![TlsExtra::Tls12]));
        // A resumed TLS 1.2 handshake: one round trip, nothing named.
        let resumed = TlsFacts {
            resumed: true,
            ..tls("TLSv1.2")
        };
        let (n, extra) = round_trips(&finished(1), &resumed, Some(40_000)).unwrap();
        assert_eq!((n, extra), (1, vec![]));
        // A full one whose second wait went unseen still took two.
        let (n, extra) = round_trips(&finished(1), &tls("TLSv1.2"), Some(40_000)).unwrap();
        assert_eq!((n, extra), (2, vec![TlsExtra::Tls12]));
        let stages = Stages {
            tls: Some(84_000),
            tls_setup: Some(1_000),
            tls_finish: Some(500),
            ..Default::default()
        };
        let t = server_time(&stages, Some(2), Some(40_000));
        assert_eq!(t, Some(std::time::Duration::from_micros(2_500)));
        assert_eq!(
            server_time(&stages, Some(3), Some(40_000)),
            Some(std::time::Duration::ZERO)
        );
        assert_eq!(server_time(&stages, Some(2), None), None);
    }

    #[test]
    fn an_unreadable_message_leaves_its_facts_unknown_and_says_so() {
        let mut s = finished(1);
        // A CertificateVerify whose length runs past its bytes.
        s.messages.server(22, &[15, 0, 0, 9, 8, 4]);
        let a = derive(&s, &tls("TLSv1.3"), &Stages::default(), Some(40_000), None);
        assert_eq!(a.sig_alg, None);
        assert!(a.unreadable);
        assert_eq!(a.round_trips, Some(1));
        assert_eq!(a.server_handshake, None, "no tls stage to start from");
        // No Finished read: the shape cannot tell how many waits it took.
        let unfinished = Shape {
            answered_waits: 1,
            ..Default::default()
        };
        let a = derive(
            &unfinished,
            &tls("TLSv1.3"),
            &Stages::default(),
            Some(40_000),
            None,
        );
        assert_eq!(
            (a.round_trips, a.extra, a.server_flight_bytes),
            (None, None, None)
        );
    }

    #[test]
    fn a_dropped_gap_that_would_count_makes_the_count_unknown() {
        let mut s = finished(1);
        s.flight_bytes[0] = 60_000;
        s.gaps[0] = Gap {
            us: 41_000,
            flight: 0,
        };
        s.gap_count = 1;
        s.longest_dropped_us = 3_000; // pacing, far below half the RTT
        let (n, _) = round_trips(&s, &tls("TLSv1.3"), Some(40_000)).unwrap();
        assert_eq!(n, 2);
        s.longest_dropped_us = 30_000;
        assert_eq!(round_trips(&s, &tls("TLSv1.3"), Some(40_000)), None);
    }
}

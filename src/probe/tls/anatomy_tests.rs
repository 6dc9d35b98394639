use super::*;
use crate::probe::tls::handshake_shape::{Gap, HandshakeKernel};

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
        ticket_early_data: None,
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

/// A shape with `gaps` in its first flight of `bytes`, and what the
/// kernel said.
fn with_gaps(bytes: u32, gaps: &[Gap], kernel: Option<HandshakeKernel>) -> Shape {
    let mut s = finished(1);
    s.flight_bytes[0] = bytes;
    for (i, g) in gaps.iter().enumerate() {
        s.gaps[i] = *g;
        s.mid_wait_us += u64::from(g.us) + u64::from(g.short_us);
    }
    s.gap_count = gaps.len() as u8;
    s.kernel = kernel;
    s
}

fn gap(us: u32, bytes_before: u32, mid_record: bool) -> Gap {
    Gap {
        us,
        flight: 0,
        bytes_before,
        bytes_done: if mid_record { 0 } else { bytes_before },
        mid_record,
        first: true,
        since_us: 100,
        short_us: 0,
        pause_us: 0,
        bytes_read: bytes_before,
    }
}

fn kinds(r: &Reading) -> Vec<&'static str> {
    r.extra.iter().map(TlsExtra::kind).collect()
}

const R: Option<u32> = Some(40_000);

fn split_flight(first_bytes: u32, ack_delay_us: u64) -> TlsExtra {
    TlsExtra::SplitFlight {
        first_bytes,
        ack_delay: std::time::Duration::from_micros(ack_delay_us),
    }
}

#[test]
fn a_hello_retry_is_two_round_trips_even_when_one_wait_went_unseen() {
    let mut s = finished(1);
    s.messages.hello_retry = true;
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (2, vec!["hello_retry"]));
    let mut s = finished(2);
    s.messages.hello_retry = true;
    assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
}

#[test]
fn a_window_wait_needs_about_a_round_trip_and_about_a_window_of_bytes() {
    // 21 KB flight, a 38 ms wait inside a record after 16 KB: the window's.
    let s = with_gaps(21_344, &[gap(38_000, 16_389, true)], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
    // Under half a round trip: pacing, not a round trip.
    let s = with_gaps(21_344, &[gap(19_000, 16_389, true)], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
    assert_eq!(r.transmission_us, 19_000);
    // A 7.8 KB flight cannot have filled a window: a wait of about a
    // round trip in it, at a record's end or inside one, is the
    // server's own.
    for mid_record in [false, true] {
        let s = with_gaps(7_800, &[gap(30_000, 5_000, mid_record)], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
        assert_eq!(r.transmission_us, 0, "the 30 ms are the server's");
    }
    // Without a min RTT a long gap cannot be judged.
    assert_eq!(read_waits(&s, &tls("TLSv1.3"), None), None);
}

#[test]
fn slow_start_takes_a_second_window_only_past_three_windows_of_bytes() {
    let two = [gap(39_000, 14_000, true), gap(39_000, 30_000, true)];
    let r = read_waits(&with_gaps(60_000, &two, None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["initial_window"], "30 KB: still one window");
    let two = [gap(39_000, 14_000, true), gap(39_000, 40_000, true)];
    let r = read_waits(&with_gaps(60_000, &two, None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["initial_window", "initial_window"]);
    assert_eq!(r.round_trips, 3);
}

#[test]
fn a_small_first_part_held_for_our_ack_is_a_split_flight() {
    let split = gap(40_050, 133, false);
    let r = read_waits(&with_gaps(911, &[split], None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(r.extra, vec![split_flight(133, 0)]);
    assert_eq!(r.round_trips, 2);
    // Held for an ACK our kernel delayed: a round trip and 40 ms more.
    let late = gap(81_000, 6, false);
    let r = read_waits(&with_gaps(889, &[late], None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["split_flight"]);
    // Our 0.1 ms on the first part was inside the round trip.
    assert_eq!(r.hidden_us, 100);
    assert_eq!(
        r.transmission_us, 41_100,
        "the delayed ACK is not the server's"
    );
    // Three quarters of a round trip: the server's own pause.
    let pause = gap(30_000, 133, false);
    let r = read_waits(&with_gaps(911, &[pause], None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, r.transmission_us), (1, 0));
    // After whole segments only (nothing short for Nagle to wait on),
    // or far longer: the server's own.
    let big = gap(40_050, 3 * 1_448, false);
    let r = read_waits(&with_gaps(7_800, &[big], None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), Vec::<&str>::new());
    let long = gap(400_000, 133, false);
    let r = read_waits(&with_gaps(911, &[long], None), &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, r.transmission_us), (1, 0));
}

#[test]
fn a_tail_held_after_a_full_segment_and_a_short_one_is_a_split_flight() {
    // Java, RSA-4096: ServerHello to Certificate in one write of 1,575
    // bytes (a full segment and 127), the rest held for our ACK.
    let tail = gap(40_100, 1_575, false);
    let kernel = HandshakeKernel {
        mss: 1448,
        ..Default::default()
    };
    let s = with_gaps(2_120, &[tail], Some(kernel));
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(r.extra, vec![split_flight(1_575, 0)]);
    assert_eq!(r.round_trips, 2);
    // As Java sends it: EncryptedExtensions to Finished in one record,
    // its first 1,442 bytes in the first write, the wait inside it.
    let inside = Gap {
        bytes_before: 2_120,
        bytes_done: 133,
        mid_record: true,
        ..tail
    };
    let s = with_gaps(
        2_120,
        &[Gap {
            bytes_read: 1_575,
            ..inside
        }],
        Some(kernel),
    );
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(r.extra, vec![split_flight(1_575, 0)]);
    // The same wait where the kernel saw a segment lost: the loss's.
    let lost = HandshakeKernel { ooo: 2, ..kernel };
    let s = with_gaps(
        2_120,
        &[Gap {
            bytes_read: 1_575,
            ..inside
        }],
        Some(lost),
    );
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["loss"]);
    // TLS 1.2's second flight: the ChangeCipherSpec alone, Finished a
    // round trip and our delayed ACK later.
    let mut s = with_gaps(
        51,
        &[Gap {
            flight: 1,
            ..gap(81_200, 6, false)
        }],
        Some(kernel),
    );
    s.answered_waits = 2;
    let r = read_waits(&s, &tls("TLSv1.2"), R).unwrap();
    assert_eq!(r.round_trips, 3);
    // Saving it saves the round trip and the 41.2 ms our ACK waited.
    assert_eq!(r.extra, vec![TlsExtra::Tls12, split_flight(6, 41_200)]);
}

#[test]
fn the_window_is_named_by_the_bytes_read_never_a_split_before_it() {
    // Java, a 24 KB chain: 127 bytes alone, 9 full segments 1.3 ms
    // later (the Certificate record begun, 13 KB of it read), then the
    // window's round trip: one round trip, the window's.
    let pause = gap(1_300, 127, false);
    let window = Gap {
        first: false,
        bytes_before: 22_000,
        bytes_done: 127,
        bytes_read: 127 + 9 * 1_448,
        ..gap(38_700, 0, true)
    };
    let s = with_gaps(22_080, &[pause, window], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
    // The same record announced whole but only 5 KB of it read before
    // a wait of a round trip: no window yet.
    let early = Gap {
        bytes_read: 5_000,
        ..window
    };
    let s = with_gaps(22_080, &[early], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), Vec::<&str>::new());
    // A 26.8 ms pause after the 127 bytes, with a ServerHello 12 ms
    // late: the server's own, however late its first part was.
    let mut s = with_gaps(22_080, &[gap(26_800, 127, false), window], None);
    s.flight_wait_us[0] = 52_000;
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
}

#[test]
fn a_server_that_signs_inside_its_split_flights_round_trip_loses_no_time() {
    // GnuTLS with an RSA-4096 key: the ServerHello alone, 21.8 ms of
    // signing, a full segment, then the last 141 bytes held for our ACK
    // of the ServerHello, 40.1 ms after it.
    let signing = Gap {
        since_us: 100,
        ..gap(21_800, 133, false)
    };
    let tail = Gap {
        first: false,
        since_us: 100,
        ..gap(18_200, 1_581, true)
    };
    let s = with_gaps(1_722, &[signing, tail], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(
        (r.round_trips, r.extra.clone()),
        (2, vec![split_flight(133, 0)])
    );
    // No pause of the server's counts: the signing was inside the round
    // trip; the 0.2 ms the span took beyond it is transmission.
    assert_eq!((r.hidden_us, r.transmission_us), (200, 200), "{r:?}");
}

#[test]
fn pauses_on_loopback_are_the_servers_never_windows() {
    // 100-byte segments 5 ms apart on a 10 µs path: every pause is far
    // longer than a round trip, and none is inside a window.
    let gaps: Vec<Gap> = (1..=6)
        .map(|i| Gap {
            first: i == 1,
            ..gap(5_000, 100 * i, i % 2 == 0)
        })
        .collect();
    let r = read_waits(&with_gaps(7_800, &gaps, None), &tls("TLSv1.3"), Some(10)).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
    assert_eq!(r.transmission_us, 0, "30 ms of the server's own: {r:?}");
}

#[test]
fn a_loss_the_kernel_saw_is_named_never_a_window_or_the_server() {
    let lost = HandshakeKernel {
        retrans: 0,
        ooo: 3,
        mss: 1448,
        min_rtt_us: 40_000,
    };
    // A wait of a round trip early in the flight (no window yet).
    let s = with_gaps(24_000, &[gap(41_000, 6_000, true)], Some(lost));
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(
        r.extra,
        vec![TlsExtra::Loss {
            recovery: std::time::Duration::from_micros(41_000)
        }]
    );
    // Then the window: one of each, never the window twice.
    let two = [gap(41_000, 6_000, true), gap(39_000, 16_000, true)];
    let r = read_waits(&with_gaps(24_000, &two, Some(lost)), &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["loss", "initial_window"]);
    // Our ClientHello sent again after a timeout: the answer took 1.2 s.
    let mut s = finished(1);
    s.longest_answered_us = 1_240_000;
    s.kernel = Some(HandshakeKernel { retrans: 1, ..lost });
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!((r.round_trips, kinds(&r)), (2, vec!["loss"]));
    assert_eq!(r.transmission_us, 1_160_000);
}

#[test]
fn a_window_round_trip_takes_up_the_paced_burst_and_our_work_before_it() {
    // BBR paced the first burst over 14 ms (short waits); the window's
    // own wait was 25.5 ms; our work on the burst 0.5 ms.
    let window = Gap {
        since_us: 14_500,
        short_us: 14_000,
        ..gap(25_500, 14_480, true)
    };
    let s = with_gaps(22_400, &[window], None);
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(kinds(&r), vec!["initial_window"]);
    assert_eq!(r.hidden_us, 500);
    assert_eq!(r.transmission_us, 0, "all of it inside the round trip");
    // The flight of the answered wait and then 4 ms of pacing after
    // the window: that is transmission.
    let mut s = s;
    s.mid_wait_us += 4_000;
    let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
    assert_eq!(r.transmission_us, 4_000);
}

#[test]
fn the_parts_add_up_to_tls_and_none_is_negative() {
    let (r, _) = (
        read_waits(
            &with_gaps(911, &[gap(40_050, 133, false)], None),
            &tls("TLSv1.3"),
            R,
        )
        .unwrap(),
        (),
    );
    let stages = Stages {
        tls: Some(82_500),
        tls_setup: Some(800),
        tls_finish: Some(1_200),
        ..Default::default()
    };
    let (server, transmission) = split(&stages, Some(&r), R);
    let (server, transmission) = (server.unwrap(), transmission.unwrap());
    let us = |d: std::time::Duration| d.as_micros() as u64;
    assert_eq!(
        800 + (1_200 - r.hidden_us) + 80_000 + us(server) + us(transmission),
        82_500
    );
    // Round trips and client work over tls: 0 each, never below.
    let short = Stages {
        tls: Some(80_500),
        ..stages
    };
    let (server, transmission) = split(&short, Some(&r), R);
    assert_eq!(
        (server, transmission),
        (Some(Default::default()), Some(Default::default()))
    );
    assert_eq!(
        split(&stages, Some(&r), None).0,
        None,
        "no min RTT: unknown"
    );
}

#[test]
fn tls12_names_its_second_round_trip() {
    let r = read_waits(&finished(2), &tls("TLSv1.2"), R).unwrap();
    assert_eq!((r.round_trips, r.extra), (2, vec![TlsExtra::Tls12]));
    let resumed = TlsFacts {
        resumed: true,
        ..tls("TLSv1.2")
    };
    let r = read_waits(&finished(1), &resumed, R).unwrap();
    assert_eq!((r.round_trips, r.extra), (1, vec![]));
    let r = read_waits(&finished(1), &tls("TLSv1.2"), R).unwrap();
    assert_eq!((r.round_trips, r.extra), (2, vec![TlsExtra::Tls12]));
}

#[test]
fn an_unreadable_message_leaves_its_facts_unknown_and_says_so() {
    let mut s = finished(1);
    // A CertificateVerify whose length runs past its bytes.
    s.messages.server(22, &[15, 0, 0, 9, 8, 4]);
    let (a, _) = derive(&s, &tls("TLSv1.3"), &Stages::default(), R, &[]);
    assert_eq!(a.sig_alg, None);
    assert!(a.unreadable);
    assert_eq!(a.round_trips, Some(1));
    assert_eq!(a.server_handshake, None, "no tls stage to start from");
    // No wait seen (the answers in before the client waited): the
    // protocol's one round trip.
    let quick = finished(0);
    assert_eq!(
        read_waits(&quick, &tls("TLSv1.3"), R).unwrap().round_trips,
        1
    );
    // No Finished read: the shape cannot tell how many waits it took.
    let unfinished = Shape {
        answered_waits: 1,
        ..Default::default()
    };
    let (a, _) = derive(&unfinished, &tls("TLSv1.3"), &Stages::default(), R, &[]);
    assert_eq!(
        (a.round_trips, a.extra, a.server_flight_bytes),
        (None, None, None)
    );
}

#[test]
fn a_dropped_gap_that_would_count_makes_the_count_unknown() {
    let mut s = with_gaps(60_000, &[gap(41_000, 20_000, true)], None);
    s.longest_dropped_us = 3_000; // pacing, far below half the RTT
    assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
    s.longest_dropped_us = 30_000;
    assert_eq!(read_waits(&s, &tls("TLSv1.3"), R), None);
    // Far longer than a round trip, without a loss: a pause, never one.
    s.longest_dropped_us = 200_000;
    assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
}

//! The account of a new connection and its advice, over constructed
//! handshakes: every line adds up, and advice comes only where it is worth it.

use super::*;
use crate::probe::CertSize;
use crate::render::terminal::why_advice::chain_words;
use crate::stats::{synthetic, TlsParts};

const MS: fn(u64) -> Duration = Duration::from_millis;
const US: fn(u64) -> Duration = Duration::from_micros;

fn why() -> HandshakeWhy {
    HandshakeWhy {
        n: 5,
        round_trips: Some(2),
        round_trips_n: 4,
        hello_retry: 4,
        resumed: 4,
        early_data: 3,
        early_srv: Some(US(800)),
        resumed_srv: Some(US(41_000)),
        tls: Some(MS(85)),
        min_rtt: Some(MS(40)),
        parts: Some(TlsParts {
            n: 2,
            of: 4,
            tls: MS(85),
            rtt: MS(40),
            path: MS(80),
            server: US(3_400),
            transmission: US(0),
            client: US(1_600),
        }),
        total: Some(MS(170)),
        connection: Some(ConnectionParts {
            n: 2,
            of: 4,
            total: MS(170),
            rtt: MS(40),
            round_trips: (1, 2, 0),
            path: MS(120),
            server: US(4_000),
            transmission: US(0),
            client: US(1_600),
            rest: US(44_400),
            held: US(0),
        }),
        names: crate::stats::HandshakeNames {
            retry_group: Some(0x18),
            sent_shares: vec![0x11ec, 0x1d],
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The figures after `=` on a line, as ms: the total, then each part.
fn figures(line: &str) -> (f64, Vec<f64>) {
    let num = |w: &str| w.trim_end_matches("ms").parse::<f64>().ok();
    let (head, tail) = line.split_once(" = ").unwrap();
    let total = head
        .rsplit(' ')
        .find_map(num)
        .or_else(|| num(tail.split(':').next().unwrap()))
        .unwrap();
    let tail = tail.split("  (").next().unwrap();
    // `N round trips × R`, then `+ name X`.
    let mut parts = Vec::new();
    let mut words = tail.split_whitespace().peekable();
    let mut trips = None;
    let mut before = "";
    while let Some(w) = words.next() {
        if trips.is_none() && w == "round" {
            trips = before.parse::<f64>().ok();
        }
        before = w;
        if w == "×" {
            let rtt = num(words.next().unwrap()).unwrap();
            parts.push(rtt * trips.unwrap_or(1.0));
        }
        if w == "+" {
            words.next();
            parts.push(num(words.next().unwrap()).unwrap());
        }
    }
    (total, parts)
}

#[test]
fn a_response_held_for_our_ack_is_srv_s_second_round_trip_and_advised_on() {
    let info = synthetic::run_info();
    let mut held = HandshakeWhy {
        n: 5,
        round_trips: Some(1),
        round_trips_n: 5,
        held: 4,
        tls: Some(MS(42)),
        min_rtt: Some(MS(40)),
        total: Some(MS(205)),
        connection: Some(ConnectionParts {
            n: 2,
            of: 4,
            total: MS(205),
            rtt: MS(40),
            round_trips: (1, 1, 2),
            path: MS(160),
            server: US(1_200),
            transmission: US(41_000),
            client: US(3_000),
            rest: US(800),
            held: US(41_000),
        }),
        ..Default::default()
    };
    let lines = lines(&info, &held);
    let text = lines.join("\n");
    assert!(
        text.contains(
            "new connection     = 205ms: 4 round trips (tcp 1 · tls 1 · srv 2, one for a \
             response the server's TCP held for our ACK (in 4 of 5)) × 40.0ms + server \
             1.20ms + transmission 41.0ms + client 3.00ms + rest 0.80ms"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  to save a round trip and our delayed ACK (about 81.0ms): the server's TCP held \
             its response"
        ),
        "{text}"
    );
    // Where most responses came at once, srv has its one round trip and
    // nothing is said of a hold.
    held.held = 2;
    if let Some(c) = held.connection.as_mut() {
        c.round_trips.2 = 1;
    }
    let text = super::lines(&info, &held).join("\n");
    assert!(text.contains("(tcp 1 · tls 1 · srv 1)"), "{text}");
    assert!(!text.contains("held its response"), "{text}");
    assert_eq!(held.connection_round_trips(), Some((1, 1, 1)));
}

#[test]
fn a_mixed_run_says_how_many_had_each_and_its_lines_add_up() {
    let info = synthetic::run_info();
    let lines = lines(&info, &why());
    let text = lines.join("\n");
    assert!(
        lines[0]
            .starts_with("  why: tls 85.0ms = 2 round trips × 40.0ms min RTT (4 of 5 handshakes;"),
        "{text}"
    );
    assert!(
        text.contains(
            "one for a HelloRetryRequest (in 4 of 5): the server wants P-384, we sent \
             X25519MLKEM768, X25519"
        ),
        "{text}"
    );
    // One sentence: the early requests, and their srv against the
    // resumed handshake that went without.
    assert!(
        text.contains(
            "early data: 3 of 4 resumed handshakes sent the request in their first flight; \
             their median srv is 0.80ms, 40.2ms less than the 41.0ms of the 1 resumed \
             without it"
        ),
        "{text}"
    );
    // The groups we sent that the server could take instead, all of them.
    assert!(
        text.contains(
            "to save a round trip (about 40.0ms): send a P-384 key share first (a run \
             with --curves P-384,X25519MLKEM768,X25519 measures it), or have the server \
             accept X25519MLKEM768 or X25519"
        ),
        "{text}"
    );
    assert!(
        !text.contains("as early data (0-RTT)"),
        "it went early already: {text}"
    );
    let conn = lines
        .iter()
        .find(|l| l.starts_with("new connection"))
        .unwrap();
    assert!(
        conn.contains("= 170ms: 3 round trips (tcp 1 · tls 2 · srv 0) × 40.0ms"),
        "{conn}"
    );
    for line in [&lines[0], conn] {
        let (total, parts) = figures(line);
        let sum: f64 = parts.iter().sum();
        assert!((sum - total).abs() < 0.05, "{line}: {parts:?} make {sum}");
    }
}

#[test]
fn unknown_parts_are_a_dash_never_zero_and_never_in_the_rest() {
    let mut w = why();
    w.parts = None;
    w.connection = None;
    let lines = lines(&synthetic::run_info(), &w);
    assert!(
        lines[0].ends_with("+ server - + transmission - + client -  (medians, n = 5)"),
        "{lines:#?}"
    );
    let conn = lines
        .iter()
        .find(|l| l.starts_with("new connection"))
        .unwrap();
    assert!(
        conn.contains("+ server - + transmission - + client - + rest -"),
        "{conn}"
    );
    assert!(!conn.contains("0.00"), "{conn}");
}

#[test]
fn a_group_this_build_cannot_name_gets_no_command_line() {
    let mut w = why();
    w.names.retry_group = Some(0x7a7a);
    let text = lines(&synthetic::run_info(), &w).join("\n");
    assert!(text.contains("the server wants 0x7a7a"), "{text}");
    assert!(
        text.contains(
            "to save a round trip (about 40.0ms): have the server accept X25519MLKEM768 or X25519"
        ),
        "{text}"
    );
    assert!(!text.contains("--curves"), "{text}");
}

#[test]
fn a_split_saves_the_delayed_ack_too_even_where_the_round_trip_is_nothing() {
    let mut w = why();
    w.split_flight = 4;
    w.names.split_first_bytes = Some(6);
    w.names.split_ack_delay = Some(MS(41));
    let info = synthetic::run_info();
    let text = lines(&info, &w).join("\n");
    assert!(
        text.contains(
            "to save a round trip and our delayed ACK (about 81.0ms): the server wrote 6 bytes"
        ),
        "{text}"
    );
    // On loopback: the 20 µs round trip alone is not worth a line, the
    // 41 ms our ACK waited is.
    for p in w.parts.iter_mut() {
        p.rtt = US(20);
    }
    w.min_rtt = Some(US(20));
    let text = lines(&info, &w).join("\n");
    assert!(
        text.contains("to save a round trip and our delayed ACK (about 41.0ms)"),
        "{text}"
    );
    // Without a delayed ACK: nothing worth a line.
    w.names.split_ack_delay = Some(Duration::ZERO);
    let text = lines(&info, &w).join("\n");
    assert!(!text.contains("the server wrote 6 bytes"), "{text}");
}

#[test]
fn a_round_trip_of_a_few_microseconds_is_not_worth_a_line() {
    let mut w = why();
    for p in w.parts.iter_mut() {
        p.rtt = US(20);
    }
    w.min_rtt = Some(US(20));
    w.early_data = 0;
    w.tickets = [4, 4];
    w.names.server_key = Some("RSA-4096".into());
    w.tls12 = 4;
    let mut info = synthetic::run_info();
    info.settings.resume = true;
    let text = lines(&info, &w).join("\n");
    assert!(!text.contains("to save a round trip"), "{text}");
    assert!(!text.contains("to save one more round trip"), "{text}");
    // The RSA signature's 3.4 ms of 170: more than 2 %, so it stays.
    assert!(
        text.contains("to save up to 3.40ms of server time: the server signs with RSA-4096"),
        "{text}"
    );
}

#[test]
fn advice_comes_largest_saving_first_and_early_data_only_where_tickets_allow() {
    let mut w = why();
    w.early_data = 0;
    w.names.server_key = Some("RSA-4096".into());
    for p in w.parts.iter_mut() {
        p.server = MS(60);
    }
    let mut info = synthetic::run_info();
    info.settings.resume = true;
    info.method = "HEAD".into();
    let saves = |w: &HandshakeWhy| -> Vec<String> {
        lines(&info, w)
            .into_iter()
            .filter(|l| l.trim_start().starts_with("to save"))
            .collect()
    };
    // The tickets allow none: no early-data line.
    let got = saves(&w);
    assert!(
        got[0].contains("to save up to 60.0ms of server time"),
        "{got:#?}"
    );
    assert!(
        got[1].contains("to save a round trip (about 40.0ms)"),
        "{got:#?}"
    );
    assert!(got.iter().all(|l| !l.contains("early data")), "{got:#?}");
    w.tickets = [4, 3];
    let got = saves(&w);
    assert!(
        got.iter().any(|l| l.contains(
            "to save one more round trip (about 40.0ms): send the request as early data"
        )),
        "{got:#?}"
    );
    // Never on TLS 1.2.
    w.tls12 = 4;
    assert!(saves(&w).iter().all(|l| !l.contains("early data")));
}

#[test]
fn a_calibration_gets_no_advice_and_an_untold_run_no_lines() {
    let mut info = synthetic::run_info();
    info.settings.calibrate = true;
    let lines = lines(&info, &why());
    assert!(lines.iter().all(|l| !l.contains("to save")), "{lines:#?}");
    assert!(super::lines(&synthetic::run_info(), &HandshakeWhy::default()).is_empty());
}

#[test]
fn the_chain_line_names_each_certificate_its_size_and_key() {
    let cert = |index, bytes, key: &str| CertSize {
        index,
        bytes,
        key: Some(key.into()),
    };
    let words = chain_words(&[
        cert(0, 1_200, "EC P-256"),
        cert(1, 7_400, "RSA-4096"),
        cert(2, 7_400, "RSA-4096"),
        cert(3, 7_420, "RSA-4096"),
    ]);
    assert_eq!(
        words,
        "the leaf 1.2 KB (EC P-256), 3 more of 7.4 KB (RSA-4096)"
    );
}

#[test]
fn resumption_is_advised_only_where_the_server_can_resume() {
    // Full handshakes only (--resume off), TLS 1.3, 12 ms of the server's
    // and our work: worth a line where the server sent tickets.
    let mut w = why();
    w.resumed = 0;
    w.hello_retry = 0;
    w.tls12 = 0;
    let info = synthetic::run_info();
    let mut off = info.clone();
    off.settings.resume = false;
    w.tickets = [5, 0];
    let text = lines(&off, &w).join("\n");
    assert!(text.contains("resume sessions"), "{text}");
    // No ticket from a TLS 1.3 server: it cannot resume; no line.
    w.tickets = [0, 0];
    let text = lines(&off, &w).join("\n");
    assert!(!text.contains("resume sessions"), "{text}");
    // TLS 1.2 resumes by session ID without tickets.
    w.tls12 = 5;
    let text = lines(&off, &w).join("\n");
    assert!(text.contains("resume sessions"), "{text}");
}

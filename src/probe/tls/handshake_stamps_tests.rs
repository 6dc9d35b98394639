use super::*;
use crate::probe::tls::handshake_shape::MAX_GAPS;

const CPU: fn() -> u64 = || 0;

/// A server record of `n` bytes (header included) at `t`: its header,
/// then its inner type (TLS 1.3), read in at `t`.
fn record_at(s: &mut Stamps, t: u64, n: u16) {
    s.data_read(t, usize::from(n));
    let len = (n - 5).to_be_bytes();
    s.server_data(t, RT_HEADER, &[23, 3, 3, len[0], len[1]]);
    s.server_data(t, RT_INNER, &[22]);
}

/// A server record of `n` bytes whose header and first half come in at
/// `t` and whose body completes at `end` (after a wait of its own in
/// between).
fn split_record(s: &mut Stamps, t: u64, wait: u64, end: u64, n: u16) {
    s.data_read(t, usize::from(n / 2));
    let len = (n - 5).to_be_bytes();
    s.server_data(t, RT_HEADER, &[23, 3, 3, len[0], len[1]]);
    s.waiting_for_socket(wait);
    s.data_read(end, usize::from(n - n / 2));
    s.server_data(end, RT_INNER, &[22]);
}

fn hello(s: &mut Stamps, t: u64, cpu: u64) {
    s.header_written(t, 22, || cpu);
    s.waiting_for_socket(t + 10);
}

#[test]
fn the_finish_is_our_cpu_time_from_the_hello_to_the_end() {
    let mut s = Stamps::default();
    s.header_written(90, 23, CPU); // not a handshake record: no ClientHello yet
    hello(&mut s, 100, 5_000);
    assert_eq!(s.client_hello_sent_us(), Some(100));
    record_at(&mut s, 40_100, 900);
    s.header_written(40_300, 23, CPU); // our Finished
    s.message_written(RT_INNER, &[22]);
    assert_eq!(s.client_finish_us(40_400), None, "not done yet");
    s.handshake_done(40_350, || 5_600, || None);
    // 600 µs of CPU, then libcurl's 50 µs to its stamp.
    assert_eq!(s.client_finish_us(40_400), Some(650));
    assert_eq!(
        s.client_finish_us(40_300),
        None,
        "libcurl's stamp before OpenSSL's end"
    );
    // A ticket read after the handshake changes nothing of it.
    let before = s.shape();
    s.data_read(80_000, 100);
    s.server_data(80_000, RT_HEADER, &[23, 3, 3, 0, 250]);
    s.server_data(80_000, RT_INNER, &[22]);
    s.waiting_for_socket(80_010);
    assert_eq!(s.shape(), before);
    assert_eq!(s.client_finish_us(40_400), Some(650));
}

#[test]
fn no_done_means_no_finish() {
    let mut s = Stamps::default();
    assert_eq!(s.client_hello_sent_us(), None);
    s.server_data(50, RT_HEADER, &[22, 3, 3, 0, 90]); // before our ClientHello
    hello(&mut s, 100, 1);
    assert_eq!(s.client_finish_us(500), None);
}

#[test]
fn an_answer_in_before_we_waited_begins_its_flight_all_the_same() {
    // TLS 1.2: our Finished flight, then (we were off the CPU) the
    // server's ChangeCipherSpec read 40 ms later without a wait, and
    // its Finished our delayed ACK and a round trip after that.
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 2_000);
    s.header_written(40_100, 20, CPU);
    record_at(&mut s, 80_200, 6);
    s.waiting_for_socket(80_210);
    record_at(&mut s, 161_000, 45);
    let shape = s.shape().unwrap();
    assert_eq!(shape.answered_waits, 2);
    assert_eq!(shape.flight_bytes[..2], [2_000, 51]);
    assert_eq!(shape.gaps().len(), 1);
    assert_eq!((shape.gaps()[0].flight, shape.gaps()[0].bytes_read), (1, 6));
    // After a HelloRetryRequest, the ChangeCipherSpec read without a
    // wait after our second ClientHello came with the retry: the
    // flight before.
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 100);
    s.shape.messages.hello_retry = true;
    s.header_written(40_900, 22, CPU);
    record_at(&mut s, 40_920, 6);
    s.waiting_for_socket(40_930);
    record_at(&mut s, 81_000, 900);
    let shape = s.shape().unwrap();
    assert_eq!(shape.answered_waits, 2);
    assert_eq!(shape.flight_bytes[..2], [106, 900]);
    assert!(shape.gaps().is_empty());
}

#[test]
fn each_wait_after_a_send_of_ours_is_a_round_trip() {
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 100); // HelloRetryRequest
    s.header_written(40_100, 22, CPU); // the second ClientHello
    s.waiting_for_socket(40_120);
    record_at(&mut s, 80_000, 3000);
    s.waiting_for_socket(80_100); // a short wait inside the flight
    record_at(&mut s, 80_300, 1000);
    let shape = s.shape().unwrap();
    assert_eq!(shape.answered_waits, 2);
    assert_eq!(shape.answered_us, (40_000 - 110) + (80_000 - 40_120));
    assert_eq!(shape.flight_bytes[..2], [100, 4000]);
    assert!(shape.gaps().is_empty());
    assert_eq!(shape.mid_wait_us, 200);
    assert_eq!(shape.messages.server_record_bytes, 4100);
}

#[test]
fn a_long_wait_in_a_flight_is_kept_with_what_came_before_it() {
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 133); // a small first part
    s.waiting_for_socket(40_050);
    record_at(&mut s, 80_050, 700); // the rest, a round trip later
                                    // Inside a record: the header came, the body after a long wait.
    split_record(&mut s, 80_100, 80_110, 81_600, 9000);
    let shape = s.shape().unwrap();
    assert_eq!(shape.answered_waits, 1);
    assert_eq!(
        shape.gaps(),
        &[
            Gap {
                us: 40_000,
                flight: 0,
                bytes_before: 133,
                bytes_done: 133,
                mid_record: false,
                first: true,
                since_us: 50,
                short_us: 0,
                pause_us: 0,
                bytes_read: 133,
            },
            Gap {
                us: 1_490,
                flight: 0,
                bytes_before: 9833,
                bytes_done: 833,
                mid_record: true,
                first: false,
                since_us: 60,
                short_us: 0,
                pause_us: 0,
                // Of the 9 000-byte record, the half that had come.
                bytes_read: 133 + 700 + 4_500,
            }
        ]
    );
    assert_eq!(shape.mid_wait_us, 41_490);
}

#[test]
fn only_the_longest_gaps_are_kept_in_order() {
    let mut full = Stamps::default();
    hello(&mut full, 1, 0);
    record_at(&mut full, 100, 500);
    let mut t = 100;
    for i in 0..(MAX_GAPS as u64 + 2) {
        full.waiting_for_socket(t + 1);
        t += 10_000 + i * 1_000;
        record_at(&mut full, t, 500);
    }
    let shape = full.shape().unwrap();
    assert_eq!(shape.gaps().len(), MAX_GAPS);
    assert_eq!(shape.longest_dropped_us, 10_999);
    let kept: Vec<u32> = shape.gaps().iter().map(|g| g.us).collect();
    assert_eq!(
        kept,
        (2..MAX_GAPS as u32 + 2)
            .map(|i| 9_999 + 1_000 * i)
            .collect::<Vec<_>>()
    );
    // The two left out (at records' ends: the server's pauses) went
    // into the span of the gap after them.
    assert_eq!(shape.gaps()[0].since_us, 1 + 9_999 + 1 + 10_999 + 1);
    assert_eq!(shape.gaps()[0].pause_us, 9_999 + 10_999);
    assert_eq!(shape.dropped_pause_us, 9_999 + 10_999);
}

#[test]
fn the_response_is_the_last_record_before_libcurl_saw_its_first_byte() {
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 900);
    s.header_written(40_200, 23, CPU); // our Finished
    s.message_written(RT_INNER, &[22]);
    s.handshake_done(40_250, CPU, || None);
    // The request (HTTP/2: preface and HEADERS, two records).
    s.header_written(40_300, 23, CPU);
    s.message_written(RT_INNER, &[23]);
    s.header_written(40_320, 23, CPU);
    s.message_written(RT_INNER, &[23]);
    // Two tickets and the server's SETTINGS come in one read, the
    // response in the next; our SETTINGS ack in between is no request.
    s.data_read(80_400, 100);
    for inner in [22, 22, 23] {
        s.server_data(80_410, RT_HEADER, &[23, 3, 3, 0, 200]);
        s.server_data(80_410, RT_INNER, &[inner]);
    }
    s.header_written(80_700, 23, CPU);
    s.message_written(RT_INNER, &[23]);
    s.data_read(80_900, 100);
    s.server_data(81_200, RT_HEADER, &[23, 3, 3, 1, 44]);
    s.server_data(81_200, RT_INNER, &[23]);
    // libcurl saw the response at 81 300: its record came in at 80 900
    // (no ticket before it in that read: nothing held).
    assert_eq!(
        s.reply(81_300),
        Some(Reply {
            request_us: 40_320,
            response_us: 80_900,
            held_after_us: None,
        })
    );
    // Had libcurl seen it in the first read, that one's, with nothing
    // before it.
    assert_eq!(
        s.reply(80_500),
        Some(Reply {
            request_us: 40_320,
            response_us: 80_400,
            held_after_us: None,
        })
    );
    assert_eq!(s.reply(80_000), None);
    assert_eq!(
        s.tickets(),
        (0, 0),
        "not tickets: no NewSessionTicket in them"
    );
}

#[test]
fn a_kept_connection_has_a_request_and_a_response_too() {
    // TLS 1.2: no inner types; the next moment settles each record.
    let mut s = Stamps::default();
    s.header_written(1_000, 23, CPU);
    s.data_read(41_000, 100);
    s.server_data(41_050, RT_HEADER, &[23, 3, 3, 0, 100]);
    assert_eq!(
        s.reply(41_100),
        Some(Reply {
            request_us: 1_000,
            response_us: 41_000,
            held_after_us: None,
        })
    );
    assert_eq!(s.shape(), None);
}

/// A NewSessionTicket message (no early data), as the message callback
/// hands it on.
fn ticket() -> Vec<u8> {
    let mut body = 7200u32.to_be_bytes().to_vec();
    body.extend([0, 0, 0, 9, 1, 0, 0, 4, 5, 5, 5, 5, 0, 0]);
    let mut m = vec![4, 0, 0, body.len() as u8];
    m.extend(body);
    m
}

/// A server record of inner type `inner` read at `t` (TLS 1.3): the
/// header, the inner type and, for a ticket, the message.
fn theirs(s: &mut Stamps, t: u64, inner: u8) {
    s.server_data(t, RT_HEADER, &[23, 3, 3, 0, 60]);
    s.server_data(t, RT_INNER, &[inner]);
    if inner == 22 {
        s.server_data(t, 22, &ticket());
    }
}

/// After a handshake done at 40 000: the request's record at 40 100.
fn requested() -> Stamps {
    let mut s = Stamps::default();
    hello(&mut s, 100, 0);
    record_at(&mut s, 40_000, 900);
    s.handshake_done(40_050, CPU, || None);
    s.header_written(40_100, 23, CPU);
    s.message_written(RT_INNER, &[23]);
    s
}

#[test]
fn a_response_behind_a_ticket_a_read_later_was_held() {
    // The first ticket alone, the second with the response a round
    // trip and a delayed ACK later: held.
    let mut s = requested();
    s.data_read(80_300, 100);
    theirs(&mut s, 80_310, 22);
    s.data_read(161_000, 100);
    theirs(&mut s, 161_010, 22);
    theirs(&mut s, 161_020, 23);
    let held = Reply {
        request_us: 40_100,
        response_us: 161_000,
        held_after_us: Some(80_300),
    };
    assert_eq!(s.tickets().0, 2);
    assert_eq!(s.reply(161_100), Some(held));
    // Both tickets first, the response alone later: the server's own
    // time, nothing held.
    let mut s = requested();
    s.data_read(80_300, 100);
    theirs(&mut s, 80_310, 22);
    theirs(&mut s, 80_320, 22);
    s.data_read(161_000, 100);
    theirs(&mut s, 161_010, 23);
    assert_eq!(
        s.reply(161_100),
        Some(Reply {
            held_after_us: None,
            ..held
        })
    );
    // A ticket after the response in its read holds nothing back.
    let mut s = requested();
    s.data_read(80_300, 100);
    theirs(&mut s, 80_310, 22);
    s.data_read(161_000, 100);
    theirs(&mut s, 161_010, 23);
    theirs(&mut s, 161_020, 22);
    assert_eq!(s.reply(161_100).unwrap().held_after_us, None);
    // What came before the request's record left is not after it.
    let mut s = requested();
    s.data_read(40_090, 100);
    theirs(&mut s, 40_095, 22);
    s.header_written(40_200, 23, CPU);
    s.message_written(RT_INNER, &[23]);
    s.data_read(121_000, 100);
    theirs(&mut s, 121_010, 22);
    theirs(&mut s, 121_020, 23);
    assert_eq!(
        s.reply(121_100),
        Some(Reply {
            request_us: 40_200,
            response_us: 121_000,
            held_after_us: None,
        })
    );
}

#[test]
fn a_response_a_delayed_ack_behind_a_lone_ticket_was_held() {
    // Java: the ticket alone 40.3 ms after the request, the response
    // in a later read our delayed ACK and a round trip after it.
    let lone = |response_at: u64, min_rtt_us: u32| {
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 900);
        let kernel = HandshakeKernel {
            min_rtt_us,
            ..Default::default()
        };
        s.handshake_done(40_050, CPU, || Some(kernel));
        s.header_written(40_100, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        s.data_read(80_400, 1_196);
        theirs(&mut s, 80_410, 22);
        s.data_read(response_at, 120);
        theirs(&mut s, response_at + 10, 23);
        s.reply(response_at + 100).unwrap().held_after_us
    };
    assert_eq!(lone(161_400, 40_000), Some(80_400));
    // 100 ms after the ticket: the server's own time, not held.
    assert_eq!(lone(180_400, 40_000), None);
    // No min RTT to judge by: not held.
    assert_eq!(lone(161_400, 0), None);
}

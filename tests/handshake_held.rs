//! Servers that write as Java's JSSE does, Nagle's algorithm on, held to
//! a capture of the delayed path (D = 20 ms each way) read back with the
//! client's key log: a tail held after a full segment, TLS 1.2's
//! ChangeCipherSpec alone, a ticket alone before the response, and a
//! short pause before a window stall. Each is a round trip (or a held
//! response) where the capture shows one, never the server's time.

mod support;

use std::time::Duration;

use support::capture::End;
use support::path::DelayedPath;
use support::wire::{
    cold, kinds, ms, paired, replies_against_capture, run, server_ip, show, start_at_server_end,
    why_lines,
};
use support::{median, CertKind, FlightCut, ServerOpts};

const D: Duration = Duration::from_millis(20);

// As Java's JSSE writes, Nagle's algorithm on (a busy machine can hold a
// probe up: a case whose run does not hold is tried once more).

#[test]
fn a_tail_held_after_a_full_segment_is_a_split_flight_not_server_time() {
    // ServerHello to Certificate (over a segment) in one write, the rest
    // in another.
    java_style(
        "a held tail after a full segment",
        FlightCut::Tail,
        CertKind::Rsa4096,
        false,
    );
}

#[test]
fn tls12_change_cipher_spec_alone_is_a_split_flight_not_server_time() {
    // TLS 1.2's second flight: the ChangeCipherSpec alone, then Finished.
    java_style(
        "TLS 1.2's ChangeCipherSpec alone",
        FlightCut::CcsAlone,
        CertKind::Good,
        true,
    );
}

#[test]
fn a_response_behind_a_lone_ticket_is_held_not_server_time() {
    // The ticket alone once the request is in, then the response.
    java_style(
        "a ticket alone before the response",
        FlightCut::TicketAlone,
        CertKind::Good,
        false,
    );
}

#[test]
fn a_short_pause_before_a_window_stall_is_the_servers_never_a_split() {
    // A 24 KB flight: ServerHello and ChangeCipherSpec (127 bytes), a 6 ms
    // pause of the server's, then the rest, which the window stops after
    // about ten segments: one round trip more, the window's.
    let pause = FlightCut::Pause(Duration::from_millis(6));
    java_style("a pause, then a window stall", pause, CertKind::Big, false);
}

fn java_style(case: &str, cut: FlightCut, cert: CertKind, tls12: bool) {
    let mut seen = Vec::new();
    for _ in 0..2 {
        match java_style_run(case, cut, cert, tls12) {
            None => return,
            Some(Ok(())) => return,
            Some(Err(e)) => seen.push(e),
        }
    }
    panic!("{case}, two runs: {seen:#?}");
}

/// One run of [`java_style`];
/// what did not hold against the capture, or `None` without a path.
fn java_style_run(
    case: &str,
    cut: FlightCut,
    cert: CertKind,
    tls12: bool,
) -> Option<Result<(), String>> {
    let path = DelayedPath::for_test(D, None)?;
    let server = start_at_server_end(
        &path,
        ServerOpts {
            flight_cut: Some(cut),
            cert,
            tls12,
            // Java's TLS 1.2 server sends no ticket before its ChangeCipherSpec.
            tickets: !tls12,
            ..Default::default()
        },
    );
    let args = ["-m", "cold", "-n", "3", "--resume", "off"];
    let r = run(
        Some(&path),
        server_ip(),
        server.addr.port(),
        End::Server,
        &args,
    )?;
    // The server's own log: it cut what the case says.
    let cuts = server.counters.flight_cuts.lock().unwrap().clone();
    assert!(cuts.len() >= 4, "{cuts:?}");
    if cut == FlightCut::Tail {
        assert!(cuts.iter().all(|c| c.0 > 1_448), "{cuts:?}");
    }
    let mut wrong = Vec::new();
    let (mut off, mut added_all) = (Vec::new(), Vec::new());
    for (s, w) in paired(&r) {
        show(case, &s, &w);
        added_all.push(w.added_ms());
        // The capture's round trips, every one named, and the server's
        // time what the capture shows it added (within 5 ms; the held
        // part is a round trip and our delayed ACK, never the server's).
        let named = match cut {
            FlightCut::Tail => vec!["split_flight"],
            FlightCut::CcsAlone => vec!["tls12", "split_flight"],
            FlightCut::Pause(_) => vec!["initial_window"],
            _ => vec![],
        };
        // (After a pause, the capture counts the burst our ACK of the first
        // part set off beside the window's: one round trip of the
        // client's, the first part's and the window's at once, 6 ms apart.)
        let (trips, added) = match cut {
            FlightCut::Pause(_) => (2, w.first_reply_ms + w.own_pause_ms),
            _ => (w.round_trips, w.added_ms()),
        };
        if s["tls_round_trips"] != trips || kinds(&s) != named {
            wrong.push(format!("{s} {w:?}"));
        }
        off.push(ms(&s, "server_handshake_ms") - added);
    }
    if median(off.clone()) > 5.0 {
        wrong.push(format!("server_handshake_ms beyond the capture's: {off:?}"));
    }
    let lines = why_lines(case, &r.text);
    // Every response held for our ACK where and only where the capture
    // shows it (with Nagle on, a response behind the tickets is).
    match (cut, replies_against_capture(case, &r, &lines)) {
        (_, Err(e)) => wrong.push(e),
        (FlightCut::TicketAlone, Ok(held)) if held * 2 <= cold(&r.doc).len() => {
            wrong.push(format!("{held} responses held, the capture shows most"))
        }
        (FlightCut::TicketAlone | FlightCut::Pause(_), _) => {}
        _ => {
            // Where the capture shows our ACK delayed (the wait beyond the
            // round trips over 30 ms), the saving says so.
            let delayed = median(added_all) > 30.0;
            if !lines.iter().any(|l| {
                l.contains("to save a round trip")
                    && l.contains("TCP_NODELAY")
                    && (!delayed || l.contains("and our delayed ACK"))
            }) {
                wrong.push(format!("no split advice: {lines:#?}"));
            }
        }
    }
    Some(if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n"))
    })
}

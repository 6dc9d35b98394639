//! The handshake's account held to the wire: real TLS servers of four
//! kinds (GnuTLS's `gnutls-serv`, Python's `ssl`, `openssl s_server`, the
//! test server) across the delayed path (D = 20 ms each way) or loopback,
//! each run captured by `tcpdump` and read back by `tshark` with the
//! client's key log (`support::capture`). The truth is the capture's (the
//! round trips the server's sends show, its reply latency, what was sent
//! again) or the server's own log, never tlsping's arithmetic. Each case
//! prints its figures beside the capture's, and the statistics' lines.

mod support;

use std::time::Duration;

use support::capture::{self, End, Frame};
use support::path::{DelayedPath, Loss, Toward};
use support::wire::replies_against_capture;
use support::wire::{
    cold, kinds, ms, paired, paired_partly, run, run_captured, server_ip, show,
    start_at_server_end, start_program, why_lines, Server,
};
use support::{median, CertKind, FlightCut, ServerOpts};

const D: Duration = Duration::from_millis(20);

#[test]
fn gnutls_splits_its_flight_and_the_split_is_a_round_trip_not_server_time() {
    for (case, kind, args) in [
        (
            "gnutls plain, resumed",
            CertKind::Good,
            &["-m", "cold", "-n", "3", "-X", "GET"][..],
        ),
        (
            "gnutls RSA-4096",
            CertKind::Rsa4096,
            &["-m", "cold", "-n", "3", "-X", "GET", "--resume", "off"][..],
        ),
    ] {
        let Some(path) = DelayedPath::for_test(D, None) else {
            return;
        };
        let Some(server) = start_program(Some(&path), server_ip(), Server::Gnutls("NORMAL"), kind)
        else {
            return;
        };
        let Some(r) = run(Some(&path), server_ip(), server.port, End::Server, args) else {
            return;
        };
        let mut server = Vec::new();
        for (s, w) in paired(&r) {
            show(case, &s, &w);
            // The wire: the ServerHello alone, the rest once our ACK came.
            assert_eq!(w.round_trips, 2, "{w:?}");
            assert!(w.added_ms() < 5.0, "{w:?}");
            assert_eq!(s["tls_round_trips"], 2, "{s}");
            assert_eq!(kinds(&s), ["split_flight"], "{s}");
            assert_eq!(s["tls_resumed"] == true, w.resumed, "{s} {w:?}");
            server.push(ms(&s, "server_handshake_ms"));
        }
        // Under 5 ms where the capture shows well under one (a busy
        // machine can hold one probe up: the median).
        assert!(
            median(server.clone()) < 5.0,
            "server_handshake_ms {server:?}"
        );
        let lines = why_lines(case, &r.text);
        let why = lines.iter().find(|l| l.contains("why: ")).unwrap();
        assert!(why.contains("= 2 round trips"), "{why}");
        assert!(why.contains("one for a flight the server split"), "{why}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("to save a round trip") && l.contains("TCP_NODELAY")),
            "{lines:#?}"
        );
        // The signature cost nothing here: hidden inside the split's round
        // trip, so no line offers an ECDSA key.
        assert!(
            lines.iter().all(|l| !l.contains("signs with RSA")),
            "{lines:#?}"
        );
    }
}

#[test]
fn a_split_flight_is_a_round_trip_and_a_pause_is_the_servers_time() {
    let pause = Duration::from_millis(30);
    for (case, cut) in [
        ("two writes, Nagle on", FlightCut::Split),
        ("a 30 ms pause between two writes", FlightCut::Pause(pause)),
    ] {
        // A busy machine can hold a probe up by as much as the pause is
        // short of a round trip: a run where that happened is tried again,
        // up to three times.
        let mut seen = Vec::new();
        for _ in 0..3 {
            match cut_run(case, cut) {
                None => return,
                Some(Ok(())) => {
                    seen.clear();
                    break;
                }
                Some(Err(e)) => seen.push(e),
            }
        }
        assert!(seen.len() < 3, "{case}, three runs: {seen:#?}");
    }
}

/// One run against a test server that writes its first flight in two
/// parts (`cut`); what did not hold, or `None` without a path.
fn cut_run(case: &str, cut: FlightCut) -> Option<Result<(), String>> {
    let path = DelayedPath::for_test(D, None)?;
    let server = start_at_server_end(
        &path,
        ServerOpts {
            flight_cut: Some(cut),
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
    // The server's own log: what it wrote first, and how long it paused.
    let cuts = server.counters.flight_cuts.lock().unwrap().clone();
    assert!(cuts.len() >= 4, "{cuts:?}");
    let mut wrong = Vec::new();
    for (s, w) in paired(&r) {
        show(case, &s, &w);
        let fits = match cut {
            FlightCut::Split => {
                w.round_trips == 2
                    && s["tls_round_trips"] == 2
                    && kinds(&s) == ["split_flight"]
                    && ms(&s, "server_handshake_ms") < 5.0
            }
            FlightCut::Pause(p) => {
                let slept = p.as_secs_f64() * 1e3;
                let server = ms(&s, "server_handshake_ms");
                // The capture and the server's log agree first.
                assert!((w.own_pause_ms - slept).abs() < 3.0, "{w:?} {cuts:?}");
                w.round_trips == 1
                    && s["tls_round_trips"] == 1
                    && kinds(&s).is_empty()
                    && server >= slept - 1.0
                    && server <= slept + 6.0
            }
            _ => unreachable!("only Split and Pause here"),
        };
        if !fits {
            wrong.push(format!("{s} {w:?}"));
        }
    }
    let lines = why_lines(case, &r.text);
    if let Err(e) = replies_against_capture(case, &r, &lines) {
        wrong.push(e);
    }
    Some(if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n"))
    })
}

/// Sets the server end's congestion control to BBR, which paces its
/// bursts by itself (no fq qdisc needed); `false` (after a line) where
/// the kernel has none, which fails under CI.
fn server_paces(path: &DelayedPath) -> bool {
    let set = path.in_server(|| {
        std::fs::write("/proc/sys/net/ipv4/tcp_congestion_control", "bbr")
            .and_then(|()| std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control"))
    });
    let ok = set.as_deref().is_ok_and(|s| s.trim() == "bbr");
    if !ok {
        support::skip(&format!(
            "this kernel offers no BBR congestion control ({set:?})"
        ));
    }
    ok
}

#[test]
fn a_paced_chain_is_transmission_and_the_server_time_is_its_reply() {
    let Some(path) = DelayedPath::for_test(D, None) else {
        return;
    };
    if !server_paces(&path) {
        return;
    }
    let server = start_at_server_end(
        &path,
        ServerOpts {
            cert: CertKind::Big,
            ..Default::default()
        },
    );
    // A busy machine can stretch one handshake: the medians are held to
    // the capture's, each sample to its shape.
    let args = ["-m", "cold", "-n", "5", "--resume", "off"];
    let Some(r) = run(
        Some(&path),
        server_ip(),
        server.addr.port(),
        End::Server,
        &args,
    ) else {
        return;
    };
    let (mut ours, mut theirs, mut paced) = (Vec::new(), Vec::new(), Vec::new());
    for (s, w) in paired(&r) {
        show("24 KB chain, BBR", &s, &w);
        assert_eq!(w.round_trips, 2, "{w:?}");
        assert_eq!(s["tls_round_trips"], 2, "{s}");
        assert_eq!(kinds(&s), ["initial_window"], "{s}");
        ours.push(ms(&s, "server_handshake_ms"));
        theirs.push(w.reply_ms);
        paced.push(ms(&s, "tls_transmission_ms"));
    }
    let (ours, theirs) = (median(ours), median(theirs));
    assert!(
        (ours - theirs).abs() <= 1.0,
        "server_handshake_ms median {ours} against the capture's reply {theirs}"
    );
    // The second burst was paced over milliseconds: that is transmission.
    assert!(median(paced.clone()) >= 1.0, "{paced:?}");
    why_lines("24 KB chain, BBR", &r.text);
}

#[test]
fn a_ticket_alone_after_our_finished_leaves_the_handshake_measured() {
    let Some(path) = DelayedPath::for_test(D, None) else {
        return;
    };
    let Some(server) = start_program(Some(&path), server_ip(), Server::Python, CertKind::Good)
    else {
        return;
    };
    let args = ["-m", "cold", "-n", "5", "--resume", "off"];
    let Some(r) = run(Some(&path), server_ip(), server.port, End::Server, &args) else {
        return;
    };
    // Python's server sends its first ticket alone after our Finished.
    let alone = r
        .frames
        .iter()
        .filter(|f| f.from_server && f.has_handshake(4) && !f.app_data())
        .count();
    assert!(alone >= 3, "no ticket alone in the capture");
    let mut server = Vec::new();
    for (s, w) in paired(&r) {
        show("python ssl", &s, &w);
        assert_eq!(
            (w.round_trips, s["tls_round_trips"].as_u64()),
            (1, Some(1)),
            "{s}"
        );
        for key in [
            "tls_finish_ms",
            "server_handshake_ms",
            "tls_transmission_ms",
        ] {
            assert!(s[key].is_number(), "{key}: {s}");
        }
        server.push((ms(&s, "server_handshake_ms"), w.reply_ms));
    }
    // Its reply, as the capture saw it (the median: a busy machine can
    // hold one probe up).
    let ours = median(server.iter().map(|p| p.0).collect());
    let theirs = median(server.iter().map(|p| p.1).collect());
    assert!((ours - theirs).abs() <= 1.0, "{server:?}");
    let lines = why_lines("python ssl", &r.text);
    assert!(
        lines.iter().all(|l| !l.contains(" - ")),
        "nothing unknown: {lines:#?}"
    );
    // Its TCP holds the second ticket and the response behind the first
    // until our ACK (Nagle's algorithm): srv's second round trip, never
    // the server's time.
    let held = replies_against_capture("python ssl", &r, &lines);
    assert!(held.is_ok(), "{held:?}");
    assert!(held.unwrap() * 2 > 5, "the capture shows no response held");
}

#[test]
fn early_data_is_advised_only_where_the_tickets_allow_it() {
    // A server whose tickets allow early data: the advice, with its saving.
    for (case, opts, advised) in [
        (
            "tickets allow early data",
            ServerOpts {
                early_data: true,
                ..Default::default()
            },
            true,
        ),
        ("tickets allow none", ServerOpts::default(), false),
        (
            "TLS 1.2",
            ServerOpts {
                tls12: true,
                ..Default::default()
            },
            false,
        ),
    ] {
        let Some(path) = DelayedPath::for_test(D, None) else {
            return;
        };
        let server = start_at_server_end(&path, ServerOpts { ..opts.clone() });
        let Some(r) = run(
            Some(&path),
            server_ip(),
            server.addr.port(),
            End::Server,
            &["-m", "cold", "-n", "3"],
        ) else {
            return;
        };
        let resumed = cold(&r.doc)
            .iter()
            .filter(|s| s["tls_resumed"] == true)
            .count();
        assert!(resumed >= 2, "{case}: {}", r.doc);
        // The capture's own word on the tickets: an early_data extension in
        // them is what allows it (tshark's handshake extension types).
        let lines = why_lines(case, &r.text);
        let advice = lines.iter().any(|l| l.contains("as early data (0-RTT)"));
        assert_eq!(advice, advised, "{case}: {lines:#?}");
        if advised {
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains("to save one more round trip (about 40.")),
                "{lines:#?}"
            );
        }
        if !advised && !opts.tls12 {
            // The comparison marks the variant that cannot send any.
            let doc = path.in_client(|| {
                let port = server.addr.port();
                let resolve = format!("localhost:{port}:{}", server_ip());
                let url = format!("https://localhost:{port}/");
                let cacert = support::cacert();
                support::json_run(&[
                    "--json",
                    "-w",
                    "5s",
                    "-i",
                    "200ms",
                    "-m",
                    "cold",
                    "-n",
                    "2",
                    "--compare",
                    "early-data=off,on",
                    "--resolve",
                    &resolve,
                    "--cacert",
                    &cacert,
                    &url,
                ])
            });
            let variants = doc["run"]["compare"]["variants"].as_array().unwrap();
            assert_eq!(variants[0]["available"], true, "{doc}");
            assert_eq!(variants[1]["available"], false, "{doc}");
            assert!(
                variants[1]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("tickets allow no early data")),
                "{doc}"
            );
        }
    }
}

#[test]
fn a_lost_segment_is_named_never_a_second_window() {
    // Every 33rd data segment each way is dropped (3 %): across 40 full
    // handshakes of a 24 KB chain some lose one.
    let loss = Loss {
        toward: Toward::Both,
        every: 33,
    };
    let Some(path) = DelayedPath::for_test(D, Some(loss)) else {
        return;
    };
    let server = start_at_server_end(
        &path,
        ServerOpts {
            cert: CertKind::Big,
            ..Default::default()
        },
    );
    // Captured at both ends: the server's segments sent again show at its
    // end, the client's at its own.
    let args = ["-m", "cold", "-n", "40", "--resume", "off"];
    let Some(r) = run_captured(
        Some(&path),
        server_ip(),
        server.addr.port(),
        End::Server,
        Some(End::Client),
        &args,
    ) else {
        return;
    };
    let client = capture::client_views(&r.also);
    let pairs = paired_partly(&r);
    assert_eq!(client.len(), pairs.len() + 1, "{client:?}");
    let partial = pairs.iter().filter(|(_, w)| !w.complete).count();
    assert!(
        partial * 10 <= pairs.len(),
        "{partial} handshakes the capture cannot read"
    );
    // What a handshake without a loss takes at the client's end: one that
    // took half a round trip more was slowed.
    let rows: Vec<_> = pairs.into_iter().zip(&client[1..]).collect();
    let clean: Vec<f64> = rows
        .iter()
        .filter(|((_, w), c)| w.retransmissions + c.retransmissions == 0)
        .map(|(_, c)| c.span_ms)
        .filter(|s| s.is_finite())
        .collect();
    let usual = median(clean);
    let (mut named, mut slowed) = (0, 0);
    for ((s, w), c) in rows {
        let k = kinds(&s);
        let windows = k.iter().filter(|k| *k == "initial_window").count();
        assert!(windows <= 1, "a window counted twice: {s} {w:?}");
        let lost = w.retransmissions + c.retransmissions;
        let loss = k.contains(&"loss".to_string());
        if loss {
            show("24 KB chain, 3 % loss", &s, &w);
            // Never a loss the wire did not show.
            assert!(
                lost > 0,
                "a loss the capture does not show: {s} {w:?} {c:?}"
            );
            named += 1;
        }
        // Slowed by a loss the client could see (not only a flight's last
        // segment, whose copy leaves no trace on the client's side).
        let visible = w.retransmissions > w.tail_retransmissions || c.retransmissions > 0;
        if visible && c.span_ms > usual + 20.0 {
            slowed += 1;
            assert!(
                loss,
                "slowed by a lost segment, not named: {s} {w:?} {c:?} (usual {usual:.1} ms)"
            );
        }
    }
    println!("handshakes slowed by a loss the client could see: {slowed}, named a loss: {named}");
    assert!(slowed > 0, "no handshake slowed by a loss in 40 at 3 %");
    why_lines("24 KB chain, 3 % loss", &r.text);
}

/// Per connection of a client-side capture: the request's record out (the
/// client's last application data before the response) and the first
/// record of the response in (HTTP/2: the server's first HEADERS frame;
/// HTTP/1.1: its first application data after the request), and the
/// connection's round trip (`capture::connection_rtt`), all in ms.
fn request_response(frames: &[Frame]) -> Vec<(f64, f64, f64)> {
    let mut streams: Vec<u32> = frames.iter().map(|f| f.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    streams
        .into_iter()
        .filter_map(|stream| {
            let fs: Vec<&Frame> = frames.iter().filter(|f| f.stream == stream).collect();
            let rtt = capture::connection_rtt(&fs, false)?;
            let h2 = fs.iter().any(|f| !f.h2.is_empty());
            let response = fs
                .iter()
                .position(|f| f.from_server && if h2 { f.h2.contains(&1) } else { f.app_data() })?;
            let request = fs[..response].iter().rposition(|f| {
                !f.from_server && if h2 { f.h2.contains(&1) } else { f.app_data() }
            })?;
            Some((fs[request].t * 1e3, fs[response].t * 1e3, rtt))
        })
        .collect()
}

#[test]
fn the_servers_time_after_the_request_is_the_records() {
    for (case, h2) in [("HTTP/1.1", false), ("HTTP/2", true)] {
        // Our stamps sit microseconds inside the capture's (the write that
        // took the request out, the read that brought the response in); a
        // busy machine can wake us late, so a run where that happened is
        // tried again, up to three times.
        let mut seen = Vec::new();
        for _ in 0..3 {
            let Some(off) = records_against_capture(case, h2) else {
                return;
            };
            let close = off.iter().filter(|&&d| d <= 0.1).count();
            if close * 4 >= off.len() * 3 && off.iter().all(|&d| d <= 1.0) {
                seen.clear();
                break;
            }
            seen.push(off);
        }
        assert!(
            seen.len() < 3,
            "{case}: server_time_ms off the capture's (ms), three runs: {seen:?}"
        );
    }
}

/// One run over HTTP/2 or 1.1 with a client-side capture: how far each
/// probe's `server_time_ms` is from the capture's; `None` where the path
/// or a tool is missing.
fn records_against_capture(case: &str, h2: bool) -> Option<Vec<f64>> {
    let path = DelayedPath::for_test(D, None)?;
    let server = start_at_server_end(
        &path,
        ServerOpts {
            h2,
            ..Default::default()
        },
    );
    let version = if h2 { "2" } else { "1.1" };
    let args = ["-m", "cold", "-n", "4", "--http-version", version];
    let r = run(
        Some(&path),
        server_ip(),
        server.addr.port(),
        End::Client,
        &args,
    )?;
    let wire = request_response(&r.frames);
    let samples = cold(&r.doc);
    assert_eq!(wire.len(), samples.len() + 1, "{wire:?}");
    let mut off = Vec::new();
    for (s, (out, back, rtt)) in samples.iter().zip(&wire[1..]) {
        let truth = back - out - rtt;
        let ours = ms(s, "server_time_ms");
        println!(
            "{case} | capture: response in - request out - rtt = {:.3} - {rtt:.3} = {truth:.3} ms | tlsping: server_time_ms {ours:.3}, srv_ms {}",
            back - out,
            s["srv_ms"]
        );
        off.push((ours - truth).abs());
    }
    why_lines(case, &r.text);
    Some(off)
}

#[test]
fn the_adding_up_check_catches_lines_that_do_not() {
    support::why::assert_adds_up("  why: tls 84.9ms = 2 round trips × 40.1ms min RTT (one for x) + server 2.10ms + transmission 0.00ms + client 2.68ms  (n)");
    support::why::assert_adds_up("new connection     = 166ms: 4 round trips (tcp 1 · tls 2 · srv 1) × 40.1ms + server 2.70ms + transmission - + client - + rest -  (n)");
    for bad in [
        "  why: tls 90.0ms = 2 round trips × 40.1ms min RTT + server 2.10ms + transmission 0.00ms + client 2.68ms  (n)",
        "new connection     = 166ms: 4 round trips (tcp 1 · tls 2 · srv 1) × 40.1ms + server 2.70ms + transmission - + client - + rest 3.00ms  (n)",
        "new connection     = 166ms: 4 round trips (tcp 1 · tls 2 · srv 1) × 40.1ms + server 2.70ms + transmission 0.00ms + client 5.00ms + rest -0.35ms  (n)",
    ] {
        assert!(
            std::panic::catch_unwind(|| support::why::assert_adds_up(bad)).is_err(),
            "{bad}"
        );
    }
}

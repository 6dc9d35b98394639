//! The stages a sample derives from libcurl's timers and our own stamps.

use std::time::Duration;

use super::*;

/// A cold probe that libcurl resolved itself: lookup ended at
/// `namelookup_us`, the first socket opened at `socket_open_us`, TCP
/// connected 40 ms after that, then TLS and the request.
fn unpinned(namelookup_us: u32, socket_open_us: u32) -> Sample {
    let connect = socket_open_us + 40_000;
    let appconnect = connect + 41_000;
    Sample {
        timers: CurlTimers {
            namelookup_us,
            connect_us: connect,
            appconnect_us: appconnect,
            pretransfer_us: appconnect + 50,
            posttransfer_us: appconnect + 60,
            starttransfer_us: appconnect + 40_060,
            total_us: appconnect + 40_100,
            num_connects: 1,
        },
        socket_open: Some(Duration::from_micros(u64::from(socket_open_us))),
        wall_total: Some(Duration::from_micros(u64::from(appconnect + 40_100))),
        status: 200,
        ..Sample::new(2, Mode::Cold, true)
    }
}

const MS: fn(u64) -> Duration = Duration::from_millis;

#[test]
fn tcp_is_libcurls_connect_minus_namelookup_when_the_lookup_came_first() {
    // Lookup done at 2 ms, socket opened at once: curl -w's own arithmetic.
    let s = unpinned(2_000, 2_000);
    assert_eq!(s.tcp(), Some(MS(40)));
    assert_eq!(s.dns(), Some(MS(2)));
    assert_eq!(s.dns_overlap(), None);
}

#[test]
fn tcp_starts_at_the_socket_when_libcurl_connected_before_its_lookup_ended() {
    // libcurl connected on the A answer (socket at 0.8 ms) and took the AAAA
    // answer at 40.8 ms, while TCP was still connecting: connect − namelookup
    // would be 0.8 + 40 − 40.8 = 0 ms, shorter than the path's round trip.
    let s = unpinned(40_800, 800);
    assert_eq!(s.tcp(), Some(MS(40)), "from the socket's opening");
    // dns is the time before the connection began; the rest of the lookup
    // ran beside tcp and is said apart.
    assert_eq!(s.dns(), Some(Duration::from_micros(800)));
    assert_eq!(s.dns_overlap(), Some(MS(40)));
    // The stages share no time: 0.8 + 40 + 41 + 40 ms of the 121.9 ms total.
    assert_eq!(s.other(), Some(Duration::from_micros(100)));
}

#[test]
fn tcp_starts_at_the_socket_when_libcurl_never_finished_its_lookup() {
    // Connected before the AAAA answer came; libcurl then gave up on it and
    // never stamped its lookup: dns is the time before the socket opened,
    // tcp is not the whole time since the start.
    let s = unpinned(0, 25_300);
    assert_eq!(s.tcp(), Some(MS(40)));
    assert_eq!(
        s.dns(),
        Some(Duration::from_micros(25_300)),
        "until connecting began"
    );
    assert_eq!(s.dns_overlap(), None);
}

#[test]
fn our_own_lookup_never_overlaps() {
    let mut s = unpinned(5, 5);
    s.own_dns = Some(MS(3));
    assert_eq!(s.dns(), Some(MS(3)));
    assert_eq!(s.dns_overlap(), None);
    assert_eq!(s.tcp(), Some(MS(40)));
}

#[test]
fn the_servers_time_is_the_records_wait_less_the_minimum_rtt() {
    let mut s = unpinned(2_000, 2_000);
    // srv is 40 ms; the kernel smoothed the RTT up to 44.7 ms.
    s.tcp_info = Some(TcpFacts {
        rtt_us: 44_700,
        min_rtt_us: Some(39_000),
        retrans: 0,
    });
    assert_eq!(s.srv(), Some(MS(40)));
    assert_eq!(s.stages().server, None, "no records seen");
    s.reply_wait = Some(Duration::from_micros(39_700));
    assert_eq!(s.stages().server, Some(700), "the records' wait − min rtt");
    assert_eq!(
        s.stages().srv_client(),
        Some(300),
        "libcurl's own, inside srv"
    );
    s.tcp_info = Some(TcpFacts {
        rtt_us: 44_700,
        min_rtt_us: None,
        retrans: 0,
    });
    assert_eq!(s.stages().server, None, "no round trip to take out");
}

#[test]
fn the_performance_notes_say_how_large_a_full_sample_is() {
    let notes = include_str!("../../../docs/performance.md");
    let said = format!("A full sample is {} bytes", std::mem::size_of::<Sample>());
    assert!(
        notes.contains(&said),
        "docs/performance.md should say: {said}"
    );
}

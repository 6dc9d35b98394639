//! Stages read against a real round trip: the client and the server sit in
//! two network namespaces joined by a delay line (`support::path`), so the
//! kernels at both ends see 2 × D and every figure that counts round trips
//! (connect, handshake flights, the kernel's RTT) can be checked against it.

mod support;

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::path::{DelayedPath, Loss, Toward, QUEUE_PACKETS, SERVER_V4, SERVER_V6};
use support::{median, start, ServerOpts, TestServer};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A test server in the path's server namespace, on `ip`.
fn serve(path: &DelayedPath, ip: IpAddr, opts: ServerOpts) -> TestServer {
    path.in_server(|| {
        start(ServerOpts {
            bind: Some(ip),
            ..opts
        })
    })
}

/// The binary run from the client's namespace against `server`, by name
/// (the certificate's) pinned to the server's address; its JSON document.
fn probe_over(path: &DelayedPath, server: &TestServer, args: &[&str]) -> Value {
    let port = server.addr.port();
    let addr = match server.addr.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let resolve = format!("localhost:{port}:{addr}");
    let url = format!("https://localhost:{port}/");
    let cacert = support::cacert();
    let mut all = vec![
        "--json",
        "-w",
        "5s",
        "--resolve",
        &resolve,
        "--cacert",
        &cacert,
    ];
    all.extend_from_slice(args);
    all.push(&url);
    path.in_client(|| support::json_run(&all))
}

/// Readings of a span whose truth is `truth`, within max(1 ms, 15 %) of it.
/// Above by the quickest sample: a busy machine only ever adds time (a core
/// to wait for), so the quickest is the one that shows what the path and
/// the measurement read. Below by the median, where a timestamp taken late
/// can shorten a span; with `strict`, for a span whose first packet leaves
/// after its clock starts and whose last arrives before it stops, by every
/// sample, to within 50 µs of rounding: nothing crosses the line faster
/// than it lets.
fn assert_near(what: &str, seen: Vec<f64>, truth: f64, strict: bool) {
    assert!(!seen.is_empty(), "no {what}");
    let quickest = seen.iter().copied().fold(f64::INFINITY, f64::min);
    let mid = median(seen.clone());
    let margin = (0.15 * truth).max(1.0);
    let floor = if strict {
        quickest >= truth - 0.05
    } else {
        mid >= truth - margin
    };
    assert!(
        floor && quickest <= truth + margin,
        "{what} {seen:?} against {truth:.3} ms (±{margin:.3}, strict: {strict})"
    );
}

/// [`assert_near`] over one field of the timed samples of `mode`.
fn assert_reads(doc: &Value, mode: &str, field: &str, truth: f64, strict: bool) {
    let seen = support::sample_values(doc, mode, |s| s[field].as_f64());
    assert_near(&format!("{mode} {field}"), seen, truth, strict);
}

#[test]
fn every_round_trip_stage_reads_twice_the_one_way_delay() {
    let d = Duration::from_millis(25);
    let Some(path) = DelayedPath::for_test(d, None) else {
        return;
    };
    let server = serve(&path, SERVER_V4.into(), ServerOpts::default());
    let doc = probe_over(
        &path,
        &server,
        &["-n", "4", "-i", "150ms", "--resume", "off"],
    );
    let rtt = 2.0 * ms(d);
    assert_reads(&doc, "cold", "tcp_ms", rtt, true);
    for mode in ["cold", "warm"] {
        assert_reads(&doc, mode, "tcp_rtt_ms", rtt, true);
        assert_reads(&doc, mode, "tcp_min_rtt_ms", rtt, true);
    }
    // A full TLS 1.3 handshake is one round trip: never less, and all of
    // `tls` but the client's own work before its first flight and after the
    // server's last (about 2 ms of CPU, which the path does not change).
    let tls = support::sample_values(&doc, "cold", |s| s["tls_ms"].as_f64());
    assert!(tls.iter().all(|&t| t >= rtt - 0.05), "cold tls_ms {tls:?}");
    let tls_wire = support::sample_values(&doc, "cold", |s| {
        Some(s["tls_ms"].as_f64()? - s["tls_setup_ms"].as_f64()? - s["tls_finish_ms"].as_f64()?)
    });
    assert_near("cold tls - tls_setup - tls_finish", tls_wire, rtt, false);
    // `srv` starts when libcurl has sent the request: a late stamp, not an
    // early packet, can put it below the round trip.
    assert_reads(&doc, "cold", "srv_ms", rtt, false);
    assert_reads(&doc, "warm", "srv_ms", rtt, false);
    assert_reads(&doc, "warm", "total_ms", rtt, true);
    // A clean path: nothing to retransmit, nothing dropped.
    for s in doc["samples"].as_array().unwrap() {
        assert_eq!(s["retrans"], 0, "{s}");
    }
    let seen = path.relay_seen();
    assert_eq!((seen.lost, seen.overflowed), (0, 0), "{seen:?}");
    assert!(seen.forwarded > 0, "{seen:?}");
}

#[test]
fn a_server_that_waits_adds_its_wait_above_the_round_trip() {
    let (d, wait) = (Duration::from_millis(10), Duration::from_millis(20));
    let Some(path) = DelayedPath::for_test(d, None) else {
        return;
    };
    // The server's writes are held back by `wait` above TCP: its kernel
    // acknowledges at once, so only the answers are late. Over IPv6.
    let opts = ServerOpts {
        delay: Some(wait),
        ..Default::default()
    };
    let server = serve(&path, SERVER_V6.into(), opts);
    let doc = probe_over(&path, &server, &["-n", "4", "-i", "150ms"]);
    let rtt = 2.0 * ms(d);
    for mode in ["cold", "warm"] {
        assert_reads(&doc, mode, "srv_ms", rtt + ms(wait), false);
        assert_reads(&doc, mode, "tcp_min_rtt_ms", rtt, true);
    }
    assert_reads(&doc, "cold", "tcp_ms", rtt, true);
    // srv less the kernel's lowest RTT: the server's own time. (Not the
    // smoothed RTT: on a kept connection the server's kernel stops
    // acknowledging at once and lets its late answer carry the ACK, so each
    // warm request feeds the kernel a 2D + W sample and the smoothed RTT
    // drifts up from 2D toward 2D + W.)
    for mode in ["cold", "warm"] {
        let server_time = support::sample_values(&doc, mode, |s| {
            Some(s["srv_ms"].as_f64()? - s["tcp_min_rtt_ms"].as_f64()?)
        });
        assert_near(
            &format!("{mode} srv - tcp_min_rtt"),
            server_time,
            ms(wait),
            false,
        );
    }
}

#[test]
fn a_lossy_path_makes_the_client_retransmit() {
    let loss = Loss {
        toward: Toward::Server,
        every: 3,
    };
    let Some(path) = DelayedPath::for_test(Duration::from_millis(10), Some(loss)) else {
        return;
    };
    let server = serve(&path, SERVER_V4.into(), ServerOpts::default());
    let doc = probe_over(&path, &server, &["-n", "3", "-i", "100ms", "--warmup", "0"]);
    let samples = doc["samples"].as_array().unwrap();
    assert!(samples.iter().all(|s| s["error"].is_null()), "{doc}");
    assert!(
        samples.iter().any(|s| s["retrans"].as_u64() > Some(0)),
        "{doc}"
    );
    assert!(doc["summary"]["retrans_probes"].as_u64() > Some(0), "{doc}");
    assert!(path.relay_seen().lost > 0, "{:?}", path.relay_seen());
}

/// A UDP socket at each end, the server's and the client's (a socket stays
/// in the namespace it was made in, whichever thread then uses it).
fn udp_pair(path: &DelayedPath) -> (UdpSocket, UdpSocket) {
    let server = path.in_server(|| UdpSocket::bind((SERVER_V4, 0)).unwrap());
    let client = path.in_client(|| UdpSocket::bind("0.0.0.0:0").unwrap());
    for s in [&server, &client] {
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    }
    (server, client)
}

/// How long each of `n` TCP connects to `to` takes, made from the calling
/// thread's namespace. The far kernel answers the SYN itself (the listener
/// never accepts), so the time is the path plus the kernels, no server.
fn connect_times(to: SocketAddr, n: usize) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let began = Instant::now();
            let conn = TcpStream::connect_timeout(&to, Duration::from_secs(2)).unwrap();
            let took = began.elapsed();
            drop(conn);
            took
        })
        .collect()
}

#[test]
fn the_line_adds_little_to_its_delay() {
    let d = Duration::from_millis(10);
    let Some(path) = DelayedPath::for_test(d, None) else {
        return;
    };
    let n = 30;
    let listener = path.in_server(|| TcpListener::bind((SERVER_V4, 0)).unwrap());
    let to = listener.local_addr().unwrap();
    let over_path = path.in_client(|| connect_times(to, n));
    // The same connects on loopback: what the kernels and our wake-up cost
    // without the line.
    let local = TcpListener::bind("127.0.0.1:0").unwrap();
    let on_loopback = connect_times(local.local_addr().unwrap(), n);
    let excess_us: Vec<f64> = over_path
        .iter()
        .map(|t| (t.as_secs_f64() - 2.0 * d.as_secs_f64()) * 1e6)
        .collect();
    let loopback_us = median(on_loopback.iter().map(|t| t.as_secs_f64() * 1e6).collect());
    let (mid, low, high) = (
        median(excess_us.clone()),
        excess_us.iter().copied().fold(f64::INFINITY, f64::min),
        excess_us.iter().copied().fold(0.0, f64::max),
    );
    let seen = path.relay_seen();
    // The figures CONTRIBUTING.md quotes come from here (`-- --nocapture`).
    println!(
        "connect over 2 × {d:?}: above 2D min {low:.0} µs, median {mid:.0} µs, max {high:.0} µs \
         (on loopback: {loopback_us:.0} µs); timer lateness mean {:?}, max {:?}",
        seen.late_mean, seen.late_max
    );
    assert!(low >= 0.0, "a packet beat the line: {excess_us:?}");
    assert!(
        mid < 1000.0,
        "the line adds {mid:.0} µs a round trip: {excess_us:?}"
    );
}

#[test]
fn the_line_holds_a_bounded_number_of_packets() {
    let Some(path) = DelayedPath::for_test(Duration::from_millis(200), None) else {
        return;
    };
    let (server, client) = udp_pair(&path);
    let to = server.local_addr().unwrap();
    // Twice what the line holds, all sent (in about 10 ms) before the
    // first is due; the line reads each as it comes.
    for _ in 0..QUEUE_PACKETS * 2 {
        client.send_to(&[0u8; 16], to).unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    let seen = path.relay_seen();
    assert_eq!(seen.peak_held, QUEUE_PACKETS as u64, "{seen:?}");
    assert!(seen.overflowed > 0, "{seen:?}");
}

#[test]
fn dropping_the_path_ends_its_line_and_devices() {
    let Some(path) = DelayedPath::for_test(Duration::from_millis(5), None) else {
        return;
    };
    let (server, client) = udp_pair(&path);
    let to = server.local_addr().unwrap();
    client.send_to(b"before", to).unwrap();
    assert!(
        server.recv_from(&mut [0u8; 16]).is_ok(),
        "the path carried nothing"
    );
    let counters = path.counters();
    drop(path);
    // The relay thread held the other reference; it has ended.
    assert_eq!(Arc::strong_count(&counters), 1);
    // The devices went with it, and the route through them.
    assert!(client.send_to(b"after", to).is_err());
}

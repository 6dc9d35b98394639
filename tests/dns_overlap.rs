//! `--no-pin-ip` against a name whose AAAA answer comes late: libcurl
//! connects on the A answer and takes the AAAA answer while TCP is still
//! connecting over a real delayed path, so its lookup ends inside `tcp`.
//! The stage must still read the path's round trip, with the overlap said.

mod support;

use std::net::{Ipv4Addr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::path::{DelayedPath, SERVER_V4};
use support::{start, ServerOpts};

/// One-way delay of the path: TCP's handshake takes 2 × this.
const DELAY: Duration = Duration::from_millis(20);
/// When the AAAA answer leaves: after libcurl's 25 ms wait for it (it then
/// connects on A) and before the 40 ms connect is over.
const AAAA_LATE: Duration = Duration::from_millis(45);
const NAME: &str = "slow.test";

/// A DNS server on 127.0.0.1:53 of the namespace it is started in: A for
/// `NAME` at once, AAAA for it (no records) after `AAAA_LATE`, everything
/// else "no such name". It stops when `stop` is set (checked every 50 ms).
fn dns_server(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 53)).expect("port 53 in the namespace");
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        let give_up = Instant::now() + Duration::from_secs(60);
        while !stop.load(Ordering::Relaxed) && Instant::now() < give_up {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            if let Some((reply, late)) = answer(&buf[..n]) {
                let sock = sock.try_clone().unwrap();
                std::thread::spawn(move || {
                    if late {
                        std::thread::sleep(AAAA_LATE);
                    }
                    let _ = sock.send_to(&reply, from);
                });
            }
        }
    })
}

/// The reply to one query, and whether it is the late one.
fn answer(query: &[u8]) -> Option<(Vec<u8>, bool)> {
    if query.len() < 12 {
        return None;
    }
    // The question: labels up to a zero byte, then type and class.
    let mut at = 12;
    let mut labels = Vec::new();
    while at < query.len() && query[at] != 0 {
        let len = usize::from(query[at]);
        labels.push(String::from_utf8_lossy(query.get(at + 1..at + 1 + len)?).to_lowercase());
        at += 1 + len;
    }
    let qtype = u16::from_be_bytes([*query.get(at + 1)?, *query.get(at + 2)?]);
    let question_end = at + 5;
    let ours = labels.join(".") == NAME;
    let mut reply = query[..question_end.min(query.len())].to_vec();
    // Response, recursion available; NXDOMAIN for anything else.
    reply[2] = 0x81;
    reply[3] = if ours { 0x80 } else { 0x83 };
    reply[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 0]);
    if ours && qtype == 1 {
        reply[7] = 1;
        // A pointer to the question's name, type A, class IN, TTL 0, 4 bytes.
        reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
        reply.extend_from_slice(&SERVER_V4.octets());
    }
    Some((reply, ours && qtype == 28))
}

#[test]
fn tcp_reads_the_round_trip_when_the_lookup_ends_inside_it() {
    if !support::have("unshare") || !support::have("mount") {
        return;
    }
    let Some(path) = DelayedPath::for_test(DELAY, None) else {
        return;
    };
    let server = path.in_server(|| {
        start(ServerOpts {
            bind: Some(SERVER_V4.into()),
            ..Default::default()
        })
    });
    let dir = std::env::temp_dir().join(format!("tlsping-dns-overlap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let resolv = dir.join("resolv.conf");
    std::fs::write(
        &resolv,
        "nameserver 127.0.0.1\noptions timeout:2 attempts:1\n",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let url = format!("https://{NAME}:{}/", server.addr.port());
    let out = path.in_client(|| {
        let up = std::process::Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(up, "lo up in the client namespace");
        let dns = dns_server(stop.clone());
        // The binary sees our resolv.conf in a mount namespace of its own.
        let mut cmd = std::process::Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$1" /etc/resolv.conf && shift && exec "$@""#)
            .arg("sh")
            .arg(&resolv)
            .arg(support::bin())
            .args([
                "--no-pin-ip",
                "-k",
                "-m",
                "cold",
                "-n",
                "4",
                "-i",
                "300ms",
                "-w",
                "5s",
                "--json",
                &url,
            ])
            .env("NO_COLOR", "1");
        let out = cmd.output().expect("running tlsping");
        stop.store(true, Ordering::Relaxed);
        let _ = dns.join();
        out
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rtt = 2.0 * DELAY.as_secs_f64() * 1e3;
    let timed = support::sample_values(&doc, "cold", |s| s["tcp_ms"].as_f64());
    assert_eq!(timed.len(), 3, "{doc:#}");
    for s in doc["samples"].as_array().unwrap() {
        let tcp = s["tcp_ms"].as_f64().unwrap();
        let overlap = s["dns_overlap_ms"].as_f64();
        // connect − namelookup would read about 20 ms here: half the path.
        assert!(tcp >= rtt - 1.0, "tcp {tcp} ms on a {rtt} ms path: {s:#}");
        // The lookup went on ~20 ms (45 − 25) beside the connect.
        let overlap = overlap.unwrap_or_else(|| panic!("no overlap said: {s:#}"));
        assert!((5.0..=35.0).contains(&overlap), "overlap {overlap}: {s:#}");
        // dns ends where the connection began (libcurl's 25 ms wait for the
        // AAAA answer included); with the overlap it reaches the late answer.
        let dns = s["dns_ms"].as_f64().unwrap();
        assert!((20.0..45.0).contains(&dns), "dns {dns}: {s:#}");
        let late = AAAA_LATE.as_secs_f64() * 1e3;
        assert!(
            dns + overlap >= late - 1.0,
            "dns and overlap reach the late answer: {s:#}"
        );
    }
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap_or("")
            .contains("its lookup went on beside tcp")
    });
    assert!(warned, "{:#}", doc["warnings"]);
}

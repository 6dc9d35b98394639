//! Scratch: a server program across the delayed path, captured at its end.
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;
use support::capture::{self, Capture, End};
use support::path::{DelayedPath, Loss, Toward, SERVER_V4};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--analyze") {
        let (pcap, port) = (&args[1], args[2].parse().unwrap());
        let frames = capture::frames(
            std::path::Path::new(pcap),
            std::path::Path::new(&format!("{pcap}.keys")),
            port,
        );
        for hs in capture::handshakes(&frames) {
            println!("capture: stream {} rtt {:.3} rt {} reply {:.3} first {:.3} own {:.3} span {:.3} added {:.3} retrans {} tail {} client-retrans {} resumed {}", hs.stream, hs.rtt_ms, hs.round_trips, hs.reply_ms, hs.first_reply_ms, hs.own_pause_ms, hs.span_ms, hs.added_ms(), hs.retransmissions, hs.tail_retransmissions, hs.client_retransmissions, hs.resumed);
        }
        return;
    }
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (ours, command) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let value = |f: &str| {
        ours.iter()
            .position(|a| a == f)
            .and_then(|i| ours.get(i + 1))
            .cloned()
    };
    let delay = Duration::from_millis(
        value("--delay-ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or(20),
    );
    let loss = value("--loss-every")
        .and_then(|v| v.parse().ok())
        .map(|every| Loss {
            toward: Toward::Client,
            every,
        });
    let lo = ours.iter().any(|a| a == "--loopback");
    let path = DelayedPath::new(delay, loss).expect("path");
    let ip = if lo {
        "127.0.0.1".to_string()
    } else {
        SERVER_V4.to_string()
    };
    if ours.iter().any(|a| a == "--bbr") {
        path.in_server(|| {
            std::fs::write("/proc/sys/net/ipv4/tcp_congestion_control", "bbr").unwrap()
        });
    }
    let cc = path.in_server(|| {
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap()
    });
    eprintln!("server cc: {}", cc.trim());
    let kind = match value("--cert").as_deref() {
        Some("rsa") => support::CertKind::Rsa4096,
        Some("big") => support::CertKind::Big,
        _ => support::CertKind::Good,
    };
    let dir = support::TempDir::new("lab");
    let (cert, key) = support::pki::leaf(kind);
    let certf = dir.path().join("cert.pem");
    let keyf = dir.path().join("key.pem");
    std::fs::write(&certf, cert.to_pem().unwrap()).unwrap();
    std::fs::write(&keyf, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    let port: u16 = 20000 + (std::process::id() % 20000) as u16;
    let server_cmd = value("--server").expect("--server CMD");
    let fill = |a: &str| {
        a.replace("{port}", &port.to_string())
            .replace("{ip}", &ip)
            .replace("{cert}", certf.to_str().unwrap())
            .replace("{key}", keyf.to_str().unwrap())
            .replace("{url}", &format!("https://localhost:{port}/"))
            .replace("{resolve}", &format!("localhost:{port}:{ip}"))
            .replace("{cacert}", &support::cacert())
    };
    let server_cmd = fill(&server_cmd);
    let run_in = |f: &(dyn Fn() -> std::process::Child + Sync)| {
        if lo {
            f()
        } else {
            path.in_server(|| f())
        }
    };
    let mut server = run_in(&|| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec {server_cmd}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(700));
    let cap = if lo {
        Capture::start(None, End::Loopback, port).unwrap()
    } else {
        Capture::start(Some(&path), End::Server, port).unwrap()
    };
    let filled: Vec<String> = command.iter().map(|a| fill(a)).collect();
    let keylog = cap.keylog();
    let client = || {
        std::process::Command::new(&filled[0])
            .args(&filled[1..])
            .env("SSLKEYLOGFILE", &keylog)
            .env("COLUMNS", "400")
            .output()
            .unwrap()
    };
    let out = if lo { client() } else { path.in_client(client) };
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if let Some(dump) = value("--keep") {
        std::fs::copy(cap.file(), &dump).unwrap();
        std::fs::copy(cap.keylog(), format!("{dump}.keys")).ok();
    }
    let frames = cap.finish();
    let _ = server.kill();
    let _ = server.wait();
    for hs in capture::handshakes(&frames) {
        println!("capture: stream {} rtt {:.3} rt {} reply {:.3} first {:.3} own {:.3} span {:.3} added {:.3} retrans {} tail {} client-retrans {} resumed {}", hs.stream, hs.rtt_ms, hs.round_trips, hs.reply_ms, hs.first_reply_ms, hs.own_pause_ms, hs.span_ms, hs.added_ms(), hs.retransmissions, hs.tail_retransmissions, hs.client_retransmissions, hs.resumed);
    }
}

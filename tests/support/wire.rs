//! What the handshake tests that hold tlsping to the wire share: server
//! programs started in a path's server end (or on loopback) and stopped by
//! their PID, a run of the binary with a capture beside it, and the
//! capture's handshakes paired with the samples.
#![allow(dead_code)]

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::capture::{self, Capture, End, Frame, WireHandshake};
use super::path::{DelayedPath, SERVER_V4};
use super::{CertKind, TempDir};

/// A server program the test started, stopped by its PID when dropped.
pub struct Program {
    child: Child,
    pub port: u16,
    _dir: TempDir,
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A leaf of `kind` and its key, as PEM files in a new folder.
pub fn cert_files(kind: CertKind) -> (TempDir, PathBuf, PathBuf) {
    let dir = TempDir::new("wire");
    let (cert, key) = super::pki::leaf(kind);
    let cert_path = dir.path().join("cert.pem");
    let key_path = dir.path().join("key.pem");
    std::fs::write(&cert_path, cert.to_pem().unwrap()).unwrap();
    std::fs::write(&key_path, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
    (dir, cert_path, key_path)
}

/// A port nothing listens on at `ip` (in the calling thread's namespace).
pub fn free_port(ip: IpAddr) -> u16 {
    std::net::TcpListener::bind(SocketAddr::new(ip, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (at most 10 s) until something accepts on `addr`.
pub fn wait_listening(addr: SocketAddr, child: &mut Child) {
    let until = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server program ended before it listened: {status}");
        }
        assert!(Instant::now() < until, "nothing listens on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Which server program.
#[derive(Clone, Copy, Debug)]
pub enum Server {
    /// `gnutls-serv --http`, with a GnuTLS priority string.
    Gnutls(&'static str),
    /// Python's `http.server` over `ssl` (OpenSSL).
    Python,
    /// `openssl s_server -www`, its groups limited to these.
    OpensslGroups(&'static str),
}

impl Server {
    fn tool(self) -> &'static str {
        match self {
            Server::Gnutls(_) => "gnutls-serv",
            Server::Python => "python3",
            Server::OpensslGroups(_) => "openssl",
        }
    }
}

pub const PYTHON_SERVER: &str = r#"
import http.server, ssl, sys
ip, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
    def log_message(self, *a): pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = http.server.ThreadingHTTPServer((ip, port), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
"#;

/// Starts `server` with a leaf of `kind` on `ip` (in `path`'s server end,
/// or on loopback without a path). `None` (after one line) where its
/// program is missing.
pub fn start_program(
    path: Option<&DelayedPath>,
    ip: IpAddr,
    server: Server,
    kind: CertKind,
) -> Option<Program> {
    if !super::have(server.tool()) {
        return None;
    }
    let (dir, cert, key) = cert_files(kind);
    let script = dir.path().join("server.py");
    std::fs::write(&script, PYTHON_SERVER).unwrap();
    let spawn = || {
        let port = free_port(ip);
        let mut cmd = match server {
            Server::Gnutls(priority) => {
                // gnutls-serv listens on every address of its namespace:
                // the path's server end (or, on loopback, only loopback
                // reaches it from this test).
                let mut c = Command::new("gnutls-serv");
                c.args([
                    "--http",
                    "--port",
                    &port.to_string(),
                    "--priority",
                    priority,
                ])
                .arg("--x509certfile")
                .arg(&cert)
                .arg("--x509keyfile")
                .arg(&key);
                c
            }
            Server::Python => {
                let mut c = Command::new("python3");
                c.arg(&script)
                    .arg(ip.to_string())
                    .arg(port.to_string())
                    .arg(&cert)
                    .arg(&key);
                c
            }
            Server::OpensslGroups(groups) => {
                let mut c = Command::new("openssl");
                c.args(["s_server", "-quiet", "-www", "-groups", groups, "-accept"])
                    .arg(SocketAddr::new(ip, port).to_string())
                    .arg("-cert")
                    .arg(&cert)
                    .arg("-key")
                    .arg(&key);
                c
            }
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting the server program");
        (child, port)
    };
    // Ready when the client's end can reach it (the server's namespace has
    // no loopback up to try from).
    let (mut child, port) = match path {
        Some(p) => p.in_server(spawn),
        None => spawn(),
    };
    let addr = SocketAddr::new(ip, port);
    match path {
        Some(p) => p.in_client(|| wait_listening(addr, &mut child)),
        None => wait_listening(addr, &mut child),
    }
    Some(Program {
        child,
        port,
        _dir: dir,
    })
}

/// One run against a server: the JSON document of a captured run, the
/// capture's handshakes (the preflight's first), and the statistics
/// block of a second run as a terminal shows it.
pub struct Run {
    pub doc: Value,
    pub wire: Vec<WireHandshake>,
    pub frames: Vec<Frame>,
    /// The second capture's segments (`run_captured`), else none.
    pub also: Vec<Frame>,
    pub text: String,
}

/// Runs the binary from the client's end (or loopback) against `port` at
/// `ip`, `args` added, with a capture at `end`; `None` where a tool is
/// missing.
pub fn run(
    path: Option<&DelayedPath>,
    ip: IpAddr,
    port: u16,
    end: End,
    args: &[&str],
) -> Option<Run> {
    run_captured(path, ip, port, end, None, args)
}

/// [`run`] with a second capture at `also` (the client's end of a path
/// beside the server's), whose segments go to `Run::also`.
pub fn run_captured(
    path: Option<&DelayedPath>,
    ip: IpAddr,
    port: u16,
    end: End,
    also: Option<End>,
    args: &[&str],
) -> Option<Run> {
    let cap = Capture::start(path, end, port)?;
    let second = match also {
        Some(e) => Some(Capture::start(path, e, port)?),
        None => None,
    };
    let keylog = cap.keylog();
    let owned = super::localhost_run(ip, port, "5s", "200ms", args);
    let all: Vec<&str> = owned.iter().map(String::as_str).collect();
    let client = |json: bool, keys: Option<&Path>| {
        let mut with = all.clone();
        if json {
            with.insert(0, "--json");
        }
        let mut cmd = super::command(&with);
        cmd.env("COLUMNS", "400");
        if let Some(keys) = keys {
            cmd.env("SSLKEYLOGFILE", keys);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", super::show(&out));
        out
    };
    let in_client = |json, keys| match path {
        Some(p) => p.in_client(|| client(json, keys)),
        None => client(json, keys),
    };
    let out = in_client(true, Some(&keylog));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The second capture reads its segments with the first one's key log,
    // before the first (and its folder) is done with.
    let also = second.map(|c| c.finish_with(&keylog));
    let frames = cap.finish();
    let wire = capture::handshakes(&frames);
    let text = super::stdout(&in_client(false, None));
    Some(Run {
        doc,
        wire,
        frames,
        also: also.unwrap_or_default(),
        text,
    })
}

/// The timed cold samples, every one answered.
pub fn cold(doc: &Value) -> Vec<Value> {
    let samples: Vec<Value> = doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["mode"] == "cold")
        .cloned()
        .collect();
    assert!(!samples.is_empty(), "{doc}");
    for s in &samples {
        assert!(s["error"].is_null(), "{s}");
    }
    samples
}

/// Each cold sample beside its connection's handshake in the capture
/// (connections in order, the preflight's first; `-m cold` runs only).
/// Every handshake was read whole unless `partial` (a lossy path, where
/// tshark can lose its way in a flight sent again).
pub fn paired(r: &Run) -> Vec<(Value, WireHandshake)> {
    let pairs = paired_partly(r);
    for (_, w) in &pairs {
        assert!(
            w.complete,
            "the capture does not show this handshake whole: {w:?}"
        );
    }
    pairs
}

pub fn paired_partly(r: &Run) -> Vec<(Value, WireHandshake)> {
    let samples = cold(&r.doc);
    assert_eq!(
        r.wire.len(),
        samples.len() + 1,
        "one captured handshake per probe and the preflight's: {:#?}",
        r.wire
    );
    samples
        .into_iter()
        .zip(r.wire[1..].iter().cloned())
        .collect()
}

/// Prints a sample beside the capture's truth (the closing note's table).
pub fn show(case: &str, s: &Value, w: &WireHandshake) {
    println!(
        "{case} | capture: {} round trips, reply {:.2}ms, own pauses {:.2}ms, \
         added {:.2}ms, retransmitted {} | tlsping: tls_round_trips {}, tls_extra {}, \
         server_handshake_ms {}, tls_transmission_ms {}, tls_ms {}",
        w.round_trips,
        w.reply_ms,
        w.own_pause_ms,
        w.added_ms(),
        w.retransmissions + w.client_retransmissions,
        s["tls_round_trips"],
        s["tls_extra"],
        s["server_handshake_ms"],
        s["tls_transmission_ms"],
        s["tls_ms"],
    );
}

/// The kinds named in a sample's `tls_extra`.
pub fn kinds(s: &Value) -> Vec<String> {
    s["tls_extra"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["kind"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The statistics lines that say why (`why:`, `early data:`, `to save`,
/// `new connection`), printed, each checked to add up.
pub fn why_lines(case: &str, text: &str) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            ["why: ", "early data: ", "to save ", "new connection "]
                .iter()
                .any(|p| t.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    for l in &lines {
        println!("{case} | {l}");
        super::why::assert_adds_up(l);
    }
    lines
}

pub fn ms(s: &Value, key: &str) -> f64 {
    s[key].as_f64().unwrap_or_else(|| panic!("no {key} in {s}"))
}

/// The in-process test server, started in `path`'s server end on
/// [`server_ip`], with `opts` otherwise.
pub fn start_at_server_end(path: &DelayedPath, opts: super::ServerOpts) -> super::TestServer {
    path.in_server(|| {
        super::start(super::ServerOpts {
            bind: Some(server_ip()),
            ..opts
        })
    })
}

/// `ip` in the server's end of a path.
pub fn server_ip() -> IpAddr {
    IpAddr::V4(SERVER_V4)
}

/// Each cold probe's `server_time_ms` and `response_held_ms` against the
/// server-side capture (`capture::replies`): the response held for our ACK
/// where and only where the capture shows it, the hold within 1.5 ms and
/// the server's time to its first data within 1 ms (medians: a busy
/// machine can run one probe late), and `new connection` counting srv's
/// second round trip where most were held. How many were held.
#[allow(dead_code)]
pub fn replies_against_capture(case: &str, r: &Run, lines: &[String]) -> Result<usize, String> {
    let wire = capture::replies(&r.frames);
    let samples = cold(&r.doc);
    assert_eq!(wire.len(), samples.len() + 1, "{wire:?}");
    let (mut held, mut server_off, mut held_off) = (0, Vec::new(), Vec::new());
    for (s, w) in samples.iter().zip(&wire[1..]) {
        println!(
            "{case} | capture: request in to first data out {:.2} ms, response held {} | tlsping: server_time_ms {}, response_held_ms {}",
            w.first_ms,
            w.held_ms.map_or("no".into(), |h| format!("{h:.2} ms beyond the round trip")),
            s["server_time_ms"],
            s["response_held_ms"]
        );
        match (w.held_ms, s["response_held_ms"].as_f64()) {
            (Some(truth), Some(ours)) => {
                held += 1;
                held_off.push((truth - ours).abs());
            }
            (None, None) => {}
            _ => return Err(format!("held or not, against the capture: {s} {w:?}")),
        }
        server_off.push((ms(s, "server_time_ms") - w.first_ms).abs());
    }
    let conn = lines
        .iter()
        .find(|l| l.starts_with("new connection"))
        .ok_or("no new connection line")?;
    let named = conn.contains("srv 2, one for a response the server's TCP held for our ACK");
    if named != (held * 2 > samples.len()) {
        return Err(format!("{held} of {} held: {conn}", samples.len()));
    }
    if super::median(server_off.clone()) > 1.0
        || (!held_off.is_empty() && super::median(held_off.clone()) > 1.5)
    {
        return Err(format!(
            "off the capture (ms): server {server_off:?}, held {held_off:?}"
        ));
    }
    Ok(held)
}

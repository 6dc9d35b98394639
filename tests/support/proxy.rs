//! A recording HTTP peer on 127.0.0.1, for where the push and the probes
//! go: at once a forward proxy (a `CONNECT` to a loopback port is tunnelled
//! there; a request for an absolute `http://` URL is answered by the peer
//! itself), a plain `http://` server and a Pushgateway stand-in, each
//! request answered `200`. It records every request line and whether an
//! `Authorization` header came with it. A real peer on a real socket, not
//! a mock of our code; it stops accepting when dropped, and every read has
//! a timeout.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the peer read.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `CONNECT localhost:443 HTTP/1.1`, `PUT http://127.0.0.1:9/metrics/... HTTP/1.1`.
    pub line: String,
    /// An `Authorization` header came with it.
    pub authorization: bool,
}

pub struct Peer {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

/// The longest a request head may be.
const HEAD_LIMIT: usize = 64 << 10;
/// The most of a request body the peer reads (a push is a few KiB).
const BODY_LIMIT: usize = 1 << 20;
/// Requests on one connection, at most.
const REQUESTS: usize = 64;
/// How long the peer lives at most, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(600);

impl Peer {
    pub fn start() -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (record, stopped) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let until = Instant::now() + LIFETIME;
            while !stopped.load(Ordering::SeqCst) && Instant::now() < until {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let record = record.clone();
                        std::thread::spawn(move || serve(stream, &record));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Peer { port, seen, stop }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request read so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Forgets what was read.
    pub fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Reads requests off one connection until it ends (or a `CONNECT` turns
/// it into a tunnel).
fn serve(mut stream: TcpStream, record: &Mutex<Vec<Seen>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    for _ in 0..REQUESTS {
        let Some((head, rest)) = read_head(&mut stream, std::mem::take(&mut buf)) else {
            return;
        };
        let mut lines = head.split("\r\n");
        let line = lines.next().unwrap_or_default().to_string();
        let mut length = 0;
        let mut authorization = false;
        for header in lines {
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            if name.eq_ignore_ascii_case("authorization") {
                authorization = true;
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().unwrap_or(0).min(BODY_LIMIT);
            }
        }
        record.lock().unwrap().push(Seen {
            line: line.clone(),
            authorization,
        });
        if let Some(target) = line.strip_prefix("CONNECT ") {
            tunnel(stream, target.split(' ').next().unwrap_or_default());
            return;
        }
        buf = rest;
        if !read_body(&mut stream, &mut buf, length) {
            return;
        }
        buf.drain(..length);
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        if stream.write_all(answer).is_err() {
            return;
        }
    }
}

/// The head of the next request (through the blank line) and what came
/// after it; `None` at the end of the stream.
fn read_head(stream: &mut TcpStream, mut buf: Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..at]).into_owned();
            return Some((head, buf[at + 4..].to_vec()));
        }
        if buf.len() > HEAD_LIMIT {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Reads until `buf` holds `length` bytes; false when the stream ended first.
fn read_body(stream: &mut TcpStream, buf: &mut Vec<u8>, length: usize) -> bool {
    let mut chunk = [0u8; 4096];
    while buf.len() < length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    true
}

/// A `CONNECT host:port` to this machine: tunnelled to 127.0.0.1:port.
/// Any other host is refused: tests send nothing off the machine.
fn tunnel(mut client: TcpStream, target: &str) {
    let (host, port) = target.rsplit_once(':').unwrap_or((target, ""));
    let port: Option<u16> = port.parse().ok();
    let local = matches!(host, "localhost" | "127.0.0.1");
    let upstream = match port.filter(|_| local) {
        Some(port) => TcpStream::connect(("127.0.0.1", port)).ok(),
        None => None,
    };
    let Some(upstream) = upstream else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let _ = upstream.set_read_timeout(Some(Duration::from_secs(5)));
    let (Ok(mut client_in), Ok(mut upstream_out)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut upstream_out);
        let _ = upstream_out.shutdown(Shutdown::Write);
    });
    let (mut upstream_in, mut client_out) = (upstream, client);
    let _ = std::io::copy(&mut upstream_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

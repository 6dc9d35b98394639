//! One connection of the calibration server: its TLS handshake, then
//! HTTP/1.1 requests answered at once until it ends.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use openssl::ssl::{HandshakeError, SslAcceptor, SslStream};

use super::{Shared, BODY, HANDSHAKE_LIMIT, IDLE_LIMIT, MAX_HEAD, TICK, WRITE_LIMIT};

/// One connection: handshake, then requests until the client closes, asks to
/// close, misbehaves, goes idle too long, or the server stops.
pub(super) fn serve_connection(tcp: TcpStream, acceptor: &SslAcceptor, shared: &Shared) {
    // Each answer is one write; Nagle would only add a delay of our own making.
    let _ = tcp.set_nodelay(true);
    if tcp.set_read_timeout(Some(TICK)).is_err()
        || tcp.set_write_timeout(Some(WRITE_LIMIT)).is_err()
    {
        return;
    }
    let Some(mut tls) = handshake(tcp, acceptor, &shared.stop) else {
        return;
    };
    if tls.ssl().session_reused() {
        shared.resumed.fetch_add(1, Ordering::SeqCst);
    }

    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    // Every pass answers one request or ends the connection; reads inside are
    // bounded by the idle deadline and the stop flag.
    loop {
        let deadline = Instant::now() + IDLE_LIMIT;
        let Some(head_len) = read_head(&mut tls, &mut buf, &shared.stop, deadline) else {
            break;
        };
        let Some(request) = parse_head(&buf[..head_len]) else {
            break;
        };
        buf.drain(..head_len);

        // tlsping sends no request body; one that declares a body is
        // answered without reading it, and its connection closed, since the
        // next request would start somewhere inside it.
        let close = request.close || request.declares_body;
        shared.requests.fetch_add(1, Ordering::SeqCst);
        let answer = response(request.head_only, close);
        if tls.write_all(&answer).and_then(|()| tls.flush()).is_err() {
            break;
        }
        if close {
            let _ = tls.shutdown();
            break;
        }
    }
}

/// Runs the server side of the TLS handshake, retrying while the socket's
/// read timeout merely ticks; `None` if it fails, times out or the server stops.
fn handshake(
    tcp: TcpStream,
    acceptor: &SslAcceptor,
    stop: &AtomicBool,
) -> Option<SslStream<TcpStream>> {
    let deadline = Instant::now() + HANDSHAKE_LIMIT;
    let mut attempt = acceptor.accept(tcp);
    loop {
        match attempt {
            Ok(tls) => return Some(tls),
            Err(HandshakeError::WouldBlock(mid)) => {
                if stop.load(Ordering::SeqCst) || Instant::now() >= deadline {
                    return None;
                }
                attempt = mid.handshake();
            }
            Err(_) => return None,
        }
    }
}

/// Reads more bytes into `buf`. False on end of stream, error, stop or deadline.
fn fill(
    tls: &mut SslStream<TcpStream>,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
    deadline: Instant,
) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        if stop.load(Ordering::SeqCst) || Instant::now() >= deadline {
            return false;
        }
        match tls.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            // The read timeout ticked (or a signal): look at the flag and clock again.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => return false,
        }
    }
}

/// Reads until `buf` starts with a whole request head and returns its length
/// (blank line included). Empty lines before a request are skipped. `None`
/// if the head grows past [`MAX_HEAD`] or reading stops.
fn read_head(
    tls: &mut SslStream<TcpStream>,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
    deadline: Instant,
) -> Option<usize> {
    let mut searched = 0;
    loop {
        let blank = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if blank > 0 {
            buf.drain(..blank);
            searched = 0;
        }
        if let Some(at) = find_blank_line(&buf[searched..]) {
            return Some(searched + at + 4);
        }
        if buf.len() >= MAX_HEAD {
            return None;
        }
        // The terminator may straddle what has been read so far and what comes next.
        searched = buf.len().saturating_sub(3);
        if !fill(tls, buf, stop, deadline) {
            return None;
        }
    }
}

/// Position of the first CRLFCRLF in `bytes`.
pub(super) fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n")
}

/// What the server needs from a request head.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    /// HEAD: the answer carries headers only.
    head_only: bool,
    /// The client wants the connection closed after this answer.
    close: bool,
    /// A `Content-Length` other than 0, or a `Transfer-Encoding`.
    declares_body: bool,
}

/// Parses a request head (request line, headers, blank line). `None` for
/// anything malformed, which ends the connection without an answer.
fn parse_head(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || method.is_empty() || target.is_empty() {
        return None;
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return None,
    };

    let mut close_asked = false;
    let mut keep_alive_asked = false;
    let mut declares_body = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                close_asked |= token.eq_ignore_ascii_case("close");
                keep_alive_asked |= token.eq_ignore_ascii_case("keep-alive");
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            declares_body |= value != "0";
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            declares_body = true;
        }
    }

    Some(Request {
        head_only: method == "HEAD",
        // HTTP/1.0 closes unless it asks for keep-alive.
        close: close_asked || (http10 && !keep_alive_asked),
        declares_body,
    })
}

/// The whole answer to one request, ready for a single write.
fn response(head_only: bool, close: bool) -> Vec<u8> {
    let connection = if close { "close" } else { "keep-alive" };
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: text/plain\r\nConnection: {}\r\n\r\n",
        BODY.len(),
        connection
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(BODY);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_head_cases() {
        let req = |s: &str| parse_head(s.as_bytes());
        assert_eq!(
            req("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(Request {
                head_only: false,
                close: false,
                declares_body: false,
            })
        );
        assert_eq!(
            req("HEAD / HTTP/1.1\r\nconnection: Keep-Alive, CLOSE\r\n\r\n"),
            Some(Request {
                head_only: true,
                close: true,
                declares_body: false,
            })
        );
        assert!(req("GET / HTTP/1.0\r\n\r\n").unwrap().close);
        assert!(
            !req("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                .unwrap()
                .close
        );
        assert!(
            req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                .unwrap()
                .declares_body
        );
        assert!(
            req("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n")
                .unwrap()
                .declares_body
        );
        assert!(
            !req("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                .unwrap()
                .declares_body
        );
        assert_eq!(req("GET / HTTP/2\r\n\r\n"), None);
        assert_eq!(req("GET /\r\n\r\n"), None);
        assert_eq!(req("GET / HTTP/1.1\r\nno colon\r\n\r\n"), None);
    }
}

//! How the test server writes its flights in parts ([`FlightCut`]), as
//! servers with Nagle's algorithm on (GnuTLS, Java) or with pauses of
//! their own do: a stream under the TLS layer that cuts the server's
//! writes and notes what it did in the server's counters.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::server::Counters;

/// How a server writes its first flight in two parts: its first two
/// records (ServerHello, ChangeCipherSpec), then the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlightCut {
    /// With Nagle's algorithm on, as GnuTLS and Java servers do: the rest,
    /// less than a segment, waits in the server's TCP for the client's ACK
    /// of the first part.
    Split,
    /// With TCP_NODELAY, the rest after the server pauses this long (work
    /// of its own between two writes).
    Pause(Duration),
    /// With Nagle's algorithm on, as a Java server with a large key does:
    /// every record but the last two (ServerHello to Certificate, more than
    /// a segment) and the start of the next (Java's first write ends inside
    /// a record), then the rest, held until the client's ACK of the short
    /// segment the first write ended in.
    Tail,
    /// With Nagle's algorithm on, as a Java TLS 1.2 server does: any write
    /// with a ChangeCipherSpec and records after it (TLS 1.2's second
    /// flight) in two, through the ChangeCipherSpec, then the rest.
    CcsAlone,
    /// With Nagle's algorithm on, as a Java server does: the first flight
    /// at once, the session tickets held until the request has come in and
    /// written then, alone, just before the response (which its TCP holds
    /// for the client's ACK of them).
    TicketAlone,
}

impl FlightCut {
    /// A cut that leaves Nagle's algorithm on.
    pub(crate) fn nagle(self) -> bool {
        !matches!(self, FlightCut::Pause(_))
    }
}

/// Where a [`CutStream`] is in its first flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CutState {
    First,
    Rest,
    Done,
}

/// A server's TCP stream that writes its first flight in two parts
/// ([`FlightCut`]) and notes what it did in `counters.flight_cuts`.
pub(crate) struct CutStream {
    pub(crate) inner: tokio::net::TcpStream,
    pub(crate) cut: FlightCut,
    pub(crate) state: CutState,
    pub(crate) counters: Arc<Counters>,
    pub(crate) first: usize,
    /// `TicketAlone`: the tickets written, not yet sent.
    pub(crate) held: Vec<u8>,
}

/// The ends of the TLS records in `buf` (those whose header is there).
fn record_ends(buf: &[u8]) -> Vec<(u8, usize)> {
    let mut ends = Vec::new();
    let mut at = 0;
    while buf.len() >= at + 5 {
        let kind = buf[at];
        at += 5 + usize::from(u16::from_be_bytes([buf[at + 3], buf[at + 4]]));
        ends.push((kind, at.min(buf.len())));
    }
    ends
}

/// The end of the first two TLS records in `buf` (or of what is there).
fn two_records(buf: &[u8]) -> usize {
    let mut at = 0;
    for _ in 0..2 {
        if buf.len() < at + 5 {
            return buf.len();
        }
        at += 5 + usize::from(u16::from_be_bytes([buf[at + 3], buf[at + 4]]));
    }
    at.min(buf.len())
}

impl AsyncRead for CutStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut me.inner).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before && !me.held.is_empty()
        {
            // The request is in: the tickets go now, alone (a few hundred
            // bytes into an empty send buffer: one non-blocking write).
            let held = std::mem::take(&mut me.held);
            me.state = CutState::Done;
            if me.inner.try_write(&held).ok() != Some(held.len()) {
                return Poll::Ready(Err(std::io::Error::other("tickets not sent whole")));
            }
            me.counters
                .flight_cuts
                .lock()
                .unwrap()
                .push((held.len(), Duration::ZERO));
        }
        read
    }
}

impl AsyncWrite for CutStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let me = self.get_mut();
        match (me.cut, me.state) {
            (FlightCut::Tail, CutState::First) if buf.first() == Some(&22) => {
                // All but the last two records (or, with fewer, the first),
                // and as Java's one record of EncryptedExtensions to
                // Finished is cut, 15 bytes into the next.
                let ends = record_ends(buf);
                let part = ends[..ends.len().saturating_sub(2).max(1)]
                    .last()
                    .map_or(buf.len(), |e| (e.1 + 15).min(buf.len()));
                me.state = CutState::Done;
                me.counters
                    .flight_cuts
                    .lock()
                    .unwrap()
                    .push((part, Duration::ZERO));
                return Pin::new(&mut me.inner).poll_write(cx, &buf[..part]);
            }
            (FlightCut::CcsAlone, _) => {
                let ends = record_ends(buf);
                if let Some(&(_, end)) = ends.iter().find(|e| e.0 == 20) {
                    if end < buf.len() {
                        me.counters
                            .flight_cuts
                            .lock()
                            .unwrap()
                            .push((end, Duration::ZERO));
                        return Pin::new(&mut me.inner).poll_write(cx, &buf[..end]);
                    }
                }
                return Pin::new(&mut me.inner).poll_write(cx, buf);
            }
            (FlightCut::TicketAlone, CutState::First) => {
                if buf.first() == Some(&22) {
                    me.state = CutState::Rest;
                }
                return Pin::new(&mut me.inner).poll_write(cx, buf);
            }
            (FlightCut::TicketAlone, CutState::Rest) => {
                // What the server writes after its first flight and before
                // the request (its tickets) waits for the request.
                me.held.extend_from_slice(buf);
                return Poll::Ready(Ok(buf.len()));
            }
            (FlightCut::Tail | FlightCut::TicketAlone, _) => {
                return Pin::new(&mut me.inner).poll_write(cx, buf);
            }
            _ => {}
        }
        match me.state {
            CutState::First if buf.first() == Some(&22) => {
                let part = two_records(buf);
                let written = Pin::new(&mut me.inner).poll_write(cx, &buf[..part]);
                if let Poll::Ready(Ok(n)) = written {
                    me.first += n;
                    if me.first >= part {
                        me.state = CutState::Rest;
                    }
                }
                written
            }
            CutState::Rest => {
                let paused = match me.cut {
                    FlightCut::Pause(d) => {
                        // The server's own work between its two writes (the
                        // test server's one worker waits with it).
                        std::thread::sleep(d);
                        d
                    }
                    _ => Duration::ZERO,
                };
                me.counters
                    .flight_cuts
                    .lock()
                    .unwrap()
                    .push((me.first, paused));
                me.state = CutState::Done;
                Pin::new(&mut me.inner).poll_write(cx, buf)
            }
            _ => Pin::new(&mut me.inner).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

//! The test server's streams: one that writes the first flight in two
//! parts ([`CutStream`]), and the TLS stream with its early data put back
//! in front ([`EarlyFirst`]).

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_openssl::SslStream;

use super::{Counters, FlightCut};

/// Where a [`CutStream`] is in its first flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CutState {
    First,
    Rest,
    Done,
}

/// A server's TCP stream that writes its first flight in two parts
/// ([`FlightCut`]) and notes what it did in `counters.flight_cuts`.
pub(super) struct CutStream {
    pub(super) inner: tokio::net::TcpStream,
    pub(super) cut: FlightCut,
    pub(super) state: CutState,
    pub(super) counters: Arc<Counters>,
    pub(super) first: usize,
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
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CutStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let me = self.get_mut();
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
                    FlightCut::Split => Duration::ZERO,
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

/// The TLS stream with the early data already read out of it put back in
/// front: HTTP reads those bytes first, then the stream.
pub(super) struct EarlyFirst<S> {
    pub(super) early: Vec<u8>,
    pub(super) pos: usize,
    pub(super) inner: SslStream<S>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for EarlyFirst<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = self.get_mut();
        if me.pos < me.early.len() {
            let n = (me.early.len() - me.pos).min(buf.remaining());
            buf.put_slice(&me.early[me.pos..me.pos + n]);
            me.pos += n;
            if me.pos == me.early.len() {
                me.early = Vec::new();
                me.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut me.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for EarlyFirst<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

//! A socket wrapper that delivers every byte the server sends D later, like a
//! link with a one-way delay from server to client. Reads are untouched, so
//! each server flight costs D on the client's clock.
//!
//! The delayed writes are made by a plain thread with `std::thread::sleep`,
//! whose precision is tens of microseconds; tokio's timer rounds up to whole
//! milliseconds, which would blur the known delay the benchmarks read back.

use std::io::{self, Write};
use std::pin::Pin;
use std::sync::mpsc::{channel, Sender};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

enum Chunk {
    Data(Instant, Vec<u8>),
    Shutdown(Instant),
}

pub struct DelayedStream {
    read: TcpStream,
    tx: Sender<Chunk>,
    delay: Duration,
}

fn write_all_nonblocking(sock: &mut std::net::TcpStream, mut buf: &[u8]) -> io::Result<()> {
    // The descriptor is shared with tokio, which made it non-blocking.
    let give_up = Instant::now() + Duration::from_secs(10);
    while !buf.is_empty() {
        match sock.write(buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < give_up => {
                std::thread::sleep(Duration::from_micros(50));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl DelayedStream {
    pub fn new(stream: TcpStream, delay: Duration) -> io::Result<DelayedStream> {
        let std_stream = stream.into_std()?;
        let mut writer = std_stream.try_clone()?;
        let read = TcpStream::from_std(std_stream)?;
        let (tx, rx) = channel::<Chunk>();
        std::thread::spawn(move || {
            for chunk in rx {
                let (due, bytes) = match chunk {
                    Chunk::Data(due, bytes) => (due, Some(bytes)),
                    Chunk::Shutdown(due) => (due, None),
                };
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                match bytes {
                    Some(bytes) => {
                        if write_all_nonblocking(&mut writer, &bytes).is_err() {
                            return;
                        }
                    }
                    None => {
                        let _ = writer.shutdown(std::net::Shutdown::Write);
                        return;
                    }
                }
            }
        });
        Ok(DelayedStream { read, tx, delay })
    }
}

impl AsyncRead for DelayedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl AsyncWrite for DelayedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let due = Instant::now() + self.delay;
        match self.tx.send(Chunk::Data(due, buf.to_vec())) {
            Ok(()) => Poll::Ready(Ok(buf.len())),
            Err(_) => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = self.tx.send(Chunk::Shutdown(Instant::now() + self.delay));
        Poll::Ready(Ok(()))
    }
}

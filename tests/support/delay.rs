//! A socket wrapper that delivers every byte the server sends D later, like a
//! link with a one-way delay from server to client. Reads are untouched, so
//! each server flight costs exactly D on the client's clock.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf, ReadHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::time::Instant;

enum Chunk {
    Data(Instant, Vec<u8>),
    Shutdown(Instant),
}

pub struct DelayedStream {
    read: ReadHalf<TcpStream>,
    tx: UnboundedSender<Chunk>,
    delay: Duration,
}

impl DelayedStream {
    pub fn new(stream: TcpStream, delay: Duration) -> DelayedStream {
        let (read, mut write) = tokio::io::split(stream);
        let (tx, mut rx) = unbounded_channel::<Chunk>();
        tokio::spawn(async move {
            while let Some(chunk) = rx.recv().await {
                match chunk {
                    Chunk::Data(due, bytes) => {
                        tokio::time::sleep_until(due).await;
                        if write.write_all(&bytes).await.is_err() {
                            return;
                        }
                    }
                    Chunk::Shutdown(due) => {
                        tokio::time::sleep_until(due).await;
                        let _ = write.shutdown().await;
                        return;
                    }
                }
            }
        });
        DelayedStream { read, tx, delay }
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

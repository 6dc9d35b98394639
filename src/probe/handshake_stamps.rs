//! The client's own time at both ends of a TLS handshake, from the moments
//! OpenSSL reports (`curl_ffi::stamp_handshake::<ThreadStamps>` has its
//! callbacks tell them to `ThreadStamps`): when our first
//! ClientHello leaves, and how long we work on the server's replies. Timing
//! logic only; every moment is CLOCK_MONOTONIC microseconds.
//!
//! The ClientHello's record header is reported just before the record is
//! written to libcurl's socket: that ends the set-up. From then on the client
//! waits for the server; the first data it reads after any wait starts a
//! stretch of its own work, which the next wait ends. Our sends pause a
//! stretch (record header, before the write) and resume it (message
//! reported, after the write), so a server that the kernel runs during our
//! send on the same machine never counts as ours.

use std::cell::Cell;

use super::curl_ffi::HandshakeMoments;

/// What the handshake callbacks saw of the current transfer on this thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Stamps {
    /// Our first ClientHello's record about to be written (0 = not yet).
    hello_us: u64,
    /// The client is waiting for server data (after the ClientHello, or after
    /// OpenSSL handed control back to libcurl to wait for the socket).
    waiting: bool,
    /// Start of the stretch of client work going on now (0 = none).
    stretch_from_us: u64,
    /// Client work on server data in stretches already ended.
    work_us: u64,
    /// A stretch was paused for a send of ours, to resume after it.
    in_send: bool,
    /// Any server data was taken up after our ClientHello.
    replied: bool,
}

impl Stamps {
    /// A record header of ours is about to be written; the first handshake
    /// record is the ClientHello.
    fn header_written(&mut self, now: u64, handshake_record: bool) {
        if self.hello_us == 0 {
            if handshake_record {
                self.hello_us = now;
                self.waiting = true;
            }
        } else if self.stretch_from_us > 0 {
            self.pause(now);
            self.in_send = true;
        }
    }

    /// A message of ours has been written: a stretch paused for it goes on.
    fn message_written(&mut self, now: u64) {
        if self.in_send {
            self.in_send = false;
            self.stretch_from_us = now;
        }
    }

    /// Server data was taken up: after a wait, our work on it starts.
    fn server_data(&mut self, now: u64) {
        if self.hello_us > 0 && self.waiting && self.stretch_from_us == 0 {
            self.waiting = false;
            self.replied = true;
            self.stretch_from_us = now;
        }
    }

    /// OpenSSL handed control back to libcurl to wait for the socket (or
    /// failed, which ends the handshake anyway).
    fn waiting_for_socket(&mut self, now: u64) {
        self.pause(now);
        self.in_send = false;
        if self.hello_us > 0 {
            self.waiting = true;
        }
    }

    fn pause(&mut self, now: u64) {
        if self.stretch_from_us > 0 {
            self.work_us += now.saturating_sub(self.stretch_from_us);
            self.stretch_from_us = 0;
        }
    }

    fn client_hello_sent_us(&self) -> Option<u64> {
        (self.hello_us > 0).then_some(self.hello_us)
    }

    /// Our work on the server's data with the handshake done at `done_us`;
    /// `None` when no server data was taken up or the stamps are out of order.
    fn client_finish_us(&self, done_us: u64) -> Option<u64> {
        if !self.replied || (self.stretch_from_us > 0 && self.stretch_from_us > done_us) {
            return None;
        }
        let open = if self.stretch_from_us > 0 {
            done_us - self.stretch_from_us
        } else {
            0
        };
        Some(self.work_us + open)
    }
}

thread_local! {
    /// A thread-local, so OpenSSL's callbacks need no pointer into our data:
    /// libcurl runs a transfer's callbacks, OpenSSL's among them, on the
    /// thread that drives it (`curl_easy_perform` for the preflight and the
    /// warm probes, `curl_multi_perform` on a cold runner's multi handle for
    /// the cold ones), and a thread drives
    /// one transfer at a time (a cold runner puts one easy handle at a time
    /// on its multi, and finishes the previous connection's close before
    /// the next probe's clock starts, see `cold_driver`).
    static STAMPS: Cell<Stamps> = const {
        Cell::new(Stamps {
            hello_us: 0,
            waiting: false,
            stretch_from_us: 0,
            work_us: 0,
            in_send: false,
            replied: false,
        })
    };
}

/// Where OpenSSL's callbacks report the moments of the handshake running on
/// this thread (`curl_ffi::stamp_handshake::<ThreadStamps>`).
pub(super) struct ThreadStamps;

impl HandshakeMoments for ThreadStamps {
    fn header_written(now_us: u64, handshake_record: bool) {
        record(|s| s.header_written(now_us, handshake_record));
    }

    fn message_written(now_us: u64) {
        record(|s| s.message_written(now_us));
    }

    fn server_data(now_us: u64) {
        record(|s| s.server_data(now_us));
    }

    fn waiting_for_socket(now_us: u64) {
        record(|s| s.waiting_for_socket(now_us));
    }
}

/// Notes a moment of the handshake running on this thread.
fn record(f: impl FnOnce(&mut Stamps)) {
    STAMPS.with(|c| {
        let mut s = c.get();
        f(&mut s);
        c.set(s);
    });
}

/// Forgets the handshake stamps of an earlier transfer on this thread.
pub(super) fn clear() {
    STAMPS.with(|c| c.set(Stamps::default()));
}

/// When the ClientHello of the transfer just run on this thread was about to
/// be written to libcurl's socket.
pub(super) fn client_hello_sent_us() -> Option<u64> {
    STAMPS.with(|c| c.get()).client_hello_sent_us()
}

/// The client's own work on the server's handshake data, for the transfer
/// just run on this thread, with the handshake done at `done_us`: every
/// stretch from taking up server data after a wait to the next wait (or to
/// done), less our own sends. `None` when no server data was taken up or the
/// stamps are out of order.
pub(super) fn client_finish_us(done_us: u64) -> Option<u64> {
    STAMPS.with(|c| c.get()).client_finish_us(done_us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_sends_and_waits_are_taken_out_of_the_finish() {
        let mut s = Stamps::default();
        s.header_written(90, false); // not a handshake record: no ClientHello yet
        s.header_written(100, true);
        assert_eq!(s.client_hello_sent_us(), Some(100));
        s.server_data(300); // the server's first flight: our work starts
        s.header_written(350, true); // a send of ours pauses it (50 so far)
        s.message_written(360); // and it goes on after the write
        s.waiting_for_socket(400); // 40 more, then a wait
        s.server_data(500); // the last flight
        assert_eq!(s.client_finish_us(520), Some(50 + 40 + 20));
        assert_eq!(
            s.client_finish_us(450),
            None,
            "done before the stretch began"
        );
    }

    #[test]
    fn no_reply_means_no_finish() {
        let mut s = Stamps::default();
        assert_eq!(s.client_hello_sent_us(), None);
        s.server_data(50); // before our ClientHello: nothing to answer yet
        s.header_written(100, true);
        s.waiting_for_socket(120);
        assert_eq!(s.client_finish_us(500), None);
    }

    #[test]
    fn the_thread_keeps_one_transfer_until_cleared() {
        clear();
        record(|s| s.header_written(7, true));
        assert_eq!(client_hello_sent_us(), Some(7));
        clear();
        assert_eq!(client_hello_sent_us(), None);
    }
}

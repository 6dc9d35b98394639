//! The client's own time in a TLS handshake and the shape of the waits on
//! the server, from the moments OpenSSL reports
//! (`curl_ffi::stamp_handshake` has its callbacks tell them to the
//! transfer's `TransferStamps`, which keeps a `Stamps`); and after the handshake, when the request's
//! record left and the response's first record came in. Timing logic only;
//! every moment is CLOCK_MONOTONIC microseconds.
//!
//! The ClientHello's record header is reported just before the record is
//! written to libcurl's socket: that ends the set-up. From then on the
//! client alternates between work of its own and waits on the server: a
//! wait begins when OpenSSL hands control back to libcurl and ends when a
//! read from the socket brings data in. The client's own work is the CPU
//! time its thread used from the ClientHello to the handshake's end (so
//! another process on the same machine, a server on loopback among them,
//! that had the CPU meanwhile never counts as ours).
//!
//! Every wait is one of two kinds. A wait that began after a send of ours
//! (a ClientHello, a second one after a HelloRetryRequest, TLS 1.2's
//! Finished flight) is an answered wait: a round trip and the server's
//! reply (an answer read without a wait begins its flight all the same).
//! A wait in the middle of a server flight (a `Gap` when it lasted
//! at least `GAP_MIN_US`) is kept with what the flight had brought before
//! it (the bytes read from the socket among them) and whether it fell
//! inside a record, for `anatomy` to name: a split
//! flight, the congestion window, a lost segment, the server's own pause,
//! or transmission. At the handshake's end the kernel says whether
//! segments were lost (`HandshakeKernel`). Fixed-size facts only: nothing
//! is allocated while a transfer runs.

use super::handshake_messages::{self, RT_HANDSHAKE, RT_HEADER};
use super::handshake_shape::{Gap, HandshakeKernel, Shape};
use super::stages::{held_behind_ticket, GAP_MIN_US};

/// Application-data records kept after the request, for finding the
/// response's first one.
const MAX_REPLY_RECORDS: usize = 8;

/// The message callback's pseudo content type of a TLS 1.3 record's inner
/// content type (ssl3.h).
const RT_INNER: i32 = 0x101;
/// The record type of application data.
const APPLICATION_DATA: u8 = 23;

/// The request's record written and the first record of its response come
/// in (µs, monotonic); and when the server's first data after the request
/// came in, where the response came in a later read behind a session
/// ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reply {
    pub request_us: u64,
    pub response_us: u64,
    pub held_after_us: Option<u64>,
}

/// One application-data record read after the request: when OpenSSL took
/// it up, and when the read that brought it in returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ReplyRecord {
    taken_us: u64,
    arrived_us: u64,
    /// A session ticket came in the same read, before it.
    behind_ticket: bool,
}

/// What the callbacks saw of one transfer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Stamps {
    /// Our first ClientHello's record about to be written (0 = not yet),
    /// and this thread's CPU time then.
    hello_us: u64,
    hello_cpu_us: u64,
    /// The handshake done (0 = not yet), and the CPU time then.
    done_us: u64,
    done_cpu_us: u64,
    /// When the wait on the server going on now began (0 = none).
    wait_from_us: u64,
    /// A send of ours since the last wait on the server ended.
    sent: bool,
    /// A server record whose header was read and whose body was not yet
    /// taken up, and its size.
    open_record: bool,
    open_len: u32,
    /// Bytes of the current flight's complete records.
    flight_done: u32,
    /// The longest wait so far in the current flight (µs), and which flight.
    flight_longest: u32,
    flight_of_longest: u8,
    /// When the data came that ended the last answered wait or kept gap,
    /// and the short waits and gaps left out since (inside records, at
    /// their ends).
    boundary_us: u64,
    short_since_us: u64,
    pause_since_us: u64,
    shape: Shape,
    /// The last read from the socket that brought data in.
    last_read_us: u64,
    /// An application-data record of ours (or, in TLS 1.3, a record whose
    /// inner type is still to come) about to be written, not yet settled.
    pending_write_us: u64,
    /// The request: our last application-data record about to be written
    /// before any of the server's came (0 = none).
    request_us: u64,
    /// A server record that may be application data (TLS 1.3: until its
    /// inner type says), as taken up.
    pending_read: Option<ReplyRecord>,
    /// The server's application-data records after the request, the first
    /// `MAX_REPLY_RECORDS`, and how many there were.
    replies: [ReplyRecord; MAX_REPLY_RECORDS],
    reply_count: u16,
    /// The server's first data after the request: when the read that
    /// brought it in returned (0 = none yet).
    first_after_us: u64,
    /// The read that brought the last session ticket after the request.
    ticket_read_us: u64,
    /// TLS 1.3 session tickets read, and the most early data one allows.
    tickets: u8,
    ticket_early_data: u32,
    /// Bytes read from the socket in the current flight.
    flight_read: u32,
    /// The server's first data after the request brought a session ticket.
    first_after_ticket: bool,
}

impl Stamps {
    pub(super) const EMPTY: Stamps = Stamps {
        hello_us: 0,
        hello_cpu_us: 0,
        done_us: 0,
        done_cpu_us: 0,
        wait_from_us: 0,
        sent: false,
        open_record: false,
        open_len: 0,
        flight_done: 0,
        flight_longest: 0,
        flight_of_longest: 0,
        boundary_us: 0,
        short_since_us: 0,
        pause_since_us: 0,
        shape: Shape::EMPTY,
        last_read_us: 0,
        pending_write_us: 0,
        request_us: 0,
        pending_read: None,
        replies: [ReplyRecord {
            taken_us: 0,
            arrived_us: 0,
            behind_ticket: false,
        }; MAX_REPLY_RECORDS],
        reply_count: 0,
        first_after_us: 0,
        ticket_read_us: 0,
        tickets: 0,
        ticket_early_data: 0,
        flight_read: 0,
        first_after_ticket: false,
    };

    /// Our handshake is under way: a ClientHello went and it is not done.
    fn in_handshake(&self) -> bool {
        self.hello_us > 0 && self.done_us == 0
    }

    /// A TLS 1.2 application-data record (no inner type follows its
    /// header) is settled by whatever comes next.
    fn settle(&mut self) {
        if self.pending_write_us > 0 {
            let at = std::mem::take(&mut self.pending_write_us);
            self.app_written(at);
        }
        if let Some(r) = self.pending_read.take() {
            self.app_read(r);
        }
    }

    fn app_written(&mut self, at: u64) {
        if self.reply_count == 0 {
            self.request_us = at;
            // What came before this record is not after the request.
            self.first_after_us = 0;
            self.ticket_read_us = 0;
            self.first_after_ticket = false;
        }
    }

    /// A server record's header taken up after the handshake: the first
    /// read after the request that brought one in.
    fn after_request(&mut self) {
        let arrived = self.last_read_us;
        if self.first_after_us == 0 && self.request_us > 0 && arrived > self.request_us {
            self.first_after_us = arrived;
        }
    }

    fn app_read(&mut self, r: ReplyRecord) {
        if self.request_us == 0 {
            return;
        }
        if let Some(slot) = self.replies.get_mut(usize::from(self.reply_count)) {
            *slot = r;
        }
        self.reply_count = self.reply_count.saturating_add(1);
    }

    /// A record header of ours is about to be written; the first handshake
    /// record is the ClientHello. `cpu` reads the CPU clock of the thread
    /// running the transfer.
    pub(super) fn header_written(&mut self, now: u64, record_type: u8, cpu: impl FnOnce() -> u64) {
        self.settle();
        if self.hello_us == 0 && self.done_us == 0 && record_type == RT_HANDSHAKE as u8 {
            self.hello_us = now;
            self.hello_cpu_us = cpu();
            self.sent = true;
            return;
        }
        if self.in_handshake() {
            self.sent = true;
        }
        if record_type == APPLICATION_DATA {
            self.pending_write_us = now;
        }
    }

    /// A message of ours has been written (for a TLS 1.3 record, first its
    /// inner content type).
    pub(super) fn message_written(&mut self, content_type: i32, message: &[u8]) {
        if content_type == RT_INNER {
            if self.pending_write_us > 0 {
                let at = std::mem::take(&mut self.pending_write_us);
                if message.first() == Some(&APPLICATION_DATA) {
                    self.app_written(at);
                }
            }
            return;
        }
        self.settle();
        if self.in_handshake() {
            self.shape.messages.ours(content_type, message);
        }
    }

    /// A read from the socket brought `bytes` in: a wait on the server ends.
    pub(super) fn data_read(&mut self, now: u64, bytes: usize) {
        self.last_read_us = now;
        if self.in_handshake() && self.wait_from_us > 0 {
            self.wait_ended(now);
        } else if self.in_handshake() && self.sent && !self.shape.messages.hello_retry {
            // The answer to a send of ours, in before we waited for it (we
            // were late to read, off the CPU on a loaded machine): a wait of
            // nothing; the flight begins here. (After a HelloRetryRequest
            // it may be the rest of the flight before, the ChangeCipherSpec
            // the server wrote with the retry.)
            self.wait_from_us = now;
            self.wait_ended(now);
        }
        if self.in_handshake() {
            let n = u32::try_from(bytes).unwrap_or(u32::MAX);
            self.flight_read = self.flight_read.saturating_add(n);
        }
    }

    /// The wait going on since `wait_from_us` ended with server data at `now`.
    fn wait_ended(&mut self, now: u64) {
        let from = std::mem::take(&mut self.wait_from_us);
        let us = now.saturating_sub(from);
        let clip = |v: u64| v.min(u64::from(u32::MAX)) as u32;
        if std::mem::take(&mut self.sent) {
            let s = &mut self.shape;
            s.answered_waits = s.answered_waits.saturating_add(1);
            s.answered_us = s.answered_us.saturating_add(us);
            s.longest_answered_us = s.longest_answered_us.max(clip(us));
            let flight = s.flight();
            s.flight_wait_us[flight] = clip(us);
            self.flight_read = 0;
            self.flight_done = 0;
            self.flight_longest = 0;
            self.flight_of_longest = self.shape.flight() as u8;
            self.boundary_us = now;
            self.short_since_us = 0;
            self.pause_since_us = 0;
            return;
        }
        self.shape.mid_wait_us = self.shape.mid_wait_us.saturating_add(us);
        let flight = self.shape.flight();
        if flight as u8 != self.flight_of_longest {
            self.flight_longest = 0;
            self.flight_of_longest = flight as u8;
        }
        if us < GAP_MIN_US {
            self.short_since_us += us;
            return;
        }
        let first = self.flight_longest < GAP_MIN_US as u32;
        self.flight_longest = self.flight_longest.max(clip(us));
        let gap = Gap {
            us: clip(us),
            flight: flight as u8,
            bytes_before: self.shape.flight_bytes[flight],
            bytes_done: self.flight_done,
            mid_record: self.open_record && self.flight_read < self.shape.flight_bytes[flight],
            first,
            since_us: clip(from.saturating_sub(self.boundary_us)),
            short_us: clip(self.short_since_us),
            pause_us: clip(self.pause_since_us),
            bytes_read: self.flight_read,
        };
        match self.shape.keep(gap) {
            // Left out: its time stays in the span of the next one.
            Some(dropped) if dropped.mid_record => self.short_since_us += u64::from(dropped.us),
            Some(dropped) => self.pause_since_us += u64::from(dropped.us),
            None => {
                self.boundary_us = now;
                self.short_since_us = 0;
                self.pause_since_us = 0;
            }
        }
    }

    /// Server data was taken up: a record header (`RT_HEADER`), a
    /// record's inner type (`RT_INNER`), or a message.
    pub(super) fn server_data(&mut self, now: u64, content_type: i32, data: &[u8]) {
        if content_type == RT_INNER {
            if let Some(r) = self.pending_read.take() {
                if data.first() == Some(&APPLICATION_DATA) {
                    self.app_read(r);
                }
            }
        } else {
            self.settle();
        }
        if self.in_handshake() {
            self.handshake_data(now, content_type, data);
            return;
        }
        if content_type == RT_HEADER {
            self.after_request();
        }
        match content_type {
            RT_HEADER if data.first() == Some(&APPLICATION_DATA) => {
                // Without a read seen (no callback on the BIO), the moment
                // it was taken up is the best there is.
                let arrived_us = if self.last_read_us > 0 {
                    self.last_read_us.max(self.request_us)
                } else {
                    now
                };
                self.pending_read = Some(ReplyRecord {
                    taken_us: now,
                    arrived_us,
                    behind_ticket: self.ticket_read_us > 0
                        && self.ticket_read_us == self.last_read_us,
                });
            }
            RT_HANDSHAKE => {
                if let Some(max) = handshake_messages::ticket_early_data(data) {
                    if self.request_us > 0 && self.last_read_us > self.request_us {
                        self.ticket_read_us = self.last_read_us;
                        self.first_after_ticket |= self.first_after_us == self.last_read_us;
                    }
                    self.tickets = self.tickets.saturating_add(1);
                    self.ticket_early_data = self.ticket_early_data.max(max);
                }
            }
            _ => {}
        }
    }

    fn handshake_data(&mut self, now: u64, content_type: i32, data: &[u8]) {
        // A wait no read was seen to end (the data came without one).
        if self.wait_from_us > 0 {
            self.wait_ended(now);
        }
        let record = self.shape.messages.server(content_type, data);
        if content_type == RT_HEADER {
            if self.open_record {
                // The record before ended without a word of its own.
                self.flight_done = self.flight_done.saturating_add(self.open_len);
            }
            let flight = self.shape.flight();
            self.shape.flight_bytes[flight] =
                self.shape.flight_bytes[flight].saturating_add(record);
            self.open_record = record > 5;
            self.open_len = record;
        } else if self.open_record {
            // A record's content is handed up only once the record is whole.
            self.open_record = false;
            self.flight_done = self.flight_done.saturating_add(self.open_len);
        }
    }

    /// OpenSSL handed control back to libcurl to wait for the socket.
    pub(super) fn waiting_for_socket(&mut self, now: u64) {
        if self.in_handshake() && self.wait_from_us == 0 {
            self.wait_from_us = now;
        }
    }

    /// The handshake is done; `cpu` and `kernel` read the CPU clock of the
    /// thread running the transfer and the connection's `TCP_INFO`.
    pub(super) fn handshake_done(
        &mut self,
        now: u64,
        cpu: impl FnOnce() -> u64,
        kernel: impl FnOnce() -> Option<HandshakeKernel>,
    ) {
        self.settle();
        if !self.in_handshake() {
            return;
        }
        self.done_us = now;
        self.done_cpu_us = cpu();
        self.shape.kernel = kernel();
        self.wait_from_us = 0;
    }

    /// The handshake's shape, once our ClientHello has left.
    pub(super) fn shape(&self) -> Option<Shape> {
        (self.hello_us > 0).then_some(self.shape)
    }

    pub(super) fn client_hello_sent_us(&self) -> Option<u64> {
        (self.hello_us > 0).then_some(self.hello_us)
    }

    /// Our work from the ClientHello to the handshake done at `done_us`
    /// (libcurl's stamp, just after OpenSSL's): this thread's CPU time
    /// until OpenSSL's end of the handshake, then the wall time to libcurl's.
    /// `None` when the handshake's end was not seen or the stamps are out
    /// of order.
    pub(super) fn client_finish_us(&self, done_us: u64) -> Option<u64> {
        if self.hello_us == 0
            || self.done_us == 0
            || self.done_us > done_us
            || self.done_cpu_us < self.hello_cpu_us
        {
            return None;
        }
        let cpu = self.done_cpu_us - self.hello_cpu_us;
        let work = cpu.saturating_add(done_us - self.done_us);
        Some(work.min(done_us.saturating_sub(self.hello_us)))
    }

    /// The request's record written and the first record of its response
    /// come in, for a response whose first header reached our callback at
    /// `first_byte_us`: the server's application-data records are taken up
    /// in order, and the response's first is the last one taken up before
    /// that (on HTTP/2 the server's SETTINGS come before it in records of
    /// their own; libcurl hands on a record's data before it reads the
    /// next, or, on HTTP/2, what it read in one go). `None` when no request
    /// or no record of the response was seen, or the records kept cannot
    /// tell.
    pub(super) fn reply(&self, first_byte_us: u64) -> Option<Reply> {
        if self.request_us == 0 {
            return None;
        }
        let mut r = self.replies;
        let mut n = usize::from(self.reply_count).min(MAX_REPLY_RECORDS);
        if let Some(p) = self.pending_read {
            if n < MAX_REPLY_RECORDS {
                r[n] = p;
                n += 1;
            }
        }
        let kept = &r[..n];
        let before = kept.iter().rposition(|r| r.taken_us <= first_byte_us)?;
        // Records left out for want of room might have come before it.
        if before + 1 == kept.len() && usize::from(self.reply_count) > MAX_REPLY_RECORDS {
            return None;
        }
        let response = kept[before];
        // The server's first data after the request, where it came in a
        // read of its own and the response in a later one behind a session
        // ticket (which a server writes at the handshake's end, never
        // late): the server's TCP held the ticket and the response back.
        let held_after_us = ((response.behind_ticket || self.held_behind_lone_ticket(&response))
            && self.first_after_us > 0
            && self.first_after_us < response.arrived_us)
            .then_some(self.first_after_us);
        Some(Reply {
            request_us: self.request_us,
            response_us: response.arrived_us,
            held_after_us,
        })
    }

    /// A response that came in a later read than a session ticket that was
    /// the server's first data after the request (Java's servers write it
    /// only then), an ACK our kernel delayed and a round trip after it (or
    /// a round trip): the server's TCP held the response for our ACK of
    /// the ticket (Nagle's algorithm). Tighter than a ticket that came with
    /// the response, as a server slow to answer after writing its tickets
    /// at the handshake's end looks the same from here.
    fn held_behind_lone_ticket(&self, response: &ReplyRecord) -> bool {
        let r = self.shape.kernel.map_or(0, |k| u64::from(k.min_rtt_us));
        self.first_after_ticket
            && r > 0
            && response.arrived_us > self.first_after_us
            && held_behind_ticket(response.arrived_us - self.first_after_us, r)
    }

    /// The session tickets this transfer read: how many, and the most early
    /// data one of them allows.
    pub(super) fn tickets(&self) -> (u8, u32) {
        (self.tickets, self.ticket_early_data)
    }
}

#[cfg(test)]
#[path = "handshake_stamps_tests.rs"]
mod tests;

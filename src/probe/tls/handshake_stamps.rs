//! The client's own time in a TLS handshake and the shape of the waits on
//! the server, from the moments OpenSSL reports
//! (`curl_ffi::stamp_handshake::<ThreadStamps>` has its callbacks tell
//! them to `ThreadStamps`); and after the handshake, when the request's
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

use std::cell::RefCell;

use super::curl_ffi::{self, HandshakeMoments};
use super::handshake_messages::{self, MessageFacts, RT_HANDSHAKE, RT_HEADER};
use super::stages::{held_behind_ticket, GAP_MIN_US};

/// Server flights whose bytes are kept (TLS 1.2 and a HelloRetryRequest
/// have two; later ones add to the last).
pub(super) const MAX_FLIGHTS: usize = 4;
/// Waits in the middle of a flight that are kept (the longest).
pub(super) const MAX_GAPS: usize = 8;
/// Application-data records kept after the request, for finding the
/// response's first one.
pub(super) const MAX_REPLY_RECORDS: usize = 8;

/// The message callback's pseudo content type of a TLS 1.3 record's inner
/// content type (ssl3.h).
const RT_INNER: i32 = 0x101;
/// The record type of application data.
const APPLICATION_DATA: u8 = 23;

/// A wait in the middle of a server flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Gap {
    pub us: u32,
    /// Which flight (0 first) it interrupted.
    pub flight: u8,
    /// The flight's bytes before it, as its record headers announced them
    /// (a record begun and not complete counts whole).
    pub bytes_before: u32,
    /// Of those, the bytes of complete records.
    pub bytes_done: u32,
    /// It began inside a record: the server had already written the rest
    /// of that record, so the wait is the network's, never the server's.
    /// (A record whose bytes had all come is whole, though OpenSSL reports
    /// some, TLS 1.2's ChangeCipherSpec, only once it reads on.)
    pub mid_record: bool,
    /// No longer wait came before it in its flight.
    pub first: bool,
    /// From the data that ended the wait before it (an answered wait or a
    /// gap kept before it) to its own start: our work on that data, the
    /// short waits between (`short_us`), and the gaps left out for want of
    /// room, at a record's end (`pause_us`) or inside one (in `short_us`).
    pub since_us: u32,
    pub short_us: u32,
    pub pause_us: u32,
    /// The flight's bytes read from the socket before it (what had come
    /// in, a record begun counting only as far as it had).
    pub bytes_read: u32,
}

/// What the kernel said of the connection as the handshake ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HandshakeKernel {
    /// Segments of ours retransmitted (less those the server reported as
    /// duplicates).
    pub retrans: u32,
    /// The server's segments that arrived out of order: one before them
    /// was lost.
    pub ooo: u32,
    /// The server's segment size as we see it: the larger of ours and of
    /// the largest of its segments so far (0: unknown).
    pub mss: u32,
    /// The connection's min RTT so far (µs; 0: unknown).
    pub min_rtt_us: u32,
}

/// What the handshake callbacks saw of the handshake's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    pub messages: MessageFacts,
    /// Waits that began after a send of ours and ended with server data,
    /// and the one that began each flight (µs).
    pub answered_waits: u8,
    pub flight_wait_us: [u32; MAX_FLIGHTS],
    /// Their sum, and the longest.
    pub answered_us: u64,
    pub longest_answered_us: u32,
    /// Every wait in the middle of a flight, summed (kept or not).
    pub mid_wait_us: u64,
    /// The bytes of each server flight (the records that began to arrive
    /// between two sends of ours).
    pub flight_bytes: [u32; MAX_FLIGHTS],
    /// The longest gaps (at most `MAX_GAPS`), in the order they happened.
    pub gaps: [Gap; MAX_GAPS],
    pub gap_count: u8,
    /// The longest gap left out for want of room (0 = none): were it long
    /// enough to count, the count is unknown. Those left out at a record's
    /// end, summed (as the server's pauses).
    pub longest_dropped_us: u32,
    pub dropped_pause_us: u64,
    /// The kernel's word at the handshake's end (`None`: not read).
    pub kernel: Option<HandshakeKernel>,
}

impl Shape {
    const EMPTY: Shape = Shape {
        messages: MessageFacts::EMPTY,
        answered_waits: 0,
        flight_wait_us: [0; MAX_FLIGHTS],
        answered_us: 0,
        longest_answered_us: 0,
        mid_wait_us: 0,
        flight_bytes: [0; MAX_FLIGHTS],
        gaps: [Gap {
            us: 0,
            flight: 0,
            bytes_before: 0,
            bytes_done: 0,
            mid_record: false,
            first: false,
            since_us: 0,
            short_us: 0,
            pause_us: 0,
            bytes_read: 0,
        }; MAX_GAPS],
        gap_count: 0,
        longest_dropped_us: 0,
        dropped_pause_us: 0,
        kernel: None,
    };

    /// The long gaps kept, in order.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps[..usize::from(self.gap_count).min(MAX_GAPS)]
    }

    /// The flight server data goes to now.
    fn flight(&self) -> usize {
        usize::from(self.answered_waits.saturating_sub(1)).min(MAX_FLIGHTS - 1)
    }

    /// Keeps `gap` among the longest, in order; the shortest makes way.
    /// Returns a gap that made way and whose time the caller carries into
    /// the next one, or `None`.
    fn keep(&mut self, mut gap: Gap) -> Option<Gap> {
        let count = usize::from(self.gap_count);
        if count < MAX_GAPS {
            self.gaps[count] = gap;
            self.gap_count += 1;
            return None;
        }
        let shortest = (0..MAX_GAPS).min_by_key(|&i| self.gaps[i].us).unwrap_or(0);
        if gap.us <= self.gaps[shortest].us {
            self.dropped(&gap);
            return Some(gap);
        }
        // Out with the shortest: its time goes to the span of the gap after
        // it, the rest move up, the new one goes last.
        let out = self.gaps[shortest];
        self.dropped(&out);
        let next = if shortest + 1 < MAX_GAPS {
            &mut self.gaps[shortest + 1]
        } else {
            &mut gap
        };
        next.since_us = next
            .since_us
            .saturating_add(out.since_us.saturating_add(out.us));
        next.short_us = next.short_us.saturating_add(out.short_us);
        next.pause_us = next.pause_us.saturating_add(out.pause_us);
        if out.mid_record {
            next.short_us = next.short_us.saturating_add(out.us);
        } else {
            next.pause_us = next.pause_us.saturating_add(out.us);
        }
        self.gaps.copy_within(shortest + 1.., shortest);
        self.gaps[MAX_GAPS - 1] = gap;
        None
    }

    /// Notes a gap left out: the longest, and those at a record's end.
    fn dropped(&mut self, gap: &Gap) {
        self.longest_dropped_us = self.longest_dropped_us.max(gap.us);
        if !gap.mid_record {
            self.dropped_pause_us += u64::from(gap.us);
        }
    }
}

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

/// What the callbacks saw of the current transfer on this thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Stamps {
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
    const EMPTY: Stamps = Stamps {
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
    /// record is the ClientHello. `cpu` reads this thread's CPU clock.
    fn header_written(&mut self, now: u64, record_type: u8, cpu: impl FnOnce() -> u64) {
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
    fn message_written(&mut self, content_type: i32, message: &[u8]) {
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
    fn data_read(&mut self, now: u64, bytes: usize) {
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
    fn server_data(&mut self, now: u64, content_type: i32, data: &[u8]) {
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
    fn waiting_for_socket(&mut self, now: u64) {
        if self.in_handshake() && self.wait_from_us == 0 {
            self.wait_from_us = now;
        }
    }

    /// The handshake is done; `cpu` and `kernel` read this thread's CPU
    /// clock and the connection's `TCP_INFO`.
    fn handshake_done(
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
    fn shape(&self) -> Option<Shape> {
        (self.hello_us > 0).then_some(self.shape)
    }

    fn client_hello_sent_us(&self) -> Option<u64> {
        (self.hello_us > 0).then_some(self.hello_us)
    }

    /// Our work from the ClientHello to the handshake done at `done_us`
    /// (libcurl's stamp, just after OpenSSL's): this thread's CPU time
    /// until OpenSSL's end of the handshake, then the wall time to libcurl's.
    /// `None` when the handshake's end was not seen or the stamps are out
    /// of order.
    fn client_finish_us(&self, done_us: u64) -> Option<u64> {
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
    fn reply(&self, first_byte_us: u64) -> Option<Reply> {
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
    fn tickets(&self) -> (u8, u32) {
        (self.tickets, self.ticket_early_data)
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
    /// the next probe's clock starts, see `cold_driver`). The callbacks
    /// never call one another, so a borrow is never already taken; were it
    /// ever, the moment is dropped rather than the process.
    static STAMPS: RefCell<Stamps> = const { RefCell::new(Stamps::EMPTY) };
}

/// Where OpenSSL's callbacks report the moments of the transfer running on
/// this thread (`curl_ffi::stamp_handshake::<ThreadStamps>`).
pub(crate) struct ThreadStamps;

impl HandshakeMoments for ThreadStamps {
    fn header_written(now_us: u64, record_type: u8) {
        record(|s| s.header_written(now_us, record_type, curl_ffi::thread_cpu_us));
    }

    fn message_written(_now_us: u64, content_type: i32, message: &[u8]) {
        record(|s| s.message_written(content_type, message));
    }

    fn server_data(now_us: u64, content_type: i32, data: &[u8]) {
        record(|s| s.server_data(now_us, content_type, data));
    }

    fn waiting_for_socket(now_us: u64) {
        record(|s| s.waiting_for_socket(now_us));
    }

    fn handshake_done(now_us: u64) {
        record(|s| {
            s.handshake_done(now_us, curl_ffi::thread_cpu_us, || {
                curl_ffi::tcp_now().map(|k| HandshakeKernel {
                    retrans: k.total_retrans,
                    ooo: k.rcv_ooopack,
                    mss: k.snd_mss.max(k.rcv_mss),
                    min_rtt_us: k.min_rtt_us.unwrap_or(0),
                })
            })
        });
    }

    fn data_read(now_us: u64, bytes: usize) {
        record(|s| s.data_read(now_us, bytes));
    }
}

/// Notes a moment of the transfer running on this thread.
fn record(f: impl FnOnce(&mut Stamps)) {
    STAMPS.with(|c| {
        if let Ok(mut s) = c.try_borrow_mut() {
            f(&mut s);
        }
    });
}

/// Reads the stamps of the transfer just run on this thread.
fn read<T>(f: impl FnOnce(&Stamps) -> T) -> T {
    STAMPS.with(|c| match c.try_borrow() {
        Ok(s) => f(&s),
        Err(_) => f(&Stamps::EMPTY),
    })
}

/// The shape of the handshake of the transfer just run on this thread;
/// `None` when no ClientHello of ours left.
pub(crate) fn shape() -> Option<Shape> {
    read(Stamps::shape)
}

/// Forgets the stamps of an earlier transfer on this thread.
pub(crate) fn clear() {
    STAMPS.with(|c| {
        if let Ok(mut s) = c.try_borrow_mut() {
            *s = Stamps::EMPTY;
        }
    });
}

/// When the ClientHello of the transfer just run on this thread was about to
/// be written to libcurl's socket.
pub(crate) fn client_hello_sent_us() -> Option<u64> {
    read(Stamps::client_hello_sent_us)
}

/// The client's own work in the handshake of the transfer just run on this
/// thread, with libcurl's handshake-done stamp at `done_us`
/// (`Stamps::client_finish_us`).
pub(crate) fn client_finish_us(done_us: u64) -> Option<u64> {
    read(|s| s.client_finish_us(done_us))
}

/// The request's record written and its response's first record come in
/// (`Stamps::reply`), for the transfer just run on this thread.
pub(crate) fn reply(first_byte_us: u64) -> Option<Reply> {
    read(|s| s.reply(first_byte_us))
}

/// The session tickets the transfer just run on this thread read: how
/// many, and the most early data one allows.
pub(crate) fn tickets() -> (u8, u32) {
    read(Stamps::tickets)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: fn() -> u64 = || 0;

    /// A server record of `n` bytes (header included) at `t`: its header,
    /// then its inner type (TLS 1.3), read in at `t`.
    fn record_at(s: &mut Stamps, t: u64, n: u16) {
        s.data_read(t, usize::from(n));
        let len = (n - 5).to_be_bytes();
        s.server_data(t, RT_HEADER, &[23, 3, 3, len[0], len[1]]);
        s.server_data(t, RT_INNER, &[22]);
    }

    /// A server record of `n` bytes whose header and first half come in at
    /// `t` and whose body completes at `end` (after a wait of its own in
    /// between).
    fn split_record(s: &mut Stamps, t: u64, wait: u64, end: u64, n: u16) {
        s.data_read(t, usize::from(n / 2));
        let len = (n - 5).to_be_bytes();
        s.server_data(t, RT_HEADER, &[23, 3, 3, len[0], len[1]]);
        s.waiting_for_socket(wait);
        s.data_read(end, usize::from(n - n / 2));
        s.server_data(end, RT_INNER, &[22]);
    }

    fn hello(s: &mut Stamps, t: u64, cpu: u64) {
        s.header_written(t, 22, || cpu);
        s.waiting_for_socket(t + 10);
    }

    #[test]
    fn the_finish_is_our_cpu_time_from_the_hello_to_the_end() {
        let mut s = Stamps::default();
        s.header_written(90, 23, CPU); // not a handshake record: no ClientHello yet
        hello(&mut s, 100, 5_000);
        assert_eq!(s.client_hello_sent_us(), Some(100));
        record_at(&mut s, 40_100, 900);
        s.header_written(40_300, 23, CPU); // our Finished
        s.message_written(RT_INNER, &[22]);
        assert_eq!(s.client_finish_us(40_400), None, "not done yet");
        s.handshake_done(40_350, || 5_600, || None);
        // 600 µs of CPU, then libcurl's 50 µs to its stamp.
        assert_eq!(s.client_finish_us(40_400), Some(650));
        assert_eq!(
            s.client_finish_us(40_300),
            None,
            "libcurl's stamp before OpenSSL's end"
        );
        // A ticket read after the handshake changes nothing of it.
        let before = s.shape();
        s.data_read(80_000, 100);
        s.server_data(80_000, RT_HEADER, &[23, 3, 3, 0, 250]);
        s.server_data(80_000, RT_INNER, &[22]);
        s.waiting_for_socket(80_010);
        assert_eq!(s.shape(), before);
        assert_eq!(s.client_finish_us(40_400), Some(650));
    }

    #[test]
    fn no_done_means_no_finish() {
        let mut s = Stamps::default();
        assert_eq!(s.client_hello_sent_us(), None);
        s.server_data(50, RT_HEADER, &[22, 3, 3, 0, 90]); // before our ClientHello
        hello(&mut s, 100, 1);
        assert_eq!(s.client_finish_us(500), None);
    }

    #[test]
    fn an_answer_in_before_we_waited_begins_its_flight_all_the_same() {
        // TLS 1.2: our Finished flight, then (we were off the CPU) the
        // server's ChangeCipherSpec read 40 ms later without a wait, and
        // its Finished our delayed ACK and a round trip after that.
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 2_000);
        s.header_written(40_100, 20, CPU);
        record_at(&mut s, 80_200, 6);
        s.waiting_for_socket(80_210);
        record_at(&mut s, 161_000, 45);
        let shape = s.shape().unwrap();
        assert_eq!(shape.answered_waits, 2);
        assert_eq!(shape.flight_bytes[..2], [2_000, 51]);
        assert_eq!(shape.gaps().len(), 1);
        assert_eq!((shape.gaps()[0].flight, shape.gaps()[0].bytes_read), (1, 6));
        // After a HelloRetryRequest, the ChangeCipherSpec read without a
        // wait after our second ClientHello came with the retry: the
        // flight before.
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 100);
        s.shape.messages.hello_retry = true;
        s.header_written(40_900, 22, CPU);
        record_at(&mut s, 40_920, 6);
        s.waiting_for_socket(40_930);
        record_at(&mut s, 81_000, 900);
        let shape = s.shape().unwrap();
        assert_eq!(shape.answered_waits, 2);
        assert_eq!(shape.flight_bytes[..2], [106, 900]);
        assert!(shape.gaps().is_empty());
    }

    #[test]
    fn each_wait_after_a_send_of_ours_is_a_round_trip() {
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 100); // HelloRetryRequest
        s.header_written(40_100, 22, CPU); // the second ClientHello
        s.waiting_for_socket(40_120);
        record_at(&mut s, 80_000, 3000);
        s.waiting_for_socket(80_100); // a short wait inside the flight
        record_at(&mut s, 80_300, 1000);
        let shape = s.shape().unwrap();
        assert_eq!(shape.answered_waits, 2);
        assert_eq!(shape.answered_us, (40_000 - 110) + (80_000 - 40_120));
        assert_eq!(shape.flight_bytes[..2], [100, 4000]);
        assert!(shape.gaps().is_empty());
        assert_eq!(shape.mid_wait_us, 200);
        assert_eq!(shape.messages.server_record_bytes, 4100);
    }

    #[test]
    fn a_long_wait_in_a_flight_is_kept_with_what_came_before_it() {
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 133); // a small first part
        s.waiting_for_socket(40_050);
        record_at(&mut s, 80_050, 700); // the rest, a round trip later
                                        // Inside a record: the header came, the body after a long wait.
        split_record(&mut s, 80_100, 80_110, 81_600, 9000);
        let shape = s.shape().unwrap();
        assert_eq!(shape.answered_waits, 1);
        assert_eq!(
            shape.gaps(),
            &[
                Gap {
                    us: 40_000,
                    flight: 0,
                    bytes_before: 133,
                    bytes_done: 133,
                    mid_record: false,
                    first: true,
                    since_us: 50,
                    short_us: 0,
                    pause_us: 0,
                    bytes_read: 133,
                },
                Gap {
                    us: 1_490,
                    flight: 0,
                    bytes_before: 9833,
                    bytes_done: 833,
                    mid_record: true,
                    first: false,
                    since_us: 60,
                    short_us: 0,
                    pause_us: 0,
                    // Of the 9 000-byte record, the half that had come.
                    bytes_read: 133 + 700 + 4_500,
                }
            ]
        );
        assert_eq!(shape.mid_wait_us, 41_490);
    }

    #[test]
    fn only_the_longest_gaps_are_kept_in_order() {
        let mut full = Stamps::default();
        hello(&mut full, 1, 0);
        record_at(&mut full, 100, 500);
        let mut t = 100;
        for i in 0..(MAX_GAPS as u64 + 2) {
            full.waiting_for_socket(t + 1);
            t += 10_000 + i * 1_000;
            record_at(&mut full, t, 500);
        }
        let shape = full.shape().unwrap();
        assert_eq!(shape.gaps().len(), MAX_GAPS);
        assert_eq!(shape.longest_dropped_us, 10_999);
        let kept: Vec<u32> = shape.gaps().iter().map(|g| g.us).collect();
        assert_eq!(
            kept,
            (2..MAX_GAPS as u32 + 2)
                .map(|i| 9_999 + 1_000 * i)
                .collect::<Vec<_>>()
        );
        // The two left out (at records' ends: the server's pauses) went
        // into the span of the gap after them.
        assert_eq!(shape.gaps()[0].since_us, 1 + 9_999 + 1 + 10_999 + 1);
        assert_eq!(shape.gaps()[0].pause_us, 9_999 + 10_999);
        assert_eq!(shape.dropped_pause_us, 9_999 + 10_999);
    }

    #[test]
    fn the_response_is_the_last_record_before_libcurl_saw_its_first_byte() {
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 900);
        s.header_written(40_200, 23, CPU); // our Finished
        s.message_written(RT_INNER, &[22]);
        s.handshake_done(40_250, CPU, || None);
        // The request (HTTP/2: preface and HEADERS, two records).
        s.header_written(40_300, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        s.header_written(40_320, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        // Two tickets and the server's SETTINGS come in one read, the
        // response in the next; our SETTINGS ack in between is no request.
        s.data_read(80_400, 100);
        for inner in [22, 22, 23] {
            s.server_data(80_410, RT_HEADER, &[23, 3, 3, 0, 200]);
            s.server_data(80_410, RT_INNER, &[inner]);
        }
        s.header_written(80_700, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        s.data_read(80_900, 100);
        s.server_data(81_200, RT_HEADER, &[23, 3, 3, 1, 44]);
        s.server_data(81_200, RT_INNER, &[23]);
        // libcurl saw the response at 81 300: its record came in at 80 900
        // (no ticket before it in that read: nothing held).
        assert_eq!(
            s.reply(81_300),
            Some(Reply {
                request_us: 40_320,
                response_us: 80_900,
                held_after_us: None,
            })
        );
        // Had libcurl seen it in the first read, that one's, with nothing
        // before it.
        assert_eq!(
            s.reply(80_500),
            Some(Reply {
                request_us: 40_320,
                response_us: 80_400,
                held_after_us: None,
            })
        );
        assert_eq!(s.reply(80_000), None);
        assert_eq!(
            s.tickets(),
            (0, 0),
            "not tickets: no NewSessionTicket in them"
        );
    }

    #[test]
    fn a_kept_connection_has_a_request_and_a_response_too() {
        // TLS 1.2: no inner types; the next moment settles each record.
        let mut s = Stamps::default();
        s.header_written(1_000, 23, CPU);
        s.data_read(41_000, 100);
        s.server_data(41_050, RT_HEADER, &[23, 3, 3, 0, 100]);
        assert_eq!(
            s.reply(41_100),
            Some(Reply {
                request_us: 1_000,
                response_us: 41_000,
                held_after_us: None,
            })
        );
        assert_eq!(s.shape(), None);
    }

    /// A NewSessionTicket message (no early data), as the message callback
    /// hands it on.
    fn ticket() -> Vec<u8> {
        let mut body = 7200u32.to_be_bytes().to_vec();
        body.extend([0, 0, 0, 9, 1, 0, 0, 4, 5, 5, 5, 5, 0, 0]);
        let mut m = vec![4, 0, 0, body.len() as u8];
        m.extend(body);
        m
    }

    /// A server record of inner type `inner` read at `t` (TLS 1.3): the
    /// header, the inner type and, for a ticket, the message.
    fn theirs(s: &mut Stamps, t: u64, inner: u8) {
        s.server_data(t, RT_HEADER, &[23, 3, 3, 0, 60]);
        s.server_data(t, RT_INNER, &[inner]);
        if inner == 22 {
            s.server_data(t, 22, &ticket());
        }
    }

    /// After a handshake done at 40 000: the request's record at 40 100.
    fn requested() -> Stamps {
        let mut s = Stamps::default();
        hello(&mut s, 100, 0);
        record_at(&mut s, 40_000, 900);
        s.handshake_done(40_050, CPU, || None);
        s.header_written(40_100, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        s
    }

    #[test]
    fn a_response_behind_a_ticket_a_read_later_was_held() {
        // The first ticket alone, the second with the response a round
        // trip and a delayed ACK later: held.
        let mut s = requested();
        s.data_read(80_300, 100);
        theirs(&mut s, 80_310, 22);
        s.data_read(161_000, 100);
        theirs(&mut s, 161_010, 22);
        theirs(&mut s, 161_020, 23);
        let held = Reply {
            request_us: 40_100,
            response_us: 161_000,
            held_after_us: Some(80_300),
        };
        assert_eq!(s.tickets().0, 2);
        assert_eq!(s.reply(161_100), Some(held));
        // Both tickets first, the response alone later: the server's own
        // time, nothing held.
        let mut s = requested();
        s.data_read(80_300, 100);
        theirs(&mut s, 80_310, 22);
        theirs(&mut s, 80_320, 22);
        s.data_read(161_000, 100);
        theirs(&mut s, 161_010, 23);
        assert_eq!(
            s.reply(161_100),
            Some(Reply {
                held_after_us: None,
                ..held
            })
        );
        // A ticket after the response in its read holds nothing back.
        let mut s = requested();
        s.data_read(80_300, 100);
        theirs(&mut s, 80_310, 22);
        s.data_read(161_000, 100);
        theirs(&mut s, 161_010, 23);
        theirs(&mut s, 161_020, 22);
        assert_eq!(s.reply(161_100).unwrap().held_after_us, None);
        // What came before the request's record left is not after it.
        let mut s = requested();
        s.data_read(40_090, 100);
        theirs(&mut s, 40_095, 22);
        s.header_written(40_200, 23, CPU);
        s.message_written(RT_INNER, &[23]);
        s.data_read(121_000, 100);
        theirs(&mut s, 121_010, 22);
        theirs(&mut s, 121_020, 23);
        assert_eq!(
            s.reply(121_100),
            Some(Reply {
                request_us: 40_200,
                response_us: 121_000,
                held_after_us: None,
            })
        );
    }

    #[test]
    fn a_response_a_delayed_ack_behind_a_lone_ticket_was_held() {
        // Java: the ticket alone 40.3 ms after the request, the response
        // in a later read our delayed ACK and a round trip after it.
        let lone = |response_at: u64, min_rtt_us: u32| {
            let mut s = Stamps::default();
            hello(&mut s, 100, 0);
            record_at(&mut s, 40_000, 900);
            let kernel = HandshakeKernel {
                min_rtt_us,
                ..Default::default()
            };
            s.handshake_done(40_050, CPU, || Some(kernel));
            s.header_written(40_100, 23, CPU);
            s.message_written(RT_INNER, &[23]);
            s.data_read(80_400, 1_196);
            theirs(&mut s, 80_410, 22);
            s.data_read(response_at, 120);
            theirs(&mut s, response_at + 10, 23);
            s.reply(response_at + 100).unwrap().held_after_us
        };
        assert_eq!(lone(161_400, 40_000), Some(80_400));
        // 100 ms after the ticket: the server's own time, not held.
        assert_eq!(lone(180_400, 40_000), None);
        // No min RTT to judge by: not held.
        assert_eq!(lone(161_400, 0), None);
    }

    #[test]
    fn the_thread_keeps_one_transfer_until_cleared() {
        clear();
        record(|s| s.header_written(7, 22, CPU));
        assert_eq!(client_hello_sent_us(), Some(7));
        clear();
        assert_eq!(client_hello_sent_us(), None);
    }

    /// One moment as a callback reports it to `ThreadStamps`.
    enum Step {
        /// Our record header or message (content type, bytes).
        Ours(i32, Vec<u8>),
        /// The server's record header, inner type or message.
        Theirs(i32, Vec<u8>),
        /// A read brought data in.
        Read,

        /// OpenSSL hands control back to libcurl.
        Wait,
        /// The handshake is done.
        Done,
    }

    /// One probe as the callbacks report it to `ThreadStamps`, each
    /// moment read off CLOCK_MONOTONIC as the FFI callbacks do; with
    /// `bytes` false the same calls carry nothing to read (what the
    /// callbacks cost without the parser).
    fn one_handshake(bytes: bool, steps: &[Step]) {
        clear();
        for step in steps {
            let t = curl_ffi::monotonic_us();
            match step {
                Step::Ours(0x100, data) => {
                    ThreadStamps::header_written(t, data.first().copied().unwrap_or(0))
                }
                Step::Ours(ct, data) => {
                    ThreadStamps::message_written(t, *ct, if bytes { data } else { &[] })
                }
                Step::Theirs(ct, data) => {
                    let keep = bytes || *ct == RT_HEADER || *ct == RT_INNER;
                    ThreadStamps::server_data(t, *ct, if keep { data } else { &[] })
                }
                Step::Read => ThreadStamps::data_read(t, 1_000),
                Step::Wait => ThreadStamps::waiting_for_socket(t),
                Step::Done => ThreadStamps::handshake_done(t),
            }
        }
    }

    /// The work the callbacks add per probe, timed over many replays of a
    /// cold probe (a TLS 1.3 handshake, two session tickets, a request and
    /// its response): every callback's clock reading, the parser, the two
    /// readings of the thread's CPU clock and the `TCP_INFO` one at the
    /// handshake's end (`cargo test --release --lib -- --ignored
    /// callback_cost --nocapture`; a debug build gives an upper bound).
    #[test]
    #[ignore]
    fn callback_cost() {
        use std::hint::black_box;
        let mut exts = Vec::new();
        for kind in [
            0u16, 11, 10, 35, 22, 23, 13, 43, 45, 51, 5, 16, 18, 27, 65281,
        ] {
            exts.extend(kind.to_be_bytes());
            let body: Vec<u8> = if kind == 51 {
                let mut shares = Vec::new();
                for (g, n) in [(0x11ecu16, 1216usize), (0x001d, 32)] {
                    shares.extend(g.to_be_bytes());
                    shares.extend((n as u16).to_be_bytes());
                    shares.extend(vec![7u8; n]);
                }
                let mut v = (shares.len() as u16).to_be_bytes().to_vec();
                v.extend(shares);
                v
            } else {
                vec![1u8; 12]
            };
            exts.extend((body.len() as u16).to_be_bytes());
            exts.extend(body);
        }
        let mut ch = vec![3, 3];
        ch.extend([9u8; 32]);
        ch.push(32);
        ch.extend([1u8; 32]);
        ch.extend([0, 6, 0x13, 1, 0x13, 2, 0x13, 3, 1, 0]);
        ch.extend((exts.len() as u16).to_be_bytes());
        ch.extend(exts);
        let hs = |kind: u8, body: Vec<u8>| {
            let n = body.len() as u32;
            let mut v = vec![kind, (n >> 16) as u8, (n >> 8) as u8, n as u8];
            v.extend(body);
            v
        };
        let header = |ct: u8, n: usize| vec![ct, 3, 3, (n >> 8) as u8, n as u8];
        let mut sh = vec![3, 3];
        sh.extend([5u8; 32]);
        sh.extend([32]);
        sh.extend([1u8; 32]);
        sh.extend([
            0x13, 1, 0, 0, 46, 0, 43, 0, 2, 3, 4, 0, 51, 0, 36, 0, 0x1d, 0, 32,
        ]);
        sh.extend([8u8; 32]);
        let mut nst = 7200u32.to_be_bytes().to_vec();
        nst.extend([0, 0, 0, 9, 1, 0, 0, 64]);
        nst.extend([5u8; 64]);
        nst.extend([0, 8, 0, 0x2a, 0, 4, 0, 0, 0x40, 0]);
        use Step::*;
        let steps: Vec<Step> = vec![
            Ours(0x100, header(22, ch.len() + 4)),
            Ours(22, hs(1, ch)),
            Wait,
            Read,
            Theirs(0x100, header(22, 122)),
            Theirs(22, hs(2, sh)),
            Theirs(0x100, header(20, 1)),
            Theirs(20, vec![1]),
            Theirs(0x100, header(23, 30)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(8, vec![0, 2, 0, 0])),
            Theirs(0x100, header(23, 4100)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(11, vec![0u8; 4090])),
            Theirs(0x100, header(23, 100)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(15, [vec![4, 3, 0, 72], vec![0u8; 72]].concat())),
            Theirs(0x100, header(23, 53)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(20, vec![0u8; 32])),
            Ours(0x100, header(20, 1)),
            Ours(20, vec![1]),
            Ours(0x100, header(23, 53)),
            Ours(0x101, vec![22]),
            Ours(22, hs(20, vec![0u8; 32])),
            Done,
            // The request, then two tickets and the response in one read.
            Ours(0x100, header(23, 60)),
            Ours(0x101, vec![23]),
            Read,
            Theirs(0x100, header(23, nst.len() + 4 + 17)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(4, nst.clone())),
            Theirs(0x100, header(23, nst.len() + 4 + 17)),
            Theirs(0x101, vec![22]),
            Theirs(22, hs(4, nst)),
            Theirs(0x100, header(23, 120)),
            Theirs(0x101, vec![23]),
        ];
        // A socket of this thread's, as libcurl's would be, so the
        // `TCP_INFO` reading at the handshake's end is a real system call.
        let sock = curl_ffi::open_socket(libc::AF_INET, libc::SOCK_STREAM, 0).unwrap();
        one_handshake(true, &steps);
        let seen = shape().unwrap();
        assert_eq!(
            seen.messages.sent_shares.unwrap().as_slice(),
            &[0x11ec, 0x1d]
        );
        assert_eq!(seen.messages.sig_scheme, Some(0x0403));
        assert!(seen.messages.server_finished && !seen.messages.malformed);
        assert_eq!(tickets(), (2, 0x4000));
        assert!(reply(u64::MAX).is_some());
        let n = 100_000;
        let time = |f: &dyn Fn()| {
            let start = std::time::Instant::now();
            for _ in 0..n {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(n)
        };
        let with = time(&|| {
            one_handshake(black_box(true), black_box(&steps));
            black_box(shape());
        });
        let without = time(&|| {
            one_handshake(black_box(false), black_box(&steps));
            black_box(shape());
        });
        let cpu = time(&|| {
            black_box(curl_ffi::thread_cpu_us());
        });
        let tcp = time(&|| {
            black_box(curl_ffi::tcp_now());
        });
        // SAFETY: the socket opened above, closed once.
        unsafe { libc::close(sock) };
        // Straight to stderr (a measurement to read, run by hand with
        // --ignored); a stderr that cannot take it costs nothing else.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "per probe ({} callbacks): {with:.0} ns in all, {without:.0} ns without the parser \
             ({:.0} ns added by it); of the whole, one CPU-clock reading {cpu:.0} ns (two a \
             probe) and the TCP_INFO reading {tcp:.0} ns",
            steps.len(),
            with - without
        );
    }
}

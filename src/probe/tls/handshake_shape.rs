//! The shape of a handshake as OpenSSL's callbacks saw it (`Shape`): the
//! server's flights, the waits that answered a send of ours, the long
//! waits in the middle of a flight (`Gap`), and the kernel's word at the
//! handshake's end (`HandshakeKernel`). Filled in by `handshake_stamps`,
//! read by `anatomy`. Fixed-size facts only: nothing is allocated while a
//! transfer runs.

use super::handshake_messages::MessageFacts;

/// Server flights whose bytes are kept (TLS 1.2 and a HelloRetryRequest
/// have two; later ones add to the last).
pub(super) const MAX_FLIGHTS: usize = 4;
/// Waits in the middle of a flight that are kept (the longest).
pub(super) const MAX_GAPS: usize = 8;

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
    pub(super) const EMPTY: Shape = Shape {
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
    pub(super) fn flight(&self) -> usize {
        usize::from(self.answered_waits.saturating_sub(1)).min(MAX_FLIGHTS - 1)
    }

    /// Keeps `gap` among the longest, in order; the shortest makes way.
    /// Returns a gap that made way and whose time the caller carries into
    /// the next one, or `None`.
    pub(super) fn keep(&mut self, mut gap: Gap) -> Option<Gap> {
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

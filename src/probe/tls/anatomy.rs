//! Why a handshake cost what it did (`HandshakeAnatomy`), derived once the
//! transfer is over: from the handshake's shape (`handshake_shape`), the
//! version it negotiated, the client's own work inside `tls`, the kernel's
//! min RTT and what it said of lost segments. Nothing here runs inside a
//! timed interval.
//!
//! The round trips are the answered waits (each wait that began after a
//! send of ours and ended with server data; a HelloRetryRequest and TLS
//! 1.2 count theirs even where the answer came before a wait), and each
//! wait in the middle of a server flight that was one. With R the kernel's
//! min RTT, a wait of at least 1 ms inside a flight is:
//!
//! - a split flight (`split_flight`) when what the server had sent before
//!   it ended in a short segment (the bytes read are not whole segments),
//!   short of the first window (inside a record too, where the kernel saw
//!   no loss: Java writes one record in two), and it (with the
//!   waits after it, up to the data our ACK set free, never past the
//!   window's) took a round trip (0.9R to 1¼R + ½ ms), or R and an ACK our
//!   kernel delayed (30 to 200 ms more): the server's TCP held the rest for
//!   our ACK (Nagle's algorithm);
//! - the congestion window (`initial_window`) when it lasted about R and
//!   the flight's bytes read by then had reached about the server's window
//!   (70 % of 10 segments for the first wait, of 30 for a second, of 70 for
//!   a third: slow start);
//! - a lost segment (`loss`) when the kernel saw one (segments of ours sent
//!   again, or the server's out of order) and it lasted at least ½R;
//! - transmission when it fell inside a record (which the server wrote
//!   whole) and lasted under ½R: the server's kernel pacing its segments;
//! - else the server's own pause.
//!
//! A lost segment of ours shows instead as an answered wait of over 2R:
//! named `loss` too. What the flights took to arrive beyond the round
//! trips and pauses counted in them is transmission; the server's time is
//! what `tls` leaves after the client's work, the round trips and the
//! transmission.

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::x509::{X509Ref, X509};

use super::handshake_shape::{Gap, Shape, MAX_FLIGHTS};
use super::stages::Stages;
use super::stages::{DELAYED_ACK_MIN_US, DELAYED_ACK_US};
use super::types::{CertSize, HandshakeAnatomy, TlsExtra, TlsFacts};

/// A first flight's congestion window in segments (RFC 6928).
const INITIAL_WINDOW_SEGMENTS: u64 = 10;
/// A segment's payload where the kernel did not say (Ethernet, with TCP
/// timestamps).
const DEFAULT_MSS: u32 = 1448;
/// What one handshake's facts say, with the kernel's min RTT (µs) of its
/// connection and the certificates the server sent (the leaf first); and
/// the part of the client's finish (µs) that a round trip inside a flight
/// covered, which cost the handshake no time (`tls_finish` is the rest).
pub(crate) fn derive(
    shape: &Shape,
    tls: &TlsFacts,
    stages: &Stages,
    min_rtt_us: Option<u32>,
    chain: &[X509],
) -> (HandshakeAnatomy, u64) {
    let m = &shape.messages;
    let reading = read_waits(shape, tls, min_rtt_us);
    let hidden = reading.as_ref().map_or(0, |r| r.hidden_us);
    let (server_handshake, transmission) = split(stages, reading.as_ref(), min_rtt_us);
    let window = reading.as_ref().is_some_and(|r| {
        r.extra
            .iter()
            .any(|e| matches!(e, TlsExtra::InitialWindow { .. }))
    });
    let (round_trips, extra) = match reading {
        Some(r) => (Some(r.round_trips), Some(r.extra)),
        None => (None, None),
    };
    let leaf = chain.first().map(|c| &**c);
    let anatomy = HandshakeAnatomy {
        round_trips,
        extra,
        server_handshake,
        transmission,
        sig_alg: m.sig_scheme,
        server_key: if tls.resumed {
            None
        } else {
            leaf.and_then(key_label)
        },
        cert_bytes: m.cert_bytes,
        server_flight_bytes: m.server_finished.then_some(m.server_record_bytes),
        certs: if window && !tls.resumed {
            cert_sizes(chain)
        } else {
            Vec::new()
        },
        unreadable: m.malformed,
    };
    (anatomy, hidden)
}

/// What the waits of one handshake came to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reading {
    round_trips: u8,
    /// Every round trip beyond the first, named.
    extra: Vec<TlsExtra>,
    /// The flights' time beyond their round trips and the server's pauses (µs).
    transmission_us: u64,
    /// Our own work done while a round trip inside a flight was under way
    /// (on the part of the flight that set it off): it cost no time.
    hidden_us: u64,
}

/// The round trips, each one beyond the first named, and the transmission;
/// `None` where the handshake's shape cannot tell (no server Finished
/// read, a long gap left out for want of room that may have been one, or a
/// long gap to judge without a min RTT).
fn read_waits(shape: &Shape, tls: &TlsFacts, min_rtt_us: Option<u32>) -> Option<Reading> {
    if !shape.messages.server_finished {
        return None;
    }
    let mut extra = protocol_extra(shape, tls);
    // The protocol's own round trips happened even where a wait for one
    // went unseen (the server's answers were in before the client waited
    // for them, a loaded machine that ran us late): a HelloRetryRequest and
    // TLS 1.2 each add one to the first.
    let protocol = 1 + extra.len();
    let answered = usize::from(shape.answered_waits).max(protocol);
    let kernel = shape.kernel.unwrap_or_default();
    if shape.gaps().is_empty() && kernel.retrans == 0 {
        return Some(Reading {
            round_trips: u8::try_from(answered).unwrap_or(u8::MAX),
            extra,
            transmission_us: shape.mid_wait_us,
            hidden_us: 0,
        });
    }
    let r = u64::from(min_rtt_us?);
    let lost = kernel.retrans > 0 || kernel.ooo > 0;
    // A gap left out for want of room that could have been a round trip
    // (about one, or a loss): unknown.
    let dropped = u64::from(shape.longest_dropped_us);
    if 2 * dropped >= r && (2 * dropped <= 3 * r || lost) {
        return None;
    }
    let mss = u64::from(
        Some(kernel.mss)
            .filter(|&m| m >= 500)
            .unwrap_or(DEFAULT_MSS),
    );
    let mut walk = Walk {
        shape,
        r,
        mss,
        lost,
        stalls: [0; MAX_FLIGHTS],
        counted: 0,
        // The gaps left out at a record's end were the server's pauses.
        pauses: shape.dropped_pause_us,
        loss_named: false,
        hidden: 0,
        absorbed: 0,
    };
    walk.gaps(&mut extra);
    let mut transmission = shape
        .mid_wait_us
        .saturating_sub(walk.pauses)
        .saturating_sub(walk.absorbed);
    // A segment of ours lost and sent again after a timeout: the wait for
    // its answer took more than two round trips.
    let longest = u64::from(shape.longest_answered_us);
    if kernel.retrans > 0 && !walk.loss_named && longest > 2 * r {
        extra.push(TlsExtra::Loss {
            recovery: std::time::Duration::from_micros(longest - r),
        });
        walk.counted += 1;
        transmission += longest - 2 * r;
    }
    let n = answered as u64 + walk.counted;
    Some(Reading {
        round_trips: u8::try_from(n).unwrap_or(u8::MAX),
        extra,
        transmission_us: transmission,
        hidden_us: walk.hidden,
    })
}

/// The round trips the protocol adds to the first: a HelloRetryRequest's,
/// and TLS 1.2's second flight.
fn protocol_extra(shape: &Shape, tls: &TlsFacts) -> Vec<TlsExtra> {
    let m = &shape.messages;
    let mut extra = Vec::new();
    if m.hello_retry {
        extra.push(TlsExtra::HelloRetry {
            group: m.retry_group,
            sent: m.sent_shares.map_or(Vec::new(), |s| s.as_slice().to_vec()),
        });
    }
    // A full TLS 1.2 handshake has its second round trip whether or not a
    // wait for it was seen (on a fast path the answer can be in the socket
    // before the client would wait); a resumed one has none.
    if tls.version == "TLSv1.2" && (shape.answered_waits >= 2 || !tls.resumed) {
        extra.push(TlsExtra::Tls12);
    }
    extra
}

/// The walk over the waits inside the server's flights.
struct Walk<'a> {
    shape: &'a Shape,
    /// The min RTT (µs).
    r: u64,
    /// A segment's payload (bytes).
    mss: u64,
    /// The kernel saw a segment lost (ours sent again, the server's out of
    /// order).
    lost: bool,
    /// The windows each flight waited for so far.
    stalls: [u32; MAX_FLIGHTS],
    /// The round trips counted inside flights.
    counted: u64,
    /// The server's own pauses inside its flights (µs).
    pauses: u64,
    loss_named: bool,
    /// Our work inside a counted round trip (µs).
    hidden: u64,
    /// The waits a counted round trip took up (µs).
    absorbed: u64,
}

/// Where a counted round trip inside a flight began: with the data that
/// started its burst (the server's ACK clock, or our ACK of a split
/// flight's first part); everything from there to the wait's end is inside
/// it, our work and the waits before. The span since the last counted one.
#[derive(Default)]
struct Span {
    us: u64,
    waits: u64,
    pauses: u64,
}

impl Walk<'_> {
    fn gaps(&mut self, extra: &mut Vec<TlsExtra>) {
        let gaps = self.shape.gaps();
        let mut span = Span::default();
        let mut span_flight = None;
        let mut split_until: Option<usize> = None;
        for (i, gap) in gaps.iter().enumerate() {
            let g = u64::from(gap.us);
            if span_flight != Some(gap.flight) {
                // A flight of its own begins at an answered wait.
                span = Span::default();
                span_flight = Some(gap.flight);
            }
            span.us += u64::from(gap.since_us) + g;
            span.waits += u64::from(gap.short_us) + g;
            span.pauses += u64::from(gap.pause_us);
            if let Some(end) = split_until {
                // Inside a split flight's round trip: its own time.
                if i < end {
                    continue;
                }
                split_until = None;
            } else if let Some(end) = self.split_end(i) {
                extra.push(TlsExtra::SplitFlight {
                    first_bytes: u32::try_from(read_before(gap)).unwrap_or(u32::MAX),
                    ack_delay: self.ack_delay(i, end),
                });
                self.counted += 1;
                if end > i {
                    split_until = Some(end);
                    continue;
                }
            } else if let Some(e) = self.name(gap) {
                self.counted += 1;
                extra.push(e);
            } else {
                if !(gap.mid_record && 2 * g < self.r) {
                    // Neither the network's nor ours: the server's own.
                    // (Inside a record the server wrote whole and shorter
                    // than a round trip: its kernel pacing the segments, a
                    // slow link, transmission.)
                    self.pauses += g;
                    span.pauses += g;
                    span.waits -= g;
                }
                continue;
            }
            // A round trip ends here. It takes up our work in its span
            // first (that cost nothing more), then the waits; what is left
            // of the waits is transmission.
            let work = span.us.saturating_sub(span.waits + span.pauses);
            let ours = work.min(self.r);
            self.hidden += ours;
            self.absorbed += span.waits.min(self.r - ours);
            span = Span::default();
        }
    }

    /// A wait that was the congestion window or a loss, named; `None` for
    /// the server's own pause or transmission.
    fn name(&mut self, gap: &Gap) -> Option<TlsExtra> {
        let (g, r) = (u64::from(gap.us), self.r);
        let flight = usize::from(gap.flight).min(MAX_FLIGHTS - 1);
        // The bytes a server in slow start has sent by its k-th wait for
        // the window (k from 0): 10, 30, 70 ... segments, less 30 % for the
        // segments and records not being full.
        let k = self.stalls[flight];
        let window = INITIAL_WINDOW_SEGMENTS * self.mss * ((1u64 << (k + 1).min(16)) - 1) * 7 / 10;
        if 2 * g >= r && 2 * g <= 3 * r && read_before(gap) >= window {
            self.stalls[flight] += 1;
            Some(TlsExtra::InitialWindow {
                flight_bytes: self.shape.flight_bytes[flight],
            })
        } else if self.lost && 2 * g >= r {
            self.loss_named = true;
            Some(TlsExtra::Loss {
                recovery: std::time::Duration::from_micros(g),
            })
        } else {
            None
        }
    }

    /// A split flight's round trip runs from its first part to the part
    /// our ACK set free: the wait after the first part and every one after
    /// it up to the end nearest a round trip (a server that signs after its
    /// ServerHello pauses inside it, at no cost). The index of the gap it
    /// ends with, where gap `i` begins one.
    fn split_end(&self, i: usize) -> Option<usize> {
        let (gaps, r) = (self.shape.gaps(), self.r);
        let start = &gaps[i];
        // Inside a record too (Java writes one record in two): a server
        // writes its records whole, so the rest was its TCP's to hold; but
        // where the kernel saw a loss, that is the hole's wait.
        if (start.mid_record && self.lost) || !start.first || !self.ended_short(start) {
            return None;
        }
        // A round trip (our ACK's, and the rest's way back: little slack,
        // so a server that pauses for three quarters of one is not taken
        // for it; what the flight's answered wait took beyond a round trip
        // may be ours, reading the first part late, and counts up to R/5:
        // more is the server's, slow to send its ServerHello); or for the
        // first wait alone, a round trip and an ACK our kernel delayed.
        let flight = usize::from(start.flight).min(MAX_FLIGHTS - 1);
        let late = u64::from(self.shape.flight_wait_us[flight])
            .saturating_sub(r)
            .min(r / 5);
        let fits = |span: u64, alone: bool| {
            (10 * (span + late) >= 9 * r && 4 * span <= 5 * r + 2_000)
                || (alone
                    && span >= r + DELAYED_ACK_MIN_US
                    && 2 * span <= 3 * r + 2 * DELAYED_ACK_US)
        };
        let mut span = 0u64;
        let mut best: Option<(u64, usize)> = None;
        for (j, g) in gaps.iter().enumerate().skip(i) {
            if g.flight != start.flight || (j > i && read_before(g) >= self.first_window()) {
                break;
            }
            span += u64::from(if j == i { 0 } else { g.since_us }) + u64::from(g.us);
            if fits(span, j == i) && best.is_none_or(|(off, _)| span.abs_diff(r) < off) {
                best = Some((span.abs_diff(r), j));
            }
        }
        best.map(|(_, j)| j)
    }
}

impl Walk<'_> {
    /// What our kernel delayed the ACK of a split flight's first part by:
    /// the span of its round trip (gaps `i` to `end`) less one, where that
    /// is an ACK's delay (30 ms or more), else nothing.
    fn ack_delay(&self, i: usize, end: usize) -> std::time::Duration {
        let gaps = &self.shape.gaps()[i..=end];
        let span = gaps.iter().enumerate().fold(0u64, |sum, (k, g)| {
            sum + u64::from(if k == 0 { 0 } else { g.since_us }) + u64::from(g.us)
        });
        let beyond = span.saturating_sub(self.r);
        std::time::Duration::from_micros(if beyond >= DELAYED_ACK_MIN_US {
            beyond
        } else {
            0
        })
    }

    /// The bytes a server's first window holds, less 30 % for segments
    /// and records not being full.
    fn first_window(&self) -> u64 {
        INITIAL_WINDOW_SEGMENTS * self.mss * 7 / 10
    }

    /// What the server sent before `gap` ended in a short segment (Nagle's
    /// algorithm holds what it writes next until our ACK of that one), and
    /// was less than its first window (else the window held it first): the
    /// bytes read before it are not whole segments.
    fn ended_short(&self, gap: &Gap) -> bool {
        let read = read_before(gap);
        read > 0 && !read.is_multiple_of(self.mss) && read < self.first_window()
    }
}

/// The flight's bytes read from the socket before `gap` (what had come in;
/// where not known, as its record headers announced them).
fn read_before(gap: &Gap) -> u64 {
    u64::from(if gap.bytes_read > 0 {
        gap.bytes_read
    } else {
        gap.bytes_before
    })
}

/// The server's own time and the transmission: what `tls` leaves after the
/// client's set-up and finish and the round trips at the min RTT is the
/// transmission (at most) and the server's; `None` where a part is missing.
fn split(
    stages: &Stages,
    reading: Option<&Reading>,
    min_rtt_us: Option<u32>,
) -> (Option<std::time::Duration>, Option<std::time::Duration>) {
    let us = |v: u64| std::time::Duration::from_micros(v);
    let Some(reading) = reading else {
        return (None, None);
    };
    let left = (|| {
        let path = u64::from(reading.round_trips) * u64::from(min_rtt_us?);
        let tls = u64::from(stages.tls?);
        let finish = u64::from(stages.tls_finish?).saturating_sub(reading.hidden_us);
        let client = u64::from(stages.tls_setup?) + finish;
        Some(tls.saturating_sub(client).saturating_sub(path))
    })();
    match left {
        Some(left) => {
            let transmission = reading.transmission_us.min(left);
            (Some(us(left - transmission)), Some(us(transmission)))
        }
        None => (
            None,
            stages
                .tls
                .map(|t| us(reading.transmission_us.min(u64::from(t)))),
        ),
    }
}

/// The certificates of `chain` in order, with their sizes and keys.
fn cert_sizes(chain: &[X509]) -> Vec<CertSize> {
    chain
        .iter()
        .take(8)
        .enumerate()
        .map(|(i, c)| CertSize {
            index: i as u8,
            bytes: c.to_der().map_or(0, |d| d.len() as u32),
            key: key_label(c),
        })
        .collect()
}

/// The leaf's key as people name it: `RSA-4096`, `EC P-256`, `Ed25519`.
fn key_label(leaf: &X509Ref) -> Option<String> {
    let key = leaf.public_key().ok()?;
    Some(match key.id() {
        Id::RSA => format!("RSA-{}", key.bits()),
        Id::DSA => format!("DSA-{}", key.bits()),
        Id::ED25519 => "Ed25519".to_string(),
        Id::ED448 => "Ed448".to_string(),
        Id::EC => {
            let curve = key.ec_key().ok()?.group().curve_name();
            let name = match curve {
                Some(Nid::X9_62_PRIME256V1) => "P-256".to_string(),
                Some(Nid::SECP384R1) => "P-384".to_string(),
                Some(Nid::SECP521R1) => "P-521".to_string(),
                Some(nid) => nid.short_name().ok()?.to_string(),
                None => return Some("EC".to_string()),
            };
            format!("EC {name}")
        }
        _ => return None,
    })
}

#[cfg(test)]
#[path = "anatomy_tests.rs"]
mod tests;

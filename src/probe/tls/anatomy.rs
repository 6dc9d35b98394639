//! Why a handshake cost what it did (`HandshakeAnatomy`), derived once the
//! transfer is over: from the handshake's shape (`handshake_stamps`), the
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

use super::handshake_stamps::{Gap, Shape, MAX_FLIGHTS};
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
mod tests {
    use super::super::handshake_stamps::{Gap, HandshakeKernel};
    use super::*;

    fn tls(version: &'static str) -> TlsFacts {
        TlsFacts {
            version,
            alpn: None,
            resumed: false,
            chain_len: Some(1),
            cipher: "",
            group: None,
            cert_days_left: None,
            cert_expired: false,
            cert_not_after: None,
            ocsp: None,
            ticket_early_data: None,
        }
    }

    fn finished(answered: u8) -> Shape {
        let mut s = Shape {
            answered_waits: answered,
            ..Default::default()
        };
        s.messages.server_finished = true;
        s
    }

    /// A shape with `gaps` in its first flight of `bytes`, and what the
    /// kernel said.
    fn with_gaps(bytes: u32, gaps: &[Gap], kernel: Option<HandshakeKernel>) -> Shape {
        let mut s = finished(1);
        s.flight_bytes[0] = bytes;
        for (i, g) in gaps.iter().enumerate() {
            s.gaps[i] = *g;
            s.mid_wait_us += u64::from(g.us) + u64::from(g.short_us);
        }
        s.gap_count = gaps.len() as u8;
        s.kernel = kernel;
        s
    }

    fn gap(us: u32, bytes_before: u32, mid_record: bool) -> Gap {
        Gap {
            us,
            flight: 0,
            bytes_before,
            bytes_done: if mid_record { 0 } else { bytes_before },
            mid_record,
            first: true,
            since_us: 100,
            short_us: 0,
            pause_us: 0,
            bytes_read: bytes_before,
        }
    }

    fn kinds(r: &Reading) -> Vec<&'static str> {
        r.extra.iter().map(TlsExtra::kind).collect()
    }

    const R: Option<u32> = Some(40_000);

    fn split_flight(first_bytes: u32, ack_delay_us: u64) -> TlsExtra {
        TlsExtra::SplitFlight {
            first_bytes,
            ack_delay: std::time::Duration::from_micros(ack_delay_us),
        }
    }

    #[test]
    fn a_hello_retry_is_two_round_trips_even_when_one_wait_went_unseen() {
        let mut s = finished(1);
        s.messages.hello_retry = true;
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (2, vec!["hello_retry"]));
        let mut s = finished(2);
        s.messages.hello_retry = true;
        assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
    }

    #[test]
    fn a_window_wait_needs_about_a_round_trip_and_about_a_window_of_bytes() {
        // 21 KB flight, a 38 ms wait inside a record after 16 KB: the window's.
        let s = with_gaps(21_344, &[gap(38_000, 16_389, true)], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
        // Under half a round trip: pacing, not a round trip.
        let s = with_gaps(21_344, &[gap(19_000, 16_389, true)], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
        assert_eq!(r.transmission_us, 19_000);
        // A 7.8 KB flight cannot have filled a window: a wait of about a
        // round trip in it, at a record's end or inside one, is the
        // server's own.
        for mid_record in [false, true] {
            let s = with_gaps(7_800, &[gap(30_000, 5_000, mid_record)], None);
            let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
            assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
            assert_eq!(r.transmission_us, 0, "the 30 ms are the server's");
        }
        // Without a min RTT a long gap cannot be judged.
        assert_eq!(read_waits(&s, &tls("TLSv1.3"), None), None);
    }

    #[test]
    fn slow_start_takes_a_second_window_only_past_three_windows_of_bytes() {
        let two = [gap(39_000, 14_000, true), gap(39_000, 30_000, true)];
        let r = read_waits(&with_gaps(60_000, &two, None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["initial_window"], "30 KB: still one window");
        let two = [gap(39_000, 14_000, true), gap(39_000, 40_000, true)];
        let r = read_waits(&with_gaps(60_000, &two, None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["initial_window", "initial_window"]);
        assert_eq!(r.round_trips, 3);
    }

    #[test]
    fn a_small_first_part_held_for_our_ack_is_a_split_flight() {
        let split = gap(40_050, 133, false);
        let r = read_waits(&with_gaps(911, &[split], None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(r.extra, vec![split_flight(133, 0)]);
        assert_eq!(r.round_trips, 2);
        // Held for an ACK our kernel delayed: a round trip and 40 ms more.
        let late = gap(81_000, 6, false);
        let r = read_waits(&with_gaps(889, &[late], None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["split_flight"]);
        // Our 0.1 ms on the first part was inside the round trip.
        assert_eq!(r.hidden_us, 100);
        assert_eq!(
            r.transmission_us, 41_100,
            "the delayed ACK is not the server's"
        );
        // Three quarters of a round trip: the server's own pause.
        let pause = gap(30_000, 133, false);
        let r = read_waits(&with_gaps(911, &[pause], None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, r.transmission_us), (1, 0));
        // After whole segments only (nothing short for Nagle to wait on),
        // or far longer: the server's own.
        let big = gap(40_050, 3 * 1_448, false);
        let r = read_waits(&with_gaps(7_800, &[big], None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), Vec::<&str>::new());
        let long = gap(400_000, 133, false);
        let r = read_waits(&with_gaps(911, &[long], None), &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, r.transmission_us), (1, 0));
    }

    #[test]
    fn a_tail_held_after_a_full_segment_and_a_short_one_is_a_split_flight() {
        // Java, RSA-4096: ServerHello to Certificate in one write of 1,575
        // bytes (a full segment and 127), the rest held for our ACK.
        let tail = gap(40_100, 1_575, false);
        let kernel = HandshakeKernel {
            mss: 1448,
            ..Default::default()
        };
        let s = with_gaps(2_120, &[tail], Some(kernel));
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(r.extra, vec![split_flight(1_575, 0)]);
        assert_eq!(r.round_trips, 2);
        // As Java sends it: EncryptedExtensions to Finished in one record,
        // its first 1,442 bytes in the first write, the wait inside it.
        let inside = Gap {
            bytes_before: 2_120,
            bytes_done: 133,
            mid_record: true,
            ..tail
        };
        let s = with_gaps(
            2_120,
            &[Gap {
                bytes_read: 1_575,
                ..inside
            }],
            Some(kernel),
        );
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(r.extra, vec![split_flight(1_575, 0)]);
        // The same wait where the kernel saw a segment lost: the loss's.
        let lost = HandshakeKernel { ooo: 2, ..kernel };
        let s = with_gaps(
            2_120,
            &[Gap {
                bytes_read: 1_575,
                ..inside
            }],
            Some(lost),
        );
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["loss"]);
        // TLS 1.2's second flight: the ChangeCipherSpec alone, Finished a
        // round trip and our delayed ACK later.
        let mut s = with_gaps(
            51,
            &[Gap {
                flight: 1,
                ..gap(81_200, 6, false)
            }],
            Some(kernel),
        );
        s.answered_waits = 2;
        let r = read_waits(&s, &tls("TLSv1.2"), R).unwrap();
        assert_eq!(r.round_trips, 3);
        // Saving it saves the round trip and the 41.2 ms our ACK waited.
        assert_eq!(r.extra, vec![TlsExtra::Tls12, split_flight(6, 41_200)]);
    }

    #[test]
    fn the_window_is_named_by_the_bytes_read_never_a_split_before_it() {
        // Java, a 24 KB chain: 127 bytes alone, 9 full segments 1.3 ms
        // later (the Certificate record begun, 13 KB of it read), then the
        // window's round trip: one round trip, the window's.
        let pause = gap(1_300, 127, false);
        let window = Gap {
            first: false,
            bytes_before: 22_000,
            bytes_done: 127,
            bytes_read: 127 + 9 * 1_448,
            ..gap(38_700, 0, true)
        };
        let s = with_gaps(22_080, &[pause, window], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
        // The same record announced whole but only 5 KB of it read before
        // a wait of a round trip: no window yet.
        let early = Gap {
            bytes_read: 5_000,
            ..window
        };
        let s = with_gaps(22_080, &[early], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), Vec::<&str>::new());
        // A 26.8 ms pause after the 127 bytes, with a ServerHello 12 ms
        // late: the server's own, however late its first part was.
        let mut s = with_gaps(22_080, &[gap(26_800, 127, false), window], None);
        s.flight_wait_us[0] = 52_000;
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (2, vec!["initial_window"]));
    }

    #[test]
    fn a_server_that_signs_inside_its_split_flights_round_trip_loses_no_time() {
        // GnuTLS with an RSA-4096 key: the ServerHello alone, 21.8 ms of
        // signing, a full segment, then the last 141 bytes held for our ACK
        // of the ServerHello, 40.1 ms after it.
        let signing = Gap {
            since_us: 100,
            ..gap(21_800, 133, false)
        };
        let tail = Gap {
            first: false,
            since_us: 100,
            ..gap(18_200, 1_581, true)
        };
        let s = with_gaps(1_722, &[signing, tail], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(
            (r.round_trips, r.extra.clone()),
            (2, vec![split_flight(133, 0)])
        );
        // No pause of the server's counts: the signing was inside the round
        // trip; the 0.2 ms the span took beyond it is transmission.
        assert_eq!((r.hidden_us, r.transmission_us), (200, 200), "{r:?}");
    }

    #[test]
    fn pauses_on_loopback_are_the_servers_never_windows() {
        // 100-byte segments 5 ms apart on a 10 µs path: every pause is far
        // longer than a round trip, and none is inside a window.
        let gaps: Vec<Gap> = (1..=6)
            .map(|i| Gap {
                first: i == 1,
                ..gap(5_000, 100 * i, i % 2 == 0)
            })
            .collect();
        let r = read_waits(&with_gaps(7_800, &gaps, None), &tls("TLSv1.3"), Some(10)).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (1, vec![]));
        assert_eq!(r.transmission_us, 0, "30 ms of the server's own: {r:?}");
    }

    #[test]
    fn a_loss_the_kernel_saw_is_named_never_a_window_or_the_server() {
        let lost = HandshakeKernel {
            retrans: 0,
            ooo: 3,
            mss: 1448,
            min_rtt_us: 40_000,
        };
        // A wait of a round trip early in the flight (no window yet).
        let s = with_gaps(24_000, &[gap(41_000, 6_000, true)], Some(lost));
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(
            r.extra,
            vec![TlsExtra::Loss {
                recovery: std::time::Duration::from_micros(41_000)
            }]
        );
        // Then the window: one of each, never the window twice.
        let two = [gap(41_000, 6_000, true), gap(39_000, 16_000, true)];
        let r = read_waits(&with_gaps(24_000, &two, Some(lost)), &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["loss", "initial_window"]);
        // Our ClientHello sent again after a timeout: the answer took 1.2 s.
        let mut s = finished(1);
        s.longest_answered_us = 1_240_000;
        s.kernel = Some(HandshakeKernel { retrans: 1, ..lost });
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!((r.round_trips, kinds(&r)), (2, vec!["loss"]));
        assert_eq!(r.transmission_us, 1_160_000);
    }

    #[test]
    fn a_window_round_trip_takes_up_the_paced_burst_and_our_work_before_it() {
        // BBR paced the first burst over 14 ms (short waits); the window's
        // own wait was 25.5 ms; our work on the burst 0.5 ms.
        let window = Gap {
            since_us: 14_500,
            short_us: 14_000,
            ..gap(25_500, 14_480, true)
        };
        let s = with_gaps(22_400, &[window], None);
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(kinds(&r), vec!["initial_window"]);
        assert_eq!(r.hidden_us, 500);
        assert_eq!(r.transmission_us, 0, "all of it inside the round trip");
        // The flight of the answered wait and then 4 ms of pacing after
        // the window: that is transmission.
        let mut s = s;
        s.mid_wait_us += 4_000;
        let r = read_waits(&s, &tls("TLSv1.3"), R).unwrap();
        assert_eq!(r.transmission_us, 4_000);
    }

    #[test]
    fn the_parts_add_up_to_tls_and_none_is_negative() {
        let (r, _) = (
            read_waits(
                &with_gaps(911, &[gap(40_050, 133, false)], None),
                &tls("TLSv1.3"),
                R,
            )
            .unwrap(),
            (),
        );
        let stages = Stages {
            tls: Some(82_500),
            tls_setup: Some(800),
            tls_finish: Some(1_200),
            ..Default::default()
        };
        let (server, transmission) = split(&stages, Some(&r), R);
        let (server, transmission) = (server.unwrap(), transmission.unwrap());
        let us = |d: std::time::Duration| d.as_micros() as u64;
        assert_eq!(
            800 + (1_200 - r.hidden_us) + 80_000 + us(server) + us(transmission),
            82_500
        );
        // Round trips and client work over tls: 0 each, never below.
        let short = Stages {
            tls: Some(80_500),
            ..stages
        };
        let (server, transmission) = split(&short, Some(&r), R);
        assert_eq!(
            (server, transmission),
            (Some(Default::default()), Some(Default::default()))
        );
        assert_eq!(
            split(&stages, Some(&r), None).0,
            None,
            "no min RTT: unknown"
        );
    }

    #[test]
    fn tls12_names_its_second_round_trip() {
        let r = read_waits(&finished(2), &tls("TLSv1.2"), R).unwrap();
        assert_eq!((r.round_trips, r.extra), (2, vec![TlsExtra::Tls12]));
        let resumed = TlsFacts {
            resumed: true,
            ..tls("TLSv1.2")
        };
        let r = read_waits(&finished(1), &resumed, R).unwrap();
        assert_eq!((r.round_trips, r.extra), (1, vec![]));
        let r = read_waits(&finished(1), &tls("TLSv1.2"), R).unwrap();
        assert_eq!((r.round_trips, r.extra), (2, vec![TlsExtra::Tls12]));
    }

    #[test]
    fn an_unreadable_message_leaves_its_facts_unknown_and_says_so() {
        let mut s = finished(1);
        // A CertificateVerify whose length runs past its bytes.
        s.messages.server(22, &[15, 0, 0, 9, 8, 4]);
        let (a, _) = derive(&s, &tls("TLSv1.3"), &Stages::default(), R, &[]);
        assert_eq!(a.sig_alg, None);
        assert!(a.unreadable);
        assert_eq!(a.round_trips, Some(1));
        assert_eq!(a.server_handshake, None, "no tls stage to start from");
        // No wait seen (the answers in before the client waited): the
        // protocol's one round trip.
        let quick = finished(0);
        assert_eq!(
            read_waits(&quick, &tls("TLSv1.3"), R).unwrap().round_trips,
            1
        );
        // No Finished read: the shape cannot tell how many waits it took.
        let unfinished = Shape {
            answered_waits: 1,
            ..Default::default()
        };
        let (a, _) = derive(&unfinished, &tls("TLSv1.3"), &Stages::default(), R, &[]);
        assert_eq!(
            (a.round_trips, a.extra, a.server_flight_bytes),
            (None, None, None)
        );
    }

    #[test]
    fn a_dropped_gap_that_would_count_makes_the_count_unknown() {
        let mut s = with_gaps(60_000, &[gap(41_000, 20_000, true)], None);
        s.longest_dropped_us = 3_000; // pacing, far below half the RTT
        assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
        s.longest_dropped_us = 30_000;
        assert_eq!(read_waits(&s, &tls("TLSv1.3"), R), None);
        // Far longer than a round trip, without a loss: a pause, never one.
        s.longest_dropped_us = 200_000;
        assert_eq!(read_waits(&s, &tls("TLSv1.3"), R).unwrap().round_trips, 2);
    }
}

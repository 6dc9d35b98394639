//! What the statistics keep of a sample once it has been printed or
//! streamed: its stages (`probe::Stages`) as whole microseconds, the
//! variant, the mode, the error kind, eight flags, the handshake's round
//! trips and what they were, the server's time in the handshake and what
//! its TCP held the response for, in 42 bytes. The stages are kept
//! exactly; the kernel's smoothed and min RTT, the client's set-up and
//! finish, the server's two times and the hold are kept to four
//! significant figures (`Mini`: exact below 4.096 ms, within 0.025 % above).
//! A run keeps these
//! instead of full samples (unless the output itself needs every sample at
//! the end, as `--json` and `--svg` do), so a `-n 0` run at 200 ms holds a
//! day of samples in under 40 MiB (see `History`).

use std::time::Duration;

use crate::probe::{EarlyData, ErrorKind, Mode, Sample, Stages, TlsExtra};

/// A stage that was not measured.
const NONE: u32 = u32::MAX;

const WARMUP: u8 = 1;
const OK: u8 = 1 << 1;
const HTTPS: u8 = 1 << 2;
const REUSED: u8 = 1 << 3;
const NEW_CONN: u8 = 1 << 4;
const HANDSHAKE: u8 = 1 << 5;
const RESUMED: u8 = 1 << 6;
const RETRANSMITTED: u8 = 1 << 7;

/// `tag`: the variant in bits 0..3, the mode in bit 3, the error kind
/// (its index + 1, 0 for none) in bits 4..8.
const VARIANT_BITS: u8 = 0b0111;
const WARM_BIT: u8 = 0b1000;
const KIND_SHIFT: u32 = 4;
const _: () = assert!(crate::probe::MAX_VARIANTS <= VARIANT_BITS as usize + 1);
const _: () = assert!(ErrorKind::ALL.len() < 16);

/// `anatomy`: the handshake's round trips (`tls_round_trips`) in bits 0..4
/// (0: not told, 15: 15 or more), then one bit per kind of round trip
/// beyond the first, and whether the request went as accepted early data.
const ROUND_TRIP_BITS: u16 = 0b1111;
const HELLO_RETRY: u16 = 1 << 4;
const TLS12: u16 = 1 << 5;
const INITIAL_WINDOW: u16 = 1 << 6;
const EARLY_DATA: u16 = 1 << 7;
const SPLIT_FLIGHT: u16 = 1 << 8;
const LOSS: u16 = 1 << 9;

/// Microseconds in 16 bits, to four significant figures: a 12-bit
/// mantissa and a 4-bit exponent (exact below 4096 µs, within 1/4096 of
/// the value above, up to 134 s; a larger value is kept as unknown).
/// For the figures a run keeps of every sample beside its stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mini(u16);

impl Mini {
    const NONE: Mini = Mini(u16::MAX);

    fn of(v: Option<u32>) -> Mini {
        let Some(v) = v else { return Mini::NONE };
        let v = u64::from(v);
        let mut e = (64 - v.leading_zeros()).saturating_sub(12);
        let mut m = (v + ((1u64 << e) >> 1)) >> e;
        if m == 4096 {
            m = 2048;
            e += 1;
        }
        if e > 15 || (e == 15 && m == 4095) {
            return Mini::NONE;
        }
        Mini(((e as u16) << 12) | m as u16)
    }

    fn get(self) -> Option<u32> {
        (self != Mini::NONE).then(|| u32::from(self.0 & 0x0fff) << (self.0 >> 12))
    }
}

/// One sample as the statistics see it: `Sample::stages`, packed. Packed to
/// 1-byte alignment so that six 32-bit fields, seven 16-bit ones and four
/// bytes take 42 bytes; fields are only ever copied out, never borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(1))]
pub struct Record {
    round: u32,
    total: u32,
    /// The one of `dns` (cold) and `wait` (warm) the mode has: a probe
    /// never has both, so they share a field.
    dns_or_wait: u32,
    tcp: u32,
    tls: u32,
    srv: u32,
    rtt: Mini,
    min_rtt: Mini,
    tls_setup: Mini,
    tls_finish: Mini,
    /// The server's time after the request (`Stages::server`) and in the
    /// handshake (`HandshakeAnatomy::server_handshake`).
    server: Mini,
    server_handshake: Mini,
    /// What the server's TCP held the response for (`Stages::held`).
    held: Mini,
    tag: u8,
    flags: u8,
    anatomy: u16,
}

const _: () = assert!(std::mem::size_of::<Record>() == 42);

fn pack(v: Option<u32>) -> u32 {
    v.map_or(NONE, |v| v.min(NONE - 1))
}

fn unpack(v: u32) -> Option<u32> {
    (v != NONE).then_some(v)
}

/// The variant, mode and error kind of `s` in one byte (see `VARIANT_BITS`).
fn tag(s: &Sample) -> u8 {
    // Never more variants than the tag holds (`--compare` stops at
    // MAX_VARIANTS); were that ever to change, fail rather than mix them up.
    assert!(
        usize::from(s.variant) < crate::probe::MAX_VARIANTS,
        "variant {} does not fit the record",
        s.variant
    );
    // `ALL` lists the kinds in declaration order, so the cast is the index.
    let kind = s.error.as_ref().map_or(0, |e| e.kind as u8 + 1);
    let warm = if s.mode == Mode::Warm { WARM_BIT } else { 0 };
    (s.variant & VARIANT_BITS) | warm | (kind << KIND_SHIFT)
}

/// The handshake's round trips and named extras (see `ROUND_TRIP_BITS`);
/// 0 for a probe that made no handshake or could not tell.
fn anatomy(s: &Sample) -> u16 {
    let mut byte = 0;
    if let Some(a) = s.anatomy.as_deref() {
        byte = a
            .round_trips
            .map_or(0, |n| u16::from(n).min(ROUND_TRIP_BITS));
        for extra in a.extra.iter().flatten() {
            byte |= match extra {
                TlsExtra::HelloRetry { .. } => HELLO_RETRY,
                TlsExtra::Tls12 => TLS12,
                TlsExtra::InitialWindow { .. } => INITIAL_WINDOW,
                TlsExtra::SplitFlight { .. } => SPLIT_FLIGHT,
                TlsExtra::Loss { .. } => LOSS,
            };
        }
    }
    if s.early_data == Some(EarlyData::Accepted) {
        byte |= EARLY_DATA;
    }
    byte
}

impl Record {
    pub fn of(s: &Sample) -> Record {
        let mut flags = 0;
        for (set, flag) in [
            (s.warmup, WARMUP),
            (s.ok(), OK),
            (s.https, HTTPS),
            (s.reused(), REUSED),
            (s.new_conn(), NEW_CONN),
            (s.tls.is_some(), HANDSHAKE),
            (s.tls.is_some_and(|t| t.resumed), RESUMED),
            (s.retransmitted(), RETRANSMITTED),
        ] {
            if set {
                flags |= flag;
            }
        }
        let st = s.stages();
        Record {
            round: s.round,
            total: pack(st.total),
            dns_or_wait: pack(st.dns.or(st.wait)),
            tcp: pack(st.tcp),
            tls: pack(st.tls),
            srv: pack(st.srv),
            min_rtt: Mini::of(st.min_rtt),
            rtt: Mini::of(st.rtt),
            tls_setup: Mini::of(st.tls_setup),
            tls_finish: Mini::of(st.tls_finish),
            server: Mini::of(st.server),
            server_handshake: Mini::of(
                s.anatomy
                    .as_deref()
                    .and_then(|a| a.server_handshake)
                    .map(crate::probe::whole_us),
            ),
            held: Mini::of(st.held),
            tag: tag(s),
            flags,
            anatomy: anatomy(s),
        }
    }

    /// The sample's stages, as `Sample::stages` gave them (those kept as
    /// `Mini` to four significant figures).
    pub fn stages(&self) -> Stages {
        let first = unpack(self.dns_or_wait);
        let warm = self.mode() == Mode::Warm;
        Stages {
            dns: if warm { None } else { first },
            wait: if warm { first } else { None },
            tcp: unpack(self.tcp),
            tls: unpack(self.tls),
            srv: unpack(self.srv),
            total: unpack(self.total),
            tls_setup: self.tls_setup.get(),
            tls_finish: self.tls_finish.get(),
            rtt: self.rtt.get(),
            min_rtt: self.min_rtt.get(),
            server: self.server.get(),
            held: self.held.get(),
        }
    }

    pub fn round(&self) -> u32 {
        self.round
    }
    /// The `--compare` variant (0 without a comparison).
    pub fn variant(&self) -> u8 {
        self.tag & VARIANT_BITS
    }
    pub fn mode(&self) -> Mode {
        if self.tag & WARM_BIT != 0 {
            Mode::Warm
        } else {
            Mode::Cold
        }
    }
    pub fn kind(&self) -> Option<ErrorKind> {
        match self.tag >> KIND_SHIFT {
            0 => None,
            k => ErrorKind::ALL.get(usize::from(k - 1)).copied(),
        }
    }

    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn warmup(&self) -> bool {
        self.has(WARMUP)
    }
    /// An HTTP response arrived (`Sample::ok`).
    pub fn ok(&self) -> bool {
        self.has(OK)
    }
    pub fn https(&self) -> bool {
        self.has(HTTPS)
    }
    pub fn reused(&self) -> bool {
        self.has(REUSED)
    }
    pub fn new_conn(&self) -> bool {
        self.has(NEW_CONN)
    }
    /// The probe made a TLS handshake (`Sample::tls` was present).
    pub fn handshake(&self) -> bool {
        self.has(HANDSHAKE)
    }
    pub fn resumed(&self) -> bool {
        self.has(RESUMED)
    }
    pub fn retransmitted(&self) -> bool {
        self.has(RETRANSMITTED)
    }
    /// The handshake's round trips, where it was told.
    pub fn round_trips(&self) -> Option<u8> {
        Some((self.anatomy & ROUND_TRIP_BITS) as u8).filter(|n| *n > 0)
    }
    /// A round trip went to a HelloRetryRequest.
    pub fn hello_retry(&self) -> bool {
        self.anatomy & HELLO_RETRY != 0
    }
    /// A round trip was TLS 1.2's own second one.
    pub fn tls12(&self) -> bool {
        self.anatomy & TLS12 != 0
    }
    /// A round trip went to the server's initial congestion window.
    pub fn initial_window(&self) -> bool {
        self.anatomy & INITIAL_WINDOW != 0
    }
    /// The request went as early data and the server accepted it.
    pub fn early_data(&self) -> bool {
        self.anatomy & EARLY_DATA != 0
    }
    /// A round trip went to a flight the server split (Nagle).
    pub fn split_flight(&self) -> bool {
        self.anatomy & SPLIT_FLIGHT != 0
    }
    /// A round trip went to a lost segment.
    pub fn loss(&self) -> bool {
        self.anatomy & LOSS != 0
    }
    /// The server's own time in the handshake
    /// (`HandshakeAnatomy::server_handshake`).
    pub fn server_handshake(&self) -> Option<u32> {
        self.server_handshake.get()
    }
    /// The handshake's parts, each at least 0 and adding up to `tls`; `None`
    /// where one is unknown (`HandshakeParts`).
    pub fn handshake_parts(&self) -> Option<HandshakeParts> {
        let st = self.stages();
        let tls = st.tls?;
        let round_trips = u32::from(self.round_trips()?);
        let path = round_trips.saturating_mul(st.min_rtt?).min(tls);
        let client = (st.tls_setup? + st.tls_finish?).min(tls - path);
        let left = tls - path - client;
        let server = self.server_handshake()?.min(left);
        Some(HandshakeParts {
            tls,
            round_trips,
            path,
            client,
            server,
            transmission: left - server,
        })
    }

    /// Interrupted by us, so neither a success nor the server's failure.
    pub fn canceled(&self) -> bool {
        self.kind() == Some(ErrorKind::Canceled)
    }

    /// Counts for timing statistics: a response, not warmup, a measured
    /// total, and for warm a connection that was actually reused.
    pub fn timed(&self) -> bool {
        let total = self.total;
        self.ok() && !self.warmup() && total != NONE && (self.mode() == Mode::Cold || self.reused())
    }
}

/// One handshake's `tls` in parts that add up to it: its round trips at
/// the min RTT (`path`), the client's set-up and finish, the server's own
/// time and the transmission (what is left). Where the round trips and the
/// client's measured work would exceed `tls` (a round trip the protocol
/// counts that no wait showed, on a path of a few microseconds), the
/// client's part is what `tls` leaves, so no part is negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandshakeParts {
    pub tls: u32,
    pub round_trips: u32,
    pub path: u32,
    pub client: u32,
    pub server: u32,
    pub transmission: u32,
}

/// The median of one value of `records` (sorted on the way), and how many
/// records had it: one value list at a time, dropped before the next.
pub(crate) fn median_of<'a>(
    records: impl Iterator<Item = &'a Record> + Clone,
    value: impl Fn(&Stages) -> Option<u32>,
) -> (Option<Duration>, usize) {
    let mut v = collect_exact(records.filter_map(|r| value(&r.stages())));
    v.sort_unstable();
    (super::descriptive::median_us(&v), v.len())
}

/// The items of `iter` in a list of exactly their number: a long run's
/// statistics must not hold a list twice the size it needs.
pub(crate) fn collect_exact<T>(iter: impl Iterator<Item = T> + Clone) -> Vec<T> {
    let mut v = Vec::with_capacity(iter.clone().count());
    v.extend(iter);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ErrorKind, TcpFacts};
    use crate::stats::synthetic;

    #[test]
    fn a_record_keeps_a_held_response_and_the_servers_time_before_it() {
        let mut s = synthetic::cold(3, 40, 40_100, 42_000, 122_000, 50);
        s.tcp_info = Some(TcpFacts {
            rtt_us: 41_000,
            min_rtt_us: Some(40_000),
            retrans: 0,
        });
        s.reply_wait = Some(Duration::from_micros(121_500));
        s.reply_first = Some(Duration::from_micros(40_500));
        let st = s.stages();
        assert_eq!((st.server, st.held), (Some(500), Some(41_000)));
        // Kept to four significant figures.
        let kept = Record::of(&s).stages();
        assert_eq!((kept.server, kept.min_rtt), (Some(500), Some(40_000)));
        assert!(
            kept.held.unwrap().abs_diff(41_000) <= 41_000 / 4096,
            "{kept:?}"
        );
    }

    #[test]
    fn a_record_keeps_every_stage_the_sample_reports() {
        let mut s = synthetic::cold(3, 40, 100, 3000, 1000, 50);
        s.tcp_info = Some(TcpFacts {
            rtt_us: 400,
            min_rtt_us: Some(300),
            retrans: 2,
        });
        let r = Record::of(&s);
        assert_eq!(r.round(), 3);
        assert_eq!(r.mode(), Mode::Cold);
        assert_eq!((r.variant(), r.kind()), (0, None));
        // Exactly the sample's own stages: every figure derived from them
        // (other, the tls split, the server's time) is then the same too.
        assert_eq!(r.stages(), s.stages());
        assert_eq!(r.stages().other(), s.other().map(|d| d.as_micros() as u32));
        assert_eq!((r.stages().rtt, r.stages().min_rtt), (Some(400), Some(300)));
        assert_eq!(r.stages().wait, None);
        assert!(r.ok() && r.https() && r.handshake() && r.resumed() && r.retransmitted());
        assert!(!r.warmup() && !r.new_conn() && !r.canceled());
        assert_eq!(r.timed(), crate::stats::timed(&s));
    }

    #[test]
    fn mini_keeps_four_significant_figures_and_small_values_exactly() {
        for v in [0u32, 1, 900, 4095] {
            assert_eq!(Mini::of(Some(v)).get(), Some(v));
        }
        for v in [4096u32, 4097, 40_123, 1_999_999, 60_000_000, 134_000_000] {
            let back = Mini::of(Some(v)).get().unwrap();
            let err = (i64::from(back) - i64::from(v)).unsigned_abs();
            assert!(err * 4096 <= u64::from(v), "{v} came back as {back}");
        }
        assert_eq!(Mini::of(None).get(), None);
        // Past what it holds: unknown, never a wrong figure.
        assert_eq!(Mini::of(Some(u32::MAX - 1)).get(), None);
        assert_eq!(Mini::of(Some(134_500_000)).get(), None);
    }

    #[test]
    fn a_warm_record_has_wait_and_no_handshake_stages() {
        let s = synthetic::warm(2, 120, 900, 30, true);
        let r = Record::of(&s);
        assert_eq!(r.stages(), s.stages());
        assert_eq!(r.stages().wait, s.wait().map(|d| d.as_micros() as u32));
        let st = r.stages();
        assert_eq!((st.dns, st.tcp, st.tls), (None, None, None));
        assert!(r.reused() && r.timed());
    }

    #[test]
    fn a_failure_keeps_its_kind_and_is_not_timed() {
        let s = synthetic::failed(4, Mode::Cold, ErrorKind::Timeout, 5000);
        let r = Record::of(&s);
        assert_eq!(r.kind(), Some(ErrorKind::Timeout));
        assert!(!r.ok() && !r.timed() && !r.canceled());
        let c = synthetic::failed(4, Mode::Warm, ErrorKind::Canceled, 10);
        assert!(Record::of(&c).canceled());
    }

    #[test]
    fn every_error_kind_survives_the_tag_in_every_variant_and_mode() {
        // `ALL` is in declaration order (the tag stores `kind as u8`) and
        // ends with the last declared kind.
        assert_eq!(ErrorKind::ALL.len(), ErrorKind::Error as usize + 1);
        for (i, &kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind as usize, i);
            for variant in 0..crate::probe::MAX_VARIANTS as u8 {
                for mode in [Mode::Cold, Mode::Warm] {
                    let mut s = synthetic::failed(1, mode, kind, 10);
                    s.variant = variant;
                    let r = Record::of(&s);
                    assert_eq!(
                        (r.kind(), r.variant(), r.mode()),
                        (Some(kind), variant, mode)
                    );
                }
            }
        }
    }
}

//! What the statistics keep of a sample once it has been printed or
//! streamed: its stages (`probe::Stages`) as whole microseconds, the variant,
//! the mode, the error kind, eight flags and the handshake's round trips,
//! in 43 bytes. A run keeps these
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
const ROUND_TRIP_BITS: u8 = 0b1111;
const HELLO_RETRY: u8 = 1 << 4;
const TLS12: u8 = 1 << 5;
const INITIAL_WINDOW: u8 = 1 << 6;
const EARLY_DATA: u8 = 1 << 7;

/// One sample as the statistics see it: `Sample::stages`, packed. Packed to
/// 1-byte alignment so that ten 32-bit fields and three bytes take 43
/// bytes, not 44; fields are only ever copied out, never borrowed.
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
    tls_setup: u32,
    tls_finish: u32,
    rtt: u32,
    min_rtt: u32,
    tag: u8,
    flags: u8,
    anatomy: u8,
}

const _: () = assert!(std::mem::size_of::<Record>() == 43);

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

/// The handshake's round trips and named extras in one byte (see
/// `ROUND_TRIP_BITS`); 0 for a probe that made no handshake or could not
/// tell.
fn anatomy(s: &Sample) -> u8 {
    let mut byte = 0;
    if let Some(a) = s.anatomy.as_deref() {
        byte = a.round_trips.map_or(0, |n| n.min(ROUND_TRIP_BITS));
        for extra in a.extra.iter().flatten() {
            byte |= match extra {
                TlsExtra::HelloRetry { .. } => HELLO_RETRY,
                TlsExtra::Tls12 => TLS12,
                TlsExtra::InitialWindow { .. } => INITIAL_WINDOW,
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
            tls_setup: pack(st.tls_setup),
            tls_finish: pack(st.tls_finish),
            rtt: pack(st.rtt),
            min_rtt: pack(st.min_rtt),
            tag: tag(s),
            flags,
            anatomy: anatomy(s),
        }
    }

    /// The sample's stages, as `Sample::stages` gave them.
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
            tls_setup: unpack(self.tls_setup),
            tls_finish: unpack(self.tls_finish),
            rtt: unpack(self.rtt),
            min_rtt: unpack(self.min_rtt),
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
        Some(self.anatomy & ROUND_TRIP_BITS).filter(|n| *n > 0)
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
    /// The server's own handshake work (`Stages::server_handshake`).
    pub fn server_handshake(&self) -> Option<u32> {
        self.stages().server_handshake(self.round_trips()?)
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
        assert_eq!(r.stages().server_time(), s.server_time_us());
        assert_eq!(r.stages().other(), s.other().map(|d| d.as_micros() as u32));
        assert_eq!((r.stages().rtt, r.stages().min_rtt), (Some(400), Some(300)));
        assert_eq!(r.stages().wait, None);
        assert!(r.ok() && r.https() && r.handshake() && r.resumed() && r.retransmitted());
        assert!(!r.warmup() && !r.new_conn() && !r.canceled());
        assert_eq!(r.timed(), crate::stats::timed(&s));
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

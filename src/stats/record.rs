//! What the statistics keep of a sample once it has been printed or
//! streamed: every stage they use as whole microseconds, the variant, the
//! mode, the error kind and eight flags, in 42 bytes. A run keeps these
//! instead of full samples (unless the output itself needs every sample at
//! the end, as `--json` and `--svg` do), so a `-n 0` run at 200 ms holds a
//! day of samples in under 40 MiB. `Server-Timing` durations, which vary in
//! number per response, are kept beside the records (see `ServerTimings`).

use std::time::Duration;

use crate::probe::{ErrorKind, Mode, Sample, ServerTiming};

/// A stage that was not measured.
const NONE: u32 = u32::MAX;

/// Records are stored in blocks of this many, so growing the store never
/// copies what it holds and never reserves more than one block ahead.
const BLOCK: usize = 4096;

/// At most this many `Server-Timing` metric names are followed per run;
/// later names are counted (`ServerTimings::untracked`), not kept.
pub const MAX_TRACKED_METRICS: usize = 64;

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

/// One sample as the statistics see it. Stages are taken from the
/// sample's own accessors (so every rule about what was measured is the
/// sample's), rounded to the nearest microsecond. Packed to 2-byte
/// alignment so that ten 32-bit fields and two bytes take 42 bytes, not 44;
/// fields are only ever copied out, never borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(2))]
pub struct Record {
    round: u32,
    total: u32,
    /// Cold: `dns`; warm: `wait`.
    first: u32,
    tcp: u32,
    tls: u32,
    srv: u32,
    /// `Sample::tls_setup` and `Sample::tls_finish`: already no larger than
    /// what `tls` leaves for them.
    tls_setup: u32,
    tls_finish: u32,
    rtt: u32,
    min_rtt: u32,
    tag: u8,
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Record>() == 42);

/// Whole microseconds, to the nearest; the largest that fits stays below
/// the "not measured" mark.
pub(super) fn us(d: Duration) -> u32 {
    u32::try_from(d.as_nanos().saturating_add(500) / 1000)
        .unwrap_or(NONE - 1)
        .min(NONE - 1)
}

fn us_of(d: Option<Duration>) -> u32 {
    d.map_or(NONE, us)
}

fn some(v: u32) -> Option<u32> {
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
        Record {
            round: s.round,
            total: us_of(s.total()),
            first: us_of(match s.mode {
                Mode::Cold => s.dns(),
                Mode::Warm => s.wait(),
            }),
            tcp: us_of(s.tcp()),
            tls: us_of(s.tls()),
            srv: us_of(s.srv()),
            tls_setup: us_of(s.tls_setup()),
            tls_finish: us_of(s.tls_finish()),
            rtt: s.tcp_info.map_or(NONE, |t| t.rtt_us.min(NONE - 1)),
            min_rtt: s
                .tcp_info
                .and_then(|t| t.min_rtt_us)
                .map_or(NONE, |v| v.min(NONE - 1)),
            tag: tag(s),
            flags,
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

    pub fn total_us(&self) -> Option<u32> {
        some(self.total)
    }
    pub fn dns_us(&self) -> Option<u32> {
        (self.mode() == Mode::Cold)
            .then_some(self.first)
            .and_then(some)
    }
    pub fn wait_us(&self) -> Option<u32> {
        (self.mode() == Mode::Warm)
            .then_some(self.first)
            .and_then(some)
    }
    pub fn tcp_us(&self) -> Option<u32> {
        some(self.tcp)
    }
    pub fn tls_us(&self) -> Option<u32> {
        some(self.tls)
    }
    pub fn srv_us(&self) -> Option<u32> {
        some(self.srv)
    }
    pub fn tls_setup_us(&self) -> Option<u32> {
        some(self.tls_setup)
    }
    pub fn tls_after_setup_us(&self) -> Option<u32> {
        Some(self.tls_us()?.saturating_sub(self.tls_setup_us()?))
    }
    pub fn tls_finish_us(&self) -> Option<u32> {
        some(self.tls_finish)
    }
    pub fn tls_network_server_us(&self) -> Option<u32> {
        Some(
            self.tls_after_setup_us()?
                .saturating_sub(self.tls_finish_us()?),
        )
    }
    pub fn rtt_us(&self) -> Option<u32> {
        some(self.rtt)
    }
    pub fn min_rtt_us(&self) -> Option<u32> {
        some(self.min_rtt)
    }
    /// `srv` minus a round trip the server cannot inflate, signed
    /// (`probe::server_time_us`, the rule `Sample::server_time_us` uses too).
    pub fn server_time_us(&self) -> Option<i64> {
        crate::probe::server_time_us(self.srv_us()?, self.min_rtt_us(), self.tcp_us())
    }

    /// What the stages leave unexplained (`Sample::other`).
    pub fn other_us(&self) -> Option<u32> {
        let total = self.total_us()?;
        let parts = match self.mode() {
            Mode::Cold => [self.dns_us(), self.tcp_us(), self.tls_us(), self.srv_us()],
            Mode::Warm => [self.wait_us(), self.srv_us(), None, None],
        };
        let sum: u64 = parts.iter().flatten().map(|&v| u64::from(v)).sum();
        Some(u64::from(total).saturating_sub(sum) as u32)
    }

    /// A stage by the name `--compare` reports it under.
    pub fn stage_us(&self, stage: &str) -> Option<u32> {
        match stage {
            "dns" => self.dns_us(),
            "tcp" => self.tcp_us(),
            "tls" => self.tls_us(),
            "srv" => self.srv_us(),
            "total" => self.total_us(),
            _ => None,
        }
    }
}

/// The median of one value of `records` (sorted on the way), and how many
/// records had it: one value list at a time, dropped before the next.
pub(super) fn median_of<'a>(
    records: impl Iterator<Item = &'a Record> + Clone,
    value: impl Fn(&Record) -> Option<u32>,
) -> (Option<Duration>, usize) {
    let mut v = exact(records.filter_map(&value));
    v.sort_unstable();
    (super::descriptive::median_us(&v), v.len())
}

/// The items of `iter` in a list of exactly their number: a long run's
/// statistics must not hold a list twice the size it needs.
pub(super) fn exact<T>(iter: impl Iterator<Item = T> + Clone) -> Vec<T> {
    let mut v = Vec::with_capacity(iter.clone().count());
    v.extend(iter);
    v
}

/// One metric name's durations from one variant's timed samples.
#[derive(Debug)]
struct Series {
    /// Index into `ServerTimings::names`.
    name: u16,
    variant: u8,
    /// Where it was first seen: the sample's number and the metric's place
    /// in that sample's header (for "first seen" order).
    first: (usize, usize),
    /// Durations in whole microseconds, the way every other stage is kept;
    /// the rare one beyond 32 bits (over 71 minutes) in `long`.
    us: Vec<u32>,
    long: Vec<u64>,
}

/// The `Server-Timing` durations of timed samples, per metric name and
/// variant: 4 bytes for each metric a response carried.
#[derive(Debug, Default)]
pub struct ServerTimings {
    names: Vec<String>,
    series: Vec<Series>,
    /// Metric names seen after `MAX_TRACKED_METRICS` were already followed.
    untracked: Vec<String>,
}

/// Milliseconds (a `Server-Timing` `dur`) as whole microseconds; the parser
/// keeps `dur` within 0 ..= 10^9 ms, far below what `u64` holds.
fn dur_us(ms: f64) -> u64 {
    (ms * 1000.0).round().max(0.0) as u64
}

impl ServerTimings {
    fn add(&mut self, seq: usize, variant: u8, metrics: &[ServerTiming]) {
        for (place, m) in metrics.iter().enumerate() {
            let Some(dur) = m.dur_ms else { continue };
            let name = match self.names.iter().position(|n| *n == m.name) {
                Some(i) => i,
                None if self.names.len() < MAX_TRACKED_METRICS => {
                    self.names.push(m.name.clone());
                    self.names.len() - 1
                }
                None => {
                    if self.untracked.len() < MAX_TRACKED_METRICS
                        && !self.untracked.contains(&m.name)
                    {
                        self.untracked.push(m.name.clone());
                    }
                    continue;
                }
            };
            let name = name as u16;
            let at = match self
                .series
                .iter()
                .position(|s| s.name == name && s.variant == variant)
            {
                Some(i) => i,
                None => {
                    self.series.push(Series {
                        name,
                        variant,
                        first: (seq, place),
                        us: Vec::new(),
                        long: Vec::new(),
                    });
                    self.series.len() - 1
                }
            };
            let v = dur_us(dur);
            match u32::try_from(v) {
                Ok(short) => self.series[at].us.push(short),
                Err(_) => self.series[at].long.push(v),
            }
        }
    }

    /// Each metric of `variant` (all variants: `None`) with its durations,
    /// in the order the names were first seen.
    pub fn metrics(&self, variant: Option<u8>) -> Vec<(&str, Vec<u64>)> {
        let mut order: Vec<((usize, usize), u16)> = Vec::new();
        for s in &self.series {
            if variant.is_some_and(|v| v != s.variant) {
                continue;
            }
            match order.iter_mut().find(|(_, n)| *n == s.name) {
                Some(entry) => entry.0 = entry.0.min(s.first),
                None => order.push((s.first, s.name)),
            }
        }
        order.sort_unstable_by_key(|&(first, _)| first);
        order
            .into_iter()
            .map(|(_, name)| {
                let durs = self
                    .series
                    .iter()
                    .filter(|s| s.name == name && variant.is_none_or(|v| v == s.variant))
                    .flat_map(|s| {
                        let short = s.us.iter().map(|&v| u64::from(v));
                        short.chain(s.long.iter().copied())
                    })
                    .collect();
                (self.names[usize::from(name)].as_str(), durs)
            })
            .collect()
    }

    /// Metric names that came after the first `MAX_TRACKED_METRICS` (at
    /// most that many are listed): their durations are not in the statistics.
    pub fn untracked(&self) -> &[String] {
        &self.untracked
    }
}

/// Every sample of a run as a `Record`, in the order they finished, and
/// the `Server-Timing` durations beside them.
#[derive(Debug, Default)]
pub struct History {
    blocks: Vec<Vec<Record>>,
    pub server_timing: ServerTimings,
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    /// Records of `samples`, in round order (samples of one round keep
    /// their order), as a run would have pushed them.
    pub fn of(samples: &[Sample]) -> History {
        let mut in_order: Vec<&Sample> = samples.iter().collect();
        in_order.sort_by_key(|s| s.round);
        let mut h = History::new();
        for s in in_order {
            h.push(s);
        }
        h
    }

    /// Keeps `s`. Samples must come in round order, as the rounds produce
    /// them: the statistics pair a round's probes by walking the records.
    pub fn push(&mut self, s: &Sample) {
        let record = Record::of(s);
        debug_assert!(
            self.blocks
                .last()
                .and_then(|b| b.last())
                .is_none_or(|r| r.round() <= s.round),
            "samples out of round order"
        );
        if record.timed() {
            self.server_timing
                .add(self.len(), s.variant, &s.server_timing);
        }
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK => block.push(record),
            _ => {
                let mut block = Vec::with_capacity(BLOCK);
                block.push(record);
                self.blocks.push(block);
            }
        }
    }

    pub fn len(&self) -> usize {
        // Every block but the last is full.
        self.blocks
            .last()
            .map_or(0, |last| (self.blocks.len() - 1) * BLOCK + last.len())
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Record> + Clone {
        self.blocks.iter().flatten()
    }

    /// The records of one variant (`None`: all of them).
    pub fn of_variant(&self, variant: Option<u8>) -> impl Iterator<Item = &Record> + Clone {
        self.iter()
            .filter(move |r| variant.is_none_or(|v| r.variant() == v))
    }
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
        let us = |d: Option<Duration>| d.map(|d| d.as_micros() as u32);
        assert_eq!(r.round(), 3);
        assert_eq!(r.mode(), Mode::Cold);
        assert_eq!((r.variant(), r.kind()), (0, None));
        assert_eq!(r.total_us(), us(s.total()));
        assert_eq!(r.dns_us(), us(s.dns()));
        assert_eq!(r.tcp_us(), us(s.tcp()));
        assert_eq!(r.tls_us(), us(s.tls()));
        assert_eq!(r.srv_us(), us(s.srv()));
        assert_eq!(r.other_us(), us(s.other()));
        assert_eq!(r.tls_setup_us(), us(s.tls_setup()));
        assert_eq!(r.tls_after_setup_us(), us(s.tls_after_setup()));
        assert_eq!(r.tls_finish_us(), us(s.tls_finish()));
        assert_eq!(r.tls_network_server_us(), us(s.tls_network_server()));
        assert_eq!(r.server_time_us(), s.server_time_us());
        assert_eq!((r.rtt_us(), r.min_rtt_us()), (Some(400), Some(300)));
        assert_eq!(r.wait_us(), None);
        assert!(r.ok() && r.https() && r.handshake() && r.resumed() && r.retransmitted());
        assert!(!r.warmup() && !r.new_conn() && !r.canceled());
        assert_eq!(r.timed(), crate::stats::timed(&s));
    }

    #[test]
    fn a_warm_record_has_wait_and_no_handshake_stages() {
        let s = synthetic::warm(2, 120, 900, 30, true);
        let r = Record::of(&s);
        assert_eq!(r.wait_us(), s.wait().map(|d| d.as_micros() as u32));
        assert_eq!((r.dns_us(), r.tcp_us(), r.tls_us()), (None, None, None));
        assert_eq!(r.other_us(), s.other().map(|d| d.as_micros() as u32));
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

    #[test]
    fn stages_round_to_the_nearest_microsecond() {
        assert_eq!(us(Duration::from_nanos(1_499)), 1);
        assert_eq!(us(Duration::from_nanos(1_500)), 2);
        // Longer than 32 bits of microseconds: the longest that fits, never
        // mistaken for "not measured".
        assert_eq!(us(Duration::from_secs(10_000)), NONE - 1);
    }

    #[test]
    fn blocks_grow_one_at_a_time_and_keep_order() {
        let mut h = History::new();
        for i in 0..(BLOCK + 3) as u32 {
            h.push(&synthetic::warm(i + 1, 100, 1000, 10, true));
        }
        assert_eq!(h.len(), BLOCK + 3);
        assert_eq!(h.blocks.len(), 2);
        let rounds: Vec<u32> = h.iter().map(|r| r.round()).collect();
        assert_eq!(rounds, (1..=(BLOCK + 3) as u32).collect::<Vec<_>>());
        // Each block reserved exactly once, at its size: nothing ahead.
        let reserved: Vec<usize> = h.blocks.iter().map(Vec::capacity).collect();
        assert_eq!(reserved, [BLOCK, BLOCK]);
    }

    #[test]
    fn server_timing_order_is_first_seen_per_variant_and_overall() {
        let with = |variant: u8, round: u32, names: &[&str]| {
            let mut s = synthetic::warm(round, 100, 1000, 10, true);
            s.variant = variant;
            s.server_timing = names
                .iter()
                .map(|n| ServerTiming {
                    name: n.to_string(),
                    dur_ms: Some(1.0),
                    desc: None,
                })
                .collect();
            s
        };
        // Variant 0 says `b, a` first; variant 1 says `a, b` in the same round.
        let h = History::of(&[with(0, 1, &["b", "a"]), with(1, 1, &["a", "b"])]);
        let names = |v| -> Vec<&str> {
            h.server_timing
                .metrics(v)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names(None), ["b", "a"]);
        assert_eq!(names(Some(0)), ["b", "a"]);
        assert_eq!(names(Some(1)), ["a", "b"]);
    }

    #[test]
    fn history_of_puts_samples_in_round_order() {
        let h = History::of(&[
            synthetic::warm(2, 100, 1000, 10, true),
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::warm(1, 100, 1000, 10, true),
        ]);
        let order: Vec<(u32, Mode)> = h.iter().map(|r| (r.round(), r.mode())).collect();
        assert_eq!(order, [(1, Mode::Cold), (1, Mode::Warm), (2, Mode::Warm)]);
    }

    #[test]
    fn server_timing_names_beyond_the_limit_are_counted_not_kept() {
        let mut h = History::new();
        let mut s = synthetic::warm(1, 100, 1000, 10, true);
        s.server_timing = (0..MAX_TRACKED_METRICS + 2)
            .map(|i| ServerTiming {
                name: format!("m{i}"),
                dur_ms: Some(1.5),
                desc: None,
            })
            .collect();
        h.push(&s);
        let metrics = h.server_timing.metrics(None);
        assert_eq!(metrics.len(), MAX_TRACKED_METRICS);
        assert_eq!(metrics[0], ("m0", vec![1500]));
        assert_eq!(h.server_timing.untracked(), ["m64", "m65"]);
    }
}

//! What a run's samples came to that the kept records do not say: the
//! early-data outcomes of the cold probes that asked for it, and the probes
//! whose `dns` overlapped their `tcp`. Taken once, as each sample is kept
//! (`History::push`), and read by every output and warning alike, by one
//! rule, the verdict's: the probes that count, or the warmup probes when
//! they are all there is.

use std::time::Duration;

use crate::probe::{EarlyData, Mode, Sample, MAX_VARIANTS};

/// One side of the rule: the probes that count, or the warmup ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Samples seen.
    pub samples: u64,
    /// Cold probes per variant that asked for early data, by outcome
    /// (`EarlyData as usize`: accepted, rejected, not sent).
    pub early_data: [[u64; 3]; MAX_VARIANTS],
    /// Of those, the ones that resumed a session.
    pub early_data_resumed: u64,
    /// Cold probes whose `dns` overlapped their `tcp`, and the longest overlap.
    pub dns_overlaps: u64,
    pub longest_overlap: Duration,
    /// Cold probes whose handshake had a message that could not be read
    /// (its anatomy's fields are `null`).
    pub unreadable_handshakes: u64,
}

impl Tally {
    fn add(&mut self, s: &Sample) {
        self.samples += 1;
        if s.mode == Mode::Cold {
            if let (Some(outcome), Some(counts)) = (
                s.early_data,
                self.early_data.get_mut(usize::from(s.variant)),
            ) {
                counts[outcome as usize] += 1;
                if s.tls.is_some_and(|t| t.resumed) {
                    self.early_data_resumed += 1;
                }
            }
        }
        if let Some(d) = s.dns_overlap() {
            self.dns_overlaps += 1;
            self.longest_overlap = self.longest_overlap.max(d);
        }
        if s.anatomy.as_ref().is_some_and(|a| a.unreadable) {
            self.unreadable_handshakes += 1;
        }
    }

    /// Cold probes that asked for early data, every variant.
    pub fn early_data_asked(&self) -> u64 {
        self.early_data.iter().flatten().sum()
    }

    /// Of those, the ones that sent it (accepted or rejected).
    pub fn early_data_sent(&self) -> u64 {
        self.early_data
            .iter()
            .map(|c| c[EarlyData::Accepted as usize] + c[EarlyData::Rejected as usize])
            .sum()
    }
}

/// Both sides of the rule, until the run says which applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tallies {
    counted: Tally,
    warmup: Tally,
}

impl Tallies {
    pub const fn new() -> Tallies {
        Tallies {
            counted: Tally {
                samples: 0,
                early_data: [[0; 3]; MAX_VARIANTS],
                early_data_resumed: 0,
                dns_overlaps: 0,
                longest_overlap: Duration::ZERO,
                unreadable_handshakes: 0,
            },
            warmup: Tally {
                samples: 0,
                early_data: [[0; 3]; MAX_VARIANTS],
                early_data_resumed: 0,
                dns_overlaps: 0,
                longest_overlap: Duration::ZERO,
                unreadable_handshakes: 0,
            },
        }
    }

    pub(super) fn add(&mut self, s: &Sample) {
        if s.warmup {
            self.warmup.add(s);
        } else {
            self.counted.add(s);
        }
    }

    /// The run's tally: the probes that count, or the warmup ones when no
    /// probe counts (as `judge` reads a run).
    pub fn of_run(&self) -> &Tally {
        if self.counted.samples > 0 {
            &self.counted
        } else {
            &self.warmup
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::synthetic;

    #[test]
    fn warmup_counts_only_when_nothing_else_does() {
        let mut t = Tallies::new();
        let mut warm_up = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        warm_up.warmup = true;
        warm_up.early_data = Some(EarlyData::NotSent);
        t.add(&warm_up);
        assert_eq!(t.of_run().early_data[0], [0, 0, 1], "all there is");
        let mut counted = synthetic::cold(2, 40, 100, 3000, 1000, 50);
        counted.early_data = Some(EarlyData::Rejected);
        t.add(&counted);
        let mut w = synthetic::warm(2, 30, 1000, 10, true);
        w.early_data = Some(EarlyData::Accepted);
        t.add(&w);
        assert_eq!(
            t.of_run().early_data[0],
            [0, 1, 0],
            "one counted cold probe"
        );
        assert_eq!(t.of_run().early_data_asked(), 1);
        assert_eq!(t.of_run().early_data_sent(), 1);
        assert_eq!(t.of_run().samples, 2);
        assert_eq!(t.of_run().unreadable_handshakes, 0);
        let mut unreadable = synthetic::cold(3, 40, 100, 3000, 1000, 50);
        unreadable.anatomy = Some(Box::new(crate::probe::HandshakeAnatomy {
            unreadable: true,
            ..Default::default()
        }));
        t.add(&unreadable);
        assert_eq!(t.of_run().unreadable_handshakes, 1);
    }
}

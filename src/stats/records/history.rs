//! Every sample of a run as a kept `Record`, in blocks, and beside them
//! the `Server-Timing` durations and the run's tallies.

use crate::probe::Sample;

use super::record::Record;
use super::server_timings::ServerTimings;
use super::tallies::Tallies;

/// Records are stored in blocks of this many, so growing the store never
/// copies what it holds and never reserves more than one block ahead.
const BLOCK: usize = 4096;

/// Every sample of a run as a `Record`, in the order they finished, and
/// the `Server-Timing` durations beside them.
#[derive(Debug, Default)]
pub struct History {
    blocks: Vec<Vec<Record>>,
    pub server_timing: ServerTimings,
    /// What the records do not keep of each sample, counted as it is kept.
    pub tallies: Tallies,
}

/// No records: what a run that ended before round 1 hands its outputs.
pub static EMPTY: History = History::new();

impl History {
    pub const fn new() -> History {
        History {
            blocks: Vec::new(),
            server_timing: ServerTimings::new(),
            tallies: Tallies::new(),
        }
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
        self.tallies.add(s);
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
    use crate::probe::Mode;
    use crate::stats::synthetic;

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
    fn history_of_puts_samples_in_round_order() {
        let h = History::of(&[
            synthetic::warm(2, 100, 1000, 10, true),
            synthetic::cold(1, 40, 100, 3000, 1000, 50),
            synthetic::warm(1, 100, 1000, 10, true),
        ]);
        let order: Vec<(u32, Mode)> = h.iter().map(|r| (r.round(), r.mode())).collect();
        assert_eq!(order, [(1, Mode::Cold), (1, Mode::Warm), (2, Mode::Warm)]);
    }
}

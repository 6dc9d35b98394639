//! A running median in O(log n) per sample: two heaps split at the middle.
//! Used for live highlighting, so marking each row does not re-sort every
//! total seen so far. Values are kept as whole microseconds (4 bytes each),
//! like the statistics' own records.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use crate::text::micros;

/// Each heap grows by this many values at a time.
const GROW: usize = 4096;

/// Room for the next value or two: doubling while small, then `GROW` at a time.
fn room<T: Ord>(heap: &mut BinaryHeap<T>) {
    if heap.len() + 2 > heap.capacity() {
        heap.reserve_exact(heap.len().clamp(16, GROW));
    }
}

#[derive(Debug, Default)]
pub struct RunningMedian {
    /// The lower half, largest on top (microseconds).
    low: BinaryHeap<u32>,
    /// The upper half, smallest on top.
    high: BinaryHeap<Reverse<u32>>,
}

impl RunningMedian {
    pub fn new() -> RunningMedian {
        RunningMedian::default()
    }

    pub fn len(&self) -> usize {
        self.low.len() + self.high.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, v: Duration) {
        let v = crate::probe::whole_us(v);
        // Grow by a fixed step rather than doubling, so a long run holds
        // about 4 bytes per value, not up to 8.
        room(&mut self.low);
        room(&mut self.high);
        match self.low.peek() {
            Some(&top) if v > top => self.high.push(Reverse(v)),
            _ => self.low.push(v),
        }
        // Keep low.len() == high.len() or high.len() + 1.
        if self.low.len() > self.high.len() + 1 {
            let moved = self.low.pop().expect("low is not empty");
            self.high.push(Reverse(moved));
        } else if self.high.len() > self.low.len() {
            let Reverse(moved) = self.high.pop().expect("high is not empty");
            self.low.push(moved);
        }
    }

    /// Same rule as the statistics: the middle value or the mean of the two middle ones.
    pub fn median(&self) -> Option<Duration> {
        let lo = micros(*self.low.peek()?);
        if self.low.len() > self.high.len() {
            Some(lo)
        } else {
            let Reverse(hi) = *self.high.peek()?;
            Some((lo + micros(hi)) / 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::descriptive::median;

    #[test]
    fn agrees_with_the_sorted_median_at_every_step() {
        let mut running = RunningMedian::new();
        let mut seen = Vec::new();
        // A deterministic scramble with duplicates.
        for i in 0..500u64 {
            let v = Duration::from_micros((i * 7919) % 263 + (i % 5));
            running.push(v);
            seen.push(v);
            let mut sorted = seen.clone();
            sorted.sort();
            assert_eq!(
                running.median(),
                median(&sorted),
                "after {} values",
                seen.len()
            );
        }
    }

    #[test]
    fn empty_has_no_median() {
        assert_eq!(RunningMedian::new().median(), None);
    }
}

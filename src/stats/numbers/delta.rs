//! Signed spans of time: the unit of every difference the statistics give
//! (a gain, a variant against the baseline, the server's own time), where a
//! `Duration` cannot go below zero. Nanoseconds, so the mean of two middle
//! microsecond values keeps its half.

use std::time::Duration;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Delta(i64);

impl Delta {
    pub const ZERO: Delta = Delta(0);

    pub fn from_nanos(ns: i64) -> Delta {
        Delta(ns)
    }

    pub fn from_us(us: i64) -> Delta {
        Delta(us.saturating_mul(1000))
    }

    /// `later − earlier`.
    pub fn between(later: Duration, earlier: Duration) -> Delta {
        let ns = |d: Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        Delta(ns(later).saturating_sub(ns(earlier)))
    }

    pub fn as_nanos(self) -> i64 {
        self.0
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// How far from zero, whichever the side.
    pub fn abs(self) -> Duration {
        Duration::from_nanos(self.0.unsigned_abs())
    }

    /// Milliseconds, for the machine outputs' `_ms` figures.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl std::ops::Neg for Delta {
    type Output = Delta;

    /// The same span on the other side of zero.
    fn neg(self) -> Delta {
        Delta(self.0.saturating_neg())
    }
}

/// The middle value of ascending `sorted`, or the mean of the two middle
/// ones (`descriptive::middle`'s rule).
pub fn median_delta(sorted: &[Delta]) -> Option<Delta> {
    super::descriptive::middle(sorted).map(|(a, b)| Delta((a.0 + b.0) / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_median_of_two_keeps_its_half_microsecond() {
        let v = [Delta::from_us(-3), Delta::from_us(2)];
        assert_eq!(median_delta(&v), Some(Delta::from_nanos(-500)));
        assert_eq!(median_delta(&[]), None);
        assert_eq!(Delta::from_us(-1500).abs(), Duration::from_micros(1500));
        assert!(Delta::from_us(-1).is_negative());
        assert_eq!(
            Delta::between(Duration::from_millis(2), Duration::from_millis(5)),
            Delta::from_us(-3000)
        );
        assert_eq!(Delta::from_us(1234).as_millis_f64(), 1.234);
    }
}

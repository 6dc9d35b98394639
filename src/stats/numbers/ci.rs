//! A distribution-free confidence interval for a median, from binomial order
//! statistics: with n sorted values, [x(k), x(n−k+1)] covers the true median
//! with probability 1 − 2·P(B ≤ k−1) for B ~ Binomial(n, ½), whatever the
//! distribution. We take the largest k whose coverage is still at least 95%.

use statrs::distribution::{Binomial, DiscreteCDF};

pub const LEVEL: f64 = 0.95;

/// The 1-based ranks (k, n−k+1) of the interval's ends, or `None` when even
/// [min, max] covers less than 95% (n ≤ 5).
pub fn median_ci_ranks(n: usize) -> Option<(usize, usize)> {
    if n == 0 {
        return None;
    }
    let b = Binomial::new(0.5, n as u64).ok()?;
    let tail = (1.0 - LEVEL) / 2.0;
    // k = how many j in 0..n/2 have P(B ≤ j) within the 2.5% tail. The CDF
    // grows with j, so binary search keeps this O(log n) for long runs.
    let (mut lo, mut hi) = (0usize, n / 2);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if b.cdf(mid as u64) <= tail + 1e-12 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let k = lo;
    (k >= 1).then_some((k, n - k + 1))
}

/// The interval itself over ascending `sorted` values.
pub fn median_ci<T: Copy>(sorted: &[T]) -> Option<(T, T)> {
    let (lo, hi) = median_ci_ranks(sorted.len())?;
    Some((sorted[lo - 1], sorted[hi - 1]))
}

/// The smallest n for which a 95% interval exists.
pub fn min_n() -> usize {
    (1..64)
        .find(|&n| median_ci_ranks(n).is_some())
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_hand_computed_tables() {
        // n ≤ 5: even [min, max] covers only 1 − 2·0.5^n < 95%.
        for n in 0..=5 {
            assert_eq!(median_ci_ranks(n), None, "n = {n}");
        }
        // n = 6: P(B ≤ 0) = 1/64 ≤ 2.5%, P(B ≤ 1) = 7/64 > 2.5% → [x1, x6].
        assert_eq!(median_ci_ranks(6), Some((1, 6)));
        // n = 8: P(B ≤ 0) = 1/256, P(B ≤ 1) = 9/256 = 3.5% → [x1, x8].
        assert_eq!(median_ci_ranks(8), Some((1, 8)));
        // n = 9: P(B ≤ 1) = 10/512 = 1.95% → [x2, x8].
        assert_eq!(median_ci_ranks(9), Some((2, 8)));
        // n = 10: P(B ≤ 1) = 11/1024 = 1.07%, P(B ≤ 2) = 56/1024 = 5.5% → [x2, x9].
        assert_eq!(median_ci_ranks(10), Some((2, 9)));
        // n = 20: P(B ≤ 5) = 2.07%, P(B ≤ 6) = 5.77% → [x6, x15].
        assert_eq!(median_ci_ranks(20), Some((6, 15)));
        assert_eq!(min_n(), 6);
    }

    #[test]
    fn interval_picks_the_order_statistics() {
        let v: Vec<u32> = (1..=10).collect();
        assert_eq!(median_ci(&v), Some((2, 9)));
        assert_eq!(median_ci(&v[..5]), None);
    }

    /// xorshift64*: a tiny deterministic generator, enough for a coverage check.
    struct Rng(u64);
    impl Rng {
        fn next_f64(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn covers_the_true_median_about_95_percent_of_the_time() {
        // Exponential(1): skewed like latency, true median ln 2.
        let truth = std::f64::consts::LN_2;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for n in [7usize, 15, 40] {
            let trials = 4000;
            let mut covered = 0;
            for _ in 0..trials {
                let mut v: Vec<f64> = (0..n).map(|_| -(1.0 - rng.next_f64()).ln()).collect();
                v.sort_by(|a, b| a.total_cmp(b));
                let (lo, hi) = median_ci(&v).unwrap();
                if lo <= truth && truth <= hi {
                    covered += 1;
                }
            }
            let rate = covered as f64 / trials as f64;
            // The exact coverage is at least 95% and below 99% for these n.
            assert!((0.94..0.995).contains(&rate), "n = {n}: coverage {rate}");
        }
    }
}

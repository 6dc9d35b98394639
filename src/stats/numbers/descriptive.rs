//! Order statistics and spread over stored samples, computed from the values
//! themselves (never a running formula) so they can be checked by hand.

use std::time::Duration;

use crate::text::micros;

/// p95 is only reported from this many samples on; below it is just the maximum.
pub const P95_MIN_N: usize = 20;

/// The middle value of ascending `sorted` twice, or the two middle ones:
/// the one median rule, for every value type (their mean is the median).
pub(super) fn middle<T: Copy>(sorted: &[T]) -> Option<(T, T)> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some((sorted[n / 2], sorted[n / 2])),
        _ => Some((sorted[n / 2 - 1], sorted[n / 2])),
    }
}

/// The middle value, or the mean of the two middle ones. `sorted` must be ascending.
pub fn median(sorted: &[Duration]) -> Option<Duration> {
    middle(sorted).map(|(a, b)| (a + b) / 2)
}

/// `median` of ascending whole microseconds (what `Record` keeps), as a
/// `Duration` so that the mean of two middle values keeps its half.
pub fn median_us<T: Copy + Into<u64>>(sorted: &[T]) -> Option<Duration> {
    let us = |v: T| Duration::from_micros(v.into());
    middle(sorted).map(|(a, b)| (us(a) + us(b)) / 2)
}

/// Nearest rank: rank = ceil(p/100 × n), clamped to 1..=n. No interpolation.
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// The mean of whole microseconds, to the nanosecond.
fn mean_us(values: &[u32]) -> Option<Duration> {
    if values.is_empty() {
        return None;
    }
    let sum: u128 = values.iter().map(|&v| u128::from(v) * 1000).sum();
    Some(Duration::from_nanos((sum / values.len() as u128) as u64))
}

/// Population standard deviation, in two passes (mean first, then squared
/// deviations from it), so a small spread on large values is not lost.
pub fn mdev(values: &[Duration]) -> Option<Duration> {
    spread(values.iter().map(|d| d.as_secs_f64()))
}

fn spread(values: impl Iterator<Item = f64> + Clone) -> Option<Duration> {
    let n = values.clone().count();
    if n == 0 {
        return None;
    }
    let mean = values.clone().sum::<f64>() / n as f64;
    let var = values.map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
    Some(Duration::from_secs_f64(var.sqrt()))
}

/// The figures of one mode's timing sample set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Description {
    pub n: usize,
    pub min: Option<Duration>,
    /// Nearest-rank quartiles, for the distribution picture.
    pub p25: Option<Duration>,
    pub mean: Option<Duration>,
    pub median: Option<Duration>,
    pub p75: Option<Duration>,
    pub max: Option<Duration>,
    pub mdev: Option<Duration>,
    /// `None` below `P95_MIN_N` samples.
    pub p95: Option<Duration>,
}

/// The figures of whole-microsecond values (sorted here).
pub fn describe(mut values: Vec<u32>) -> Description {
    values.sort_unstable();
    let n = values.len();
    let at = |p| percentile(&values, p).map(micros);
    Description {
        n,
        min: values.first().copied().map(micros),
        p25: at(25.0),
        mean: mean_us(&values),
        median: median_us(&values),
        p75: at(75.0),
        max: values.last().copied().map(micros),
        mdev: spread(values.iter().map(|&v| f64::from(v) / 1e6)),
        p95: if n >= P95_MIN_N { at(95.0) } else { None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&x| Duration::from_millis(x)).collect()
    }

    /// Milliseconds as the whole microseconds `describe` takes.
    fn ms_us(v: &[u32]) -> Vec<u32> {
        v.iter().map(|&x| x * 1000).collect()
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&ms(&[1, 2, 9])), Some(Duration::from_millis(2)));
        // Even count: mean of the two middle values (2 and 4).
        assert_eq!(median(&ms(&[1, 2, 4, 9])), Some(Duration::from_millis(3)));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn nearest_rank_percentile_by_hand() {
        let v = ms(&(1..=20).collect::<Vec<_>>());
        // ceil(0.95 × 20) = 19 → the 19th value.
        assert_eq!(percentile(&v, 95.0), Some(Duration::from_millis(19)));
        // ceil(0.5 × 20) = 10.
        assert_eq!(percentile(&v, 50.0), Some(Duration::from_millis(10)));
        // Rank clamps to 1.
        assert_eq!(percentile(&v, 0.0), Some(Duration::from_millis(1)));
        // ceil(0.95 × 7) = 7: the maximum, which is why p95 waits for n ≥ 20.
        assert_eq!(
            percentile(&ms(&[5, 1, 2, 3, 4, 6, 7]), 95.0),
            Some(Duration::from_millis(7))
        );
    }

    #[test]
    fn mdev_is_population_standard_deviation() {
        // Values 2,4,4,4,5,5,7,9: mean 5, population variance 4, sd 2.
        let d = mdev(&ms(&[2, 4, 4, 4, 5, 5, 7, 9])).unwrap();
        assert!((d.as_secs_f64() - 0.002).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn mdev_keeps_small_spread_on_large_values() {
        // 1e6 s ± 1 µs: a one-pass sum-of-squares loses this entirely.
        let base = Duration::from_secs(1_000_000);
        let v = vec![base, base + Duration::from_micros(2)];
        let d = mdev(&v).unwrap();
        assert!((d.as_secs_f64() - 1e-6).abs() < 1e-7, "{d:?}");
    }

    #[test]
    fn p95_only_from_twenty_samples() {
        assert_eq!(describe(ms_us(&(1..=19).collect::<Vec<_>>())).p95, None);
        let twenty = describe(ms_us(&(1..=20).collect::<Vec<_>>()));
        assert_eq!(twenty.p95, Some(Duration::from_millis(19)));
        // Nearest rank: ceil(0.25 × 20) = 5, ceil(0.75 × 20) = 15.
        assert_eq!(twenty.p25, Some(Duration::from_millis(5)));
        assert_eq!(twenty.p75, Some(Duration::from_millis(15)));
        let d = describe(ms_us(&[3, 1, 2]));
        assert_eq!(
            (d.min, d.max, d.median),
            (Some(ms(&[1])[0]), Some(ms(&[3])[0]), Some(ms(&[2])[0]))
        );
        assert_eq!(d.mean, Some(Duration::from_millis(2)));
    }

    #[test]
    fn microsecond_median_keeps_the_half_and_mean_the_nanoseconds() {
        // Two middle values 1 µs apart: the median is 1.5 µs, not 1 µs.
        assert_eq!(median_us(&[1u32, 2]), Some(Duration::from_nanos(1500)));
        let d = describe(vec![1, 1, 2]);
        assert_eq!(d.mean, Some(Duration::from_nanos(1333)));
    }

    #[test]
    fn empty_input_gives_no_figures() {
        let d = describe(Vec::new());
        assert_eq!(d, Description::default());
    }
}

//! How every number of the JSON is written: milliseconds to the
//! microsecond. A leaf of the JSON writers.

use std::time::Duration;

/// A figure that can be told in milliseconds: a duration, or a figure the
/// statistics already hand out in milliseconds.
pub trait AsMillis: Copy {
    fn as_millis_f64(self) -> f64;
}

impl AsMillis for Duration {
    fn as_millis_f64(self) -> f64 {
        crate::text::millis(self)
    }
}

impl AsMillis for crate::stats::Delta {
    fn as_millis_f64(self) -> f64 {
        crate::stats::Delta::as_millis_f64(self)
    }
}

/// Every `_ms` number of the JSON, sample or summary: milliseconds to the
/// microsecond, the resolution libcurl gives; keep exactly that.
pub fn json_ms(v: impl AsMillis) -> f64 {
    (v.as_millis_f64() * 1000.0).round() / 1000.0
}

/// A confidence interval, low then high.
pub fn json_ms_pair<T: AsMillis>((lo, hi): (T, T)) -> [f64; 2] {
    [json_ms(lo), json_ms(hi)]
}

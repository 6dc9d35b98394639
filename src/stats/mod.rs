//! Statistics over the samples a run collected. Reads `probe` types only.

mod attribution;
pub mod ci;
mod compare;
pub mod descriptive;
mod record;
mod running;
mod summary;
#[cfg(test)]
mod summary_tests;
#[cfg(test)]
#[path = "../../tests/support/synthetic.rs"]
pub(crate) mod synthetic;

pub use attribution::{share_percent, Attribution, ServerMetric};
pub use compare::{
    summarize_compared, summarize_compared_kept, Comparison, Difference, COLD_STAGES, WARM_STAGES,
};
pub use descriptive::{Description, P95_MIN_N};
pub use record::{History, Record, ServerTimings, MAX_TRACKED_METRICS};
pub use running::RunningMedian;
pub use summary::{
    has_large_residual, judge, judge_kept, large_residual, summarize, summarize_kept, timed,
    Handshake, ModeSummary, Summary, Verdict,
};

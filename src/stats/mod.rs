//! Statistics over the samples a run collected. Reads `probe` types only.

mod attribution;
pub mod ci;
pub mod descriptive;
mod running;
mod summary;
#[cfg(test)]
mod summary_tests;
#[cfg(test)]
#[path = "../../tests/support/synthetic.rs"]
mod synthetic;

pub use attribution::{share_percent, Attribution, ServerMetric};
pub use descriptive::{Description, P95_MIN_N};
pub use running::RunningMedian;
pub use summary::{
    judge, large_residual, summarize, timed, Handshake, ModeSummary, Summary, Verdict,
};

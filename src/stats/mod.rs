//! Statistics over the samples a run collected. Reads `probe` types only.

mod anatomy;
mod attribution;
pub mod ci;
mod compare;
mod delta;
pub mod descriptive;
mod history;
mod pairing;
mod record;
mod running;
mod server_timings;
mod stage_figures;
mod summary;
#[cfg(test)]
mod summary_tests;
#[cfg(test)]
#[path = "../../tests/support/synthetic.rs"]
pub(crate) mod synthetic;
mod tallies;

pub use anatomy::{handshake_why, ConnectionParts, HandshakeWhy, TlsParts};
pub use attribution::{share_percent, Attribution, ServerMetric};
pub use compare::{compare as compare_variants, Comparison, Difference, COLD_STAGES, WARM_STAGES};
pub use delta::{median_delta, Delta};
pub use descriptive::{Description, P95_MIN_N};
pub use history::{History, EMPTY as NO_RECORDS};
pub use record::{HandshakeParts, Record};
pub use running::RunningMedian;
pub use server_timings::{ServerTimings, MAX_TRACKED_METRICS};
pub use stage_figures::{stage_figures, StageFigures};
pub use summary::{
    judge, large_residual, summarize, timed, Handshake, ModeSummary, Summary, Verdict,
};
pub use tallies::{HandshakeNames, Tallies, Tally};

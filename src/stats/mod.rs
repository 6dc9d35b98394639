//! Statistics over the samples a run collected. Reads `probe` types only.
//!
//! Its folders are floors, bottom-up, each importing only from itself and
//! those below (`FLOORS` in tests/source_layout/folders.rs): numbers (the
//! arithmetic) <- records (what a run keeps) <- findings (what the end of a
//! run says).

mod findings;
mod numbers;
mod records;
#[cfg(test)]
#[path = "../../tests/support/synthetic.rs"]
pub(crate) mod synthetic;

use findings::{anatomy, attribution, compare, stage_figures, summary, warning};
pub use numbers::{ci, descriptive};
use numbers::{delta, running};
use records::{history, record, server_timings, tallies};

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
pub use warning::{of_history as warnings_of, Warning};

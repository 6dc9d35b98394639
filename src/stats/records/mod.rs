//! What a run keeps of each sample (`Record`, `History`), the names it
//! tallies, and the `Server-Timing` names it tracks. Floor 2 of `stats`:
//! imports `numbers`.

pub(super) mod history;
pub(super) mod record;
pub(super) mod server_timings;
pub(super) mod tallies;

// What the files here name as `super::x` from the floors below.
use super::numbers::descriptive;

//! What the statistics find at the end of a run: the summary and its
//! verdict, the attribution of a connection's cost, the handshake's why,
//! paired differences, `--compare`'s differences, every stage described.
//! Floor 3 of `stats`, the top: imports `numbers` and `records`.

pub(super) mod anatomy;
pub(super) mod attribution;
pub(super) mod compare;
mod pairing;
pub(super) mod stage_figures;
pub(super) mod summary;
#[cfg(test)]
mod summary_tests;

// What the files here name as `super::x` from the floors below.
use super::numbers::{ci, delta, descriptive};
use super::records::{history, record, tallies};
// The tests' synthetic samples (`tests/support/synthetic.rs`).
#[cfg(test)]
use super::synthetic;

//! The shared data types, everything `stats` and `render` read (`Sample`,
//! `RunInfo`, `ProbeError`, ...), and the stages a sample is cut into.
//! Floor 4 of `probe`: imports `reply` and `settings`, which the types
//! carry.

pub(super) mod stages;
pub(super) mod types;

// What the files here name as `super::x` from the floors below.
use super::reply::{ocsp, retry_after, server_timing, transfer, valve};
use super::settings::{axes, config};

//! The shared data types, everything `stats` and `render` read (`Sample`,
//! `ProbeError`, ... in `types`; the handshake's anatomy; the run's own
//! facts, `run_info`), the stages a sample is cut into, and how a run
//! ended (`ending`). Floor 4 of `probe`: imports `reply` and
//! `settings`, which the types carry.

pub(super) mod ending;
pub(super) mod handshake;
pub(super) mod run_info;
pub(super) mod stages;
pub(super) mod types;

// What the files here name as `super::x` from the floors below.
use super::reply::{ocsp, retry_after, server_timing, transfer, valve};
use super::settings::{axes, compare, config, target};

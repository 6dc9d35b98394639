//! The rounds: the request before them (the preflight), the cold and warm
//! probes and the cold probes' multi handle and DNS lookup, the scheduler
//! and the rules that stop a run, and the CPU kept awake meanwhile. Floor 7
//! of `probe`, the top: imports any floor below.

mod cold;
mod cold_driver;
pub(super) mod preflight;
mod resolver;
pub(super) mod scheduler;
mod stop_rules;
pub(super) mod wakeup;
mod warm;

// What the files here name as `super::x` from the floors below.
use super::curl_ffi;
use super::data::{ending, run_info, types};
use super::exchange::{collector, env, handle, sample};
use super::reply::valve;
use super::settings::{cancel, compare, config};

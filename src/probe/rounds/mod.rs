mod cold;
mod cold_driver;
pub(super) mod preflight;
mod resolver;
pub(super) mod scheduler;
mod stop_rules;
pub(super) mod wakeup;
mod warm;

use super::curl_ffi;
use super::data::types;
use super::exchange::{collector, env, handle, sample};
use super::reply::valve;
use super::settings::{cancel, compare, config};

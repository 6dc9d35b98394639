pub(super) mod stages;
pub(super) mod types;

use super::reply::{ocsp, retry_after, server_timing, transfer, valve};
use super::settings::{axes, config};

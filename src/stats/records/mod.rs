pub(super) mod history;
pub(super) mod record;
pub(super) mod server_timings;
pub(super) mod tallies;

use super::numbers::descriptive;

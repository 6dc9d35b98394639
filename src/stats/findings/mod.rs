pub(super) mod anatomy;
pub(super) mod attribution;
pub(super) mod compare;
mod pairing;
pub(super) mod stage_figures;
pub(super) mod summary;
#[cfg(test)]
mod summary_tests;

use super::numbers::{ci, delta, descriptive};
use super::records::{history, record, tallies};
#[cfg(test)]
use super::synthetic;

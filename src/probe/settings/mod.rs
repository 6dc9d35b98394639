pub(super) mod axes;
pub(super) mod cancel;
pub(super) mod compare;
pub(super) mod config;
pub(super) mod target;

use super::reply::transfer;

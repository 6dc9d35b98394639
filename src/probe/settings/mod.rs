//! What a run is asked to do: the target, the configuration the command
//! line settled, the axes of `--compare` and the variants they make, and
//! the interrupt flag that may stop it. Floor 3 of `probe`: imports only
//! `reply` (what the output asks to have read, `transfer::Capture`).

pub(super) mod axes;
pub(super) mod cancel;
pub(super) mod compare;
pub(super) mod config;
pub(super) mod target;

// What the files here name as `super::x` from the floors below.
use super::reply::transfer;

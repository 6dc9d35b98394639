//! The arithmetic of the statistics, over plain numbers: descriptive
//! figures (medians, percentiles, mdev), confidence intervals, deltas, the
//! running median. Floor 1 of `stats`: imports nothing of `stats`.

pub mod ci;
pub(super) mod delta;
pub mod descriptive;
pub(super) mod running;

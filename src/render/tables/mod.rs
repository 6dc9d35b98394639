//! The tables every machine format writes from, one each: a sample's
//! fields, the run's facts and the summary's figures, and how the JSON
//! writes a number. Floor 2 of `render`: imports `words` (why a run ended
//! before round 1, in words).

pub(super) mod field_values;
pub mod fields;
pub(super) mod json_numbers;
pub mod run_fields;
pub mod summary_fields;

// What the files here name as `super::x` from the floors below.
use super::words::reasons;

//! The tables every machine format writes from, one each: a sample's
//! fields, the run's facts and the summary's figures, and how the JSON
//! writes a number. Floor 1 of `render`: imports nothing of `render`.

pub mod fields;
pub(super) mod json_numbers;
pub mod run_fields;
pub mod summary_fields;

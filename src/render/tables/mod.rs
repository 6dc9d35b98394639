pub mod fields;
pub(super) mod json_numbers;
pub mod run_fields;
pub mod summary_fields;

pub mod csv;
pub mod json;
pub mod jsonl;
pub mod openmetrics;
mod openmetrics_scope;
mod openmetrics_summary;

use super::output;
use super::tables::{fields, json_numbers, run_fields, summary_fields};

//! The formats a program reads: `--json`, `--jsonl`, `--csv`, and the
//! OpenMetrics exposition (`--openmetrics`, the body of `--push`). Floor 2
//! of `render`: imports the output contract and `tables`.

pub mod csv;
pub mod json;
pub mod jsonl;
pub mod openmetrics;
mod openmetrics_facts;
mod openmetrics_families;
mod openmetrics_scope;
mod openmetrics_summary;

// What the files here name as `super::x` from the floors below.
use super::output;
use super::tables::{fields, json_numbers, run_fields, summary_fields};

//! What a person reads on a terminal: the table (live rows, the layouts
//! and their paint), the statistics block and its why, `--compare`'s
//! words, the distribution picture. Floor 5 of `render`: imports the
//! output contract, `words` (the warnings, the number formatting) and
//! `tables`; `write_out` and `machine` are beside it, never imported.

pub mod compare;
pub mod distribution;
pub mod human;
pub mod layout;
pub mod paint;
pub mod rows;
pub mod summary;
pub mod why;
mod why_advice;

// What the files here name as `super::x` from the floors below.
use super::output;
use super::tables::fields;
use super::words::{format, reasons};

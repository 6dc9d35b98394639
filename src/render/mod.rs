//! Everything a person or a program reads: the live layouts, the statistics
//! block, and the machine formats. Reads `probe` and `stats` types only.

pub mod compare;
pub mod csv;
pub mod distribution;
pub mod fields;
pub mod format;
pub mod human;
pub mod json;
pub mod jsonl;
pub mod layout;
pub mod paint;
pub mod rows;
pub mod summary;
pub mod svg;
pub mod warnings;
pub mod write_out;

pub use human::Human;
pub use layout::{Layout, Style};
pub use warnings::Warnings;

//! `--svg`: the picture of a run and the file (or stdout) it is written
//! to. Floor 5 of `render`, the top: imports the output contract and
//! `terminal`'s number formatting.

pub mod svg;
pub mod svg_file;

// What the files here name as `super::x` from the floors below.
use super::output;

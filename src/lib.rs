//! tlsping as a library: the binary in `main.rs` only wires these together,
//! and the tests reach the same code.
//!
//! Dependencies run one way: `render` → `stats` → `probe`.

pub mod cli;
pub mod probe;
pub mod render;
pub mod run;
pub mod stats;

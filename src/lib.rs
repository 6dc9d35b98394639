//! tlsping as a library: the binary in `main.rs` only wires these together,
//! and the tests reach the same code.
//!
//! Dependencies run one way: `render` → `stats` → `probe`. `calibrate`
//! (the in-process server of `--calibrate`) depends on none of them.

// Lets the shared test fixtures (`tests/support/synthetic.rs`) name this
// crate the same way from unit tests as from integration tests.
#[cfg(test)]
extern crate self as tlsping;

pub mod calibrate;
pub mod cli;
pub mod exit;
pub mod files;
pub mod probe;
pub mod render;
pub mod run;
pub mod stats;
pub mod text;

//! What happened, in words: every warning (`warnings`, from
//! `stats::Warning`), why a run ended before round 1, why a variant could
//! not run, why a push did not arrive, with what to try next (`reasons`,
//! from `probe::EndReason` and `probe::PushError`), and the number and
//! text formatting every output shares (`format`). The one place our
//! sentences are made; each output calls here where it writes them.
//! Floor 1 of `render`: imports nothing of `render` but itself.

pub mod format;
pub mod reasons;
pub mod warnings;

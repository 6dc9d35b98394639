//! Everything a person or a program reads: the live table, the statistics
//! block, and the machine formats. Reads `probe` and `stats` types only.

pub mod format;
pub mod summary;
pub mod table;

pub use summary::statistics;
pub use table::WideTable;

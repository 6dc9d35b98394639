pub mod compare;
pub mod distribution;
pub mod format;
pub mod human;
pub mod layout;
pub mod paint;
pub mod rows;
pub mod summary;
pub mod warnings;
pub mod why;

use super::output;
use super::tables::fields;

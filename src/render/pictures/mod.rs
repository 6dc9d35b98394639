pub mod svg;
pub mod svg_file;

use super::output;

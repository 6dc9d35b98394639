//! `--svg FILE`: the picture of the run (drawn by `svg`), written to its
//! file once the rounds are over, beside whatever stdout shows.

use std::io;
use std::path::PathBuf;

use super::output::{Finished, Output};

pub struct SvgFile {
    path: PathBuf,
}

impl SvgFile {
    pub fn new(path: PathBuf) -> SvgFile {
        SvgFile { path }
    }
}

impl Output for SvgFile {
    /// Every probe is a bar of the picture.
    fn keeps_samples(&self) -> bool {
        true
    }

    fn what(&self) -> String {
        format!("the picture to {}", self.path.display())
    }

    /// Through a temporary file, as every file we write (`files::replace_file`).
    fn end(&mut self, run: &Finished) -> io::Result<()> {
        crate::files::replace_file(&self.path, |out| super::svg::write_svg(out, run))
    }
}

//! `--svg FILE`: the picture of the run (drawn by `svg`), written to its
//! file once the rounds are over, beside whatever stdout shows; `--svg -`
//! writes it on stdout in place of the table.

use std::io::{self, Write};

use super::output::{Finished, Output};
use crate::files::Destination;

/// Where the picture goes.
pub enum Picture {
    /// Through a temporary file in its held directory (`files::Destination`).
    File(Destination),
    /// `--svg -`: standard output.
    Stdout(Box<dyn Write>),
}

pub struct SvgFile {
    to: Picture,
}

impl SvgFile {
    pub fn new(to: Picture) -> SvgFile {
        SvgFile { to }
    }
}

impl Output for SvgFile {
    /// Every probe is a bar of the picture.
    fn keeps_samples(&self) -> bool {
        true
    }

    fn what(&self) -> String {
        match &self.to {
            Picture::File(file) => format!("the picture to {}", file.path().display()),
            Picture::Stdout(_) => "the output".into(),
        }
    }

    fn end(&mut self, run: &Finished) -> io::Result<()> {
        match &mut self.to {
            Picture::File(file) => file.replace(|out| super::svg::write_svg(out, run)),
            Picture::Stdout(out) => {
                super::svg::write_svg(out, run)?;
                out.flush()
            }
        }
    }
}

//! Writes what `tlsping --generate` prints, every kind of it, into a
//! directory (default `target/docs`), each under its usual file name
//! (`tlsping.1`, `tlsping.bash`, `_tlsping`, ...): for packaging. The text
//! is the binary's own (`tlsping::cli::docs`).
//!
//!     cargo run --example gen_docs -- [DIR]

use std::path::PathBuf;

use clap::ValueEnum;
use tlsping::cli::docs::{generate, Generate};

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/docs".into()),
    );
    std::fs::create_dir_all(&dir)?;
    for &kind in Generate::value_variants() {
        let path = dir.join(kind.file_name());
        std::fs::write(&path, generate(kind))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

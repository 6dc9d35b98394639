//! Writes the man page and the bash, zsh and fish completions, generated from
//! the clap definition, into a directory (default `target/docs`).
//!
//!     cargo run --example gen_docs -- [DIR]

use std::path::PathBuf;

use clap_complete::{generate_to, Shell};

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/docs".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let mut cmd = tlsping::cli::docs::command();
    let mut man = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut man)?;
    std::fs::write(dir.join("tlsping.1"), man)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path = generate_to(shell, &mut cmd, "tlsping", &dir)?;
        println!("wrote {}", path.display());
    }
    println!("wrote {}", dir.join("tlsping.1").display());
    Ok(())
}

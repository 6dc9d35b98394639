//! Everything generated from the clap definition: the command for man pages
//! and shell completions (see `examples/gen_docs.rs`).

use clap::CommandFactory;

/// The full clap command, as `--help`, the man page and completions see it.
pub fn command() -> clap::Command {
    super::Args::command()
}

/// Long names of every flag, for tests that check generated documents.
pub fn long_flags() -> Vec<String> {
    command()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

//! tlsping: parse the command line, run, and exit with the code the run earned.

use std::process::ExitCode;

use tlsping::exit::{self, Exit};
use tlsping::{cli, run};

/// The binary's one start-up hook: it looks at standard output before the
/// Rust runtime opens `/dev/null` on a closed one, which would hide it
/// (`exit::note_stdout_at_start`).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

extern "C" fn note_closed_stdout() {
    exit::note_stdout_at_start();
}

fn main() -> ExitCode {
    let exit = match exit::closed_stdout() {
        Some(closed) => closed,
        None => match cli::parse_from(std::env::args_os()) {
            Ok(cli::Invocation::Version) => Exit::Shown(run::version_text()),
            Ok(cli::Invocation::Run(opts)) => run::run(*opts),
            Err(exit) => exit,
        },
    };
    let code = exit.report();
    // A stdout a signal made the run give up on gets the rest of its grace.
    run::settle();
    ExitCode::from(code)
}

//! tlsping: parse the command line, run, and exit with the code the run earned.

use std::process::ExitCode;

use tlsping::exit::Exit;
use tlsping::{cli, run};

fn main() -> ExitCode {
    let exit = match cli::parse_from(std::env::args_os()) {
        Ok(cli::Invocation::Version) => Exit::Shown(run::version_text()),
        Ok(cli::Invocation::Run(opts)) => run::run(*opts),
        Err(exit) => exit,
    };
    exit.report();
    ExitCode::from(exit.exit_code())
}

//! tlsping: parse the command line, run, and exit with the code the run earned.

use std::process::ExitCode;

use tlsping::exit::{self, Exit};
use tlsping::{cli, run};

/// The binary's one start-up hook, which runs before the Rust runtime and
/// before libcurl's global initialisation (the curl crate's own hook, in
/// `.init_array`: a section with a priority, `.init_array.NNNNN`, runs
/// before every one without, and after the standard library's, `00099`).
/// It looks at standard output before the runtime opens `/dev/null` on a
/// closed one, which would hide it (`exit::note_stdout_at_start`), then
/// checks the file `SSLKEYLOGFILE` names before libcurl opens it
/// (`files::note_keylog_at_start`).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00200"]
static AT_START: extern "C" fn() = at_start;

extern "C" fn at_start() {
    exit::note_stdout_at_start();
    tlsping::files::note_keylog_at_start();
}

fn main() -> ExitCode {
    let refused = tlsping::files::keylog_refused().map(|message| Exit::Usage {
        message,
        help_hint: false,
    });
    let exit = match exit::closed_stdout().or(refused) {
        Some(ended) => ended,
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

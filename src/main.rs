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

/// The hook that checks `SSLKEYLOGFILE` before libcurl opens it: libcurl's
/// global initialisation runs in the curl crate's own start-up hook (in
/// `.init_array`), and a section with a priority (`.init_array.NNNNN`) runs
/// before every one without, after the standard library's (`00099`).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00200"]
static CHECK_KEYLOG: extern "C" fn() = check_keylog;

extern "C" fn check_keylog() {
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

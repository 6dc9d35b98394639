//! tlsping: parse the command line, run, exit with the code the run earned.

use tlsping::{cli, run};

fn main() {
    let code = match cli::parse_from(std::env::args_os()) {
        Ok(cli::Invocation::Version) => {
            print!("{}", run::version_text());
            run::EXIT_OK
        }
        Ok(cli::Invocation::Run(opts)) => run::run(*opts),
        Err((code, text)) => {
            if code == 0 {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            code
        }
    };
    std::process::exit(code);
}

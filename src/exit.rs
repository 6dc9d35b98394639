//! How a run ends, and the one exit code that says so: 0, 1, 2 and 3 as the
//! Go tool's README gives them, and 128 + a signal's number as shells
//! report a process a signal ended. What is said about an ending is worded
//! here too and written in one place (`Exit::report`). Nothing of ours is
//! imported but `text` (a leaf): every message is held as it was made, the
//! user's or a server's text in it raw, and escaped once, here, on its way
//! to stderr (`text::printable`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every probe that counts got a response.
pub const OK: u8 = 0;
/// Some of them did not.
pub const SOME_FAILED: u8 = 1;
/// None did, or the run could not measure at all, or its output failed
/// (a `--push` that did not arrive included).
pub const FAILED: u8 = 2;
/// The command line cannot be used.
pub const USAGE: u8 = 3;

/// Every exit code the run can earn and what it means: the man page's EXIT
/// STATUS section is written from this table (`cli::docs`), and the tests
/// hold every ending's code to it.
pub const CODES: [(u8, &str); 4] = [
    (
        OK,
        "every probe that counts got an HTTP response (also --help, --version and --generate)",
    ),
    (SOME_FAILED, "some probes that count got no HTTP response"),
    (
        FAILED,
        "no probe that counts got a response, the run could not measure at all, \
         or an output could not be written, each told on a line of its own (a --push that \
         did not arrive included, and a stdout closed from the start; a reader that \
         closes stdout early is no failure: the run is judged on what ran)",
    ),
    (
        USAGE,
        "the command line, or a file it names, cannot be used; nothing was dialed",
    ),
];

/// What an exit of 128 + N means, beside `CODES`.
pub const SIGNALLED: &str = "signal N ended the run: 143 for SIGTERM and 129 for SIGHUP, \
     after what was measured is written; 130 for Ctrl+C before round 1 (during the \
     preflight: nothing was measured), one that cut short a wait of the run's ending (a push \
     under way, a stdout nobody reads), and a second Ctrl+C, which leaves at once (a first \
     one during the rounds ends them at the next probe, judged as above)";

/// The code of a process that `signal` ended (or a run it stopped).
pub fn signal_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(FAILED)
}

/// What the probes that count came to (the statistics' verdict, as far as
/// the exit code tells it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    AllOk,
    SomeFailed,
    /// None got a response, or none counted.
    NoneOk,
}

/// An output that could not be written: what it writes, and the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub what: String,
    pub error: String,
}

impl Failure {
    pub fn new(what: impl Into<String>, error: &dyn std::fmt::Display) -> Failure {
        Failure {
            what: what.into(),
            error: error.to_string(),
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Text that was asked for (`--help`, `--version`), for stdout.
    Shown(String),
    /// The command line, or a file it names, cannot be used. `help_hint`:
    /// the mistake is in the flags, so point at `--help`.
    Usage { message: String, help_hint: bool },
    /// Nothing was measured: the run ended before round 1, its outputs
    /// having said so where they could. `message` is for stderr, when no
    /// warning has said why already.
    BeforeRounds(Option<String>),
    /// Outputs could not be written: each, in the order they were
    /// written, is told on a line of its own.
    OutputFailed(Vec<Failure>),
    /// The rounds ran (all of them, or until a safety valve or Ctrl+C
    /// stopped them).
    Rounds(Judgement),
    /// `--push` did not arrive (`why`): an ending of 0 or 1 (`then`)
    /// becomes 2; any other keeps its code. Its line comes where the push
    /// came among the outputs: after what `then` says, but for the last
    /// `told_after` lines (outputs ended after the push).
    PushFailed {
        why: String,
        then: Box<Exit>,
        told_after: usize,
    },
    /// SIGTERM or SIGHUP stopped the run, which still printed what it had;
    /// `then` is how it ended otherwise.
    Signal { number: i32, then: Box<Exit> },
}

impl Exit {
    pub fn exit_code(&self) -> u8 {
        match self {
            Exit::Shown(_) | Exit::Rounds(Judgement::AllOk) => OK,
            Exit::Rounds(Judgement::SomeFailed) => SOME_FAILED,
            Exit::Rounds(Judgement::NoneOk) | Exit::BeforeRounds(_) | Exit::OutputFailed(_) => {
                FAILED
            }
            Exit::Usage { .. } => USAGE,
            Exit::Signal { number, .. } => signal_code(*number),
            Exit::PushFailed { then, .. } => match then.exit_code() {
                OK | SOME_FAILED => FAILED,
                code => code,
            },
        }
    }

    /// What goes to standard output.
    pub fn stdout_text(&self) -> Option<&str> {
        match self {
            Exit::Shown(text) => Some(text),
            _ => None,
        }
    }

    /// What goes to standard error, whole lines; every message escaped
    /// (`text::printable`), so a control or bidi character in a host name,
    /// a flag's value or a server's text is shown, never obeyed.
    pub fn stderr_text(&self) -> Option<String> {
        use crate::text::printable;
        match self {
            Exit::Shown(_) | Exit::Rounds(_) | Exit::BeforeRounds(None) => None,
            Exit::Usage { message, help_hint } => Some(format!(
                "tlsping: {}\n{}",
                printable(message),
                if *help_hint {
                    "Try 'tlsping --help' for more information.\n"
                } else {
                    ""
                }
            )),
            Exit::BeforeRounds(Some(message)) => Some(format!("tlsping: {}\n", printable(message))),
            Exit::OutputFailed(failures) => Some(
                failures
                    .iter()
                    .map(|f| {
                        format!(
                            "tlsping: could not write {}: {}\n",
                            printable(&f.what),
                            printable(&f.error)
                        )
                    })
                    .collect(),
            ),
            Exit::Signal { then, .. } => then.stderr_text(),
            Exit::PushFailed {
                why,
                then,
                told_after,
            } => {
                let before = then.stderr_text().unwrap_or_default();
                let lines: Vec<&str> = before.split_inclusive('\n').collect();
                let (first, last) = lines.split_at(lines.len().saturating_sub(*told_after));
                Some(format!(
                    "{}tlsping: warning: --push failed: {}\n{}",
                    first.concat(),
                    printable(why),
                    last.concat()
                ))
            }
        }
    }

    /// Writes what is said about the ending, each text to its stream, and
    /// returns the code to exit with: `FAILED` when the text asked for
    /// (`--help`, `--version`, `--generate`) could not be written, as for
    /// any output. A reader that closed its end has had enough: no error.
    pub fn report(&self) -> u8 {
        let mut code = self.exit_code();
        let mut said = self.stderr_text().unwrap_or_default();
        if let Some(text) = self.stdout_text() {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    said = Exit::OutputFailed(vec![Failure::new("the output", &e)])
                        .stderr_text()
                        .unwrap_or_default();
                    code = FAILED;
                }
                _ => {}
            }
        }
        // Nothing is left to tell of a stderr that cannot be written.
        let _ = std::io::stderr().lock().write_all(said.as_bytes());
        code
    }
}

/// Standard output was closed when the process started (`>&-`).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Notes whether standard output is closed. Called before the Rust
/// runtime starts (main.rs's start-up hook, in `.init_array`): the runtime
/// opens `/dev/null` on a closed stdout, and an output sent there would be
/// lost without a word.
pub fn note_stdout_at_start() {
    // SAFETY: F_GETFD only reads descriptor 1's flags; it fails with EBADF
    // when nothing is open there.
    let closed = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1;
    STDOUT_CLOSED.store(closed, Ordering::SeqCst);
}

/// The ending of a process whose standard output was closed when it
/// started: whatever it would write would be lost, so it writes nothing
/// and dials nothing (`FAILED`).
pub fn closed_stdout() -> Option<Exit> {
    STDOUT_CLOSED.load(Ordering::SeqCst).then(|| {
        Exit::OutputFailed(vec![Failure {
            what: "the output".into(),
            error: "standard output is closed".into(),
        }])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_has_its_code() {
        let usage = Exit::Usage {
            message: "x".into(),
            help_hint: true,
        };
        let cases = [
            (Exit::Shown("help".into()), 0),
            (Exit::Rounds(Judgement::AllOk), 0),
            (Exit::Rounds(Judgement::SomeFailed), 1),
            (Exit::Rounds(Judgement::NoneOk), 2),
            (Exit::BeforeRounds(None), 2),
            (
                Exit::OutputFailed(vec![Failure {
                    what: "the output".into(),
                    error: "No space left on device".into(),
                }]),
                2,
            ),
            (usage.clone(), 3),
            (
                Exit::Signal {
                    number: 15,
                    then: Box::new(Exit::Rounds(Judgement::AllOk)),
                },
                143,
            ),
            (
                Exit::Signal {
                    number: 1,
                    then: Box::new(usage),
                },
                129,
            ),
        ];
        for (exit, code) in cases {
            assert_eq!(exit.exit_code(), code, "{exit:?}");
            let described = CODES.iter().any(|&(c, _)| c == code) || code > 128;
            assert!(described, "exit code {code} is not in CODES");
        }
        assert_eq!(signal_code(2), 130);
        let pushed = |then: Exit| Exit::PushFailed {
            why: "refused".into(),
            then: Box::new(then),
            told_after: 0,
        };
        assert_eq!(pushed(Exit::Rounds(Judgement::AllOk)).exit_code(), 2);
        assert_eq!(pushed(Exit::Rounds(Judgement::SomeFailed)).exit_code(), 2);
        assert_eq!(pushed(Exit::Rounds(Judgement::NoneOk)).exit_code(), 2);
        assert_eq!(pushed(Exit::BeforeRounds(None)).exit_code(), 2);
        // The preflight failed before the push went: its line comes first.
        assert_eq!(
            pushed(Exit::BeforeRounds(Some("preflight failed".into())))
                .stderr_text()
                .as_deref(),
            Some("tlsping: preflight failed\ntlsping: warning: --push failed: refused\n")
        );
    }

    #[test]
    fn what_is_said_goes_to_its_stream() {
        let help = Exit::Shown("Usage: tlsping\n".into());
        assert_eq!(help.stdout_text(), Some("Usage: tlsping\n"));
        assert_eq!(help.stderr_text(), None);
        let usage = Exit::Usage {
            message: "a target is required".into(),
            help_hint: true,
        };
        assert_eq!(
            usage.stderr_text().as_deref(),
            Some("tlsping: a target is required\nTry 'tlsping --help' for more information.\n")
        );
        let trust = Exit::Usage {
            message: "--cacert x: no such file".into(),
            help_hint: false,
        };
        assert_eq!(
            trust.stderr_text().as_deref(),
            Some("tlsping: --cacert x: no such file\n")
        );
        let failed = Exit::OutputFailed(vec![Failure {
            what: "the picture to run.svg".into(),
            error: "Permission denied".into(),
        }]);
        let stopped = Exit::Signal {
            number: 15,
            then: Box::new(failed),
        };
        assert_eq!(
            stopped.stderr_text().as_deref(),
            Some("tlsping: could not write the picture to run.svg: Permission denied\n")
        );
        let both = Exit::OutputFailed(vec![
            Failure::new("the picture to run.svg", &"No such file or directory"),
            Failure::new("the figures to run.prom", &"No such file or directory"),
        ]);
        assert_eq!(both.exit_code(), FAILED);
        assert_eq!(
            both.stderr_text().as_deref(),
            Some(
                "tlsping: could not write the picture to run.svg: No such file or directory\n\
                 tlsping: could not write the figures to run.prom: No such file or directory\n"
            ),
            "each failure on a line of its own"
        );
        assert_eq!(Exit::Rounds(Judgement::SomeFailed).stderr_text(), None);
        assert_eq!(Exit::BeforeRounds(None).stderr_text(), None);
    }

    #[test]
    fn the_lines_come_in_the_order_the_outputs_were_ended() {
        // The picture, then the push, then the figures (written last, with
        // the exit code): before, the push's line came first.
        let failed = Exit::OutputFailed(vec![
            Failure::new("the picture to p.svg", &"Permission denied"),
            Failure::new("the figures to m.prom", &"No space left on device"),
        ]);
        let pushed = Exit::PushFailed {
            why: "refused".into(),
            then: Box::new(failed),
            told_after: 1,
        };
        let stopped = Exit::Signal {
            number: 15,
            then: Box::new(pushed),
        };
        assert_eq!(
            stopped.stderr_text().as_deref(),
            Some(
                "tlsping: could not write the picture to p.svg: Permission denied\n\
                 tlsping: warning: --push failed: refused\n\
                 tlsping: could not write the figures to m.prom: No space left on device\n"
            )
        );
        // Nothing before the push: its line is the first.
        let only_after = Exit::PushFailed {
            why: "refused".into(),
            then: Box::new(Exit::OutputFailed(vec![Failure::new(
                "the figures to m.prom",
                &"gone",
            )])),
            told_after: 1,
        };
        assert_eq!(
            only_after.stderr_text().as_deref(),
            Some(
                "tlsping: warning: --push failed: refused\n\
                 tlsping: could not write the figures to m.prom: gone\n"
            )
        );
    }
}

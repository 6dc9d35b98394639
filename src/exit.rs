//! How a run ends, and the one exit code that says so: 0, 1, 2 and 3 as the
//! Go tool's README gives them, and 128 + a signal's number as shells
//! report a process a signal ended. `Exit` holds what happened, flat: what
//! the run came to, what could not be done on the way out (the outputs
//! and the push, in the order they were tried), and the signal that
//! decides; `Exit::exit_code` alone decides which of them the code tells.
//! What is said about an ending is written in one place (`Exit::report`),
//! worded here and, for why a run ended before round 1 or a push did not
//! arrive, by `render::reasons` from the facts: so this file sits above
//! `render` and below `cli` and `run`, which end with it. Every message is
//! held as it was made, the user's or a server's text in it raw, and
//! escaped once, here, on its way to stderr (`text::printable`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::probe::{EndReason, PushAbandoned, PushError};
use crate::render::reasons;

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

/// What a run came to, before what happened on its way out.
#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    /// Text that was asked for (`--help`, `--version`), for stdout.
    Shown(String),
    /// The command line, or a file it names, cannot be used. `help_hint`:
    /// the mistake is in the flags, so point at `--help`.
    Usage { message: String, help_hint: bool },
    /// Nothing was measured: the run ended before round 1, its outputs
    /// having said so where they could. `Some`: why, for stderr (`None`
    /// when a warning has said it already).
    BeforeRounds(Option<Box<EndReason>>),
    /// The rounds ran (all of them, or until a safety valve or a signal
    /// stopped them).
    Rounds(Judgement),
}

/// What could not be done on the way out.
#[derive(Clone, Debug, PartialEq)]
pub enum Lost {
    /// An output that could not be written.
    Output(Failure),
    /// `--push` did not arrive; `abandoned` says how, when it was.
    Push {
        error: PushError,
        abandoned: PushAbandoned,
    },
}

/// How a run ended: what it came to, what was lost on the way out, in the
/// order it was tried (stdout, the picture, the push, the figures that
/// record the exit code), and the signal whose code it exits with.
#[derive(Clone, Debug, PartialEq)]
pub struct Exit {
    pub ended: Ended,
    pub lost: Vec<Lost>,
    /// A SIGTERM or SIGHUP whenever it came; any signal that came before
    /// round 1 or cut a wait of the ending short.
    pub signal: Option<i32>,
}

impl Exit {
    /// An ending with nothing lost and no signal.
    pub fn of(ended: Ended) -> Exit {
        Exit {
            ended,
            lost: Vec::new(),
            signal: None,
        }
    }

    /// Text that was asked for, for stdout.
    pub fn shown(text: String) -> Exit {
        Exit::of(Ended::Shown(text))
    }

    /// A command line (or a file it names) that cannot be used.
    pub fn usage(message: String, help_hint: bool) -> Exit {
        Exit::of(Ended::Usage { message, help_hint })
    }

    /// The one place the exit code is decided, first match wins: a signal
    /// that decides (128 + its number); a command line that cannot be used
    /// (3); an output that could not be written or a push that did not
    /// arrive (2, whatever the verdict); then what the run came to (the
    /// verdict's 0, 1 or 2; 2 for a run that measured nothing).
    pub fn exit_code(&self) -> u8 {
        if let Some(signal) = self.signal {
            return signal_code(signal);
        }
        match &self.ended {
            Ended::Usage { .. } => USAGE,
            _ if !self.lost.is_empty() => FAILED,
            Ended::Shown(_) | Ended::Rounds(Judgement::AllOk) => OK,
            Ended::Rounds(Judgement::SomeFailed) => SOME_FAILED,
            Ended::Rounds(Judgement::NoneOk) | Ended::BeforeRounds(_) => FAILED,
        }
    }

    /// What goes to standard output.
    pub fn stdout_text(&self) -> Option<&str> {
        match &self.ended {
            Ended::Shown(text) => Some(text),
            _ => None,
        }
    }

    /// What goes to standard error, whole lines, in the order it happened:
    /// why the run could not be used or measure, then each thing lost on
    /// the way out. Every message escaped (`text::printable`), so a control
    /// or bidi character in a host name, a flag's value or a server's text
    /// is shown, never obeyed.
    pub fn stderr_text(&self) -> Option<String> {
        use crate::text::printable;
        let mut said = match &self.ended {
            Ended::Usage { message, help_hint } => format!(
                "tlsping: {}\n{}",
                printable(message),
                if *help_hint {
                    "Try 'tlsping --help' for more information.\n"
                } else {
                    ""
                }
            ),
            Ended::BeforeRounds(Some(why)) => {
                format!("tlsping: {}\n", printable(&reasons::last_words(why)))
            }
            Ended::Shown(_) | Ended::BeforeRounds(None) | Ended::Rounds(_) => String::new(),
        };
        for lost in &self.lost {
            said += &match lost {
                Lost::Output(f) => format!(
                    "tlsping: could not write {}: {}\n",
                    printable(&f.what),
                    printable(&f.error)
                ),
                Lost::Push { error, abandoned } => format!(
                    "tlsping: warning: --push failed: {}\n",
                    printable(&reasons::push_failed(error, *abandoned))
                ),
            };
        }
        (!said.is_empty()).then_some(said)
    }

    /// Writes what is said about the ending, each text to its stream, and
    /// returns the code to exit with: `FAILED` when the text asked for
    /// (`--help`, `--version`, `--generate`) could not be written, as for
    /// any output. A reader that closed its end has had enough: no error.
    pub fn report(&self) -> u8 {
        let mut exit = std::borrow::Cow::Borrowed(self);
        if let Some(text) = self.stdout_text() {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    let failed = Lost::Output(Failure::new("the output", &e));
                    exit.to_mut().lost.push(failed);
                }
                _ => {}
            }
        }
        // Nothing is left to tell of a stderr that cannot be written.
        let said = exit.stderr_text().unwrap_or_default();
        let _ = std::io::stderr().lock().write_all(said.as_bytes());
        exit.exit_code()
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
    STDOUT_CLOSED.load(Ordering::SeqCst).then(|| Exit {
        lost: vec![Lost::Output(Failure::new(
            "the output",
            &"standard output is closed",
        ))],
        ..Exit::of(Ended::BeforeRounds(None))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(what: &str, error: &str) -> Lost {
        Lost::Output(Failure::new(what, &error))
    }

    fn push_refused() -> Lost {
        Lost::Push {
            error: PushError::Answered {
                status: 503,
                quoted: Some("refused".into()),
            },
            abandoned: PushAbandoned::BySignal,
        }
    }

    #[test]
    fn the_exit_code_is_decided_by_one_precedence() {
        let usage = Ended::Usage {
            message: "x".into(),
            help_hint: true,
        };
        let all_ok = Ended::Rounds(Judgement::AllOk);
        let some = Ended::Rounds(Judgement::SomeFailed);
        let none = Ended::Rounds(Judgement::NoneOk);
        let before = Ended::BeforeRounds(None);
        let output = || vec![failed("the picture to p.svg", "gone")];
        let push = || vec![push_refused()];
        let (term, hup, int) = (Some(libc::SIGTERM), Some(libc::SIGHUP), Some(libc::SIGINT));
        // (what the run came to, what was lost, the signal that decides) -> code
        let table: [(&Ended, Vec<Lost>, Option<i32>, u8); 19] = [
            // A signal that decides wins over everything.
            (&all_ok, output(), term, 143),
            (&usage, vec![], hup, 129),
            (&before, push(), int, 130),
            (&some, vec![], term, 143),
            // Then a command line that cannot be used.
            (&usage, vec![], None, USAGE),
            (&usage, output(), None, USAGE),
            // Then an output that could not be written...
            (&all_ok, output(), None, FAILED),
            (&some, output(), None, FAILED),
            (&none, output(), None, FAILED),
            // ...or a push that did not arrive: 0 and 1 become 2.
            (&all_ok, push(), None, FAILED),
            (&some, push(), None, FAILED),
            (&before, push(), None, FAILED),
            (&all_ok, [output(), push()].concat(), None, FAILED),
            // Then the verdict.
            (&all_ok, vec![], None, OK),
            (&some, vec![], None, SOME_FAILED),
            (&none, vec![], None, FAILED),
            (&before, vec![], None, FAILED),
            (
                &Ended::BeforeRounds(Some(Box::new(EndReason::Interrupted))),
                vec![],
                None,
                FAILED,
            ),
            (&Ended::Shown("help".into()), vec![], None, OK),
        ];
        for (ended, lost, signal, code) in table {
            let exit = Exit {
                ended: ended.clone(),
                lost,
                signal,
            };
            assert_eq!(exit.exit_code(), code, "{exit:?}");
            let described = CODES.iter().any(|&(c, _)| c == code) || code > 128;
            assert!(described, "exit code {code} is not in CODES");
        }
        assert_eq!(signal_code(libc::SIGINT), 130);
    }

    #[test]
    fn what_is_said_goes_to_its_stream() {
        let help = Exit::shown("Usage: tlsping\n".into());
        assert_eq!(help.stdout_text(), Some("Usage: tlsping\n"));
        assert_eq!(help.stderr_text(), None);
        assert_eq!(
            Exit::usage("a target is required".into(), true)
                .stderr_text()
                .as_deref(),
            Some("tlsping: a target is required\nTry 'tlsping --help' for more information.\n")
        );
        assert_eq!(
            Exit::usage("--cacert x: no such file".into(), false)
                .stderr_text()
                .as_deref(),
            Some("tlsping: --cacert x: no such file\n")
        );
        let stopped = Exit {
            lost: vec![failed("the picture to run.svg", "Permission denied")],
            signal: Some(libc::SIGTERM),
            ..Exit::of(Ended::Rounds(Judgement::AllOk))
        };
        assert_eq!(
            stopped.stderr_text().as_deref(),
            Some("tlsping: could not write the picture to run.svg: Permission denied\n")
        );
        let both = Exit {
            lost: vec![
                failed("the picture to run.svg", "No such file or directory"),
                failed("the figures to run.prom", "No such file or directory"),
            ],
            ..Exit::of(Ended::Rounds(Judgement::AllOk))
        };
        assert_eq!(
            both.stderr_text().as_deref(),
            Some(
                "tlsping: could not write the picture to run.svg: No such file or directory\n\
                 tlsping: could not write the figures to run.prom: No such file or directory\n"
            ),
            "each failure on a line of its own"
        );
        assert_eq!(
            Exit::of(Ended::Rounds(Judgement::SomeFailed)).stderr_text(),
            None
        );
        assert_eq!(Exit::of(Ended::BeforeRounds(None)).stderr_text(), None);
    }

    #[test]
    fn the_lines_come_in_the_order_things_were_lost() {
        // The picture, then the push, then the figures (written last, with
        // the exit code).
        let exit = Exit {
            lost: vec![
                failed("the picture to p.svg", "Permission denied"),
                push_refused(),
                failed("the figures to m.prom", "No space left on device"),
            ],
            signal: Some(libc::SIGTERM),
            ..Exit::of(Ended::Rounds(Judgement::AllOk))
        };
        assert_eq!(
            exit.stderr_text().as_deref(),
            Some(
                "tlsping: could not write the picture to p.svg: Permission denied\n\
                 tlsping: warning: --push failed: the Pushgateway answered 503: refused\n\
                 tlsping: could not write the figures to m.prom: No space left on device\n"
            )
        );
        // Why the run measured nothing comes first, whatever followed it.
        let preflight = Exit {
            lost: vec![
                failed("the picture to p.svg", "Permission denied"),
                push_refused(),
            ],
            ..Exit::of(Ended::BeforeRounds(Some(Box::new(EndReason::Interrupted))))
        };
        assert_eq!(
            preflight.stderr_text().as_deref(),
            Some(
                "tlsping: interrupted before round 1: nothing was measured\n\
                 tlsping: could not write the picture to p.svg: Permission denied\n\
                 tlsping: warning: --push failed: the Pushgateway answered 503: refused\n"
            )
        );
    }
}

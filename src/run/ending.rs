//! How a run ends, once. The outputs are told everything in one way
//! (`Written::tell_one`: in order, one that cannot be written is told no
//! more and its failure kept, a reader that closed stdout being none),
//! every output is ended and the push goes (`end_all`), and one function
//! gathers what decides the exit code into an `Exit` (`exit_of`), whose
//! `exit_code` says which of it wins. Standard output comes first, but a
//! signal gives up on a stdout nobody reads (`sink`), so it cannot cost
//! the files or the push; the output that records the exit code
//! (`--openmetrics FILE`) comes last, after the push, and records the code
//! the process exits with.

use std::io;

use crate::cli::Options;
use crate::exit::{Ended, Exit, Failure, Lost};
use crate::probe::{self, PushAbandoned};
use crate::render::{self, Finished, Output};

use super::{signals, sink};

/// The run's outputs and what became of them.
pub(super) struct Written {
    pub outputs: Vec<Box<dyn Output>>,
    /// The outputs that could not be written: told no more.
    dead: Vec<bool>,
    /// What could not be done, in the order it was tried: the outputs that
    /// failed, the push.
    pub lost: Vec<Lost>,
    /// Standard output's reader closed it (`| head`): not an error, but
    /// it is told no more.
    pub stdout_closed: bool,
    /// A signal cut one of the ending's waits short (stdout given up, the
    /// push abandoned): the run ends with that signal's code.
    pub cut_by_signal: bool,
}

impl Written {
    pub fn new(outputs: Vec<Box<dyn Output>>) -> Written {
        Written {
            dead: vec![false; outputs.len()],
            outputs,
            lost: Vec::new(),
            stdout_closed: false,
            cut_by_signal: false,
        }
    }

    /// Tells output `i` with `tell`, unless it can no longer be written.
    /// One that cannot be written now is told no more: its failure is kept
    /// (standard output's reader closing it is none; only stdout is first,
    /// `render::open`), and its error returned.
    pub fn tell_one(
        &mut self,
        i: usize,
        tell: impl FnOnce(&mut dyn Output) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.dead[i] {
            return Ok(());
        }
        let result = tell(self.outputs[i].as_mut());
        if let Err(e) = &result {
            self.dead[i] = true;
            if i == 0 && e.kind() == io::ErrorKind::BrokenPipe {
                self.stdout_closed = true;
            } else {
                let what = self.outputs[i].what();
                self.lost.push(Lost::Output(Failure::new(what, e)));
            }
        }
        result
    }

    /// Tells every output that can still be written, in order
    /// (`tell_one`). The first that cannot be is the error returned (the
    /// rounds stop), but the others are still told: a closed stdout (`|
    /// head`) must not cost a file output the sample.
    pub fn tell(
        &mut self,
        mut tell: impl FnMut(&mut dyn Output) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut first = None;
        for i in 0..self.outputs.len() {
            if let Err(e) = self.tell_one(i, &mut tell) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Whether an output failed, its reader closing stdout aside.
    pub fn failed(&self) -> bool {
        self.lost.iter().any(|l| matches!(l, Lost::Output(_)))
    }
}

/// The one place what decides the exit code is gathered: what the run came
/// to (`ended`), what was lost on the way out, and the signal that decides
/// (a SIGTERM or SIGHUP whenever it came; any signal that cut a wait short
/// or came before round 1, `interrupted`). `Exit::exit_code` says which
/// wins.
pub(super) fn exit_of(ended: &Ended, written: &Written, interrupted: bool) -> Exit {
    Exit {
        ended: ended.clone(),
        lost: written.lost.clone(),
        signal: signals::came().deciding(interrupted || written.cut_by_signal),
    }
}

/// An ending decided before the outputs were opened (a usage error, an
/// output that could not start): with the code of a SIGTERM or SIGHUP
/// that came meanwhile.
pub(super) fn early(ended: Ended) -> Exit {
    exit_of(&ended, &Written::new(Vec::new()), false)
}

/// How each output is told the run ended: `Output::end` after rounds,
/// `Output::ended_before_rounds` before any.
pub(super) type Tell = fn(&mut dyn Output, &Finished) -> io::Result<()>;

/// Ends every output that can still be written with `tell`, and pushes:
/// standard output and the files first, then the push, then the outputs
/// that record the exit code, with the code the process exits with.
/// Returns that exit.
pub(super) fn end_all(
    opts: &Options,
    written: &mut Written,
    run: &mut Finished,
    tell: Tell,
    (ended, interrupted): (Ended, bool),
) -> Exit {
    let last: Vec<bool> = written
        .outputs
        .iter()
        .map(|o| o.records_exit_code())
        .collect();
    for (i, _) in last.iter().enumerate().filter(|(_, &last)| !last) {
        run.exit_code = exit_of(&ended, written, interrupted).exit_code();
        let _ = written.tell_one(i, |o| tell(o, run));
    }
    written.cut_by_signal |= sink::given_up();
    run.exit_code = exit_of(&ended, written, interrupted).exit_code();
    push(opts, run, written);
    run.exit_code = exit_of(&ended, written, interrupted).exit_code();
    for (i, _) in last.iter().enumerate().filter(|(_, &last)| last) {
        let _ = written.tell_one(i, |o| tell(o, run));
    }
    // A file that would have recorded the code and was not written is lost
    // too: the code is decided again, with it.
    exit_of(&ended, written, interrupted)
}

/// `--push`, after stdout and the picture: the run's exposition goes to the
/// Pushgateway, grouped by the run's labels. One that does not arrive is
/// lost; a signal that comes while it is under way (or the end of the
/// grace of one that came before) abandons it.
fn push(opts: &Options, run: &Finished, written: &mut Written) {
    let Some(to) = &opts.push else {
        return;
    };
    let key = render::openmetrics::run_labels(run.info, &opts.output.labels);
    let text = render::openmetrics::exposition(run, &key);
    let before = signals::came();
    let stop = Box::new(move || signals::came().cuts_short(before));
    if let Err(error) = probe::push(to, &key, &text, stop) {
        let now = signals::came();
        written.cut_by_signal |= now.cuts_short(before);
        let abandoned = if now.since(before) {
            PushAbandoned::BySignal
        } else {
            PushAbandoned::AtDeadline {
                at: signals::DEADLINE_AFTER,
                grace: signals::GRACE,
            }
        };
        written.lost.push(Lost::Push { error, abandoned });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Judgement;

    /// An output that fails as it is told to, and says what it writes.
    struct Fails {
        name: &'static str,
        with: Option<io::ErrorKind>,
        last: bool,
    }

    impl Output for Fails {
        fn what(&self) -> String {
            self.name.into()
        }
        fn records_exit_code(&self) -> bool {
            self.last
        }
        fn end(&mut self, _: &Finished) -> io::Result<()> {
            self.with.map_or(Ok(()), |kind| Err(io::Error::from(kind)))
        }
    }

    fn fails(name: &'static str, with: Option<io::ErrorKind>) -> Box<dyn Output> {
        Box::new(Fails {
            name,
            with,
            last: false,
        })
    }

    #[test]
    fn only_standard_output_can_be_closed_by_its_reader() {
        let pipe = Some(io::ErrorKind::BrokenPipe);
        let mut written = Written::new(vec![fails("stdout", pipe), fails("file", pipe)]);
        assert!(written.tell(|o| o.end(&synthetic_end())).is_err());
        assert!(written.stdout_closed);
        assert_eq!(
            written.lost,
            [Lost::Output(Failure::new(
                "file",
                &io::Error::from(io::ErrorKind::BrokenPipe)
            ))],
            "a file's EPIPE is a failure"
        );
        assert!(written.failed());
        // Told no more.
        let mut told = 0;
        written
            .tell(|_| {
                told += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(told, 0);
    }

    fn synthetic_end() -> Finished<'static> {
        use std::sync::OnceLock;
        static INFO: OnceLock<probe::RunInfo> = OnceLock::new();
        static SUMMARY: OnceLock<crate::stats::Summary> = OnceLock::new();
        let info = INFO.get_or_init(crate::stats::synthetic::run_info);
        let summary = SUMMARY.get_or_init(|| {
            crate::stats::summarize(&crate::stats::NO_RECORDS, std::time::Duration::ZERO)
        });
        Finished {
            info,
            samples: &[],
            summary,
            comparison: None,
            warnings: &[],
            history: &crate::stats::NO_RECORDS,
            exit_code: 0,
            ending: probe::Ending::complete(info.settings.count),
        }
    }

    #[test]
    fn every_output_is_ended_the_one_that_records_the_code_last() {
        // No signal comes in a unit test and no push is asked: the
        // verdict and the outputs decide.
        let parsed = crate::cli::parse_from(["tlsping", "https://example.test/"]);
        let Ok(crate::cli::Invocation::Run(opts)) = parsed else {
            panic!("a plain command line is refused");
        };
        let full = Some(io::ErrorKind::Other);
        let mut written = Written::new(vec![
            fails("the output", None),
            Box::new(Fails {
                name: "the figures to m.prom",
                with: full,
                last: true,
            }),
            fails("the picture to p.svg", full),
        ]);
        let mut run = synthetic_end();
        let verdict = (Ended::Rounds(Judgement::AllOk), false);
        let exit = end_all(&opts, &mut written, &mut run, |o, r| o.end(r), verdict);
        assert_eq!(exit.exit_code(), 2);
        let lost: Vec<&str> = exit
            .lost
            .iter()
            .map(|l| match l {
                Lost::Output(f) => f.what.as_str(),
                Lost::Push { .. } => "push",
            })
            .collect();
        assert_eq!(lost, ["the picture to p.svg", "the figures to m.prom"]);
        assert_eq!(run.exit_code, 2, "the last output got the code exited with");
    }
}

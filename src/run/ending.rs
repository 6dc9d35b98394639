//! How a run ends, once: every output is ended (each failure kept and
//! told), the push goes, and one function (`exit_of`) decides the exit code
//! from the verdict, the failures, the push and the signals. Standard
//! output comes first, but a signal gives up on a stdout nobody reads
//! (`sink`), so it cannot cost the files or the push; the output that
//! records the exit code (`--openmetrics FILE`) comes last, after the push,
//! and records the code the process exits with.

use std::io;

use crate::cli::Options;
use crate::exit::{Exit, Failure};
use crate::probe;
use crate::render::warnings::PushAbandoned;
use crate::render::{self, Finished, Output};

use super::{signals, sink};

/// What became of the outputs and the push, for the exit code.
#[derive(Default)]
pub(super) struct Outcome {
    /// Every output that could not be written, in order.
    pub failures: Vec<Failure>,
    /// Standard output's reader closed it: not an error.
    pub stdout_closed: bool,
    /// Why `--push` did not arrive.
    pub push_failed: Option<String>,
    /// How many of `failures` came after the push (the outputs that
    /// record the exit code): their lines follow the push's.
    pub failed_after_push: usize,
    /// A signal cut one of the ending's waits short (stdout given up, the
    /// push abandoned): the run ends with that signal's code.
    pub cut_by_signal: bool,
}

impl Outcome {
    /// Keeps what `result` says of `output` (index `i`; 0 is stdout).
    pub fn note(&mut self, i: usize, output: &dyn Output, result: io::Result<()>) {
        match result {
            Ok(()) => {}
            Err(e) if i == 0 && e.kind() == io::ErrorKind::BrokenPipe => self.stdout_closed = true,
            Err(e) => self.failures.push(Failure::new(output.what(), &e)),
        }
    }
}

/// The one place the exit code is decided. `base` is what the run earned
/// (the verdict, or why it ended before round 1). An output that failed
/// makes it 2 (each is told); a push that failed raises 0 or 1 to 2; a
/// signal decides last: SIGTERM or SIGHUP whenever it came, any signal
/// that cut a wait short or came before round 1 (`interrupted`).
pub(super) fn exit_of(base: &Exit, outcome: &Outcome, interrupted: bool) -> Exit {
    let mut exit = if outcome.failures.is_empty() {
        base.clone()
    } else {
        Exit::OutputFailed(outcome.failures.clone())
    };
    if let Some(why) = &outcome.push_failed {
        exit = Exit::PushFailed {
            why: why.clone(),
            then: Box::new(exit),
            told_after: outcome.failed_after_push,
        };
    }
    let cut = interrupted || outcome.cut_by_signal;
    match signals::terminated().or(signals::first().filter(|_| cut)) {
        Some(number) => Exit::Signal {
            number,
            then: Box::new(exit),
        },
        None => exit,
    }
}

/// How each output is told the run ended: `Output::end` after rounds,
/// `Output::ended_before_rounds` before any.
pub(super) type Tell = fn(&mut dyn Output, &Finished) -> io::Result<()>;

/// Ends every output in `outputs` but `skip` (one that failed or was
/// closed mid-run) with `tell`, and pushes: standard output and the files
/// first, then the push, then the outputs that record the exit code, with
/// the code the process exits with. Returns that exit.
pub(super) fn end_all(
    opts: &Options,
    outputs: &mut [Box<dyn Output>],
    skip: Option<usize>,
    run: &mut Finished,
    tell: Tell,
    (base, interrupted): (Exit, bool),
    mut outcome: Outcome,
) -> Exit {
    let last = |o: &dyn Output| o.records_exit_code();
    for (i, output) in outputs.iter_mut().enumerate() {
        if skip == Some(i) || last(output.as_ref()) {
            continue;
        }
        run.exit_code = exit_of(&base, &outcome, interrupted).exit_code();
        let result = tell(output.as_mut(), run);
        outcome.note(i, output.as_ref(), result);
    }
    outcome.cut_by_signal |= sink::given_up();
    run.exit_code = exit_of(&base, &outcome, interrupted).exit_code();
    push(opts, run, &mut outcome);
    let exit = exit_of(&base, &outcome, interrupted);
    run.exit_code = exit.exit_code();
    let mut recorded = Outcome::default();
    for (i, output) in outputs.iter_mut().enumerate() {
        if skip != Some(i) && last(output.as_ref()) {
            let result = tell(output.as_mut(), run);
            recorded.note(i, output.as_ref(), result);
        }
    }
    if recorded.failures.is_empty() {
        return exit;
    }
    // The file that would have recorded the code was not written.
    outcome.failed_after_push = recorded.failures.len();
    outcome.failures.append(&mut recorded.failures);
    exit_of(&base, &outcome, interrupted)
}

/// `--push`, after stdout and the picture: the run's exposition goes to the
/// Pushgateway, grouped by the run's labels. One that does not arrive is
/// kept in `outcome`; a signal that comes while it is under way (or the
/// end of the grace of one that came before) abandons it.
fn push(opts: &Options, run: &Finished, outcome: &mut Outcome) {
    let Some(to) = &opts.push else {
        return;
    };
    let key = render::openmetrics::run_labels(run.info, &opts.output.labels);
    let text = render::openmetrics::exposition(run, &key);
    let before = signals::seen();
    let stop = Box::new(move || signals::cuts_short(before));
    if let Err(e) = probe::push(to, &key, &text, stop) {
        outcome.cut_by_signal |= signals::cuts_short(before);
        let abandoned = if signals::seen() > before {
            PushAbandoned::BySignal
        } else {
            PushAbandoned::AtDeadline {
                at: signals::DEADLINE_AFTER,
                grace: signals::GRACE,
            }
        };
        outcome.push_failed = Some(render::warnings::push_failed(&e, abandoned));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Judgement;

    #[test]
    fn the_exit_code_is_decided_in_one_place() {
        // No signal comes in a unit test: the verdict, the failures and the
        // push decide.
        let verdict = Exit::Rounds(Judgement::AllOk);
        let code = |outcome: &Outcome| exit_of(&verdict, outcome, false).exit_code();
        assert_eq!(code(&Outcome::default()), 0);
        let closed = Outcome {
            stdout_closed: true,
            ..Outcome::default()
        };
        assert_eq!(code(&closed), 0, "a reader that had enough is no failure");
        let two = Outcome {
            failures: vec![
                Failure::new("the picture to p.svg", &"gone"),
                Failure::new("the figures to m.prom", &"gone"),
            ],
            ..Outcome::default()
        };
        let exit = exit_of(&verdict, &two, false);
        assert_eq!(exit.exit_code(), 2);
        assert_eq!(exit.stderr_text().unwrap_or_default().lines().count(), 2);
        let pushed = Outcome {
            push_failed: Some("refused".into()),
            ..Outcome::default()
        };
        assert_eq!(code(&pushed), 2);
        let some_failed = Exit::Rounds(Judgement::SomeFailed);
        assert_eq!(
            exit_of(&some_failed, &Outcome::default(), false).exit_code(),
            1
        );
    }

    #[test]
    fn only_standard_output_can_be_closed_by_its_reader() {
        struct Named;
        impl Output for Named {}
        let pipe = || Err(io::Error::from(io::ErrorKind::BrokenPipe));
        let mut outcome = Outcome::default();
        outcome.note(0, &Named, pipe());
        assert!(outcome.stdout_closed && outcome.failures.is_empty());
        outcome.note(1, &Named, pipe());
        assert_eq!(outcome.failures.len(), 1, "a file's EPIPE is a failure");
        outcome.note(2, &Named, Ok(()));
        assert_eq!(outcome.failures.len(), 1);
    }
}

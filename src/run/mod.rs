//! One run from validated options to how it ended (`Exit`): preflight,
//! rounds with live output, statistics, and the judgement.

use std::io::{self, Write};

use crate::calibrate::FloorServer;
use crate::cli::Options;
use crate::exit::{self, Exit, Failure};
use crate::probe::{self, Cancel, EarlyStop, Notice, Observer, Sample};
use crate::render::{
    self, layout, Ending, Escape, Finished, Layout, Output, StoppedBy, Style, Warnings,
};
use crate::stats::{self, Verdict};

mod ending;
mod plan;
mod signals;
mod sink;

pub use sink::settle;

/// A certificate closer than this to its expiry is worth a warning.
pub const CERT_WARN_DAYS: i32 = 14;

/// What the collected samples earn. An early stop (a safety valve, an
/// interrupt) does not change it; failing to write an output ends the run
/// before it is asked.
fn judgement(verdict: Verdict) -> exit::Judgement {
    match verdict {
        Verdict::AllOk => exit::Judgement::AllOk,
        Verdict::SomeFailed => exit::Judgement::SomeFailed,
        Verdict::AllFailed | Verdict::Nothing => exit::Judgement::NoneOk,
    }
}

pub fn version_text() -> String {
    let (curl, tls, h2) = probe::library_versions();
    format!(
        "tlsping {} ({} {}, git {})\nlibcurl {curl}, {tls}, nghttp2 {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("TLSPING_TARGET"),
        env!("TLSPING_PROFILE"),
        env!("TLSPING_GIT_REV"),
        h2.unwrap_or_else(|| "none".into()),
    )
}

fn style(opts: &Options) -> Style {
    let tty = layout::stdout_is_tty();
    let width = layout::terminal_width(std::env::var("COLUMNS").ok().as_deref(), tty);
    Style {
        layout: Layout::for_width(width),
        width,
        color: layout::use_color(opts.no_color, std::env::var_os("NO_COLOR").as_deref(), tty),
        quiet: opts.quiet,
        verbose: opts.verbose,
        unicode: layout::unicode_ok(
            std::env::var("LC_ALL").ok().as_deref(),
            std::env::var("LC_CTYPE").ok().as_deref(),
            std::env::var("LANG").ok().as_deref(),
        ),
    }
}

/// What watches the rounds for the run: the outputs, the warnings the
/// rounds raise, and what the statistics keep of each sample once shown.
struct RunObserver<'r> {
    outputs: &'r mut [Box<dyn Output>],
    /// The output that could not be written, once one could not.
    failed: Option<usize>,
    /// That was standard output, whose reader closed it (`| head`).
    closed: bool,
    warnings: &'r mut Warnings,
    info: &'r probe::RunInfo,
    history: stats::History,
    /// Some output needs every full sample at the end (`--json`, `--svg`).
    keep_full: bool,
}

impl<'r> RunObserver<'r> {
    /// An observer of a run that has told nothing yet.
    fn new(
        outputs: &'r mut [Box<dyn Output>],
        warnings: &'r mut Warnings,
        info: &'r probe::RunInfo,
    ) -> RunObserver<'r> {
        let keep_full = outputs.iter().any(|o| o.keeps_samples());
        RunObserver {
            outputs,
            failed: None,
            closed: false,
            warnings,
            info,
            history: stats::History::new(),
            keep_full,
        }
    }

    /// Tells every output that has not failed, in order. The first that
    /// cannot be written is remembered and its error returned (the rounds
    /// stop), but the others are still told: a closed stdout (`| head`)
    /// must not cost a file output the sample.
    fn each(&mut self, mut tell: impl FnMut(&mut dyn Output) -> io::Result<()>) -> io::Result<()> {
        let mut first = None;
        for i in 0..self.outputs.len() {
            if self.failed == Some(i) {
                continue;
            }
            if let Err(e) = tell(self.outputs[i].as_mut()) {
                self.fail(i, &e);
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Output `i` cannot be written (`e`): it is told no more.
    fn fail(&mut self, i: usize, e: &io::Error) {
        if self.failed.is_none() {
            self.failed = Some(i);
            // Only standard output is first (`render::open`).
            self.closed = i == 0 && e.kind() == io::ErrorKind::BrokenPipe;
        }
    }
}

impl Observer for RunObserver<'_> {
    fn sample(&mut self, s: &Sample) -> io::Result<()> {
        self.each(|o| o.sample(s))
    }
    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        self.each(|o| o.round(round, samples))
    }
    fn notice(&mut self, notice: &Notice) {
        self.warnings
            .warn(render::warnings::notice_text(notice, self.info));
    }
    fn keep(&mut self, mut samples: Vec<Sample>) -> Vec<Sample> {
        for s in &samples {
            self.history.push(s);
        }
        if self.keep_full {
            // What `--write-out` read of each transfer has been printed.
            for s in &mut samples {
                s.transfer = None;
            }
            samples
        } else {
            Vec::new()
        }
    }
}

/// Every output the command line asked for. Standard output keeps server
/// text byte for byte in a file or a pipe, and escapes it on a terminal as
/// the format asks; it is written by a thread of its own, so that a reader
/// that does not read cannot hold the run past a signal (`sink::Stdout`).
fn open_outputs(opts: &Options, info: &probe::RunInfo) -> Vec<Box<dyn Output>> {
    let tty = layout::stdout_is_tty();
    let mut stdout = |escape: Escape| -> Box<dyn Write> {
        let escape = if tty { escape } else { Escape::Off };
        Box::new(sink::Sink::new(sink::Stdout, escape))
    };
    render::open(&opts.output, info, style(opts), &mut stdout)
}

/// A run that ended before round 1 still writes what its outputs write of
/// one (`Output::ended_before_rounds`).
fn ended_before_rounds(opts: &Options, ended: plan::NoRounds, warnings: &Warnings) -> Exit {
    let info = &ended.info;
    let summary = stats::summarize(&stats::NO_RECORDS, std::time::Duration::ZERO);
    // Canceled: a signal came before round 1 (the preflight, the lookup).
    let interrupted = signals::first().is_some();
    let stopped_by = match signals::first() {
        Some(signal) => by_signal(signal),
        None => StoppedBy::Preflight,
    };
    let mut run = Finished {
        info,
        samples: &[],
        summary: &summary,
        comparison: None,
        warnings: warnings.list(),
        history: &stats::NO_RECORDS,
        exit_code: exit::FAILED,
        ending: Ending {
            completed: 0,
            asked: info.settings.count,
            cut: None,
            stopped_by: Some(stopped_by),
        },
    };
    let mut outputs = open_outputs(opts, info);
    ending::end_all(
        opts,
        &mut outputs,
        None,
        &mut run,
        |o, run| o.ended_before_rounds(run),
        (Exit::BeforeRounds(ended.message), interrupted),
        ending::Outcome::default(),
    )
}

/// What a signal that stopped the rounds is called in the outputs.
fn by_signal(signal: i32) -> StoppedBy {
    match signal {
        libc::SIGTERM => StoppedBy::Terminate,
        libc::SIGHUP => StoppedBy::HangUp,
        _ => StoppedBy::Interrupt,
    }
}

/// An ending decided before the outputs were opened (a usage error, an
/// output that could not start): with the code of a SIGTERM or SIGHUP
/// that came meanwhile.
fn early(exit: Exit) -> Exit {
    ending::exit_of(&exit, &ending::Outcome::default(), false)
}

/// `--calibrate`: starts the in-process server, points the run at it and
/// trusts only its certificate. The server lives as long as the returned value.
fn calibration(
    cfg: &mut probe::Config,
    cancel: &Cancel,
) -> Result<(FloorServer, probe::ProbeEnv), String> {
    let server = FloorServer::start()?;
    // The command line set `cli::CALIBRATION_TARGET`; the server picked the port.
    cfg.target.port = server.port();
    let store = probe::TrustStore::from_certificates(std::slice::from_ref(server.certificate()))?;
    let env = probe::ProbeEnv::with_trust(cfg, cancel.clone(), store);
    Ok((server, env))
}

/// Runs, and says how it ended. A run a signal stopped has written what
/// it has; its exit code says why it ended (`ending::exit_of`).
pub fn run(opts: Options) -> Exit {
    let cancel = Cancel::new();
    signals::install(&cancel);
    run_until_done(opts, cancel)
}

/// What the probes run with: the trust anchors, read here once, outside
/// every timed interval (or `--calibrate`'s own server and its
/// certificate). `Err` ends the run: a trust source that cannot be used is
/// a usage error, alone on stderr.
fn environment(
    opts: &mut Options,
    cancel: &Cancel,
) -> Result<(Option<FloorServer>, probe::ProbeEnv), Exit> {
    if opts.config.settings.calibrate {
        return match calibration(&mut opts.config, cancel) {
            Ok((server, env)) => Ok((Some(server), env)),
            Err(e) => Err(Exit::BeforeRounds(Some(format!(
                "--calibrate could not start its server: {e}"
            )))),
        };
    }
    let https =
        opts.config.target.https || opts.compare.as_ref().is_some_and(|c| c.has_https_target());
    match probe::ProbeEnv::for_targets(&opts.config, https, cancel.clone()) {
        Ok(env) => Ok((None, env)),
        Err(e) => Err(Exit::Usage {
            message: e,
            help_hint: false,
        }),
    }
}

/// The warnings only the whole run can give, once its rounds are over.
fn after_the_rounds(warnings: &mut Warnings, history: &stats::History) {
    let tally = history.tallies.of_run();
    if let Some(text) = render::warnings::large_residual(&stats::large_residual(history)) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::untracked_metrics(history.server_timing.untracked()) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::early_data_unsent(tally) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::dns_overlap(tally) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::unreadable_handshakes(tally) {
        warnings.warn(text);
    }
}

fn run_until_done(mut opts: Options, cancel: Cancel) -> Exit {
    // The server (under `--calibrate`) lives as long as the run.
    let (_floor_server, env) = match environment(&mut opts, &cancel) {
        Ok(ready) => ready,
        Err(exit) => return early(exit),
    };
    let mut warnings = Warnings::new();
    for w in &opts.warnings {
        warnings.warn(render::warnings::setting(w));
    }
    // The CPU is kept from deep idle while the run measures (the
    // preflight, then the rounds); released when the rounds end.
    let pin = probe::WakeupPin::hold();
    let note_pin = |info: &mut probe::RunInfo| {
        info.cpu_wakeup_pinned = pin.held();
        info.cpu_wakeup_why_not = pin.why_not().map(str::to_string);
    };
    let plan::Ready { mut info, lanes } = match plan::plan(&opts, &env, &mut warnings) {
        Ok(ready) => ready,
        Err(mut ended) => {
            note_pin(&mut ended.info);
            drop(pin);
            return ended_before_rounds(&opts, ended, &warnings);
        }
    };
    note_pin(&mut info);
    // The rounds' zero point on both clocks, known to the output from its first line.
    let run_start = probe::RunStart::now();
    info.started_at = Some(run_start.wall);
    let mut outputs = open_outputs(&opts, &info);
    let mut observer = RunObserver::new(&mut outputs, &mut warnings, &info);
    for i in 0..observer.outputs.len() {
        if let Err(e) = observer.outputs[i].start(&info) {
            observer.fail(i, &e);
            if !observer.closed {
                let failed = Failure::new(observer.outputs[i].what(), &e);
                return early(Exit::OutputFailed(vec![failed]));
            }
        }
    }
    // A reader gone before round 1 wants nothing measured.
    let rounds = if observer.closed {
        probe::Rounds {
            samples: Vec::new(),
            elapsed: std::time::Duration::ZERO,
            stop: Some(EarlyStop::Output("closed".into())),
            completed: 0,
            cut: None,
        }
    } else {
        probe::run_variants(&opts.config, &lanes, &env, run_start, &mut observer)
    };
    drop(pin);
    let (failed, closed, history) = (observer.failed, observer.closed, observer.history);
    let rounds = Ended {
        rounds,
        history,
        failed,
        closed,
    };
    after_rounds(&opts, &info, &mut outputs, rounds, &mut warnings)
}

/// What the rounds left for the ending: the samples and their records,
/// and the output that could not be written (`closed`: stdout's reader
/// closed it), if one could not.
struct Ended {
    rounds: probe::Rounds,
    history: stats::History,
    failed: Option<usize>,
    closed: bool,
}

impl Ended {
    /// How the rounds ended, for the outputs (`signal`: the first that came).
    fn ending(&self, asked: u32, signal: Option<i32>) -> Ending {
        let stopped_by = self.rounds.stop.as_ref().map(|stop| match stop {
            EarlyStop::Interrupted => by_signal(signal.unwrap_or(libc::SIGINT)),
            EarlyStop::Output(_) if self.closed => StoppedBy::StdoutClosed,
            EarlyStop::Output(_) => StoppedBy::OutputFailed,
            EarlyStop::Valve(_) => StoppedBy::SafetyValve,
        });
        Ending {
            completed: self.rounds.completed,
            asked,
            cut: self.rounds.cut,
            stopped_by,
        }
    }
}

/// The statistics, the warnings of the whole run, and the ending: every
/// output ended, the push, the exit code (`ending::end_all`).
fn after_rounds(
    opts: &Options,
    info: &probe::RunInfo,
    outputs: &mut [Box<dyn Output>],
    ended: Ended,
    warnings: &mut Warnings,
) -> Exit {
    let (rounds, history) = (&ended.rounds, &ended.history);
    // An output that could not be written stopped the rounds; the others
    // still end, and the push still goes. Its failure is the run's; a
    // reader that closed stdout has had enough, which is no failure.
    let mut outcome = ending::Outcome::default();
    match (&rounds.stop, ended.failed) {
        (Some(EarlyStop::Output(_)), Some(_)) if ended.closed => outcome.stdout_closed = true,
        (Some(EarlyStop::Output(e)), failed) => {
            let what = failed.map_or("the output".into(), |i| outputs[i].what());
            outcome.failures.push(Failure::new(what, e));
        }
        (Some(EarlyStop::Valve(why)), _) => warnings.warn(render::warnings::valve(why)),
        _ => {}
    }
    let run_ending = ended.ending(info.settings.count, signals::first());
    if let Some(text) = render::warnings::ending(&run_ending) {
        warnings.warn(text);
    }
    let summary = stats::summarize(history, rounds.elapsed);
    let comparison = info
        .compare
        .as_ref()
        .map(|c| stats::compare_variants(history, rounds.elapsed, c.variants.len()));
    after_the_rounds(warnings, history);
    let mut finished = Finished {
        info,
        samples: &rounds.samples,
        summary: &summary,
        comparison: comparison.as_ref(),
        warnings: warnings.list(),
        history,
        exit_code: exit::FAILED,
        ending: run_ending,
    };
    let verdict = Exit::Rounds(judgement(stats::judge(history)));
    ending::end_all(
        opts,
        outputs,
        ended.failed,
        &mut finished,
        |o, run| o.end(run),
        (verdict, false),
        outcome,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_is_kept_as_records_and_in_full_only_for_json_and_svg() {
        use crate::stats::synthetic;
        let info = synthetic::run_info();
        let mut warnings = Warnings::new();
        for keep_full in [false, true] {
            let mut watch = RunObserver {
                keep_full,
                ..RunObserver::new(&mut [], &mut warnings, &info)
            };
            let round = vec![
                synthetic::cold(1, 40, 100, 3000, 1000, 50),
                synthetic::warm(1, 30, 1000, 10, true),
            ];
            let back = watch.keep(round.clone());
            assert_eq!(back, if keep_full { round } else { Vec::new() });
            assert_eq!(watch.history.len(), 2);
            let rounds: Vec<u32> = watch.history.iter().map(|r| r.round()).collect();
            assert_eq!(rounds, [1, 1]);
        }
    }

    #[test]
    fn a_sample_kept_in_full_forgets_what_write_out_read() {
        use crate::stats::synthetic;
        let info = synthetic::run_info();
        let mut warnings = Warnings::new();
        let mut watch = RunObserver {
            keep_full: true,
            ..RunObserver::new(&mut [], &mut warnings, &info)
        };
        let mut shown = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        shown.transfer = Some(Box::new(probe::TransferFacts {
            headers: vec![("server".into(), "x".repeat(1000))],
            ..probe::TransferFacts::NOT_STARTED
        }));
        let back = watch.keep(vec![shown.clone()]);
        assert_eq!(back[0].transfer, None);
        assert_eq!(back[0].timers, shown.timers);
    }

    /// An output that records what it was told, and fails on `fail_at`
    /// (a sample's round).
    struct Recorder {
        told: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
        name: &'static str,
        fail_at: Option<u32>,
    }

    impl Output for Recorder {
        fn what(&self) -> String {
            self.name.into()
        }
        fn sample(&mut self, s: &Sample) -> io::Result<()> {
            self.told
                .borrow_mut()
                .push(format!("{} sample {}", self.name, s.round));
            match self.fail_at {
                Some(round) if round == s.round => Err(io::Error::other("full")),
                _ => Ok(()),
            }
        }
        fn round(&mut self, round: u32, _: &[Sample]) -> io::Result<()> {
            self.told
                .borrow_mut()
                .push(format!("{} round {round}", self.name));
            Ok(())
        }
    }

    #[test]
    fn an_output_that_fails_is_told_no_more_and_the_others_are_told_on() {
        use crate::stats::synthetic;
        let told = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let recorder = |name, fail_at| -> Box<dyn Output> {
            Box::new(Recorder {
                told: told.clone(),
                name,
                fail_at,
            })
        };
        // stdout closes at round 2 (`| head`); the file must not lose it.
        let mut outputs = vec![recorder("stdout", Some(2)), recorder("file", None)];
        let info = synthetic::run_info();
        let mut warnings = Warnings::new();
        let mut observer = RunObserver::new(&mut outputs, &mut warnings, &info);
        let first = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        observer.sample(&first).unwrap();
        observer.round(1, &[first]).unwrap();
        assert_eq!(observer.failed, None);
        let second = synthetic::cold(2, 40, 100, 3000, 1000, 50);
        assert!(observer.sample(&second).is_err());
        assert_eq!(observer.failed, Some(0), "stdout failed");
        let third = synthetic::cold(3, 40, 100, 3000, 1000, 50);
        assert!(observer.sample(&third).is_ok(), "only the file is left");
        assert_eq!(
            *told.borrow(),
            [
                "stdout sample 1",
                "file sample 1",
                "stdout round 1",
                "file round 1",
                "stdout sample 2",
                "file sample 2",
                "file sample 3"
            ]
        );
    }

    #[test]
    fn exit_codes_follow_the_verdict() {
        let code = |v| Exit::Rounds(judgement(v)).exit_code();
        assert_eq!(code(Verdict::AllOk), 0);
        assert_eq!(code(Verdict::SomeFailed), 1);
        assert_eq!(code(Verdict::AllFailed), 2);
        assert_eq!(code(Verdict::Nothing), 2);
    }
}

//! One run from validated options to how it ended (`Exit`): preflight,
//! rounds with live output, statistics, and the judgement.

use std::io::{self, Write};

use crate::calibrate::FloorServer;
use crate::cli::Options;
use crate::exit::{self, Ended, Exit};
use crate::probe::{
    self, Cancel, EarlyStop, EndReason, Ending, Notice, Observer, Sample, StoppedBy,
};
use crate::render::{self, layout, Escape, Finished, Layout, Style, Warnings};
use crate::stats::{self, Verdict, Warning};

mod ending;
mod plan;
mod signals;
mod sink;

use ending::{early, Written};

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

/// What watches the rounds for the run: the outputs (told through
/// `Written`), the warnings the rounds raise, and what the statistics keep
/// of each sample once shown.
struct RunObserver<'r> {
    written: &'r mut Written,
    warnings: &'r mut Warnings,
    info: &'r probe::RunInfo,
    history: stats::History,
    /// Some output needs every full sample at the end (`--json`, `--svg`).
    keep_full: bool,
}

impl<'r> RunObserver<'r> {
    /// An observer of a run that has told nothing yet.
    fn new(
        written: &'r mut Written,
        warnings: &'r mut Warnings,
        info: &'r probe::RunInfo,
    ) -> RunObserver<'r> {
        let keep_full = written.outputs.iter().any(|o| o.keeps_samples());
        RunObserver {
            written,
            warnings,
            info,
            history: stats::History::new(),
            keep_full,
        }
    }
}

impl Observer for RunObserver<'_> {
    fn sample(&mut self, s: &Sample) -> io::Result<()> {
        self.written.tell(|o| o.sample(s))
    }
    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        self.written.tell(|o| o.round(round, samples))
    }
    fn notice(&mut self, notice: &Notice) {
        // The variant it is about, by the axis and label the run gave it.
        let variant = (notice.variant())
            .zip(self.info.compare.as_ref())
            .map(|(v, c)| (c.axis, c.label(v).to_string()));
        self.warnings.warn(Warning::Rounds {
            notice: *notice,
            variant,
        });
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
fn open_outputs(opts: &Options, info: &probe::RunInfo) -> Written {
    let tty = layout::stdout_is_tty();
    let mut stdout = |escape: Escape| -> Box<dyn Write> {
        let escape = if tty { escape } else { Escape::Off };
        Box::new(sink::Sink::new(sink::Stdout, escape))
    };
    Written::new(render::open(&opts.output, info, style(opts), &mut stdout))
}

/// A run that ended before round 1 still writes what its outputs write of
/// one (`Output::ended_before_rounds`).
fn ended_before_rounds(opts: &Options, ended: plan::NoRounds, warnings: &Warnings) -> Exit {
    let info = &ended.info;
    let summary = stats::summarize(&stats::NO_RECORDS, std::time::Duration::ZERO);
    // A signal came before round 1 (the preflight, the lookup): its name
    // is what stopped the rounds, and its code the one the run exits with.
    let signal = signals::came().first();
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
            stopped_by: Some(signal.map_or(StoppedBy::Preflight, StoppedBy::signal)),
        },
    };
    let mut written = open_outputs(opts, info);
    let tell: ending::Tell = |o, run| o.ended_before_rounds(run);
    let why = Ended::BeforeRounds(ended.last_words().map(Box::new));
    ending::end_all(opts, &mut written, &mut run, tell, (why, signal.is_some()))
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
    let cancel = signals::install();
    run_until_done(opts, cancel)
}

/// What the probes run with: the trust anchors, read here once, outside
/// every timed interval (or `--calibrate`'s own server and its
/// certificate). `Err` ends the run: a trust source that cannot be used is
/// a usage error, alone on stderr.
fn environment(
    opts: &mut Options,
    cancel: &Cancel,
) -> Result<(Option<FloorServer>, probe::ProbeEnv), Ended> {
    if opts.config.settings.calibrate {
        return match calibration(&mut opts.config, cancel) {
            Ok((server, env)) => Ok((Some(server), env)),
            Err(e) => Err(Ended::BeforeRounds(Some(Box::new(
                EndReason::CalibrationServer(e),
            )))),
        };
    }
    let https =
        opts.config.target.https || opts.compare.as_ref().is_some_and(|c| c.has_https_target());
    match probe::ProbeEnv::for_targets(&opts.config, https, cancel.clone()) {
        Ok(env) => Ok((None, env)),
        Err(message) => Err(Ended::Usage {
            message,
            help_hint: false,
        }),
    }
}

fn run_until_done(mut opts: Options, cancel: Cancel) -> Exit {
    // The server (under `--calibrate`) lives as long as the run.
    let (_floor_server, env) = match environment(&mut opts, &cancel) {
        Ok(ready) => ready,
        Err(ended) => return early(ended),
    };
    let mut warnings = Warnings::new();
    for w in &opts.warnings {
        warnings.warn(Warning::Setting(*w));
    }
    // The CPU is kept from deep idle while the run measures (the
    // preflight, then the rounds); released when the rounds end.
    let pin = probe::WakeupPin::hold();
    let note_pin = |info: &mut probe::RunInfo| {
        info.cpu_wakeup_pinned = pin.held();
        info.cpu_wakeup_why_not = pin.why_not().cloned();
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
    let mut written = open_outputs(&opts, &info);
    let _ = written.tell(|o| o.start(&info));
    if written.failed() {
        // An output that cannot start ends the run: nothing is measured.
        return ending::exit_of(&Ended::BeforeRounds(None), &written, false);
    }
    let mut observer = RunObserver::new(&mut written, &mut warnings, &info);
    // A reader gone before round 1 wants nothing measured.
    let rounds = if observer.written.stdout_closed {
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
    let history = observer.history;
    after_rounds(&opts, &info, &mut written, (rounds, history), &mut warnings)
}

/// How the rounds ended, for the outputs (`signal`: the first that came).
fn ending_of(
    rounds: &probe::Rounds,
    stdout_closed: bool,
    asked: u32,
    signal: Option<i32>,
) -> Ending {
    let stopped_by = rounds.stop.as_ref().map(|stop| match stop {
        EarlyStop::Interrupted => StoppedBy::signal(signal.unwrap_or(libc::SIGINT)),
        EarlyStop::Output(_) if stdout_closed => StoppedBy::StdoutClosed,
        EarlyStop::Output(_) => StoppedBy::OutputFailed,
        EarlyStop::Valve(_) => StoppedBy::SafetyValve,
    });
    Ending {
        completed: rounds.completed,
        asked,
        cut: rounds.cut,
        stopped_by,
    }
}

/// The statistics, the warnings of the whole run, and the ending: every
/// output ended, the push, the exit code (`ending::end_all`). An output
/// that could not be written stopped the rounds; the others still end,
/// and the push still goes. Its failure is the run's (`Written` kept it);
/// a reader that closed stdout has had enough, which is no failure.
fn after_rounds(
    opts: &Options,
    info: &probe::RunInfo,
    written: &mut Written,
    (rounds, history): (probe::Rounds, stats::History),
    warnings: &mut Warnings,
) -> Exit {
    // After a signal the ending's waits are bounded; a stderr write is not:
    // the warnings wait until the files and the push are done.
    if signals::came().first().is_some() {
        warnings.hold();
    }
    if let Some(EarlyStop::Valve(why)) = &rounds.stop {
        warnings.warn(Warning::Valve(*why));
    }
    let asked = info.settings.count;
    let run_ending = ending_of(
        &rounds,
        written.stdout_closed,
        asked,
        signals::came().first(),
    );
    if run_ending.stopped_by.is_some_and(StoppedBy::is_signal) {
        // A valve has its warning, a closed stdout is a reader that had
        // enough, and a failed output is told with the exit.
        warnings.warn(Warning::Stopped(run_ending));
    }
    let summary = stats::summarize(&history, rounds.elapsed);
    let comparison = info
        .compare
        .as_ref()
        .map(|c| stats::compare_variants(&history, rounds.elapsed, c.variants.len()));
    // The warnings only the whole run can give, once its rounds are over.
    for w in stats::warnings_of(&history) {
        warnings.warn(w);
    }
    let mut finished = Finished {
        info,
        samples: &rounds.samples,
        summary: &summary,
        comparison: comparison.as_ref(),
        warnings: warnings.list(),
        history: &history,
        exit_code: exit::FAILED,
        ending: run_ending,
    };
    let verdict = Ended::Rounds(judgement(stats::judge(&history)));
    let tell: ending::Tell = |o, run| o.end(run);
    let exit = ending::end_all(opts, written, &mut finished, tell, (verdict, false));
    warnings.release();
    exit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Output;

    #[test]
    fn a_round_is_kept_as_records_and_in_full_only_for_json_and_svg() {
        use crate::stats::synthetic;
        let info = synthetic::run_info();
        let mut warnings = Warnings::new();
        let mut written = Written::new(Vec::new());
        for keep_full in [false, true] {
            let mut watch = RunObserver {
                keep_full,
                ..RunObserver::new(&mut written, &mut warnings, &info)
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
        let mut written = Written::new(Vec::new());
        let mut watch = RunObserver {
            keep_full: true,
            ..RunObserver::new(&mut written, &mut warnings, &info)
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
        let outputs = vec![recorder("stdout", Some(2)), recorder("file", None)];
        let info = synthetic::run_info();
        let mut warnings = Warnings::new();
        let mut written = Written::new(outputs);
        let mut observer = RunObserver::new(&mut written, &mut warnings, &info);
        let first = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        observer.sample(&first).unwrap();
        observer.round(1, &[first]).unwrap();
        assert!(observer.written.lost.is_empty());
        let second = synthetic::cold(2, 40, 100, 3000, 1000, 50);
        assert!(observer.sample(&second).is_err());
        assert_eq!(observer.written.lost.len(), 1, "stdout failed");
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
        let code = |v| Exit::of(Ended::Rounds(judgement(v))).exit_code();
        assert_eq!(code(Verdict::AllOk), 0);
        assert_eq!(code(Verdict::SomeFailed), 1);
        assert_eq!(code(Verdict::AllFailed), 2);
        assert_eq!(code(Verdict::Nothing), 2);
    }
}

//! One run from validated options to an exit code: preflight, rounds with
//! live output, statistics, and the judgement.

use std::io::{self, Write};
use std::sync::atomic::Ordering;

use crate::calibrate::FloorServer;
use crate::cli::{Options, Output};
use crate::probe::{self, Cancel, EarlyStop, Notice, Observer, Sample};
use crate::render::{self, layout, Human, Layout, Style, Warnings};
use crate::stats::{self, Verdict};

mod plan;
mod signals;
mod sink;

/// Exit codes of the spec.
pub const EXIT_OK: i32 = 0;
pub const EXIT_SOME_FAILED: i32 = 1;
pub const EXIT_FAILED: i32 = 2;
pub const EXIT_USAGE: i32 = 3;

/// A certificate closer than this to its expiry is worth a warning.
pub const CERT_WARN_DAYS: i32 = 14;

/// The exit code the collected samples earn. An early stop (a safety valve,
/// an interrupt) does not change it; failing to write the output does, and
/// `run` returns `EXIT_FAILED` for that before asking.
pub fn exit_code(verdict: Verdict) -> i32 {
    match verdict {
        Verdict::AllOk => EXIT_OK,
        Verdict::SomeFailed => EXIT_SOME_FAILED,
        Verdict::AllFailed | Verdict::Nothing => EXIT_FAILED,
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

/// The live output of a run, whichever format was asked for.
enum Live<W: Write> {
    Human(Human<W>),
    Csv(render::csv::CsvStream<W>),
    /// JSON is one document written when the run ends: nothing streams.
    JsonAtEnd,
    Jsonl(render::jsonl::JsonlStream<W>),
    /// `--write-out`: the format, filled in for every sample as it finishes.
    WriteOut {
        out: W,
        format: render::write_out::WriteOut,
        compare: Option<probe::CompareInfo>,
    },
}

/// What watches the rounds: the live output, the warnings they raise, and
/// what the statistics keep of each sample once it has been shown.
struct Watch<'w, W: Write> {
    live: Live<W>,
    warnings: &'w mut Warnings,
    info: &'w probe::RunInfo,
    history: stats::History,
    /// The output needs every full sample at the end (`--json`, `--svg`).
    keep_full: bool,
    early_data: render::warnings::EarlyDataTally,
    dns_overlap: render::warnings::OverlapTally,
}

impl<W: Write> Observer for Watch<'_, W> {
    fn sample(&mut self, s: &Sample) -> io::Result<()> {
        self.early_data.add(s);
        self.dns_overlap.add(s);
        match &mut self.live {
            Live::Csv(c) => c.sample(s),
            Live::Jsonl(j) => j.sample(s),
            Live::WriteOut {
                out,
                format,
                compare,
            } => {
                out.write_all(format.render(s, compare.as_ref()).as_bytes())?;
                out.flush()
            }
            _ => Ok(()),
        }
    }
    fn round(&mut self, round: u32, samples: &[Sample]) -> io::Result<()> {
        match &mut self.live {
            Live::Human(h) => h.round(round, samples),
            _ => Ok(()),
        }
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

/// `--svg`: the picture of the run, written when it ends.
fn write_svg(path: &std::path::Path, info: &probe::RunInfo, samples: &[Sample]) -> io::Result<()> {
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    render::svg::write_svg(&mut out, info, samples)?;
    out.flush()
}

/// Standard output for `output`: server text escaped on a terminal, kept
/// byte for byte in a file or a pipe.
fn stdout_for(output: &Output) -> sink::Sink<io::StdoutLock<'static>> {
    let escape = sink::Escape::for_output(output, layout::stdout_is_tty());
    sink::Sink::new(io::stdout().lock(), escape)
}

fn output_failed(e: &dyn std::fmt::Display) -> i32 {
    eprintln!("tlsping: could not write the output: {e}");
    EXIT_FAILED
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

pub fn run(opts: Options) -> i32 {
    let cancel = Cancel::new();
    let terminated = signals::install_interrupt(&cancel);
    let code = run_until_done(opts, cancel);
    // A terminated run has printed what it has; its exit code says why it ended.
    match terminated.load(Ordering::SeqCst) {
        0 => code,
        signal => 128 + signal,
    }
}

fn run_until_done(mut opts: Options, cancel: Cancel) -> i32 {
    // Trust anchors are read here, once, outside every timed interval; a
    // source that cannot be used ends the run as a usage error, alone on stderr.
    let (_floor_server, env) = if opts.config.calibrate {
        match calibration(&mut opts.config, &cancel) {
            Ok((server, env)) => (Some(server), env),
            Err(e) => {
                eprintln!("tlsping: --calibrate could not start its server: {e}");
                return EXIT_FAILED;
            }
        }
    } else {
        match probe::ProbeEnv::new(&opts.config, cancel.clone()) {
            Ok(env) => (None, env),
            Err(e) => {
                eprintln!("tlsping: {}", crate::text::printable(&e));
                return EXIT_USAGE;
            }
        }
    };
    let mut warnings = Warnings::new();
    for w in &opts.warnings {
        warnings.warn(render::warnings::setting(w));
    }
    let plan::Plan { mut info, lanes } = match plan::plan(&opts, &env, &mut warnings) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    let cfg = &opts.config;
    // The rounds' zero point on both clocks, known to the output from its first line.
    let run_start = probe::RunStart::now();
    info.started_at = Some(run_start.wall);
    let stdout = || stdout_for(&opts.output);
    let started: io::Result<Live<_>> = match &opts.output {
        Output::Table => {
            let mut h = Human::new(stdout(), &info, style(&opts));
            h.start(&info).map(|_| Live::Human(h))
        }
        Output::Csv { time_first } => {
            render::csv::CsvStream::for_run(stdout(), &info, *time_first).map(Live::Csv)
        }
        Output::Json => Ok(Live::JsonAtEnd),
        Output::WriteOut(format) => Ok(Live::WriteOut {
            out: stdout(),
            format: format.clone(),
            compare: info.compare.clone(),
        }),
        Output::Jsonl => render::jsonl::JsonlStream::start(stdout(), &info).map(Live::Jsonl),
    };
    let live = match started {
        Ok(live) => live,
        Err(e) => return output_failed(&e),
    };
    let keep_full = matches!(opts.output, Output::Json) || opts.svg.is_some();
    let mut watch = Watch {
        live,
        warnings: &mut warnings,
        info: &info,
        history: stats::History::new(),
        keep_full,
        early_data: Default::default(),
        dns_overlap: Default::default(),
    };
    let rounds = probe::run_variants(cfg, &lanes, &env, run_start, &mut watch);
    let (mut live, history) = (watch.live, watch.history);
    let (early_data, dns_overlap) = (watch.early_data, watch.dns_overlap);
    match &rounds.stop {
        Some(EarlyStop::Output(e)) => return output_failed(e),
        Some(EarlyStop::Valve(why)) => warnings.warn(render::warnings::valve(why)),
        _ => {}
    }
    let summary = match &info.compare {
        Some(c) => stats::summarize_compared(&history, rounds.elapsed, c.variants.len()),
        None => stats::summarize(&history, rounds.elapsed),
    };
    if stats::large_residual(&history) {
        warnings.warn(render::warnings::LARGE_RESIDUAL);
    }
    if let Some(text) = render::warnings::untracked_metrics(history.server_timing.untracked()) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::early_data_unsent(early_data) {
        warnings.warn(text);
    }
    if let Some(text) = render::warnings::dns_overlap(dns_overlap) {
        warnings.warn(text);
    }
    let printed = match &mut live {
        Live::Human(h) => h.finish().and_then(|_| h.statistics(&info, &summary)),
        Live::Csv(_) => Ok(()),
        Live::Jsonl(j) => j.finish(&summary, warnings.list()),
        Live::WriteOut { .. } => Ok(()),
        Live::JsonAtEnd => {
            let out = io::BufWriter::new(stdout());
            render::json::write_document(out, &info, &rounds.samples, &summary, warnings.list())
        }
    };
    if let Err(e) = printed {
        return output_failed(&e);
    }
    if let Some(path) = &opts.svg {
        if let Err(e) = write_svg(path, &info, &rounds.samples) {
            eprintln!(
                "tlsping: could not write the picture to {}: {e}",
                path.display()
            );
            return EXIT_FAILED;
        }
    }
    exit_code(stats::judge(&history))
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
            let mut watch = Watch::<Vec<u8>> {
                live: Live::JsonAtEnd,
                warnings: &mut warnings,
                info: &info,
                history: stats::History::new(),
                keep_full,
                early_data: Default::default(),
                dns_overlap: Default::default(),
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
        let mut watch = Watch::<Vec<u8>> {
            live: Live::JsonAtEnd,
            warnings: &mut warnings,
            info: &info,
            history: stats::History::new(),
            keep_full: true,
            early_data: Default::default(),
            dns_overlap: Default::default(),
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

    #[test]
    fn exit_codes_follow_the_verdict() {
        assert_eq!(exit_code(Verdict::AllOk), 0);
        assert_eq!(exit_code(Verdict::SomeFailed), 1);
        assert_eq!(exit_code(Verdict::AllFailed), 2);
        assert_eq!(exit_code(Verdict::Nothing), 2);
    }
}

//! One run from validated options to an exit code: preflight, rounds with
//! live output, statistics, and the judgement.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::calibrate_server::FloorServer;
use crate::cli::{Options, Output};
use crate::probe::{self, Cancel, EarlyStop, Notice, Observer, Sample};
use crate::render::{self, layout, Human, Layout, Style, Warnings};
use crate::stats::{self, Verdict};

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

/// First Ctrl+C: stop at the next boundary (or abort the transfer in flight).
/// Second: leave at once (130). SIGTERM and SIGHUP stop the run the same way,
/// and the run then exits 128 + the signal's number (143, 129) after printing
/// what it has; a second one leaves at once with that code. Returns the
/// terminating signal, once one came.
fn install_interrupt(cancel: &Cancel) -> std::sync::Arc<std::sync::atomic::AtomicI32> {
    use std::sync::atomic::AtomicI32;
    static PRESSES: AtomicU32 = AtomicU32::new(0);
    let on_int = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
            leave_now(130);
        }
        on_int.cancel();
    });
    let terminated = std::sync::Arc::new(AtomicI32::new(0));
    let seen = terminated.clone();
    let on_term = cancel.clone();
    use signal_hook::consts::{SIGHUP, SIGTERM};
    // A signal the parent set to be ignored (`nohup` does that to SIGHUP)
    // stays ignored: registering a handler would undo what was asked.
    let wanted: Vec<i32> = [SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| !ignored(s))
        .collect();
    if let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) {
        std::thread::spawn(move || {
            for signal in signals.forever() {
                if seen.swap(signal, Ordering::SeqCst) != 0 {
                    leave_now(128 + signal);
                }
                on_term.cancel();
            }
        });
    }
    terminated
}

/// Whether `signal` is set to be ignored, as inherited from the parent.
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into `old`, a zeroed plain struct we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Leaves at once (a second interrupt): no exit handlers, which could run
/// OpenSSL's clean-up while the main thread is still inside libcurl.
fn leave_now(code: i32) -> ! {
    // SAFETY: _exit(2) ends the process without touching any of its state.
    unsafe { libc::_exit(code) }
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
    }
}

/// The live output of a run, whichever format was asked for.
enum Live<W: Write> {
    Human(Human<W>),
    Csv(render::csv::CsvStream<W>),
    /// JSON is one document written when the run ends: nothing streams.
    JsonAtEnd,
}

/// What watches the rounds: the live output, and the warnings they raise.
struct Watch<'w, W: Write> {
    live: Live<W>,
    warnings: &'w mut Warnings,
}

impl<W: Write> Observer for Watch<'_, W> {
    fn sample(&mut self, s: &Sample) -> io::Result<()> {
        match &mut self.live {
            Live::Csv(c) => c.sample(s),
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
        self.warnings.warn(render::warnings::notice_text(notice));
    }
}

/// `--http-version` asked for one version and the preflight got another.
fn version_mismatch(asked: probe::HttpVersion, got: Option<probe::Proto>) -> Option<String> {
    let (want, name) = match asked {
        probe::HttpVersion::Auto => return None,
        probe::HttpVersion::V2 => (probe::Proto::H2, "2"),
        probe::HttpVersion::V1_1 => (probe::Proto::Http11, "1.1"),
    };
    let got = got?;
    (got != want).then(|| {
        format!(
            "--http-version {name} was asked for, but the server answered over {}; \
             nothing was measured (drop the flag to measure what the server offers)",
            got.as_str()
        )
    })
}

/// A run that ended before round 1 still writes its machine output: the
/// facts known so far and why it ended (`--json`), or the header and one
/// `preflight` row (`--csv`), so a script can tell a refused connection from a
/// certificate problem without reading stderr. Exits 2.
fn ended_before_rounds(opts: &Options, info: &probe::RunInfo, warnings: &Warnings) -> i32 {
    let stdout = io::stdout();
    let written = match opts.output {
        Output::Table => Ok(()),
        Output::Json => {
            let summary = stats::summarize(&[], std::time::Duration::ZERO);
            let out = io::BufWriter::new(stdout.lock());
            render::json::write_document(out, info, &[], &summary, warnings.list())
        }
        Output::Csv => {
            render::csv::CsvStream::new(stdout.lock()).and_then(|mut c| c.preflight_row(info))
        }
    };
    match written {
        Ok(()) => EXIT_FAILED,
        Err(e) => output_failed(&e),
    }
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
    let url = format!("https://localhost:{}/", server.port());
    cfg.target = crate::cli::parse_target(&url)?;
    let store = probe::TrustStore::from_certificates(std::slice::from_ref(server.certificate()))?;
    let env = probe::ProbeEnv::with_trust(cfg, cancel.clone(), store);
    Ok((server, env))
}

pub fn run(opts: Options) -> i32 {
    let cancel = Cancel::new();
    let terminated = install_interrupt(&cancel);
    let code = run_until_done(opts, cancel);
    // A terminated run has printed what it has; its exit code says why it ended.
    match terminated.load(Ordering::SeqCst) {
        0 => code,
        signal => 128 + signal,
    }
}

fn run_until_done(mut opts: Options, cancel: Cancel) -> i32 {
    let mut warnings = Warnings::new();
    for w in &opts.warnings {
        warnings.warn(w.clone());
    }
    // Trust anchors are read here, once, outside every timed interval.
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
                eprintln!("tlsping: {e}");
                return EXIT_FAILED;
            }
        }
    };
    let cfg = &opts.config;
    let pre = match probe::preflight(cfg, &env) {
        Ok(pre) => pre,
        Err(e) => {
            eprintln!(
                "tlsping: preflight to {} failed: {} ({})",
                cfg.target.url(),
                render::format::reason(e.kind, cfg.timeout),
                crate::text::printable(&e.text)
            );
            let info = probe::run_info_failed(cfg, e);
            return ended_before_rounds(&opts, &info, &warnings);
        }
    };
    if let Some(why) = &pre.stop {
        // The server already asked us to back off: no rounds at all.
        warnings.warn(format!("preflight: {why}; no rounds were run"));
        let mut info = probe::run_info(cfg, &pre);
        info.preflight_error = Some(probe::ProbeError {
            kind: probe::ErrorKind::Error,
            text: why.clone(),
        });
        return ended_before_rounds(&opts, &info, &warnings);
    }
    if let Some(got) = version_mismatch(cfg.http_version, pre.proto) {
        // Asking for a version means that version or nothing.
        eprintln!("tlsping: {got}");
        let mut info = probe::run_info(cfg, &pre);
        info.preflight_error = Some(probe::ProbeError {
            kind: probe::ErrorKind::Error,
            text: got,
        });
        return ended_before_rounds(&opts, &info, &warnings);
    }
    if let Some(location) = &pre.redirect {
        warnings.warn(format!(
            "the first response is a redirect ({}) to {location}; redirects are not followed, consider re-running against it",
            pre.status
        ));
    }
    let info = probe::run_info(cfg, &pre);
    if let Some(days) = info
        .tls
        .and_then(|t| t.cert_days_left)
        .filter(|&d| d < CERT_WARN_DAYS)
    {
        warnings.warn(format!("the server certificate expires in {days} days"));
    }
    let dial = if cfg.pin_ip { pre.addr } else { None };
    let stdout = io::stdout();
    let started: io::Result<Live<_>> = match opts.output {
        Output::Table => {
            let mut h = Human::new(stdout.lock(), &info, style(&opts));
            h.start(&info).map(|_| Live::Human(h))
        }
        Output::Csv => render::csv::CsvStream::new(stdout.lock()).map(Live::Csv),
        Output::Json => Ok(Live::JsonAtEnd),
    };
    let live = match started {
        Ok(live) => live,
        Err(e) => return output_failed(&e),
    };
    let mut watch = Watch {
        live,
        warnings: &mut warnings,
    };
    let rounds = probe::run_rounds(cfg, &pre.method, dial, &env, &mut watch);
    let mut live = watch.live;
    match &rounds.stop {
        Some(EarlyStop::Output(e)) => return output_failed(e),
        Some(EarlyStop::Valve(why)) => warnings.warn(why.clone()),
        _ => {}
    }
    let summary = stats::summarize(&rounds.samples, rounds.elapsed);
    if stats::large_residual(&rounds.samples).is_some() {
        warnings.warn("'other' is above 20% of total on some samples: time no stage accounts for");
    }
    let printed = match &mut live {
        Live::Human(h) => h.finish().and_then(|_| h.statistics(&info, &summary)),
        Live::Csv(_) => Ok(()),
        Live::JsonAtEnd => {
            let out = io::BufWriter::new(stdout.lock());
            render::json::write_document(out, &info, &rounds.samples, &summary, warnings.list())
        }
    };
    if let Err(e) = printed {
        return output_failed(&e);
    }
    exit_code(stats::judge(&rounds.samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_verdict() {
        assert_eq!(exit_code(Verdict::AllOk), 0);
        assert_eq!(exit_code(Verdict::SomeFailed), 1);
        assert_eq!(exit_code(Verdict::AllFailed), 2);
        assert_eq!(exit_code(Verdict::Nothing), 2);
    }
}

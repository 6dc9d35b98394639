//! One run from validated options to an exit code: preflight, rounds with
//! live output, statistics, and the judgement.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::cli::{Options, Output};
use crate::probe::{self, Cancel, EarlyStop, Warnings};
use crate::render;
use crate::stats::{self, Verdict};

/// Exit codes of the spec.
pub const EXIT_OK: i32 = 0;
pub const EXIT_SOME_FAILED: i32 = 1;
pub const EXIT_FAILED: i32 = 2;
pub const EXIT_USAGE: i32 = 3;

pub fn exit_code(verdict: Verdict, stop: Option<&EarlyStop>) -> i32 {
    if let Some(EarlyStop::Output(_)) = stop {
        return EXIT_FAILED;
    }
    match verdict {
        Verdict::AllOk => EXIT_OK,
        Verdict::SomeFailed => EXIT_SOME_FAILED,
        Verdict::AllFailed | Verdict::Nothing => EXIT_FAILED,
    }
}

/// First Ctrl+C: stop at the next boundary (or abort the transfer in flight).
/// Second: leave at once.
fn install_interrupt(cancel: &Cancel) {
    static PRESSES: AtomicU32 = AtomicU32::new(0);
    let cancel = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
            std::process::exit(130);
        }
        cancel.cancel();
    });
}

pub fn version_text() -> String {
    let (curl, tls, h2) = probe::curl_ffi::library_versions();
    format!(
        "tlsping {} ({} {}, git {})\nlibcurl {curl}, {tls}, nghttp2 {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("TLSPING_TARGET"),
        env!("TLSPING_PROFILE"),
        env!("TLSPING_GIT_REV"),
        h2.unwrap_or_else(|| "none".into()),
    )
}

pub fn run(opts: Options) -> i32 {
    let cancel = Cancel::new();
    install_interrupt(&cancel);
    let mut warnings = Warnings::new();
    for w in &opts.warnings {
        warnings.warn(w.clone());
    }
    let cfg = &opts.config;
    // Trust anchors are read here, once, outside every timed interval.
    let env = match probe::ProbeEnv::new(cfg, cancel.clone()) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("tlsping: {e}");
            return EXIT_FAILED;
        }
    };
    let pre = match probe::preflight(cfg, &env) {
        Ok(pre) => pre,
        Err(e) => {
            eprintln!("tlsping: preflight to {} failed: {} ({})", cfg.target.url(), e.kind.reason(cfg.timeout), e.text);
            return EXIT_FAILED;
        }
    };
    if let Some(location) = &pre.redirect {
        warnings.warn(format!(
            "the first response is a redirect ({}) to {location}; redirects are not followed, consider re-running against it",
            pre.status
        ));
    }
    let info = probe::run_info(cfg, &pre);
    let pin = if cfg.pin_ip { pre.addr } else { None };
    let stdout = io::stdout();
    let mut table = render::WideTable::new(stdout.lock(), &info);
    let started = match opts.output {
        Output::Table => table.start(&info),
        _ => Ok(()),
    };
    let rounds = match started {
        Err(e) => probe::Rounds { samples: Vec::new(), elapsed: Default::default(), stop: Some(EarlyStop::Output(e.to_string())) },
        Ok(()) => probe::run_rounds(cfg, &pre.method, pin, &env, &mut warnings, &mut table),
    };
    drop(table);
    let summary = stats::summarize(&rounds.samples, rounds.elapsed);
    if stats::large_residual(&rounds.samples).is_some() {
        warnings.warn("the unexplained residual ('other') is above 20% of total on some samples; stages may be missing time");
    }
    let verdict = stats::judge(&rounds.samples);
    if let Some(EarlyStop::Output(e)) = &rounds.stop {
        eprintln!("tlsping: could not write the output: {e}");
        return EXIT_FAILED;
    }
    let mut out = io::stdout().lock();
    let printed = (|| -> io::Result<()> {
        writeln!(out)?;
        for line in render::statistics(&info, &summary) {
            writeln!(out, "{line}")?;
        }
        out.flush()
    })();
    if let Err(e) = printed {
        eprintln!("tlsping: could not write the output: {e}");
        return EXIT_FAILED;
    }
    exit_code(verdict, rounds.stop.as_ref())
}

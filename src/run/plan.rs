//! Before round 1: the preflight (one per variant with `--compare`), what it
//! settles for the rounds, and the machine output of a run that ends here.

use std::net::IpAddr;

use crate::cli::Options;
use crate::probe::{self, ProbeEnv, ProbeError, RunInfo, VariantSetup};
use crate::render::{self, Warnings};

use super::CERT_WARN_DAYS;

/// What the rounds need: the run's facts and one lane per variant that can run.
pub(super) struct Ready {
    pub info: RunInfo,
    pub lanes: Vec<VariantSetup>,
}

/// A run that ends before round 1: the facts known so far and why it ended
/// (`info.preflight_error`), for the outputs to write, and what to say on
/// stderr when no warning has said it.
pub(super) struct NoRounds {
    pub info: Box<RunInfo>,
    /// For stderr, raw: `Exit::report` escapes it.
    pub message: Option<String>,
}

impl NoRounds {
    /// `message` is worded as the warnings are, server text as it came; it
    /// is escaped once, where `Exit::report` writes it to stderr.
    fn new(info: RunInfo, message: Option<String>) -> NoRounds {
        NoRounds {
            info: Box::new(info),
            // Raw: `Exit::report` escapes it, once, on its way to stderr.
            message,
        }
    }
}

/// A run a signal ended before round 1 (during a preflight or the address
/// lookup): nothing was measured, and the exit code is the signal's.
fn interrupted(
    cfg: &probe::Config,
    compared: Option<(probe::Axis, Vec<probe::VariantInfo>)>,
) -> NoRounds {
    let e = ProbeError {
        kind: probe::ErrorKind::Canceled,
        text: render::warnings::INTERRUPTED_BEFORE_ROUNDS.into(),
    };
    let mut info = probe::run_info_failed(cfg, e);
    info.compare = compared.map(|(axis, variants)| probe::CompareInfo {
        axis,
        variants,
        probes_per_round: 0,
    });
    NoRounds::new(
        info,
        Some(render::warnings::INTERRUPTED_BEFORE_ROUNDS.into()),
    )
}

/// `--http-version` asked for one version and the preflight got another.
fn version_mismatch(asked: probe::HttpVersion, got: Option<probe::Proto>) -> Option<String> {
    let want = match asked {
        probe::HttpVersion::Auto => return None,
        probe::HttpVersion::V2 => probe::Proto::H2,
        probe::HttpVersion::V1_1 => probe::Proto::Http11,
    };
    let got = got?;
    (got != want).then(|| render::warnings::http_version_refused(asked, got))
}

/// Warnings the preflight's answer earns: a redirect, a certificate near its end.
fn preflight_warnings(
    pre: &probe::Preflight,
    target: &probe::Target,
    named: Option<&str>,
    warnings: &mut Warnings,
) {
    // Under `--compare target=` each endpoint's sentences start with its label.
    let mut warn = |text: String| match named {
        Some(label) => warnings.warn(format!("{label}: {text}")),
        None => warnings.warn(text),
    };
    if let Some(location) = &pre.redirect {
        warn(render::warnings::redirect(pre.status, location));
    }
    if pre.plain_http_to_tls_port {
        warn(render::warnings::plain_http_to_tls_port(target, pre.status));
    }
    if let Some(tls) = pre.tls {
        if let Some(days) = tls.cert_days_left.filter(|&d| d < CERT_WARN_DAYS) {
            warn(render::warnings::certificate_expiry(days, tls.cert_expired));
        }
    }
}

/// The preflight and what it settles; `Err` is a run that ends here.
pub(super) fn plan(
    opts: &Options,
    env: &ProbeEnv,
    warnings: &mut Warnings,
) -> Result<Ready, NoRounds> {
    match &opts.compare {
        None => plan_one(opts, env, warnings),
        Some(cmp) => plan_compare(opts, cmp, env, warnings),
    }
}

fn plan_one(opts: &Options, env: &ProbeEnv, warnings: &mut Warnings) -> Result<Ready, NoRounds> {
    let cfg = &opts.config;
    let pre = match probe::preflight(cfg, env) {
        Ok(_) | Err(_) if env.cancel.is_canceled() => return Err(interrupted(cfg, None)),
        Ok(pre) => pre,
        Err(failed) => {
            let why = render::warnings::preflight_failed(cfg, &failed);
            let info = probe::run_info_preflight_failed(cfg, &failed);
            return Err(NoRounds::new(info, Some(why)));
        }
    };
    if let Some(valve) = &pre.stop {
        // The server already asked us to back off: no rounds at all.
        warnings.warn(render::warnings::preflight_valve(valve, None));
        let mut info = probe::run_info(cfg, &pre);
        info.preflight_error = Some(ProbeError {
            kind: probe::ErrorKind::Error,
            text: render::warnings::valve(valve),
        });
        return Err(NoRounds::new(info, None));
    }
    if let Some(got) = version_mismatch(cfg.http_version, pre.proto) {
        // Asking for a version means that version or nothing.
        let mut info = probe::run_info(cfg, &pre);
        info.preflight_error = Some(ProbeError {
            kind: probe::ErrorKind::Error,
            text: got.clone(),
        });
        return Err(NoRounds::new(info, Some(got)));
    }
    let info = probe::run_info(cfg, &pre);
    preflight_warnings(&pre, &cfg.target, None, warnings);
    let lane = VariantSetup {
        variant: 0,
        config: cfg.clone(),
        method: pre.method.clone(),
        dial: if cfg.pin_ip { pre.addr } else { None },
    };
    Ok(Ready {
        info,
        lanes: vec![lane],
    })
}

/// What a variant's preflight says about it.
enum VariantCheck {
    Runs(probe::Preflight),
    /// Why it cannot run at all, for the warning, and as the error to report.
    CannotRun(String, ProbeError),
    /// The server asked clients to back off (the run ends: every variant
    /// but a target of its own probes that server).
    BackOff(probe::Preflight, probe::Valve),
}

/// A variant's preflight, and whether the server answered it the way the
/// variant asks: its HTTP version, and its TLS version (a `--tls-max` is
/// only a ceiling, so a TLS 1.2-only server would answer the 1.3 variant
/// with 1.2 and compare 1.2 with itself under two names).
fn check_variant(axis: probe::Axis, v: &probe::Variant, env: &ProbeEnv) -> VariantCheck {
    let pre = match probe::preflight(&v.config, env) {
        Ok(pre) => pre,
        Err(failed) => {
            let why = if axis.own_endpoints() {
                // A target of its own: the words of a single run's failure, with its URL.
                render::warnings::preflight_failed(&v.config, &failed)
            } else {
                render::warnings::variant_preflight_failed(&v.config, &failed)
            };
            return VariantCheck::CannotRun(why, failed.error);
        }
    };
    if let Some(valve) = pre.stop {
        if axis.own_endpoints() {
            // A service of its own asked to be left alone: this target only.
            let why = render::warnings::target_preflight_backed_off(&valve);
            let e = ProbeError {
                kind: probe::ErrorKind::Error,
                text: why.clone(),
            };
            return VariantCheck::CannotRun(why, e);
        }
        return VariantCheck::BackOff(pre, valve);
    }
    let http = version_mismatch(v.config.http_version, pre.proto)
        .map(|_| render::warnings::variant_answered_over(pre.proto));
    let tls = match (v.config.settings.tls_max, pre.tls) {
        (Some(max), Some(tls)) if tls.version != max.openssl_name() => {
            Some(render::warnings::variant_negotiated(&tls))
        }
        _ => None,
    };
    // A variant that sends early data against a server that takes none
    // would only repeat the other variant.
    let early = pre
        .tls
        .filter(|_| v.config.settings.early_data)
        .and_then(|tls| render::warnings::variant_without_early_data(&tls));
    match http.or(tls).or(early) {
        Some(text) => VariantCheck::CannotRun(
            text.clone(),
            ProbeError {
                kind: probe::ErrorKind::Error,
                text,
            },
        ),
        None => VariantCheck::Runs(pre),
    }
}

/// What the run's facts (`run.target`, `run.url`) describe: the run's
/// configuration, or with `--compare target=` the variant's own, since the
/// preflight the facts come from went to that target.
fn run_config<'a>(
    cmp: &probe::Compare,
    v: &'a probe::Variant,
    cfg: &'a probe::Config,
) -> &'a probe::Config {
    if cmp.axis.own_endpoints() {
        &v.config
    } else {
        cfg
    }
}

/// The addresses `--compare addr` (without a list) compares: at least two,
/// or the run ends here.
fn compared_addresses(cfg: &probe::Config, env: &ProbeEnv) -> Result<Vec<IpAddr>, NoRounds> {
    let host = &cfg.target.host;
    let (kind, text) =
        match probe::addresses_of(host, cfg.target.port, cfg.settings.timeout, &env.cancel) {
            Ok(found) if found.len() >= 2 => return Ok(found),
            Ok(found) => (
                probe::ErrorKind::Error,
                render::warnings::one_address(host, found[0]),
            ),
            Err(probe::AddressLookupError::Interrupted) => return Err(interrupted(cfg, None)),
            Err(e) => (
                probe::ErrorKind::DnsFail,
                render::warnings::address_lookup_failed(host, &e),
            ),
        };
    let why = text.clone();
    let info = probe::run_info_failed(cfg, ProbeError { kind, text });
    Err(NoRounds::new(info, Some(why)))
}

/// A run whose server asked every client to back off at a preflight: no
/// rounds, `run` as that preflight settled it, every variant listed.
fn backed_off(
    mut run: RunInfo,
    valve: &probe::Valve,
    axis: probe::Axis,
    variants: Vec<probe::VariantInfo>,
) -> NoRounds {
    run.preflight_error = Some(ProbeError {
        kind: probe::ErrorKind::Error,
        text: render::warnings::valve(valve),
    });
    run.compare = Some(probe::CompareInfo {
        axis,
        variants,
        probes_per_round: 0,
    });
    NoRounds::new(run, None)
}

/// `--compare`: a preflight per variant. A variant whose preflight fails, or
/// that the server answers in another way than it asks (HTTP/1.1 to an
/// HTTP/2 variant), or a target whose server asks it to back off, cannot
/// run: it is reported once and the others go on.
fn plan_compare(
    opts: &Options,
    cmp: &probe::Compare,
    env: &ProbeEnv,
    warnings: &mut Warnings,
) -> Result<Ready, NoRounds> {
    let cfg = &opts.config;
    let addrs = if cmp.looks_up_addresses() {
        compared_addresses(cfg, env)?
    } else {
        Vec::new()
    };
    let variants = probe::variants(cfg, cmp, &addrs);
    let mut infos = Vec::new();
    let mut lanes = Vec::new();
    let mut first: Option<(probe::Preflight, RunInfo)> = None;
    let mut first_error: Option<ProbeError> = None;
    let info_of = |v: &probe::Variant| probe::VariantInfo::new(&v.label, &v.value);
    for (index, v) in variants.iter().enumerate() {
        let mut info = info_of(v);
        let checked = (!env.cancel.is_canceled()).then(|| check_variant(cmp.axis, v, env));
        let Some(checked) = checked.filter(|_| !env.cancel.is_canceled()) else {
            // A signal before round 1: no more preflights, and no variant
            // is reported as one that cannot run.
            infos.extend(variants[index..].iter().map(info_of));
            return Err(interrupted(cfg, Some((cmp.axis, infos))));
        };
        let pre = match checked {
            VariantCheck::Runs(pre) => pre,
            VariantCheck::CannotRun(why, e) => {
                warnings.warn(render::warnings::variant_cannot_run(
                    cmp.axis, &v.label, &why,
                ));
                first_error.get_or_insert_with(|| e.clone());
                info.unavailable = Some(e);
                infos.push(info);
                continue;
            }
            VariantCheck::BackOff(pre, valve) => {
                // The server asked clients to back off: that holds for every
                // variant, including those not tried.
                warnings.warn(render::warnings::preflight_valve(&valve, Some(&v.label)));
                infos.extend(variants[index..].iter().map(info_of));
                let run = probe::run_info(run_config(cmp, v, cfg), &pre);
                return Err(backed_off(run, &valve, cmp.axis, infos));
            }
        };
        info.addr = pre.addr;
        info.proto = pre.proto;
        info.tls = pre.tls;
        if cmp.axis.own_endpoints() {
            // Each endpoint's own redirect and certificate, named.
            preflight_warnings(&pre, &v.config.target, Some(&v.label), warnings);
        }
        lanes.push(VariantSetup {
            variant: index as u8,
            config: v.config.clone(),
            method: pre.method.clone(),
            dial: if v.config.pin_ip { pre.addr } else { None },
        });
        infos.push(info);
        if first.is_none() {
            let run = probe::run_info(run_config(cmp, v, cfg), &pre);
            first = Some((pre, run));
        }
    }
    let planned = Planned {
        infos,
        lanes,
        first,
        first_error,
    };
    settle(cfg, cmp, planned, warnings)
}

/// What the preflights of a comparison found, variant by variant.
struct Planned {
    infos: Vec<probe::VariantInfo>,
    lanes: Vec<VariantSetup>,
    /// The first variant that runs: its preflight and the run's facts.
    first: Option<(probe::Preflight, RunInfo)>,
    /// Why the first variant that cannot run cannot.
    first_error: Option<ProbeError>,
}

/// The comparison's plan: its variants and lanes, or a run that ends here
/// when no variant can run.
fn settle(
    cfg: &probe::Config,
    cmp: &probe::Compare,
    planned: Planned,
    warnings: &mut Warnings,
) -> Result<Ready, NoRounds> {
    let Planned {
        infos,
        lanes,
        first,
        first_error,
    } = planned;
    let modes = if cfg.settings.mode == probe::ModeChoice::Both {
        2
    } else {
        1
    };
    let compare = probe::CompareInfo {
        axis: cmp.axis,
        variants: infos,
        probes_per_round: lanes.len() * modes,
    };
    let Some((pre, mut info)) = first else {
        let e = first_error.unwrap_or(ProbeError {
            kind: probe::ErrorKind::Error,
            text: render::warnings::NO_VARIANT_CAN_RUN.into(),
        });
        let mut info = probe::run_info_failed(cfg, e);
        info.compare = Some(compare);
        let why = render::warnings::no_variant_can_run(cmp.axis);
        return Err(NoRounds::new(info, Some(why)));
    };
    info.compare = Some(compare);
    if !cmp.axis.own_endpoints() {
        preflight_warnings(&pre, &cfg.target, None, warnings);
    }
    Ok(Ready { info, lanes })
}

//! Before round 1: the preflight (one per variant with `--compare`), what it
//! settles for the rounds, the warnings its answers earn, and why a run
//! that ends here ended (`EndReason`), all as data.

use std::net::IpAddr;

use crate::cli::Options;
use crate::probe::{self, EndReason, ProbeEnv, RunInfo, VariantSetup};
use crate::render::Warnings;
use crate::stats::Warning;

use super::CERT_WARN_DAYS;

/// What the rounds need: the run's facts and one lane per variant that can run.
pub(super) struct Ready {
    pub info: RunInfo,
    pub lanes: Vec<VariantSetup>,
}

/// A run that ends before round 1: the facts known so far and why it ended
/// (`info.preflight_error`), for the outputs to write and for stderr.
pub(super) struct NoRounds {
    pub info: Box<RunInfo>,
    /// A warning has said why already (a safety valve): stderr says no more.
    pub told: bool,
}

impl NoRounds {
    /// A run of `info` that ends here (`info.preflight_error` says why).
    fn new(info: RunInfo) -> NoRounds {
        NoRounds {
            info: Box::new(info),
            told: false,
        }
    }

    /// A run whose preflight was answered (`info`) that ends for `why`.
    fn answered(mut info: RunInfo, why: EndReason) -> NoRounds {
        info.preflight_error = Some(why);
        NoRounds::new(info)
    }

    /// What `Exit` says of it on stderr: why it ended, unless a warning
    /// said so.
    pub fn last_words(&self) -> Option<EndReason> {
        self.info.preflight_error.clone().filter(|_| !self.told)
    }
}

/// A run a signal ended before round 1 (during a preflight or the address
/// lookup): nothing was measured, and the exit code is the signal's.
fn interrupted(
    cfg: &probe::Config,
    compared: Option<(probe::Axis, Vec<probe::VariantInfo>)>,
) -> NoRounds {
    let mut info = probe::run_info_failed(cfg, EndReason::Interrupted);
    info.compare = compared.map(|(axis, variants)| probe::CompareInfo {
        axis,
        variants,
        probes_per_round: 0,
    });
    NoRounds::new(info)
}

/// `--http-version` asked for one version and the preflight got another.
fn version_mismatch(asked: probe::HttpVersion, got: Option<probe::Proto>) -> Option<EndReason> {
    let want = match asked {
        probe::HttpVersion::Auto => return None,
        probe::HttpVersion::V2 => probe::Proto::H2,
        probe::HttpVersion::V1_1 => probe::Proto::Http11,
    };
    let got = got?;
    (got != want).then_some(EndReason::HttpVersionRefused { asked, got })
}

/// Warnings the preflight's answer earns: a redirect, a plain request to
/// a TLS port, a certificate near its end; `of` names the `--compare
/// target=` endpoint it came from.
fn preflight_warnings(
    pre: &probe::Preflight,
    target: &probe::Target,
    of: Option<&str>,
    warnings: &mut Warnings,
) {
    let of = || of.map(str::to_string);
    if let Some(location) = &pre.redirect {
        warnings.warn(Warning::Redirect {
            of: of(),
            status: pre.status,
            location: location.clone(),
        });
    }
    if pre.plain_http_to_tls_port {
        warnings.warn(Warning::PlainHttpToTlsPort {
            of: of(),
            target: target.clone(),
            status: pre.status,
        });
    }
    if let Some(tls) = pre.tls {
        if let Some(days) = tls.cert_days_left.filter(|&d| d < CERT_WARN_DAYS) {
            warnings.warn(Warning::CertificateExpiry {
                of: of(),
                days_left: days,
                expired: tls.cert_expired,
            });
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
            return Err(NoRounds::new(probe::run_info_preflight_failed(cfg, failed)));
        }
    };
    if let Some(valve) = pre.stop {
        // The server already asked us to back off: no rounds at all.
        warnings.warn(Warning::PreflightValve { of: None, valve });
        return Err(NoRounds {
            told: true,
            ..NoRounds::answered(probe::run_info(cfg, &pre), EndReason::Valve(valve))
        });
    }
    if let Some(refused) = version_mismatch(cfg.http_version, pre.proto) {
        // Asking for a version means that version or nothing.
        return Err(NoRounds::answered(probe::run_info(cfg, &pre), refused));
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
    /// Why it cannot run at all.
    CannotRun(EndReason),
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
        Err(failed) => return VariantCheck::CannotRun(EndReason::PreflightFailed(failed)),
    };
    if let Some(valve) = pre.stop {
        if axis.own_endpoints() {
            // A service of its own asked to be left alone: this target only.
            return VariantCheck::CannotRun(EndReason::TargetBackedOff(valve));
        }
        return VariantCheck::BackOff(pre, valve);
    }
    let http = version_mismatch(v.config.http_version, pre.proto)
        .map(|_| EndReason::AnsweredOver(pre.proto));
    let tls = match (v.config.settings.tls_max, pre.tls) {
        (Some(max), Some(tls)) if tls.version != max.openssl_name() => {
            Some(EndReason::Negotiated(tls))
        }
        _ => None,
    };
    // A variant that sends early data against a server that takes none
    // would only repeat the other variant.
    let early = pre
        .tls
        .filter(|tls| v.config.settings.early_data && tls.refuses_early_data())
        .map(EndReason::NoEarlyData);
    match http.or(tls).or(early) {
        Some(why) => VariantCheck::CannotRun(why),
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
    let host = cfg.target.host.clone();
    let why = match probe::addresses_of(&host, cfg.target.port, cfg.settings.timeout, &env.cancel) {
        Ok(found) if found.len() >= 2 => return Ok(found),
        Ok(found) => EndReason::OneAddress {
            host,
            addr: found[0],
        },
        Err(probe::AddressLookupError::Interrupted) => return Err(interrupted(cfg, None)),
        Err(error) => EndReason::AddressLookupFailed { host, error },
    };
    Err(NoRounds::new(probe::run_info_failed(cfg, why)))
}

/// A run whose server asked every client to back off at a preflight: no
/// rounds, `run` as that preflight settled it, every variant listed.
fn backed_off(
    mut run: RunInfo,
    valve: probe::Valve,
    axis: probe::Axis,
    variants: Vec<probe::VariantInfo>,
) -> NoRounds {
    run.compare = Some(probe::CompareInfo {
        axis,
        variants,
        probes_per_round: 0,
    });
    // The warning said why (`Warning::PreflightValve`).
    NoRounds {
        told: true,
        ..NoRounds::answered(run, EndReason::Valve(valve))
    }
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
    let mut first_error: Option<EndReason> = None;
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
            VariantCheck::CannotRun(why) => {
                warnings.warn(Warning::VariantCannotRun {
                    axis: cmp.axis,
                    label: v.label.clone(),
                    why: why.clone(),
                });
                first_error.get_or_insert_with(|| why.clone());
                info.unavailable = Some(why);
                infos.push(info);
                continue;
            }
            VariantCheck::BackOff(pre, valve) => {
                // The server asked clients to back off: that holds for every
                // variant, including those not tried.
                warnings.warn(Warning::PreflightValve {
                    of: Some(v.label.clone()),
                    valve,
                });
                infos.extend(variants[index..].iter().map(info_of));
                let run = probe::run_info(run_config(cmp, v, cfg), &pre);
                return Err(backed_off(run, valve, cmp.axis, infos));
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
    first_error: Option<EndReason>,
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
        let why = EndReason::NoVariantCanRun {
            axis: cmp.axis,
            first: first_error.map(Box::new),
        };
        let mut info = probe::run_info_failed(cfg, why);
        info.compare = Some(compare);
        return Err(NoRounds::new(info));
    };
    info.compare = Some(compare);
    if !cmp.axis.own_endpoints() {
        preflight_warnings(&pre, &cfg.target, None, warnings);
    }
    Ok(Ready { info, lanes })
}

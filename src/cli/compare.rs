//! `--compare AXIS[=A,B,...]`: the axis and its values, read from
//! `probe::AXES`, and whether the rest of the command line leaves the axis
//! free to vary (`fixed_by`: which flags fix what each axis varies); the
//! words of every refusal are the command line's.

use crate::probe::{
    Axis, AxisSpec, AxisValue, Compare, ComparedValue, Config, Defaults, Requirement, Values, AXES,
    MAX_VARIANTS,
};

use super::connection::parse_curves;
use super::UsageError;

/// The axes' names, as the shell completions offer them for `--compare`.
pub const AXIS_NAMES: [&str; AXES.len()] = {
    let mut names = [""; AXES.len()];
    let mut i = 0;
    while i < AXES.len() {
        names[i] = AXES[i].name;
        i += 1;
    }
    names
};

/// The flags that fix what an axis varies: clap's ids of the arguments,
/// and how an error names them.
struct FixedBy {
    ids: &'static [&'static str],
    named: &'static str,
}

/// Which flags fix what `axis` varies; a new axis gets its arm here.
fn fixed_by(axis: Axis) -> FixedBy {
    let (ids, named): (&'static [&'static str], _) = match axis {
        Axis::Ip => (&["ipv4", "ipv6", "calibrate"], "-4/-6"),
        Axis::Addr => (
            &["resolve", "connect_to", "calibrate"],
            "--resolve/--connect-to",
        ),
        Axis::Tls => (&["tls_max"], "--tls-max"),
        Axis::Group => (&["curves"], "--curves"),
        Axis::Http => (&["http_version"], "--http-version"),
        Axis::Resume => (&["resume"], "--resume"),
        Axis::EarlyData => (&["early_data"], "--early-data"),
        // Every other flag applies to each target alike (-4/-6, --resolve and
        // --connect-to entries match the targets they name).
        Axis::Target => (
            &["target", "calibrate"],
            "the positional target or --calibrate",
        ),
    };
    FixedBy { ids, named }
}

/// `--compare`'s value as typed: `parse` reads it once the other flags are known.
pub fn axis_text(v: &str) -> Result<String, String> {
    Ok(v.to_string())
}

/// The help of `--compare`: every axis with its default values.
pub fn help() -> String {
    let axes: Vec<String> = AXES
        .iter()
        .map(|spec| {
            let defaults = match spec.defaults {
                Defaults::Values(values) => values.join(","),
                Defaults::EveryAddress => "every address, or the ones listed".into(),
                Defaults::Listed => {
                    format!("2 to {MAX_VARIANTS} URLs, listed; they replace the positional target")
                }
            };
            format!("{} ({defaults})", spec.name)
        })
        .collect();
    let (last, rest) = axes.split_last().expect("AXES is not empty");
    format!(
        "Compare ways of connecting in the same rounds: {} or {last}. Every value adds its own \
         probes to each round",
        rest.join(", ")
    )
}

/// The values as typed, or the axis's defaults when none are.
fn value_texts(
    name: &str,
    list: Option<&str>,
    defaults: &Defaults,
) -> Result<Vec<String>, UsageError> {
    Ok(match (list, defaults) {
        (Some(l), _) => l
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        (None, Defaults::Values(values)) => values.iter().map(|s| s.to_string()).collect(),
        (None, Defaults::EveryAddress) => Vec::new(),
        (None, Defaults::Listed) => {
            return Err(UsageError(format!(
                "--compare {name} needs its values: --compare {name}=A,B[,...]"
            )));
        }
    })
}

/// Parses `--compare`, checks its values and that no other flag the user
/// gave (`given`, by clap id) fixes the same thing.
pub fn parse(
    v: &str,
    given: &dyn Fn(&str) -> bool,
    config: &Config,
) -> Result<Compare, UsageError> {
    let (name, list) = match v.split_once('=') {
        Some((n, l)) => (n.trim(), Some(l)),
        None => (v.trim(), None),
    };
    let spec = Axis::parse(name).map(Axis::spec).ok_or_else(|| {
        let names: Vec<&str> = AXES.iter().map(|s| s.name).collect();
        UsageError(format!(
            "--compare '{name}' is not one of {}",
            names.join(", ")
        ))
    })?;
    if list.is_some_and(|l| l.trim().trim_matches(',').is_empty()) {
        return Err(UsageError(format!(
            "--compare {name}= lists no values (drop the '=' for the defaults)"
        )));
    }
    let texts = value_texts(name, list, &spec.defaults)?;
    let flag = format!("--compare {}", spec.name);
    let read = |texts: Vec<String>| {
        texts
            .into_iter()
            .map(|text| value_of(spec, &flag, text))
            .collect::<Result<Vec<_>, _>>()
    };
    // A spelling outside a fixed list is refused before a conflict is looked
    // for; an address or a group is read after.
    let fixed_list = matches!(spec.values, Values::OneOf(_));
    let mut values = if fixed_list {
        read(texts.clone())?
    } else {
        Vec::new()
    };
    let fixed = fixed_by(spec.axis);
    if fixed.ids.iter().any(|id| given(id)) {
        return Err(UsageError(format!(
            "{flag} varies what {} fixes; drop one of them",
            fixed.named
        )));
    }
    if !fixed_list {
        values = read(texts)?;
    }
    for requirement in spec.requires {
        check(*requirement, &flag, &values, config)?;
    }
    if values.is_empty() {
        // Every address the name resolves to, found when the run starts.
        return Ok(Compare {
            axis: spec.axis,
            values,
        });
    }
    check_count(&flag, &values)?;
    Ok(Compare {
        axis: spec.axis,
        values,
    })
}

/// A list compares 2 to `MAX_VARIANTS` values, none twice.
fn check_count(flag: &str, values: &[ComparedValue]) -> Result<(), UsageError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].iter().any(|earlier| earlier.text == v.text) {
            return Err(UsageError(format!("{flag}: '{}' is listed twice", v.text)));
        }
    }
    if values.len() < 2 {
        return Err(UsageError(format!(
            "{flag} needs at least two values to compare"
        )));
    }
    if values.len() > MAX_VARIANTS {
        return Err(UsageError(format!(
            "{flag}: at most {MAX_VARIANTS} values (each adds probes to every round)"
        )));
    }
    Ok(())
}

/// One value as typed, read once into what it sets.
fn value_of(spec: &AxisSpec, flag: &str, text: String) -> Result<ComparedValue, UsageError> {
    let value = match spec.values {
        Values::OneOf(allowed) => match allowed.iter().find(|(s, _)| *s == text) {
            Some((_, value)) => value.clone(),
            None => {
                let names: Vec<&str> = allowed.iter().map(|(s, _)| *s).collect();
                return Err(UsageError(format!(
                    "{flag}: '{text}' is not one of {}",
                    names.join(", ")
                )));
            }
        },
        Values::Address => {
            let bare = text.trim_start_matches('[').trim_end_matches(']');
            let ip = bare
                .parse::<std::net::IpAddr>()
                .map_err(|_| UsageError(format!("{flag}: '{text}' is not an IP address")))?;
            return Ok(ComparedValue {
                text: bare.to_string(),
                value: AxisValue::Addr(ip),
            });
        }
        Values::Url => {
            let target = url_value(flag, &text)?;
            // Told apart (and shown in `run.compare`) as normalised.
            return Ok(ComparedValue {
                text: target.url(),
                value: AxisValue::Target(target),
            });
        }
        Values::Group => {
            if text.contains(':') {
                return Err(UsageError(format!(
                    "{flag}: '{text}': one group per variant (commas separate variants)"
                )));
            }
            let group = parse_curves(&text)?;
            return Ok(ComparedValue {
                text: group.clone(),
                value: AxisValue::Group(group),
            });
        }
    };
    Ok(ComparedValue { text, value })
}

/// A URL value (`Values::Url`), read as the positional target is.
fn url_value(flag: &str, text: &str) -> Result<crate::probe::Target, UsageError> {
    super::target::target_arg(text).map_err(|why| UsageError(format!("{flag}: {why}")))
}

/// The targets an axis of URLs (`--compare target=...`) lists, read before
/// the rest of the command line so the first can stand for the run's
/// target (its baseline); empty for every other axis. `parse` checks the
/// list as a whole.
pub fn listed_targets(compare: Option<&str>) -> Result<Vec<crate::probe::Target>, UsageError> {
    let Some(v) = compare else {
        return Ok(Vec::new());
    };
    let (name, list) = v.split_once('=').unwrap_or((v, ""));
    let takes_urls =
        Axis::parse(name.trim()).is_some_and(|a| matches!(a.spec().values, Values::Url));
    if !takes_urls {
        return Ok(Vec::new());
    }
    let flag = format!("--compare {}", name.trim());
    if list.trim().trim_matches(',').is_empty() {
        return Err(UsageError(format!(
            "{flag} needs its values: {flag}=A,B[,...]"
        )));
    }
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|text| url_value(&flag, text))
        .collect()
}

/// Whether the run gives the axis what it needs.
fn check(
    requirement: Requirement,
    flag: &str,
    values: &[ComparedValue],
    config: &Config,
) -> Result<(), UsageError> {
    match requirement {
        Requirement::Https if !config.target.https => Err(UsageError(format!(
            "{flag} compares TLS handshakes, and {} is plain http://",
            config.target.url()
        ))),
        Requirement::Resumption if config.settings.mode == crate::probe::ModeChoice::Warm => {
            Err(UsageError(format!(
                "{flag}: resumption happens on cold probes (a kept connection makes no \
                 handshake); use -m cold or -m both"
            )))
        }
        Requirement::EarlyData if values.iter().any(|v| v.value == AxisValue::Switch(true)) => {
            match super::connection::early_data_refusal(config) {
                Some(why) => Err(UsageError(format!("{flag}: {why}"))),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ModeChoice, TlsMax};

    fn free(_: &str) -> bool {
        false
    }

    fn cfg() -> Config {
        Config::new(crate::probe::Target::parse("https://example.test/").unwrap())
    }

    fn texts(c: &Compare) -> Vec<&str> {
        c.values.iter().map(|v| v.text.as_str()).collect()
    }

    #[test]
    fn axes_take_their_defaults_or_a_list() {
        let c = parse("tls", &free, &cfg()).unwrap();
        assert_eq!((c.axis, texts(&c)), (Axis::Tls, vec!["1.2", "1.3"]));
        assert_eq!(c.values[0].value, AxisValue::Tls(TlsMax::V1_2));
        let c = parse("group=x25519,p-256", &free, &cfg()).unwrap();
        assert_eq!(texts(&c), ["X25519", "P-256"]);
        assert_eq!(c.values[1].value, AxisValue::Group("P-256".into()));
        let c = parse("addr", &free, &cfg()).unwrap();
        assert!(c.looks_up_addresses());
        let c = parse("addr=127.0.0.2,[::1]", &free, &cfg()).unwrap();
        assert_eq!(texts(&c), ["127.0.0.2", "::1"]);
        assert_eq!(c.values[1].value, AxisValue::Addr("::1".parse().unwrap()));
        let c = parse("http=2,1.1", &free, &cfg()).unwrap();
        assert_eq!(texts(&c), ["2", "1.1"]);
        let c = parse("early-data", &free, &cfg()).unwrap();
        assert_eq!(c.values[1].value, AxisValue::Switch(true));
    }

    #[test]
    fn bad_values_and_conflicts_are_usage_errors() {
        assert!(parse("speed", &free, &cfg())
            .unwrap_err()
            .0
            .ends_with("is not one of ip, addr, tls, group, http, resume, early-data, target"));
        assert!(parse("tls=1.1,1.3", &free, &cfg()).is_err());
        assert!(parse("tls=1.3", &free, &cfg()).is_err());
        assert!(parse("tls=1.3,1.3", &free, &cfg()).is_err());
        assert!(parse("group=X25519,nosuch", &free, &cfg()).is_err());
        assert!(parse("addr=127.0.0.1,localhost", &free, &cfg()).is_err());
        let tls_max_given = |id: &str| id == "tls_max";
        assert_eq!(
            parse("tls", &tls_max_given, &cfg()).unwrap_err().0,
            "--compare tls varies what --tls-max fixes; drop one of them"
        );
        let mut plain = cfg();
        plain.target.https = false;
        assert!(parse("tls", &free, &plain).is_err());
        let mut off = cfg();
        off.settings.resume = false;
        assert!(parse("early-data", &free, &off).is_err());
        assert!(parse("early-data=off,off", &free, &off).is_err());
        let resume_given = |id: &str| id == "resume";
        assert!(parse("resume", &resume_given, &cfg()).is_err());
        let mut warm = cfg();
        warm.settings.mode = ModeChoice::Warm;
        assert!(parse("resume", &free, &warm).is_err());
        assert!(parse("resume", &free, &plain).is_err());
        assert!(parse("addr=", &free, &cfg()).is_err());
        let calibrating = |id: &str| id == "calibrate";
        assert!(parse("ip", &calibrating, &cfg()).is_err());
        assert!(parse("addr", &calibrating, &cfg()).is_err());
        let mut post = cfg();
        post.method = Some("POST".into());
        assert!(parse("early-data", &free, &post).is_err());
    }

    #[test]
    fn targets_are_read_as_the_positional_target_is() {
        let c = parse("target=cdn.test, http://origin.test:8080/x", &free, &cfg()).unwrap();
        assert_eq!(
            texts(&c),
            ["https://cdn.test/", "http://origin.test:8080/x"]
        );
        assert!(c.has_https_target());
        let listed = listed_targets(Some("target=a.test,b.test")).unwrap();
        assert_eq!(listed[1].host, "b.test");
        assert!(listed_targets(Some("tls=1.2,1.3")).unwrap().is_empty());
        assert_eq!(
            listed_targets(Some("target=")).unwrap_err().0,
            "--compare target needs its values: --compare target=A,B[,...]"
        );
        assert_eq!(
            parse("target=a.test,ftp://b.test", &free, &cfg())
                .unwrap_err()
                .0,
            "--compare target: scheme 'ftp' is not supported; use https:// or http://"
        );
        // The same URL however it is typed.
        assert!(parse("target=a.test,https://a.test:443/", &free, &cfg()).is_err());
        let nine: Vec<String> = (1..=9).map(|i| format!("h{i}.test")).collect();
        assert!(parse(&format!("target={}", nine.join(",")), &free, &cfg()).is_err());
        assert!(parse("target=a.test", &free, &cfg()).is_err());
        let positional = |id: &str| id == "target";
        assert!(parse("target=a.test,b.test", &positional, &cfg()).is_err());
    }

    #[test]
    fn every_flag_that_fixes_an_axis_is_one_of_the_arguments() {
        let cmd = <super::super::Args as clap::CommandFactory>::command();
        for spec in &AXES {
            for id in fixed_by(spec.axis).ids {
                assert!(
                    cmd.get_arguments().any(|a| a.get_id() == id),
                    "{}: no argument '{id}'",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn the_help_lists_every_axis_with_its_defaults() {
        assert_eq!(
            help(),
            "Compare ways of connecting in the same rounds: ip (4,6), addr (every address, or \
             the ones listed), tls (1.2,1.3), group (X25519,X25519MLKEM768), http (1.1,2), \
             resume (on,off), early-data (off,on) or target (2 to 8 URLs, listed; they replace \
             the positional target). Every value adds its own probes to each round"
        );
    }

    #[test]
    fn both_editions_list_every_axis_with_its_defaults() {
        // Read when the test runs: the Korean edition comes from its own branch.
        for name in ["docs/compare.md", "docs/ko/compare.md"] {
            let path = format!("{}/{name}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            for spec in &AXES {
                let row = match spec.defaults {
                    Defaults::Values(values) => {
                        format!("| `{}` | `{}` |", spec.name, values.join(","))
                    }
                    Defaults::EveryAddress | Defaults::Listed => format!("| `{}` | ", spec.name),
                };
                assert!(text.contains(&row), "{name}: no row {row}");
            }
        }
    }
}

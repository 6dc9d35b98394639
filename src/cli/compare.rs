//! `--compare AXIS[=A,B,...]`: which axis, which values, and whether the
//! rest of the command line leaves that axis free to vary.

use crate::probe::{Axis, Compare, Config, ModeChoice, MAX_VARIANTS};

use super::connection::parse_curves;
use super::UsageError;

/// What the rest of the command line set that an axis would vary.
pub struct Fixed {
    pub ip_family: bool,
    pub tls_max: bool,
    pub curves: bool,
    pub http_version: bool,
    pub early_data: bool,
    pub resume: bool,
    pub addresses: bool,
}

/// Parses `--compare`, checks its values and that nothing else on the
/// command line pins the same thing.
pub fn parse(v: &str, fixed: &Fixed, config: &Config) -> Result<Compare, UsageError> {
    let (name, list) = match v.split_once('=') {
        Some((n, l)) => (n.trim(), Some(l)),
        None => (v.trim(), None),
    };
    let axis = Axis::parse(name).ok_or_else(|| {
        UsageError(format!(
            "--compare '{name}' is not one of ip, addr, tls, group, http, resume, early-data"
        ))
    })?;
    if list.is_some_and(|l| l.trim().trim_matches(',').is_empty()) {
        return Err(UsageError(format!(
            "--compare {name}= lists no values (drop the '=' for the defaults)"
        )));
    }
    let mut values: Vec<String> = match list {
        Some(l) => l
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => axis
            .default_values()
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let flag = format!("--compare {}", axis.as_str());
    let conflict = |other: &str| {
        Err(UsageError(format!(
            "{flag} varies what {other} fixes; drop one of them"
        )))
    };
    let allowed: &[&str] = match axis {
        Axis::Ip => &["4", "6"],
        Axis::Tls => &["1.2", "1.3"],
        Axis::Http => &["1.1", "2"],
        Axis::Resume | Axis::EarlyData => &["on", "off"],
        Axis::Addr | Axis::Group => &[],
    };
    if !allowed.is_empty() {
        for value in &values {
            if !allowed.contains(&value.as_str()) {
                return Err(UsageError(format!(
                    "{flag}: '{value}' is not one of {}",
                    allowed.join(", ")
                )));
            }
        }
    }
    match axis {
        Axis::Ip if fixed.ip_family => return conflict("-4/-6"),
        Axis::Tls if fixed.tls_max => return conflict("--tls-max"),
        Axis::Group if fixed.curves => return conflict("--curves"),
        Axis::Http if fixed.http_version => return conflict("--http-version"),
        Axis::EarlyData if fixed.early_data => return conflict("--early-data"),
        Axis::Resume if fixed.resume => return conflict("--resume"),
        Axis::Addr if fixed.addresses => return conflict("--resolve/--connect-to"),
        _ => {}
    }
    if axis == Axis::Group {
        for value in values.iter_mut() {
            if value.contains(':') {
                return Err(UsageError(format!(
                    "{flag}: '{value}': one group per variant (commas separate variants)"
                )));
            }
            *value = parse_curves(value)?;
        }
    }
    if axis == Axis::Addr {
        for value in &values {
            let bare = value.trim_start_matches('[').trim_end_matches(']');
            if bare.parse::<std::net::IpAddr>().is_err() {
                return Err(UsageError(format!(
                    "{flag}: '{value}' is not an IP address"
                )));
            }
        }
        for value in values.iter_mut() {
            *value = value
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
        }
    }
    if !config.target.https
        && matches!(
            axis,
            Axis::Tls | Axis::Group | Axis::EarlyData | Axis::Resume
        )
    {
        return Err(UsageError(format!(
            "{flag} compares TLS handshakes, and {} is plain http://",
            config.target.url()
        )));
    }
    if axis == Axis::Resume && config.mode == ModeChoice::Warm {
        return Err(UsageError(format!(
            "{flag}: resumption happens on cold probes (a kept connection makes no \
             handshake); use -m cold or -m both"
        )));
    }
    if axis == Axis::EarlyData && values.iter().any(|v| v == "on") {
        if let Some(why) = super::connection::early_data_refusal(config) {
            return Err(UsageError(format!("{flag}: {why}")));
        }
    }
    if axis == Axis::Addr && values.is_empty() {
        // Every address the name resolves to, found when the run starts.
        return Ok(Compare { axis, values });
    }
    let mut seen = Vec::new();
    for value in &values {
        if seen.contains(value) {
            return Err(UsageError(format!("{flag}: '{value}' is listed twice")));
        }
        seen.push(value.clone());
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
    Ok(Compare { axis, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free() -> Fixed {
        Fixed {
            ip_family: false,
            tls_max: false,
            curves: false,
            http_version: false,
            early_data: false,
            resume: false,
            addresses: false,
        }
    }

    fn cfg() -> Config {
        Config::new(crate::probe::Target::parse("https://example.test/").unwrap())
    }

    #[test]
    fn axes_take_their_defaults_or_a_list() {
        let c = parse("tls", &free(), &cfg()).unwrap();
        assert_eq!(
            (c.axis, c.values),
            (Axis::Tls, vec!["1.2".into(), "1.3".into()])
        );
        let c = parse("group=x25519,p-256", &free(), &cfg()).unwrap();
        assert_eq!(c.values, ["X25519", "P-256"]);
        let c = parse("addr", &free(), &cfg()).unwrap();
        assert!(c.values.is_empty());
        let c = parse("addr=127.0.0.2,[::1]", &free(), &cfg()).unwrap();
        assert_eq!(c.values, ["127.0.0.2", "::1"]);
        let c = parse("http=2,1.1", &free(), &cfg()).unwrap();
        assert_eq!(c.values, ["2", "1.1"]);
    }

    #[test]
    fn bad_values_and_conflicts_are_usage_errors() {
        assert!(parse("speed", &free(), &cfg()).is_err());
        assert!(parse("tls=1.1,1.3", &free(), &cfg()).is_err());
        assert!(parse("tls=1.3", &free(), &cfg()).is_err());
        assert!(parse("tls=1.3,1.3", &free(), &cfg()).is_err());
        assert!(parse("group=X25519,nosuch", &free(), &cfg()).is_err());
        assert!(parse("addr=127.0.0.1,localhost", &free(), &cfg()).is_err());
        let fixed = Fixed {
            tls_max: true,
            ..free()
        };
        assert!(parse("tls", &fixed, &cfg())
            .unwrap_err()
            .0
            .contains("--tls-max"));
        let mut plain = cfg();
        plain.target.https = false;
        assert!(parse("tls", &free(), &plain).is_err());
        let mut off = cfg();
        off.resume = false;
        assert!(parse("early-data", &free(), &off).is_err());
        let resume_given = Fixed {
            resume: true,
            ..free()
        };
        assert!(parse("resume", &resume_given, &cfg()).is_err());
        let mut warm = cfg();
        warm.mode = ModeChoice::Warm;
        assert!(parse("resume", &free(), &warm).is_err());
        assert!(parse("resume", &free(), &plain).is_err());
        assert!(parse("addr=", &free(), &cfg()).is_err());
        let mut post = cfg();
        post.method = Some("POST".into());
        assert!(parse("early-data", &free(), &post).is_err());
    }
}

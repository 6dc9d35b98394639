//! The axes of `--compare`, one entry each: its name, the values it takes
//! and those compared by default, a value's label, how a value changes the
//! configuration, whose server each variant asks, and what it needs of the
//! run. The command line (parsing, checks, `--help`), the variants, the
//! plan before round 1 and the outputs read this table, so an axis over a
//! setting `Config` already has is one entry here (and a variant of
//! `Axis`); which flags fix what it varies is the command line's
//! (`cli::compare`). The target is one more entry, whose variants each
//! have a server of their own (`Endpoint::EachOwn`).

use std::net::IpAddr;

use super::config::{Config, HttpVersion, IpVersion, TlsMax};
use super::target::Target;

/// One value of a comparison: its text as shown (`run.compare[].value`)
/// and what it sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComparedValue {
    pub text: String,
    pub value: AxisValue,
}

/// What differs between the variants of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// IPv4 against IPv6 (`4`, `6`).
    Ip,
    /// Every address the name resolves to, or the ones listed.
    Addr,
    /// The highest TLS version offered (`1.2`, `1.3`).
    Tls,
    /// The key-exchange group offered (OpenSSL names).
    Group,
    /// The HTTP version (`1.1`, `2`).
    Http,
    /// TLS session resumption across cold probes (`on`, `off`).
    Resume,
    /// TLS 1.3 early data on resumed cold probes (`off`, `on`).
    EarlyData,
    /// The endpoint itself: two to eight URLs, each measured like the
    /// positional target.
    Target,
}

/// One value on an axis, typed when the command line reads it, so nothing
/// after it reads the text again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisValue {
    Ip(IpVersion),
    Addr(IpAddr),
    Tls(TlsMax),
    /// One group, as OpenSSL spells it.
    Group(String),
    Http(HttpVersion),
    /// A setting turned on or off.
    Switch(bool),
    Target(Target),
}

/// The values an axis takes.
pub enum Values {
    /// Exactly one of these spellings, each with its value.
    OneOf(&'static [(&'static str, AxisValue)]),
    /// An IP address (IPv6 bare or in brackets).
    Address,
    /// One key-exchange group this build's OpenSSL knows.
    Group,
    /// A host, host:port or URL, read as the positional target is.
    Url,
}

/// What an axis compares when it is given without a list.
pub enum Defaults {
    Values(&'static [&'static str]),
    /// Every address the target's name resolves to, looked up when the run starts.
    EveryAddress,
    /// None: the values have to be listed.
    Listed,
}

/// How the variants of an axis are labelled.
pub enum Labels {
    /// From each value's text alone.
    Each(fn(&str) -> String),
    /// From all the values together, so that the labels stay apart.
    Together(fn(&[ComparedValue]) -> Vec<String>),
}

/// What an axis needs of the rest of the run; the command line checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// An https:// target: the axis compares TLS handshakes.
    Https,
    /// Cold probes: only a new connection resumes a session.
    Resumption,
    /// What `--early-data` needs, when a value turns early data on.
    EarlyData,
}

/// Whose server the variants of an axis ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The run's: every variant asks the same server in another way, so
    /// the first preflight's facts (`run.target`, the certificate, its
    /// warnings) stand for all of them, and a request to back off holds
    /// for them all.
    Shared,
    /// Each variant's own, named by its value (a URL): each preflight's
    /// facts, certificate and warnings are the variant's, a preflight that
    /// fails is worded as a run's own, a request to back off holds for that
    /// variant alone, and the outputs name each variant's server.
    EachOwn,
}

/// Everything about one axis.
pub struct AxisSpec {
    pub axis: Axis,
    /// Its name on the command line and in every output (`run.compare.axis`).
    pub name: &'static str,
    pub values: Values,
    pub defaults: Defaults,
    /// The variants' labels in tables and JSON.
    pub labels: Labels,
    /// Makes a variant's configuration out of a copy of the run's.
    pub apply: fn(&mut Config, &AxisValue),
    pub endpoint: Endpoint,
    pub requires: &'static [Requirement],
}

const ON_OFF: &[(&str, AxisValue)] = &[
    ("on", AxisValue::Switch(true)),
    ("off", AxisValue::Switch(false)),
];

/// Every axis, in the order `--help` lists them (and `Axis` declares them).
pub static AXES: [AxisSpec; 8] = [
    AxisSpec {
        axis: Axis::Ip,
        name: "ip",
        values: Values::OneOf(&[
            ("4", AxisValue::Ip(IpVersion::V4)),
            ("6", AxisValue::Ip(IpVersion::V6)),
        ]),
        defaults: Defaults::Values(&["4", "6"]),
        labels: Labels::Each(|v| format!("IPv{v}")),
        apply: |c, v| {
            if let AxisValue::Ip(ip) = v {
                c.ip_version = *ip;
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[],
    },
    AxisSpec {
        axis: Axis::Addr,
        name: "addr",
        values: Values::Address,
        defaults: Defaults::EveryAddress,
        labels: Labels::Each(str::to_string),
        apply: |c, v| {
            if let AxisValue::Addr(ip) = v {
                // Bracketed: libcurl reads a `--resolve` address up to a colon.
                let ip = match ip {
                    IpAddr::V6(v6) => format!("[{v6}]"),
                    IpAddr::V4(v4) => v4.to_string(),
                };
                let entry = format!("{}:{}:{ip}", c.target.url_host(), c.target.port);
                c.settings.resolve.push(entry);
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[],
    },
    AxisSpec {
        axis: Axis::Tls,
        name: "tls",
        values: Values::OneOf(&[
            ("1.2", AxisValue::Tls(TlsMax::V1_2)),
            ("1.3", AxisValue::Tls(TlsMax::V1_3)),
        ]),
        defaults: Defaults::Values(&["1.2", "1.3"]),
        labels: Labels::Each(|v| format!("TLS{v}")),
        apply: |c, v| {
            if let AxisValue::Tls(max) = v {
                c.settings.tls_max = Some(*max);
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[Requirement::Https],
    },
    AxisSpec {
        axis: Axis::Group,
        name: "group",
        values: Values::Group,
        defaults: Defaults::Values(&["X25519", "X25519MLKEM768"]),
        labels: Labels::Each(str::to_string),
        apply: |c, v| {
            if let AxisValue::Group(name) = v {
                c.settings.curves = Some(name.clone());
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[Requirement::Https],
    },
    AxisSpec {
        axis: Axis::Http,
        name: "http",
        values: Values::OneOf(&[
            ("1.1", AxisValue::Http(HttpVersion::V1_1)),
            ("2", AxisValue::Http(HttpVersion::V2)),
        ]),
        defaults: Defaults::Values(&["1.1", "2"]),
        labels: Labels::Each(|v| format!("HTTP/{v}")),
        apply: |c, v| {
            if let AxisValue::Http(version) = v {
                c.http_version = *version;
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[],
    },
    AxisSpec {
        axis: Axis::Resume,
        name: "resume",
        values: Values::OneOf(ON_OFF),
        defaults: Defaults::Values(&["on", "off"]),
        labels: Labels::Each(|v| format!("resume={v}")),
        apply: |c, v| {
            if let AxisValue::Switch(on) = v {
                c.settings.resume = *on;
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[Requirement::Https, Requirement::Resumption],
    },
    AxisSpec {
        axis: Axis::EarlyData,
        name: "early-data",
        values: Values::OneOf(ON_OFF),
        defaults: Defaults::Values(&["off", "on"]),
        labels: Labels::Each(|v| format!("early-data={v}")),
        apply: |c, v| {
            if let AxisValue::Switch(on) = v {
                c.settings.early_data = *on;
            }
        },
        endpoint: Endpoint::Shared,
        requires: &[Requirement::Https, Requirement::EarlyData],
    },
    AxisSpec {
        axis: Axis::Target,
        name: "target",
        values: Values::Url,
        defaults: Defaults::Listed,
        labels: Labels::Together(target_labels),
        apply: |c, v| {
            if let AxisValue::Target(target) = v {
                c.target = target.clone();
            }
        },
        endpoint: Endpoint::EachOwn,
        requires: &[],
    },
];

/// The most characters a target's label has: a longer one keeps its start
/// and its end around `…`.
pub const MAX_TARGET_LABEL: usize = 40;

/// The parts of a target its label may show besides the host.
#[derive(Clone, Copy, Default)]
struct Shown {
    port: bool,
    path: bool,
    scheme: bool,
}

/// `t` as its label shows it: the host, then what `shown` adds. With the
/// scheme the text reads as a URL, so a port that is not the scheme's own
/// is shown as well.
fn target_text(t: &Target, shown: Shown) -> String {
    let default_port = if t.https { 443 } else { 80 };
    let mut text = String::new();
    if shown.scheme {
        text.push_str(if t.https { "https://" } else { "http://" });
    }
    text.push_str(&t.url_host());
    if shown.port || (shown.scheme && t.port != default_port) {
        text.push_str(&format!(":{}", t.port));
    }
    if shown.path {
        text.push_str(&t.path_and_query);
    }
    text
}

/// `text` cut to `max` characters: its start and its end around `…`.
fn middle_cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    out
}

/// Whether two of `labels` are the same.
fn repeats(labels: &[String]) -> bool {
    (1..labels.len()).any(|i| labels[..i].contains(&labels[i]))
}

/// The targets' labels: the shortest text that tells them apart, saying
/// what differs. The host, then a part added only where targets whose
/// labels are still the same differ in it: the port (`host:port`), the
/// path and query (`host/path`), the scheme (`http://host`). Every label
/// shows the same parts. At most `MAX_TARGET_LABEL` characters; two that
/// the cut makes the same are told apart by their place (`#2 …`).
fn target_labels(values: &[ComparedValue]) -> Vec<String> {
    let targets: Vec<&Target> = values
        .iter()
        .filter_map(|v| match &v.value {
            AxisValue::Target(t) => Some(t),
            _ => None,
        })
        .collect();
    let texts =
        |shown: Shown| -> Vec<String> { targets.iter().map(|t| target_text(t, shown)).collect() };
    let mut shown = Shown::default();
    type Part = (fn(&mut Shown), fn(&Target, &Target) -> bool);
    let parts: [Part; 3] = [
        (|s| s.port = true, |a, b| a.port != b.port),
        (
            |s| s.path = true,
            |a, b| a.path_and_query != b.path_and_query,
        ),
        (|s| s.scheme = true, |a, b| a.https != b.https),
    ];
    for (show, differ) in parts {
        let labels = texts(shown);
        let same_label_differ = (0..targets.len())
            .any(|i| (0..i).any(|j| labels[i] == labels[j] && differ(targets[i], targets[j])));
        if same_label_differ {
            show(&mut shown);
        }
    }
    let full = texts(shown);
    let cut: Vec<String> = full
        .iter()
        .map(|l| middle_cut(l, MAX_TARGET_LABEL))
        .collect();
    if !repeats(&cut) {
        return cut;
    }
    (0..cut.len())
        .map(|i| {
            if cut.iter().filter(|other| **other == cut[i]).count() == 1 {
                return cut[i].clone();
            }
            let place = format!("#{} ", i + 1);
            let room = MAX_TARGET_LABEL - place.chars().count();
            format!("{place}{}", middle_cut(&full[i], room))
        })
        .collect()
}

impl Labels {
    /// The labels of `values`, in their order.
    pub fn of(&self, values: &[ComparedValue]) -> Vec<String> {
        match self {
            Labels::Each(label) => values.iter().map(|v| label(&v.text)).collect(),
            Labels::Together(labels) => labels(values),
        }
    }
}

impl Axis {
    /// This axis's entry in `AXES`.
    pub fn spec(self) -> &'static AxisSpec {
        &AXES[self as usize]
    }

    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    pub fn parse(name: &str) -> Option<Axis> {
        AXES.iter().find(|s| s.name == name).map(|s| s.axis)
    }

    /// Each variant asks a server of its own (`Endpoint::EachOwn`).
    pub fn own_endpoints(self) -> bool {
        self.spec().endpoint == Endpoint::EachOwn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_axis_finds_its_own_entry_by_value_and_by_name() {
        for (index, spec) in AXES.iter().enumerate() {
            assert_eq!(spec.axis as usize, index, "{} out of place", spec.name);
            assert_eq!(Axis::parse(spec.name), Some(spec.axis));
            assert_eq!(spec.axis.as_str(), spec.name);
        }
        assert_eq!(Axis::parse("speed"), None);
    }

    fn target_labels_of(urls: &[&str]) -> Vec<String> {
        let values: Vec<ComparedValue> = urls
            .iter()
            .map(|u| ComparedValue {
                text: u.to_string(),
                value: AxisValue::Target(Target::parse(u).unwrap()),
            })
            .collect();
        Axis::Target.spec().labels.of(&values)
    }

    #[test]
    fn a_target_label_says_what_differs_and_no_more() {
        let labels = target_labels_of;
        // Hosts apart: the host alone, whatever else differs.
        assert_eq!(
            labels(&["cdn.test", "origin.test:8443/health"]),
            ["cdn.test", "origin.test"]
        );
        // One host: the port where the ports differ, the path where the paths do.
        assert_eq!(
            labels(&["a.test", "a.test:8443", "[::1]:9000"]),
            ["a.test:443", "a.test:8443", "[::1]:9000"]
        );
        assert_eq!(
            labels(&["tp.test/", "tp.test/slow"]),
            ["tp.test/", "tp.test/slow"]
        );
        assert_eq!(
            labels(&["tp.test/?q=1", "tp.test/?q=2"]),
            ["tp.test/?q=1", "tp.test/?q=2"]
        );
        // The path only where the port does not tell two apart.
        assert_eq!(
            labels(&["a.test/x", "a.test:8443/x", "a.test/y"]),
            ["a.test:443/x", "a.test:8443/x", "a.test:443/y"]
        );
        assert_eq!(
            labels(&["a.test:8443/x", "a.test:8443/y", "b.test/"]),
            ["a.test/x", "a.test/y", "b.test/"]
        );
        // The scheme, as a URL would say it (a port not the scheme's own shown).
        assert_eq!(
            labels(&["http://a.test:443/", "a.test"]),
            ["http://a.test:443", "https://a.test"]
        );
        // Reordered, each keeps its own label.
        assert_eq!(
            labels(&["tp.test/slow", "tp.test/"]),
            ["tp.test/slow", "tp.test/"]
        );
    }

    #[test]
    fn a_long_target_label_keeps_its_ends_and_stays_apart() {
        let long = "https://a-rather-long-host-name.example.test/api/v1/users/list";
        let other = "https://a-rather-long-host-name.example.test/api/v1/users/show";
        let got = target_labels_of(&[long, other]);
        for (label, end) in got.iter().zip(["users/list", "users/show"]) {
            assert_eq!(label.chars().count(), MAX_TARGET_LABEL, "{label}");
            assert!(label.starts_with("a-rather-long-host"), "{label}");
            assert!(label.ends_with(end) && label.contains('…'), "{label}");
        }
        // The same start and end, apart only in the middle: told apart by place.
        let a = "https://h.test/one/a-long-segment-1-that-the-cut-drops/the/same/end";
        let b = "https://h.test/one/a-long-segment-2-that-the-cut-drops/the/same/end";
        let got = target_labels_of(&[a, b, "https://h.test/"]);
        assert!(got[0].starts_with("#1 h.test/one/") && got[1].starts_with("#2 "));
        assert_eq!(got[2], "h.test/");
        assert!(got.iter().all(|l| l.chars().count() <= MAX_TARGET_LABEL));
        assert_ne!(got[0], got[1]);
    }

    #[test]
    fn fixed_values_include_their_defaults() {
        for spec in &AXES {
            if let (Values::OneOf(allowed), Defaults::Values(defaults)) =
                (&spec.values, &spec.defaults)
            {
                for d in *defaults {
                    assert!(allowed.iter().any(|(s, _)| s == d), "{}: {d}", spec.name);
                }
            }
        }
    }
}

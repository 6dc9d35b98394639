//! `--write-out FORMAT`: one sample as text in curl's `-w` syntax, so that
//! scripts written for `curl -w` read tlsping's samples unchanged.
//!
//! The rules are curl's own (`src/tool_writeout.c`): `%{name}` is a
//! variable, `%%` a literal `%`, `\n` `\r` `\t` are escapes, and anything
//! else, a lone `%` or `\` included, is printed as written (so `\\` stays two
//! backslashes, as in curl). Variable names match without regard to case,
//! as curl 7.88 matches them (later curl is strict; accepting both breaks no
//! script). Where curl warns about an unknown variable
//! and goes on, we refuse the format: a script must not read an empty field
//! as a measurement.

use std::io::Read;

use crate::probe::{CompareInfo, CurlTimers, Proto, Sample};

/// A parsed `--write-out` format, ready to render any number of samples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOut {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(Var),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Var {
    Time(Timer),
    HttpCode,
    HttpVersion,
    RemoteIp,
    RemotePort,
    NumConnects,
    Json,
    Mode,
    Round,
    Variant,
}

/// One of libcurl's cumulative timers, as curl's `time_*` variables name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Namelookup,
    Connect,
    Appconnect,
    Pretransfer,
    Posttransfer,
    Starttransfer,
    Total,
}

impl Timer {
    fn micros(self, t: &CurlTimers) -> u32 {
        match self {
            Timer::Namelookup => t.namelookup_us,
            Timer::Connect => t.connect_us,
            Timer::Appconnect => t.appconnect_us,
            Timer::Pretransfer => t.pretransfer_us,
            Timer::Posttransfer => t.posttransfer_us,
            Timer::Starttransfer => t.starttransfer_us,
            Timer::Total => t.total_us,
        }
    }
}

/// Every variable we know, curl's first, then ours (`mode`, `round`, `variant`).
const VARIABLES: [(&str, Var); 16] = [
    ("time_namelookup", Var::Time(Timer::Namelookup)),
    ("time_connect", Var::Time(Timer::Connect)),
    ("time_appconnect", Var::Time(Timer::Appconnect)),
    ("time_pretransfer", Var::Time(Timer::Pretransfer)),
    ("time_posttransfer", Var::Time(Timer::Posttransfer)),
    ("time_starttransfer", Var::Time(Timer::Starttransfer)),
    ("time_total", Var::Time(Timer::Total)),
    ("http_code", Var::HttpCode),
    ("http_version", Var::HttpVersion),
    ("remote_ip", Var::RemoteIp),
    ("remote_port", Var::RemotePort),
    ("num_connects", Var::NumConnects),
    ("json", Var::Json),
    ("mode", Var::Mode),
    ("round", Var::Round),
    ("variant", Var::Variant),
];

/// curl's directives with an argument of their own (`%header{date}`): no
/// sample of ours holds what they would print.
const CURL_DIRECTIVES: [&str; 3] = ["header", "output", "time"];

/// The `--write-out` argument as given: a format, `@file` or `@-` (stdin).
pub fn parse(arg: &str) -> Result<WriteOut, String> {
    parse_with_stdin(arg, &mut std::io::stdin().lock())
}

fn parse_with_stdin(arg: &str, stdin: &mut dyn Read) -> Result<WriteOut, String> {
    let Some(source) = arg.strip_prefix('@') else {
        return parse_format(arg);
    };
    let mut text = String::new();
    let read = if source == "-" {
        stdin.read_to_string(&mut text)
    } else {
        std::fs::File::open(source).and_then(|mut f| f.read_to_string(&mut text))
    };
    let name = if source == "-" { "stdin" } else { source };
    read.map_err(|e| format!("--write-out: cannot read {name}: {e}"))?;
    parse_format(&from_file(&text))
}

/// What curl keeps of a format read from a file: each line up to its first
/// CR, the lines joined without their newlines. A newline in the output
/// is written `\n` in the file, as on the command line.
fn from_file(text: &str) -> String {
    text.split('\n')
        .map(|line| line.split('\r').next().unwrap_or(""))
        .collect()
}

/// A format string itself (no `@file`).
pub fn parse_format(fmt: &str) -> Result<WriteOut, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = fmt;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        rest = match c {
            '%' => {
                if let Some(r) = after.strip_prefix('%') {
                    text.push('%');
                    r
                } else if let Some((name, r)) =
                    after.strip_prefix('{').and_then(|r| r.split_once('}'))
                {
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Var(lookup(name)?));
                    r
                } else if let Some(directive) = curl_directive(after) {
                    return Err(format!(
                        "--write-out: curl's %{directive} is not supported by tlsping"
                    ));
                } else {
                    // A lone `%`, `%{` never closed, or `%` before any other
                    // character: curl prints both characters as they are.
                    text.push('%');
                    match after.chars().next() {
                        Some(next) => {
                            text.push(next);
                            &after[next.len_utf8()..]
                        }
                        None => after,
                    }
                }
            }
            '\\' => match after.chars().next() {
                Some(next) => {
                    match next {
                        'n' => text.push('\n'),
                        'r' => text.push('\r'),
                        't' => text.push('\t'),
                        other => {
                            text.push('\\');
                            text.push(other);
                        }
                    }
                    &after[next.len_utf8()..]
                }
                None => {
                    text.push('\\');
                    after
                }
            },
            other => {
                text.push(other);
                after
            }
        };
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(WriteOut { pieces })
}

fn lookup(name: &str) -> Result<Var, String> {
    VARIABLES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, var)| var)
        .ok_or_else(|| {
            let known: Vec<&str> = VARIABLES.iter().map(|(n, _)| *n).collect();
            format!(
                "unknown --write-out variable: '{name}' (known: {})",
                known.join(", ")
            )
        })
}

/// `header{date}` in `%header{date}`, when `after` (what follows a `%`)
/// starts with one of curl's directives and its closing brace.
fn curl_directive(after: &str) -> Option<&str> {
    CURL_DIRECTIVES.iter().find_map(|d| {
        let arg = after.strip_prefix(d)?.strip_prefix('{')?;
        let end = arg.find('}')?;
        Some(&after[..d.len() + 1 + end + 1])
    })
}

impl WriteOut {
    /// One sample as the format asks; `compare` is the run's comparison,
    /// when it is one (`%{variant}` is empty otherwise).
    pub fn render(&self, s: &Sample, compare: Option<&CompareInfo>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Var(var) => write_var(&mut out, *var, s, compare),
            }
        }
        out
    }
}

fn write_var(out: &mut String, var: Var, s: &Sample, compare: Option<&CompareInfo>) {
    use std::fmt::Write as _;
    let _ = match var {
        Var::Time(timer) => out.write_str(&seconds(timer.micros(&s.timers))),
        // curl: `%03ld`, so no response is `000`.
        Var::HttpCode => write!(out, "{:03}", s.status),
        Var::HttpVersion => out.write_str(http_version(s.proto)),
        // curl prints an empty address and port 0 when no connection was made.
        Var::RemoteIp => match s.addr {
            Some(addr) => write!(out, "{}", addr.ip()),
            None => Ok(()),
        },
        Var::RemotePort => write!(out, "{}", s.addr.map_or(0, |a| a.port())),
        Var::NumConnects => write!(out, "{}", s.timers.num_connects),
        Var::Json => {
            let json = super::json::sample_json_in(s, compare);
            // A derived Serialize of strings and numbers into a String cannot fail.
            out.write_str(&serde_json::to_string(&json).unwrap_or_default())
        }
        Var::Mode => out.write_str(s.mode.as_str()),
        Var::Round => write!(out, "{}", s.round),
        Var::Variant => out.write_str(compare.map_or("", |c| c.label(s.variant))),
    };
}

/// curl's `time_*`: whole seconds, a point and six digits of microseconds,
/// from the integer timer (no float, so no rounding).
fn seconds(us: u32) -> String {
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// curl's `http_version`: `0` without a response, `1` for HTTP/1.0.
fn http_version(proto: Option<Proto>) -> &'static str {
    match proto {
        None => "0",
        Some(Proto::Http10) => "1",
        Some(Proto::Http11) => "1.1",
        Some(Proto::H2) => "2",
        Some(Proto::H3) => "3",
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::*;
    use crate::probe::{Axis, ErrorKind, Mode, ProbeError, VariantInfo};

    /// A cold HTTP/2 sample with timers that show every digit.
    fn sample() -> Sample {
        Sample {
            wall_total: Some(std::time::Duration::from_micros(61_234_600)),
            timers: CurlTimers {
                namelookup_us: 12,
                connect_us: 1_345,
                appconnect_us: 12_345,
                pretransfer_us: 123_456,
                posttransfer_us: 999_999,
                starttransfer_us: 1_000_000,
                total_us: 61_234_567,
                num_connects: 1,
            },
            status: 200,
            proto: Some(Proto::H2),
            addr: Some(SocketAddr::from(([192, 0, 2, 10], 8443))),
            ..Sample::new(3, Mode::Cold, true)
        }
    }

    /// A cold probe refused before it connected.
    fn refused() -> Sample {
        Sample {
            timers: CurlTimers {
                namelookup_us: 30,
                total_us: 300,
                ..CurlTimers::default()
            },
            status: 0,
            proto: None,
            addr: None,
            error: Some(Box::new(ProbeError {
                kind: ErrorKind::ConnRefused,
                text: "Couldn't connect to server".into(),
            })),
            ..sample()
        }
    }

    fn render(fmt: &str, s: &Sample) -> String {
        parse_format(fmt).unwrap().render(s, None)
    }

    fn two_versions() -> CompareInfo {
        let variant = VariantInfo::new;
        CompareInfo {
            axis: Axis::Http,
            variants: vec![variant("HTTP/1.1", "1.1"), variant("HTTP/2", "2")],
            probes_per_round: 4,
        }
    }

    #[test]
    fn every_timer_in_seconds_with_six_decimals() {
        let fmt = "%{time_namelookup} %{time_connect} %{time_appconnect} %{time_pretransfer} \
                   %{time_posttransfer} %{time_starttransfer} %{time_total}";
        assert_eq!(
            render(fmt, &sample()),
            "0.000012 0.001345 0.012345 0.123456 0.999999 1.000000 61.234567"
        );
        // A timer libcurl never reached is 0, which curl prints as it is.
        assert_eq!(render("%{time_appconnect}", &refused()), "0.000000");
    }

    #[test]
    fn http_code_has_three_digits_and_000_without_a_response() {
        let mut s = sample();
        assert_eq!(render("%{http_code}", &s), "200");
        s.status = 404;
        assert_eq!(render("%{http_code}", &s), "404");
        assert_eq!(render("%{http_code}", &refused()), "000");
    }

    #[test]
    fn http_version_is_spelled_as_curl_spells_it() {
        let mut s = sample();
        let cases = [
            (Some(Proto::Http10), "1"),
            (Some(Proto::Http11), "1.1"),
            (Some(Proto::H2), "2"),
            (Some(Proto::H3), "3"),
            (None, "0"),
        ];
        for (proto, want) in cases {
            s.proto = proto;
            assert_eq!(render("%{http_version}", &s), want, "{proto:?}");
        }
    }

    #[test]
    fn remote_address_port_and_connections() {
        let mut s = sample();
        let fmt = "%{remote_ip}|%{remote_port}|%{num_connects}";
        assert_eq!(render(fmt, &s), "192.0.2.10|8443|1");
        // IPv6 without brackets, as curl prints CURLINFO_PRIMARY_IP.
        s.addr = Some("[2001:db8::1]:443".parse().unwrap());
        s.timers.num_connects = 0;
        assert_eq!(render(fmt, &s), "2001:db8::1|443|0");
        s.addr = None;
        assert_eq!(render(fmt, &s), "|0|0");
    }

    #[test]
    fn mode_round_and_variant_are_ours() {
        let mut s = sample();
        assert_eq!(render("%{mode} %{round} [%{variant}]", &s), "cold 3 []");
        s.mode = Mode::Warm;
        s.variant = 1;
        let cmp = two_versions();
        let w = parse_format("%{mode} %{round} [%{variant}]").unwrap();
        assert_eq!(w.render(&s, Some(&cmp)), "warm 3 [HTTP/2]");
    }

    #[test]
    fn json_is_the_sample_object_on_one_line() {
        let s = sample();
        let cmp = two_versions();
        let w = parse_format("%{json}").unwrap();
        for compare in [None, Some(&cmp)] {
            let line = w.render(&s, compare);
            assert!(!line.contains('\n'), "{line}");
            let got: serde_json::Value = serde_json::from_str(&line).unwrap();
            let want =
                serde_json::to_value(super::super::json::sample_json_in(&s, compare)).unwrap();
            assert_eq!(got, want);
        }
        let with_variant = w.render(&s, Some(&cmp));
        assert!(
            with_variant.contains(r#""variant":"HTTP/1.1""#),
            "{with_variant}"
        );
    }

    #[test]
    fn escapes_and_percent_signs_follow_curl() {
        let s = sample();
        let cases = [
            (r"a\nb\tc\rd", "a\nb\tc\rd"),
            // curl knows only \n, \r and \t: any other pair is printed as written.
            (r"back\\slash", r"back\\slash"),
            (r"\x", r"\x"),
            (r"end\", r"end\"),
            ("100%%", "100%"),
            ("%%{http_code}", "%{http_code}"),
            ("50%", "50%"),
            ("%q", "%q"),
            // `%` takes the next character with it, so the escape is not one.
            (r"%\n", r"%\n"),
            // A variable never closed is text.
            ("code %{http_code", "code %{http_code"),
            ("%header{date", "%header{date"),
            ("naïve %{http_code} ✓", "naïve 200 ✓"),
            ("", ""),
        ];
        for (fmt, want) in cases {
            assert_eq!(render(fmt, &s), want, "format {fmt:?}");
        }
    }

    #[test]
    fn names_match_without_regard_to_case() {
        assert_eq!(
            render("%{HTTP_CODE} %{Time_Total}", &sample()),
            "200 61.234567"
        );
    }

    #[test]
    fn an_unknown_variable_is_an_error_that_names_it() {
        let err = parse_format("ok %{http_code} %{size_download}\\n").unwrap_err();
        assert_eq!(
            err,
            "unknown --write-out variable: 'size_download' (known: time_namelookup, \
             time_connect, time_appconnect, time_pretransfer, time_posttransfer, \
             time_starttransfer, time_total, http_code, http_version, remote_ip, \
             remote_port, num_connects, json, mode, round, variant)"
        );
        assert!(parse_format("%{}")
            .unwrap_err()
            .starts_with("unknown --write-out variable: ''"));
    }

    #[test]
    fn curl_directives_with_an_argument_are_refused() {
        assert_eq!(
            parse_format("%header{date}").unwrap_err(),
            "--write-out: curl's %header{date} is not supported by tlsping"
        );
        assert!(parse_format("%output{>>log}")
            .unwrap_err()
            .contains("%output{>>log}"));
        assert!(parse_format("%time{%H}").unwrap_err().contains("%time{%H}"));
    }

    fn temp_file(name: &str, content: &[u8]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("tlsping-write-out-{}-{name}", std::process::id()));
        std::fs::write(&path, content).unwrap();
        path
    }

    #[test]
    fn a_file_loses_its_newlines_and_each_line_ends_at_a_cr() {
        let path = temp_file(
            "format",
            b"line1 %{http_code}\nline2\\n\r\nl3 before-cr\rafter-cr\nlast",
        );
        let w = parse(&format!("@{}", path.display())).unwrap();
        std::fs::remove_file(&path).unwrap();
        // What curl 7.88.1 printed for the same file.
        assert_eq!(
            w.render(&sample(), None),
            "line1 200line2\nl3 before-crlast"
        );
    }

    #[test]
    fn a_format_from_stdin() {
        let mut stdin = std::io::Cursor::new("%{mode}\\n\n");
        let w = parse_with_stdin("@-", &mut stdin).unwrap();
        assert_eq!(w.render(&sample(), None), "cold\n");
    }

    #[test]
    fn a_missing_file_is_an_error_that_names_it() {
        let err = parse("@/nonexistent/tlsping-format").unwrap_err();
        assert!(
            err.starts_with("--write-out: cannot read /nonexistent/tlsping-format: "),
            "{err}"
        );
    }

    #[test]
    fn a_file_with_an_unknown_variable_is_refused() {
        let path = temp_file("unknown", b"%{nosuch}\n");
        let err = parse(&format!("@{}", path.display())).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(
            err.starts_with("unknown --write-out variable: 'nosuch'"),
            "{err}"
        );
    }
}

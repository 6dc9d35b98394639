//! The command line: every flag and alias, the usage errors (exit 3, one
//! clear line, no traffic) and the input rules.

mod support;

use std::time::Duration;

use support::{start, stderr, tlsping, ServerOpts};
use tlsping::cli::{parse_from, Invocation, Options};
use tlsping::probe::{HttpVersion, IpVersion, ModeChoice, Order};
use tlsping::render::Format;

/// The setting warnings of a parsed command line, as the run words them.
fn worded(o: &Options) -> Vec<String> {
    o.warnings
        .iter()
        .map(tlsping::render::warnings::setting)
        .collect()
}

fn parse(args: &[&str]) -> Options {
    let mut argv = vec!["tlsping"];
    argv.extend_from_slice(args);
    match parse_from(argv) {
        Ok(Invocation::Run(opts)) => *opts,
        Ok(Invocation::Version) => panic!("{args:?} asked for the version"),
        Err(exit) => panic!("{args:?} refused: {exit:?}"),
    }
}

fn refuse(args: &[&str]) -> String {
    let mut argv = vec!["tlsping"];
    argv.extend_from_slice(args);
    match parse_from(argv) {
        Err(exit) if exit.exit_code() == 3 => exit.stderr_text().unwrap_or_default(),
        Err(exit) => panic!("{args:?} exited {}, not 3: {exit:?}", exit.exit_code()),
        Ok(_) => panic!("{args:?} was accepted"),
    }
}

#[test]
fn every_flag_and_alias_sets_what_it_names() {
    type Check = fn(&Options) -> bool;
    let cases: Vec<(Vec<&str>, Check)> = vec![
        (vec!["-n", "7"], |o| o.config.settings.count == 7),
        (vec!["-c", "7"], |o| o.config.settings.count == 7),
        (vec!["--count", "7"], |o| o.config.settings.count == 7),
        (vec!["-n", "0"], |o| o.config.settings.count == 0),
        (vec!["-i", "1.5s"], |o| {
            o.config.settings.interval == Duration::from_millis(1500)
        }),
        (vec!["--interval", "2m"], |o| {
            o.config.settings.interval == Duration::from_secs(120)
        }),
        (vec!["-w", "400ms"], |o| {
            o.config.settings.timeout == Duration::from_millis(400)
        }),
        (vec!["--timeout", "1s"], |o| {
            o.config.settings.timeout == Duration::from_secs(1)
        }),
        (vec!["-m", "cold"], |o| {
            o.config.settings.mode == ModeChoice::Cold
        }),
        (vec!["--mode", "warm"], |o| {
            o.config.settings.mode == ModeChoice::Warm
        }),
        (vec!["--order", "cold-first"], |o| {
            o.config.settings.order == Order::ColdFirst
        }),
        (vec!["--order", "warm-first"], |o| {
            o.config.settings.order == Order::WarmFirst
        }),
        (vec!["--warmup", "3"], |o| o.config.settings.warmup == 3),
        (vec!["-X", "get"], |o| {
            o.config.method.as_deref() == Some("GET")
        }),
        (vec!["--method", "OPTIONS"], |o| {
            o.config.method.as_deref() == Some("OPTIONS")
        }),
        (vec!["--http-version", "1.1"], |o| {
            o.config.http_version == HttpVersion::V1_1
        }),
        (vec!["--http-version", "2"], |o| {
            o.config.http_version == HttpVersion::V2
        }),
        (vec!["--cache-bust"], |o| o.config.cache_bust),
        (vec!["--no-pin-ip"], |o| !o.config.pin_ip),
        (vec!["-4"], |o| o.config.ip_version == IpVersion::V4),
        (vec!["-6"], |o| o.config.ip_version == IpVersion::V6),
        (vec!["-k"], |o| o.config.insecure),
        (vec!["--insecure"], |o| o.config.insecure),
        (vec!["-H", "X-A: 1", "--header", "X-B: 2"], |o| {
            o.config.headers == ["X-A: 1", "X-B: 2"]
        }),
        (vec!["--json"], |o| o.output.stdout == Format::Json),
        (vec!["--csv"], |o| {
            o.output.stdout == Format::Csv { time_first: false }
        }),
        (vec!["--csv", "--csv-time-first"], |o| {
            o.output.stdout == Format::Csv { time_first: true }
        }),
        (vec!["--no-color"], |o| o.no_color),
        (vec!["-q"], |o| o.quiet),
        (vec!["--quiet"], |o| o.quiet),
        (vec!["-v"], |o| o.verbose),
        (vec!["--verbose"], |o| o.verbose),
        (vec!["--resume", "off"], |o| !o.config.settings.resume),
        (
            vec![
                "--cacert",
                concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
            ],
            |o| {
                o.config.ca_file.as_deref()
                    == Some(std::path::Path::new(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/Cargo.toml"
                    )))
            },
        ),
    ];
    for (args, check) in cases {
        let mut full = args.clone();
        full.push("example.com");
        let opts = parse(&full);
        assert!(check(&opts), "{args:?} did not take effect: {opts:?}");
    }
}

#[test]
fn defaults_are_the_documented_ones() {
    let o = parse(&["example.com"]);
    let c = &o.config;
    assert_eq!(
        (c.settings.count, c.settings.interval, c.settings.timeout),
        (10, Duration::from_secs(1), Duration::from_secs(5))
    );
    assert_eq!(
        (c.settings.mode, c.settings.order, c.settings.warmup),
        (ModeChoice::Both, Order::Alternate, 1)
    );
    assert!(c.method.is_none() && c.pin_ip && !c.insecure && !c.cache_bust && c.settings.resume);
    assert_eq!(c.http_version, HttpVersion::Auto);
    assert_eq!(o.output.stdout, Format::Table);
    assert_eq!(c.target.url(), "https://example.com/");
}

#[test]
fn interval_below_the_floor_is_raised_with_a_warning() {
    let o = parse(&["-i", "50ms", "example.com"]);
    assert_eq!(o.config.settings.interval, Duration::from_millis(200));
    assert!(
        worded(&o).iter().any(|w| w.contains("200ms floor")),
        "{:?}",
        o.warnings
    );
    assert!(parse(&["-i", "200ms", "example.com"]).warnings.is_empty());
}

#[test]
fn version_needs_no_target() {
    assert!(matches!(
        parse_from(["tlsping", "--version"]),
        Ok(Invocation::Version)
    ));
}

#[test]
fn usage_errors_exit_3_with_one_line_and_a_pointer_to_help() {
    let cases: &[(&[&str], &str)] = &[
        (&["--json", "--csv", "a.test"], "--csv"),
        (&["-q", "-v", "a.test"], "--verbose"),
        (&["-4", "-6", "a.test"], "-6"),
        (&["--http-version", "3", "a.test"], "HTTP/3"),
        (&["--http-version", "1.0", "a.test"], "not one of"),
        (&["-i", "5", "a.test"], "400ms, 1s, 1.5s, 2m"),
        (&["-w", "soon", "a.test"], "400ms, 1s, 1.5s, 2m"),
        (&["-n", "-1", "a.test"], "-1"),
        (&["-m", "lukewarm", "a.test"], "lukewarm"),
        (&["--order", "random", "a.test"], "random"),
        (&[""], "empty"),
        (&[], "target is required"),
        (&["ftp://a.test/"], "scheme 'ftp'"),
        (&["https://user:pw@a.test/"], "user:password"),
        (&["a.test:70000"], "not a valid host"),
        (&["-H", "NoColon", "a.test"], "Name: value"),
        (&["-H", "Bad Name: v", "a.test"], "header name"),
        (&["-H", "X: a\r\nInjected: 1", "a.test"], "line break"),
        (&["-H", "X: a\x01b", "a.test"], "control character"),
        (&["-H", "X: a\x0bb", "a.test"], "control character"),
        (&["-H", "X: a\x7fb", "a.test"], "control character"),
        (&["https://a.test/\r\nX: 1"], "line break"),
        (&["-X", "GE T", "a.test"], "not a valid HTTP method"),
        (&["-w", "0s", "a.test"], "at least 1ms"),
        (&["-w", "0.5ms", "a.test"], "at least 1ms"),
        (&["--csv-time-first", "a.test"], "provided: --csv"),
    ];
    for (args, needle) in cases {
        let text = refuse(args);
        assert!(text.contains(needle), "{args:?}: {text}");
        assert!(text.starts_with("tlsping: "), "{args:?}: {text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {text}");
        assert_eq!(lines[1], "Try 'tlsping --help' for more information.");
    }
}

#[test]
fn warmup_covering_every_round_warns() {
    let o = parse(&["-n", "2", "--warmup", "2", "a.test"]);
    assert!(worded(&o)
        .iter()
        .any(|w| w.contains("statistics will be empty")));
}

#[test]
fn no_pin_ip_with_both_modes_warns_about_different_servers() {
    let o = parse(&["--no-pin-ip", "a.test"]);
    assert!(
        worded(&o).iter().any(|w| w.contains("different servers")),
        "{:?}",
        o.warnings
    );
    assert!(parse(&["--no-pin-ip", "-m", "cold", "a.test"])
        .warnings
        .is_empty());
}

#[test]
fn cache_bust_query_is_appended_correctly() {
    let o = parse(&["--cache-bust", "https://a.test/x?y=1"]);
    assert_eq!(
        o.config.target.request_url(Some(2)),
        "https://a.test/x?y=1&_=2"
    );
}

#[test]
fn usage_errors_make_no_connection() {
    let server = start(ServerOpts::default());
    let url = server.url();
    let u = url.as_str();
    let with_port = format!("https://localhost:{}/\r\nX: 1", server.addr.port());
    let creds = u.replace("https://", "https://user:pw@");
    for args in [
        vec!["-H", "NoColon", u],
        vec!["-H", "Bad Name: v", u],
        vec!["-H", "X: a\r\nInjected: 1", u],
        vec!["-H", "X: a\x01b", u],
        vec!["-H", "X: a\x0bb", u],
        vec!["-H", "X: a\x7fb", u],
        vec!["--json", "--csv", u],
        vec!["-q", "-v", u],
        vec!["-4", "-6", u],
        vec!["--http-version", "3", u],
        vec!["--http-version", "1.0", u],
        vec!["-i", "5", u],
        vec!["-w", "0s", u],
        vec!["-n", "-1", u],
        vec!["-m", "lukewarm", u],
        vec!["--order", "random", u],
        vec!["-X", "GE T", u],
        vec!["--csv-time-first", u],
        vec![with_port.as_str()],
        vec![creds.as_str()],
    ] {
        let out = tlsping(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        server.counters.snapshot().tcp,
        0,
        "a usage error must not touch the network"
    );
}

#[test]
fn help_is_grouped_with_defaults_safety_note_and_examples() {
    let out = tlsping(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for heading in ["Measurement:", "Request:", "Output:"] {
        assert!(text.contains(heading), "{heading} missing");
    }
    assert!(text.contains("[default: 10]") && text.contains("[default: 1s]"));
    assert!(text.contains("permitted to test"));
    assert!(text.contains("Examples:"));
}

#[test]
fn proxy_in_the_environment_is_reported_as_bypassed() {
    let o = {
        // parse_from reads the process environment; use the binary to keep this test's env clean.
        let server = start(ServerOpts::default());
        let out = std::process::Command::new(support::bin())
            .args([
                "-n",
                "2",
                "-i",
                "200ms",
                "--cacert",
                support::ca().pem_path.to_str().unwrap(),
                &server.url(),
            ])
            .env("https_proxy", "http://127.0.0.1:9")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stderr(&out)
    };
    assert!(
        o.contains("https_proxy is set") && o.contains("--no-pin-ip"),
        "{o}"
    );
}

#[test]
fn a_missing_trust_source_is_a_usage_error_before_any_connection() {
    let server = start(ServerOpts::default());
    // (arguments, environment, what stderr must say)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 4] = [
        (
            &["--cacert", "/nonexistent/ca.pem"],
            &[],
            "--cacert /nonexistent/ca.pem",
        ),
        (
            &[],
            &[("SSL_CERT_FILE", "/nonexistent/bundle.pem")],
            "SSL_CERT_FILE=/nonexistent",
        ),
        (
            &[],
            &[("SSL_CERT_DIR", "/nonexistent/certs")],
            "SSL_CERT_DIR=/nonexistent",
        ),
        (
            &[],
            &[("SSL_CERT_FILE", "/etc")],
            "SSL_CERT_FILE=/etc is not a regular file",
        ),
    ];
    for (args, env, says) in cases {
        let mut cmd = std::process::Command::new(support::bin());
        cmd.args(args)
            .args(["-n", "1", &server.url()])
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR")
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{args:?} {env:?}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(says),
            "{args:?} {env:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn what_the_user_typed_reaches_the_terminal_escaped_in_usage_errors() {
    // ESC, BEL and U+202E in a host, a method, a group list, a label, a
    // push URL and a metrics path: each refused, each shown, none obeyed.
    let hostile = "x\u{1b}]0;owned\u{7}\u{202e}y";
    let label = format!("{hostile}=v");
    let push = format!("http://{hostile}/");
    let missing_dir = format!("/nonexistent-{hostile}/m.prom");
    let cases: [Vec<&str>; 6] = [
        vec![hostile],
        vec!["-X", hostile, "a.test"],
        vec!["--curves", hostile, "a.test"],
        vec!["--openmetrics", "-", "--label", &label, "a.test"],
        vec!["--push", &push, "a.test"],
        vec!["--openmetrics", &missing_dir, "a.test"],
    ];
    for args in cases {
        let out = tlsping(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let err = stderr(&out);
        assert!(
            !err.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{args:?}: raw control characters in {err:?}"
        );
        assert!(
            err.contains("\\x{1b}") && err.contains("\\x{202e}"),
            "{args:?}: {err:?}"
        );
        assert!(!err.contains("\\\\x{"), "{args:?}: escaped twice: {err:?}");
    }
}

#[test]
fn a_client_certificate_or_key_that_cannot_be_used_is_a_usage_error_before_any_connection() {
    let dir = support::TempDir::new("pair");
    let (cert, key, _) = support::pki::client_identity(dir.path());
    let other = support::TempDir::new("pair-other");
    let (_, other_key, _) = support::pki::client_identity(other.path());
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n").unwrap();
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = support::cacert();
    let p = support::path_str;
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--cert", p(&empty)], "holds no PEM certificate"),
        (vec!["--cert", p(&garbage)], "holds no PEM certificate"),
        (
            vec!["--cert", p(&cert)],
            "holds no PEM private key; give it with --key",
        ),
        (
            vec!["--cert", p(&cert), "--key", p(&garbage)],
            "holds no PEM private key",
        ),
        (
            vec!["--cert", p(&cert), "--key", p(&other_key)],
            "is not the one of the certificate",
        ),
    ];
    for (flags, says) in cases {
        let mut args = vec!["-n", "1", "--cacert", &ca];
        args.extend(flags.iter().copied());
        args.push(&url);
        let out = tlsping(&args);
        assert_eq!(out.status.code(), Some(3), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    // The good pair still parses.
    parse(&["--cert", p(&cert), "--key", p(&key), "a.test"]);
}

#[test]
fn a_misspelt_flag_gets_a_did_you_mean() {
    let err = refuse(&["--intervall", "1s", "a.test"]);
    assert!(
        err.contains("a similar argument exists: '--interval'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
}

#[test]
fn a_value_not_among_a_flags_values_is_refused_with_the_ones_it_takes() {
    let cases: &[(&str, &[&str])] = &[
        ("-m", &["both", "cold", "warm"]),
        ("--order", &["alternate", "cold-first", "warm-first"]),
        ("--resume", &["on", "off"]),
        ("--tls-max", &["1.2", "1.3"]),
        ("--http-version", &["1.1", "2", "auto"]),
        (
            "--generate",
            &["man", "bash", "zsh", "fish", "elvish", "powershell"],
        ),
    ];
    for (flag, values) in cases {
        let text = refuse(&[flag, "nonsense", "a.test"]);
        let line = text.lines().next().unwrap();
        assert!(line.contains("'nonsense'"), "{flag}: {text}");
        assert!(
            line.contains(&format!("not one of {}", values.join(", "))),
            "{flag}: {text}"
        );
        assert_eq!(text.lines().count(), 2, "{flag}: {text}");
    }
    // clap's guess at what was meant stays in the line too.
    let text = refuse(&["-m", "cld", "a.test"]);
    assert!(
        text.contains("not one of both, cold, warm (a similar value exists: 'cold')"),
        "{text}"
    );
}

#[test]
fn a_flag_that_cannot_go_with_several_given_names_them_all() {
    // clap puts them on lines of their own; the one line names them.
    let text = refuse(&["--write-out", "%{time_total}", "--json", "--csv", "a.test"]);
    let line = text.lines().next().unwrap();
    assert!(
        line.ends_with("cannot be used with: --json, --csv"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn mode_and_order_take_every_value_by_the_name_the_json_gives_it() {
    for mode in ModeChoice::ALL {
        let o = parse(&["-m", mode.as_str(), "a.test"]);
        assert_eq!(o.config.settings.mode, mode);
    }
    for order in Order::ALL {
        let o = parse(&["--order", order.as_str(), "a.test"]);
        assert_eq!(o.config.settings.order, order);
    }
}

#[test]
fn a_curl_format_given_to_w_says_that_w_is_the_timeout_here() {
    // curl's `-w` is its --write-out; ours is the original's --timeout.
    // Before, `%header{...}` and `@FILE` were `not a duration`, and the
    // `\n` typed was echoed as `\\n`.
    for format in [
        "%{http_code}\\n",
        "%{time_total}",
        "%header{server}",
        "@fmt.txt",
        "@-",
        "%output{f}%{json}",
    ] {
        let text = refuse(&["-w", format, "a.test"]);
        assert!(text.contains("-w is --timeout here"), "{format}: {text}");
        assert!(
            text.contains("curl's -w is --write-out"),
            "{format}: {text}"
        );
        assert!(
            text.contains(&format!("'{format}' is a format")),
            "{format}: {text}"
        );
        assert_eq!(text.lines().count(), 2, "{text}");
    }
    // A duration typed wrong is told the forms it takes, and nothing of curl.
    let text = refuse(&["-w", "5", "a.test"]);
    assert!(text.contains("400ms, 1s, 1.5s, 2m"), "{text}");
    assert!(!text.contains("write-out"), "{text}");
}

#[test]
fn warmup_covering_every_round_is_not_said_where_no_statistics_are_shown() {
    for quiet in [
        vec!["-n", "1", "--write-out", "%{time_total}\n", "a.test"],
        vec!["-n", "1", "--csv", "a.test"],
    ] {
        let o = parse(&quiet);
        assert!(
            !worded(&o).iter().any(|w| w.contains("statistics")),
            "{quiet:?}: {:?}",
            worded(&o)
        );
    }
    for shown in [
        vec!["-n", "1", "a.test"],
        vec!["-n", "1", "--json", "a.test"],
        vec!["-n", "1", "--csv", "--svg", "x.svg", "a.test"],
    ] {
        let o = parse(&shown);
        assert!(
            worded(&o)
                .iter()
                .any(|w| w.contains("statistics will be empty")),
            "{shown:?}"
        );
    }
}

#[test]
fn a_warning_on_a_full_or_closed_stderr_costs_the_warning_not_the_run() {
    // `-i 100ms` is raised to the floor with a warning, written to a stderr
    // that cannot take it: a full device (ENOSPC) or a closed descriptor
    // (EBADF). `eprintln!` would panic on the first (and the release build
    // aborts on a panic); the run must still end as it earned.
    let server = start(ServerOpts::default());
    for stderr in ["2>/dev/full", "2>&-"] {
        let line = format!(
            "exec {} -n 1 -i 100ms --cacert {} {} {stderr}",
            support::bin(),
            support::cacert(),
            server.url()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("running bash");
        assert_eq!(out.status.code(), Some(0), "{stderr}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("cold"),
            "{stderr}"
        );
    }
}

#[test]
fn every_http_version_taken_is_documented() {
    // `auto` was taken, completed and named in the refusal, but in neither
    // the help, the man page nor the docs.
    let help = support::stdout(&tlsping(&["--help"]));
    let line: String = help
        .lines()
        .skip_while(|l| !l.contains("--http-version"))
        .take(2)
        .collect();
    let man = support::stdout(&tlsping(&["--generate", "man"]));
    let docs = support::docs::read("docs/output.md");
    let row = docs
        .lines()
        .find(|l| l.starts_with("| `--http-version V`"))
        .expect("docs/output.md has the flag's row");
    for value in ["auto", "1.1", "2"] {
        assert!(line.contains(value), "{value}: {line}");
        assert!(row.contains(&format!("`{value}`")), "{value}: {row}");
    }
    assert!(man.contains("HTTP version: auto (the default"), "{man}");
    // Refused by the command line itself (exit 3): nothing started, nothing dialled.
    let refused = refuse(&["--http-version", "9", "a.test"]);
    assert!(refused.contains("is not one of 1.1, 2, auto"), "{refused}");
}

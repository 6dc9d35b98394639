//! `--push` through the real binary on 127.0.0.1, against stand-ins that
//! record what reaches them: the push takes the probes' way past a proxy
//! (direct while the address is pinned; with `--no-pin-ip`, through the
//! proxy the probes use or none, in every combination of the proxy
//! variables, checked against real loopback proxies), it trusts what the
//! probes trust, its credentials come from a file or the environment as
//! well as the URL, and no message ever shows a password.

mod support;

use std::io::Write;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use support::proxy::Peer;
use support::{ca, cacert, path_str, show, start, stderr, ServerOpts, TempDir};

/// A stand-in that answers every push `200` and sends what it read.
fn stand_in() -> (String, Receiver<String>) {
    support::prometheus::answering_stand_in(4)
}

/// A run of one round pushed to `push`, with `extra` flags and `env`.
fn pushed(push: &str, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let server = start(ServerOpts::default());
    let ca = cacert();
    let url = server.url();
    let mut args = vec!["-4", "-n", "1", "--cacert", &ca, "--push", push];
    args.extend_from_slice(extra);
    args.push(&url);
    let mut cmd = support::command(&args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(std::process::Stdio::null())
        .output()
        .expect("running tlsping")
}

#[test]
fn the_push_takes_the_probes_way_past_a_proxy() {
    // http_proxy only: the probes (https://) never consult it, the push
    // (http://) would.
    let (gateway, at_gateway) = stand_in();
    let (proxy, at_proxy) = stand_in();
    let out = pushed(&gateway, &[], &[("http_proxy", &proxy)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_gateway
        .recv_timeout(Duration::from_secs(5))
        .expect("the push went straight to the gateway");
    assert!(got.starts_with("PUT /metrics/job/tlsping/"), "{got}");
    assert!(
        at_proxy.recv_timeout(Duration::from_millis(300)).is_err(),
        "the proxy saw the push of a pinned run"
    );
    assert!(
        stderr(&out).contains("http_proxy is set but the pinned address is dialed directly, bypassing the proxy (so is --push)"),
        "{}",
        show(&out)
    );
    // Not pinned: the probes of an https target do not read http_proxy,
    // so the push does not either (every combination: the test below).
    let out = pushed(&gateway, &["--no-pin-ip"], &[("http_proxy", &proxy)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_gateway
        .recv_timeout(Duration::from_secs(5))
        .expect("the push went straight to the gateway");
    assert!(got.starts_with("PUT /metrics/job/tlsping/"), "{got}");
    assert!(
        at_proxy.recv_timeout(Duration::from_millis(300)).is_err(),
        "the push took a proxy the probes did not"
    );
}

#[test]
fn push_credentials_come_from_a_file_or_the_environment() {
    let dir = TempDir::new("auth");
    let file = dir.path().join("push-auth");
    std::fs::write(&file, "pusher:s3cr3t-file\n").unwrap();
    let (gateway, at_gateway) = stand_in();
    let out = pushed(&gateway, &["--push-auth-file", path_str(&file)], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_gateway.recv_timeout(Duration::from_secs(5)).unwrap();
    // base64("pusher:s3cr3t-file")
    assert!(
        got.contains("Authorization: Basic cHVzaGVyOnMzY3IzdC1maWxl\r\n"),
        "{got}"
    );
    let out = pushed(&gateway, &[], &[("TLSPING_PUSH_AUTH", "env:pw")]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_gateway.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(got.contains("Authorization: Basic ZW52OnB3\r\n"), "{got}");
    // In the URL it still works, with a warning, and never reaches the path.
    let with_password = gateway.replace("http://", "http://u:hunter2@");
    let out = pushed(&with_password, &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_gateway.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        got.contains("Authorization: Basic dTpodW50ZXIy\r\n"),
        "{got}"
    );
    assert!(got.starts_with("PUT /metrics/"), "{got}");
    let err = stderr(&out);
    assert!(err.contains("--push-auth-file"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn no_message_shows_a_push_password() {
    let dir = TempDir::new("redact");
    let refused = support::faults::closed_port();
    let cases = [
        // Not a URL, a query, no host: usage errors that quote the URL.
        "http://u:hunter2@[::1/".to_string(),
        "http://u:hunter2@127.0.0.1:9091/?x=1".to_string(),
        "u:hunter2@127.0.0.1:9091".to_string(),
        // A gateway that is not there: the failure is told after the run.
        format!("http://u:hunter2@127.0.0.1:{refused}"),
        // An unencoded `/`, `?` or `#` in the password: no parser reads the
        // authority as meant, so all before the last `@` is hidden.
        "http://u:hun/ter2@127.0.0.1:9091".to_string(),
        "http://u:hun?ter2@127.0.0.1:9091".to_string(),
        "http://u:hun#ter2@127.0.0.1:9091".to_string(),
    ];
    for push in &cases {
        let out = pushed(
            push,
            &["--openmetrics", path_str(&dir.path().join("m"))],
            &[],
        );
        let all = show(&out);
        assert!(
            !all.contains("hunter2") && !all.contains("ter2"),
            "{push}: {all}"
        );
        assert!(
            matches!(out.status.code(), Some(2) | Some(3)),
            "{push}: {all}"
        );
    }
    // Nor does the exposition written beside it.
    let written = std::fs::read_to_string(dir.path().join("m")).unwrap();
    assert!(!written.contains("hunter2"), "{written}");
}

#[test]
fn a_push_auth_file_is_a_regular_file_of_user_and_password() {
    let dir = TempDir::new("authfile");
    let (gateway, _) = stand_in();
    let no_colon = dir.path().join("no-colon");
    std::fs::write(&no_colon, "just-a-token\n").unwrap();
    for (file, says) in [
        (path_str(&no_colon), "does not hold USER:PASSWORD"),
        ("/dev/zero", "it is a device, not a regular file"),
        (
            path_str(dir.path()),
            "it is a directory, not a regular file",
        ),
    ] {
        let out = pushed(&gateway, &["--push-auth-file", file], &[]);
        assert_eq!(out.status.code(), Some(3), "{file}: {}", show(&out));
        assert!(stderr(&out).contains(says), "{file}: {}", show(&out));
    }
    let out = support::tlsping(&["--push-auth-file", path_str(&no_colon), "a.test"]);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(stderr(&out).contains("--push"), "{}", show(&out));
}

/// How a gateway's `401` echoes the credential it was sent: each a shape a
/// line filter missed before (it matched whole known spellings on one line).
#[derive(Clone, Copy, Debug)]
enum Echo {
    /// `user:password` in base64, wrapped at 40 characters.
    Wrapped,
    /// The base64 token split across two lines.
    Split,
    /// The password in JSON, `/` escaped as `\/`.
    Json,
    /// The password HTML-escaped (`p&lt;ss&amp;w?rd&gt;`).
    Html,
    /// No credential: two lines of its own.
    Plain,
}

/// A gateway that answers `401` with `echo` of the credential it read, as
/// debugging servers and some proxies do: its URL.
fn echoing_gateway(echo: Echo) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Some(Ok(mut stream)) = listener.incoming().next() {
            let seen =
                String::from_utf8_lossy(&support::prometheus::read_push(&mut stream)).into_owned();
            let token = seen
                .lines()
                .find_map(|l| l.strip_prefix("Authorization: Basic "))
                .unwrap_or("")
                .trim()
                .to_string();
            let pair = openssl::base64::decode_block(&token).unwrap_or_default();
            let pair = String::from_utf8_lossy(&pair).into_owned();
            let password = pair.split_once(':').map_or("", |(_, p)| p);
            let body = match echo {
                Echo::Wrapped => token
                    .as_bytes()
                    .chunks(40)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect::<Vec<_>>()
                    .join("\n"),
                Echo::Split => format!("token: {}\n{}", &token[..10], &token[10..]),
                Echo::Json => format!("{{\"password\": \"{}\"}}", password.replace('/', "\\/")),
                Echo::Html => format!(
                    "<p>{}</p>",
                    password
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                ),
                Echo::Plain => "no credentials were given\nsee the docs".to_string(),
            };
            let head = format!(
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_gateway_that_echoes_the_credential_never_gets_it_shown() {
    // Before, each shape reached stderr: `the Pushgateway answered 401:
    // cHVzaGVyOnA8c3Mmdz9yZD4vUzNjcjN0LWVjaG8t | MDEyMzQ1Njc4OQ==`, ...
    let dir = TempDir::new("echo");
    let password = "p<ss&w?rd>/S3cr3t-echo-0123456789";
    let pair = format!("pusher:{password}");
    let b64 = openssl::base64::encode_block(pair.as_bytes());
    assert!(b64.len() > 40, "the token wraps");
    // The secret in every spelling, and every 8 characters of its base64.
    let mut forms = vec![
        password.to_string(),
        "S3cr3t".to_string(),
        "p&lt;ss&amp;w".to_string(),
        "rd>\\/S3".to_string(),
    ];
    forms.extend(
        b64.trim_end_matches('=')
            .as_bytes()
            .windows(8)
            .map(|w| String::from_utf8_lossy(w).into_owned()),
    );
    for echo in [Echo::Wrapped, Echo::Split, Echo::Json, Echo::Html] {
        let metrics = dir.path().join(format!("{echo:?}.prom"));
        let out = pushed(
            &echoing_gateway(echo),
            &["--json", "--openmetrics", path_str(&metrics)],
            &[("TLSPING_PUSH_AUTH", &pair)],
        );
        assert_eq!(out.status.code(), Some(2), "{echo:?}: {}", show(&out));
        let err = stderr(&out);
        assert!(
            err.contains(
                "--push failed: the Pushgateway answered 401 (its answer is not shown: the push \
                 carried credentials); check the credentials it sent\n"
            ),
            "{echo:?}: {err}"
        );
        let json = String::from_utf8_lossy(&out.stdout);
        let written = std::fs::read_to_string(&metrics).unwrap();
        for form in &forms {
            for (what, text) in [
                ("stderr", &*err),
                ("the JSON", &*json),
                ("the metrics", &*written),
            ] {
                assert!(
                    !text.contains(form.as_str()),
                    "{echo:?}: {form} in {what}: {text}"
                );
            }
        }
    }
    // Without credentials the answer is quoted, line by line.
    let out = pushed(&echoing_gateway(Echo::Plain), &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains(
            "--push failed: the Pushgateway answered 401: no credentials were given | see the \
             docs; it wants credentials: give USER:PASSWORD in --push-auth-file or TLSPING_PUSH_AUTH"
        ),
        "{}",
        show(&out)
    );
}

#[test]
fn push_credentials_that_are_not_utf8_are_refused() {
    // Before: ignored, and the push went without credentials.
    use std::os::unix::ffi::OsStringExt;
    let (gateway, at_gateway) = stand_in();
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = cacert();
    let not_utf8 = std::ffi::OsString::from_vec(b"pusher:pw\xff".to_vec());
    let out = support::command(&["-n", "1", "--cacert", &ca, "--push", &gateway, &url])
        .env("TLSPING_PUSH_AUTH", not_utf8)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running tlsping");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains("TLSPING_PUSH_AUTH: USER:PASSWORD is not UTF-8 text"),
        "{}",
        show(&out)
    );
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
    assert!(at_gateway.recv_timeout(Duration::from_millis(300)).is_err());
}

#[test]
fn an_https_push_trusts_what_the_probes_trust() {
    // SSL_CERT_DIR as a list, the test CA in its second directory: the
    // probes trust it; before, the push failed with `unable to get local
    // issuer certificate`.
    let dir = TempDir::new("push-trust");
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    std::fs::create_dir(&first).unwrap();
    std::fs::create_dir(&second).unwrap();
    let hash = ca().cert.subject_name_hash();
    std::fs::copy(&ca().pem_path, second.join(format!("{hash:08x}.0"))).unwrap();
    let list = format!("{}:{}", path_str(&first), path_str(&second));
    let server = start(ServerOpts::default());
    let gateway = start(ServerOpts::default());
    let run = |push: &str, target: &str, cert_dir: &str| {
        support::command(&["-n", "1", "--push", push, target])
            .env_remove("SSL_CERT_FILE")
            .env("SSL_CERT_DIR", cert_dir)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("running tlsping")
    };
    let push = gateway.url();
    let out = run(&push, &server.url(), &list);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!stderr(&out).contains("--push failed"), "{}", show(&out));
    assert!(gateway.counters.snapshot().tcp >= 1, "the push arrived");
    // A source the probes would refuse is refused for the push too, before
    // the run (an http:// target reads no CA itself); before, the push went
    // on with the system's bundle.
    let missing = path_str(&dir.path().join("missing")).to_string();
    let refused = support::faults::closed_port();
    let out = run(&push, &format!("http://127.0.0.1:{refused}/"), &missing);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        stderr(&out).contains(&format!("SSL_CERT_DIR={missing}")),
        "{}",
        show(&out)
    );
}

/// The proxy variables, each pointing at a proxy of its own in the
/// combination test.
const VARS: [&str; 6] = tlsping::cli::PROXY_VARS;

/// The rule the docs state, said again on its own: the probes of an
/// `https` (`http`) target take `https_proxy`, then `HTTPS_PROXY` (for http
/// `http_proxy` alone), then `all_proxy`, then `ALL_PROXY`; none when
/// `no_proxy` (else `NO_PROXY`) names the target's host. Only exact names
/// and `*` appear in the cases.
fn expected_proxy(
    https: bool,
    set: &[&str],
    no_proxy: &[(&str, &str)],
    host: &str,
) -> Option<usize> {
    let names = |h: &str| {
        let list = ["no_proxy", "NO_PROXY"]
            .iter()
            .find_map(|v| no_proxy.iter().find(|(k, val)| k == v && !val.is_empty()))
            .map(|(_, list)| *list);
        list.is_some_and(|l| l == "*" || l.split(',').any(|e| e.trim() == h))
    };
    if names(host) {
        return None;
    }
    let order: &[&str] = if https {
        &["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    } else {
        &["http_proxy", "all_proxy", "ALL_PROXY"]
    };
    order
        .iter()
        .find(|v| set.contains(v))
        .map(|v| VARS.iter().position(|k| k == v).unwrap())
}

/// Whether the expected NO_PROXY list names the gateway's host (127.0.0.1).
fn exempts_gateway(no_proxy: &[(&str, &str)]) -> bool {
    let list = ["no_proxy", "NO_PROXY"]
        .iter()
        .find_map(|v| no_proxy.iter().find(|(k, val)| k == v && !val.is_empty()))
        .map(|(_, list)| *list);
    list.is_some_and(|l| l == "*" || l.split(',').any(|e| e.trim() == "127.0.0.1"))
}

#[test]
fn the_push_goes_through_the_probes_proxy_or_none_in_every_combination() {
    // Before, an unpinned push chose by its own URL's scheme: with only
    // http_proxy the probes of an https target went direct and the push
    // (with its credentials) through the proxy; with only https_proxy the
    // probes used the proxy and the push went direct.
    let proxies: Vec<Peer> = VARS.iter().map(|_| Peer::start()).collect();
    let gateway = Peer::start();
    let plain_target = Peer::start();
    let server = start(ServerOpts::default());
    let https_target = server.url();
    let http_target = format!("http://localhost:{}/", plain_target.port);
    let all: &[&str] = &VARS;
    const UNPINNED: &[&str] = &["--no-pin-ip"];
    type Case<'a> = (bool, &'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        // (https target, variables set, NO_PROXY, how the probes dial)
        (true, &[], &[], UNPINNED),
        (true, &["https_proxy"], &[], UNPINNED),
        (true, &["HTTPS_PROXY"], &[], UNPINNED),
        (true, &["http_proxy"], &[], UNPINNED),
        (true, &["HTTP_PROXY"], &[], UNPINNED),
        (true, &["all_proxy"], &[], UNPINNED),
        (true, &["ALL_PROXY"], &[], UNPINNED),
        (true, &["https_proxy", "HTTPS_PROXY"], &[], UNPINNED),
        (true, &["HTTPS_PROXY", "all_proxy"], &[], UNPINNED),
        (true, &["all_proxy", "ALL_PROXY"], &[], UNPINNED),
        (true, &["http_proxy", "ALL_PROXY"], &[], UNPINNED),
        (true, &["HTTP_PROXY", "http_proxy"], &[], UNPINNED),
        (true, all, &[], UNPINNED),
        (true, all, &[("no_proxy", "localhost")], UNPINNED),
        (true, all, &[("NO_PROXY", "localhost")], UNPINNED),
        (true, all, &[("no_proxy", "127.0.0.1")], UNPINNED),
        (
            true,
            all,
            &[("NO_PROXY", "other.test, 127.0.0.1")],
            UNPINNED,
        ),
        (true, all, &[("no_proxy", "*")], UNPINNED),
        (
            true,
            all,
            &[("no_proxy", "127.0.0.1"), ("NO_PROXY", "localhost")],
            UNPINNED,
        ),
        (
            true,
            all,
            &[("no_proxy", ""), ("NO_PROXY", "localhost")],
            UNPINNED,
        ),
        (true, &["ALL_PROXY"], &[("NO_PROXY", "127.0.0.1")], UNPINNED),
        (false, &["http_proxy"], &[], UNPINNED),
        (false, &["HTTP_PROXY"], &[], UNPINNED),
        (false, &["https_proxy", "HTTPS_PROXY"], &[], UNPINNED),
        (false, &["HTTP_PROXY", "ALL_PROXY"], &[], UNPINNED),
        (false, all, &[("no_proxy", "127.0.0.1")], UNPINNED),
        (false, all, &[("NO_PROXY", "localhost")], UNPINNED),
        // --connect-to also leaves the proxy to libcurl.
        (
            true,
            &["https_proxy"],
            &[],
            &["--connect-to", "localhost::127.0.0.1:"],
        ),
        // Pinned (the default): straight, whatever is set.
        (true, all, &[], &[]),
    ];
    for &(https, set, no_proxy, dial) in cases {
        let target = if https { &https_target } else { &http_target };
        let pinned = dial.is_empty();
        let ca = cacert();
        let mut args = vec!["-4", "-n", "1", "-m", "cold", "--cacert", &ca];
        args.extend(dial);
        let push = gateway.url();
        args.extend(["--push", &push, target]);
        let mut cmd = support::command(&args);
        cmd.env_remove("no_proxy")
            .env_remove("NO_PROXY")
            .env("TLSPING_PUSH_AUTH", "pusher:via-proxy");
        for var in set {
            let i = VARS.iter().position(|v| v == var).unwrap();
            cmd.env(var, proxies[i].url());
        }
        for (k, v) in no_proxy {
            cmd.env(k, v);
        }
        for p in proxies.iter().chain([&gateway, &plain_target]) {
            p.clear();
        }
        let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
        let case = format!("https={https} {set:?} {no_proxy:?} {dial:?}");
        assert_eq!(out.status.code(), Some(0), "{case}: {}", show(&out));
        let probes = if pinned {
            None
        } else {
            expected_proxy(https, set, no_proxy, "localhost")
        };
        for (i, proxy) in proxies.iter().enumerate() {
            let seen = proxy.seen();
            let probe_lines = seen.iter().filter(|s| !s.line.starts_with("PUT ")).count();
            let pushes: Vec<_> = seen.iter().filter(|s| s.line.starts_with("PUT ")).collect();
            if probes == Some(i) {
                assert!(
                    probe_lines >= 1,
                    "{case}: the probes skipped {}: {seen:?}",
                    VARS[i]
                );
            } else {
                assert!(seen.is_empty(), "{case}: {} saw {seen:?}", VARS[i]);
            }
            let through_here = probes == Some(i) && !exempts_gateway(no_proxy);
            assert_eq!(
                pushes.len(),
                usize::from(through_here),
                "{case}: the push at {}: {seen:?}",
                VARS[i]
            );
            assert!(pushes.iter().all(|s| s.authorization), "{case}");
        }
        let direct = gateway.seen();
        let went_direct = probes.is_none() || exempts_gateway(no_proxy);
        assert_eq!(
            direct.len(),
            usize::from(went_direct),
            "{case}: at the gateway {direct:?}"
        );
        assert!(direct
            .iter()
            .all(|s| s.authorization && s.line.starts_with("PUT /metrics/")));
    }
}

#[test]
fn a_proxys_password_never_reaches_a_message_or_an_output() {
    // libcurl quotes a proxy it cannot parse, password and all. Before:
    // `--push failed: [5] ... Unsupported proxy syntax in
    // 'http://puser:Pr0x/yPW@127.0.0.1:19300'` on stderr, and the same in
    // the JSON's run.preflight_error.
    let dir = TempDir::new("proxy-secret");
    let metrics = dir.path().join("m.prom");
    let (gateway, _) = stand_in();
    let proxy = "http://puser:Pr0x/yPW@127.0.0.1:19300";
    let out = pushed(
        &gateway,
        &["--no-pin-ip", "--json", "--openmetrics", path_str(&metrics)],
        &[("https_proxy", proxy)],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = stderr(&out);
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    let written = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        err.contains("Unsupported proxy syntax in 'http://***@127.0.0.1:19300'"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert!(
        doc["run"]["preflight_error"]
            .as_str()
            .is_some_and(|e| e.contains("'http://***@127.0.0.1:19300'")),
        "{json}"
    );
    for (what, text) in [
        ("stderr", &err),
        ("the JSON", &json),
        ("the metrics", &written),
    ] {
        for secret in ["Pr0x", "yPW", "puser"] {
            assert!(!text.contains(secret), "{secret} in {what}: {text}");
        }
    }
}

#[test]
fn a_targets_password_is_never_quoted() {
    // A target is refused when it carries user:password (tlsping sends no
    // credentials); one that cannot be parsed is quoted with its user
    // information hidden. Before: `'https://bob:Tg/tPW@127.0.0.1:18443/'
    // is not a valid host or URL: invalid port number`.
    let bad = "https://bob:Tg/tPW@127.0.0.1:18443/";
    for args in [
        vec![bad],
        vec![
            "--compare",
            "target=https://bob:Tg/tPW@127.0.0.1:18443/",
            "a.test",
        ],
        vec!["https://bob:TgtPW@127.0.0.1:18443/"],
    ] {
        let out = support::tlsping(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", show(&out));
        let err = stderr(&out);
        assert!(!err.contains("TgtPW") && !err.contains("Tg/tPW"), "{err}");
        assert!(!err.contains("bob"), "{err}");
    }
    let out = support::tlsping(&[bad]);
    assert!(
        stderr(&out).contains(
            "'https://***@127.0.0.1:18443/' is not a valid host or URL: invalid port number"
        ),
        "{}",
        show(&out)
    );
}

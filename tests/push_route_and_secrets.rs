//! `--push` through the real binary on 127.0.0.1, against stand-ins that
//! record what reaches them: the push takes the probes' way past a proxy
//! (direct while the address is pinned, through the environment's proxy
//! with `--no-pin-ip`), its credentials come from a file or the
//! environment as well as the URL, and no message ever shows a password.

mod support;

use std::sync::mpsc::Receiver;
use std::time::Duration;

use support::{cacert, path_str, show, start, stderr, ServerOpts, TempDir};

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
    // Not pinned: the probes would go through the proxy, and so does the push.
    let out = pushed(&gateway, &["--no-pin-ip"], &[("http_proxy", &proxy)]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let got = at_proxy
        .recv_timeout(Duration::from_secs(5))
        .expect("the push went through the proxy");
    assert!(
        got.starts_with(&format!("PUT {gateway}/metrics/job/tlsping/")),
        "{got}"
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
    ];
    for push in &cases {
        let out = pushed(
            push,
            &["--openmetrics", path_str(&dir.path().join("m"))],
            &[],
        );
        let all = show(&out);
        assert!(!all.contains("hunter2"), "{push}: {all}");
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

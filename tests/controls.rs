//! The TLS controls: `--tls-max`, `--curves`, `--cert`/`--key`, `--resolve`
//! and `--connect-to`, checked through the real binary against the
//! in-process server, which records what every handshake negotiated
//! (`tests/test_server.rs` checks the server's side on its own).
//!
//! Everything is on loopback; runs are short (`-i 200ms`, `-n` 2 at most).

mod support;

use std::time::Duration;

use support::pki::{client_identity, CLIENT_CN};
use support::{
    cacert, handshakes, path_str, quick_json, quick_json_ok, run_field, samples, show, start,
    tlsping, ServerOpts, TempDir,
};

/// A usage error: exit 3, nothing on stdout, and the server never dialled.
fn assert_usage_error(args: &[&str], server: &support::TestServer) {
    let out = tlsping(args);
    assert_eq!(out.status.code(), Some(3), "{args:?}: {}", show(&out));
    assert!(out.stdout.is_empty(), "{args:?}: {}", show(&out));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        server.counters.snapshot().tcp,
        0,
        "a usage error must not touch the network"
    );
}

// ------------------------------------------------------------ --tls-max

#[test]
fn tls_max_caps_every_handshake_at_the_version_given() {
    let server = start(ServerOpts::default());
    let url = server.url();
    let doc = quick_json_ok(&["--tls-max", "1.2", "-m", "cold", "-n", "2", &url]);
    let all = samples(&doc);
    assert_eq!(all.len(), 2, "{doc:#}");
    for s in all {
        // The JSON spells versions `TLS1.2` (`tls_version_label`).
        assert_eq!(s["tls_version"], "TLS1.2", "{s:#}");
    }
    assert_eq!(run_field(&doc, "tls_max"), "1.2", "{:#}", doc["run"]);
    let seen = handshakes(&server, 3);
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|h| h.version == "TLSv1.2"),
        "the server saw only TLS 1.2: {seen:#?}"
    );

    // Without the flag, the same server speaks TLS 1.3 and nothing is capped.
    let doc = quick_json_ok(&["-m", "cold", "-n", "2", &url]);
    assert!(
        samples(&doc).iter().all(|s| s["tls_version"] == "TLS1.3"),
        "{doc:#}"
    );
    assert!(run_field(&doc, "tls_max").is_null(), "{:#}", doc["run"]);
}

#[test]
fn tls_max_takes_only_known_versions() {
    let server = start(ServerOpts::default());
    let url = server.url();
    for bad in ["1.4", "2", "tls1.2", ""] {
        assert_usage_error(&["--tls-max", bad, &url], &server);
    }
}

// ------------------------------------------------------------- --curves

#[test]
fn curves_choose_the_key_exchange_group() {
    let server = start(ServerOpts::default());
    let url = server.url();
    let doc = quick_json_ok(&["--curves", "P-256", "-m", "cold", "-n", "2", &url]);
    assert_eq!(run_field(&doc, "curves"), "P-256", "{:#}", doc["run"]);
    let seen = handshakes(&server, 3);
    assert!(seen.len() >= 3, "preflight and two rounds: {seen:#?}");
    assert!(
        seen.iter().all(|h| h.group.as_deref() == Some("secp256r1")),
        "{seen:#?}"
    );

    // A list, comma separated (echoed with colons): the first is the one
    // offered a key share, and the server (which supports all) takes it.
    let before = server.counters.handshakes().len();
    let doc = quick_json_ok(&["--curves", "X25519,P-256", "-m", "cold", "-n", "2", &url]);
    assert_eq!(
        run_field(&doc, "curves"),
        "X25519:P-256",
        "{:#}",
        doc["run"]
    );
    let seen = handshakes(&server, before + 3);
    assert!(
        seen[before..].iter().all(|h| h
            .group
            .as_deref()
            .is_some_and(|g| g.eq_ignore_ascii_case("x25519"))),
        "{seen:#?}"
    );

    // Colon separated, and a server that only has the second one.
    let p256_only = start(ServerOpts {
        groups: Some("P-256".into()),
        ..Default::default()
    });
    let doc = quick_json_ok(&[
        "--curves",
        "X25519:P-256",
        "-m",
        "cold",
        "-n",
        "2",
        &p256_only.url(),
    ]);
    assert_eq!(
        run_field(&doc, "curves"),
        "X25519:P-256",
        "{:#}",
        doc["run"]
    );
    let seen = handshakes(&p256_only, 3);
    assert!(
        seen.iter().all(|h| h.group.as_deref() == Some("secp256r1")),
        "{seen:#?}"
    );

    // Without the flag nothing is echoed.
    let doc = quick_json_ok(&["-m", "cold", "-n", "2", &url]);
    assert!(run_field(&doc, "curves").is_null(), "{:#}", doc["run"]);
}

#[test]
fn curves_are_case_insensitive_and_echoed_normalised() {
    let server = start(ServerOpts::default());
    let url = server.url();
    let doc = quick_json_ok(&["--curves", "p-256", "-m", "cold", "-n", "2", &url]);
    let seen = handshakes(&server, 3);
    assert!(
        !seen.is_empty() && seen.iter().all(|h| h.group.as_deref() == Some("secp256r1")),
        "{seen:#?}"
    );
    assert_eq!(run_field(&doc, "curves"), "P-256", "{:#}", doc["run"]);

    let doc = quick_json_ok(&["--curves", "x25519,p-256", "-m", "cold", "-n", "2", &url]);
    assert_eq!(
        run_field(&doc, "curves"),
        "X25519:P-256",
        "{:#}",
        doc["run"]
    );
}

#[test]
fn an_unknown_curve_is_a_usage_error() {
    let server = start(ServerOpts::default());
    let url = server.url();
    for bad in ["P-999", "X25519,nonsense", ""] {
        assert_usage_error(&["--curves", bad, &url], &server);
    }
}

// ------------------------------------------------------- --cert / --key

#[test]
fn client_certificate_flags_satisfy_a_server_that_requires_one() {
    let dir = TempDir::new("mtls-flags");
    let (cert, key, _) = client_identity(dir.path());
    let server = start(ServerOpts {
        require_client_cert: true,
        ..Default::default()
    });
    let url = server.url();

    // Without them every probe fails (the preflight first of all).
    let (_, out) = quick_json(&["-m", "cold", "-n", "2", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(server.counters.handshakes().is_empty());

    let doc = quick_json_ok(&[
        "--cert",
        path_str(&cert),
        "--key",
        path_str(&key),
        "-m",
        "cold",
        "-n",
        "2",
        &url,
    ]);
    let all = samples(&doc);
    assert_eq!(all.len(), 2, "{doc:#}");
    assert!(all.iter().all(|s| s["error"].is_null()), "{doc:#}");
    let seen = handshakes(&server, 3);
    assert!(seen.len() >= 3, "preflight and two rounds: {seen:#?}");
    assert!(
        seen.iter()
            .all(|h| h.client_cert_subject.as_deref() == Some(CLIENT_CN)),
        "{seen:#?}"
    );
}

#[test]
fn a_missing_client_certificate_file_is_a_usage_error() {
    let dir = TempDir::new("mtls-missing");
    let (_, key, _) = client_identity(dir.path());
    let missing = dir.path().join("no-such-cert.pem");
    let server = start(ServerOpts {
        require_client_cert: true,
        ..Default::default()
    });
    let url = server.url();
    assert_usage_error(
        &[
            "--cacert",
            &cacert(),
            "--cert",
            path_str(&missing),
            "--key",
            path_str(&key),
            &url,
        ],
        &server,
    );
}

// ------------------------------------------------ --resolve, --connect-to

#[test]
fn resolve_sends_a_name_to_the_address_given() {
    let server = start(ServerOpts::default());
    let port = server.addr.port();
    let url = format!("https://tlsping.test:{port}/");
    let pin = format!("tlsping.test:{port}:127.0.0.1");
    let doc = quick_json_ok(&["--resolve", &pin, "-m", "cold", "-n", "2", &url]);
    assert_eq!(run_field(&doc, "resolve"), &serde_json::json!([pin]));
    let all = samples(&doc);
    assert_eq!(all.len(), 2, "{doc:#}");
    assert!(all.iter().all(|s| s["error"].is_null()), "{doc:#}");
    assert!(server.counters.snapshot().requests >= 3, "it reached us");
}

#[test]
fn connect_to_sends_a_name_and_port_elsewhere() {
    let server = start(ServerOpts::default());
    let port = server.addr.port();
    let url = "https://tlsping.test:443/";
    let route = format!("tlsping.test:443:127.0.0.1:{port}");
    let doc = quick_json_ok(&["--connect-to", &route, "-m", "cold", "-n", "2", url]);
    assert_eq!(run_field(&doc, "connect_to"), &serde_json::json!([route]));
    let all = samples(&doc);
    assert_eq!(all.len(), 2, "{doc:#}");
    assert!(all.iter().all(|s| s["error"].is_null()), "{doc:#}");
    assert!(server.counters.snapshot().requests >= 3, "it reached us");
}

//! The real binary end to end against a local server: the table, the
//! statistics block, the exit codes, and the server's own counts.

mod support;

use support::{ca, start, stderr, stdout, tlsping, ServerOpts};

#[test]
fn prints_table_and_statistics_that_agree_with_the_server() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let url = server.url();
    let cacert = ca().pem_path.to_str().unwrap().to_string();
    let out = tlsping(&["-n", "4", "-i", "200ms", "--cacert", &cacert, &url]);
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{text}\nstderr:\n{}",
        stderr(&out)
    );
    let port = server.addr.port();
    assert!(
        text.starts_with(&format!(
            "HEAD {url} -> 127.0.0.1:{port} h2 · TLS1.3 · 0 bytes\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("4 rounds, 200ms interval, order=alternate"),
        "{text}"
    );
    assert!(text.contains("COLD new connection") && text.contains("WARM keep-alive"));
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && l.contains(" | "))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].ends_with("200 warmup·new conn"), "{}", rows[0]);
    for row in &rows[1..] {
        assert!(row.ends_with("| 200"), "{row}");
    }
    assert!(text.contains("--- localhost statistics ---"));
    assert!(text.contains("n = 3 (warmup 1 excluded)"));
    assert!(text.contains("ok / sent        3/3       3/3"), "{text}");
    assert!(text.contains("  (p95 needs n >= 20)"));
    assert!(text.contains("handshake overhead = +"));
    assert!(text.contains("keep-alive gain    = "));
    // Preflight 1 + 4 cold + 1 warm connection; 1 + 8 requests.
    let seen = server.counters.snapshot();
    assert_eq!((seen.tcp, seen.requests), (6, 9));
}

#[test]
fn preflight_failure_exits_2_with_one_clear_line() {
    // Bind then drop, so the port is (very likely) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = tlsping(&["-n", "2", &format!("https://127.0.0.1:{port}/")]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("tlsping: preflight to https://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("conn refused"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        stdout(&out).is_empty(),
        "nothing is measured after a failed preflight"
    );
}

#[test]
fn untrusted_certificate_fails_the_preflight() {
    let server = start(ServerOpts::default());
    // No --cacert: the test CA is not in the system store.
    let out = tlsping(&["-n", "1", &server.url()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("TLS: unknown CA"), "{}", stderr(&out));
}

#[test]
fn version_names_the_compiled_in_libraries() {
    let out = tlsping(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("tlsping {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(
        text.contains("libcurl 8.") && text.contains("OpenSSL/3.") && text.contains("nghttp2 1."),
        "{text}"
    );
}

#[test]
fn asking_for_http2_from_a_server_without_it_measures_nothing() {
    let server = start(ServerOpts::default());
    let cacert = ca().pem_path.to_str().unwrap().to_string();
    let out = tlsping(&[
        "-n",
        "2",
        "-i",
        "200ms",
        "--http-version",
        "2",
        "--cacert",
        &cacert,
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("--http-version 2 was asked for, but the server answered over http/1.1"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.counters.snapshot().tcp,
        1,
        "only the preflight's connection: no round measured HTTP/1.1 under a flag asking for 2"
    );
}

#[test]
fn the_binary_links_no_tls_http_or_compression_library() {
    if !support::have("ldd") {
        return;
    }
    let out = std::process::Command::new("ldd")
        .arg(support::bin())
        .output()
        .expect("ldd is part of libc-bin");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("libc.so"), "ldd output looks wrong:\n{text}");
    for lib in [
        "libssl",
        "libcrypto",
        "libcurl",
        "libnghttp2",
        "libz.",
        "libzstd",
        "libbrotli",
    ] {
        assert!(!text.contains(lib), "{lib} is linked dynamically:\n{text}");
    }
}

#[test]
fn requests_carry_the_user_agent_extra_headers_and_cache_busting() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let cacert = ca().pem_path.to_str().unwrap().to_string();
    let url = format!("{}path?q=1", server.url());
    let out = tlsping(&[
        "-n",
        "2",
        "-i",
        "200ms",
        "--cache-bust",
        "-H",
        "X-Test: yes",
        "--cacert",
        &cacert,
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = server.counters.seen.lock().unwrap().clone();
    // Preflight, then two rounds of two probes, each with its own sequence number.
    let paths: Vec<&str> = seen.iter().map(|(p, _, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/path?q=1",
            "/path?q=1&_=1",
            "/path?q=1&_=2",
            "/path?q=1&_=3",
            "/path?q=1&_=4"
        ]
    );
    let ua = format!("tlsping/{}", env!("CARGO_PKG_VERSION"));
    assert!(seen.iter().all(|(_, agent, _)| *agent == ua), "{seen:?}");
    assert!(
        seen.iter().all(|(_, _, x)| x.as_deref() == Some("yes")),
        "{seen:?}"
    );
}

#[test]
fn insecure_skips_verification_and_only_then() {
    let server = start(ServerOpts {
        cert: support::CertKind::UnknownCa,
        ..Default::default()
    });
    let strict = tlsping(&["-n", "1", "--warmup", "0", &server.url()]);
    assert_eq!(
        strict.status.code(),
        Some(2),
        "an unknown CA fails without -k"
    );
    let out = tlsping(&["-n", "2", "-i", "200ms", "-k", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("ok / sent        1/1       1/1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn piped_output_is_wide_and_uncut() {
    // stdout is a pipe and COLUMNS is unset: no terminal to fit, so the wide
    // layout, and not one line cut.
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let cacert = ca().pem_path.to_str().unwrap().to_string();
    let out = support::command(&[
        "-v",
        "-n",
        "2",
        "-i",
        "200ms",
        "--cacert",
        &cacert,
        &server.url(),
    ])
    .env_remove("COLUMNS")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("|") && l.contains("COLD new connection")),
        "wide layout expected:\n{text}"
    );
    assert!(!text.contains('…'), "nothing may be cut in a pipe:\n{text}");
    assert!(
        text.contains("tls                = TLS1.3 · ALPN h2 ·") && text.contains(" · chain of "),
        "the -v TLS line whole:\n{text}"
    );
}

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

#[test]
fn every_file_that_cannot_be_written_is_told_on_a_line_of_its_own() {
    // Both files' folder goes away during the run: at the end neither the
    // picture nor the figures can be written, and each says so (exit 2),
    // in the order the outputs were ended: the picture, the push (to a
    // port nothing listens on), the figures. Before, the push came first.
    use std::io::BufRead;
    let push = format!("http://127.0.0.1:{}", support::faults::closed_port());
    let server = start(ServerOpts::default());
    let dir = support::TempDir::new("both-fail");
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let (picture, figures) = (gone.join("p.svg"), gone.join("m.prom"));
    let cacert = support::cacert();
    let mut child = support::command(&[
        "-4",
        "--cacert",
        &cacert,
        "-n",
        "3",
        "-i",
        "300ms",
        "--svg",
        support::path_str(&picture),
        "--openmetrics",
        support::path_str(&figures),
        "--push",
        &push,
        &server.url(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    let read = lines.read_line(&mut first);
    std::fs::remove_dir_all(&gone).unwrap();
    assert!(read.is_ok() && first.starts_with("HEAD "), "{first:?}");
    // The rest is read while the run ends (3 rounds), within a bound.
    child.stdout = Some(lines.into_inner());
    let out = support::spawned::wait_bounded(child, std::time::Duration::from_secs(15));
    let rest = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let told: Vec<&str> = err
        .lines()
        .filter(|l| {
            l.starts_with("tlsping: could not write")
                || l.starts_with("tlsping: warning: --push failed")
        })
        .collect();
    assert_eq!(told.len(), 3, "{err}");
    assert!(
        told[0].starts_with(&format!(
            "tlsping: could not write the picture to {}: ",
            picture.display()
        )),
        "{err}"
    );
    assert!(
        told[1].starts_with("tlsping: warning: --push failed: conn refused"),
        "{err}"
    );
    assert!(
        told[2].starts_with(&format!(
            "tlsping: could not write the figures to {}: ",
            figures.display()
        )),
        "{err}"
    );
    assert!(
        rest.contains("statistics ---"),
        "stdout is complete: {rest}"
    );
}

#[test]
fn text_asked_for_that_cannot_be_written_exits_2_and_a_closed_reader_0() {
    // `--version >/dev/full`, `--help >&-`: the text is lost, which is an
    // output that could not be written (exit 2, said on stderr). A reader
    // that closed its end before (`| head -0`) has had enough: exit 0.
    let server = start(ServerOpts::default());
    let url = server.url();
    let cases: [&[&str]; 4] = [
        &["--version"],
        &["--help"],
        &["--generate", "man"],
        &["--json", "-n", "2", "-i", "200ms", &url],
    ];
    for args in cases {
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        if args[0] != "--json" {
            let out = support::command(args).stdout(full).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?} >/dev/full");
            assert!(
                stderr(&out)
                    .starts_with("tlsping: could not write the output: No space left on device"),
                "{args:?}: {}",
                stderr(&out)
            );
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let out = support::command(args).stdout(writer).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{args:?} | head -0");
            assert_eq!(stderr(&out), "", "{args:?} | head -0");
        }
        // A closed stdout: the run would write into whatever file or
        // socket took descriptor 1; it dials nothing.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(support::bin())
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?} >&-");
        assert_eq!(
            stderr(&out),
            "tlsping: could not write the output: standard output is closed\n",
            "{args:?} >&-"
        );
    }
    assert_eq!(server.counters.snapshot().tcp, 0, "nothing may be dialed");
}

#[test]
fn every_format_to_a_reader_that_has_had_enough_says_nothing() {
    // `tlsping ... | head -0`, for each way of writing a run: a closed
    // reader is no error and no message; the run exits with what its rounds
    // earned: 2 where the first line found the reader gone before round 1
    // and nothing was measured (docs/measurement.md), 0 for `--json`, which
    // writes only once its rounds have run. `--jsonl` once hid the broken pipe
    // inside a serialisation error and said "could not write the output".
    let server = start(ServerOpts::default());
    let url = server.url();
    let ca = support::cacert();
    let formats = [
        (None, 2),
        (Some("--csv"), 2),
        (Some("--jsonl"), 2),
        (Some("--json"), 0),
    ];
    for (format, code) in formats {
        let mut args = vec!["-4", "--cacert", &ca, "-n", "2", "-i", "200ms"];
        args.extend(format);
        args.push(&url);
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = support::command(&args).stdout(writer).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{format:?}: {}",
            stderr(&out)
        );
        let err = stderr(&out);
        assert!(
            !err.contains("could not write") && !err.contains("Broken pipe"),
            "{format:?}: {err}"
        );
    }
}

#[test]
fn a_failed_preflight_is_told_before_the_push_that_followed_it() {
    // The preflight fails, then the push (to a port nothing listens on)
    // fails too: the lines come in that order. Before, the push's came first.
    let target = format!("https://127.0.0.1:{}/", support::faults::closed_port());
    let push = format!("http://127.0.0.1:{}", support::faults::closed_port());
    let out = support::tlsping(&["-4", "-n", "1", "--push", &push, &target]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("tlsping: warning: --warmup"))
        .collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("tlsping: preflight to "), "{err}");
    assert!(
        lines[1].starts_with("tlsping: warning: --push failed: conn refused"),
        "{err}"
    );
}

#[test]
fn narrow_detail_lines_wrap_instead_of_being_cut() {
    // `-v --compare tls` at 60 and 70 columns: before, the detail lines
    // were cut (`full handshake in 2 round…`), and at 72 a wrap parted
    // `(medians,` from `n = 3)`.
    let server = start(ServerOpts::default());
    let ca = support::cacert();
    let url = server.url();
    for width in [60, 70, 72] {
        let out = support::command(&[
            "-4",
            "--cacert",
            &ca,
            "-n",
            "3",
            "-i",
            "200ms",
            "-v",
            "--compare",
            "tls",
            &url,
        ])
        .env("COLUMNS", width.to_string())
        .output()
        .expect("running tlsping");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = support::stdout(&out);
        // The first line is the run's header, cut by design.
        for line in text.lines().skip(1) {
            assert!(!line.contains('…'), "{width}: cut: {line:?}\n{text}");
            assert!(line.chars().count() <= width, "{width}: {line:?}");
            assert!(
                !line.trim_end().ends_with("(medians,"),
                "{width}: {line:?}\n{text}"
            );
        }
        assert!(text.contains("round trip"), "{width}: {text}");
    }
}

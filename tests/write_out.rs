//! `--write-out` against the system `curl` CLI: the same format, read from
//! the same file, rendered by curl for its own transfer and by us for real
//! samples of the engine, on the same test server, must have the same shape:
//! the same fields, six decimals in every time, a three-digit `http_code`,
//! `http_version` spelled alike, and the same address. Then the flag through
//! the binary: one line per sample, what the probes read for the format,
//! and the formats it refuses before any connection.

mod support;

use std::process::Command;

use support::curl_cli::{curl_knows, curl_w, is_curl_seconds};
use support::{start, ServerOpts, TestServer};
use tlsping::probe::{Mode, ModeChoice, Sample};
use tlsping::render::write_out;

/// Every curl variable we support, in curl's order of a transfer, then the
/// others. `time_posttransfer` came in curl 8.10, so it is asked for only
/// when this curl knows it.
fn curl_variables() -> Vec<&'static str> {
    let mut names = vec![
        "time_namelookup",
        "time_connect",
        "time_appconnect",
        "time_pretransfer",
    ];
    if curl_knows("time_posttransfer") {
        names.push("time_posttransfer");
    }
    names.extend([
        "time_starttransfer",
        "time_total",
        "http_code",
        "http_version",
        "remote_ip",
        "remote_port",
        "num_connects",
    ]);
    names
}

/// The format as a file (both tools read `@file` alike: newlines in the
/// file are dropped, `\n` is the line end), with a literal `%` and a tab.
fn format_file(names: &[&str], tag: &str) -> std::path::PathBuf {
    let vars: Vec<String> = names.iter().map(|n| format!("%{{{n}}}")).collect();
    let format = format!("100%%\\t{}\n\\n\n", vars.join("|"));
    let path = std::env::temp_dir().join(format!(
        "tlsping-write-out-{}-{tag}.txt",
        std::process::id()
    ));
    std::fs::write(&path, format).unwrap();
    path
}

/// Real samples from the engine: two rounds of both modes (cold probes open
/// a connection each, warm ones reuse theirs).
fn our_samples(server: &TestServer) -> Vec<Sample> {
    let samples =
        support::engine_samples(&support::engine_config(&server.url(), ModeChoice::Both, 2));
    assert!(samples.iter().all(|s| s.ok()));
    // Without a format asking (no `capture`), nothing more is read.
    assert!(samples.iter().all(|s| s.transfer.is_none()));
    samples
}

fn fields(line: &str) -> Vec<&str> {
    line.strip_prefix("100%\t")
        .and_then(|l| l.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("not the format's frame: {line:?}"))
        .split('|')
        .collect()
}

fn same_shape(h2: bool) {
    if !support::have("curl") {
        return;
    }
    let server = start(ServerOpts {
        h2,
        ..Default::default()
    });
    let names = curl_variables();
    let file = format_file(&names, if h2 { "h2" } else { "h1" });
    let arg = format!("@{}", file.display());
    let theirs = curl_w(&server, h2, &arg);
    let format = write_out::parse(&arg).unwrap();
    std::fs::remove_file(&file).unwrap();

    eprintln!("curl -w: {theirs:?}");
    let theirs = fields(&theirs);
    assert_eq!(theirs.len(), names.len(), "curl: {theirs:?}");
    let samples = our_samples(&server);
    let json = write_out::parse_format("%{tlsping_json}").unwrap();
    for s in &samples {
        let rendered = format.render(s, None);
        eprintln!("ours ({} round {}): {rendered:?}", s.mode.as_str(), s.round);
        let ours = fields(&rendered);
        assert_eq!(ours.len(), theirs.len(), "ours {ours:?}, curl {theirs:?}");
        let doc: serde_json::Value = serde_json::from_str(&json.render(s, None)).unwrap();
        for ((name, us), them) in names.iter().zip(&ours).zip(&theirs) {
            let context = format!(
                "{name} of {} round {}: ours {us}, curl {them}",
                s.mode.as_str(),
                s.round
            );
            if let Some(timer) = name.strip_prefix("time_") {
                assert!(is_curl_seconds(them), "{context}");
                assert!(is_curl_seconds(us), "{context}");
                // And ours is the sample's own libcurl timer, in seconds.
                let micros = doc["curl"][format!("{timer}_us")].as_u64().unwrap();
                let seconds: f64 = us.parse().unwrap();
                assert_eq!((seconds * 1e6).round() as u64, micros, "{context}");
                continue;
            }
            match *name {
                "http_code" => {
                    assert_eq!(them.len(), 3, "{context}");
                    assert_eq!(us, them, "{context}");
                }
                "http_version" => {
                    assert_eq!(us, them, "{context}");
                    assert_eq!(*us, if h2 { "2" } else { "1.1" }, "{context}");
                }
                "remote_ip" | "remote_port" => assert_eq!(us, them, "{context}"),
                // curl's one transfer is a new connection, like a cold probe.
                "num_connects" => match s.mode {
                    Mode::Cold => assert_eq!(us, them, "{context}"),
                    Mode::Warm => assert!(us.parse::<u32>().is_ok(), "{context}"),
                },
                other => panic!("{other} is not checked"),
            }
        }
    }
}

#[test]
fn same_shape_as_curl_w_over_http1() {
    same_shape(false);
}

#[test]
fn same_shape_as_curl_w_over_http2() {
    same_shape(true);
}

/// `%{json}` is one JSON object on one line in both, so a script can read
/// either line by line.
#[test]
fn json_is_one_object_on_one_line_as_in_curl() {
    if !support::have("curl") {
        return;
    }
    let server = start(ServerOpts::default());
    let theirs = curl_w(&server, false, "%{json}\\n");
    let format = write_out::parse_format("%{json}\\n").unwrap();
    let samples = our_samples(&server);
    let ours = format.render(&samples[0], None);
    for line in [&theirs, &ours] {
        let body = line.strip_suffix('\n').expect("one line");
        assert!(!body.contains('\n'), "{line}");
        let value: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(value.is_object(), "{line}");
    }
}

/// curl warns about an unknown variable and prints nothing for it; we
/// refuse the format, naming the variable as curl names it.
#[test]
fn an_unknown_variable_is_named_as_curl_names_it() {
    let err = write_out::parse_format("%{http_code} %{nosuch}").unwrap_err();
    assert!(
        err.starts_with("unknown --write-out variable: 'nosuch'"),
        "{err}"
    );
    if !support::have("curl") {
        return;
    }
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{nosuch}"])
        .arg("http://127.0.0.1:1/")
        .output()
        .expect("running curl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown --write-out variable: 'nosuch'"),
        "{stderr}"
    );
}

/// Through the binary: one line per sample as it finishes, in place of the
/// table and the statistics; an unknown variable is a usage error naming it.
#[test]
fn the_flag_prints_one_line_per_sample_and_nothing_else() {
    let server = support::start(support::ServerOpts::default());
    let ca = support::cacert();
    let out = support::tlsping(&[
        "--cacert",
        &ca,
        "-n",
        "2",
        "-i",
        "200ms",
        "--write-out",
        "%{round} %{mode} %{http_code} %{num_connects} %{warmup}\\n",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    // Round 1 is the warm-up round (--warmup 1): a script can drop it.
    assert_eq!(
        lines,
        [
            "1 cold 200 1 true",
            "1 warm 200 1 true",
            "2 cold 200 1 false",
            "2 warm 200 0 false"
        ],
        "{text}"
    );

    let out = support::tlsping(&[
        "--write-out",
        "%{time_connect} %{time_nonsense}",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        support::stderr(&out).contains("time_nonsense"),
        "{}",
        support::stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

/// The binary reads of each transfer what the format prints: libcurl's
/// answers, the header it names, curl's object.
#[test]
fn the_probes_read_what_the_format_prints() {
    let server = support::start(support::ServerOpts {
        headers: vec![
            ("Server".into(), "tlsping-test/1".into()),
            ("Content-Type".into(), "text/x-tlsping".into()),
        ],
        ..Default::default()
    });
    let ca = support::cacert();
    let out = support::tlsping(&[
        "--cacert",
        &ca,
        "-n",
        "1",
        "-m",
        "cold",
        "--write-out",
        "%{method} %{content_type} %header{server} %{url_effective} %{json}\\n",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    let want = format!(
        "HEAD text/x-tlsping tlsping-test/1 {} {{\"certs\":\"Subject:",
        server.url()
    );
    assert!(text.starts_with(&want), "{text}");
    let json = text
        .split_once(" {")
        .map(|(_, j)| format!("{{{j}"))
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(json.trim_end()).unwrap();
    assert!(doc["num_headers"].as_u64().unwrap() >= 2, "{doc}");
    assert_eq!(doc["scheme"], "https");
    assert_eq!(doc["warmup"], true);
}

/// A format is read within 64 KiB: a file or a stdin without end is a usage
/// error at once, before any connection.
#[test]
fn an_endless_format_source_is_refused_at_once() {
    use std::io::Write as _;
    let server = support::start(support::ServerOpts::default());
    let started = std::time::Instant::now();
    // `@<(yes)`: a pipe is taken, and read no further than the limit.
    let line = format!(
        "exec {} --write-out @<(yes) {}",
        support::bin(),
        server.url()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &line])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running bash");
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("is longer than 65536 bytes"),
        "{}",
        support::stderr(&out)
    );
    // A device is no format file at all.
    let out = support::tlsping(&["--write-out", "@/dev/zero", &server.url()]);
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("/dev/zero: it is a device, not a regular file"),
        "{}",
        support::stderr(&out)
    );

    let mut child = support::command(&["--write-out", "@-", &server.url()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Writes until tlsping stops reading and closes its end.
    let writer = std::thread::spawn(move || {
        let chunk = [b'%'; 4096];
        while stdin.write_all(&chunk).is_ok() {}
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains("stdin is longer than 65536 bytes"),
        "{}",
        support::stderr(&out)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(server.counters.snapshot().tcp, 0, "a connection was made");
}

/// A name curl knows that cannot apply to a probe is refused with its own
/// message, an unknown one with curl's; both before any connection.
#[test]
fn names_that_cannot_apply_are_refused_apart_from_unknown_ones() {
    let server = support::start(support::ServerOpts::default());
    let run = |fmt: &str| {
        let out = support::tlsping(&["--write-out", fmt, &server.url()]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{fmt}: {}",
            support::stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{fmt}");
        support::stderr(&out)
    };
    let not_here = run("%{http_code} %{filename_effective}");
    assert!(
        not_here.contains("curl's %{filename_effective} is not supported here"),
        "{not_here}"
    );
    let unknown = run("%{http_code} %{filename_efective}");
    assert!(
        unknown.contains("unknown --write-out variable: 'filename_efective'"),
        "{unknown}"
    );
    assert!(!unknown.contains("not supported here"), "{unknown}");
    let output = run("%output{/tmp/tlsping-never-written}%{http_code}");
    assert!(output.contains("not supported here"), "{output}");
    assert!(!std::path::Path::new("/tmp/tlsping-never-written").exists());
    assert_eq!(server.counters.snapshot().tcp, 0, "a connection was made");
}

//! Text a server chooses, on its way to a person: a redirect's `Location`
//! with bidi overrides and invisible characters, or with escape sequences,
//! reaches stderr escaped and `--json` as it came, and
//! a `Server-Timing` description with an OSC sequence, BEL and U+202E is
//! escaped in every machine output written to a terminal (a pseudo terminal
//! made by `script`) while a pipe gets it byte for byte.

mod support;

use std::process::{Command, Stdio};

use serde_json::Value;
use support::faults::{start_faulty, Fault, FaultOpts, FaultServer};
use support::{cacert, ipv4_json, ipv4_run, show, stderr, stdout, tlsping, warnings};

/// A `Location` carrying U+202E, U+2066, U+200B, U+2028, U+FEFF and U+00AD.
const BIDI_REDIRECT: &[u8] = b"HTTP/1.1 301 Moved Permanently\r\n\
Location: https://a.test/\xe2\x80\xaegnp.exe\xe2\x81\xa6x\xe2\x80\x8by\xe2\x80\xa8z\xef\xbb\xbfw\xc2\xadv\r\n\
Content-Length: 0\r\n\r\n";

/// The same characters, as the server sent them and as a terminal must see them.
const BIDI_LOCATION: &str =
    "https://a.test/\u{202e}gnp.exe\u{2066}x\u{200b}y\u{2028}z\u{feff}w\u{ad}v";
const BIDI_SHOWN: &str =
    "https://a.test/\\x{202e}gnp.exe\\x{2066}x\\x{200b}y\\x{2028}z\\x{feff}w\\x{ad}v";

/// A 200 whose `Server-Timing` description sets the window title, rings
/// the bell and turns the rest of the line around.
const HOSTILE_TIMING: &[u8] = b"HTTP/1.1 200 OK\r\n\
Server-Timing: db;dur=1.5;desc=\"\x1b]0;owned\x07\xe2\x80\xaetxt.exe\"\r\n\
Content-Length: 0\r\n\r\n";
const HOSTILE_DESC: &str = "\u{1b}]0;owned\u{7}\u{202e}txt.exe";

fn answering(response: &'static [u8]) -> FaultServer {
    start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Answer(response),
        ..Default::default()
    })
}

/// A character of the test's that no terminal may be handed raw (the line
/// structure aside): controls, and the format and separator characters sent.
fn raw_hostile(text: &str) -> Option<char> {
    let sent = [
        '\u{202e}', '\u{2066}', '\u{200b}', '\u{2028}', '\u{feff}', '\u{ad}',
    ];
    text.chars()
        .find(|&c| (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || sent.contains(&c))
}

#[test]
fn a_redirect_with_bidi_and_invisible_characters_is_escaped_on_stderr() {
    let server = answering(BIDI_REDIRECT);
    let ca = cacert();
    let out = tlsping(&["-4", "--cacert", &ca, "-n", "1", "-w", "2s", &server.url()]);
    let err = stderr(&out);
    assert!(err.contains("redirect (301)"), "{}", show(&out));
    assert!(err.contains(BIDI_SHOWN), "{}", show(&out));
    assert_eq!(raw_hostile(&err), None, "{err:?}");
    // JSON keeps the server's text as it came.
    let (doc, _) = support::json_output(&[
        "--json",
        "-4",
        "--cacert",
        &ca,
        "-n",
        "1",
        "-w",
        "2s",
        &server.url(),
    ]);
    let warnings = doc["warnings"].as_array().expect("warnings[]");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains(BIDI_LOCATION))),
        "{warnings:?}"
    );
}

/// The machine outputs of one cold probe against the hostile server.
fn machine_outputs(url: &str) -> [(&'static str, Vec<String>); 4] {
    let base = |flags: &[&str]| {
        let mut args: Vec<String> = ["-4", "--cacert", &cacert(), "-n", "1", "-m", "cold"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--warmup", "0", "-w", "2s"].map(String::from));
        args.extend(flags.iter().map(|s| s.to_string()));
        args.push(url.to_string());
        args
    };
    [
        ("csv", base(&["--csv"])),
        ("jsonl", base(&["--jsonl"])),
        ("json", base(&["--json"])),
        ("write-out", base(&["--write-out", "%{tlsping_json}\\n"])),
    ]
}

/// stdout of the binary run on a pseudo terminal (`script`), stderr dropped;
/// the terminal's own CR before each LF is taken out again.
fn on_a_terminal(args: &[String]) -> String {
    let quoted: Vec<String> = std::iter::once(support::bin().to_string())
        .chain(args.iter().cloned())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let line = format!("{} 2>/dev/null", quoted.join(" "));
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("running script");
    assert!(out.status.success(), "{}", show(&out));
    stdout(&out).replace("\r\n", "\n")
}

/// Every Server-Timing description in a JSON value (a document, a line, a sample).
fn descriptions(v: &Value) -> Vec<String> {
    let mut found = Vec::new();
    match v {
        Value::Object(map) => {
            if let Some(Value::String(d)) = map.get("desc") {
                found.push(d.clone());
            }
            map.values().for_each(|v| found.extend(descriptions(v)));
        }
        Value::Array(items) => items.iter().for_each(|v| found.extend(descriptions(v))),
        _ => {}
    }
    found
}

/// What the output says the description was: JSON read back, CSV's cell.
fn described(format: &str, text: &str) -> Vec<String> {
    match format {
        "json" => descriptions(&serde_json::from_str(text).expect("one JSON document")),
        "jsonl" | "write-out" => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .flat_map(|l| descriptions(&serde_json::from_str(l).expect("a JSON line")))
            .collect(),
        _ => vec![text.to_string()],
    }
}

#[test]
fn machine_output_escapes_server_text_on_a_terminal_and_keeps_it_in_a_pipe() {
    if !support::have("script") {
        return;
    }
    let server = answering(HOSTILE_TIMING);
    for (format, args) in machine_outputs(&server.url()) {
        let args_str: Vec<&str> = args.iter().map(String::as_str).collect();
        let piped = support::tlsping(&args_str);
        let piped_text = stdout(&piped);
        let kept = described(format, &piped_text);
        assert!(
            kept.iter().any(|d| d.contains(HOSTILE_DESC)),
            "{format} into a pipe keeps the text as sent: {}",
            show(&piped)
        );

        let shown = on_a_terminal(&args);
        assert_eq!(
            raw_hostile(&shown),
            None,
            "{format} on a terminal: {shown:?}"
        );
        if format == "csv" {
            assert!(
                shown.contains(r#"desc=""\x{1b}]0;owned\x{07}\x{202e}txt.exe"""#),
                "{shown:?}"
            );
        } else if format == "write-out" {
            // The format's own text, written as the table would show it.
            assert!(shown.contains("\\x{202e}txt.exe"), "{shown:?}");
        } else {
            // Still JSON, and it reads back as the same text.
            assert!(shown.contains("\\u202e"), "{format}: {shown:?}");
            let read_back = described(format, &shown);
            assert!(
                read_back.iter().any(|d| d.contains(HOSTILE_DESC)),
                "{format}: {read_back:?}"
            );
        }
    }
}

#[test]
fn server_text_reaches_the_terminal_escaped_and_json_intact() {
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::HostileRedirect,
        ..Default::default()
    });
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[31mhttps://elsewhere.test/";
    let out = ipv4_run(&["-n", "1", "-i", "200ms", "-w", "2s", &server.url()]);
    let err = stderr(&out);
    assert!(err.contains("redirect (301)"), "{}", show(&out));
    for raw in ['\u{1b}', '\u{7}'] {
        assert!(
            !err.contains(raw),
            "a control character reached the terminal: {err:?}"
        );
        assert!(!stdout(&out).contains(raw), "{:?}", stdout(&out));
    }
    assert!(err.contains("\\x{1b}]0;owned\\x{07}"), "{err:?}");
    // JSON keeps the server's text as it came.
    let (doc, _) = ipv4_json(&["-n", "1", "-i", "200ms", "-w", "2s", &server.url()]);
    assert!(
        warnings(&doc).iter().any(|w| w.contains(hostile)),
        "{:?}",
        warnings(&doc)
    );
}

#[test]
fn a_certificate_name_with_an_escape_is_escaped_once_on_stderr() {
    // libcurl quotes the certificate's name when it does not match: the
    // message reaches stderr escaped once (`\x{1b}`, never `\\x{1b}`),
    // alone or as one target of a comparison, and JSON keeps it as sent.
    let good = support::start(support::ServerOpts::default());
    let hostile = support::start(support::ServerOpts {
        cert: support::CertKind::HostileName,
        ..Default::default()
    });
    let shown = support::HOSTILE_CN.replace('\u{1b}', "\\x{1b}");
    let twice = support::HOSTILE_CN.replace('\u{1b}', "\\\\x{1b}");
    let list = format!("target={},{}", good.url(), hostile.url());
    let (ca, alone) = (cacert(), hostile.url());
    let runs = [
        vec!["-n", "1", "-w", "2s", "--cacert", &ca, &alone],
        vec![
            "-n",
            "1",
            "-w",
            "2s",
            "-i",
            "200ms",
            "--cacert",
            &ca,
            "--compare",
            &list,
        ],
    ];
    for args in &runs {
        let out = tlsping(args);
        let err = stderr(&out);
        assert!(err.contains(&shown), "{args:?}: {}", show(&out));
        assert!(!err.contains(&twice), "escaped twice: {err}");
        assert_eq!(raw_hostile(&err), None, "{err:?}");
    }
    let mut json = vec!["--json"];
    json.extend(runs[1].iter().copied());
    let (doc, out) = support::json_output(&json);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        warnings(&doc)
            .iter()
            .any(|w| w.contains(support::HOSTILE_CN)),
        "{:?}",
        warnings(&doc)
    );
}

//! Why a handshake cost what it did, read against real TLS servers on the
//! delayed path (`support::path`, D = 20 ms each way): `tls_round_trips`,
//! each round trip beyond the first named in `tls_extra`, the server's own
//! time and what it sent. Each case is checked against what the server was
//! made to do (its groups, its certificate, its protocol cap, its wait) and
//! what it says it did, not against tlsping's own arithmetic.

mod support;

/// The documents' example check (figures free, words at their columns).
#[allow(dead_code)]
#[path = "readme_examples/check.rs"]
mod check;

use std::net::IpAddr;
use std::time::Duration;

use serde_json::{json, Value};
use support::path::{DelayedPath, SERVER_V4};
use support::wire::{cold, why_lines};
use support::{docs, median, start, CertKind, ServerOpts, TestServer};

const D: Duration = Duration::from_millis(20);

/// A TLS 1.3 Certificate message carrying one certificate of `der` bytes
/// (no extensions): its 4-byte header, an empty request context (1), the
/// list's length (3), the entry's length (3) and its extensions' (2).
fn certificate_message(der: usize) -> u64 {
    (der + 13) as u64
}

/// Two runs against a server made from `opts` on the delayed path: the
/// JSON document of one, the statistics block of the other (as a terminal
/// shows it), the server (for what it saw), and the path (kept alive while
/// the server's threads are in it). `None` where the path cannot be made.
struct Case {
    doc: Value,
    text: String,
    server: TestServer,
    _path: DelayedPath,
}

fn run(opts: ServerOpts, args: &[&str]) -> Option<Case> {
    let path = DelayedPath::for_test(D, None)?;
    let server = path.in_server(|| {
        start(ServerOpts {
            bind: Some(IpAddr::V4(SERVER_V4)),
            ..opts
        })
    });
    let port = server.addr.port();
    let owned = support::localhost_run(IpAddr::V4(SERVER_V4), port, "3s", "100ms", args);
    let mut all: Vec<&str> = owned.iter().map(String::as_str).collect();
    let text = path.in_client(|| {
        let out = support::command(&all)
            // Wide enough that no statistics line wraps.
            .env("COLUMNS", "400")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", support::stderr(&out));
        support::stdout(&out)
    });
    all.insert(0, "--json");
    let doc = path.in_client(|| support::json_run(&all));
    Some(Case {
        doc,
        text,
        server,
        _path: path,
    })
}

/// The one line of `lines` that starts (after its indent) with `start`.
fn line<'a>(lines: &'a [String], start: &str) -> &'a str {
    let found: Vec<&String> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with(start))
        .collect();
    assert_eq!(found.len(), 1, "one '{start}' line in {lines:#?}");
    found[0]
}

fn field(s: &Value, key: &str) -> Value {
    s[key].clone()
}

/// Prints the anatomy fields of the first cold sample (the closing note's
/// pastes), so `--nocapture` shows them.
fn show(case: &str, s: &Value) {
    let keys = [
        "tls_ms",
        "tls_setup_ms",
        "tls_finish_ms",
        "tcp_min_rtt_ms",
        "tls_round_trips",
        "tls_extra",
        "server_handshake_ms",
        "sig_alg",
        "server_key",
        "cert_bytes",
        "server_flight_bytes",
        "tls_resumed",
    ];
    let picked: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.to_string(), s[*k].clone()))
        .collect();
    println!("{case}: {}", Value::Object(picked));
}

#[test]
fn a_server_that_accepts_only_p384_costs_a_hello_retry() {
    let opts = ServerOpts {
        groups: Some("P-384".into()),
        ..Default::default()
    };
    let Some(Case {
        doc, text, server, ..
    }) = run(opts, &["-n", "3", "--resume", "off"])
    else {
        return;
    };
    let seen = support::handshakes(&server, 8);
    assert!(
        seen.iter().all(|h| h.group.as_deref() == Some("secp384r1")),
        "{seen:?}"
    );
    for s in cold(&doc) {
        show("(a) P-384 only", &s);
        assert_eq!(field(&s, "tls_round_trips"), 2, "{s}");
        let extra = s["tls_extra"].as_array().unwrap();
        assert_eq!(extra.len(), 1, "{s}");
        assert_eq!(extra[0]["kind"], "hello_retry");
        assert_eq!(extra[0]["group"], "P-384");
        // What we sent shares for: never the group the server wanted, and
        // the default list leads with X25519 (or its hybrid).
        let sent: Vec<&str> = extra[0]["sent"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!sent.is_empty() && !sent.contains(&"P-384"), "{s}");
        assert!(sent.iter().any(|g| g.contains("X25519")), "{s}");
        // Two round trips are on the wire: tls is at least 2 × 2D.
        assert!(s["tls_ms"].as_f64().unwrap() >= 4.0 * 20.0 - 0.05, "{s}");
    }
    // The run's account: every handshake had the HelloRetryRequest, and the
    // statistics say so, name the group, and name the run that measures it.
    let sum = &doc["summary"];
    assert_eq!(sum["tls_round_trips"], 2, "{sum}");
    assert_eq!(
        sum["tls_extra"]["hello_retry"], sum["tls_anatomy_n"],
        "{sum}"
    );
    assert_eq!(sum["connection_round_trips"], 4, "{sum}");
    let lines = why_lines("(a)", &text);
    let why = line(&lines, "why: ");
    assert!(why.contains("= 2 round trips × "), "{why}");
    assert!(
        why.contains("one for a HelloRetryRequest: the server wants P-384, we sent X25519"),
        "{why}"
    );
    let save = line(&lines, "to save a round trip");
    let curves = save
        .split("--curves ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no --curves in {save}"));
    assert!(curves.starts_with("P-384,X25519"), "{save}");
    assert!(line(&lines, "new connection").contains("(tcp 1 · tls 2 · srv 1)"));
    the_documents_show_these_lines(&lines);
    // The run the advice names: with its share sent first, the server
    // answers the first ClientHello, one round trip.
    let Some(Case { doc, text, .. }) = run(
        ServerOpts {
            groups: Some("P-384".into()),
            ..Default::default()
        },
        &["-n", "3", "--resume", "off", "--curves", curves],
    ) else {
        return;
    };
    assert_eq!(doc["summary"]["tls_round_trips"], 1, "{}", doc["summary"]);
    assert_eq!(doc["summary"]["tls_extra"]["hello_retry"], 0);
    let lines = why_lines("(a) as advised", &text);
    assert!(
        line(&lines, "why: ").contains("= 1 round trip × "),
        "{lines:?}"
    );
}

/// The statistics lines the documents quote from this case (the README's
/// section, docs/tls.md's "over the run" block, in both editions) are what
/// this run printed: the same words at the same columns, the figures free,
/// by the check the documents' examples go through (`readme_examples`).
fn the_documents_show_these_lines(printed: &[String]) {
    let kind = |l: &str| {
        let t = l.trim_start();
        ["why: tls ", "to save ", "new connection "]
            .into_iter()
            .find(|p| t.starts_with(p))
            // One line of each kind, but several `to save` lines, told
            // apart by what they save.
            .map(|p| match p {
                // What they save, its figure aside.
                "to save " => t
                    .split(':')
                    .next()
                    .unwrap_or(t)
                    .chars()
                    .filter(|c| !c.is_ascii_digit() && *c != '.')
                    .collect(),
                _ => p.to_string(),
            })
    };
    for (name, heading, from) in [
        ("README.md", "## Why a handshake cost what it did", None),
        ("README.ko.md", "## 핸드셰이크가 왜 그만큼 걸렸는가", None),
        (
            "docs/tls.md",
            "## Why a handshake cost what it did",
            Some("**Over the run.**"),
        ),
        (
            "docs/ko/tls.md",
            "## 핸드셰이크가 왜 그만큼 걸렸는가",
            Some("**실행 전체로.**"),
        ),
    ] {
        let text = docs::read(name);
        let mut section =
            docs::section(&text, heading).unwrap_or_else(|| panic!("{name} has no '{heading}'"));
        if let Some(from) = from {
            let at = section
                .find(from)
                .unwrap_or_else(|| panic!("{name}: no '{from}'"));
            section = &section[at..];
        }
        let quoted: Vec<&str> = section.lines().filter(|l| kind(l).is_some()).collect();
        assert!(
            quoted.len() >= 2,
            "{name} quotes no statistics line of this case"
        );
        for l in quoted {
            // The README indents its excerpt four spaces more.
            let l = match l.strip_prefix("    ") {
                Some(rest) if name.starts_with("README") => rest,
                _ => l,
            };
            let run = printed
                .iter()
                .find(|p| kind(p) == kind(l))
                .unwrap_or_else(|| panic!("{name} quotes a line this run did not print:\n{l}"));
            let problems = check::compare(&[l.to_string()], std::slice::from_ref(run));
            assert!(problems.is_empty(), "{name}: {problems:#?}");
        }
    }
}

#[test]
fn a_chain_above_the_initial_window_costs_a_round_trip_of_its_own() {
    let opts = ServerOpts {
        cert: CertKind::Big,
        ..Default::default()
    };
    let Some(Case {
        doc, text, server, ..
    }) = run(opts, &["-n", "3", "--resume", "off"])
    else {
        return;
    };
    assert!(server.leaf_der_len >= 20_000, "{}", server.leaf_der_len);
    for s in cold(&doc) {
        show("(b) 21 KB chain", &s);
        assert_eq!(field(&s, "tls_round_trips"), 2, "{s}");
        let extra = s["tls_extra"].as_array().unwrap();
        assert_eq!(extra.len(), 1, "{s}");
        assert_eq!(extra[0]["kind"], "initial_window");
        let cert = certificate_message(server.leaf_der_len);
        assert_eq!(s["cert_bytes"].as_u64(), Some(cert), "{s}");
        let flight = extra[0]["flight_bytes"].as_u64().unwrap();
        assert!(flight >= 20_000 && flight > cert, "{s}");
        assert_eq!(s["server_flight_bytes"].as_u64(), Some(flight), "{s}");
        assert!(s["tls_ms"].as_f64().unwrap() >= 4.0 * 20.0 - 0.05, "{s}");
    }
    assert_eq!(doc["summary"]["tls_round_trips"], 2, "{}", doc["summary"]);
    let lines = why_lines("(b)", &text);
    let why = line(&lines, "why: ");
    assert!(why.contains("past its initial congestion window"), "{why}");
    let save = line(&lines, "to save a round trip");
    assert!(
        save.contains("under the initial window (about 14 KB)"),
        "{save}"
    );
}

/// What `openssl speed` says one RSA-4096 signature costs on this machine,
/// in milliseconds; `None` (after a line saying so) without the tool.
fn rsa4096_sign_ms() -> Option<f64> {
    if !support::have("openssl") {
        return None;
    }
    let out = std::process::Command::new("openssl")
        .args(["speed", "-seconds", "1", "rsa4096"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // `rsa 4096 bits 0.004539s 0.000071s ...`: sign, then verify.
    let line = text
        .lines()
        .find(|l| l.starts_with("rsa") && l.contains("4096 bits"))
        .unwrap_or_else(|| panic!("no rsa 4096 line in {text}"));
    let sign = line
        .split_whitespace()
        .find_map(|w| w.strip_suffix('s')?.parse::<f64>().ok())
        .unwrap();
    Some(sign * 1e3)
}

/// What one RSA-4096 PSS signature costs the OpenSSL this process (and so
/// the test server) is built with, in milliseconds: the quickest of a few
/// batches, since a busy machine only adds.
fn rsa4096_sign_ms_here() -> f64 {
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::rsa::{Padding, Rsa};
    use openssl::sign::Signer;
    let key = PKey::from_rsa(Rsa::generate(4096).unwrap()).unwrap();
    let batch = 20;
    (0..5)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..batch {
                let mut s = Signer::new(MessageDigest::sha256(), &key).unwrap();
                s.set_rsa_padding(Padding::PKCS1_PSS).unwrap();
                s.update(b"tlsping").unwrap();
                std::hint::black_box(s.sign_to_vec().unwrap());
            }
            t.elapsed().as_secs_f64() * 1e3 / f64::from(batch)
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn an_rsa4096_leaf_costs_the_server_one_signature() {
    // The timing half can lose to a busy machine (a parallel test run
    // inflates the server's time or `openssl speed`'s): up to three runs,
    // each checked whole, the first that holds passes.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let Some(server) = rsa4096_run() else {
            return;
        };
        let here = rsa4096_sign_ms_here();
        println!("(c) one RSA-4096 signature in this process: {here:.3} ms");
        let Some(sign) = rsa4096_sign_ms() else {
            // The server signed once: never less than the signature costs
            // the library it runs (the vendored OpenSSL, which may sign
            // faster than the system's `openssl`).
            if server >= 0.8 * here {
                return;
            }
            seen.push(format!(
                "server {server:.3} ms, one signature here {here:.3} ms"
            ));
            continue;
        };
        println!(
            "(c) openssl speed: one RSA-4096 signature {sign:.3} ms; server_handshake_ms median {server:.3}"
        );
        if server >= 0.8 * here && (server - sign).abs() <= 0.5 * sign {
            return;
        }
        seen.push(format!(
            "server {server:.3} ms, one signature here {here:.3} ms, openssl speed {sign:.3} ms"
        ));
    }
    panic!("server_handshake_ms against one RSA-4096 signature, three runs: {seen:#?}");
}

/// One run against an RSA-4096 server, its lines and fields checked; the
/// median `server_handshake_ms`. `None` where the path cannot be made.
fn rsa4096_run() -> Option<f64> {
    let opts = ServerOpts {
        cert: CertKind::Rsa4096,
        ..Default::default()
    };
    let Case { doc, text, .. } = run(opts, &["-n", "3", "--resume", "off"])?;
    let lines = why_lines("(c)", &text);
    assert!(
        line(&lines, "why: ").contains("= 1 round trip × "),
        "{lines:?}"
    );
    // The advice is there where the server's time is worth saving: at
    // least 1 ms and 2 % of the new connection (a fast machine signs with
    // RSA-4096 in about 2 ms, under 2 % of this path's 125 ms).
    let server = support::why::part(line(&lines, "why: "), "server").expect("why: server");
    let total = support::why::part(line(&lines, "new connection"), "total").expect("total");
    let save = lines.iter().find(|l| l.contains("of server time"));
    if server >= 1.0 && server >= 0.02 * total {
        let save = save.unwrap_or_else(|| panic!("no server-time advice in {lines:#?}"));
        assert!(
            save.contains("RSA-4096 (rsa_pss_") && save.contains("ECDSA"),
            "{save}"
        );
        // The saving stated is the why line's server part, as printed.
        let why = line(&lines, "why: ");
        let word = why
            .split("+ server ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(save.contains(&format!("up to {word} of")), "{save}");
    } else {
        assert!(save.is_none(), "advice not worth it: {lines:#?}");
    }
    let samples = cold(&doc);
    for s in &samples {
        show("(c) RSA-4096", s);
        assert_eq!(field(s, "tls_round_trips"), 1, "{s}");
        assert_eq!(s["tls_extra"], json!([]), "{s}");
        assert!(
            s["sig_alg"].as_str().unwrap().starts_with("rsa_pss_"),
            "{s}"
        );
        assert_eq!(s["server_key"], "RSA-4096", "{s}");
    }
    Some(median(
        samples
            .iter()
            .filter_map(|s| s["server_handshake_ms"].as_f64())
            .collect(),
    ))
}

#[test]
fn tls12_has_a_second_round_trip_of_its_own() {
    let opts = ServerOpts {
        tls12: true,
        ..Default::default()
    };
    let Some(Case {
        doc, text, server, ..
    }) = run(opts, &["-n", "3", "--resume", "off"])
    else {
        return;
    };
    let seen = support::handshakes(&server, 8);
    assert!(seen.iter().all(|h| h.version == "TLSv1.2"), "{seen:?}");
    let lines = why_lines("(d)", &text);
    assert!(line(&lines, "why: ").contains("one for TLS 1.2's second flight"));
    assert!(line(&lines, "to save a round trip").contains("TLS 1.3 on the server needs one"));
    for s in cold(&doc) {
        show("(d) TLS 1.2", &s);
        assert_eq!(field(&s, "tls_round_trips"), 2, "{s}");
        assert_eq!(s["tls_extra"], json!([{"kind": "tls12"}]), "{s}");
        // The test server's P-256 key signs the ServerKeyExchange.
        assert_eq!(s["sig_alg"], "ecdsa_secp256r1_sha256", "{s}");
        assert!(s["tls_ms"].as_f64().unwrap() >= 4.0 * 20.0 - 0.05, "{s}");
    }
}

#[test]
fn a_resumed_handshake_is_one_round_trip_without_a_certificate() {
    let Some(Case {
        doc, text, server, ..
    }) = run(ServerOpts::default(), &["-n", "3", "--resume", "on"])
    else {
        return;
    };
    let lines = why_lines("(e)", &text);
    let why = line(&lines, "why: ");
    assert!(
        why.contains("= 1 round trip × ") && why.contains("resumed, with no certificate"),
        "{why}"
    );
    // The test server's tickets allow no early data: nothing to advise.
    assert!(
        lines.iter().all(|l| !l.contains("early data")),
        "{lines:#?}"
    );
    assert!(
        server.counters.snapshot().resumed >= 4,
        "{:?}",
        server.counters.snapshot()
    );
    let resumed: Vec<Value> = cold(&doc)
        .into_iter()
        .filter(|s| s["tls_resumed"] == true)
        .collect();
    assert!(resumed.len() >= 2, "{doc}");
    for s in resumed {
        show("(e) resumed", &s);
        assert_eq!(field(&s, "tls_round_trips"), 1, "{s}");
        assert_eq!(s["tls_extra"], json!([]), "{s}");
        assert_eq!(s["cert_bytes"], Value::Null, "{s}");
        assert_eq!(s["sig_alg"], Value::Null, "{s}");
        assert!(s["server_flight_bytes"].as_u64() > Some(0), "{s}");
    }
}

#[test]
fn a_server_that_waits_before_answering_shows_its_wait() {
    let wait = Duration::from_millis(30);
    let opts = ServerOpts {
        hello_wait: Some(wait),
        ..Default::default()
    };
    let Some(Case { doc, text, .. }) = run(opts, &["-n", "3", "--resume", "off"]) else {
        return;
    };
    let lines = why_lines("(f)", &text);
    assert!(
        line(&lines, "why: ").contains("= 1 round trip × "),
        "{lines:?}"
    );
    let samples = cold(&doc);
    for s in &samples {
        show("(f) server waits 30 ms", s);
        assert_eq!(field(s, "tls_round_trips"), 1, "{s}");
        assert_eq!(s["tls_extra"], json!([]), "{s}");
    }
    // The server sleeps at least the wait and does its usual work (well
    // under a millisecond) besides; a busy machine only adds.
    let server: Vec<f64> = samples
        .iter()
        .filter_map(|s| s["server_handshake_ms"].as_f64())
        .collect();
    let mid = median(server.clone());
    assert!(
        server.iter().all(|&t| t >= 30.0 - 1.5) && mid <= 30.0 + 6.0,
        "server_handshake_ms {server:?} against a 30 ms wait"
    );
    // The summary's median is the samples' median, as the statistics keep
    // it: to four significant figures (within 1/4096).
    let sum = doc["summary"]["server_handshake_ms"].as_f64().unwrap();
    assert!(
        (sum - mid).abs() <= mid / 4096.0 + 0.0015,
        "{sum} against {mid}"
    );
}

#[test]
fn a_plain_handshake_is_one_round_trip_and_names_nothing() {
    let Some(Case {
        doc, text, server, ..
    }) = run(ServerOpts::default(), &["-n", "3", "--resume", "off"])
    else {
        return;
    };
    let lines = why_lines("(g)", &text);
    let why = line(&lines, "why: ");
    assert!(
        why.contains("= 1 round trip × ") && !why.contains("one for"),
        "{why}"
    );
    // Resumption saves the server's and our work where that is worth it:
    // at least 1 ms and 2 % of the new connection (with a margin for the
    // printed figures' rounding, where either way is right).
    let work = support::why::part(why, "server").expect("why: server")
        + support::why::part(why, "client").expect("why: client");
    let total = support::why::part(line(&lines, "new connection"), "total").expect("total");
    let resume = lines.iter().find(|l| l.contains("resume sessions"));
    if work >= 1.05 && work >= 0.021 * total {
        let resume = resume.unwrap_or_else(|| panic!("no resumption advice in {lines:#?}"));
        assert!(
            resume.contains("to save up to ") && resume.contains("--compare resume=off,on"),
            "{resume}"
        );
    } else if work < 0.95 || work < 0.019 * total {
        assert!(resume.is_none(), "advice not worth it: {lines:#?}");
    }
    assert!(line(&lines, "new connection").contains("(tcp 1 · tls 1 · srv 1)"));
    assert_eq!(
        doc["summary"]["tls_extra"],
        json!({"hello_retry": 0, "tls12": 0, "initial_window": 0, "split_flight": 0, "loss": 0})
    );
    for s in cold(&doc) {
        show("(g) plain", &s);
        assert_eq!(field(&s, "tls_round_trips"), 1, "{s}");
        assert_eq!(s["tls_extra"], json!([]), "{s}");
        assert_eq!(s["sig_alg"], "ecdsa_secp256r1_sha256", "{s}");
        assert_eq!(s["server_key"], "EC P-256", "{s}");
        let cert = certificate_message(server.leaf_der_len);
        assert_eq!(s["cert_bytes"].as_u64(), Some(cert), "{s}");
        assert!(s["server_flight_bytes"].as_u64() > Some(cert), "{s}");
        assert!(s["server_handshake_ms"].as_f64().is_some(), "{s}");
    }
    // A warm probe on a kept connection made no handshake: nothing to say.
    for s in doc["samples"].as_array().unwrap() {
        if s["mode"] == "warm" && s["reused"] == true {
            for k in [
                "tls_round_trips",
                "tls_extra",
                "server_handshake_ms",
                "sig_alg",
                "server_key",
                "cert_bytes",
                "server_flight_bytes",
            ] {
                assert_eq!(s[k], Value::Null, "{k}: {s}");
            }
        }
    }
}

#[test]
fn early_data_says_what_it_saved_against_a_round_trip() {
    let opts = ServerOpts {
        early_data: true,
        answer_early: true,
        ..Default::default()
    };
    let Some(Case { doc, text, .. }) = run(opts, &["-n", "4", "--early-data"]) else {
        return;
    };
    let accepted = cold(&doc)
        .iter()
        .filter(|s| s["early_data"] == "accepted")
        .count();
    assert!(accepted >= 2, "{doc}");
    let lines = why_lines("(h)", &text);
    let early = line(&lines, "early data: ");
    assert!(
        early.contains("resumed handshakes sent the request in their first flight"),
        "{early}"
    );
    // The server answered the early request before our Finished went out:
    // srv is far under the round trip (2D = 40 ms) a later request waits.
    let early_srv: Vec<f64> = cold(&doc)
        .iter()
        .filter(|s| s["early_data"] == "accepted")
        .filter_map(|s| s["srv_ms"].as_f64())
        .collect();
    assert!(median(early_srv.clone()) < 20.0, "{early_srv:?}");
    // The whole connection: tcp 1, tls 1 and no round trip of its own for srv.
    assert!(line(&lines, "new connection").contains("(tcp 1 · tls 1 · srv 0)"));
    assert_eq!(
        doc["summary"]["connection_round_trips"], 2,
        "{}",
        doc["summary"]
    );
}

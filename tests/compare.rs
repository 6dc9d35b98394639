//! `--compare`: several ways of connecting in the same rounds, through the
//! real binary against in-process servers that record what every handshake
//! negotiated and count connections, so each variant's probes are seen to
//! reach the server the way the variant asks.
//!
//! Loopback only; short runs (`-i 200ms`, a handful of rounds).

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use support::server::HandshakeSeen;
use support::{handshakes, quick_json, quick_json_ok, samples, start, stderr, ServerOpts};

/// [`quick_json_ok`] and what went to stderr.
fn run_with_stderr(args: &[&str]) -> (Value, String) {
    let (doc, out) = quick_json(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}\n{}", stderr(&out));
    (doc, stderr(&out))
}

/// The samples of one variant, by label.
fn of<'a>(doc: &'a Value, label: &str) -> Vec<&'a Value> {
    samples(doc)
        .iter()
        .filter(|s| s["variant"] == label)
        .collect()
}

fn count_by<F: Fn(&HandshakeSeen) -> String>(
    seen: &[HandshakeSeen],
    key: F,
) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for h in seen {
        *m.entry(key(h)).or_insert(0) += 1;
    }
    m
}

/// The paired difference of `stage` for cold probes, variant against baseline.
fn difference<'a>(doc: &'a Value, variant: &str, stage: &str) -> &'a Value {
    doc["summary"]["differences"]
        .as_array()
        .expect("summary.differences[]")
        .iter()
        .find(|d| d["variant"] == variant && d["stage"] == stage && d["mode"] == "cold")
        .unwrap_or_else(|| panic!("no {variant} {stage} difference: {:#}", doc["summary"]))
}

#[test]
fn tls_variants_reach_the_server_as_asked_and_rotate() {
    let server = start(ServerOpts::default());
    let n = 4;
    let doc = quick_json_ok(&[
        "--compare",
        "tls",
        "--resume",
        "off",
        "-m",
        "cold",
        "-n",
        "4",
        &server.url(),
    ]);
    let compare = &doc["run"]["compare"];
    assert_eq!(compare["axis"], "tls", "{compare:#}");
    assert_eq!(compare["probes_per_round"], 2, "{compare:#}");
    for label in ["TLS1.2", "TLS1.3"] {
        let mine = of(&doc, label);
        assert_eq!(mine.len(), n, "{label}: {doc:#}");
        let want = if label == "TLS1.2" {
            "TLS1.2"
        } else {
            "TLS1.3"
        };
        assert!(mine.iter().all(|s| s["tls_version"] == want), "{mine:#?}");
    }
    // One preflight per variant, then one connection per cold probe.
    let seen = handshakes(&server, 2 + 2 * n);
    assert_eq!(server.counters.snapshot().tcp, 2 + 2 * n);
    let versions = count_by(&seen, |h| h.version.clone());
    assert_eq!(versions.get("TLSv1.2"), Some(&(1 + n)), "{versions:?}");
    assert_eq!(versions.get("TLSv1.3"), Some(&(1 + n)), "{versions:?}");
    // Each variant runs first in half the rounds.
    let mut first = BTreeMap::new();
    for round in 1..=n as u64 {
        let s = samples(&doc)
            .iter()
            .find(|s| s["round"] == round)
            .expect("a sample of every round");
        *first
            .entry(s["variant"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    assert_eq!(
        first.values().copied().collect::<Vec<_>>(),
        [2, 2],
        "{first:?}"
    );
}

#[test]
fn http_variants_keep_one_warm_connection_each() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let n = 3;
    let doc = quick_json_ok(&["--compare", "http", "-n", "3", &server.url()]);
    for (label, alpn) in [("HTTP/1.1", "http/1.1"), ("HTTP/2", "h2")] {
        let mine = of(&doc, label);
        assert_eq!(mine.len(), 2 * n, "{label}: {doc:#}");
        assert!(
            mine.iter()
                .all(|s| s["alpn"] == alpn || s["alpn"].is_null()),
            "{mine:#?}"
        );
        let warm_new: usize = mine
            .iter()
            .filter(|s| s["mode"] == "warm" && s["new_conn"] == true)
            .count();
        assert_eq!(warm_new, 1, "{label}: warm dials once: {mine:#?}");
    }
    // Per variant: its preflight, N cold connections and one warm one.
    let seen = handshakes(&server, 2 * (1 + n + 1));
    assert_eq!(server.counters.snapshot().tcp, 2 * (1 + n + 1));
    let by_alpn = count_by(&seen, |h| h.alpn.clone().unwrap_or_default());
    assert_eq!(by_alpn.get("h2"), Some(&(1 + n + 1)), "{by_alpn:?}");
    assert_eq!(by_alpn.get("http/1.1"), Some(&(1 + n + 1)), "{by_alpn:?}");
}

#[test]
fn resume_variants_resume_or_never_do() {
    let server = start(ServerOpts::default());
    let doc = quick_json_ok(&[
        "--compare",
        "resume",
        "-m",
        "cold",
        "-n",
        "3",
        &server.url(),
    ]);
    let resumed = |label: &str| -> Vec<bool> {
        of(&doc, label)
            .iter()
            .map(|s| s["tls_resumed"] == true)
            .collect()
    };
    assert_eq!(resumed("resume=on"), [false, true, true]);
    assert_eq!(resumed("resume=off"), [false, false, false]);
    let seen = handshakes(&server, 8);
    assert_eq!(seen.iter().filter(|h| h.resumed).count(), 2, "{seen:#?}");
}

#[test]
fn group_variants_negotiate_the_group_named() {
    let server = start(ServerOpts::default());
    let doc = quick_json_ok(&[
        "--compare",
        "group=X25519,P-256",
        "-m",
        "cold",
        "-n",
        "3",
        &server.url(),
    ]);
    let seen = handshakes(&server, 8);
    let groups = count_by(&seen, |h| {
        h.group.clone().unwrap_or_default().to_ascii_lowercase()
    });
    assert_eq!(groups.get("x25519"), Some(&4), "{groups:?}");
    assert_eq!(groups.get("secp256r1"), Some(&4), "{groups:?}");
    assert_eq!(of(&doc, "X25519").len(), 3);
    assert_eq!(of(&doc, "P-256").len(), 3);
    // Each variant's samples name their group as its label does (the
    // server's OpenSSL says secp256r1): before, `tls_group` said secp256r1.
    for label in ["X25519", "P-256"] {
        assert!(
            of(&doc, label).iter().all(|s| s["tls_group"] == label),
            "{label}: {doc}"
        );
    }
}

#[test]
fn a_group_has_one_name_in_every_output() {
    // `--curves P-256`: the header, -v, the JSON and the metrics' label say
    // P-256, as --curves does; before, all but the header said secp256r1.
    let server = start(ServerOpts::default());
    let url = server.url();
    let doc = quick_json_ok(&["--curves", "secp256r1", "-n", "2", &url]);
    assert_eq!(doc["run"]["curves"], "P-256", "{doc}");
    assert_eq!(doc["run"]["tls_group"], "P-256", "{doc}");
    let cold: Vec<&Value> = samples(&doc)
        .iter()
        .filter(|s| s["mode"] == "cold")
        .collect();
    assert!(!cold.is_empty(), "{doc}");
    assert!(cold.iter().all(|s| s["tls_group"] == "P-256"), "{doc}");
    let ca = support::cacert();
    let out = support::tlsping(&[
        "-4", "--cacert", &ca, "--curves", "P-256", "-v", "-n", "2", &url,
    ]);
    let text = support::stdout(&out);
    assert!(text.contains("curves=P-256"), "{text}");
    assert!(text.contains(" · P-256 · chain of "), "{text}");
    assert!(!text.contains("secp256r1"), "{text}");
    let out = support::tlsping(&[
        "-4",
        "--cacert",
        &ca,
        "--curves",
        "P-256",
        "-n",
        "2",
        "--openmetrics",
        "-",
        &url,
    ]);
    let text = support::stdout(&out);
    assert!(text.contains("group=\"P-256\""), "{text}");
    assert!(!text.contains("secp256r1"), "{text}");
}

#[test]
fn a_variant_that_cannot_run_is_reported_and_the_others_go_on() {
    // HTTP/1.1 only: the HTTP/2 variant's preflight gets HTTP/1.1 back.
    let server = start(ServerOpts::default());
    let (doc, err) =
        run_with_stderr(&["--compare", "http", "-m", "cold", "-n", "2", &server.url()]);
    assert_eq!(err.matches("HTTP/2 cannot run").count(), 1, "{err}");
    let variants = doc["run"]["compare"]["variants"].as_array().unwrap();
    assert_eq!(variants[0]["available"], true, "{variants:#?}");
    assert_eq!(variants[1]["available"], false, "{variants:#?}");
    assert_eq!(doc["run"]["compare"]["probes_per_round"], 1);
    assert_eq!(of(&doc, "HTTP/1.1").len(), 2);
    assert!(of(&doc, "HTTP/2").is_empty());
}

#[test]
fn ip_variants_reach_each_family() {
    let v4 = start(ServerOpts::default());
    let port = v4.addr.port();
    let v6 = start(ServerOpts {
        ipv6: true,
        port: Some(port),
        ..Default::default()
    });
    let doc = quick_json_ok(&["--compare", "ip", "-m", "cold", "-n", "2", &v4.url()]);
    assert!(of(&doc, "IPv4")
        .iter()
        .all(|s| s["addr"] == format!("127.0.0.1:{port}")));
    assert!(of(&doc, "IPv6")
        .iter()
        .all(|s| s["addr"] == format!("[::1]:{port}")));
    assert_eq!(
        v4.counters.snapshot().tcp,
        3,
        "preflight and two cold probes"
    );
    assert_eq!(
        v6.counters.snapshot().tcp,
        3,
        "preflight and two cold probes"
    );
}

#[test]
fn addr_variants_dial_each_address_listed() {
    let one = start(ServerOpts::default());
    let port = one.addr.port();
    let two = start(ServerOpts {
        bind: Some("127.0.0.2".parse().unwrap()),
        port: Some(port),
        ..Default::default()
    });
    let doc = quick_json_ok(&[
        "--compare",
        "addr=127.0.0.1,127.0.0.2",
        "-n",
        "2",
        &one.url(),
    ]);
    for (label, server) in [("127.0.0.1", &one), ("127.0.0.2", &two)] {
        let mine = of(&doc, label);
        assert_eq!(mine.len(), 4, "{label}: {doc:#}");
        assert!(
            mine.iter().all(|s| s["addr"] == format!("{label}:{port}")),
            "{mine:#?}"
        );
        // Its preflight, two cold probes and one warm connection.
        assert_eq!(server.counters.snapshot().tcp, 4, "{label}");
    }
}

#[test]
fn tls12_costs_one_more_delay_than_tls13_and_the_interval_says_so() {
    let d = 40.0;
    let server = start(ServerOpts {
        delay: Some(Duration::from_millis(40)),
        ..Default::default()
    });
    let doc = quick_json_ok(&[
        "--compare",
        "tls",
        "--resume",
        "off",
        "-m",
        "cold",
        "-n",
        "8",
        "--warmup",
        "0",
        &server.url(),
    ]);
    let tls = difference(&doc, "TLS1.3", "tls");
    assert_eq!(tls["against"], "TLS1.2", "{tls:#}");
    let median = tls["median_ms"].as_f64().unwrap();
    // TLS 1.3 saves one server flight: about one D, with room for a noisy machine.
    assert!((-1.6 * d..=-0.6 * d).contains(&median), "{tls:#}");
    let ci = tls["ci_ms"].as_array().expect("an interval from 8 rounds");
    assert!(
        ci[1].as_f64().unwrap() < 0.0,
        "the interval excludes 0: {tls:#}"
    );
}

#[test]
fn early_data_variants_send_it_or_never_do() {
    let server = start(ServerOpts {
        early_data: true,
        ..Default::default()
    });
    let doc = quick_json_ok(&[
        "--compare",
        "early-data",
        "-m",
        "cold",
        "-n",
        "3",
        &server.url(),
    ]);
    let states = |label: &str| -> Vec<Value> {
        of(&doc, label)
            .iter()
            .map(|s| s["early_data"].clone())
            .collect()
    };
    assert_eq!(
        states("early-data=off"),
        [Value::Null, Value::Null, Value::Null]
    );
    assert_eq!(
        states("early-data=on"),
        ["not_sent", "accepted", "accepted"].map(Value::from)
    );
    let seen = handshakes(&server, 8);
    let accepted = seen
        .iter()
        .filter(|h| h.early_data == support::server::EarlyData::Accepted)
        .count();
    assert_eq!(accepted, 2, "{seen:#?}");
}

#[test]
fn the_first_slot_of_a_round_goes_to_every_variant_and_mode_in_turn() {
    // Two variants, both modes: over four rounds each (variant, mode) pair
    // opens one round, so no lane's cold probe always runs after the gap.
    let server = start(ServerOpts::default());
    let doc = quick_json_ok(&["--compare", "resume", "-n", "4", &server.url()]);
    let mut firsts = Vec::new();
    for round in 1..=4u64 {
        let s = samples(&doc)
            .iter()
            .find(|s| s["round"] == round)
            .expect("a sample of every round");
        firsts.push(format!("{} {}", s["variant"], s["mode"]));
    }
    let mut distinct = firsts.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{firsts:?}");
}

#[test]
fn a_tls13_variant_answered_with_tls12_cannot_run() {
    let server = start(ServerOpts {
        tls12: true,
        ..Default::default()
    });
    let (doc, err) = run_with_stderr(&["--compare", "tls", "-m", "cold", "-n", "2", &server.url()]);
    assert_eq!(err.matches("TLS1.3 cannot run").count(), 1, "{err}");
    let variants = doc["run"]["compare"]["variants"].as_array().unwrap();
    assert_eq!(variants[1]["available"], false, "{variants:#?}");
    assert!(of(&doc, "TLS1.3").is_empty());
    assert!(of(&doc, "TLS1.2")
        .iter()
        .all(|s| s["tls_version"] == "TLS1.2"));
}

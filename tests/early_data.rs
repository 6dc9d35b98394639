//! `--early-data` through the real binary: resumed cold handshakes send the
//! request as early data, and against servers that answer the early request
//! before the handshake ends, as nginx does, their session tickets come after
//! the response and every resumed cold probe must still find one to resume
//! with; when no request could go early, a warning says why.

mod support;

use serde_json::Value;
use support::server::EarlyData;
use support::{
    handshakes, json_output, quick_json_ok, run_field, samples, start, stderr, warnings, ServerOpts,
};

fn cold_run(server: &support::TestServer, rounds: &str) -> Value {
    let url = server.url();
    let cacert = support::cacert();
    let (doc, out) = json_output(&[
        "--cacert",
        &cacert,
        "--early-data",
        "--http-version",
        "1.1",
        "-m",
        "cold",
        "-n",
        rounds,
        "-i",
        "200ms",
        "-w",
        "3s",
        "--json",
        &url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    doc
}

#[test]
fn every_resumed_cold_probe_sends_early_data_when_tickets_follow_the_answer() {
    // The server's bytes reach us 25 ms after it sends them: the answer to
    // the early request arrives with the handshake, the ticket one delay
    // later, after the probe has its response.
    let server = start(ServerOpts {
        early_data: true,
        answer_early: true,
        delay: Some(std::time::Duration::from_millis(25)),
        ..Default::default()
    });
    let doc = cold_run(&server, "7");
    let all = samples(&doc);
    assert_eq!(all.len(), 7, "{doc:#}");
    for s in all {
        assert!(s["error"].is_null(), "{s:#}");
        if s["round"] == 1 {
            assert_eq!(s["tls_resumed"], false, "{s:#}");
            assert_eq!(s["early_data"], "not_sent", "{s:#}");
        } else {
            // Without the tickets read after the answer, the two tickets of
            // a full handshake would run out and round 4 would be full again.
            assert_eq!(s["tls_resumed"], true, "round {}: {s:#}", s["round"]);
            assert_eq!(s["early_data"], "accepted", "round {}: {s:#}", s["round"]);
        }
    }
    let seen = server.counters.snapshot();
    // The preflight's handshake and round 1's are the only full ones.
    assert_eq!((seen.full, seen.resumed), (2, 6), "{seen:?}");
    assert!(
        !warnings(&doc).iter().any(|w| w.contains("early data")),
        "{:?}",
        warnings(&doc)
    );
}

#[test]
fn tickets_that_allow_no_early_data_are_named_in_a_warning() {
    // Resumption works, but the server's tickets carry no early-data allowance.
    let server = start(ServerOpts::default());
    let doc = cold_run(&server, "3");
    assert!(samples(&doc).iter().all(|s| s["early_data"] == "not_sent"));
    let said = warnings(&doc);
    assert!(
        said.iter()
            .any(|w| w.contains("no request went as early data") && w.contains("allow none")),
        "{said:?}"
    );
}

#[test]
fn a_server_without_tickets_is_named_in_a_warning() {
    let server = start(ServerOpts {
        tickets: false,
        ..Default::default()
    });
    let doc = cold_run(&server, "3");
    let said = warnings(&doc);
    assert!(
        said.iter()
            .any(|w| w.contains("no request went as early data") && w.contains("no session")),
        "{said:?}"
    );
}

#[test]
fn compared_with_resumption_alone_early_data_saves_a_round_trip_every_round() {
    // Two lanes in every round: the early-data lane's next probe can come
    // right after its previous one (when it ran last in the round before),
    // so its close is given its round trip before that probe's clock starts.
    let delay = std::time::Duration::from_millis(25);
    let server = start(ServerOpts {
        early_data: true,
        answer_early: true,
        delay: Some(delay),
        ..Default::default()
    });
    let url = server.url();
    let cacert = support::cacert();
    let (doc, out) = json_output(&[
        "--cacert",
        &cacert,
        "--compare",
        "early-data",
        "--http-version",
        "1.1",
        "-m",
        "cold",
        "-n",
        "9",
        "-i",
        "200ms",
        "-w",
        "3s",
        "--json",
        &url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for s in samples(&doc) {
        if s["variant"] == "early-data=on" && s["round"] != 1 {
            assert_eq!(s["early_data"], "accepted", "round {}: {s:#}", s["round"]);
        }
    }
    let total = doc["summary"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["stage"] == "total" && d["variant"] == "early-data=on")
        .unwrap_or_else(|| panic!("{:#}", doc["summary"]));
    // The server's flight to us is what early data saves (its bytes reach
    // us 25 ms late; ours reach it at once), and the interval says so.
    // A loaded machine only adds time to either lane, so the bounds are
    // wide; what must hold is a saving, and an interval that excludes 0.
    let [lo, hi] = [0, 1].map(|i| total["ci_ms"][i].as_f64().unwrap());
    assert!(hi < 0.0, "the interval excludes no difference: {total:#}");
    assert!(lo > -80.0, "{total:#}");
    let median = total["median_ms"].as_f64().unwrap();
    assert!((-50.0..=-12.0).contains(&median), "{total:#}");
}

#[test]
fn early_data_is_sent_on_resumed_cold_handshakes() {
    let server = start(ServerOpts {
        early_data: true,
        ..Default::default()
    });
    let url = server.url();
    let doc = quick_json_ok(&["--early-data", "-m", "cold", "-n", "3", &url]);
    assert_eq!(run_field(&doc, "early_data"), true, "{:#}", doc["run"]);
    let all = samples(&doc);
    assert_eq!(all.len(), 3, "{doc:#}");
    for s in all {
        let want = if s["round"] == 1 {
            "not_sent"
        } else {
            "accepted"
        };
        assert_eq!(s["early_data"], want, "{s:#}");
    }
    let seen = handshakes(&server, 4);
    let accepted = seen
        .iter()
        .filter(|h| h.early_data == EarlyData::Accepted)
        .count();
    assert!(accepted >= 2, "rounds 2 and 3: {seen:#?}");
    assert!(
        seen.iter()
            .filter(|h| h.early_data == EarlyData::Accepted)
            .all(|h| h.resumed && h.early_bytes > 0),
        "{seen:#?}"
    );

    // Without the flag no sample says anything about early data.
    let doc = quick_json_ok(&["-m", "cold", "-n", "2", &url]);
    assert!(
        samples(&doc)
            .iter()
            .all(|s| s.get("early_data") == Some(&Value::Null)),
        "{doc:#}"
    );
}

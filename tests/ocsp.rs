//! OCSP stapling: tlsping asks every handshake for a stapled response and
//! reports, per full handshake, whether one came and what it says of the
//! leaf, in JSON, CSV and `-v`. The in-process server staples responses
//! made at test time with the `openssl` CLI for its own leaf; the probe
//! never fails over what was (or was not) stapled.
//!
//! Everything is on loopback; runs are short (`-n` 3 at most, `-i 200ms`).

mod support;

use serde_json::Value;
use support::ocsp::{Staple, StatusFileServer, TRY_LATER};
use support::{
    cacert, quick_json_ok, samples, start, stderr, stdout, tlsping, Quiet, ServerOpts, TestServer,
};
use tlsping::probe::{self, Cancel, ModeChoice, OcspStaple, ProbeEnv};

/// A server stapling `staple` (TLS 1.3 unless `tls12`).
fn stapling(staple: Option<Staple>, tls12: bool) -> TestServer {
    start(ServerOpts {
        staple,
        tls12,
        ..ServerOpts::default()
    })
}

/// [`quick_json_ok`] with `args`, then the server's URL.
fn json_run(server: &TestServer, args: &[&str]) -> Value {
    let url = server.url();
    let mut all = args.to_vec();
    all.push(&url);
    quick_json_ok(&all)
}

/// `(ocsp_stapled, ocsp_status)` of every sample that made a full handshake.
fn full_handshake_staples(doc: &Value) -> Vec<(Value, Value)> {
    samples(doc)
        .iter()
        .filter(|s| s["tls_resumed"] == false)
        .map(|s| (s["ocsp_stapled"].clone(), s["ocsp_status"].clone()))
        .collect()
}

#[test]
fn full_handshakes_report_the_good_staple_and_resumed_and_reused_ones_null() {
    if !support::have("openssl") {
        return;
    }
    let server = stapling(Some(Staple::Good), false);
    let doc = json_run(&server, &["-n", "3"]);
    let all = samples(&doc);
    assert!(all.iter().all(|s| s["error"].is_null()), "{all:#?}");
    let mut full = 0;
    let mut resumed = 0;
    for s in all {
        let staple = (&s["ocsp_stapled"], &s["ocsp_status"]);
        match s["tls_resumed"].as_bool() {
            Some(false) => {
                full += 1;
                assert_eq!(staple, (&Value::Bool(true), &Value::from("good")), "{s:#}");
            }
            // A resumed handshake carries no certificate and no staple; a
            // reused connection made no handshake at all.
            _ => {
                resumed += usize::from(s["tls_resumed"] == true);
                assert_eq!(staple, (&Value::Null, &Value::Null), "{s:#}");
            }
        }
    }
    assert!(
        full >= 2,
        "the first cold and the first warm probe make full handshakes"
    );
    assert!(resumed >= 1, "later cold probes resume: {all:#?}");
    assert_eq!(doc["run"]["ocsp_stapled"], true);
    assert_eq!(doc["run"]["ocsp_status"], "good");
    // Every full handshake asked for a staple.
    let seen = server.counters.snapshot();
    assert_eq!(
        server
            .counters
            .status_requests
            .load(std::sync::atomic::Ordering::SeqCst),
        seen.full,
        "{seen:?}"
    );
}

#[test]
fn each_kind_of_staple_is_reported_for_what_it_is_and_no_probe_fails() {
    if !support::have("openssl") {
        return;
    }
    let cases: [(Option<Staple>, bool, Value, Value); 7] = [
        (None, false, false.into(), Value::Null),
        (Some(Staple::Good), true, true.into(), "good".into()),
        (Some(Staple::Revoked), false, true.into(), "revoked".into()),
        (Some(Staple::Revoked), true, true.into(), "revoked".into()),
        (Some(Staple::Unknown), false, true.into(), "unknown".into()),
        (
            Some(Staple::UntrustedSigner),
            false,
            true.into(),
            "unverified".into(),
        ),
        (
            Some(Staple::Der(TRY_LATER.to_vec())),
            false,
            true.into(),
            "malformed".into(),
        ),
    ];
    for (staple, tls12, stapled, status) in cases {
        let server = stapling(staple.clone(), tls12);
        // Cold only, no resumption: every probe makes a full handshake.
        let doc = json_run(&server, &["-n", "2", "-m", "cold", "--resume", "off"]);
        let want = (stapled.clone(), status.clone());
        let got = full_handshake_staples(&doc);
        assert_eq!(got.len(), 2, "{staple:?}: {doc:#}");
        assert!(
            got.iter().all(|g| *g == want),
            "{staple:?} tls12={tls12}: {got:?}"
        );
        assert!(samples(&doc).iter().all(|s| s["status"] == 200));
        assert_eq!(
            (&doc["run"]["ocsp_stapled"], &doc["run"]["ocsp_status"]),
            (&stapled, &status)
        );
    }
}

#[test]
fn a_stale_staple_is_reported_stale() {
    if !support::have("openssl") || !support::have("faketime") {
        return;
    }
    let server = stapling(Some(Staple::Stale), false);
    let doc = json_run(&server, &["-n", "1", "-m", "cold"]);
    assert_eq!(
        full_handshake_staples(&doc),
        [(true.into(), "stale".into())]
    );
}

/// `tlsping --json -X GET -n 2 -m cold --resume off <trust> <url>` against
/// an `openssl s_server`: each probe's `(ocsp_stapled, ocsp_status)`.
fn status_file_run(server: &StatusFileServer, trust: &[&str]) -> Vec<(Value, Value)> {
    let url = server.url();
    let mut args = vec![
        "--json", "-X", "GET", "-n", "2", "-m", "cold", "--resume", "off",
    ];
    args.extend(["-i", "200ms", "-w", "5s"]);
    args.extend_from_slice(trust);
    args.push(&url);
    let (doc, out) = support::json_output(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(samples(&doc).iter().all(|s| s["status"] == 200), "{doc:#}");
    full_handshake_staples(&doc)
}

#[test]
fn a_staple_about_another_certificate_is_wrong_cert() {
    if !support::have("openssl") {
        return;
    }
    let server = StatusFileServer::start(&Staple::OtherCert, false);
    let got = status_file_run(&server, &["--cacert", &cacert()]);
    assert_eq!(got, vec![(true.into(), "wrong_cert".into()); 2]);
}

#[test]
fn with_k_the_signature_is_checked_but_not_who_signed_it() {
    if !support::have("openssl") {
        return;
    }
    // The server sends the CA after its leaf, so the leaf's issuer is at
    // hand without the CA file.
    let server = StatusFileServer::start(&Staple::UntrustedSigner, true);
    let trusted = status_file_run(&server, &["--cacert", &cacert()]);
    assert_eq!(trusted, vec![(true.into(), "unverified".into()); 2]);
    let insecure = status_file_run(&server, &["-k"]);
    assert_eq!(insecure, vec![(true.into(), "good".into()); 2]);
}

#[test]
fn csv_has_the_ocsp_columns_after_dns_overlap_and_verbose_names_the_staple() {
    if !support::have("openssl") {
        return;
    }
    let server = stapling(Some(Staple::Revoked), false);
    let ca = cacert();
    let url = server.url();
    let base = ["--cacert", &ca, "-n", "2", "-i", "200ms", "-m", "cold"];
    let out = tlsping(&[&base[..], &["--csv", &url]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
    let header = rdr.headers().unwrap().clone();
    let names: Vec<&str> = header.iter().collect();
    let column = |name: &str| names.iter().position(|n| *n == name).unwrap();
    // Where they were added; columns added later may follow.
    let stapled = column("dns_overlap_ms") + 1;
    assert_eq!(names[stapled..stapled + 2], ["ocsp_stapled", "ocsp_status"]);
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    let resumed = column("tls_resumed");
    let cells: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (&r[resumed], &r[stapled], &r[stapled + 1]))
        .collect();
    assert_eq!(
        cells,
        [("false", "true", "revoked"), ("true", "", "")],
        "round 1 is a full handshake, round 2 resumes it"
    );

    let out = tlsping(&[&base[..], &["-v", &url]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("ocsp staple        = revoked")),
        "{text}"
    );
}

/// In this process (so `.ci/memcheck` watches the staple change hands):
/// full handshakes carry the verdict, resumed ones none.
#[test]
fn the_staple_is_taken_off_the_live_connection_in_process() {
    if !support::have("openssl") {
        return;
    }
    for (staple, tls12, want) in [
        (Staple::Revoked, false, OcspStaple::Revoked),
        (Staple::Good, true, OcspStaple::Good),
    ] {
        let server = stapling(Some(staple), tls12);
        let cfg = support::engine_config(&server.url(), ModeChoice::Both, 3);
        let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
        let pre = probe::preflight(&cfg, &env).expect("preflight");
        assert_eq!(pre.tls.and_then(|t| t.ocsp), Some(want));
        let rounds = support::run_rounds(&cfg, &pre.method, pre.addr, &env, &mut Quiet);
        let facts: Vec<_> = rounds.samples.iter().filter_map(|s| s.tls).collect();
        assert!(facts.iter().any(|t| t.resumed), "{facts:?}");
        for t in &facts {
            let expected = (!t.resumed).then_some(want);
            assert_eq!(t.ocsp, expected, "tls12={tls12}: {t:?}");
        }
    }
}

/// The schema lists exactly the statuses tlsping can write, for the run and
/// for every sample.
#[test]
fn the_schema_names_every_ocsp_status() {
    let schema: Value =
        serde_json::from_str(include_str!("../schema/tlsping.schema.json")).unwrap();
    let mut want: Vec<Value> = OcspStaple::ALL
        .iter()
        .filter_map(|o| o.status())
        .map(Value::from)
        .collect();
    want.push(Value::Null);
    for props in [
        &schema["properties"]["run"]["properties"],
        &schema["properties"]["samples"]["items"]["properties"],
    ] {
        assert_eq!(props["ocsp_status"]["enum"], Value::from(want.clone()));
        assert_eq!(
            props["ocsp_stapled"]["type"],
            serde_json::json!(["boolean", "null"])
        );
    }
}

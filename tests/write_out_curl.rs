//! `--write-out` against the system `curl` CLI: the same GET to the same
//! test server, the same format read from the same file, rendered by curl
//! for its transfer and by us for real samples of the engine. Every
//! variable this curl knows must be there, with the same value where the
//! two transfers must agree and the same shape (seconds, numbers, JSON
//! types) where they need not. Variables this older curl lacks are
//! detected and left out.

mod support;

use std::collections::BTreeMap;
use std::process::Command;

use support::{ca, start, ServerOpts, TestServer};
use tlsping::probe::{self, Cancel, Mode, ModeChoice, Observer, ProbeEnv, Sample};
use tlsping::render::write_out::{self, WriteOut};

struct Quiet;
impl Observer for Quiet {}

/// Every plain curl variable we answer (not `json`, `header_json` or
/// `certs`, which have tests of their own), in curl's order.
const VARIABLES: [&str; 65] = [
    "conn_id",
    "content_type",
    "errormsg",
    "exitcode",
    "http_code",
    "http_connect",
    "http_version",
    "local_ip",
    "local_port",
    "method",
    "num_certs",
    "num_connects",
    "num_headers",
    "num_redirects",
    "num_retries",
    "proxy_ssl_verify_result",
    "proxy_used",
    "redirect_url",
    "referer",
    "remote_ip",
    "remote_port",
    "response_code",
    "scheme",
    "size_delivered",
    "size_download",
    "size_header",
    "size_request",
    "size_upload",
    "speed_download",
    "speed_upload",
    "ssl_verify_result",
    "time_appconnect",
    "time_connect",
    "time_namelookup",
    "time_posttransfer",
    "time_pretransfer",
    "time_queue",
    "time_redirect",
    "time_starttransfer",
    "time_total",
    "tls_earlydata",
    "url",
    "url.fragment",
    "url.host",
    "url.options",
    "url.password",
    "url.path",
    "url.port",
    "url.query",
    "url.scheme",
    "url.user",
    "url.zoneid",
    "url_effective",
    "urle.fragment",
    "urle.host",
    "urle.options",
    "urle.password",
    "urle.path",
    "urle.port",
    "urle.query",
    "urle.scheme",
    "urle.user",
    "urle.zoneid",
    "urlnum",
    "xfer_id",
];

/// Values both transfers must share: the same request to the same server.
const SAME: [&str; 21] = [
    "content_type",
    "errormsg",
    "exitcode",
    "http_code",
    "http_connect",
    "http_version",
    "local_ip",
    "method",
    "num_headers",
    "num_redirects",
    "num_retries",
    "proxy_ssl_verify_result",
    "redirect_url",
    "referer",
    "remote_ip",
    "remote_port",
    "response_code",
    "size_download",
    "size_upload",
    "ssl_verify_result",
    "urlnum",
];

/// Whether this curl has the variable: it warns about one it has not.
fn curl_knows(variable: &str) -> bool {
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", &format!("%{{{variable}}}")])
        .arg("http://127.0.0.1:1/")
        .output()
        .expect("running curl");
    !String::from_utf8_lossy(&out.stderr).contains("unknown --write-out variable")
}

/// A server whose answer carries the headers the comparison reads.
fn server(h2: bool) -> TestServer {
    let header = |n: &str, v: &str| (n.to_string(), v.to_string());
    start(ServerOpts {
        h2,
        headers: vec![
            header("Server", "tlsping-test/1"),
            header("Content-Type", "text/x-tlsping; charset=utf-8"),
            header("X-Dup", "one"),
            header("X-Dup", "two"),
        ],
        ..Default::default()
    })
}

/// curl's output for one GET of the server's URL with this format.
fn curl_w(server: &TestServer, h2: bool, format_arg: &str) -> String {
    let port = server.addr.port();
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "--cacert"])
        .arg(&ca().pem_path)
        .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
        .arg(if h2 { "--http2" } else { "--http1.1" })
        .args(["-w", format_arg])
        .arg(server.url())
        .output()
        .expect("running curl");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "curl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Real samples from the engine, reading what `format` needs: two rounds
/// of GETs in both modes (the first cold and warm probes make full
/// handshakes, the second cold one resumes, the second warm one reuses).
fn our_samples(server: &TestServer, format: &WriteOut) -> Vec<Sample> {
    let mut cfg = support::engine_config(&server.url(), ModeChoice::Both, 2);
    cfg.method = Some("GET".into());
    cfg.capture = format.needs();
    let env = ProbeEnv::new(&cfg, Cancel::new()).unwrap();
    let pre = probe::preflight(&cfg, &env).expect("preflight");
    let rounds = support::run_rounds(&cfg, &pre.method, pre.addr, &env, &mut Quiet);
    assert!(rounds.stop.is_none(), "stopped: {:?}", rounds.stop);
    assert!(rounds.samples.iter().all(|s| s.ok()));
    rounds.samples
}

/// `12.345678`: digits, a point, six digits.
fn is_curl_seconds(field: &str) -> bool {
    field.split_once('.').is_some_and(|(whole, frac)| {
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && frac.len() == 6
            && frac.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The format's fields, each after a tab so that no value can split them.
fn fields(line: &str, n: usize) -> Vec<&str> {
    let fields: Vec<&str> = line
        .strip_prefix("<<")
        .and_then(|l| l.strip_suffix(">>\n"))
        .unwrap_or_else(|| panic!("not the format's frame: {line:?}"))
        .split('\t')
        .collect();
    assert_eq!(fields.len(), n, "{line:?}");
    fields
}

fn same_fields_as_curl(h2: bool) {
    if !support::have("curl") {
        return;
    }
    let server = server(h2);
    let mut names: Vec<&str> = VARIABLES.into_iter().filter(|v| curl_knows(v)).collect();
    names.push("header{server}");
    let vars: Vec<String> = names
        .iter()
        .map(|n| match n.strip_prefix("header") {
            Some(h) => format!("%header{h}"),
            None => format!("%{{{n}}}"),
        })
        .collect();
    // From a file, as both tools read `@file` alike (newlines dropped).
    let file = std::env::temp_dir().join(format!("tlsping-wo-{}-{h2}.txt", std::process::id()));
    std::fs::write(&file, format!("<<{}\n>>\\n\n", vars.join("\\t"))).unwrap();
    let arg = format!("@{}", file.display());
    let theirs = curl_w(&server, h2, &arg);
    let format = write_out::parse(&arg).unwrap();
    std::fs::remove_file(&file).unwrap();
    eprintln!("curl -w: {theirs:?}");
    let theirs = fields(&theirs, names.len());

    for s in &our_samples(&server, &format) {
        let rendered = format.render(s, None);
        eprintln!("ours ({} round {}): {rendered:?}", s.mode.as_str(), s.round);
        let ours = fields(&rendered, names.len());
        let full_handshake = s.tls.is_some_and(|t| !t.resumed);
        for ((name, us), them) in names.iter().zip(&ours).zip(&theirs) {
            let context = format!(
                "{name} of {} round {}: ours {us:?}, curl {them:?}",
                s.mode.as_str(),
                s.round
            );
            let number = |f: &str| f.parse::<i64>().is_ok();
            match *name {
                n if SAME.contains(&n) => assert_eq!(us, them, "{context}"),
                // libcurl 8 names schemes in lower case, 7.x in upper case.
                "scheme" | "url.scheme" | "urle.scheme" => {
                    assert!(us.eq_ignore_ascii_case(them), "{context}");
                    assert_eq!(*us, "https", "{context}");
                }
                "header{server}" => {
                    assert_eq!(us, them, "{context}");
                    assert_eq!(*us, "tlsping-test/1", "{context}");
                }
                // The same URL asked for, no redirect: the same URL and parts.
                n if n.starts_with("url") => assert_eq!(us, them, "{context}"),
                n if n.starts_with("time_") => {
                    assert!(is_curl_seconds(us) && is_curl_seconds(them), "{context}")
                }
                // curl's one transfer opens a connection and makes a full
                // handshake, as our cold probes of round 1 do.
                "num_connects" if s.mode == Mode::Cold => assert_eq!(us, them, "{context}"),
                "num_certs" if full_handshake => assert_eq!(us, them, "{context}"),
                "num_certs" => assert_eq!(*us, "0", "{context}"),
                // Numbers of this transfer's own: its port, ids, speeds,
                // and a request that names tlsping instead of curl.
                _ => assert!(number(us) && number(them), "{context}"),
            }
        }
    }
}

#[test]
fn same_fields_and_values_as_curl_w_over_http1() {
    same_fields_as_curl(false);
}

#[test]
fn same_fields_and_values_as_curl_w_over_http2() {
    same_fields_as_curl(true);
}

/// The type of a JSON value, by name.
fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// `%{json}` is curl's object: every key curl prints is there with the same
/// JSON type, and the values the two transfers share are equal.
#[test]
fn json_has_curls_keys_and_types() {
    if !support::have("curl") {
        return;
    }
    let server = server(false);
    let theirs: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&curl_w(&server, false, "%{json}")).unwrap();
    let format = write_out::parse_format("%{json}").unwrap();
    let samples = our_samples(&server, &format);
    let cold = samples.iter().find(|s| s.mode == Mode::Cold).unwrap();
    let line = format.render(cold, None);
    let ours: BTreeMap<String, serde_json::Value> = serde_json::from_str(&line).unwrap();
    for (key, them) in &theirs {
        // curl's names the file it wrote (-o /dev/null); tlsping writes none.
        if key == "filename_effective" {
            assert!(ours[key].is_null(), "{line}");
            continue;
        }
        let us = ours
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {line}"));
        assert_eq!(
            json_type(us),
            json_type(them),
            "{key}: ours {us}, curl {them}"
        );
        if SAME.contains(&key.as_str()) || key == "url_effective" || key == "num_certs" {
            assert_eq!(us, them, "{key}");
        }
    }
    assert_eq!(ours["scheme"], "https");
    assert_eq!(ours["method"], "GET");
    assert_eq!(ours["content_type"], "text/x-tlsping; charset=utf-8");
    assert_eq!(ours["warmup"], true, "round 1 is the warm-up round");
    // The texts in a format of their own, the keys in curl's order.
    assert!(line.starts_with("{\"certs\":\""), "{line}");
}

/// Response headers read through libcurl's header API after the transfer:
/// each value as curl prints it, every instance of a repeated one.
#[test]
fn headers_are_the_ones_curl_prints() {
    if !support::have("curl") {
        return;
    }
    for h2 in [false, true] {
        let server = server(h2);
        let fmt =
            "%header{server}|%header{Content-Type}|%header{x-dup}|%header{none}|%{header_json}";
        let theirs = curl_w(&server, h2, fmt);
        let format = write_out::parse_format(fmt).unwrap();
        let samples = our_samples(&server, &format);
        // `%{header_json}` takes every header; no certificate was asked for.
        assert!(samples
            .iter()
            .all(|s| s.transfer.as_ref().unwrap().certs.is_empty()));
        let split = |line: &str| -> (String, BTreeMap<String, serde_json::Value>) {
            let (fields, json) = line.rsplit_once('|').unwrap();
            let mut map: BTreeMap<String, serde_json::Value> = serde_json::from_str(json).unwrap();
            // The one header that differs between two transfers.
            assert!(map.remove("date").is_some(), "{line}");
            (fields.to_string(), map)
        };
        let want = split(&theirs);
        assert_eq!(
            want.0, "tlsping-test/1|text/x-tlsping; charset=utf-8|one|",
            "h2 {h2}"
        );
        for s in &samples {
            assert_eq!(split(&format.render(s, None)), want, "h2 {h2}");
        }
    }
}

/// `%{certs}` is the chain the server sent, described as curl describes it,
/// for every probe that made a full handshake; empty for the others.
#[test]
fn certs_are_described_as_curl_describes_them() {
    if !support::have("curl") {
        return;
    }
    let server = server(false);
    let theirs = curl_w(&server, false, "%{num_certs}|%{certs}");
    let format = write_out::parse_format("%{num_certs}|%{certs}").unwrap();
    assert!(format.needs().certs);
    let samples = our_samples(&server, &format);
    let (count, text) = theirs.split_once('|').unwrap();
    assert_eq!(
        count,
        text.matches("-----BEGIN CERTIFICATE-----")
            .count()
            .to_string()
    );
    for s in &samples {
        // Certificates were asked for, headers were not.
        assert!(s.transfer.as_ref().unwrap().headers.is_empty());
        let ours = format.render(s, None);
        if s.tls.is_some_and(|t| !t.resumed) {
            assert_eq!(ours, theirs, "{} round {}", s.mode.as_str(), s.round);
        } else {
            assert_eq!(ours, "0|", "{} round {}", s.mode.as_str(), s.round);
        }
    }
}

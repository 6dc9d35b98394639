//! curl's variables answered from libcurl's facts about the transfer, and
//! curl's two objects, `%{json}` and `%{header_json}`.

use super::tests::{facts, refused, render, sample, two_versions};
use super::*;
use crate::probe::{ErrorKind, Mode, ProbeError, TlsFacts};

#[test]
fn transfer_facts_print_as_curl_prints_them() {
    let fmt = "%{method} %{scheme} %{content_type} %{local_ip}:%{local_port} \
               %{size_header}/%{size_request}/%{size_download}/%{size_delivered}/%{size_upload} \
               %{speed_download}/%{speed_upload} %{ssl_verify_result} \
               %{proxy_ssl_verify_result} %{proxy_used} %{num_redirects} [%{redirect_url}] \
               [%{referer}] %{conn_id} %{xfer_id} %{num_headers} %{num_retries} %{urlnum} \
               %{tls_earlydata}";
    assert_eq!(
        render(fmt, &sample()),
        "HEAD https text/html; charset=utf-8 192.0.2.1:50123 120/80/0/0/0 0/0 0 0 0 0 [] [] \
         3 7 3 0 0 0"
    );
}

#[test]
fn the_url_and_its_parts_are_libcurls() {
    let mut s = sample();
    s.transfer.as_mut().unwrap().url_effective = Some("https://example.test:8443/b#frag".into());
    let fmt = "%{url}|%{url.scheme}|%{url.host}|%{url.port}|%{url.path}|%{url.query}|\
               [%{url.user}]|%{url_effective}|%{urle.path}|%{urle.fragment}|[%{urle.query}]";
    assert_eq!(
        render(fmt, &s),
        "https://example.test:8443/a?q=1|https|example.test|8443|/a|q=1|[]|\
         https://example.test:8443/b#frag|/b|frag|[]"
    );
}

#[test]
fn exit_code_and_error_message_say_how_the_transfer_ended() {
    assert_eq!(render("%{exitcode}[%{errormsg}]", &sample()), "0[]");
    assert_eq!(
        render("%{exitcode}[%{errormsg}]", &refused()),
        "7[Failed to connect]"
    );
    // Our own lookup failed before libcurl ran: the code curl gives the same
    // failure, our words for it, and what curl prints for a transfer that
    // never started.
    let dns = Sample {
        error: Some(Box::new(ProbeError {
            kind: ErrorKind::DnsFail,
            text: "could not resolve host".into(),
        })),
        transfer: None,
        ..refused()
    };
    let fmt = "%{exitcode}[%{errormsg}] %{conn_id} %{xfer_id} [%{url}] [%{method}] %{size_header}";
    assert_eq!(render(fmt, &dns), "6[could not resolve host] -1 -1 [] [] 0");
    let setup = Sample {
        error: Some(Box::new(ProbeError {
            kind: ErrorKind::Error,
            text: "bad option".into(),
        })),
        ..dns.clone()
    };
    assert_eq!(render("%{exitcode}", &setup), "2");
    for (kind, code) in [(ErrorKind::Timeout, "28"), (ErrorKind::Canceled, "42")] {
        let mut s = dns.clone();
        s.error.as_mut().unwrap().kind = kind;
        assert_eq!(render("%{exitcode}", &s), code, "{kind:?}");
    }
}

#[test]
fn a_header_is_its_first_value_by_any_case() {
    let s = sample();
    assert_eq!(
        render(
            "%header{server}|%header{x-dup}|%header{X-DUP}|[%header{date}]",
            &s
        ),
        "test/1|one|one|[]"
    );
    // Without captured headers (a probe that never reached libcurl): nothing.
    let none = Sample {
        transfer: None,
        ..sample()
    };
    assert_eq!(render("[%header{server}]", &none), "[]");
}

#[test]
fn header_json_lists_each_name_once_with_all_its_values() {
    assert_eq!(
        render("%{header_json}", &sample()),
        "{\"server\":[\"test/1\"],\n\"x-dup\":[\"one\",\"two\"]\n}"
    );
    let none = Sample {
        transfer: None,
        ..sample()
    };
    assert_eq!(render("%{header_json}", &none), "{\n}");
}

#[test]
fn certificates_are_the_chains_text_and_their_count_the_chains_length() {
    let mut s = sample();
    s.transfer.as_mut().unwrap().certs =
        vec!["Subject:CN = leaf\n".into(), "Subject:CN = ca\n".into()];
    s.tls = Some(TlsFacts {
        version: "TLSv1.3",
        alpn: None,
        resumed: false,
        chain_len: Some(2),
        cipher: "TLS_AES_128_GCM_SHA256",
        group: None,
        cert_days_left: None,
        cert_expired: false,
        cert_not_after: None,
        ocsp: None,
        ticket_early_data: None,
    });
    assert_eq!(
        render("%{num_certs}|%{certs}", &s),
        "2|Subject:CN = leaf\nSubject:CN = ca\n"
    );
    // A warm probe on a kept connection made no handshake: no certificates.
    let warm = Sample {
        tls: None,
        transfer: Some(Box::new(facts())),
        ..s
    };
    assert_eq!(render("%{num_certs}|%{certs}", &warm), "0|");
}

/// Every key of curl 8.22's `%{json}`, in its order.
const CURL_KEYS: [&str; 83] = [
    "certs",
    "conn_id",
    "content_type",
    "errormsg",
    "exitcode",
    "filename_effective",
    "ftp_entry_path",
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
    "curl_version",
    "cert_bytes",
    "mode",
    "round",
    "server_flight_bytes",
    "server_key",
    "sig_alg",
    "time_response_held",
    "time_server",
    "time_server_handshake",
    "time_tls_transmission",
    "tls_extra",
    "tls_round_trips",
    "variant",
    "warmup",
];

#[test]
fn json_is_curls_object_with_curls_keys_and_types_then_ours() {
    let line = render("%{json}", &sample());
    assert!(!line.contains('\n'), "{line}");
    let doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&line).unwrap();
    let mut keys: Vec<&str> = doc.keys().map(String::as_str).collect();
    keys.sort_unstable();
    // The same set of keys, and in the text itself, curl's order.
    let mut want: Vec<&str> = CURL_KEYS.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want);
    let positions: Vec<usize> = CURL_KEYS
        .iter()
        .map(|k| line.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{line}");

    // Times are numbers written as curl writes them; codes, sizes and ids
    // numbers; text strings; no answer null.
    assert!(line.contains("\"time_total\":61.234567,"), "{line}");
    assert!(line.contains("\"time_namelookup\":0.000012,"), "{line}");
    assert_eq!(doc["http_code"], 200);
    assert_eq!(doc["response_code"], 200);
    assert_eq!(doc["http_connect"], 0);
    assert_eq!(doc["size_header"], 120);
    assert_eq!(doc["conn_id"], 3);
    assert_eq!(doc["remote_port"], 8443);
    assert_eq!(doc["http_version"], "2");
    assert_eq!(doc["content_type"], "text/html; charset=utf-8");
    assert_eq!(doc["url.port"], "8443");
    assert_eq!(doc["certs"], "");
    assert_eq!(doc["curl_version"], crate::probe::curl_version());
    assert!(doc["curl_version"]
        .as_str()
        .unwrap()
        .starts_with("libcurl/8."));
    for null in [
        "redirect_url",
        "referer",
        "errormsg",
        "filename_effective",
        "ftp_entry_path",
        "url.user",
        "url.fragment",
        "variant",
    ] {
        assert!(doc[null].is_null(), "{null}: {line}");
    }
    assert_eq!(doc["mode"], "cold");
    assert_eq!(doc["round"], 3);
    assert_eq!(doc["warmup"], false);
    // Ours come in name order: the handshake's anatomy among them.
    assert!(
        line.contains(",\"mode\":\"cold\",\"round\":3,\"server_flight_bytes\":"),
        "{line}"
    );
    let with_variant = parse_format("%{json}")
        .unwrap()
        .render(&sample(), Some(&two_versions()));
    assert!(
        with_variant
            .ends_with(",\"tls_round_trips\":null,\"variant\":\"HTTP/1.1\",\"warmup\":false}"),
        "{with_variant}"
    );
}

#[test]
fn json_of_a_failed_probe_has_its_code_and_message() {
    let doc: serde_json::Value = serde_json::from_str(&render("%{json}", &refused())).unwrap();
    assert_eq!(doc["exitcode"], 7);
    assert_eq!(doc["errormsg"], "Failed to connect");
    assert_eq!(doc["http_code"], 0);
    assert_eq!(doc["remote_ip"], "");
    assert_eq!(doc["http_version"], "0");
}

#[test]
fn json_escapes_text_as_curl_does() {
    let mut s = sample();
    s.transfer.as_mut().unwrap().content_type = Some("a\"b\\c\td\u{1f}é\u{7f}".into());
    let line = render("%{json}", &s);
    assert!(
        line.contains(r#""content_type":"a\"b\\c\td\u001fé"#),
        "{line}"
    );
    let doc: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(doc["content_type"], "a\"b\\c\td\u{1f}é\u{7f}");
    // Text output keeps it as sent.
    assert_eq!(render("%{content_type}", &s), "a\"b\\c\td\u{1f}é\u{7f}");
}

#[test]
fn a_warm_sample_says_so_in_json() {
    let s = Sample {
        mode: Mode::Warm,
        warmup: true,
        ..sample()
    };
    let doc: serde_json::Value = serde_json::from_str(&render("%{json}", &s)).unwrap();
    assert_eq!(doc["mode"], "warm");
    assert_eq!(doc["warmup"], true);
}

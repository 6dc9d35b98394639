//! Errors that say what to do next, against real servers on 127.0.0.1: a
//! certificate no trust anchor signed names `--cacert`, `SSL_CERT_FILE`
//! and `-k`; one for other names says which; `https://` to a plain HTTP
//! port and `http://` to a TLS port each point to the other scheme; a
//! server that never answers HEAD points to `-X GET`, and what such a
//! preflight learned (its address, its handshake, its stages) stays in the
//! outputs; a refused connection is said once, with what to check; a TLS
//! version the server does not take names `--tls-max`, and a server that
//! wants a client certificate names `--cert` and `--key` (real `openssl
//! s_server`s).
//!
//! Every run is `-4`: only 127.0.0.1 is ever dialled.

mod support;

use std::sync::atomic::Ordering;

use support::faults::{closed_port, start_faulty, Fault, FaultOpts};
use support::{ipv4_json, ipv4_run, samples, show, start, stderr, warnings, CertKind, ServerOpts};

/// The one line a failed preflight leaves on stderr.
fn preflight_line(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", show(out));
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("tlsping: preflight to "), "{err}");
    err
}

#[test]
fn an_untrusted_certificate_names_cacert_ssl_cert_file_and_k() {
    let server = start(ServerOpts {
        cert: CertKind::UnknownCa,
        ..Default::default()
    });
    let err = preflight_line(&ipv4_run(&["-n", "2", "-w", "2s", &server.url()]));
    assert!(err.contains("failed: TLS: unknown CA ("), "{err}");
    for next in ["--cacert FILE", "SSL_CERT_FILE", "-k"] {
        assert!(err.contains(next), "{next}: {err}");
    }
    // libcurl's words for the code speak of SSH keys: not ours to repeat.
    assert!(!err.contains("SSH"), "{err}");
}

#[test]
fn a_certificate_for_other_names_says_which() {
    let server = start(ServerOpts {
        cert: CertKind::WrongName,
        ..Default::default()
    });
    let err = preflight_line(&ipv4_run(&["-n", "2", "-w", "2s", &server.url()]));
    assert!(err.contains("failed: TLS: cert name ("), "{err}");
    assert!(
        err.contains("the certificate is for wrong.example;"),
        "{err}"
    );
    assert!(err.contains("-k"), "{err}");
    assert!(!err.contains("SSH"), "{err}");
}

#[test]
fn a_certificates_names_are_bounded_and_escaped() {
    // The names a server's certificate carries are its text: a few of
    // them, each cut, the rest counted, control characters shown.
    let (ca, ca_key) = (&support::ca().cert, &support::ca().key);
    let key = openssl::pkey::PKey::from_ec_key(
        openssl::ec::EcKey::generate(
            &openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1).unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let mut b = openssl::x509::X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(
        &openssl::bn::BigNum::from_u32(7)
            .unwrap()
            .to_asn1_integer()
            .unwrap(),
    )
    .unwrap();
    b.set_issuer_name(ca.subject_name()).unwrap();
    let mut subject = openssl::x509::X509NameBuilder::new().unwrap();
    subject
        .append_entry_by_text("CN", "elsewhere.test")
        .unwrap();
    b.set_subject_name(&subject.build()).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(30).unwrap())
        .unwrap();
    let mut san = openssl::x509::extension::SubjectAlternativeName::new();
    san.dns("evil\u{1b}[31m.test");
    let long = format!("{}.test", "x".repeat(300));
    for i in 0..30 {
        san.dns(&format!("{i}{long}"));
    }
    let san = san.build(&b.x509v3_context(Some(ca), None)).unwrap();
    b.append_extension(san).unwrap();
    b.sign(ca_key, openssl::hash::MessageDigest::sha256())
        .unwrap();
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        leaf: Some((b.build(), key)),
        ..Default::default()
    });
    let err = preflight_line(&ipv4_run(&["-n", "2", "-w", "2s", &server.url()]));
    assert!(
        err.contains("the certificate is for evil\\x{1b}[31m.test, 0xxx"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains(" and 23 more;"), "{err}");
    assert!(err.len() < 1500, "{} bytes: {err}", err.len());
}

#[test]
fn https_to_a_plain_http_port_asks_if_it_speaks_plain_http() {
    // The server answers the ClientHello with an HTTP response.
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Plaintext,
        ..Default::default()
    });
    let err = preflight_line(&ipv4_run(&["-n", "2", "-w", "2s", &server.url()]));
    assert!(err.contains("failed: TLS error ("), "{err}");
    let plain = format!("http://localhost:{}/", server.addr.port());
    assert!(
        err.contains(&format!("does this port speak plain HTTP? ({plain})")),
        "{err}"
    );
}

#[test]
fn http_to_a_tls_port_that_closes_says_the_port_speaks_tls() {
    let server = start(ServerOpts::default());
    let port = server.addr.port();
    let err = preflight_line(&ipv4_run(&[
        "-n",
        "2",
        "-w",
        "2s",
        &format!("http://localhost:{port}/"),
    ]));
    assert!(
        err.contains(&format!(
            "this port speaks TLS: measure https://localhost:{port}/"
        )),
        "{err}"
    );
}

#[test]
fn http_to_a_tls_port_that_answers_400_is_a_warning() {
    // nginx answers a plain HTTP request on an HTTPS port with a 400 and a
    // close: every probe gets a response, warm must dial every round.
    let server = start_faulty(FaultOpts {
        ok_first: 0,
        plain_http_400: true,
        ..Default::default()
    });
    let port = server.addr.port();
    let url = format!("http://localhost:{port}/");
    let (doc, out) = ipv4_json(&["-n", "2", "-w", "2s", "-i", "200ms", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let said = format!(
        "{url} answered 400, and its port speaks TLS: a plain HTTP request went to an HTTPS \
         port; measure https://localhost:{port}/"
    );
    assert!(warnings(&doc).contains(&said), "{:?}", warnings(&doc));
    assert!(stderr(&out).contains(&said), "{}", show(&out));
    // The rounds still ran, and got the 400.
    assert!(!samples(&doc).is_empty(), "{doc:#}");
    assert!(samples(&doc).iter().all(|s| s["status"] == 400), "{doc:#}");
    // A 400 from a port that is not TLS is the server's answer, no more.
    let plain = start_faulty(FaultOpts {
        ok_first: 0,
        fault: Fault::Plaintext,
        ..Default::default()
    });
    let url = format!("http://localhost:{}/", plain.addr.port());
    let (doc, out) = ipv4_json(&["-n", "1", "--warmup", "0", "-w", "2s", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        !warnings(&doc).iter().any(|w| w.contains("speaks TLS")),
        "{:?}",
        warnings(&doc)
    );
}

#[test]
fn a_server_that_never_answers_head_points_to_get_and_its_preflight_is_kept() {
    // `openssl s_server -www` answers GET only: HEAD waits for the timeout.
    if !support::have("openssl") {
        return;
    }
    let server = support::ocsp::StatusFileServer::start(&support::ocsp::Staple::Good, true);
    let (doc, out) = ipv4_json(&["-n", "2", "-w", "1s", &server.url()]);
    let err = preflight_line(&out);
    assert!(err.contains("failed: timeout (1s) ("), "{err}");
    assert!(
        err.contains("TCP and TLS1.3 completed, the HEAD request went out, and nothing came back"),
        "{err}"
    );
    assert!(err.contains("-X GET"), "{err}");
    // What the preflight learned before it timed out.
    let run = &doc["run"];
    assert_eq!(run["preflight_error_kind"], "timeout", "{run:#}");
    assert_eq!(run["addr"], format!("127.0.0.1:{}", server.port), "{run:#}");
    assert_eq!(run["tls_version"], "TLS1.3", "{run:#}");
    for stage in ["preflight_tcp_ms", "preflight_tls_ms"] {
        assert!(
            run[stage].as_f64().is_some_and(|v| v > 0.0),
            "{stage}: {run:#}"
        );
    }
    // And in the CSV's preflight row.
    let ca = support::cacert();
    let out = support::tlsping(&[
        "--csv",
        "-4",
        "--cacert",
        &ca,
        "-n",
        "2",
        "-w",
        "1s",
        &server.url(),
    ]);
    let text = support::stdout(&out);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cell("mode"), "preflight", "{text}");
    assert_eq!(cell("addr"), format!("127.0.0.1:{}", server.port), "{text}");
    assert_eq!(cell("tls_version"), "TLS1.3", "{text}");
    assert!(cell("tcp_ms").parse::<f64>().is_ok(), "{text}");
    assert!(cell("tls_ms").parse::<f64>().is_ok(), "{text}");
    // The step it names works.
    let out = ipv4_run(&[
        "-n",
        "1",
        "--warmup",
        "0",
        "-X",
        "GET",
        "-w",
        "2s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn a_probe_that_timed_out_in_the_rounds_keeps_what_it_learned() {
    let server = start_faulty(FaultOpts {
        fault: Fault::Hang,
        ..Default::default()
    });
    let (doc, out) = ipv4_json(&[
        "-m",
        "cold",
        "-n",
        "1",
        "--warmup",
        "0",
        "-w",
        "1s",
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let s = &samples(&doc)[0];
    assert_eq!(s["error_kind"], "timeout", "{s:#}");
    assert_eq!(
        s["addr"],
        format!("127.0.0.1:{}", server.addr.port()),
        "{s:#}"
    );
    assert_eq!(s["tls_version"], "TLS1.3", "{s:#}");
    assert!(s["tcp_ms"].as_f64().is_some(), "{s:#}");
    assert!(s["tls_ms"].as_f64().is_some(), "{s:#}");
    assert_eq!(server.counters.faulted.load(Ordering::SeqCst), 1);
}

#[test]
fn a_refused_connection_is_said_once() {
    let port = closed_port();
    let err = preflight_line(&ipv4_run(&[
        "-n",
        "2",
        "-w",
        "2s",
        &format!("https://127.0.0.1:{port}/"),
    ]));
    let reason = err
        .split_once("failed: conn refused (")
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("{err}"));
    // libcurl's detail, once: not its description around it again.
    assert!(
        reason.starts_with("Failed to connect to 127.0.0.1"),
        "{err}"
    );
    assert!(reason.contains(&port.to_string()), "{err}");
    assert!(!err.contains("Could not connect"), "{err}");
    assert_eq!(err.matches("connect").count(), 1, "{err}");
    // And what to check next: before, nothing.
    assert!(
        err.ends_with(
            "; nothing listens at that address and port: is the server up, and is \
             that its port?\n"
        ),
        "{err}"
    );
}

#[test]
fn a_tls_version_the_server_does_not_take_names_tls_max() {
    // `openssl s_server -tls1_3` against `--tls-max 1.2`: before, `TLS error
    // (SSL connect error: TLS connect error: ...alert protocol version)`.
    if !support::have("openssl") {
        return;
    }
    let server = support::ocsp::StatusFileServer::with_flags(&["-tls1_3"]);
    let err = preflight_line(&ipv4_run(&[
        "-n",
        "2",
        "-w",
        "2s",
        "--tls-max",
        "1.2",
        "-X",
        "GET",
        &server.url(),
    ]));
    assert!(err.contains("failed: TLS error (error:"), "{err}");
    assert!(err.contains("alert protocol version); "), "{err}");
    assert!(!err.contains("connect error"), "said twice: {err}");
    assert!(
        err.contains("the server does not take TLS 1.2, the one version --tls-max 1.2 leaves"),
        "{err}"
    );
    assert!(err.contains("drop --tls-max"), "{err}");
}

#[test]
fn a_server_that_wants_a_client_certificate_points_to_cert_and_key() {
    // `openssl s_server -Verify 1`: TLS 1.3 refuses with an alert after the
    // handshake, TLS 1.2 in it. Before, neither named --cert.
    if !support::have("openssl") {
        return;
    }
    let server = support::ocsp::StatusFileServer::with_flags(&["-Verify", "1"]);
    let url = server.url();
    let err = preflight_line(&ipv4_run(&["-n", "2", "-w", "2s", "-X", "GET", &url]));
    assert!(err.contains("alert certificate required"), "{err}");
    assert!(
        err.contains(
            "; the server asks for a client certificate: give one with --cert FILE and --key FILE"
        ),
        "{err}"
    );
    let args = ["-n", "2", "-w", "2s", "-X", "GET", "--tls-max", "1.2", &url];
    let err = preflight_line(&ipv4_run(&args));
    assert!(err.contains("alert handshake failure"), "{err}");
    assert!(
        err.contains("it may want a client certificate (--cert FILE --key FILE)"),
        "{err}"
    );
}

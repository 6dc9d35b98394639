//! The format: curl's syntax, where it comes from and its limits, what it
//! asks the probes for, and the variables a sample answers by itself.

use std::net::SocketAddr;

use super::*;
use crate::probe::{
    Axis, CurlTimers, ErrorKind, Mode, ProbeError, Proto, TransferFacts, VariantInfo,
};

/// A cold HTTP/2 sample with timers that show every digit, and the facts
/// libcurl gave about its transfer.
pub(super) fn sample() -> Sample {
    Sample {
        wall_total: Some(std::time::Duration::from_micros(61_234_600)),
        timers: CurlTimers {
            namelookup_us: 12,
            connect_us: 1_345,
            appconnect_us: 12_345,
            pretransfer_us: 123_456,
            posttransfer_us: 999_999,
            starttransfer_us: 1_000_000,
            total_us: 61_234_567,
            num_connects: 1,
        },
        status: 200,
        proto: Some(Proto::H2),
        addr: Some(SocketAddr::from(([192, 0, 2, 10], 8443))),
        transfer: Some(Box::new(facts())),
        ..Sample::new(3, Mode::Cold, true)
    }
}

pub(super) fn facts() -> TransferFacts {
    TransferFacts {
        url: "https://example.test:8443/a?q=1".into(),
        url_effective: Some("https://example.test:8443/a?q=1".into()),
        method: Some("HEAD".into()),
        scheme: Some("https".into()),
        content_type: Some("text/html; charset=utf-8".into()),
        local_ip: Some("192.0.2.1".into()),
        local_port: 50_123,
        size_header: 120,
        size_request: 80,
        conn_id: 3,
        xfer_id: 7,
        queue_us: 42,
        num_headers: 3,
        headers: vec![
            ("Server".into(), "test/1".into()),
            ("X-Dup".into(), "one".into()),
            ("x-dup".into(), "two".into()),
        ],
        ..TransferFacts::NOT_STARTED
    }
}

/// A cold probe refused before it connected.
pub(super) fn refused() -> Sample {
    Sample {
        timers: CurlTimers {
            namelookup_us: 30,
            total_us: 300,
            ..CurlTimers::default()
        },
        status: 0,
        proto: None,
        addr: None,
        error: Some(Box::new(ProbeError {
            kind: ErrorKind::ConnRefused,
            text: "Couldn't connect to server: Failed to connect".into(),
        })),
        transfer: Some(Box::new(TransferFacts {
            exit_code: 7,
            error_message: Some("Failed to connect".into()),
            ..facts()
        })),
        ..sample()
    }
}

pub(super) fn render(fmt: &str, s: &Sample) -> String {
    parse_format(fmt).unwrap().render(s, None)
}

pub(super) fn two_versions() -> CompareInfo {
    let variant = VariantInfo::new;
    CompareInfo {
        axis: Axis::Http,
        variants: vec![variant("HTTP/1.1", "1.1"), variant("HTTP/2", "2")],
        probes_per_round: 4,
    }
}

#[test]
fn every_timer_in_seconds_with_six_decimals() {
    let fmt = "%{time_namelookup} %{time_connect} %{time_appconnect} %{time_pretransfer} \
               %{time_posttransfer} %{time_starttransfer} %{time_total} %{time_queue} \
               %{time_redirect}";
    assert_eq!(
        render(fmt, &sample()),
        "0.000012 0.001345 0.012345 0.123456 0.999999 1.000000 61.234567 0.000042 0.000000"
    );
    // A timer libcurl never reached is 0, which curl prints as it is.
    assert_eq!(render("%{time_appconnect}", &refused()), "0.000000");
}

#[test]
fn http_code_has_three_digits_and_000_without_a_response() {
    let mut s = sample();
    assert_eq!(render("%{http_code} %{response_code}", &s), "200 200");
    s.status = 404;
    assert_eq!(render("%{http_code}", &s), "404");
    assert_eq!(render("%{http_code}", &refused()), "000");
    // The proxy's CONNECT answer is a code too: none is `000`.
    assert_eq!(render("%{http_connect}", &s), "000");
}

#[test]
fn http_version_is_spelled_as_curl_spells_it() {
    let mut s = sample();
    let cases = [
        (Some(Proto::Http10), "1"),
        (Some(Proto::Http11), "1.1"),
        (Some(Proto::H2), "2"),
        (Some(Proto::H3), "3"),
        (None, "0"),
    ];
    for (proto, want) in cases {
        s.proto = proto;
        assert_eq!(render("%{http_version}", &s), want, "{proto:?}");
    }
}

#[test]
fn remote_address_port_and_connections() {
    let mut s = sample();
    let fmt = "%{remote_ip}|%{remote_port}|%{num_connects}";
    assert_eq!(render(fmt, &s), "192.0.2.10|8443|1");
    // IPv6 without brackets, as curl prints CURLINFO_PRIMARY_IP.
    s.addr = Some("[2001:db8::1]:443".parse().unwrap());
    s.timers.num_connects = 0;
    assert_eq!(render(fmt, &s), "2001:db8::1|443|0");
    s.addr = None;
    assert_eq!(render(fmt, &s), "|0|0");
}

#[test]
fn mode_round_variant_and_warmup_are_ours() {
    let mut s = sample();
    let fmt = "%{mode} %{round} [%{variant}] %{warmup}";
    assert_eq!(render(fmt, &s), "cold 3 [] false");
    s.mode = Mode::Warm;
    s.variant = 1;
    s.warmup = true;
    let cmp = two_versions();
    let w = parse_format(fmt).unwrap();
    assert_eq!(w.render(&s, Some(&cmp)), "warm 3 [HTTP/2] true");
}

#[test]
fn tlsping_json_is_our_sample_object_on_one_line() {
    let s = sample();
    let cmp = two_versions();
    let w = parse_format("%{tlsping_json}").unwrap();
    for compare in [None, Some(&cmp)] {
        let line = w.render(&s, compare);
        assert!(!line.contains('\n'), "{line}");
        let got: serde_json::Value = serde_json::from_str(&line).unwrap();
        let want = serde_json::to_value(super::super::json::SampleJson::new(&s, compare)).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn escapes_and_percent_signs_follow_curl() {
    let s = sample();
    let cases = [
        (r"a\nb\tc\rd", "a\nb\tc\rd"),
        // curl knows only \n, \r and \t: any other pair is printed as written.
        (r"back\\slash", r"back\\slash"),
        (r"\x", r"\x"),
        (r"end\", r"end\"),
        ("100%%", "100%"),
        ("%%{http_code}", "%{http_code}"),
        ("50%", "50%"),
        ("%q", "%q"),
        // `%` takes the next character with it, so the escape is not one.
        (r"%\n", r"%\n"),
        // A variable or directive never closed is text.
        ("code %{http_code", "code %{http_code"),
        ("%header{date", "%header{date"),
        ("%output{log", "%output{log"),
        ("naïve %{http_code} ✓", "naïve 200 ✓"),
        ("", ""),
    ];
    for (fmt, want) in cases {
        assert_eq!(render(fmt, &s), want, "format {fmt:?}");
    }
}

#[test]
fn names_match_without_regard_to_case() {
    assert_eq!(
        render("%{HTTP_CODE} %{Time_Total} %{URL.Host}", &sample()),
        "200 61.234567 example.test"
    );
}

#[test]
fn an_unknown_variable_is_an_error_that_names_it() {
    let err = parse_format("ok %{http_code} %{size_downlaod}\\n").unwrap_err();
    assert!(
        err.starts_with("unknown --write-out variable: 'size_downlaod' ("),
        "{err}"
    );
    assert!(parse_format("%{}")
        .unwrap_err()
        .starts_with("unknown --write-out variable: ''"));
    assert!(!err.contains("not supported here"), "{err}");
}

#[test]
fn names_curl_knows_that_cannot_apply_are_refused_as_not_supported_here() {
    for name in [
        "filename_effective",
        "ftp_entry_path",
        "onerror",
        "stdout",
        "stderr",
    ] {
        let err = parse_format(&format!("%{{http_code}} %{{{name}}}")).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "--write-out: curl's %{{{name}}} is not supported here: "
            )),
            "{err}"
        );
    }
    for (fmt, shown) in [
        ("%output{>>log}", "%output{>>log}"),
        ("%time{%H}", "%time{%H}"),
    ] {
        let err = parse_format(fmt).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "--write-out: curl's {shown} is not supported here: "
            )),
            "{err}"
        );
    }
}

#[test]
fn a_header_name_is_bounded_as_in_curl() {
    let longest = "h".repeat(MAX_HEADER_NAME);
    assert!(parse_format(&format!("%header{{{longest}}}")).is_ok());
    let err = parse_format(&format!("%header{{{longest}x}}")).unwrap_err();
    assert!(err.contains("at most 255 bytes"), "{err}");
}

#[test]
fn the_format_says_what_the_probes_must_read() {
    let needs = |fmt: &str| parse_format(fmt).unwrap().needs();
    // What a sample holds anyway costs the probes nothing more.
    let plain = "%{time_total} %{http_code} %{remote_ip} %{num_certs} %{mode} %{tlsping_json}";
    assert!(needs(plain).is_empty(), "{:?}", needs(plain));
    let facts = needs("%{content_type}");
    assert!(facts.facts && !facts.certs && facts.headers == HeaderCapture::None);
    assert!(needs("%{time_queue}").facts);
    let named = needs("%header{Server} %header{server} %header{date}");
    assert_eq!(
        named.headers,
        HeaderCapture::Named(vec!["server".into(), "date".into()])
    );
    assert_eq!(
        needs("%header{server}%{header_json}").headers,
        HeaderCapture::All
    );
    assert!(needs("%{certs}").certs);
    // curl's object carries the certificates, not the headers.
    let json = needs("%{json}");
    assert!(json.facts && json.certs && json.headers == HeaderCapture::None);
}

fn temp_file(name: &str, content: &[u8]) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("tlsping-write-out-{}-{name}", std::process::id()));
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn a_file_loses_its_newlines_and_each_line_ends_at_a_cr() {
    let path = temp_file(
        "format",
        b"line1 %{http_code}\nline2\\n\r\nl3 before-cr\rafter-cr\nlast",
    );
    let w = parse(&format!("@{}", path.display())).unwrap();
    std::fs::remove_file(&path).unwrap();
    // What curl 7.88.1 printed for the same file.
    assert_eq!(
        w.render(&sample(), None),
        "line1 200line2\nl3 before-crlast"
    );
}

#[test]
fn a_format_from_stdin() {
    let mut stdin = std::io::Cursor::new("%{mode}\\n\n");
    let w = parse_with_stdin("@-", &mut stdin).unwrap();
    assert_eq!(w.render(&sample(), None), "cold\n");
}

#[test]
fn a_missing_file_is_an_error_that_names_it() {
    let err = parse("@/nonexistent/tlsping-format").unwrap_err();
    assert!(
        err.starts_with("--write-out: cannot read /nonexistent/tlsping-format: "),
        "{err}"
    );
}

#[test]
fn a_file_with_an_unknown_variable_is_refused() {
    let path = temp_file("unknown", b"%{nosuch}\n");
    let err = parse(&format!("@{}", path.display())).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        err.starts_with("unknown --write-out variable: 'nosuch'"),
        "{err}"
    );
}

#[test]
fn a_format_of_the_largest_size_is_read_and_one_byte_more_is_refused() {
    let largest = "x".repeat(MAX_FORMAT_BYTES);
    let path = temp_file("largest", largest.as_bytes());
    assert!(parse(&format!("@{}", path.display())).is_ok());
    std::fs::write(&path, format!("{largest}y")).unwrap();
    let err = parse(&format!("@{}", path.display())).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(err.contains("longer than 65536 bytes"), "{err}");
    assert!(parse(&largest).is_ok());
    let err = parse(&format!("{largest}y")).unwrap_err();
    assert!(
        err.starts_with("--write-out: the format is longer than 65536 bytes"),
        "{err}"
    );
}

#[test]
fn an_endless_source_stops_at_the_limit() {
    let started = std::time::Instant::now();
    let (_keep, fifo) = crate::files::tests::endless_pipe();
    let err = parse(&format!("@{}", fifo.display())).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "--write-out: {} is longer than 65536 bytes",
            fifo.display()
        )),
        "{err}"
    );
    // A device is no format file at all.
    let err = parse("@/dev/zero").unwrap_err();
    assert_eq!(
        err,
        "--write-out: cannot read /dev/zero: it is a device, not a regular file"
    );
    let mut endless = std::io::repeat(b'%');
    let err = parse_with_stdin("@-", &mut endless).unwrap_err();
    assert!(
        err.starts_with("--write-out: stdin is longer than 65536 bytes"),
        "{err}"
    );
    // 64 KiB each: far below a second even on a loaded machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_file_that_is_not_text_is_refused() {
    let path = temp_file("binary", b"%{http_code}\xff\n");
    let err = parse(&format!("@{}", path.display())).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(err.ends_with("is not UTF-8 text"), "{err}");
}

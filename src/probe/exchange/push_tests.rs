//! The push against loopback listeners and a real proxy: NO_PROXY as
//! libcurl matches it, the probes' proxy variables in libcurl's order, a
//! gateway's answer quoted, the grouping key's encoding.

use super::*;
use std::io::{Read, Write};

/// A loopback listener answering every request with `code`, for at
/// most `count` connections, 30 s in all and 5 s each: its port.
fn answering(code: u16, count: usize) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let accepted = std::iter::from_fn(move || {
        while std::time::Instant::now() < until {
            match listener.accept() {
                Ok((stream, _)) => return Some(stream),
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        None
    });
    std::thread::spawn(move || {
        for mut stream in accepted.take(count) {
            stream.set_nonblocking(false).unwrap();
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let answer = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

#[test]
fn no_proxy_lists_match_as_libcurl_matches_them() {
    // libcurl itself decides each case (CURLOPT_NOPROXY is read by the
    // same code as NO_PROXY), through a real proxy and a real server on
    // 127.0.0.1: the proxy answers 299, the server 200.
    let name = "a.example.test";
    let cases: &[(&str, &str)] = &[
        (name, "example.test"),
        (name, ".example.test"),
        (name, "EXAMPLE.TEST."),
        (name, "xample.test"),
        (name, "a.example.test"),
        (name, "b.example.test, a.example.test"),
        (name, "b.example.test a.example.test"),
        (name, ",, a.example.test ,"),
        (name, "b.example.test,\ta.example.test"),
        (name, "*"),
        (name, "*.example.test"),
        (name, "test"),
        (name, "."),
        (name, "other.test"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.0/8"),
        ("127.0.0.1", "127.0.0.0/24"),
        ("127.0.0.1", "127.0.0.1/32"),
        ("127.0.0.1", "127.0.0.0/0"),
        ("127.0.0.1", "126.0.0.0/7"),
        ("127.0.0.1", "127.0.0.2"),
        ("127.0.0.1", "10.0.0.0/8"),
        ("127.0.0.1", "127.0.0.1/33"),
        ("127.0.0.1", "127.0.0.1/"),
        ("127.0.0.1", "127.0.0.1/+8"),
        ("127.0.0.1", "::1"),
        ("127.0.0.1", "localhost"),
        ("127.0.0.1", "0.0.1"),
    ];
    let server = answering(200, cases.len());
    let proxy = answering(299, cases.len());
    let mut direct = 0;
    for &(host, list) in cases {
        let mut easy = curl::easy::Easy::new();
        easy.url(&format!("http://{host}:{server}/")).unwrap();
        let mut resolve = List::new();
        resolve
            .append(&format!("{name}:{server}:127.0.0.1"))
            .unwrap();
        easy.resolve(resolve).unwrap();
        easy.proxy(&format!("http://127.0.0.1:{proxy}")).unwrap();
        easy.noproxy(list).unwrap();
        easy.timeout(Duration::from_secs(5)).unwrap();
        easy.perform().unwrap();
        let by_libcurl = easy.response_code().unwrap() == 200;
        direct += usize::from(by_libcurl);
        assert_eq!(
            no_proxy_names(host, list),
            by_libcurl,
            "{host} against {list:?}: libcurl says {}",
            if by_libcurl { "direct" } else { "proxy" }
        );
    }
    // Both ways are taken: the cases tell the matchers apart.
    assert_eq!((direct, cases.len() - direct), (14, 14));
}

#[test]
fn the_probes_proxy_follows_libcurls_order_of_variables() {
    let env_of = |set: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            set.iter()
                .find(|(k, v)| *k == name && !v.is_empty())
                .map(|(_, v)| v.to_string())
        }
    };
    let pick = |set: &'static [(&'static str, &'static str)], https: bool, host: &str| {
        probes_proxy_in(&env_of(set), https, host).map(|(v, _)| v)
    };
    let all: &[(&str, &str)] = &[
        ("http_proxy", "h"),
        ("HTTP_PROXY", "H"),
        ("https_proxy", "s"),
        ("HTTPS_PROXY", "S"),
        ("all_proxy", "a"),
        ("ALL_PROXY", "A"),
    ];
    assert_eq!(pick(all, true, "x.test"), Some("https_proxy"));
    assert_eq!(pick(all, false, "x.test"), Some("http_proxy"));
    assert_eq!(pick(&[("HTTP_PROXY", "H")], false, "x.test"), None);
    assert_eq!(
        pick(&[("HTTP_PROXY", "H"), ("ALL_PROXY", "A")], false, "x.test"),
        Some("ALL_PROXY")
    );
    assert_eq!(pick(&[("http_proxy", "h")], true, "x.test"), None);
    assert_eq!(
        pick(&[("https_proxy", ""), ("HTTPS_PROXY", "S")], true, "x.test"),
        Some("HTTPS_PROXY"),
        "an empty variable counts as unset"
    );
    assert_eq!(
        pick(
            &[("HTTPS_PROXY", "S"), ("no_proxy", "x.test")],
            true,
            "x.test"
        ),
        None
    );
    assert_eq!(
        pick(
            &[
                ("all_proxy", "a"),
                ("no_proxy", "y.test"),
                ("NO_PROXY", "x.test")
            ],
            true,
            "x.test"
        ),
        Some("all_proxy"),
        "no_proxy wins over NO_PROXY"
    );
    assert_eq!(
        pick(
            &[("all_proxy", "a"), ("no_proxy", ""), ("NO_PROXY", "x.test")],
            true,
            "x.test"
        ),
        None
    );
}

#[test]
fn a_gateways_answer_is_quoted_line_by_line_and_a_cut_line_goes() {
    assert_eq!(
        quotable_answer(b"bad request\r\n\r\nline 2\n", false),
        "bad request | line 2"
    );
    assert_eq!(quotable_answer(b"denied\nhalf a li", true), "denied");
    assert_eq!(quotable_answer(b"", false), "");
}

#[test]
fn base64_url_matches_the_rfc_vectors_in_the_url_alphabet() {
    // RFC 4648's test vectors, in the URL-safe alphabet.
    let cases = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];
    for (raw, encoded) in cases {
        assert_eq!(base64_url(raw.as_bytes()), encoded, "{raw}");
    }
    // 0xfb 0xff: `+/` in the standard alphabet, `-_` here.
    assert_eq!(base64_url(&[0xfb, 0xff]), "-_8=");
}

#[test]
fn a_value_that_is_not_plain_goes_as_base64() {
    let key = [
        ("target".to_string(), "https://a.test/x".to_string()),
        ("vantage".to_string(), "fra1".to_string()),
        ("empty".to_string(), String::new()),
        ("dots".to_string(), "..".to_string()),
    ];
    assert_eq!(
        grouping_url("http://pg:9091", &key),
        "http://pg:9091/metrics/job/tlsping/target@base64/aHR0cHM6Ly9hLnRlc3QveA==\
         /vantage/fra1/empty@base64/=/dots@base64/Li4="
    );
}

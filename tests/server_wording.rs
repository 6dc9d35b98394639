//! What tlsping says about a server's answer when the answer is odd: a 503
//! whose `Retry-After` cannot be read, a certificate already expired (under
//! `-k`). Real servers on 127.0.0.1, the real binary.

mod support;

use support::{cacert, show, start, stderr, stdout, tlsping, CertKind, ServerOpts};

#[test]
fn a_503_with_an_unreadable_retry_after_says_so_and_still_stops() {
    for (value, says) in [
        ("soon", "a Retry-After that could not be read"),
        (
            "99999999999999999999999",
            "a Retry-After that could not be read",
        ),
        ("120", "Retry-After 120s"),
    ] {
        let server = start(ServerOpts {
            status: 503,
            headers: vec![("retry-after".into(), value.into())],
            ..Default::default()
        });
        let ca = cacert();
        let out = tlsping(&["-4", "--cacert", &ca, "-n", "3", &server.url()]);
        assert_eq!(out.status.code(), Some(2), "{value}: {}", show(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "tlsping: warning: preflight: server answered 503 with {says}: stopping"
            )),
            "{value}: {err}"
        );
        assert!(!err.contains("Retry-After 0s"), "{value}: {err}");
        assert_eq!(server.counters.snapshot().requests, 1, "only the preflight");
    }
}

#[test]
fn an_expired_certificate_under_k_says_when_it_expired() {
    let server = start(ServerOpts {
        cert: CertKind::Expired,
        ..Default::default()
    });
    let out = tlsping(&["-4", "-k", "-v", "-n", "1", "-i", "200ms", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // The test certificate ended on 2017-07-15: thousands of days ago.
    let days_ago = |text: &str, prefix: &str| -> u32 {
        let at = text
            .find(prefix)
            .unwrap_or_else(|| panic!("{prefix}: {text}"));
        let rest = &text[at + prefix.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        assert!(rest[digits.len()..].starts_with(" days ago"), "{text}");
        digits.parse().unwrap()
    };
    let err = stderr(&out);
    assert!(days_ago(&err, "tlsping: warning: the server certificate expired ") > 3000);
    assert!(!err.contains("expires in -"), "{err}");
    let table = stdout(&out);
    assert!(days_ago(&table, "certificate        = expired ") > 3000);
}

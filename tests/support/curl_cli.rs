//! The system `curl` CLI as a peer for `--write-out`: what it knows and what
//! it prints for one transfer to a test server. Callers check
//! `support::have("curl")` first.

use std::process::Command;

use super::{ca, TestServer};

/// Whether this curl has the variable: it warns about one it has not.
pub fn curl_knows(variable: &str) -> bool {
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", &format!("%{{{variable}}}")])
        .arg("http://127.0.0.1:1/")
        .output()
        .expect("running curl");
    !String::from_utf8_lossy(&out.stderr).contains("unknown --write-out variable")
}

/// curl's `-w` output for one GET of the server's URL, over HTTP/2 or
/// HTTP/1.1, trusting the test CA; curl must succeed without a warning.
pub fn curl_w(server: &TestServer, h2: bool, format_arg: &str) -> String {
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
        out.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "curl warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `12.345678`: digits, a point, six digits (curl's seconds).
pub fn is_curl_seconds(field: &str) -> bool {
    field.split_once('.').is_some_and(|(whole, frac)| {
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && frac.len() == 6
            && frac.bytes().all(|b| b.is_ascii_digit())
    })
}

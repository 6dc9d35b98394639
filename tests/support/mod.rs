//! Shared test support: certificates, servers and helpers to run the binary.
#![allow(dead_code, unused_imports)]

pub mod delay;
pub mod faults;
pub mod pki;
pub mod server;

use std::process::{Command, Output};

pub use pki::{ca, CertKind};
pub use server::{start, ServerOpts, Snapshot, TestServer};

/// The binary under test (integration tests only; the example server has none).
pub fn bin() -> &'static str {
    match option_env!("CARGO_BIN_EXE_tlsping") {
        Some(path) => path,
        None => panic!("only integration tests run the binary"),
    }
}

/// The real binary with a clean environment for colours, width and proxies.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    for proxy in tlsping::cli::PROXY_VARS {
        cmd.env_remove(proxy);
    }
    cmd.env("NO_COLOR", "1").env("COLUMNS", "120");
    cmd
}

/// Runs the real binary to completion.
pub fn tlsping(args: &[&str]) -> Output {
    command(args).output().expect("running tlsping")
}

/// Runs the binary and parses its stdout as one JSON document.
pub fn json_output(args: &[&str]) -> (serde_json::Value, Output) {
    let out = tlsping(args);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}):\nstdout:\n{}\nstderr:\n{}",
            stdout(&out),
            stderr(&out)
        )
    });
    (doc, out)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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

/// Runs the real binary with a clean environment for colours and proxies.
pub fn tlsping(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("all_proxy")
        .env_remove("ALL_PROXY")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .output()
        .expect("running tlsping")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

//! Shared test support: certificates, servers and helpers to run the binary.
#![allow(dead_code)]

pub mod pki;
pub mod server;

use std::process::{Command, Output};

pub use pki::{ca, CertKind};
pub use server::{start, ServerOpts, Snapshot, TestServer};

/// Runs the real binary with a clean environment for colours and proxies.
pub fn tlsping(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tlsping"))
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

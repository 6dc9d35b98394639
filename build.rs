// Records what `tlsping --version` reports about the build itself.
use std::process::Command;

fn main() {
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TLSPING_GIT_REV={rev}");
    println!(
        "cargo:rustc-env=TLSPING_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!(
        "cargo:rustc-env=TLSPING_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    // Rerun only when the checked-out commit moves (or this script changes).
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(out) = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
    {
        if out.status.success() {
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
            println!("cargo:rerun-if-changed={dir}/HEAD");
            println!("cargo:rerun-if-changed={dir}/refs/heads");
            // A fresh clone, `git gc` or `git pack-refs` keep branch tips in
            // packed-refs instead of refs/heads: watch it too.
            // Named only when it exists: cargo reruns on every build for a
            // watched path that is missing.
            if std::path::Path::new(&format!("{dir}/packed-refs")).exists() {
                println!("cargo:rerun-if-changed={dir}/packed-refs");
            }
        }
    }
}

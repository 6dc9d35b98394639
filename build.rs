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
    // HEAD, and the branch it names (a linked worktree, `git worktree
    // add`, has its HEAD in a git directory of its own and the branches in
    // the common one): only this checkout's commit, so a commit on another
    // branch rebuilds nothing. Every path is named only when it exists:
    // cargo reruns on every build for a watched path that is missing.
    if let Ok(out) = Command::new("git")
        .args([
            "rev-parse",
            "--git-dir",
            "--git-common-dir",
            "--symbolic-full-name",
            "HEAD",
        ])
        .output()
    {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines().map(str::trim);
        let (dir, common) = (lines.next(), lines.next());
        if let (true, Some(dir), Some(common)) = (out.status.success(), dir, common) {
            // `refs/heads/NAME`, or `HEAD` itself when detached.
            let branch = lines.next().unwrap_or("HEAD");
            // A fresh clone, `git gc` or `git pack-refs` keep branch tips in
            // packed-refs instead of refs/heads: watch it too.
            let watched = [
                format!("{dir}/HEAD"),
                format!("{common}/{branch}"),
                format!("{common}/packed-refs"),
            ];
            for path in watched {
                if std::path::Path::new(&path).exists() {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
        }
    }
}

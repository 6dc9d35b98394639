//! Writes the README's Quickstart output: runs `tlsping tlsping.test`
//! across the tests' delayed path (20 ms each way, `tests/support/path.rs`)
//! and puts what it printed between the `quickstart-output` markers of every
//! README that has them. Needs root (network and mount namespaces).
//!
//!     cargo build --release && cargo run --example quickstart_output -- target/release/tlsping
//!
//! Without an argument it runs `target/release/tlsping`. The figures worth
//! publishing come from a release build.

#[path = "../tests/support/mod.rs"]
mod support;

use support::path::DelayedPath;
use support::quickstart;

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let bin = std::env::args()
        .nth(1)
        .unwrap_or_else(|| format!("{root}/target/release/tlsping"));
    let path = DelayedPath::new(quickstart::ONE_WAY, None)
        .expect("a delayed path (needs root, /dev/net/tun and `ip`)");
    let out = quickstart::run(&bin, &path);
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(
        out.status.success(),
        "{} exited {:?}:\n{stdout}\n{}",
        quickstart::COMMAND,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{stdout}");
    for name in ["README.md", "README.ko.md"] {
        let file = format!("{root}/{name}");
        let Ok(doc) = std::fs::read_to_string(&file) else {
            continue;
        };
        match quickstart::splice(&doc, &stdout) {
            Some(new) => {
                std::fs::write(&file, new).expect("writing the README");
                eprintln!("wrote {name}");
            }
            None => eprintln!("{name} has no quickstart-output markers: left alone"),
        }
    }
}

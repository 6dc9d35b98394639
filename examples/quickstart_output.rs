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
use tlsping::files::{Kind, ReadError};

/// A README is far under this; anything bigger is not one.
const README_CAP: u64 = 1 << 20;

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
        let file = std::path::PathBuf::from(format!("{root}/{name}"));
        // A regular file only, read to a bound, and replaced by the same
        // safe rename as tlsping's own output files (never through a link).
        let doc = match tlsping::files::read_capped_as(&file, README_CAP, Kind::Regular) {
            Ok(bytes) => String::from_utf8(bytes).expect("a UTF-8 README"),
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{name}: {e:?}"),
        };
        match quickstart::splice(&doc, &stdout) {
            Some(new) => {
                tlsping::files::replace_file(&file, |w| w.write_all(new.as_bytes()))
                    .expect("writing the README");
                eprintln!("wrote {name}");
            }
            None => eprintln!("{name} has no quickstart-output markers: left alone"),
        }
    }
}

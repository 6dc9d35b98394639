//! The README's Quickstart run: `tlsping tlsping.test`, typed as a user
//! would, across a delayed path (every packet held 20 ms each way) to a test
//! server listening on port 443 in the path's far namespace. The name
//! resolves through a hosts file mounted over `/etc/hosts` in a mount
//! namespace of the command's own (`unshare`), and `SSL_CERT_FILE` names the
//! test CA, so the command line is the user's, with nothing added.
//!
//! `examples/quickstart_output.rs` writes the output into the READMEs
//! between the markers; `tests/readme_examples.rs` runs it again and holds
//! the block to it.

use std::process::Output;
use std::time::Duration;

use super::path::{DelayedPath, SERVER_V4};
use super::{start, ServerOpts, TempDir, TestServer};

/// The command, as the README shows it.
pub const COMMAND: &str = "tlsping tlsping.test";

/// The host name of [`COMMAND`]; the test certificate carries it.
const HOST: &str = "tlsping.test";

/// Each way; the round trip is twice this.
pub const ONE_WAY: Duration = Duration::from_millis(20);

/// The first line of the marker before the block (it goes on to say what
/// writes it), and the marker after it.
pub const BEGIN: &str = "<!-- quickstart-output:";
pub const END: &str = "<!-- quickstart-output: end -->";

/// The terminal of every example in the documents.
pub const TERMINAL: [(&str, &str); 2] = [("COLUMNS", "120"), ("LANG", "C.UTF-8")];

/// The test server, started in the far end of `path` on port 443.
pub fn server(path: &DelayedPath) -> TestServer {
    path.in_server(|| {
        start(ServerOpts {
            bind: Some(SERVER_V4.into()),
            port: Some(443),
            h2: true,
            ..Default::default()
        })
    })
}

/// Runs [`COMMAND`] with `bin` as tlsping in the near end of `path`, against
/// [`server`]'s, and returns what it did.
pub fn run(bin: &str, path: &DelayedPath) -> Output {
    let _server = server(path);
    let dir = TempDir::new("quickstart");
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, format!("127.0.0.1 localhost\n{SERVER_V4} {HOST}\n")).unwrap();
    let mut words = COMMAND.split(' ');
    assert_eq!(words.next(), Some("tlsping"));
    path.in_client(|| {
        let mut cmd = std::process::Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$0" /etc/hosts && exec "$@""#)
            .arg(&hosts)
            .arg(bin)
            .args(words);
        for proxy in tlsping::cli::PROXY_VARS {
            cmd.env_remove(proxy);
        }
        for (name, value) in TERMINAL {
            cmd.env(name, value);
        }
        cmd.env("NO_COLOR", "1")
            .env("SSL_CERT_FILE", super::cacert())
            .env_remove("SSL_CERT_DIR")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .output()
            .expect("running unshare")
    })
}

/// `doc` with the lines between the markers replaced by the command and
/// `stdout`, indented as a block; `None` when `doc` has no markers.
pub fn splice(doc: &str, stdout: &str) -> Option<String> {
    let lines: Vec<&str> = doc.lines().collect();
    // The end marker starts as the first one does: it is never a beginning.
    let begin = lines
        .iter()
        .position(|l| l.starts_with(BEGIN) && *l != END)?;
    let end = begin + 1 + lines[begin + 1..].iter().position(|l| *l == END)?;
    let mut out: Vec<String> = lines[..=begin].iter().map(|l| l.to_string()).collect();
    out.push(format!("    $ {COMMAND}"));
    let printed: Vec<&str> = stdout.trim_end().lines().collect();
    out.extend(
        printed
            .iter()
            .map(|l| format!("    {l}").trim_end().to_string()),
    );
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    Some(out.join("\n") + "\n")
}

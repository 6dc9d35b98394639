//! A tlsping child with its output on pipes, waited for within a bound.

use std::io::Read;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary with the same environment as `support::tlsping`, pipes for output.
pub fn spawn(args: &[&str]) -> Child {
    let ca = super::cacert();
    let mut all = vec!["-4", "--cacert", &ca];
    all.extend_from_slice(args);
    super::command(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning tlsping")
}

pub fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Waits at most `limit` for the child; kills it (and fails) past that.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let until = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("tlsping did not exit within {limit:?}");
            }
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// The run-wide series (those without labels) of the metrics file at
/// `path`, by name; a file that was not written fails the test.
pub fn run_series(path: &std::path::Path) -> impl Fn(&str) -> Option<f64> {
    let text = std::fs::read_to_string(path).expect("the metrics file was written");
    let series = super::prometheus::parse(&text);
    move |name| super::prometheus::value_of(&series, name, &[])
}

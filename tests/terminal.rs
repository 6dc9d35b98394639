//! The real binary in a real terminal (tmux) at 60, 80 and 120 columns: the
//! layout chosen from the detected width, and no line wider than the screen.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::{ca, start, ServerOpts};

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux is required (.ci/run installs it)")
}

/// Runs tlsping in a detached tmux pane `width` columns wide and returns the screen, wrapped lines joined.
fn screen_at(width: u16, url: &str) -> String {
    let socket = format!("tlsping-test-{}-{width}", std::process::id());
    let cmd = format!(
        "env -u COLUMNS -u NO_COLOR {} -n 3 -i 200ms --cacert {} {url} 2>/dev/null; sleep 30",
        support::bin(),
        ca().pem_path.display()
    );
    let w = width.to_string();
    let started = tmux(&socket, &["new-session", "-d", "-x", &w, "-y", "80", &cmd]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut text = String::new();
    while Instant::now() < deadline {
        let out = tmux(&socket, &["capture-pane", "-p", "-J", "-S", "-"]);
        text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains("keep-alive gain") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux(&socket, &["kill-server"]);
    assert!(
        text.contains("keep-alive gain"),
        "run did not finish at {width} columns:\n{text}"
    );
    text
}

fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "a line wider than {width} columns:\n{line}\n---\n{text}"
        );
    }
}

#[test]
fn layout_follows_the_terminal_width_and_lines_fit() {
    let server = start(ServerOpts {
        h2: true,
        ..Default::default()
    });
    let url = server.url();

    let wide = screen_at(120, &url);
    assert_fits(&wide, 120);
    assert!(
        wide.contains("COLD new connection") && wide.contains("| code"),
        "{wide}"
    );

    let stacked = screen_at(80, &url);
    assert_fits(&stacked, 80);
    assert!(
        stacked.contains("  #2 ") && stacked.contains(" COLD dns"),
        "{stacked}"
    );
    assert!(!stacked.contains("| code"));

    let blocks = screen_at(60, &url);
    assert_fits(&blocks, 60);
    let cold_at = blocks
        .find("\nCOLD new connection")
        .expect("cold block heading");
    let warm_at = blocks
        .find("\nWARM keep-alive")
        .expect("warm block heading");
    assert!(cold_at < warm_at, "{blocks}");
    assert!(!blocks.contains(" COLD dns"), "{blocks}");
}

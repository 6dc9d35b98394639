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
    screen(width, url, "env -u COLUMNS -u NO_COLOR", "", false)
}

/// `env` sets the environment tlsping starts with; `escapes` keeps colour codes in the capture.
fn screen(width: u16, url: &str, env: &str, flags: &str, escapes: bool) -> String {
    static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let socket = format!("tlsping-test-{}-{n}", std::process::id());
    let cmd = format!(
        "{env} {} {flags} -n 3 -i 200ms --cacert {} {url} 2>/dev/null; sleep 30",
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
        let mut args = vec!["capture-pane", "-p", "-J", "-S", "-"];
        if escapes {
            args.push("-e");
        }
        let out = tmux(&socket, &args);
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
    if !support::have("tmux") {
        return;
    }
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
    // COLD on the first line of every round, even round 2 where (alternate
    // order) warm ran first, which its `*` says.
    assert!(
        stacked.contains("  #2 COLD  dns") && stacked.contains("     WARM* wait"),
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
    assert!(
        !blocks.contains("COLD  dns") && !blocks.contains("COLD* dns"),
        "{blocks}"
    );
}

#[test]
fn colour_in_a_terminal_unless_no_color_is_set_even_empty() {
    if !support::have("tmux") {
        return;
    }
    let server = start(ServerOpts::default());
    let url = server.url();
    let esc = "\u{1b}[";
    let coloured = screen(120, &url, "env -u COLUMNS -u NO_COLOR", "", true);
    assert!(
        coloured.contains(esc),
        "a terminal gets colour (bold headings at least):\n{coloured}"
    );
    let empty_no_color = screen(120, &url, "env -u COLUMNS NO_COLOR=", "", true);
    assert!(
        !empty_no_color.contains(esc),
        "NO_COLOR set, even empty, means no colour:\n{empty_no_color}"
    );
    let flag = screen(120, &url, "env -u COLUMNS -u NO_COLOR", "--no-color", true);
    assert!(!flag.contains(esc), "--no-color means no colour:\n{flag}");
}

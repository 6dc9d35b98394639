//! `contrib/tlsping@.service` and `contrib/tlsping@.timer`, as docs/monitoring.md
//! installs them. `systemd-analyze verify` accepts what those steps
//! put in place (run in a mount namespace of the test's own, where `/etc`
//! and `/usr/local` are overlays). The unit's command line, expanded as
//! systemd expands it for an instance named after a host with a dash, runs
//! the real binary against a loopback server and a real Pushgateway: the
//! host arrives whole, and only the exit codes of a run that measured count
//! as the unit's success. The timer's schedule is what systemd computes.
//!
//! No systemd manager runs here, so the expansion of the command line is
//! the test's, following systemd.service(5) and systemd.exec(5): `%i` as
//! written, `%I` through `systemd-escape --unescape`, `%H` the host name;
//! `Environment=` first, then `EnvironmentFile=` over it; `${NAME}` one
//! word, a lone `$NAME` split at white space. Anything else in the unit
//! (quotes, other specifiers) makes the test fail rather than guess.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use support::prometheus::{get, pushgateway};
use support::{show, start, ServerOpts, TempDir};

const SERVICE: &str = include_str!("../contrib/tlsping@.service");
const TIMER: &str = include_str!("../contrib/tlsping@.timer");
const MONITORING: &str = include_str!("../docs/monitoring.md");

/// Where docs/monitoring.md installs the binary, and the unit runs it from.
const INSTALLED: &str = "/usr/local/bin/tlsping";

/// Every `Key=value` of `section` in a unit file, in order (comments and
/// other sections left out).
fn settings<'a>(unit: &'a str, section: &str) -> Vec<(&'a str, &'a str)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in unit.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside && !line.is_empty() && !line.starts_with(['#', ';']) {
            let (key, value) = line.split_once('=').expect("Key=value");
            out.push((key, value));
        }
    }
    out
}

fn setting<'a>(unit: &'a str, section: &str, key: &str) -> Option<&'a str> {
    let all = settings(unit, section);
    let found: Vec<&str> = all
        .iter()
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .collect();
    assert!(found.len() <= 1, "{key} is set {} times", found.len());
    found.first().copied()
}

/// The exit codes the unit counts as success: 0, and `SuccessExitStatus=`.
fn success_codes() -> Vec<i32> {
    let mut codes = vec![0];
    if let Some(more) = setting(SERVICE, "Service", "SuccessExitStatus") {
        codes.extend(more.split_whitespace().map(|c| {
            c.parse::<i32>()
                .unwrap_or_else(|_| panic!("SuccessExitStatus: {c} is not a number"))
        }));
    }
    codes
}

/// `%I`: the instance unescaped, by systemd's own code.
fn unescaped(instance: &str) -> String {
    let out = Command::new("systemd-escape")
        .args(["--unescape", "--", instance])
        .output()
        .expect("running systemd-escape");
    assert!(out.status.success(), "{}", show(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

/// The specifiers the unit uses, resolved for `instance`.
fn specifiers(text: &str, instance: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('i') => out.push_str(instance),
            Some('I') => out.push_str(&unescaped(instance)),
            Some('H') => out.push_str(&host_name()),
            Some('%') => out.push('%'),
            other => panic!("a specifier this test does not know: %{other:?} in {text}"),
        }
    }
    out
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("the host name")
        .trim()
        .to_string()
}

/// `NAME=value` assignments: an `Environment=` value, or the lines of an
/// environment file (blank lines and `#`, `;` comments left out). Quotes
/// and backslashes mean more than this reads, so they fail the test.
fn assignments(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']))
        .map(|l| {
            assert!(!l.contains(['"', '\'', '\\']), "quoting not read here: {l}");
            let (k, v) = l.split_once('=').expect("NAME=value");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The environment and the argument vector systemd would give the unit's
/// `ExecStart=` for `instance`, with its environment files under `etc`
/// (standing in for `/etc`). `Err` when an environment file is missing,
/// which fails the unit before anything runs.
fn expand(instance: &str, etc: &Path) -> Result<Vec<String>, String> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for (key, value) in settings(SERVICE, "Service") {
        if key == "Environment" {
            env.extend(assignments(&specifiers(value, instance)));
        }
    }
    // Environment files are read after Environment=, and win over it.
    for (key, value) in settings(SERVICE, "Service") {
        if key != "EnvironmentFile" {
            continue;
        }
        let path = specifiers(value, instance);
        let (optional, path) = match path.strip_prefix('-') {
            Some(p) => (true, p.to_string()),
            None => (false, path),
        };
        let local = etc.join(
            path.strip_prefix("/etc/")
                .unwrap_or_else(|| panic!("an environment file outside /etc: {path}")),
        );
        match std::fs::read_to_string(&local) {
            Ok(text) => env.extend(assignments(&text)),
            Err(_) if optional => {}
            Err(e) => return Err(format!("{path}: {e}")),
        }
    }
    let exec = setting(SERVICE, "Service", "ExecStart").expect("ExecStart=");
    assert!(!exec.contains(['"', '\'', '\\']), "quoting: {exec}");
    let mut argv = Vec::new();
    for word in specifiers(exec, instance).split_whitespace() {
        if let Some(name) = word.strip_prefix('$').filter(|n| !n.starts_with('{')) {
            // A lone $NAME: the value split at white space, zero words or more.
            let value = env.get(name).map(String::as_str).unwrap_or("");
            argv.extend(value.split_whitespace().map(str::to_string));
            continue;
        }
        let mut out = String::new();
        let mut rest = word;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find('}').expect("a closed ${") + at;
            let name = &rest[at + 2..end];
            out.push_str(env.get(name).map(String::as_str).unwrap_or(""));
            rest = &rest[end + 1..];
        }
        assert!(!rest.contains('$'), "a $ this test does not read: {word}");
        out.push_str(rest);
        argv.push(out);
    }
    Ok(argv)
}

/// Runs what the unit would run for `instance`: the test's own binary in
/// place of the installed one.
fn run_unit(instance: &str, etc: &Path) -> Output {
    let argv = expand(instance, etc).unwrap_or_else(|e| panic!("the unit fails to start: {e}"));
    assert_eq!(argv[0], INSTALLED, "{argv:?}");
    let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    support::tlsping(&args)
}

/// `/etc/tlsping/<instance>.conf` under `etc`, holding `lines`.
fn write_conf(etc: &Path, instance: &str, lines: &[String]) {
    let dir = etc.join("tlsping");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{instance}.conf")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

#[test]
fn a_host_with_a_dash_reaches_tlsping_whole_and_its_figures_have_a_p95() {
    if !support::have("systemd-escape") || !support::have("prometheus-pushgateway") {
        return;
    }
    let server = start(ServerOpts::default());
    let gateway = pushgateway();
    let port = server.addr.port();
    // A host name with a dash, as the instance: what `tlsping@<host>` was.
    let host = "my-host.tlsping.test";
    let url = format!("https://{host}:{port}/");
    let dir = TempDir::new("systemd-dash");
    let etc = dir.path().join("etc");
    write_conf(
        &etc,
        host,
        &[
            format!("TLSPING_URL={url}"),
            format!("TLSPING_PUSH=http://{}", gateway.addr),
            format!(
                "TLSPING_FLAGS=--resolve {host}:{port}:127.0.0.1 --cacert {}",
                support::cacert()
            ),
        ],
    );
    let out = run_unit(host, &etc);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(success_codes().contains(&0));
    assert!(server.counters.snapshot().requests > 0);
    let (_, metrics) = get(gateway.addr, "/metrics").unwrap();
    let target = format!("target=\"{url}\"");
    let vantage = format!("vantage=\"{}\"", host_name());
    let p95 = metrics.lines().find(|l| {
        l.starts_with("tlsping_stage_seconds{")
            && l.contains("quantile=\"0.95\"")
            && l.contains("stage=\"total\"")
            && l.contains("mode=\"cold\"")
    });
    let p95 = p95.unwrap_or_else(|| panic!("no p95 from the unit's rounds:\n{metrics}"));
    assert!(p95.contains(&target) && p95.contains(&vantage), "{p95}");
}

#[test]
fn only_a_run_that_measured_and_pushed_counts_as_the_units_success() {
    if !support::have("systemd-escape") || !support::have("prometheus-pushgateway") {
        return;
    }
    // The exit codes of docs/measurement.md's table: 0 and 1 measured; 2 is a target
    // that answered nothing, a failed preflight or a push that failed.
    assert_eq!(success_codes(), [0, 1]);
    let gateway = pushgateway();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let instance = "down-host";
    let dir = TempDir::new("systemd-down");
    let etc = dir.path().join("etc");
    write_conf(
        &etc,
        instance,
        &[
            format!("TLSPING_URL=https://127.0.0.1:{port}/"),
            format!("TLSPING_PUSH=http://{}", gateway.addr),
        ],
    );
    let out = run_unit(instance, &etc);
    let code = out.status.code().expect("an exit code");
    assert_eq!(code, 2, "{}", show(&out));
    assert!(!success_codes().contains(&code), "a target that is down");
    // Pushed all the same, as a total loss.
    let (_, metrics) = get(gateway.addr, "/metrics").unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("tlsping_loss_ratio{") && l.ends_with(" 1")),
        "{metrics}"
    );
    // A conf that is missing fails the unit before tlsping runs.
    assert!(expand("no-such-conf", &etc).is_err());
}

/// docs/monitoring.md's block of commands under its heading for the unit,
/// and the drop-in it shows for `systemctl edit`.
fn documented_install() -> (String, String) {
    let section = support::markdown::section(MONITORING, "## One tlsping per vantage point")
        .expect("docs/monitoring.md's section on the unit");
    let blocks = support::markdown::code_blocks(section);
    let block = |fence: &str| {
        blocks
            .iter()
            .find(|b| b.fence.as_deref() == Some(fence))
            .map(|b| b.code.trim_end_matches('\n').to_string())
    };
    let commands = block("sh").expect("a ```sh block of install steps");
    let drop_in = block("ini").expect("an ```ini block for systemctl edit");
    (commands, drop_in)
}

#[test]
fn the_documented_steps_install_units_that_systemd_analyze_verifies() {
    if !support::have("systemd-analyze") || !support::have("unshare") {
        return;
    }
    let (commands, drop_in) = documented_install();
    let dir = TempDir::new("systemd-install");
    let root = dir.path();
    // A clone as the documented steps see it: the units, and the release build.
    std::fs::create_dir_all(root.join("contrib")).unwrap();
    std::fs::create_dir_all(root.join("target/release")).unwrap();
    for unit in ["tlsping@.service", "tlsping@.timer"] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("contrib")
            .join(unit);
        std::fs::copy(from, root.join("contrib").join(unit)).unwrap();
    }
    std::fs::copy(support::bin(), root.join("target/release/tlsping")).unwrap();
    for d in ["etc.upper", "etc.work", "local.upper", "local.work"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let r = root.display();
    // In a mount namespace of its own, /etc and /usr/local are overlays
    // whose writes land in the test's directory. No systemd manager runs
    // here: `systemctl` is written down for the checks below, and the
    // drop-in is what `systemctl edit` would save. `cargo build` has run:
    // its binary is in place.
    let script = format!(
        "set -eu\n\
         mount -t overlay overlay -o lowerdir=/etc,upperdir={r}/etc.upper,workdir={r}/etc.work /etc\n\
         mount -t overlay overlay -o lowerdir=/usr/local,upperdir={r}/local.upper,workdir={r}/local.work /usr/local\n\
         sudo() {{ \"$@\"; }}\n\
         cargo() {{ :; }}\n\
         systemctl() {{ echo \"$*\" >> {r}/systemctl.log; }}\n\
         cd {r}\n\
         {commands}\n\
         mkdir -p /etc/systemd/system/tlsping@.service.d\n\
         cat > /etc/systemd/system/tlsping@.service.d/override.conf <<'DROPIN'\n\
         {drop_in}\n\
         DROPIN\n\
         instance=$(sed -n 's/^enable --now tlsping@\\(.*\\)\\.timer$/\\1/p' {r}/systemctl.log)\n\
         test -n \"$instance\"\n\
         test -f /etc/tlsping/\"$instance\".conf\n\
         systemd-analyze verify --man=no tlsping@\"$instance\".service tlsping@\"$instance\".timer \
         >{r}/verify.txt 2>&1 || {{ cat {r}/verify.txt; exit 1; }}\n"
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .expect("running unshare");
    let said = show(&out);
    if !out.status.success() && said.contains("unshare failed") {
        support::skip("cannot make a mount namespace here");
        return;
    }
    assert!(out.status.success(), "{said}\n{script}");
    let remarks = std::fs::read_to_string(root.join("verify.txt")).unwrap();
    assert!(remarks.is_empty(), "systemd-analyze had remarks: {remarks}");
    let log = std::fs::read_to_string(root.join("systemctl.log")).unwrap();
    assert!(log.lines().any(|l| l == "edit tlsping@.service"), "{log}");
    let installed = root.join("local.upper/bin/tlsping");
    assert!(installed.exists(), "{INSTALLED} was not installed");
}

/// The times `systemd-analyze calendar` gives for `spec`, as Unix seconds.
fn elapses(spec: &str, n: usize) -> Vec<i64> {
    let out = Command::new("systemd-analyze")
        .args(["calendar", &format!("--iterations={n}"), spec])
        .env("TZ", "UTC")
        .output()
        .expect("running systemd-analyze");
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| {
            let (what, when) = l.trim().split_once(": ")?;
            (what == "Next elapse" || what.starts_with("Iter. #")).then_some(when)
        })
        .map(|when| {
            // "Tue 2026-12-01 22:25:00 UTC"
            let date = Command::new("date")
                .args(["-u", "-d", when.split_once(' ').unwrap().1, "+%s"])
                .output()
                .expect("running date");
            String::from_utf8_lossy(&date.stdout)
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn the_timer_fires_every_five_minutes_at_an_offset_fixed_per_machine() {
    if !support::have("systemd-analyze") {
        return;
    }
    // On the clock, not from the last run: a run's own length and the
    // random delay do not add up from one run to the next.
    let on = setting(TIMER, "Timer", "OnCalendar").expect("OnCalendar=");
    let times = elapses(on, 4);
    assert_eq!(times.len(), 4, "{times:?}");
    for pair in times.windows(2) {
        assert_eq!(pair[1] - pair[0], 300, "{on}: {times:?}");
    }
    assert_eq!(setting(TIMER, "Timer", "OnUnitActiveSec"), None);
    // A delay the same every time, within the minute after each mark.
    assert_eq!(setting(TIMER, "Timer", "RandomizedDelaySec"), Some("60"));
    assert_eq!(setting(TIMER, "Timer", "FixedRandomDelay"), Some("true"));
    assert_eq!(setting(TIMER, "Timer", "AccuracySec"), Some("1s"));
}

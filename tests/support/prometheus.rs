//! A real Prometheus and a real Pushgateway for the tests: Debian's
//! `prometheus` and `prometheus-pushgateway`, each started on a loopback port
//! with its own temporary storage, and stopped by PID when the value is
//! dropped. Queries go to Prometheus's HTTP API. Tests call
//! `support::have("prometheus")` (and `prometheus-pushgateway`) first.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1 at the moment of asking (the child binds it a
/// moment later; a clash is possible but unlikely, and would fail loudly).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A child process stopped (killed by its PID) and its directory removed on drop.
pub struct Running {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn temp_dir(what: &str) -> PathBuf {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tlsping-{what}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Waits (bounded) until `addr` answers `path` with a 2xx.
fn wait_ready(addr: SocketAddr, path: &str, child: &mut Child) {
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{path} server at {addr} exited early: {status}");
        }
        if get(addr, path).is_ok_and(|(code, _)| (200..300).contains(&code)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server at {addr} did not become ready");
}

/// A Pushgateway on 127.0.0.1, nothing persisted.
pub fn pushgateway() -> Running {
    let dir = temp_dir("pushgateway");
    let port = free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut child = Command::new("prometheus-pushgateway")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!(
            "--persistence.file={}",
            dir.join("pushgateway.data").display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting prometheus-pushgateway");
    wait_ready(addr, "/-/ready", &mut child);
    Running { child, addr, dir }
}

/// A Prometheus on 127.0.0.1 with its storage in a temporary directory,
/// scraping `target` (a Pushgateway) every `every`, labels as pushed.
pub fn prometheus(target: SocketAddr, every: Duration) -> Running {
    prometheus_with_rules(target, every, &[])
}

/// [`prometheus`], evaluating the rule files `rules` (absolute paths) every
/// `every` as well.
pub fn prometheus_with_rules(target: SocketAddr, every: Duration, rules: &[&str]) -> Running {
    let dir = temp_dir("prometheus");
    let config = dir.join("prometheus.yml");
    let secs = every.as_secs().max(1);
    let mut text = format!(
        "global:\n  scrape_interval: {secs}s\n  evaluation_interval: {secs}s\n\
         scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n\
         \x20   static_configs:\n      - targets: ['{target}']\n"
    );
    if !rules.is_empty() {
        text.push_str("rule_files:\n");
        for rule in rules {
            text.push_str(&format!("  - '{rule}'\n"));
        }
    }
    std::fs::write(&config, text).unwrap();
    let port = free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting prometheus");
    wait_ready(addr, "/-/ready", &mut child);
    Running { child, addr, dir }
}

/// One HTTP/1.1 GET on loopback: the status code and the body.
pub fn get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.take(8 << 20).read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(head, body)| {
            if head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked")
            {
                dechunk(body)
            } else {
                body.to_string()
            }
        })
        .unwrap_or_default();
    Ok((code, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// `query` evaluated now by Prometheus: each series' labels and value.
pub fn query(prom: &Running, query: &str) -> Vec<(serde_json::Value, f64)> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (code, body) =
        get(prom.addr, &format!("/api/v1/query?query={encoded}")).expect("querying prometheus");
    assert_eq!(code, 200, "{query}: {body}");
    let doc: serde_json::Value = serde_json::from_str(&body).expect("prometheus answers JSON");
    doc["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|r| {
            let value = r["value"][1]
                .as_str()
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
            (r["metric"].clone(), value)
        })
        .collect()
}

/// Asks `query` until it gives at least one series or `within` has passed
/// (Prometheus scrapes on its own schedule).
pub fn query_eventually(
    prom: &Running,
    q: &str,
    within: Duration,
) -> Vec<(serde_json::Value, f64)> {
    let give_up = Instant::now() + within;
    loop {
        let found = query(prom, q);
        if !found.is_empty() || Instant::now() >= give_up {
            return found;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// One series of an exposition: its name, labels (unescaped) and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Series {
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The series of an exposition in the text format, read independently of
/// tlsping's encoder: `name{k="v",...} value`, with `\\`, `\"` and `\n`
/// undone in label values.
pub fn parse(text: &str) -> Vec<Series> {
    let mut all = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let name_end = line.find(['{', ' ']).expect("a name");
        let name = line[..name_end].to_string();
        let mut labels = Vec::new();
        let mut rest = &line[name_end..];
        if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices();
            let (mut key, mut value, mut in_value) = (String::new(), String::new(), false);
            loop {
                let (i, c) = chars.next().expect("a closed label set");
                match (in_value, c) {
                    (false, '}') => {
                        rest = &body[i + 1..];
                        break;
                    }
                    (false, ',') => {}
                    (false, '=') => {
                        assert_eq!(chars.next().map(|x| x.1), Some('"'));
                        in_value = true;
                    }
                    (false, c) => key.push(c),
                    (true, '\\') => match chars.next().expect("an escape").1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    (true, '"') => {
                        labels.push((std::mem::take(&mut key), std::mem::take(&mut value)));
                        in_value = false;
                    }
                    (true, c) => value.push(c),
                }
            }
        }
        let value = rest.trim().parse().expect("a value");
        all.push(Series {
            name,
            labels,
            value,
        });
    }
    all
}

/// The value of the one series named `name` whose labels include `with`.
pub fn value_of(series: &[Series], name: &str, with: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<&Series> = series
        .iter()
        .filter(|s| s.name == name && with.iter().all(|(k, v)| s.label(k) == Some(v)))
        .collect();
    assert!(found.len() <= 1, "{name} {with:?}: {found:?}");
    found.first().map(|s| s.value)
}

/// `promtool check metrics` over `text`: its exit status and what it said.
pub fn promtool_check(text: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// What a push sent: the request head and body, read until the
/// exposition's `# EOF` (or 5 s of silence, or the end of the stream).
pub fn read_push(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.ends_with(b"# EOF\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    seen
}

/// A Pushgateway stand-in on 127.0.0.1 (or a proxy's, for what reaches
/// it): for each of at most `count` connections it reads the push, answers
/// `200` and sends what it read. Its URL and the receiving end.
pub fn answering_stand_in(count: usize) -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().take(count).flatten() {
            let seen = read_push(&mut stream);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
        }
    });
    (format!("http://{addr}"), rx)
}

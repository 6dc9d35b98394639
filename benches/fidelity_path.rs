//! Fidelity on a real delayed path: every stage's median against k round
//! trips of a path that holds each packet D each way, and the same at D = 0.
//!
//!     cargo bench --bench fidelity_path
//!
//! The client (the binary) and the test server sit in two network namespaces
//! joined by the tests' delay line (`support::path`), so the kernels at both
//! ends see a real round trip of 2D. For each stage, `error` is its median
//! less k × 2D, k being the round trips the stage holds:
//!
//! | stage | k | the round trips |
//! |---|---|---|
//! | cold tcp | 1 | SYN out, SYN-ACK back |
//! | cold tls (whole) | 1 | TLS 1.3 (full or resumed): ClientHello out, the server's flight back; 2 for a full TLS 1.2 handshake |
//! | tls on the wire | same as tls | `tls − tls_setup − tls_finish`: the client's own work at both ends taken out |
//! | cold srv | 1 | the request out, the first byte of the answer back |
//! | cold total | tcp + tls + 1 | 3 for TLS 1.3: the lookup (`--resolve`, libcurl's cache) crosses no path, the client's Finished leaves with the request, and a HEAD answer is one flight |
//! | warm srv, warm total | 1 | the request out, the answer back, on the kept connection |
//! | tcp_rtt, tcp_min_rtt | 1 | the kernel's own estimates of one round trip |
//! | connect(2) | 1 | reference: a bare non-TLS connect timed around the system call, the same namespaces, no libcurl |
//!
//! The error at D = 0 is the baseline: both ends' CPU (the handshake's
//! crypto, the server's work, libcurl's) and the relay's fixed cost, which
//! are real time on any path. `net` = error at D − error at 0 is what the
//! path's length does to a stage beyond k × 2D: the measurement's own error
//! plus what sleeping 2D costs (a wake-up) and the relay's lateness at D.
//! The `connect(2)` row is the floor of that for any client on this machine
//! and path; `net − floor×k` is what is left for libcurl, OpenSSL and us.
//! The relay's own lateness (its timer waking after a packet was due) is
//! printed from its counters, per one-way crossing.
//!
//! Runs D and 0 in alternating blocks (so a change in the machine's load
//! falls on both), each block a fresh run of the binary with one warm-up
//! round. Settings (environment):
//!
//! - `FIDELITY_DELAY_MS` (20): D, one way.
//! - `FIDELITY_ROUNDS` (80): timed rounds at each delay, over all blocks.
//! - `FIDELITY_BLOCKS` (8): blocks per delay.
//! - `FIDELITY_SPIN_US` (the relay's own, 100): how long before a packet is
//!   due the relay stops sleeping and polls. Polling makes the relay punctual
//!   but holds a core at real-time priority just when the far end wakes;
//!   0 frees the core and makes the relay later instead.
//! - `FIDELITY_SERVER_WAIT_MS` (0): the server holds every byte it sends W
//!   (at both delays); each stage's truth gains W per server flight it
//!   waits for. With D = 0 this shows what sleeping as long costs the ends
//!   without any path.
//! - `FIDELITY_HTTP` (2): `2` (ALPN h2 offered) or `1.1`.
//! - `FIDELITY_ARGS` (`--resume off`): more arguments for the binary,
//!   split at spaces.
//! - `FIDELITY_BIN`: another build of the binary to run (one with changes
//!   to measure), instead of the one `cargo bench` built.
//! - `FIDELITY_WRAP`: a command the binary runs under, in the client's
//!   namespace, split at spaces (`perf record -k mono -a -o /tmp/p-{run}.data --`,
//!   `strace -f -tt -T -o /tmp/s-{run}.txt`); `{run}` becomes `D1`, `01`, `D2`...
//! - `FIDELITY_STDERR`: a file the binary's standard error is appended to.
//!
//! Needs root and `ip` (as the delayed-path tests). The figures are those of
//! the build that `cargo bench` makes (the release profile), which it says.

#[path = "../tests/support/mod.rs"]
mod support;

use std::net::{IpAddr, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::path::{DelayedPath, RelaySeen, SERVER_V4, WAKE_EARLY};
use support::{median, start, ServerOpts, TestServer};

struct Settings {
    delay: Duration,
    rounds: u32,
    blocks: u32,
    h2: bool,
    spin: Duration,
    server_wait: Duration,
    extra: Vec<String>,
    bin: String,
    wrap: Vec<String>,
    stderr: Option<std::path::PathBuf>,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a valid value")),
        Err(_) => default,
    }
}

impl Settings {
    fn from_env() -> Settings {
        let http: String = env_or("FIDELITY_HTTP", "2".to_string());
        assert!(
            http == "2" || http == "1.1",
            "FIDELITY_HTTP is 2 or 1.1, not {http:?}"
        );
        let extra: String = env_or("FIDELITY_ARGS", "--resume off".to_string());
        let s = Settings {
            delay: Duration::from_millis(env_or("FIDELITY_DELAY_MS", 20)),
            rounds: env_or("FIDELITY_ROUNDS", 80),
            blocks: env_or("FIDELITY_BLOCKS", 8),
            spin: Duration::from_micros(env_or("FIDELITY_SPIN_US", WAKE_EARLY.as_micros() as u64)),
            server_wait: Duration::from_millis(env_or("FIDELITY_SERVER_WAIT_MS", 0)),
            h2: http == "2",
            extra: extra.split_whitespace().map(str::to_string).collect(),
            bin: env_or("FIDELITY_BIN", support::bin().to_string()),
            wrap: env_or("FIDELITY_WRAP", String::new())
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            stderr: std::env::var_os("FIDELITY_STDERR").map(Into::into),
        };
        assert!(
            s.blocks >= 1 && s.rounds >= s.blocks,
            "at least one round a block"
        );
        assert!(
            !s.delay.is_zero(),
            "FIDELITY_DELAY_MS must be above 0 (0 is the baseline)"
        );
        s
    }
}

/// One end of the comparison: a path of one delay, its server, and every
/// reading taken across it.
struct Side {
    path: DelayedPath,
    server: TestServer,
    /// Where the bare connects go, on the server's address: its kernel
    /// answers the SYN alone, so a connect times the path and the kernels.
    listener: TcpListener,
    docs: Vec<Value>,
    connects_ms: Vec<f64>,
    relay: Vec<(RelaySeen, RelaySeen)>,
}

impl Side {
    fn new(delay: Duration, set: &Settings) -> Side {
        let path = DelayedPath::with_spin(delay, None, set.spin)
            .expect("a delayed path: needs root, /dev/net/tun and `ip` (iproute2)");
        let server = path.in_server(|| {
            start(ServerOpts {
                bind: Some(SERVER_V4.into()),
                h2: set.h2,
                delay: (!set.server_wait.is_zero()).then_some(set.server_wait),
                ..Default::default()
            })
        });
        let listener = path.in_server(|| TcpListener::bind((SERVER_V4, 0)).unwrap());
        Side {
            path,
            server,
            listener,
            docs: Vec::new(),
            connects_ms: Vec::new(),
            relay: Vec::new(),
        }
    }

    fn rtt_ms(&self) -> f64 {
        2.0 * ms(self.path.delay())
    }

    /// One block (`run` names it): a run of the binary (`rounds` timed,
    /// one warm-up), then as many bare connects; the relay's counters
    /// around both.
    fn block(&mut self, set: &Settings, rounds: u32, run: &str) {
        let before = self.path.relay_seen();
        let rtt = self.path.delay() * 2;
        // Room for a cold probe (three round trips, two server flights), its
        // close (two) and a warm probe (one, one flight), with a margin for
        // a busy machine.
        let interval = (rtt * 8 + set.server_wait * 4).max(Duration::from_millis(100));
        let doc = self.run(set, rounds + 1, interval, run);
        self.docs.push(doc);
        let listener = &self.listener;
        let times = self.path.in_client(|| connect_times(listener, rounds));
        self.connects_ms.extend(times.iter().map(|&t| ms(t)));
        self.relay.push((before, self.path.relay_seen()));
    }

    /// The binary (under the wrapper, if any) from the client's namespace
    /// against this side's server; its JSON document.
    fn run(&self, set: &Settings, count: u32, interval: Duration, run: &str) -> Value {
        let port = self.server.addr.port();
        let addr = match self.server.addr.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let mut cmd = match set.wrap.split_first() {
            Some((first, rest)) => {
                let mut cmd = Command::new(first);
                cmd.args(rest.iter().map(|a| a.replace("{run}", run)));
                cmd.arg(&set.bin);
                cmd
            }
            None => Command::new(&set.bin),
        };
        cmd.args(["--json", "-n", &count.to_string()])
            .args(["-i", &format!("{}ms", interval.as_millis())])
            .args(["--warmup", "1", "-w", "5s"])
            .args(["--resolve", &format!("localhost:{port}:{addr}")])
            .args(["--cacert", &support::cacert()])
            .args(&set.extra)
            .arg(format!("https://localhost:{port}/"));
        for proxy in tlsping::cli::PROXY_VARS {
            cmd.env_remove(proxy);
        }
        let out = self
            .path
            .in_client(|| cmd.output())
            .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
        if let Some(file) = &set.stderr {
            use std::io::Write as _;
            let mut log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .expect("opening FIDELITY_STDERR");
            writeln!(log, "# run {run}").unwrap();
            log.write_all(&out.stderr).unwrap();
        }
        assert!(out.status.success(), "{}", support::stderr(&out));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", support::stderr(&out)))
    }

    /// Per timed sample of `mode`, across every block.
    fn values(&self, mode: &str, f: &dyn Fn(&Value) -> Option<f64>) -> Vec<f64> {
        self.docs
            .iter()
            .flat_map(|doc| support::sample_values(doc, mode, f))
            .collect()
    }

    /// The relay's lateness per one-way crossing over the blocks: mean and worst.
    fn relay_lateness(&self) -> (Duration, Duration, u64) {
        let (mut sum_ns, mut packets, mut worst) = (0u128, 0u64, Duration::ZERO);
        for (before, after) in &self.relay {
            let n = after.forwarded - before.forwarded;
            let total = after.late_mean.as_nanos() * u128::from(after.forwarded)
                - before.late_mean.as_nanos() * u128::from(before.forwarded);
            sum_ns += total;
            packets += n;
            worst = worst.max(after.late_max);
        }
        let mean = Duration::from_nanos((sum_ns / u128::from(packets.max(1))) as u64);
        (mean, worst, packets)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `n` connects to `listener` from the calling thread's namespace, each
/// timed around the system call alone; each taken off the listener's queue
/// afterwards (which bounds it) and closed.
fn connect_times(listener: &TcpListener, n: u32) -> Vec<Duration> {
    let to = listener.local_addr().unwrap();
    (0..n)
        .map(|_| {
            let began = Instant::now();
            let conn = TcpStream::connect_timeout(&to, Duration::from_secs(2)).unwrap();
            let took = began.elapsed();
            drop(listener.accept().unwrap());
            drop(conn);
            took
        })
        .collect()
}

type Extract = Box<dyn Fn(&Value) -> Option<f64>>;

fn field(name: &'static str) -> Extract {
    Box::new(move |s| s[name].as_f64())
}

/// One row of the table: a stage, its mode, its round trips, the server
/// flights it waits for (each held `FIDELITY_SERVER_WAIT_MS`), how to read it.
struct Row {
    name: &'static str,
    mode: &'static str,
    k: f64,
    flights: f64,
    read: Extract,
}

/// Round trips of the cold handshake, from what the samples negotiated:
/// two for a full TLS 1.2 handshake, else one.
fn tls_round_trips(side: &Side) -> f64 {
    let full12 = side.values("cold", &|s| {
        Some(f64::from(
            s["tls_version"] == "TLSv1.2" && s["tls_resumed"] == false,
        ))
    });
    if median(full12) >= 0.5 {
        2.0
    } else {
        1.0
    }
}

fn rows(tls_k: f64) -> Vec<Row> {
    let row = |name, mode, k, flights, read| Row {
        name,
        mode,
        k,
        flights,
        read,
    };
    let wire: Extract = Box::new(|s| {
        Some(s["tls_ms"].as_f64()? - s["tls_setup_ms"].as_f64()? - s["tls_finish_ms"].as_f64()?)
    });
    vec![
        // The server's kernel answers a SYN: no server flight in `tcp`.
        row("cold tcp", "cold", 1.0, 0.0, field("tcp_ms")),
        row("cold tls (whole)", "cold", tls_k, tls_k, field("tls_ms")),
        row("tls on the wire", "cold", tls_k, tls_k, wire),
        row("cold srv", "cold", 1.0, 1.0, field("srv_ms")),
        row(
            "cold total",
            "cold",
            tls_k + 2.0,
            tls_k + 1.0,
            field("total_ms"),
        ),
        row("warm srv", "warm", 1.0, 1.0, field("srv_ms")),
        row("warm total", "warm", 1.0, 1.0, field("total_ms")),
        // The kernel's own estimates; with a server that waits the smoothed
        // one drifts up (delayed ACKs ride the late answers), the minimum not.
        row("cold tcp_rtt", "cold", 1.0, 0.0, field("tcp_rtt_ms")),
        row(
            "cold tcp_min_rtt",
            "cold",
            1.0,
            0.0,
            field("tcp_min_rtt_ms"),
        ),
        row("warm tcp_rtt", "warm", 1.0, 0.0, field("tcp_rtt_ms")),
        row(
            "warm tcp_min_rtt",
            "warm",
            1.0,
            0.0,
            field("tcp_min_rtt_ms"),
        ),
    ]
}

/// `| name | k | error at D | error at 0 | net | net − k×floor | n |`;
/// `wait` is what the server's holding adds to the truth at both delays.
fn print_row(
    name: &str,
    (k, wait): (f64, f64),
    at_d: &[f64],
    at_0: &[f64],
    rtt: f64,
    floor: Option<f64>,
) {
    let err_d = median(at_d.to_vec()) - k * rtt - wait;
    let err_0 = median(at_0.to_vec()) - wait;
    let net = err_d - err_0;
    let beyond = floor.map_or("—".to_string(), |f| format!("{:+.3}", net - k * f));
    println!(
        "| {name} | {k} | {err_d:+.3} | {err_0:+.3} | {net:+.3} | {beyond} | {}/{} |",
        at_d.len(),
        at_0.len()
    );
}

fn main() {
    let set = Settings::from_env();
    let mut far = Side::new(set.delay, &set);
    let mut near = Side::new(Duration::ZERO, &set);
    let per_block = set.rounds.div_ceil(set.blocks);
    let began = Instant::now();
    for b in 0..set.blocks {
        // Alternate which goes first, so neither always follows the other.
        let (order, labels): ([&mut Side; 2], _) = if b % 2 == 0 {
            ([&mut far, &mut near], ["D", "0"])
        } else {
            ([&mut near, &mut far], ["0", "D"])
        };
        for (side, label) in order.into_iter().zip(labels) {
            side.block(&set, per_block, &format!("{label}{}", b + 1));
        }
    }
    let rtt = far.rtt_ms();
    let tls_k = tls_round_trips(&far);
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "# tlsping on a delayed path: D = {} ms each way (RTT {rtt:.3} ms) against D = 0",
        ms(set.delay)
    );
    println!(
        "{} rounds at each ({} blocks, alternating), HTTP/{}, args `{}`; {build} build ({}); took {:.0} s",
        per_block * set.blocks,
        set.blocks,
        if set.h2 { "2 offered" } else { "1.1" },
        set.extra.join(" "),
        set.bin,
        began.elapsed().as_secs_f64()
    );
    println!(
        "relay polls {} µs before each packet is due; the server holds its bytes {} ms",
        set.spin.as_micros(),
        ms(set.server_wait)
    );
    for (label, side) in [("D", &far), ("0", &near)] {
        let (mean, worst, packets) = side.relay_lateness();
        println!(
            "relay at {label}: {packets} packets, each sent after it was due by {:.1} µs mean, {:.0} µs worst",
            mean.as_secs_f64() * 1e6,
            worst.as_secs_f64() * 1e6
        );
    }
    let floor = median(far.connects_ms.clone()) - rtt - median(near.connects_ms.clone());
    println!(
        "\nms; error = median − k × RTT; net = error at D − error at 0; floor = connect(2)'s net ({floor:+.3})\n"
    );
    println!("| stage | k | error at D | error at 0 | net | net − k×floor | n (D/0) |");
    println!("|---|---|---|---|---|---|---|");
    for row in rows(tls_k) {
        let at_d = far.values(row.mode, &row.read);
        let at_0 = near.values(row.mode, &row.read);
        let wait = row.flights * ms(set.server_wait);
        print_row(row.name, (row.k, wait), &at_d, &at_0, rtt, Some(floor));
    }
    print_row(
        "connect(2) (reference)",
        (1.0, 0.0),
        &far.connects_ms,
        &near.connects_ms,
        rtt,
        None,
    );
}

//! A packet capture of the test's own, the truth a handshake's figures are
//! held to: `tcpdump` on one end of a [`DelayedPath`] (or on loopback),
//! read back by `tshark`, which decrypts the TLS records with the key log
//! the client wrote (`SSLKEYLOGFILE`). Nothing here reads tlsping's output:
//! every figure comes from the packets and their timestamps.
//!
//! ```ignore
//! let cap = Capture::start(&path, End::Server, port)?;   // None: a tool is missing (skip)
//! ... run the client with SSLKEYLOGFILE=cap.keylog() ...
//! let frames = cap.finish();
//! for hs in handshakes(&frames, port) { hs.round_trips, hs.reply_ms ... }
//! ```

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::path::DelayedPath;
use super::temp::TempDir;

/// Which end of the path the capture listens on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Client,
    Server,
    /// The host's own loopback device (a server on 127.0.0.1).
    Loopback,
}

/// A running `tcpdump`, stopped by its PID when finished or dropped.
pub struct Capture {
    child: Option<Child>,
    dir: TempDir,
    port: u16,
}

/// One captured TCP segment, as tshark reads it.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Seconds since the epoch (the capture's own clock).
    pub t: f64,
    /// tshark's TCP stream index: one connection.
    pub stream: u32,
    /// Sent by the server (its source port is the server's).
    pub from_server: bool,
    /// TCP payload bytes, the sequence number after them, and the
    /// acknowledgment number (relative, tshark's).
    pub len: u32,
    pub next_seq: u64,
    pub ack: u64,
    pub syn: bool,
    /// tshark's analysis: a retransmission (any kind), or a segment out of
    /// order (what tshark calls a copy sent within its guess of a round
    /// trip: from the end that sent it, a segment out of order is one sent
    /// again).
    pub retransmission: bool,
    pub out_of_order: bool,
    /// The (inner, once decrypted) content types of the TLS records that
    /// end in this segment, in order.
    pub records: Vec<u8>,
    /// The handshake message types those records carried.
    pub handshake: Vec<u8>,
    /// HTTP/2 frame types, where tshark decoded any.
    pub h2: Vec<u8>,
}

impl Frame {
    pub fn has_handshake(&self, kind: u8) -> bool {
        self.handshake.contains(&kind)
    }

    /// Carries application data (inner content type 23).
    pub fn app_data(&self) -> bool {
        self.records.contains(&23)
    }
}

impl Capture {
    /// Starts capturing the TCP traffic of `port` on `end` of `path` (`None`
    /// for [`End::Loopback`]). `None` (after one line saying why) where
    /// `tcpdump` or `tshark` is missing; under `CI=true` that fails.
    pub fn start(path: Option<&DelayedPath>, end: End, port: u16) -> Option<Capture> {
        if !super::have("tcpdump") || !super::have("tshark") {
            return None;
        }
        let dir = TempDir::new("capture");
        let file = dir.path().join("cap.pcap");
        let device = if end == End::Loopback {
            "lo"
        } else {
            "delayline"
        };
        let spawn = || {
            Command::new("tcpdump")
                .args([
                    "-i",
                    device,
                    "-n",
                    "-U",
                    "--immediate-mode",
                    "-s",
                    "0",
                    "-B",
                    "16384",
                    "-w",
                ])
                .arg(&file)
                .args(["tcp", "port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starting tcpdump")
        };
        let mut child = match (path, end) {
            (Some(p), End::Client) => p.in_client(spawn),
            (Some(p), End::Server) => p.in_server(spawn),
            _ => spawn(),
        };
        // tcpdump says "listening on" once its socket is open: nothing is
        // sent before that.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            let first = lines.next().and_then(Result::ok).unwrap_or_default();
            let _ = tx.send(first);
            for _ in lines {} // drain, so tcpdump never blocks on a full pipe
        });
        let said = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        assert!(said.contains("listening on"), "tcpdump: {said}");
        Some(Capture {
            child: Some(child),
            dir,
            port,
        })
    }

    /// Where the client should write its TLS keys (`SSLKEYLOGFILE`).
    pub fn keylog(&self) -> PathBuf {
        self.dir.path().join("keys.log")
    }

    /// The capture file.
    pub fn file(&self) -> PathBuf {
        self.dir.path().join("cap.pcap")
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Let the last packets reach the file (delivered at once:
            // --immediate-mode), then stop tcpdump by its PID.
            std::thread::sleep(Duration::from_millis(150));
            // SAFETY: kill(2) with the pid of a child we spawned and still own.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the capture and reads every segment of it, decrypted with the
    /// key log (when the client wrote one). With `TLSPING_KEEP_CAPTURE` set
    /// to a folder, the capture and the key log are copied there first.
    pub fn finish(mut self) -> Vec<Frame> {
        self.stop();
        if let Some(dir) = std::env::var_os("TLSPING_KEEP_CAPTURE") {
            let stamp = format!("{}-{}", self.port, std::process::id());
            let dir = Path::new(&dir);
            let _ = std::fs::copy(self.file(), dir.join(format!("{stamp}.pcap")));
            let _ = std::fs::copy(self.keylog(), dir.join(format!("{stamp}.keys")));
        }
        frames(&self.file(), &self.keylog(), self.port)
    }
}

impl Capture {
    /// Stops the capture and reads it with another capture's key log (the
    /// same connections, seen at the other end).
    pub fn finish_with(mut self, keys: &Path) -> Vec<Frame> {
        self.stop();
        frames(&self.file(), keys, self.port)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every TCP segment of `pcap`, read by tshark with the key log `keys`.
pub fn frames(pcap: &Path, keys: &Path, port: u16) -> Vec<Frame> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).args(["-n", "-2"]);
    if keys.exists() {
        cmd.arg("-o")
            .arg(format!("tls.keylog_file:{}", keys.display()));
    }
    // Any port of ours speaks TLS; tshark would otherwise guess by number.
    cmd.args(["-d", &format!("tcp.port=={port},tls")]);
    cmd.args([
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for f in [
        "frame.time_epoch",
        "tcp.stream",
        "tcp.srcport",
        "tcp.len",
        "tcp.nxtseq",
        "tcp.ack",
        "tcp.flags.syn",
        "tcp.analysis.retransmission",
        "tcp.analysis.out_of_order",
        "tls.record.content_type",
        "tls.handshake.type",
        "http2.type",
    ] {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("running tshark");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = |s: &str| -> Vec<u8> {
        s.split(',')
            .filter(|v| !v.is_empty())
            .filter_map(|v| v.trim().parse().ok())
            .collect()
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let c: Vec<&str> = line.split('\t').collect();
            if c.len() < 12 {
                return None;
            }
            Some(Frame {
                t: c[0].parse().ok()?,
                stream: c[1].parse().ok()?,
                from_server: c[2].parse::<u16>().ok()? == port,
                len: c[3].parse().unwrap_or(0),
                next_seq: c[4].parse().unwrap_or(0),
                ack: c[5].parse().unwrap_or(0),
                syn: c[6] == "1" || c[6] == "True",
                retransmission: !c[7].is_empty() || !c[8].is_empty(),
                out_of_order: !c[8].is_empty(),
                records: list(c[9]),
                handshake: list(c[10]),
                h2: list(c[11]),
            })
        })
        .collect()
}

/// The path's round trip as one connection's packets show it, seen from
/// whichever end the capture was taken at: the least time from a packet of
/// that end (the SYN or SYN-ACK, or data) to the other end's first packet
/// acknowledging it; ms.
pub fn connection_rtt(fs: &[&Frame], at_server: bool) -> Option<f64> {
    let ours = |f: &Frame| f.from_server == at_server;
    let mut best: Option<f64> = None;
    for (i, f) in fs.iter().enumerate() {
        if !ours(f) || (f.len == 0 && !f.syn) || f.retransmission {
            continue;
        }
        let want = if f.syn { 1 } else { f.next_seq };
        if let Some(back) = fs[i + 1..].iter().find(|g| !ours(g) && g.ack >= want) {
            let rtt = (back.t - f.t) * 1e3;
            best = Some(best.map_or(rtt, |b: f64| b.min(rtt)));
        }
    }
    best
}

/// One connection's handshake as the capture shows it.
#[derive(Clone, Debug, Default)]
pub struct WireHandshake {
    pub stream: u32,
    /// The path's round trip as this connection's own TCP handshake shows
    /// it (SYN-ACK out, ACK in, at the server's end); ms.
    pub rtt_ms: f64,
    /// The server's sends that a packet of the client set off: its answer
    /// to a flight of the client's (a ClientHello, a second one, TLS 1.2's
    /// Finished flight), and data its TCP held until an ACK of the client's
    /// came (a split flight, the congestion window). A send after a pause
    /// of the server's own, or a retransmission, is not one.
    pub round_trips: u32,
    /// From each such client packet to the server's data it set off, summed; ms.
    pub reply_ms: f64,
    /// The first of those: ClientHello in, first server byte out; ms.
    pub first_reply_ms: f64,
    /// Pauses of the server's own inside its flights (no packet of the
    /// client's ended them), longer than its kernel's pacing; ms.
    pub own_pause_ms: f64,
    /// From the ClientHello in to the server's last handshake data out; ms.
    pub span_ms: f64,
    /// The server's handshake segments sent again, and how many of those
    /// were the last of a flight (a lost tail leaves the client nothing to
    /// see but the wait).
    pub retransmissions: u32,
    pub tail_retransmissions: u32,
    /// The client's segments sent again.
    pub client_retransmissions: u32,
    /// The handshake is resumed (no Certificate from the server).
    pub resumed: bool,
    /// The server's Finished was found (decrypted) in the capture; where
    /// not, only the retransmission counts above are known.
    pub complete: bool,
}

impl WireHandshake {
    /// What the server added to the handshake beyond its round trips: the
    /// span less every round trip after the first; ms.
    pub fn added_ms(&self) -> f64 {
        self.span_ms - f64::from(self.round_trips.saturating_sub(1)) * self.rtt_ms
    }
}

/// What the handshake of each connection in `frames` took, for a capture
/// taken at the server's end (where "the server sent" and "the server
/// received" are the capture's own moments).
pub fn handshakes(frames: &[Frame]) -> Vec<WireHandshake> {
    let mut streams: Vec<u32> = frames.iter().map(|f| f.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let mut out = Vec::new();
    for stream in streams {
        let fs: Vec<&Frame> = frames.iter().filter(|f| f.stream == stream).collect();
        if let Some(hs) = handshake(stream, &fs) {
            out.push(hs);
        }
    }
    out
}

fn handshake(stream: u32, fs: &[&Frame]) -> Option<WireHandshake> {
    let synack = fs.iter().position(|f| f.from_server && f.syn)?;
    let rtt_ms = fs[synack + 1..]
        .iter()
        .find(|f| !f.from_server)
        .map(|f| (f.t - fs[synack].t) * 1e3)?;
    let hello = fs
        .iter()
        .position(|f| !f.from_server && f.has_handshake(1))?;
    // The server's part ends with its Finished (type 20) after its
    // ServerHello; in TLS 1.2 its second Finished when the client sent one.
    let finishes: Vec<usize> = fs
        .iter()
        .enumerate()
        .filter(|(_, f)| f.from_server && f.has_handshake(20))
        .map(|(i, _)| i)
        .collect();
    let client_finished = fs
        .iter()
        .position(|f| !f.from_server && f.has_handshake(20));
    let done = match (finishes.as_slice(), client_finished) {
        ([first, second, ..], Some(c)) if c < *second && c > *first => *second,
        ([first, ..], _) => *first,
        _ => {
            // Not decrypted (tshark lost its way after a retransmission):
            // what was sent again is all this connection tells.
            let retrans = |server: bool| {
                fs.iter()
                    .filter(|f| f.from_server == server && f.retransmission)
                    .count() as u32
            };
            return Some(WireHandshake {
                stream,
                rtt_ms,
                retransmissions: retrans(true),
                client_retransmissions: retrans(false),
                ..Default::default()
            });
        }
    };
    // The kernel's pacing leaves at most this between two segments of a
    // burst; a longer pause no client packet ended is the server's own.
    let own_ms = (rtt_ms / 8.0).max(1.0);
    // An ACK sets held data free at once: within this.
    let react_ms = 0.2;
    let mut hs = WireHandshake {
        stream,
        rtt_ms,
        resumed: !fs.iter().any(|f| f.from_server && f.has_handshake(11)),
        complete: true,
        ..Default::default()
    };
    let hello_t = fs[hello].t;
    let mut flight: Option<f64> = Some(hello_t);
    let mut last_client = hello_t;
    let mut last_server: Option<f64> = None;
    let data: Vec<usize> = (hello..=done)
        .filter(|&i| fs[i].from_server && fs[i].len > 0)
        .collect();
    for (k, &i) in data.iter().enumerate() {
        // Client packets since the last server data.
        let since = data.get(k.wrapping_sub(1)).map_or(hello, |&p| p + 1);
        for f in &fs[since..i] {
            if f.from_server {
                continue;
            }
            last_client = f.t;
            if f.len > 0 && !f.retransmission {
                flight = Some(f.t);
            }
        }
        let f = fs[i];
        if f.retransmission {
            last_server = Some(f.t);
            continue;
        }
        let idle_since = last_server.unwrap_or(f64::NEG_INFINITY);
        let pause_ms = (f.t - idle_since) * 1e3;
        let after_ack_ms = (f.t - last_client) * 1e3;
        if pause_ms >= 1.0 && last_client > idle_since && after_ack_ms <= react_ms {
            // Set off by the client's last packet: held until an ACK came
            // (a split flight, the window), or a quick answer to a flight.
            // A flight's own answer held with it is inside this round trip.
            flight = None;
            hs.round_trips += 1;
            hs.reply_ms += after_ack_ms;
            if hs.round_trips == 1 {
                hs.first_reply_ms = after_ack_ms;
            }
        } else if let Some(c) = flight.take() {
            // The first data after a flight of the client's: its answer.
            hs.round_trips += 1;
            hs.reply_ms += (f.t - c) * 1e3;
            if hs.round_trips == 1 {
                hs.first_reply_ms = (f.t - c) * 1e3;
            }
        } else if pause_ms >= own_ms && last_client <= idle_since {
            hs.own_pause_ms += pause_ms;
        }
        last_server = Some(f.t);
    }
    // What was sent again of the handshake's bytes, wherever in the
    // connection the copy went (a flight's last segment is sent again after
    // its Finished was): the server's up to its Finished, the client's up
    // to its own.
    let server_end = fs[done].next_seq;
    let client_end = fs
        .iter()
        .filter(|f| !f.from_server && f.has_handshake(20))
        .map(|f| f.next_seq)
        .next_back()
        .unwrap_or(u64::MAX);
    // A copy may carry more than the handshake (the flight's last segment
    // sent again with what followed): it counts when it starts inside.
    let starts_in = |f: &Frame, end: u64| f.next_seq.saturating_sub(u64::from(f.len)) < end;
    let server_data: Vec<&&Frame> = fs
        .iter()
        .filter(|f| f.from_server && f.len > 0 && starts_in(f, server_end))
        .collect();
    for (k, f) in server_data.iter().enumerate() {
        if f.retransmission {
            hs.retransmissions += 1;
            // A flight's last: no new data of the server's followed it soon
            // (the copy repairs a tail the client could not see was lost).
            let original = server_data[..k]
                .iter()
                .rev()
                .find(|g| !g.retransmission && g.next_seq >= f.next_seq);
            let last = original.is_some_and(|o| {
                server_data
                    .iter()
                    .filter(|g| !g.retransmission && g.t > o.t)
                    .all(|g| (g.t - o.t) * 1e3 >= own_ms)
            });
            if last {
                hs.tail_retransmissions += 1;
            }
        }
    }
    hs.client_retransmissions = fs
        .iter()
        .filter(|f| !f.from_server && f.len > 0 && f.retransmission && starts_in(f, client_end))
        .count() as u32;
    hs.span_ms = (fs[done].t - hello_t) * 1e3;
    Some(hs)
}

/// One connection's handshake as a capture at the client's end shows it.
#[derive(Clone, Debug, Default)]
pub struct ClientView {
    pub stream: u32,
    /// From the ClientHello's first copy out to the server's Finished in; ms.
    pub span_ms: f64,
    /// The client's handshake segments sent again (both copies left here).
    pub retransmissions: u32,
}

/// Each connection's handshake in a capture taken at the client's end, in
/// the order the connections began.
pub fn client_views(frames: &[Frame]) -> Vec<ClientView> {
    let mut streams: Vec<u32> = frames.iter().map(|f| f.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    streams
        .into_iter()
        .filter_map(|stream| {
            let fs: Vec<&Frame> = frames.iter().filter(|f| f.stream == stream).collect();
            // The ClientHello's first segment is the client's first data.
            let hello = fs.iter().find(|f| !f.from_server && f.len > 0)?;
            let finished = fs.iter().find(|f| f.from_server && f.has_handshake(20));
            let end = fs
                .iter()
                .filter(|f| !f.from_server && f.has_handshake(20))
                .map(|f| f.next_seq)
                .next_back()
                .unwrap_or(u64::MAX);
            Some(ClientView {
                stream,
                span_ms: finished.map_or(f64::NAN, |f| (f.t - hello.t) * 1e3),
                retransmissions: fs
                    .iter()
                    .filter(|f| {
                        !f.from_server
                            && f.len > 0
                            && f.retransmission
                            && f.next_seq.saturating_sub(u64::from(f.len)) < end
                    })
                    .count() as u32,
            })
        })
        .collect()
}

/// One connection's request and response as a capture at the server's end
/// shows them.
#[derive(Clone, Debug, Default)]
pub struct WireReply {
    pub stream: u32,
    /// The path's round trip (SYN-ACK out, ACK in); ms.
    pub rtt_ms: f64,
    /// From the request in to the response out; where the server's TCP
    /// held the response (`held_ms`), to the server's first data after the
    /// handshake out instead (a session ticket, which may have left before
    /// the request came in: never below 0); ms.
    pub first_ms: f64,
    /// Where the server's first data after the handshake was not the
    /// response and the response left right after the client's ACK of it
    /// came (its TCP held the response for that ACK): how long the ACK took
    /// beyond the round trip (the client's kernel delaying it); ms.
    pub held_ms: Option<f64>,
}

/// Each connection's request and response in a capture taken at the
/// server's end, in order (the request: the client's first application
/// data; the response: the server's first after it).
#[allow(dead_code)]
pub fn replies(frames: &[Frame]) -> Vec<WireReply> {
    let mut streams: Vec<u32> = frames.iter().map(|f| f.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    streams
        .into_iter()
        .filter_map(|stream| {
            let fs: Vec<&Frame> = frames.iter().filter(|f| f.stream == stream).collect();
            let synack = fs.iter().position(|f| f.from_server && f.syn)?;
            let rtt_ms = fs[synack + 1..]
                .iter()
                .find(|f| !f.from_server)
                .map(|f| (f.t - fs[synack].t) * 1e3)?;
            let request = fs.iter().position(|f| !f.from_server && f.app_data())?;
            let after = |i: usize, want: &dyn Fn(&Frame) -> bool| {
                fs[i + 1..].iter().position(|f| want(f)).map(|k| i + 1 + k)
            };
            // The handshake ends with the last Finished either end sent.
            let done = fs.iter().rposition(|f| f.has_handshake(20))?;
            let first = after(done, &|f| f.from_server && f.len > 0 && !f.retransmission)?;
            let response = after(request, &|f| f.from_server && f.app_data())?;
            let request_t = fs[request].t;
            let mut reply = WireReply {
                stream,
                rtt_ms,
                first_ms: (fs[response].t - request_t) * 1e3,
                held_ms: None,
            };
            if first < response {
                // The client's ACK of the first data, and the response
                // leaving as it came in (within a fifth of a millisecond).
                let want = fs[first].next_seq;
                let ack = fs[first + 1..response]
                    .iter()
                    .find(|f| !f.from_server && f.ack >= want);
                if let Some(ack) = ack {
                    let released = (fs[response].t - ack.t) * 1e3 <= 0.2;
                    let took = (ack.t - fs[first].t) * 1e3;
                    if released && took >= 0.9 * rtt_ms {
                        reply.first_ms = ((fs[first].t - request_t) * 1e3).max(0.0);
                        reply.held_ms = Some(took - rtt_ms);
                    }
                }
            }
            Some(reply)
        })
        .collect()
}

//! The cold probe's own DNS lookup through the system resolver, timed by us.
//!
//! A long-lived worker thread, made for one host and port, does the lookup
//! and times only the resolver call itself. The probe's clock pays for one
//! channel send and one receive: the host string, the channels and, after a
//! lookup was abandoned, a fresh worker are all set up by `prepare`, which the
//! probe calls before its clock starts.
//!
//! The lookup exists to be timed: its answer is not used to dial (the pinned
//! address is), so `-4`/`-6` do not filter it; only a resolver error fails it.

use std::net::ToSocketAddrs;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::types::{ErrorKind, ProbeError};

/// How often a waiting lookup looks at the interrupt flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// A worker's answer: which request, how long the resolver took, and the
/// resolver's error if it failed.
type Reply = (u64, Duration, Result<(), String>);

struct Worker {
    /// `None` once dropped: closing it tells the thread to end.
    requests: Option<Sender<u64>>,
    replies: Receiver<Reply>,
    thread: Option<thread::JoinHandle<()>>,
    /// A lookup was asked for and its answer not taken (given up on).
    busy: bool,
    /// Held by the thread until it ends (tests see it go).
    #[cfg(test)]
    alive: std::sync::Arc<()>,
}

impl Drop for Worker {
    /// Ends an idle thread and joins it, so nothing of it (glibc's resolver
    /// state included) outlives the run: a memory checker sees it all freed.
    /// A thread still inside a lookup that was given up on (timeout,
    /// interrupt) is left to finish on its own: waiting for it would put a
    /// stalled resolver's time back into the run.
    fn drop(&mut self) {
        drop(self.requests.take());
        if self.busy {
            return;
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Worker {
    fn spawn(host: String, port: u16) -> Worker {
        let (req_tx, req_rx) = mpsc::channel::<u64>();
        let (rep_tx, rep_rx) = mpsc::channel::<Reply>();
        #[cfg(test)]
        let alive = std::sync::Arc::new(());
        #[cfg(test)]
        let held = alive.clone();
        let thread = thread::Builder::new()
            .name("tlsping-dns".into())
            .spawn(move || {
                #[cfg(test)]
                let _held = held;
                for seq in req_rx {
                    let start = Instant::now();
                    let result = (host.as_str(), port).to_socket_addrs();
                    let took = start.elapsed();
                    let verdict = result.map(|_| ()).map_err(|e| e.to_string());
                    if rep_tx.send((seq, took, verdict)).is_err() {
                        return;
                    }
                }
            })
            .expect("spawning the DNS thread");
        Worker {
            requests: Some(req_tx),
            replies: rep_rx,
            thread: Some(thread),
            busy: false,
            #[cfg(test)]
            alive,
        }
    }
}

pub struct Resolver {
    host: String,
    port: u16,
    cancel: Option<Cancel>,
    worker: Option<Worker>,
    seq: u64,
}

impl Resolver {
    pub fn new(host: &str, port: u16, cancel: Option<Cancel>) -> Resolver {
        let mut r = Resolver {
            host: host.to_string(),
            port,
            cancel,
            worker: None,
            seq: 0,
        };
        r.prepare();
        r
    }

    /// Makes sure a free worker is waiting. Call before the clock starts.
    pub fn prepare(&mut self) {
        if self.worker.is_none() {
            self.worker = Some(Worker::spawn(self.host.clone(), self.port));
        }
    }

    /// Gives up on the lookup in flight: its worker is left to finish alone
    /// (see `Worker::drop`) and the next `prepare` makes a new one.
    fn abandon(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.busy = true;
        }
    }

    /// Looks the host up and returns how long the resolver took, giving up
    /// at `deadline` or on an interrupt. A lookup
    /// given up on keeps its worker busy, so that worker is abandoned; the next
    /// `prepare` makes a new one.
    pub fn lookup(&mut self, deadline: Instant) -> Result<Duration, ProbeError> {
        self.seq += 1;
        let seq = self.seq;
        let Some(worker) = &self.worker else {
            return Err(fail(ErrorKind::Error, "DNS worker not prepared".into()));
        };
        let sent = worker
            .requests
            .as_ref()
            .is_some_and(|r| r.send(seq).is_ok());
        if !sent {
            self.worker = None;
            return Err(fail(ErrorKind::Error, "DNS worker stopped".into()));
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // A deadline already gone is a timeout, however quick the
                // resolver would have been.
                self.abandon();
                return Err(fail(
                    ErrorKind::Timeout,
                    format!("DNS lookup of {} timed out", self.host),
                ));
            }
            // Short slices, so an interrupt is not held up by a slow resolver.
            match worker.replies.recv_timeout(left.min(CANCEL_POLL)) {
                // A reply to an earlier, abandoned request cannot arrive here
                // (its worker was dropped), but the sequence keeps that explicit.
                Ok((got, _, _)) if got != seq => continue,
                Ok((_, took, Ok(()))) => return Ok(took),
                Ok((_, _, Err(e))) => {
                    return Err(fail(ErrorKind::DnsFail, format!("{}: {e}", self.host)))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if self.cancel.as_ref().is_some_and(|c| c.is_canceled()) {
                        self.abandon();
                        let text = format!("DNS lookup of {} interrupted", self.host);
                        return Err(fail(ErrorKind::Canceled, text));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.worker = None;
                    return Err(fail(ErrorKind::Error, "DNS worker stopped".into()));
                }
            }
        }
    }
}

fn fail(kind: ErrorKind, text: String) -> ProbeError {
    ProbeError { kind, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_loopback_literal_and_times_it() {
        let mut r = Resolver::new("127.0.0.1", 443, None);
        let took = r.lookup(Instant::now() + Duration::from_secs(5)).unwrap();
        assert!(took < Duration::from_secs(5));
        // The worker serves the next lookup too.
        assert!(r.lookup(Instant::now() + Duration::from_secs(5)).is_ok());
    }

    #[test]
    fn dropping_a_resolver_joins_its_worker() {
        let mut r = Resolver::new("127.0.0.1", 443, None);
        r.lookup(Instant::now() + Duration::from_secs(5)).unwrap();
        let alive = r.worker.as_ref().unwrap().alive.clone();
        drop(r);
        assert_eq!(
            std::sync::Arc::strong_count(&alive),
            1,
            "the DNS thread must have ended by the time the resolver is gone"
        );
    }

    #[test]
    fn an_unknown_name_is_dns_fail() {
        let mut r = Resolver::new("nothing.invalid", 443, None);
        let err = r
            .lookup(Instant::now() + Duration::from_secs(5))
            .err()
            .unwrap();
        assert_eq!(err.kind, ErrorKind::DnsFail);
    }

    #[test]
    fn unprepared_after_an_abandoned_lookup_until_prepare() {
        let cancel = Cancel::new();
        cancel.cancel();
        // An already-past deadline: abandoned at once, as a timeout.
        let mut r = Resolver::new("127.0.0.1", 443, Some(cancel));
        let err = r.lookup(Instant::now()).err().unwrap();
        assert!(
            matches!(err.kind, ErrorKind::Timeout | ErrorKind::Canceled),
            "{err:?}"
        );
        assert!(
            r.lookup(Instant::now() + Duration::from_secs(1)).is_err(),
            "no worker until prepare"
        );
        r.prepare();
        assert!(r.lookup(Instant::now() + Duration::from_secs(5)).is_ok());
    }
}

//! The cold probe's own DNS lookup through the system resolver, timed by us.
//! It runs on a long-lived worker thread so that a hung lookup can be given up
//! at the run's deadline without spawning a thread inside the timed interval.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use super::config::IpVersion;
use super::transfer::Cancel;
use super::types::{ErrorKind, ProbeError};

type Reply = (Duration, std::io::Result<Vec<SocketAddr>>);

struct Worker {
    requests: Sender<(String, u16, Sender<Reply>)>,
}

impl Worker {
    fn spawn() -> Worker {
        let (tx, rx) = mpsc::channel::<(String, u16, Sender<Reply>)>();
        thread::Builder::new()
            .name("tlsping-dns".into())
            .spawn(move || {
                for (host, port, reply) in rx {
                    let start = Instant::now();
                    let result = (host.as_str(), port).to_socket_addrs().map(|a| a.collect());
                    let _ = reply.send((start.elapsed(), result));
                }
            })
            .expect("spawning the DNS thread");
        Worker { requests: tx }
    }
}

/// A timed lookup result: how long the resolver took.
pub struct Lookup {
    pub took: Duration,
}

pub struct Resolver {
    worker: Option<Worker>,
    ip_version: IpVersion,
    cancel: Option<Cancel>,
}

impl Resolver {
    pub fn new(ip_version: IpVersion, cancel: Option<Cancel>) -> Resolver {
        Resolver {
            worker: Some(Worker::spawn()),
            ip_version,
            cancel,
        }
    }

    /// Looks `host` up, giving up at `deadline`. A lookup that is given up on
    /// keeps its worker busy, so that worker is abandoned and a new one serves
    /// the next call.
    pub fn lookup(
        &mut self,
        host: &str,
        port: u16,
        deadline: Instant,
    ) -> Result<Lookup, ProbeError> {
        let worker = self.worker.get_or_insert_with(Worker::spawn);
        let (reply_tx, reply_rx): (Sender<Reply>, Receiver<Reply>) = mpsc::channel();
        if worker
            .requests
            .send((host.to_string(), port, reply_tx))
            .is_err()
        {
            self.worker = None;
            return Err(ProbeError {
                kind: ErrorKind::Error,
                text: "DNS worker stopped".into(),
            });
        }
        // Wait in short slices so an interrupt is not held up by a slow resolver.
        let reply = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match reply_rx.recv_timeout(left.min(Duration::from_millis(50))) {
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => {
                    if self.cancel.as_ref().is_some_and(|c| c.is_canceled()) {
                        self.worker = None;
                        return Err(ProbeError {
                            kind: ErrorKind::Canceled,
                            text: format!("DNS lookup of {host} interrupted"),
                        });
                    }
                }
                other => break other,
            }
        };
        match reply {
            Ok((took, Ok(addrs))) => {
                let addrs: Vec<SocketAddr> = addrs
                    .into_iter()
                    .filter(|a| match self.ip_version {
                        IpVersion::Any => true,
                        IpVersion::V4 => a.is_ipv4(),
                        IpVersion::V6 => a.is_ipv6(),
                    })
                    .collect();
                if addrs.is_empty() {
                    return Err(ProbeError {
                        kind: ErrorKind::DnsFail,
                        text: format!("no address of the requested IP version for {host}"),
                    });
                }
                Ok(Lookup { took })
            }
            Ok((_, Err(e))) => Err(ProbeError {
                kind: ErrorKind::DnsFail,
                text: format!("{host}: {e}"),
            }),
            Err(RecvTimeoutError::Timeout) => {
                self.worker = None;
                Err(ProbeError {
                    kind: ErrorKind::Timeout,
                    text: format!("DNS lookup of {host} timed out"),
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.worker = None;
                Err(ProbeError {
                    kind: ErrorKind::Error,
                    text: "DNS worker stopped".into(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_loopback_literal_and_times_it() {
        let mut r = Resolver::new(IpVersion::Any, None);
        let found = r
            .lookup("127.0.0.1", 443, Instant::now() + Duration::from_secs(5))
            .unwrap();
        assert!(found.took < Duration::from_secs(5));
    }

    #[test]
    fn filters_by_ip_version() {
        let mut r = Resolver::new(IpVersion::V6, None);
        let err = r
            .lookup("127.0.0.1", 443, Instant::now() + Duration::from_secs(5))
            .err()
            .unwrap();
        assert_eq!(err.kind, ErrorKind::DnsFail);
    }
}

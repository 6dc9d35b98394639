//! What a probe's handshake told of its cost (`HandshakeAnatomy`): its
//! round trips, each one beyond the first named (`TlsExtra`), the
//! server's own time, and the certificates it sent (`CertSize`).

use std::time::Duration;

/// A round trip of a handshake beyond the first, named (`tls_extra`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsExtra {
    /// The server answered our key shares with a HelloRetryRequest for
    /// `group` (a TLS code point; `None` when unreadable); `sent` are the
    /// groups we had sent shares for, in order.
    HelloRetry { group: Option<u16>, sent: Vec<u16> },
    /// TLS 1.2's own second round trip.
    Tls12,
    /// The server's flight of `flight_bytes` came in two bursts, the second
    /// after the congestion window opened.
    InitialWindow { flight_bytes: u32 },
    /// The server wrote the first `first_bytes` of a flight (less than a
    /// segment) on their own, and its TCP held the rest until our ACK of
    /// them came back (Nagle's algorithm); `ack_delay`, what our kernel
    /// delayed that ACK by, where the wait shows it (the round trip's
    /// span less one; in the advice, not in the outputs' fields).
    SplitFlight {
        first_bytes: u32,
        ack_delay: Duration,
    },
    /// A segment was lost and sent again: the wait that ended with it took
    /// `recovery` (a round trip of it counted, the rest is transmission).
    Loss { recovery: Duration },
}

impl TlsExtra {
    /// The kind's name in every output.
    pub fn kind(&self) -> &'static str {
        match self {
            TlsExtra::HelloRetry { .. } => "hello_retry",
            TlsExtra::Tls12 => "tls12",
            TlsExtra::InitialWindow { .. } => "initial_window",
            TlsExtra::SplitFlight { .. } => "split_flight",
            TlsExtra::Loss { .. } => "loss",
        }
    }

    /// Every kind, in the order the summaries count them.
    pub const KINDS: [&'static str; 5] = [
        "hello_retry",
        "tls12",
        "initial_window",
        "split_flight",
        "loss",
    ];
}

/// One certificate the server sent, as the chain advice names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertSize {
    /// Its place in the chain (0: the leaf).
    pub index: u8,
    /// Its DER size.
    pub bytes: u32,
    /// Its key (`RSA-4096`, `EC P-256`...), where it is one we name.
    pub key: Option<String>,
}

/// Why a handshake cost what it did, for a probe that made one: its round
/// trips, each one beyond the first named, the server's own time and what
/// the server sent. `None` in a field where it could not be told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandshakeAnatomy {
    /// Waits on the server inside `tls` (`tls_round_trips`).
    pub round_trips: Option<u8>,
    /// Every round trip beyond the first, named; `None` with `round_trips`.
    pub extra: Option<Vec<TlsExtra>>,
    /// The server's own time in the handshake: its replies to our flights
    /// and its pauses inside its own (`tls` less the client's set-up and
    /// finish, the round trips at the kernel's min RTT and the
    /// transmission). With `transmission` and the rest, it adds up to `tls`.
    pub server_handshake: Option<Duration>,
    /// The time the server's flights took to arrive after their first
    /// bytes, less the round trips counted inside them and the server's own
    /// pauses: pacing, a slow link, the part of a loss's recovery beyond its
    /// round trip, an ACK our kernel delayed.
    pub transmission: Option<Duration>,
    /// The server's signature scheme (a TLS code point).
    pub sig_alg: Option<u16>,
    /// The leaf certificate's key, e.g. `RSA-4096`, `EC P-256`, `Ed25519`.
    pub server_key: Option<String>,
    /// The Certificate message, its header included.
    pub cert_bytes: Option<u32>,
    /// Every server record up to and including its Finished.
    pub server_flight_bytes: Option<u32>,
    /// The certificates the server sent, their sizes and keys: only where
    /// a flight crossed the initial window (for the advice that names them).
    pub certs: Vec<CertSize>,
    /// A handshake message did not add up (a length past its bytes): the
    /// facts it would have given are `None`. No output field shows it: the
    /// run's warnings say in how many cold probes it happened.
    pub unreadable: bool,
}

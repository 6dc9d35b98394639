//! What a run's samples came to that the kept records do not say: the
//! early-data outcomes of the cold probes that asked for it, the probes
//! whose `dns` overlapped their `tcp`, and what the cold handshakes named
//! (the group a HelloRetryRequest asked for, the server's key and bytes). Taken once, as each sample is kept
//! (`History::push`), and read by every output and warning alike, by one
//! rule, the verdict's: the probes that count, or the warmup probes when
//! they are all there is.

use std::time::Duration;

use crate::probe::{CertSize, EarlyData, HandshakeAnatomy, Mode, Sample, TlsExtra, MAX_VARIANTS};

/// What one variant's cold handshakes named, for the statistics' "why"
/// line and its advice: each the latest one seen (a server says the same
/// on every probe; where it does not, the latest is as good as any), bytes
/// the largest. Bounded: a label of a few words and the handful of key
/// shares one ClientHello carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandshakeNames {
    /// The group a HelloRetryRequest asked for, and the groups we had sent
    /// key shares for.
    pub retry_group: Option<u16>,
    pub sent_shares: Vec<u16>,
    /// The largest server flight that crossed its initial window, and the
    /// certificates of the handshake that sent it.
    pub window_flight_bytes: Option<u32>,
    pub window_certs: Vec<CertSize>,
    /// What a split flight's first part came to (the largest seen), and
    /// the longest our kernel delayed the ACK that set its rest free.
    pub split_first_bytes: Option<u32>,
    pub split_ack_delay: Option<Duration>,
    /// The longest wait a lost segment cost.
    pub loss_recovery: Option<Duration>,
    /// The server's signature scheme and the leaf's key, from a full handshake.
    pub sig_alg: Option<u16>,
    pub server_key: Option<String>,
    /// The largest Certificate message and server flight.
    pub cert_bytes: Option<u32>,
    pub server_flight_bytes: Option<u32>,
}

impl HandshakeNames {
    const fn new() -> HandshakeNames {
        HandshakeNames {
            retry_group: None,
            sent_shares: Vec::new(),
            window_flight_bytes: None,
            window_certs: Vec::new(),
            split_first_bytes: None,
            split_ack_delay: None,
            loss_recovery: None,
            sig_alg: None,
            server_key: None,
            cert_bytes: None,
            server_flight_bytes: None,
        }
    }

    fn add(&mut self, a: &HandshakeAnatomy) {
        for extra in a.extra.iter().flatten() {
            match extra {
                TlsExtra::HelloRetry { group, sent } => {
                    self.retry_group = group.or(self.retry_group);
                    if !sent.is_empty() {
                        self.sent_shares.clone_from(sent);
                    }
                }
                TlsExtra::InitialWindow { flight_bytes } => {
                    if Some(*flight_bytes) > self.window_flight_bytes && !a.certs.is_empty() {
                        self.window_certs.clone_from(&a.certs);
                    }
                    self.window_flight_bytes = self.window_flight_bytes.max(Some(*flight_bytes));
                }
                TlsExtra::SplitFlight {
                    first_bytes,
                    ack_delay,
                } => {
                    self.split_first_bytes = self.split_first_bytes.max(Some(*first_bytes));
                    self.split_ack_delay = self.split_ack_delay.max(Some(*ack_delay));
                }
                TlsExtra::Loss { recovery } => {
                    self.loss_recovery = self.loss_recovery.max(Some(*recovery));
                }
                TlsExtra::Tls12 => {}
            }
        }
        self.sig_alg = a.sig_alg.or(self.sig_alg);
        if a.server_key.is_some() {
            self.server_key.clone_from(&a.server_key);
        }
        self.cert_bytes = self.cert_bytes.max(a.cert_bytes);
        self.server_flight_bytes = self.server_flight_bytes.max(a.server_flight_bytes);
    }
}

/// One side of the rule: the probes that count, or the warmup ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Samples seen.
    pub samples: u64,
    /// Cold probes per variant that asked for early data, by outcome
    /// (`EarlyData as usize`: accepted, rejected, not sent).
    pub early_data: [[u64; 3]; MAX_VARIANTS],
    /// Of those, the ones that resumed a session.
    pub early_data_resumed: u64,
    /// Cold probes whose `dns` overlapped their `tcp`, and the longest overlap.
    pub dns_overlaps: u64,
    pub longest_overlap: Duration,
    /// Cold probes whose handshake had a message that could not be read
    /// (its anatomy's fields are `null`).
    pub unreadable_handshakes: u64,
    /// What each variant's cold handshakes named.
    pub names: [HandshakeNames; MAX_VARIANTS],
    /// Per variant, the cold probes that read TLS 1.3 session tickets, and
    /// of those the ones whose tickets allow early data.
    pub tickets: [[u64; 2]; MAX_VARIANTS],
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            samples: 0,
            early_data: [[0; 3]; MAX_VARIANTS],
            early_data_resumed: 0,
            dns_overlaps: 0,
            longest_overlap: Duration::ZERO,
            unreadable_handshakes: 0,
            names: [const { HandshakeNames::new() }; MAX_VARIANTS],
            tickets: [[0; 2]; MAX_VARIANTS],
        }
    }

    fn add(&mut self, s: &Sample) {
        self.samples += 1;
        if s.mode == Mode::Cold {
            if let (Some(outcome), Some(counts)) = (
                s.early_data,
                self.early_data.get_mut(usize::from(s.variant)),
            ) {
                counts[outcome as usize] += 1;
                if s.tls.is_some_and(|t| t.resumed) {
                    self.early_data_resumed += 1;
                }
            }
        }
        if let (Mode::Cold, Some(early), Some(t)) = (
            s.mode,
            s.tls.and_then(|t| t.ticket_early_data),
            self.tickets.get_mut(usize::from(s.variant)),
        ) {
            t[0] += 1;
            t[1] += u64::from(early > 0);
        }
        if let Some(d) = s.dns_overlap() {
            self.dns_overlaps += 1;
            self.longest_overlap = self.longest_overlap.max(d);
        }
        if let Some(a) = s.anatomy.as_deref() {
            if a.unreadable {
                self.unreadable_handshakes += 1;
            }
            if s.mode == Mode::Cold {
                if let Some(names) = self.names.get_mut(usize::from(s.variant)) {
                    names.add(a);
                }
            }
        }
    }

    /// Cold probes that asked for early data, every variant.
    pub fn early_data_asked(&self) -> u64 {
        self.early_data.iter().flatten().sum()
    }

    /// Of those, the ones that sent it (accepted or rejected).
    pub fn early_data_sent(&self) -> u64 {
        self.early_data
            .iter()
            .map(|c| c[EarlyData::Accepted as usize] + c[EarlyData::Rejected as usize])
            .sum()
    }
}

/// Both sides of the rule, until the run says which applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tallies {
    counted: Tally,
    warmup: Tally,
}

impl Tallies {
    pub const fn new() -> Tallies {
        Tallies {
            counted: Tally::new(),
            warmup: Tally::new(),
        }
    }

    pub(super) fn add(&mut self, s: &Sample) {
        if s.warmup {
            self.warmup.add(s);
        } else {
            self.counted.add(s);
        }
    }

    /// The run's tally: the probes that count, or the warmup ones when no
    /// probe counts (as `judge` reads a run).
    pub fn of_run(&self) -> &Tally {
        if self.counted.samples > 0 {
            &self.counted
        } else {
            &self.warmup
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::synthetic;

    #[test]
    fn warmup_counts_only_when_nothing_else_does() {
        let mut t = Tallies::new();
        let mut warm_up = synthetic::cold(1, 40, 100, 3000, 1000, 50);
        warm_up.warmup = true;
        warm_up.early_data = Some(EarlyData::NotSent);
        t.add(&warm_up);
        assert_eq!(t.of_run().early_data[0], [0, 0, 1], "all there is");
        let mut counted = synthetic::cold(2, 40, 100, 3000, 1000, 50);
        counted.early_data = Some(EarlyData::Rejected);
        t.add(&counted);
        let mut w = synthetic::warm(2, 30, 1000, 10, true);
        w.early_data = Some(EarlyData::Accepted);
        t.add(&w);
        assert_eq!(
            t.of_run().early_data[0],
            [0, 1, 0],
            "one counted cold probe"
        );
        assert_eq!(t.of_run().early_data_asked(), 1);
        assert_eq!(t.of_run().early_data_sent(), 1);
        assert_eq!(t.of_run().samples, 2);
        assert_eq!(t.of_run().unreadable_handshakes, 0);
        let mut unreadable = synthetic::cold(3, 40, 100, 3000, 1000, 50);
        unreadable.anatomy = Some(Box::new(crate::probe::HandshakeAnatomy {
            unreadable: true,
            ..Default::default()
        }));
        t.add(&unreadable);
        assert_eq!(t.of_run().unreadable_handshakes, 1);
    }
}

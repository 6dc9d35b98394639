//! Why a run's new connections cost what they did: the cold handshakes'
//! round trips (the most common count, and how many of them had each
//! kind of extra one), the medians that make up `tls` (the path, the
//! server's own work, the client's), and the whole connection in round
//! trips: tcp 1, tls N, srv 1 (0 when the request went as early data).
//! Over the timed cold records whose handshake told its round trips.

use std::time::Duration;

use crate::probe::Mode;

use super::history::History;
use super::record::{collect_exact, Record};
use super::tallies::HandshakeNames;

/// The run's handshakes, in round trips and medians.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandshakeWhy {
    /// Timed cold handshakes whose round trips were told.
    pub n: usize,
    /// The most common round-trip count among them (the larger on a tie),
    /// and how many had it.
    pub round_trips: Option<u8>,
    pub round_trips_n: usize,
    /// How many had a HelloRetryRequest, TLS 1.2's second round trip, a
    /// flight past the initial window; and how many resumed a session.
    pub hello_retry: usize,
    pub tls12: usize,
    pub initial_window: usize,
    pub resumed: usize,
    /// Of the resumed ones, those whose request went as accepted early
    /// data, and the median `srv` of each group.
    pub early_data: usize,
    pub early_srv: Option<Duration>,
    pub resumed_srv: Option<Duration>,
    /// Medians over the `n` handshakes: `tls`, the kernel's min RTT, the
    /// client's set-up plus finish, and the server's own handshake work.
    pub tls: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub client: Option<Duration>,
    pub server: Option<Duration>,
    /// Medians over the same probes: `dns`, `total` and `srv − min rtt`.
    pub dns: Option<Duration>,
    pub total: Option<Duration>,
    pub srv_server: Option<Duration>,
    /// What the handshakes named (the latest of each).
    pub names: HandshakeNames,
}

impl HandshakeWhy {
    /// The new connection's round trips to its first byte: tcp 1, tls N and
    /// srv 1, or srv 0 when most requests went as early data.
    pub fn connection_round_trips(&self) -> Option<(u8, u8, u8)> {
        let tls = self.round_trips?;
        let srv = u8::from(self.early_data * 2 <= self.n);
        Some((1, tls, srv))
    }
}

/// The median of `value` over `records`, one list at a time.
fn median_by<'a>(
    records: impl Iterator<Item = &'a Record> + Clone,
    value: impl Fn(&Record) -> Option<u32> + Clone,
) -> Option<Duration> {
    let mut v = collect_exact(records.filter_map(value));
    v.sort_unstable();
    super::descriptive::median_us(&v)
}

/// The most common count in `counts` (index = round trips), the larger on
/// a tie, and how many had it.
fn most_common(counts: &[usize; 16]) -> Option<(u8, usize)> {
    let (n, &k) = counts
        .iter()
        .enumerate()
        .filter(|(_, k)| **k > 0)
        .max_by_key(|(n, k)| (**k, *n))?;
    Some((u8::try_from(n).ok()?, k))
}

/// The handshakes of one variant's records (`None`: all of them).
pub fn handshake_why(history: &History, variant: Option<u8>) -> HandshakeWhy {
    let told = history
        .of_variant(variant)
        .filter(|r| r.mode() == Mode::Cold && r.timed() && r.round_trips().is_some());
    let mut counts = [0usize; 16];
    let mut why = HandshakeWhy::default();
    for r in told.clone() {
        why.n += 1;
        counts[usize::from(r.round_trips().unwrap_or(0))] += 1;
        why.hello_retry += usize::from(r.hello_retry());
        why.tls12 += usize::from(r.tls12());
        why.initial_window += usize::from(r.initial_window());
        why.resumed += usize::from(r.resumed());
        why.early_data += usize::from(r.early_data());
    }
    if let Some((n, k)) = most_common(&counts) {
        why.round_trips = Some(n);
        why.round_trips_n = k;
    }
    let resumed = told.clone().filter(|r| r.resumed());
    why.early_srv = median_by(resumed.clone().filter(|r| r.early_data()), |r| {
        r.stages().srv
    });
    why.resumed_srv = median_by(resumed.filter(|r| !r.early_data()), |r| r.stages().srv);
    why.tls = median_by(told.clone(), |r| r.stages().tls);
    why.min_rtt = median_by(told.clone(), |r| r.stages().min_rtt);
    why.client = median_by(told.clone(), |r| {
        let st = r.stages();
        Some(st.tls_setup?.saturating_add(st.tls_finish?))
    });
    why.server = median_by(told.clone(), Record::server_handshake);
    why.dns = median_by(told.clone(), |r| r.stages().dns);
    why.total = median_by(told.clone(), |r| r.stages().total);
    why.srv_server = median_by(told, |r| {
        let st = r.stages();
        Some(st.srv?.saturating_sub(st.min_rtt?))
    });
    let names = &history.tallies.of_run().names;
    if let Some(n) = names.get(usize::from(variant.unwrap_or(0))) {
        why.names = n.clone();
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{HandshakeAnatomy, TcpFacts, TlsExtra};
    use crate::stats::synthetic;

    /// A cold sample with `n` round trips at a 40 ms min RTT.
    fn cold(round: u32, n: u8, extra: Vec<TlsExtra>) -> crate::probe::Sample {
        let mut s = synthetic::cold(round, 40, 100, 90_000, 45_000, 50);
        s.tcp_info = Some(TcpFacts {
            rtt_us: 41_000,
            min_rtt_us: Some(40_000),
            retrans: 0,
        });
        s.anatomy = Some(Box::new(HandshakeAnatomy {
            round_trips: Some(n),
            extra: Some(extra),
            server_key: Some("RSA-4096".into()),
            ..Default::default()
        }));
        s
    }

    #[test]
    fn the_most_common_count_and_every_kind_are_counted() {
        let retry = || TlsExtra::HelloRetry {
            group: Some(0x18),
            sent: vec![0x11ec, 0x1d],
        };
        let h = History::of(&[
            cold(1, 2, vec![retry()]),
            cold(2, 2, vec![retry()]),
            cold(3, 1, vec![]),
            synthetic::warm(1, 30, 1000, 10, true),
        ]);
        let why = handshake_why(&h, None);
        assert_eq!(why.n, 3);
        assert_eq!((why.round_trips, why.round_trips_n), (Some(2), 2));
        assert_eq!((why.hello_retry, why.tls12, why.initial_window), (2, 0, 0));
        assert_eq!(why.names.retry_group, Some(0x18));
        assert_eq!(why.names.sent_shares, [0x11ec, 0x1d]);
        assert_eq!(why.names.server_key.as_deref(), Some("RSA-4096"));
        assert_eq!(why.min_rtt, Some(Duration::from_millis(40)));
        assert_eq!(why.connection_round_trips(), Some((1, 2, 1)));
    }

    #[test]
    fn the_server_median_is_each_probes_own_count_taken_out() {
        // tls − set-up − finish, less its own round trips × 40 ms.
        let samples: Vec<_> = (1..=3).map(|r| cold(r, 2, vec![])).collect();
        let h = History::of(&samples);
        let want = samples[0]
            .anatomy
            .as_ref()
            .unwrap()
            .round_trips
            .and_then(|n| {
                samples[0]
                    .stages()
                    .server_handshake(n)
                    .map(|us| Duration::from_micros(u64::from(us)))
            });
        assert_eq!(handshake_why(&h, None).server, want);
        assert!(want.is_some());
    }

    #[test]
    fn a_tie_goes_to_the_larger_count_and_nothing_told_is_none() {
        let mut counts = [0; 16];
        assert_eq!(most_common(&counts), None);
        counts[1] = 2;
        counts[2] = 2;
        assert_eq!(most_common(&counts), Some((2, 2)));
        let why = handshake_why(&History::new(), None);
        assert_eq!((why.n, why.round_trips), (0, None));
        assert_eq!(why.connection_round_trips(), None);
    }
}

//! Why a run's new connections cost what they did: the cold handshakes'
//! round trips (the most common count, and how many of them had each
//! kind of extra one), `tls` in parts that add up (the round trips at the
//! min RTT, the server's own time, the transmission, the client's work),
//! and the whole connection in the same terms: tcp 1, tls N, srv 1 (0 when
//! the request went as early data) round trips, plus the server's time,
//! the transmission, the client's work and the rest.
//!
//! The parts are means over the middle half of the handshakes (by `tls`;
//! for the connection, by `total`) that had the most common count and
//! whose every part is known: each handshake's parts add up to its own
//! `tls`, so their means add up to the mean `tls` of the same handshakes,
//! and an outlier (a lost segment, a busy moment) at either end does not
//! move them. Medians would not add up.

use std::time::Duration;

use crate::probe::Mode;

use super::history::History;
use super::record::{collect_exact, HandshakeParts, Record};
use super::tallies::HandshakeNames;

/// `tls` in parts that add up to it: means over the middle `n` of `of`
/// handshakes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TlsParts {
    pub n: usize,
    pub of: usize,
    pub tls: Duration,
    /// The min RTT one round trip is counted at.
    pub rtt: Duration,
    pub path: Duration,
    pub server: Duration,
    pub transmission: Duration,
    pub client: Duration,
}

/// A new connection's `total` in parts that add up to it: means over the
/// middle `n` of `of` cold probes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnectionParts {
    pub n: usize,
    pub of: usize,
    pub total: Duration,
    pub rtt: Duration,
    /// Round trips: tcp, tls, srv.
    pub round_trips: (u8, u8, u8),
    pub path: Duration,
    /// The server's time in the handshake and after the request.
    pub server: Duration,
    pub transmission: Duration,
    /// The client's work in the handshake and inside `srv`.
    pub client: Duration,
    /// Of the transmission, what the server's TCP held the response for
    /// beyond its round trip (an ACK our kernel delayed), where it did.
    pub held: Duration,
    /// The lookup, the TCP connect beyond its round trip, libcurl's own
    /// work between stages (`other`).
    pub rest: Duration,
}

/// The run's handshakes, in round trips and parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandshakeWhy {
    /// Timed cold handshakes whose round trips were told.
    pub n: usize,
    /// The most common round-trip count among them (the larger on a tie),
    /// and how many had it.
    pub round_trips: Option<u8>,
    pub round_trips_n: usize,
    /// How many had a HelloRetryRequest, TLS 1.2's second round trip, a
    /// flight past the initial window, a flight the server split, a lost
    /// segment; and how many resumed a session.
    pub hello_retry: usize,
    pub tls12: usize,
    pub initial_window: usize,
    pub split_flight: usize,
    pub loss: usize,
    pub resumed: usize,
    /// Of the resumed ones, those whose request went as accepted early
    /// data, and the median `srv` of each group.
    pub early_data: usize,
    /// Those whose response the server's TCP held for our ACK.
    pub held: usize,
    pub early_srv: Option<Duration>,
    pub resumed_srv: Option<Duration>,
    /// Medians over the `n` handshakes: `tls` and the kernel's min RTT.
    pub tls: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// `tls` in parts, over the middle half of the handshakes with the most
    /// common count whose parts are all known; `None` when none are.
    pub parts: Option<TlsParts>,
    /// Medians of the parts over the `n` handshakes (`server_handshake_ms`,
    /// `tls_client_ms`, `tls_transmission_ms` in the summary).
    pub server: Option<Duration>,
    pub client: Option<Duration>,
    pub transmission: Option<Duration>,
    /// The median `total` of the same probes, and the connection in parts.
    pub total: Option<Duration>,
    pub connection: Option<ConnectionParts>,
    /// What the handshakes named (the latest of each).
    pub names: HandshakeNames,
    /// Cold probes that read session tickets, and of those the ones whose
    /// tickets allow early data.
    pub tickets: [u64; 2],
}

impl HandshakeWhy {
    /// The new connection's round trips to its first byte: tcp 1, tls N and
    /// srv 1, or srv 0 when most requests went as early data, or srv 2 when
    /// the server's TCP held most responses for our ACK.
    pub fn connection_round_trips(&self) -> Option<(u8, u8, u8)> {
        let tls = self.round_trips?;
        let srv = if self.early_data * 2 > self.n {
            0
        } else if self.held * 2 > self.n {
            2
        } else {
            1
        };
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

/// The items whose key is in the middle half of `items`' keys: sorted by
/// key, ⌊(n + 1) / 4⌋ left out at each end (so 1 to 4 items keep their
/// median, or the two middle ones). Two passes over the items, holding
/// only the keys: each item is kept or not by its key, those equal to a
/// bound in the order they come.
fn middle_half<'a, T: 'a>(
    items: impl Iterator<Item = (u32, T)> + Clone + 'a,
) -> impl Iterator<Item = T> + 'a {
    let mut keys = collect_exact(items.clone().map(|(k, _)| k));
    keys.sort_unstable();
    let n = keys.len();
    let cut = (n + 1) / 4;
    let kept = &keys[cut.min(n)..n - cut.min(n)];
    let (lo, hi) = (kept.first().copied(), kept.last().copied());
    let at_lo = kept.iter().filter(|&&k| Some(k) == lo).count();
    let at_hi = kept.iter().filter(|&&k| Some(k) == hi).count();
    drop(keys);
    let (mut left_lo, mut left_hi) = (at_lo, at_hi);
    let take = |left: &mut usize| {
        let some = *left > 0;
        *left = left.saturating_sub(1);
        some
    };
    items.filter_map(move |(k, item)| {
        let (lo, hi) = (lo?, hi?);
        let keep = if k == lo {
            take(&mut left_lo)
        } else if k == hi {
            take(&mut left_hi)
        } else {
            lo < k && k < hi
        };
        keep.then_some(item)
    })
}

/// The mean of `sum` µs over `n`, to the nanosecond.
fn mean(sum: u64, n: usize) -> Duration {
    Duration::from_nanos(sum.saturating_mul(1000) / n.max(1) as u64)
}

/// `tls` in parts over the middle half (by `tls`) of `parts`.
fn tls_parts<'a>(
    parts: impl Iterator<Item = (HandshakeParts, u32)> + Clone + 'a,
) -> Option<TlsParts> {
    let of = parts.clone().count();
    let (mut n, mut sums) = (0usize, [0u64; 6]);
    for (p, rtt) in middle_half(parts.map(|(p, rtt)| (p.tls, (p, rtt)))) {
        n += 1;
        for (sum, v) in
            sums.iter_mut()
                .zip([p.tls, rtt, p.path, p.server, p.transmission, p.client])
        {
            *sum += u64::from(v);
        }
    }
    (n > 0).then(|| TlsParts {
        n,
        of,
        tls: mean(sums[0], n),
        rtt: mean(sums[1], n),
        path: mean(sums[2], n),
        server: mean(sums[3], n),
        transmission: mean(sums[4], n),
        client: mean(sums[5], n),
    })
}

/// The round trips of a cold probe's request: 0 when it went as accepted
/// early data (its answer was in before `srv` began), 2 when the server's
/// TCP held the response for our ACK, else 1.
fn srv_round_trips(r: &Record) -> u8 {
    if r.early_data() {
        0
    } else if r.stages().held.is_some() {
        2
    } else {
        1
    }
}

/// One cold probe's `total` in parts (`ConnectionParts`, of one probe):
/// total, min RTT, path, server, transmission, client, rest and the hold
/// (inside the transmission); `None` where one is unknown.
fn connection_of(r: &Record) -> Option<[u32; 8]> {
    let p = r.handshake_parts()?;
    let st = r.stages();
    let (total, rtt, srv) = (st.total?, st.min_rtt?, st.srv?);
    let srv_rt = srv_round_trips(r);
    let rt = 1 + p.round_trips + u32::from(srv_rt);
    let path = rt.saturating_mul(rtt);
    // The request's round trips, what the server's TCP held the response
    // for beyond them, the server's time after it, and the rest of `srv`
    // (libcurl's work before it stamped the first byte); all of `srv` is
    // that rest when the request went as early data.
    let (server_after, held, client_srv) = if srv_rt == 0 {
        (0, 0, srv)
    } else {
        let held = if srv_rt == 2 { st.held? } else { 0 };
        let left = srv
            .saturating_sub(u32::from(srv_rt).saturating_mul(rtt))
            .saturating_sub(held);
        let server = st.server?.min(left);
        (server, held, left - server)
    };
    let mut client = p.client + client_srv;
    let mut server = p.server + server_after;
    let transmission = p.transmission + held;
    let used = path + server + transmission + client;
    let rest = match total.checked_sub(used) {
        Some(rest) => rest,
        None => {
            // The parts are stamped by two clocks (libcurl's stages, our
            // total): what they overshoot comes off the client's, then the
            // server's part, so none is negative and they add up.
            let over = used - total;
            let from_client = over.min(client);
            client -= from_client;
            server -= (over - from_client).min(server);
            0
        }
    };
    Some([total, rtt, path, server, transmission, client, rest, held])
}

/// The connection in parts over the middle half (by `total`) of `records`.
fn connection_parts<'a>(
    records: impl Iterator<Item = &'a Record> + Clone + 'a,
    (tcp, tls, srv): (u8, u8, u8),
) -> Option<ConnectionParts> {
    let parts = records.filter_map(move |r| {
        (r.round_trips() == Some(tls) && srv_round_trips(r) == srv)
            .then(|| connection_of(r))
            .flatten()
            .map(|p| (p[0], p))
    });
    let of = parts.clone().count();
    let (mut n, mut sums) = (0usize, [0u64; 8]);
    for p in middle_half(parts) {
        n += 1;
        for (sum, v) in sums.iter_mut().zip(p) {
            *sum += u64::from(v);
        }
    }
    (n > 0).then(|| ConnectionParts {
        n,
        of,
        total: mean(sums[0], n),
        rtt: mean(sums[1], n),
        round_trips: (tcp, tls, srv),
        path: mean(sums[2], n),
        server: mean(sums[3], n),
        transmission: mean(sums[4], n),
        client: mean(sums[5], n),
        rest: mean(sums[6], n),
        held: mean(sums[7], n),
    })
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
        why.split_flight += usize::from(r.split_flight());
        why.loss += usize::from(r.loss());
        why.resumed += usize::from(r.resumed());
        why.early_data += usize::from(r.early_data());
        why.held += usize::from(r.stages().held.is_some());
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
    why.client = median_by(told.clone(), |r| r.handshake_parts().map(|p| p.client));
    why.server = median_by(told.clone(), |r| r.handshake_parts().map(|p| p.server));
    why.transmission = median_by(told.clone(), |r| {
        r.handshake_parts().map(|p| p.transmission)
    });
    why.total = median_by(told.clone(), |r| r.stages().total);
    if let Some(modal) = why.round_trips {
        let parts = told.clone().filter_map(move |r| {
            (r.round_trips() == Some(modal))
                .then(|| Some((r.handshake_parts()?, r.stages().min_rtt?)))
                .flatten()
        });
        why.parts = tls_parts(parts);
    }
    if let Some(rts) = why.connection_round_trips() {
        why.connection = connection_parts(told, rts);
    }
    let tally = history.tallies.of_run();
    let index = usize::from(variant.unwrap_or(0));
    if let Some(n) = tally.names.get(index) {
        why.names = n.clone();
    }
    if let Some(t) = tally.tickets.get(index) {
        why.tickets = *t;
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{HandshakeAnatomy, TcpFacts, TlsExtra};
    use crate::stats::synthetic;

    /// A cold sample with `n` round trips at a 40 ms min RTT, `tls` of
    /// `tls_us` and the server's own time in it `server_us`.
    fn cold_with(
        round: u32,
        n: u8,
        extra: Vec<TlsExtra>,
        tls_us: u32,
        server_us: u64,
    ) -> crate::probe::Sample {
        let mut s = synthetic::cold(round, 40, 40_100, tls_us, 45_000, 50);
        s.tcp_info = Some(TcpFacts {
            rtt_us: 41_000,
            min_rtt_us: Some(40_000),
            retrans: 0,
        });
        s.reply_wait = Some(Duration::from_micros(40_700));
        s.anatomy = Some(Box::new(HandshakeAnatomy {
            round_trips: Some(n),
            extra: Some(extra),
            server_key: Some("RSA-4096".into()),
            server_handshake: Some(Duration::from_micros(server_us)),
            ..Default::default()
        }));
        s
    }

    fn cold(round: u32, n: u8, extra: Vec<TlsExtra>) -> crate::probe::Sample {
        cold_with(round, n, extra, 90_000, 3_000)
    }

    #[test]
    fn the_most_common_count_and_every_kind_are_counted() {
        let retry = || TlsExtra::HelloRetry {
            group: Some(0x18),
            sent: vec![0x11ec, 0x1d],
        };
        let split = TlsExtra::SplitFlight {
            first_bytes: 133,
            ack_delay: Duration::ZERO,
        };
        let h = History::of(&[
            cold(1, 2, vec![retry()]),
            cold(2, 3, vec![retry(), split]),
            cold(3, 1, vec![]),
            cold(4, 2, vec![retry()]),
            synthetic::warm(1, 30, 1000, 10, true),
        ]);
        let why = handshake_why(&h, None);
        assert_eq!(why.n, 4);
        assert_eq!((why.round_trips, why.round_trips_n), (Some(2), 2));
        assert_eq!((why.hello_retry, why.tls12, why.initial_window), (3, 0, 0));
        assert_eq!((why.split_flight, why.loss), (1, 0));
        assert_eq!(why.names.retry_group, Some(0x18));
        assert_eq!(why.names.sent_shares, [0x11ec, 0x1d]);
        assert_eq!(why.names.split_first_bytes, Some(133));
        assert_eq!(why.names.server_key.as_deref(), Some("RSA-4096"));
        assert_eq!(why.min_rtt, Some(Duration::from_millis(40)));
        assert_eq!(why.connection_round_trips(), Some((1, 2, 1)));
        // Only the two with the most common count are in the parts.
        assert_eq!(why.parts.map(|p| p.n), Some(2));
    }

    #[test]
    fn the_parts_add_up_to_their_tls_and_the_connection_to_its_total() {
        // Five handshakes of two round trips; the middle half by tls is the
        // three middle ones (one left out at each end): 85, 86, 87 ms.
        let samples: Vec<_> = [
            (1, 84_000, 2_000),
            (2, 85_000, 3_000),
            (3, 86_000, 4_000),
            (4, 87_000, 5_000),
            (5, 99_000, 9_000),
        ]
        .into_iter()
        .map(|(r, tls, server)| cold_with(r, 2, vec![], tls, server))
        .collect();
        let why = handshake_why(&History::of(&samples), None);
        let p = why.parts.unwrap();
        assert_eq!((p.n, p.of), (3, 5));
        assert_eq!(p.tls, Duration::from_millis(86));
        assert_eq!(p.rtt, Duration::from_millis(40));
        assert_eq!(p.path, Duration::from_millis(80));
        assert_eq!(p.server, Duration::from_millis(4));
        // The fixture's set-up 0.9 and finish 0.5 ms.
        assert_eq!(p.client, Duration::from_micros(1_400));
        assert_eq!(p.path + p.server + p.transmission + p.client, p.tls);
        assert_eq!(p.transmission, Duration::from_micros(600));
        // The connection: 4 round trips, the server's 4 ms and the 0.7 ms
        // after the request, libcurl's 3.6 ms inside srv; what is left is
        // the rest, and it all adds up to the total.
        let c = why.connection.unwrap();
        assert_eq!((c.n, c.round_trips), (3, (1, 2, 1)));
        assert_eq!(c.path, Duration::from_millis(160));
        assert_eq!(c.server, Duration::from_micros(4_700));
        assert_eq!(
            c.path + c.server + c.transmission + c.client + c.rest,
            c.total
        );
        // Medians of each part beside them, over all five.
        assert_eq!(why.server, Some(Duration::from_millis(4)));
    }

    #[test]
    fn the_middle_half_keeps_the_middle_and_as_many_ties_as_it_needs() {
        let keep = |keys: &[u32]| {
            let mut kept: Vec<usize> =
                middle_half(keys.iter().copied().enumerate().map(|(i, k)| (k, i))).collect();
            kept.sort_unstable();
            kept
        };
        assert_eq!(keep(&[5]), [0]);
        assert_eq!(keep(&[5, 1]), [0, 1]);
        assert_eq!(keep(&[9, 1, 5]), [2], "three keep their median");
        assert_eq!(keep(&[4, 1, 3, 2]), [2, 3]);
        assert_eq!(keep(&[8, 1, 7, 2, 6, 3, 5, 4]), [4, 5, 6, 7]);
        // Ties at a bound: only as many as the middle half holds.
        assert_eq!(keep(&[1, 2, 2, 2, 2, 9]).len(), 4);
        assert!(keep(&[]).is_empty());
    }

    #[test]
    fn a_tie_goes_to_the_larger_count_and_nothing_told_is_none() {
        let mut counts = [0; 16];
        assert_eq!(most_common(&counts), None);
        counts[1] = 2;
        counts[2] = 2;
        assert_eq!(most_common(&counts), Some((2, 2)));
        let why = handshake_why(&History::new(), None);
        assert_eq!((why.n, why.round_trips, why.parts), (0, None, None));
        assert_eq!(why.connection_round_trips(), None);
    }
}

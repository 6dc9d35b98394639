//! The stages of a probe, named once and derived once: `Sample::stages`
//! turns libcurl's timers and our own stamps into `Stages`, and everything
//! downstream (the sample's accessors, the statistics' kept records, every
//! output) reads those values, so a figure derived from them (`other`, the
//! split of `tls`, the server's own time) is the same wherever it is read.

use std::time::Duration;

/// A wait in the middle of a flight shorter than this is never a round
/// trip nor the server's pause (the rule's floor): it is only summed.
pub(crate) const GAP_MIN_US: u64 = 1_000;

/// The longest our kernel delays an ACK (Linux: 40 ms at first, up to 200).
pub(crate) const DELAYED_ACK_US: u64 = 200_000;
/// ... and the shortest.
pub(crate) const DELAYED_ACK_MIN_US: u64 = 30_000;

/// A wait for data our ACK set free: a round trip (0.9R to 1¼R + ½ ms),
/// or a round trip and an ACK our kernel delayed (R + 30 ms to 1½R + 200
/// ms); never under 1 ms (on loopback, the server's own).
pub(crate) fn held_for_our_ack(span_us: u64, r: u64) -> bool {
    span_us >= GAP_MIN_US
        && ((10 * span_us >= 9 * r && 4 * span_us <= 5 * r + 2_000)
            || (span_us >= r + DELAYED_ACK_MIN_US && 2 * span_us <= 3 * r + 2 * DELAYED_ACK_US))
}

/// A response that came after a lone session ticket, held for our ACK of
/// it: a round trip (as `held_for_our_ack`), or a round trip and the ACK our
/// kernel delays first (Linux: 40 ms, never more than the smoothed RTT
/// when that is longer): R + 36 ms to R + the larger of 48 ms and ¼R +
/// 8 ms. Narrower than `held_for_our_ack`: a server that answers slowly
/// after writing its tickets at the handshake's end looks the same.
pub(crate) fn held_behind_ticket(span_us: u64, r: u64) -> bool {
    let first_delay = span_us >= r + 36_000 && span_us <= r + (r / 4 + 8_000).max(48_000);
    span_us >= GAP_MIN_US
        && ((10 * span_us >= 9 * r && 4 * span_us <= 5 * r + 2_000) || first_delay)
}

/// One stage of a probe, as every output names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Dns,
    Tcp,
    Tls,
    /// Warm only: until the request could be written.
    Wait,
    Srv,
    Total,
    /// What no stage accounts for.
    Other,
}

impl Stage {
    /// The cold stages in the order of the table, `total` last.
    pub const COLD: [Stage; 5] = [Stage::Dns, Stage::Tcp, Stage::Tls, Stage::Srv, Stage::Total];
    /// The warm stages in the order of the table, `total` last.
    pub const WARM: [Stage; 3] = [Stage::Wait, Stage::Srv, Stage::Total];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Dns => "dns",
            Stage::Tcp => "tcp",
            Stage::Tls => "tls",
            Stage::Wait => "wait",
            Stage::Srv => "srv",
            Stage::Total => "total",
            Stage::Other => "other",
        }
    }
}

/// Every stage of one probe in whole microseconds; `None` where it was not
/// measured (never 0 for that). Which of `dns`, `tcp`, `tls` and `wait` a
/// probe has depends on its mode (see `Sample::stages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stages {
    pub dns: Option<u32>,
    pub tcp: Option<u32>,
    pub tls: Option<u32>,
    pub wait: Option<u32>,
    pub srv: Option<u32>,
    pub total: Option<u32>,
    /// The client's own work inside `tls`: before its ClientHello left, and
    /// on the server's last flight; each never more than `tls` leaves for it.
    pub tls_setup: Option<u32>,
    pub tls_finish: Option<u32>,
    /// The kernel's smoothed and minimum round trip of the connection.
    pub rtt: Option<u32>,
    pub min_rtt: Option<u32>,
    /// The server's time after the request, from the TLS records: the
    /// request's last record written to the response's first come in, less
    /// the min RTT (`Sample::reply_wait`); inside `srv`, which libcurl
    /// stamps later, after its own work on what came with the response.
    /// Where the server's TCP held the response for our ACK (`held`), to
    /// the server's first data after the request instead.
    pub server: Option<u32>,
    /// Where the server's TCP held its response for our ACK of what it had
    /// sent first after the request: what that cost beyond the round trip
    /// (an ACK our kernel delayed). `srv` has one round trip more.
    pub held: Option<u32>,
}

/// The server's time after the request and what its TCP held the response
/// for, from the wait for the response's first record (`wait`), for the
/// server's first data after the request where the response came in a
/// later read behind a session ticket (`first`), and the min RTT (all µs).
/// A ticket is written at the handshake's end, never late: one that came a
/// round trip (and an ACK our kernel delayed) after the server's first data,
/// with the response, was held back with it for our ACK of that data
/// (Nagle's algorithm). Then the server's time is to its first data, and
/// the wait beyond it less the round trip is the ACK's delay; otherwise
/// the server's time is the wait less the round trip.
pub fn reply_parts(wait: u32, first: Option<u32>, r: u32) -> (Option<u32>, Option<u32>) {
    if let Some(first) = first.filter(|&f| f <= wait) {
        let span = wait - first;
        if held_for_our_ack(u64::from(span), u64::from(r)) {
            return (Some(first.saturating_sub(r)), Some(span.saturating_sub(r)));
        }
    }
    (Some(wait.saturating_sub(r)), None)
}

/// Whole microseconds, to the nearest, saturating just below `u32::MAX`
/// (71 minutes, above the longest timeout a probe may have).
pub fn whole_us(d: Duration) -> u32 {
    u32::try_from(d.as_nanos().saturating_add(500) / 1000)
        .unwrap_or(u32::MAX - 1)
        .min(u32::MAX - 1)
}

impl Stages {
    pub fn get(&self, stage: Stage) -> Option<u32> {
        match stage {
            Stage::Dns => self.dns,
            Stage::Tcp => self.tcp,
            Stage::Tls => self.tls,
            Stage::Wait => self.wait,
            Stage::Srv => self.srv,
            Stage::Total => self.total,
            Stage::Other => self.other(),
        }
    }

    /// What the stages leave of the total: writing the request, reading the
    /// body, libcurl's and our own work between stages. Never negative.
    pub fn other(&self) -> Option<u32> {
        let total = self.total?;
        let sum: u64 = [self.dns, self.tcp, self.tls, self.wait, self.srv]
            .iter()
            .flatten()
            .map(|&v| u64::from(v))
            .sum();
        Some(u64::from(total).saturating_sub(sum) as u32)
    }

    /// `tls` without the client's set-up: from the ClientHello leaving to the
    /// handshake done, i.e. the network, the server and our reading of its reply.
    pub fn tls_after_setup(&self) -> Option<u32> {
        Some(self.tls?.saturating_sub(self.tls_setup?))
    }

    /// What of `tls` is neither our set-up nor our finish: the path and the
    /// server (its flights in transit and its own handshake work).
    pub fn tls_network_server(&self) -> Option<u32> {
        Some(self.tls_after_setup()?.saturating_sub(self.tls_finish?))
    }

    /// The part of `srv` that is neither the round trip nor the server's time
    /// after the request (`server`): libcurl's own work before it stamped
    /// the first byte (a session ticket, its filters, HTTP/2's frames),
    /// and what it stamped late after the request left. `None` without
    /// `server`.
    pub fn srv_client(&self) -> Option<u32> {
        Some(
            self.srv?
                .saturating_sub(self.min_rtt?)
                .saturating_sub(self.server?),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_behind_a_lone_ticket_was_held_only_for_a_first_delayed_ack() {
        let r = 40_000;
        // Java: our ACK of the ticket delayed 41 ms, the response a round
        // trip after it; or a round trip (our ACK at once).
        assert!(held_behind_ticket(81_000, r));
        assert!(held_behind_ticket(40_300, r));
        // 60 ms or 150 ms after the ticket: a slow server's own, though
        // `held_for_our_ack` would take 150 ms for a longer delayed ACK.
        assert!(!held_behind_ticket(60_000, r));
        assert!(!held_behind_ticket(150_000, r) && held_for_our_ack(150_000, r));
        // Loopback: the first delayed ACK alone, 36 to 48 ms.
        assert!(held_behind_ticket(41_000, 30));
        assert!(!held_behind_ticket(30_000, 30) && !held_behind_ticket(100_000, 30));
    }

    #[test]
    fn a_response_behind_a_ticket_a_round_trip_late_was_held_else_it_is_the_servers() {
        let r = 40_000;
        // The ticket alone 40.5 ms after the request, the response with the
        // second one a round trip and a 41 ms delayed ACK later.
        assert_eq!(
            reply_parts(121_500, Some(40_500), r),
            (Some(500), Some(41_000))
        );
        // ... or a round trip later (our ACK went at once).
        assert_eq!(reply_parts(80_900, Some(40_500), r), (Some(500), Some(400)));
        // 60 ms later: neither; the server's own time, the whole wait's.
        assert_eq!(reply_parts(100_500, Some(40_500), r), (Some(60_500), None));
        // Nothing came before the response.
        assert_eq!(reply_parts(40_700, None, r), (Some(700), None));
        // On loopback a gap under a millisecond is never a round trip.
        assert_eq!(reply_parts(900, Some(300), 15), (Some(900 - 15), None));
    }

    #[test]
    fn stages_round_to_the_nearest_microsecond() {
        assert_eq!(whole_us(Duration::from_nanos(1_499)), 1);
        assert_eq!(whole_us(Duration::from_nanos(1_500)), 2);
        // Longer than 32 bits of microseconds: the longest that fits.
        assert_eq!(whole_us(Duration::from_secs(10_000)), u32::MAX - 1);
    }

    #[test]
    fn derived_figures_come_from_the_stages() {
        let s = Stages {
            dns: Some(40),
            tcp: Some(100),
            tls: Some(3000),
            srv: Some(1000),
            total: Some(4200),
            tls_setup: Some(900),
            tls_finish: Some(500),
            rtt: Some(400),
            min_rtt: Some(300),
            ..Stages::default()
        };
        assert_eq!(s.other(), Some(60));
        assert_eq!(s.get(Stage::Other), Some(60));
        assert_eq!(s.tls_after_setup(), Some(2100));
        assert_eq!(s.tls_network_server(), Some(1600));
        assert_eq!(s.srv_client(), None, "no server time after the request");
        let read = Stages {
            server: Some(450),
            ..s
        };
        assert_eq!(read.srv_client(), Some(250), "srv − min rtt − server");
        let warm = Stages {
            wait: Some(50),
            srv: Some(1000),
            total: Some(1100),
            rtt: Some(400),
            ..Stages::default()
        };
        assert_eq!(warm.other(), Some(50));
    }
}

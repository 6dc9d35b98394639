//! The statistics' account of why a new connection cost what it did, in
//! the words of someone who read the handshake: `tls` as round trips at the
//! min RTT plus the server's own time, the transmission and the client's
//! work, each round trip beyond the first named; what early data saved;
//! one line per cost that could go and is worth it, the largest saving
//! first, naming the run that would show it (`why_advice`); and the whole
//! connection in the same terms (`stats::HandshakeWhy`). Every line adds up, and a part
//! that is not known is `-`.

use std::time::Duration;

use crate::probe::RunInfo;
use crate::stats::{ConnectionParts, HandshakeWhy};

use super::format::{ms, signed_ms, with_unit, Sign};
use super::why_advice::{advice, kb, retry_groups};

/// `n` of the handshakes, when not all of them.
fn of_all(k: usize, n: usize) -> String {
    if k == n {
        String::new()
    } else {
        format!(" (in {k} of {n})")
    }
}

/// Which handshakes a line's parts are the means of: `mean of the middle 1
/// of 3 by tls`, `means of the middle 3 of 5 by total`.
fn middle(n: usize, of: usize, by: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("mean{s} of the middle {n} of {of} by {by}")
}

/// A part of a line: `server 0.90ms`, or `server -` when not known.
fn part(name: &str, d: Option<Duration>) -> String {
    format!("{name} {}", with_unit(d))
}

/// Each round trip beyond the first, named.
fn reasons(why: &HandshakeWhy) -> Vec<String> {
    let mut out = Vec::new();
    if why.hello_retry > 0 {
        let (wanted, sent) = retry_groups(why);
        let sent = if sent.is_empty() {
            "other groups".into()
        } else {
            sent.join(", ")
        };
        out.push(format!(
            "one for a HelloRetryRequest{}: the server wants {wanted}, we sent {sent}",
            of_all(why.hello_retry, why.n)
        ));
    }
    if why.tls12 > 0 {
        out.push(format!(
            "one for TLS 1.2's second flight{}",
            of_all(why.tls12, why.n)
        ));
    }
    if why.split_flight > 0 {
        let bytes = why
            .names
            .split_first_bytes
            .map(|b| format!(" after its first {b} bytes"))
            .unwrap_or_default();
        out.push(format!(
            "one for a flight the server split{bytes}, the rest held for our ACK{}",
            of_all(why.split_flight, why.n)
        ));
    }
    if why.initial_window > 0 {
        let bytes = why
            .names
            .window_flight_bytes
            .map(|b| format!(" of {}", kb(b)))
            .unwrap_or_default();
        out.push(format!(
            "one for the server's first flight{bytes}, past its initial congestion window{}",
            of_all(why.initial_window, why.n)
        ));
    }
    if why.loss > 0 {
        let cost = why
            .names
            .loss_recovery
            .map(|d| format!(", recovered in up to {}", with_unit(Some(d))))
            .unwrap_or_default();
        out.push(format!(
            "one for a lost segment{cost}{}",
            of_all(why.loss, why.n)
        ));
    }
    out
}

/// `why: tls 87.1ms = 2 round trips × 40.2ms min RTT (one for …) + server
/// 0.90ms + transmission 4.20ms + client 1.60ms  (…)`: the parts add up.
fn why_line(why: &HandshakeWhy) -> Option<String> {
    let n = why.round_trips?;
    let plural = if n == 1 { "" } else { "s" };
    let mut detail = Vec::new();
    if why.round_trips_n < why.n {
        detail.push(format!("{} of {} handshakes", why.round_trips_n, why.n));
    }
    if why.resumed > 0 {
        detail.push(format!(
            "{} resumed, with no certificate",
            if why.resumed == why.n {
                "all".to_string()
            } else {
                why.resumed.to_string()
            }
        ));
    }
    detail.extend(reasons(why));
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(" ({})", detail.join("; "))
    };
    let (tls, rtt, parts, over) = match &why.parts {
        Some(p) => (
            Some(p.tls),
            Some(p.rtt),
            [Some(p.server), Some(p.transmission), Some(p.client)],
            middle(p.n, p.of, "tls"),
        ),
        None => (
            why.tls,
            why.min_rtt,
            [None; 3],
            format!("medians, n = {}", why.n),
        ),
    };
    let rtt = rtt
        .map(|d| format!(" × {}ms min RTT", ms(d)))
        .unwrap_or_default();
    Some(format!(
        "  why: tls {} = {n} round trip{plural}{rtt}{detail} + {} + {} + {}  ({over})",
        with_unit(tls),
        part("server", parts[0]),
        part("transmission", parts[1]),
        part("client", parts[2]),
    ))
}

/// What early data saved against the resumed handshakes that did without,
/// in one sentence.
fn early_data_line(why: &HandshakeWhy) -> Option<String> {
    if why.early_data == 0 {
        return None;
    }
    let srv = why.early_srv?;
    let without = why.resumed.saturating_sub(why.early_data);
    let rest = match (why.resumed_srv, why.min_rtt) {
        (Some(plain), _) => format!(
            "; their median srv is {}, {}ms less than the {} of the {without} resumed without it",
            with_unit(Some(srv)),
            signed_ms(crate::stats::Delta::between(plain, srv), Sign::Minus),
            with_unit(Some(plain)),
        ),
        (None, Some(rtt)) => format!(
            " and saved about a round trip each ({}ms); their median srv is {}",
            ms(rtt),
            with_unit(Some(srv))
        ),
        (None, None) => format!("; their median srv is {}", with_unit(Some(srv))),
    };
    Some(format!(
        "  early data: {} of {} resumed handshakes sent the request in their first flight{rest}",
        why.early_data, why.resumed
    ))
}

/// The parts that add up to a new connection's total: `new connection =
/// 169ms: 4 round trips (tcp 1 · tls 2 · srv 1) × 40.2ms + server 5.7ms +
/// transmission 0.1ms + client 1.9ms + rest 0.3ms (…)`.
fn connection_line(why: &HandshakeWhy) -> Option<String> {
    let (tcp, tls, srv) = why.connection_round_trips()?;
    let n = u32::from(tcp) + u32::from(tls) + u32::from(srv);
    // A response the server's TCP held for our ACK: srv's second round trip.
    let held = if srv == 2 {
        let of = if why.held < why.n {
            format!(" (in {} of {})", why.held, why.n)
        } else {
            String::new()
        };
        format!(", one for a response the server's TCP held for our ACK{of}")
    } else {
        String::new()
    };
    let trips = format!("{n} round trips (tcp {tcp} · tls {tls} · srv {srv}{held})");
    let line = |total: Option<Duration>,
                rtt: Option<Duration>,
                parts: [Option<Duration>; 4],
                over: String| {
        format!(
            "new connection     = {}: {trips}{} + {} + {} + {} + {}  ({over})",
            with_unit(total),
            rtt.map(|d| format!(" × {}ms", ms(d))).unwrap_or_default(),
            part("server", parts[0]),
            part("transmission", parts[1]),
            part("client", parts[2]),
            part("rest", parts[3]),
        )
    };
    Some(match why.connection {
        Some(ConnectionParts {
            n,
            of,
            total,
            rtt,
            server,
            transmission,
            client,
            rest,
            ..
        }) => line(
            Some(total),
            Some(rtt),
            [Some(server), Some(transmission), Some(client), Some(rest)],
            middle(n, of, "total"),
        ),
        None => line(
            why.total,
            why.min_rtt,
            [None; 4],
            format!("median, n = {}", why.n),
        ),
    })
}

/// Every line above, for a run whose cold handshakes told their round trips.
pub fn lines(info: &RunInfo, why: &HandshakeWhy) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(why_line(why));
    out.extend(early_data_line(why));
    // A calibration measures this machine's floor: nothing there to save.
    // A comparison is itself the run that shows a change, and each variant
    // changes the settings the advice would read.
    if why.round_trips.is_some() && !info.settings.calibrate && info.compare.is_none() {
        out.extend(advice(info, why));
    }
    out.extend(connection_line(why));
    out
}

#[cfg(test)]
#[path = "why_tests.rs"]
mod tests;

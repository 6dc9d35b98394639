//! The statistics' account of why a new connection cost what it did, in
//! the words of someone who read the handshake: `tls` as round trips at the
//! min RTT plus the server's own time, the transmission and the client's
//! work, each round trip beyond the first named; what early data saved;
//! one line per cost that could go and is worth it, the largest saving
//! first, naming the run that would show it; and the whole connection in
//! the same terms (`stats::HandshakeWhy`). Every line adds up, and a part
//! that is not known is `-`.

use std::time::Duration;

use crate::probe::handshake_messages::{group_name, name_or_hex, sig_scheme_name};
use crate::probe::{CertSize, RunInfo, TlsMax};
use crate::stats::{ConnectionParts, HandshakeWhy};

use super::fields::group_label;
use super::format::{ms, signed_ms, with_unit, Sign};

/// A round trip shorter than this saves nothing a reader would notice.
const ROUND_TRIP_WORTH: Duration = Duration::from_millis(1);
/// ... nor a saving below this share of the new connection (percent).
const SHARE_WORTH: u32 = 2;

/// `n` of the handshakes, when not all of them.
fn of_all(k: usize, n: usize) -> String {
    if k == n {
        String::new()
    } else {
        format!(" (in {k} of {n})")
    }
}

/// Bytes as people read them: `24.6 KB` (1 KB = 1000 bytes).
fn kb(bytes: u32) -> String {
    format!("{:.1} KB", f64::from(bytes) / 1000.0)
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

/// The group we would move to, and the groups we sent, as names.
fn retry_groups(why: &HandshakeWhy) -> (String, Vec<String>) {
    let n = &why.names;
    let wanted = n.retry_group.map_or_else(
        || "a group we did not offer a share for".into(),
        |g| group_label(g).into_owned(),
    );
    let sent = n
        .sent_shares
        .iter()
        .map(|&g| group_label(g).into_owned())
        .collect();
    (wanted, sent)
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
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

/// The RSA key's size, when the leaf has one.
fn rsa_bits(why: &HandshakeWhy) -> Option<u32> {
    why.names
        .server_key
        .as_deref()?
        .strip_prefix("RSA-")?
        .parse()
        .ok()
}

/// One cost that could go: what it would save, and the line saying how.
struct Advice {
    saving: Duration,
    line: String,
}

/// A saving worth a line: at least `ROUND_TRIP_WORTH` and `SHARE_WORTH`
/// percent of a new connection.
fn worth(saving: Duration, why: &HandshakeWhy) -> bool {
    let total = why.connection.map(|c| c.total).or(why.total);
    saving >= ROUND_TRIP_WORTH
        && total.is_none_or(|t| saving.as_nanos() * 100 >= t.as_nanos() * u128::from(SHARE_WORTH))
}

/// The round trip a change would save, stated.
fn a_round_trip(rtt: Duration) -> String {
    format!("to save a round trip (about {}ms)", ms(rtt))
}

/// The certificates of the flight past the window, named: `the leaf 21.6
/// KB (EC P-256), 3 intermediates of 1.4 KB (RSA-4096)`.
fn chain_words(certs: &[CertSize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < certs.len() {
        let c = &certs[i];
        let key = c.key.as_deref().unwrap_or("key unknown");
        if c.index == 0 {
            out.push(format!("the leaf {} ({key})", kb(c.bytes)));
            i += 1;
            continue;
        }
        // Intermediates alike in key and size (to 0.1 KB) go together.
        let same = certs[i..]
            .iter()
            .take_while(|d| d.key == c.key && kb(d.bytes) == kb(c.bytes))
            .count();
        out.push(if same > 1 {
            format!("{same} more of {} ({key})", kb(c.bytes))
        } else {
            format!("one more of {} ({key})", kb(c.bytes))
        });
        i += same;
    }
    out.join(", ")
}

/// One line per cost that could go and is worth it, and the run that
/// would show it, the largest saving first.
fn advice(info: &RunInfo, why: &HandshakeWhy) -> Vec<String> {
    let mut out: Vec<Advice> = Vec::new();
    let rtt = why.parts.map(|p| p.rtt).or(why.min_rtt);
    let mut split = split_round_trip(why, rtt);
    if let Some(rtt) = rtt.filter(|&r| worth(r, why)) {
        let round_trip = |line: String| Advice {
            saving: rtt,
            line: format!("  {}: {line}", a_round_trip(rtt)),
        };
        if why.hello_retry > 0 {
            out.push(round_trip(hello_retry_advice(why)));
        }
        if why.tls12 > 0 {
            out.push(round_trip(tls12_advice(info).into()));
        }
        out.extend(split.take());
        if why.initial_window > 0 {
            out.push(round_trip(window_advice(why)));
        }
        if let Some(line) = early_data_advice(info, why) {
            out.push(Advice {
                saving: rtt,
                line: format!(
                    "  {}{line}",
                    a_round_trip(rtt).replacen("a round", "one more round", 1)
                ),
            });
        }
    }
    // Worth a line where the round trip alone is not: our delayed ACK.
    out.extend(split);
    out.extend(held_advice(why));
    out.extend(rsa_advice(why));
    out.extend(resume_advice(info, why));
    // Largest saving first; the order above among equals.
    out.sort_by_key(|a| std::cmp::Reverse(a.saving));
    out.into_iter().map(|a| a.line).collect()
}

/// How to save a HelloRetryRequest's round trip.
fn hello_retry_advice(why: &HandshakeWhy) -> String {
    let (wanted, sent) = retry_groups(why);
    // The server chose a group we sent no share for, so it takes none of
    // those we did: a comparison that offers only one of ours would fail;
    // a run that sends its share first measures the saving.
    let rest: Vec<&str> = sent
        .iter()
        .map(String::as_str)
        .filter(|g| *g != wanted)
        .collect();
    let curves = std::iter::once(wanted.as_str())
        .chain(rest)
        .collect::<Vec<_>>()
        .join(",");
    let accept = if sent.is_empty() {
        "X25519".to_string()
    } else {
        or_list(&sent)
    };
    // `--curves` takes names: a group this build cannot name (shown in
    // hex) gets no command line.
    if why.names.retry_group.and_then(group_name).is_some() {
        format!(
            "send a {wanted} key share first (a run with --curves {curves} measures it), or \
             have the server accept {accept}"
        )
    } else {
        format!("have the server accept {accept}")
    }
}

/// How to save TLS 1.2's second round trip.
fn tls12_advice(info: &RunInfo) -> &'static str {
    if info.settings.tls_max == Some(TlsMax::V1_2) {
        "drop --tls-max 1.2, TLS 1.3 needs one round trip where 1.2 needs two; \
         --compare tls=1.2,1.3 measures both"
    } else {
        "the server answered our TLS 1.3 offer with 1.2; TLS 1.3 on the server \
         needs one round trip where 1.2 needs two"
    }
}

/// How to save the round trip of a flight the server split.
fn split_advice(why: &HandshakeWhy) -> String {
    let bytes = why
        .names
        .split_first_bytes
        .map_or_else(|| "part".to_string(), |b| format!("{b} bytes"));
    format!(
        "the server wrote {bytes} of its flight on their own and its TCP held the rest for \
         our ACK; a server that writes its flight at once (or sets TCP_NODELAY) sends it in one"
    )
}

/// A flight the server split (in any handshake): a round trip, and the
/// ACK our kernel delayed where it did (on loopback nearly all of it).
fn split_round_trip(why: &HandshakeWhy, rtt: Option<Duration>) -> Option<Advice> {
    if why.split_flight == 0 {
        return None;
    }
    let rtt = rtt?;
    let delay = why.names.split_ack_delay.unwrap_or_default();
    let saving = rtt + delay;
    if !worth(saving, why) {
        return None;
    }
    let what = if delay >= Duration::from_millis(1) {
        format!(
            "to save a round trip and our delayed ACK (about {})",
            with_unit(Some(saving))
        )
    } else {
        a_round_trip(rtt)
    };
    Some(Advice {
        saving,
        line: format!("  {what}: {}", split_advice(why)),
    })
}

/// How to save the round trip of a flight over the initial window.
fn window_advice(why: &HandshakeWhy) -> String {
    let flight = why
        .names
        .window_flight_bytes
        .map(kb)
        .unwrap_or_else(|| "-".into());
    let certs = &why.names.window_certs;
    let (what, fix) = if certs.is_empty() {
        (String::new(), "a shorter chain or smaller certificates")
    } else {
        let rsa = certs
            .iter()
            .any(|c| c.key.as_deref().is_some_and(|k| k.starts_with("RSA")));
        (
            format!(", the certificates {}", chain_words(certs)),
            if rsa {
                "fewer or smaller certificates (an EC key where one is RSA)"
            } else {
                "fewer or smaller certificates"
            },
        )
    };
    format!(
        "a first flight under the initial window (about 14 KB) fits one; this one was \
         {flight}{what}: {fix}; --compare target= puts two endpoints in the same rounds"
    )
}

/// A response the server's TCP held for our ACK (in most new connections):
/// a round trip and what our kernel delayed the ACK by.
fn held_advice(why: &HandshakeWhy) -> Option<Advice> {
    let c = why.connection.filter(|c| c.round_trips.2 == 2)?;
    let saving = c.rtt + c.held;
    if !worth(saving, why) {
        return None;
    }
    let what = if c.held >= Duration::from_millis(1) {
        "a round trip and our delayed ACK"
    } else {
        "a round trip"
    };
    Some(Advice {
        saving,
        line: format!(
            "  to save {what} (about {}): the server's TCP held its response, and a session \
             ticket written before it, for our ACK of what it had sent first after the \
             request; a server that sets TCP_NODELAY (or writes its tickets with the response) \
             sends it at once",
            with_unit(Some(saving))
        ),
    })
}

/// A server that signs with RSA: up to its time inside the handshake.
fn rsa_advice(why: &HandshakeWhy) -> Option<Advice> {
    let bits = rsa_bits(why)?;
    let server = why
        .parts
        .map(|p| p.server)
        .or(why.server)
        .filter(|&s| worth(s, why))?;
    Some(Advice {
        saving: server,
        line: format!(
            "  to save up to {} of server time: the server signs with RSA-{bits} ({}); an \
             ECDSA P-256 key signs in a fraction of that; --compare target= measures both \
             endpoints",
            with_unit(Some(server)),
            why.names.sig_alg.map_or_else(
                || "scheme unknown".into(),
                |c| name_or_hex(sig_scheme_name(c), c).into_owned()
            )
        ),
    })
}

/// Resumption where no handshake resumed and the run did not ask for
/// none: a resumed handshake skips the certificate and the signature, at
/// most the server's time and our finish.
fn resume_advice(info: &RunInfo, why: &HandshakeWhy) -> Option<Advice> {
    if why.resumed > 0 || info.settings.resume {
        return None;
    }
    let saving = why
        .parts
        .map(|p| p.server + p.client)
        .filter(|&s| worth(s, why))?;
    Some(Advice {
        saving,
        line: format!(
            "  to save up to {} of the server's and our work: resume sessions (no \
             certificate, no signature); --compare resume=off,on measures both",
            with_unit(Some(saving))
        ),
    })
}

/// Early data on resumed connections, where it can be had: TLS 1.3, a
/// safe method, and session tickets that allow it.
fn early_data_advice(info: &RunInfo, why: &HandshakeWhy) -> Option<&'static str> {
    let s = &info.settings;
    let safe = matches!(info.method.as_str(), "GET" | "HEAD");
    let tls13 = why.tls12 == 0 && s.tls_max != Some(TlsMax::V1_2);
    let allowed = why.tickets[1] > 0;
    (why.resumed > 0 && why.early_data == 0 && !s.early_data && safe && tls13 && allowed).then_some(
        ": send the request as early data (0-RTT) on resumed connections, which the \
         server's session tickets allow; --compare early-data=off,on measures both",
    )
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
mod tests {
    use super::*;
    use crate::stats::{synthetic, TlsParts};

    const MS: fn(u64) -> Duration = Duration::from_millis;
    const US: fn(u64) -> Duration = Duration::from_micros;

    fn why() -> HandshakeWhy {
        HandshakeWhy {
            n: 5,
            round_trips: Some(2),
            round_trips_n: 4,
            hello_retry: 4,
            resumed: 4,
            early_data: 3,
            early_srv: Some(US(800)),
            resumed_srv: Some(US(41_000)),
            tls: Some(MS(85)),
            min_rtt: Some(MS(40)),
            parts: Some(TlsParts {
                n: 2,
                of: 4,
                tls: MS(85),
                rtt: MS(40),
                path: MS(80),
                server: US(3_400),
                transmission: US(0),
                client: US(1_600),
            }),
            total: Some(MS(170)),
            connection: Some(ConnectionParts {
                n: 2,
                of: 4,
                total: MS(170),
                rtt: MS(40),
                round_trips: (1, 2, 0),
                path: MS(120),
                server: US(4_000),
                transmission: US(0),
                client: US(1_600),
                rest: US(44_400),
                held: US(0),
            }),
            names: crate::stats::HandshakeNames {
                retry_group: Some(0x18),
                sent_shares: vec![0x11ec, 0x1d],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The figures after `=` on a line, as ms: the total, then each part.
    fn figures(line: &str) -> (f64, Vec<f64>) {
        let num = |w: &str| w.trim_end_matches("ms").parse::<f64>().ok();
        let (head, tail) = line.split_once(" = ").unwrap();
        let total = head
            .rsplit(' ')
            .find_map(num)
            .or_else(|| num(tail.split(':').next().unwrap()))
            .unwrap();
        let tail = tail.split("  (").next().unwrap();
        // `N round trips × R`, then `+ name X`.
        let mut parts = Vec::new();
        let mut words = tail.split_whitespace().peekable();
        let mut trips = None;
        let mut before = "";
        while let Some(w) = words.next() {
            if trips.is_none() && w == "round" {
                trips = before.parse::<f64>().ok();
            }
            before = w;
            if w == "×" {
                let rtt = num(words.next().unwrap()).unwrap();
                parts.push(rtt * trips.unwrap_or(1.0));
            }
            if w == "+" {
                words.next();
                parts.push(num(words.next().unwrap()).unwrap());
            }
        }
        (total, parts)
    }

    #[test]
    fn a_response_held_for_our_ack_is_srv_s_second_round_trip_and_advised_on() {
        let info = synthetic::run_info();
        let mut held = HandshakeWhy {
            n: 5,
            round_trips: Some(1),
            round_trips_n: 5,
            held: 4,
            tls: Some(MS(42)),
            min_rtt: Some(MS(40)),
            total: Some(MS(205)),
            connection: Some(ConnectionParts {
                n: 2,
                of: 4,
                total: MS(205),
                rtt: MS(40),
                round_trips: (1, 1, 2),
                path: MS(160),
                server: US(1_200),
                transmission: US(41_000),
                client: US(3_000),
                rest: US(800),
                held: US(41_000),
            }),
            ..Default::default()
        };
        let lines = lines(&info, &held);
        let text = lines.join("\n");
        assert!(
            text.contains(
                "new connection     = 205ms: 4 round trips (tcp 1 · tls 1 · srv 2, one for a \
                 response the server's TCP held for our ACK (in 4 of 5)) × 40.0ms + server \
                 1.20ms + transmission 41.0ms + client 3.00ms + rest 0.80ms"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  to save a round trip and our delayed ACK (about 81.0ms): the server's TCP held \
                 its response"
            ),
            "{text}"
        );
        // Where most responses came at once, srv has its one round trip and
        // nothing is said of a hold.
        held.held = 2;
        if let Some(c) = held.connection.as_mut() {
            c.round_trips.2 = 1;
        }
        let text = super::lines(&info, &held).join("\n");
        assert!(text.contains("(tcp 1 · tls 1 · srv 1)"), "{text}");
        assert!(!text.contains("held its response"), "{text}");
        assert_eq!(held.connection_round_trips(), Some((1, 1, 1)));
    }

    #[test]
    fn a_mixed_run_says_how_many_had_each_and_its_lines_add_up() {
        let info = synthetic::run_info();
        let lines = lines(&info, &why());
        let text = lines.join("\n");
        assert!(
            lines[0].starts_with(
                "  why: tls 85.0ms = 2 round trips × 40.0ms min RTT (4 of 5 handshakes;"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "one for a HelloRetryRequest (in 4 of 5): the server wants P-384, we sent \
                 X25519MLKEM768, X25519"
            ),
            "{text}"
        );
        // One sentence: the early requests, and their srv against the
        // resumed handshake that went without.
        assert!(
            text.contains(
                "early data: 3 of 4 resumed handshakes sent the request in their first flight; \
                 their median srv is 0.80ms, 40.2ms less than the 41.0ms of the 1 resumed \
                 without it"
            ),
            "{text}"
        );
        // The groups we sent that the server could take instead, all of them.
        assert!(
            text.contains(
                "to save a round trip (about 40.0ms): send a P-384 key share first (a run \
                 with --curves P-384,X25519MLKEM768,X25519 measures it), or have the server \
                 accept X25519MLKEM768 or X25519"
            ),
            "{text}"
        );
        assert!(
            !text.contains("as early data (0-RTT)"),
            "it went early already: {text}"
        );
        let conn = lines
            .iter()
            .find(|l| l.starts_with("new connection"))
            .unwrap();
        assert!(
            conn.contains("= 170ms: 3 round trips (tcp 1 · tls 2 · srv 0) × 40.0ms"),
            "{conn}"
        );
        for line in [&lines[0], conn] {
            let (total, parts) = figures(line);
            let sum: f64 = parts.iter().sum();
            assert!((sum - total).abs() < 0.05, "{line}: {parts:?} make {sum}");
        }
    }

    #[test]
    fn unknown_parts_are_a_dash_never_zero_and_never_in_the_rest() {
        let mut w = why();
        w.parts = None;
        w.connection = None;
        let lines = lines(&synthetic::run_info(), &w);
        assert!(
            lines[0].ends_with("+ server - + transmission - + client -  (medians, n = 5)"),
            "{lines:#?}"
        );
        let conn = lines
            .iter()
            .find(|l| l.starts_with("new connection"))
            .unwrap();
        assert!(
            conn.contains("+ server - + transmission - + client - + rest -"),
            "{conn}"
        );
        assert!(!conn.contains("0.00"), "{conn}");
    }

    #[test]
    fn a_group_this_build_cannot_name_gets_no_command_line() {
        let mut w = why();
        w.names.retry_group = Some(0x7a7a);
        let text = lines(&synthetic::run_info(), &w).join("\n");
        assert!(text.contains("the server wants 0x7a7a"), "{text}");
        assert!(
            text.contains(
                "to save a round trip (about 40.0ms): have the server accept X25519MLKEM768 or X25519"
            ),
            "{text}"
        );
        assert!(!text.contains("--curves"), "{text}");
    }

    #[test]
    fn a_split_saves_the_delayed_ack_too_even_where_the_round_trip_is_nothing() {
        let mut w = why();
        w.split_flight = 4;
        w.names.split_first_bytes = Some(6);
        w.names.split_ack_delay = Some(MS(41));
        let info = synthetic::run_info();
        let text = lines(&info, &w).join("\n");
        assert!(
            text.contains(
                "to save a round trip and our delayed ACK (about 81.0ms): the server wrote 6 bytes"
            ),
            "{text}"
        );
        // On loopback: the 20 µs round trip alone is not worth a line, the
        // 41 ms our ACK waited is.
        for p in w.parts.iter_mut() {
            p.rtt = US(20);
        }
        w.min_rtt = Some(US(20));
        let text = lines(&info, &w).join("\n");
        assert!(
            text.contains("to save a round trip and our delayed ACK (about 41.0ms)"),
            "{text}"
        );
        // Without a delayed ACK: nothing worth a line.
        w.names.split_ack_delay = Some(Duration::ZERO);
        let text = lines(&info, &w).join("\n");
        assert!(!text.contains("the server wrote 6 bytes"), "{text}");
    }

    #[test]
    fn a_round_trip_of_a_few_microseconds_is_not_worth_a_line() {
        let mut w = why();
        for p in w.parts.iter_mut() {
            p.rtt = US(20);
        }
        w.min_rtt = Some(US(20));
        w.early_data = 0;
        w.tickets = [4, 4];
        w.names.server_key = Some("RSA-4096".into());
        w.tls12 = 4;
        let mut info = synthetic::run_info();
        info.settings.resume = true;
        let text = lines(&info, &w).join("\n");
        assert!(!text.contains("to save a round trip"), "{text}");
        assert!(!text.contains("to save one more round trip"), "{text}");
        // The RSA signature's 3.4 ms of 170: more than 2 %, so it stays.
        assert!(
            text.contains("to save up to 3.40ms of server time: the server signs with RSA-4096"),
            "{text}"
        );
    }

    #[test]
    fn advice_comes_largest_saving_first_and_early_data_only_where_tickets_allow() {
        let mut w = why();
        w.early_data = 0;
        w.names.server_key = Some("RSA-4096".into());
        for p in w.parts.iter_mut() {
            p.server = MS(60);
        }
        let mut info = synthetic::run_info();
        info.settings.resume = true;
        info.method = "HEAD".into();
        let saves = |w: &HandshakeWhy| -> Vec<String> {
            lines(&info, w)
                .into_iter()
                .filter(|l| l.trim_start().starts_with("to save"))
                .collect()
        };
        // The tickets allow none: no early-data line.
        let got = saves(&w);
        assert!(
            got[0].contains("to save up to 60.0ms of server time"),
            "{got:#?}"
        );
        assert!(
            got[1].contains("to save a round trip (about 40.0ms)"),
            "{got:#?}"
        );
        assert!(got.iter().all(|l| !l.contains("early data")), "{got:#?}");
        w.tickets = [4, 3];
        let got = saves(&w);
        assert!(
            got.iter().any(|l| l.contains(
                "to save one more round trip (about 40.0ms): send the request as early data"
            )),
            "{got:#?}"
        );
        // Never on TLS 1.2.
        w.tls12 = 4;
        assert!(saves(&w).iter().all(|l| !l.contains("early data")));
    }

    #[test]
    fn a_calibration_gets_no_advice_and_an_untold_run_no_lines() {
        let mut info = synthetic::run_info();
        info.settings.calibrate = true;
        let lines = lines(&info, &why());
        assert!(lines.iter().all(|l| !l.contains("to save")), "{lines:#?}");
        assert!(super::lines(&synthetic::run_info(), &HandshakeWhy::default()).is_empty());
    }

    #[test]
    fn the_chain_line_names_each_certificate_its_size_and_key() {
        let cert = |index, bytes, key: &str| CertSize {
            index,
            bytes,
            key: Some(key.into()),
        };
        let words = chain_words(&[
            cert(0, 1_200, "EC P-256"),
            cert(1, 7_400, "RSA-4096"),
            cert(2, 7_400, "RSA-4096"),
            cert(3, 7_420, "RSA-4096"),
        ]);
        assert_eq!(
            words,
            "the leaf 1.2 KB (EC P-256), 3 more of 7.4 KB (RSA-4096)"
        );
    }
}

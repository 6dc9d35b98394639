//! The advice under the statistics' account of a new connection (`why`):
//! one line per cost that could go and is worth it (`ROUND_TRIP_WORTH`,
//! `SHARE_WORTH`), the largest saving first, each naming the run that
//! would show it, from the same facts (`stats::HandshakeWhy`).

use std::time::Duration;

use crate::probe::handshake_messages::{group_name, name_or_hex, sig_scheme_name};
use crate::probe::{CertSize, RunInfo, TlsMax};
use crate::stats::HandshakeWhy;

use super::fields::group_label;
use super::format::{ms, with_unit};

/// A round trip shorter than this saves nothing a reader would notice.
const ROUND_TRIP_WORTH: Duration = Duration::from_millis(1);
/// ... nor a saving below this share of the new connection (percent).
const SHARE_WORTH: u32 = 2;

/// Bytes as people read them: `24.6 KB` (1 KB = 1000 bytes).
pub(super) fn kb(bytes: u32) -> String {
    format!("{:.1} KB", f64::from(bytes) / 1000.0)
}

/// The group we would move to, and the groups we sent, as names.
pub(super) fn retry_groups(why: &HandshakeWhy) -> (String, Vec<String>) {
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
pub(super) fn chain_words(certs: &[CertSize]) -> String {
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
pub(super) fn advice(info: &RunInfo, why: &HandshakeWhy) -> Vec<String> {
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
    // Only where the server can resume: it sent a TLS 1.3 ticket, or the
    // handshakes were TLS 1.2 (whose session IDs need no ticket).
    let resumable = why.tls12 > 0 || why.tickets[0] > 0;
    if why.resumed > 0 || info.settings.resume || !resumable {
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

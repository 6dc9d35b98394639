//! The statistics' account of why a new connection cost what it did, in
//! the words of someone who read the handshake: `tls` as round trips plus
//! the server's and the client's own work, each round trip beyond the
//! first named; what early data saved; one line per cost that could go,
//! naming the run that would show it; and the whole connection in round
//! trips (`stats::HandshakeWhy`).

use std::time::Duration;

use crate::probe::handshake_messages::{group_name, name_or_hex, sig_scheme_name};
use crate::probe::{RunInfo, TlsMax};
use crate::stats::HandshakeWhy;

use super::fields::group_label;
use super::format::{ms, signed_ms, with_unit, Sign};

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
    out
}

/// `why: tls 87.1ms = 2 round trips of 40.2ms (one for …) + server 4.9ms +
/// client 1.6ms  (medians, n = 3)`.
fn why_line(why: &HandshakeWhy) -> Option<String> {
    let n = why.round_trips?;
    let plural = if n == 1 { "" } else { "s" };
    let rtt = why
        .min_rtt
        .map(|d| format!(" of {}ms", ms(d)))
        .unwrap_or_default();
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
    Some(format!(
        "  why: tls {} = {n} round trip{plural}{rtt}{detail} + server {} + client {}  (medians, n = {})",
        with_unit(why.tls),
        with_unit(why.server),
        with_unit(why.client),
        why.n
    ))
}

/// What early data saved against the resumed handshakes that did without.
fn early_data_line(why: &HandshakeWhy) -> Option<String> {
    if why.early_data == 0 {
        return None;
    }
    let srv = why.early_srv?;
    let against = match (why.resumed_srv, why.min_rtt) {
        (Some(plain), _) => format!(
            "against {} for the {} resumed without it: {}ms saved",
            with_unit(Some(plain)),
            why.resumed.saturating_sub(why.early_data),
            signed_ms(crate::stats::Delta::between(plain, srv), Sign::Minus)
        ),
        (None, Some(rtt)) => format!(
            "where a request sent after the handshake waits a round trip ({}ms): about that \
             saved (--compare early-data=off,on measures it)",
            ms(rtt)
        ),
        (None, None) => "(--compare early-data=off,on measures the saving)".into(),
    };
    Some(format!(
        "  early data: {} of {} resumed handshakes sent the request in their first flight: \
         srv {} {against}",
        why.early_data,
        why.resumed,
        with_unit(Some(srv))
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

/// One line per cost that could go, and the run that would show it.
fn advice(info: &RunInfo, why: &HandshakeWhy) -> Vec<String> {
    let mut out = Vec::new();
    if why.hello_retry > 0 {
        let (wanted, sent) = retry_groups(why);
        let ours = sent.first().cloned().unwrap_or_else(|| "X25519".into());
        // The server chose a group we sent no share for, so it takes none
        // of those we did: a comparison that offers only one of ours would
        // fail; a run that sends its share first measures the saving.
        let rest: Vec<&str> = sent
            .iter()
            .map(String::as_str)
            .filter(|g| *g != wanted)
            .collect();
        let curves = std::iter::once(wanted.as_str())
            .chain(rest)
            .collect::<Vec<_>>()
            .join(",");
        // `--curves` takes names: a group this build cannot name (shown in
        // hex) gets no command line.
        let named = why.names.retry_group.and_then(group_name).is_some();
        out.push(if named {
            format!(
                "  to save a round trip: send a {wanted} key share first (a run with --curves \
                 {curves} measures it), or have the server accept {ours}"
            )
        } else {
            format!("  to save a round trip: have the server accept {ours}")
        });
    }
    if why.tls12 > 0 {
        out.push(if info.settings.tls_max == Some(TlsMax::V1_2) {
            "  to save a round trip: drop --tls-max 1.2, TLS 1.3 needs one round trip where \
             1.2 needs two; --compare tls=1.2,1.3 measures both"
                .into()
        } else {
            "  to save a round trip: the server answered our TLS 1.3 offer with 1.2; TLS 1.3 \
             on the server needs one round trip where 1.2 needs two"
                .into()
        });
    }
    if why.initial_window > 0 {
        let cert = why
            .names
            .cert_bytes
            .map(|b| format!(", the certificates {}", kb(b)))
            .unwrap_or_default();
        let flight = why
            .names
            .window_flight_bytes
            .map(kb)
            .unwrap_or_else(|| "-".into());
        out.push(format!(
            "  to save a round trip: a first flight under the initial window (about 14 KB) \
             fits one; this one was {flight}{cert}: a shorter chain or an ECDSA key; \
             --compare target= puts two endpoints in the same rounds"
        ));
    }
    if let (Some(bits), Some(server)) = (rsa_bits(why), why.server) {
        if bits >= 3072 || server >= Duration::from_millis(2) {
            out.push(format!(
                "  to save server time: the server signs with RSA-{bits} ({}); an ECDSA P-256 \
                 key signs in a fraction of that; --compare target= measures both endpoints",
                why.names.sig_alg.map_or_else(
                    || "scheme unknown".into(),
                    |c| { name_or_hex(sig_scheme_name(c), c).into_owned() }
                )
            ));
        }
    }
    out.extend(resumption_advice(info, why));
    out
}

/// Resumption, then 0-RTT: the next handshake cost a run could leave out.
fn resumption_advice(info: &RunInfo, why: &HandshakeWhy) -> Option<String> {
    let s = &info.settings;
    if why.resumed == 0 && !s.resume {
        return Some(
            "  to save the certificate and the signature: resume sessions; \
             --compare resume=off,on measures both"
                .into(),
        );
    }
    let safe = matches!(info.method.as_str(), "GET" | "HEAD");
    let tls13 = why.tls12 == 0 && s.tls_max != Some(TlsMax::V1_2);
    (why.resumed > 0 && why.early_data == 0 && !s.early_data && safe && tls13).then(|| {
        "  to save one more round trip: send the request as early data (0-RTT) on resumed \
         connections; --compare early-data=off,on measures both"
            .into()
    })
}

/// `new connection = 169.0ms: 4 round trips (tcp 1 · tls 2 · srv 1) of
/// 40.2ms + server 5.7ms + client 1.6ms + rest 0.3ms  (medians)`.
fn connection_line(why: &HandshakeWhy) -> Option<String> {
    let (tcp, tls, srv) = why.connection_round_trips()?;
    let (total, rtt) = (why.total?, why.min_rtt?);
    let n = u32::from(tcp) + u32::from(tls) + u32::from(srv);
    let server = why.server.unwrap_or_default() + why.srv_server.unwrap_or_default();
    let client = why.client.unwrap_or_default();
    let rest = crate::stats::Delta::between(total, rtt * n + server + client);
    Some(format!(
        "new connection     = {}ms: {n} round trips (tcp {tcp} · tls {tls} · srv {srv}) of {}ms \
         + server {}ms + client {}ms + rest {}ms  (medians, n = {})",
        ms(total),
        ms(rtt),
        ms(server),
        ms(client),
        signed_ms(rest, Sign::Minus),
        why.n
    ))
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
    use crate::stats::synthetic;

    fn why() -> HandshakeWhy {
        HandshakeWhy {
            n: 5,
            round_trips: Some(2),
            round_trips_n: 4,
            hello_retry: 4,
            resumed: 4,
            early_data: 3,
            early_srv: Some(Duration::from_micros(800)),
            resumed_srv: Some(Duration::from_micros(41_000)),
            tls: Some(Duration::from_millis(85)),
            min_rtt: Some(Duration::from_millis(40)),
            client: Some(Duration::from_micros(1_600)),
            server: Some(Duration::from_micros(3_400)),
            total: Some(Duration::from_millis(170)),
            srv_server: Some(Duration::from_micros(600)),
            names: crate::stats::HandshakeNames {
                retry_group: Some(0x18),
                sent_shares: vec![0x1d],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_mixed_run_says_how_many_had_each_and_what_early_data_saved() {
        let info = synthetic::run_info();
        let lines = lines(&info, &why());
        let text = lines.join("\n");
        assert!(
            lines[0].starts_with("  why: tls 85.0ms = 2 round trips of 40.0ms (4 of 5 handshakes;"),
            "{text}"
        );
        assert!(
            text.contains(
                "one for a HelloRetryRequest (in 4 of 5): the server wants P-384, we sent X25519"
            ),
            "{text}"
        );
        // 41.0 − 0.80: against the resumed handshakes that went without.
        assert!(
            text.contains("srv 0.80ms against 41.0ms for the 1 resumed without it: 40.2ms saved"),
            "{text}"
        );
        assert!(
            text.contains(
                "send a P-384 key share first (a run with --curves P-384,X25519 \
                 measures it)"
            ),
            "{text}"
        );
        assert!(
            !text.contains("as early data (0-RTT)"),
            "it went early already: {text}"
        );
        // Most requests went early: srv holds no round trip of its own;
        // 170 − 3 × 40 − (3.4 + 0.6) − 1.6 = 44.4 ms left for the rest.
        assert!(
            text.contains("new connection     = 170ms: 3 round trips (tcp 1 · tls 2 · srv 0)"),
            "{text}"
        );
        assert!(
            text.contains("+ server 4.00ms + client 1.60ms + rest 44.4ms"),
            "{text}"
        );
    }

    #[test]
    fn a_group_this_build_cannot_name_gets_no_command_line() {
        let mut w = why();
        w.names.retry_group = Some(0x7a7a);
        let text = lines(&synthetic::run_info(), &w).join("\n");
        assert!(text.contains("the server wants 0x7a7a"), "{text}");
        assert!(
            text.contains("to save a round trip: have the server accept X25519"),
            "{text}"
        );
        assert!(!text.contains("--curves"), "{text}");
    }

    #[test]
    fn a_calibration_gets_no_advice_and_an_untold_run_no_lines() {
        let mut info = synthetic::run_info();
        info.settings.calibrate = true;
        let lines = lines(&info, &why());
        assert!(lines.iter().all(|l| !l.contains("to save")), "{lines:#?}");
        assert!(super::lines(&synthetic::run_info(), &HandshakeWhy::default()).is_empty());
    }
}

//! Turning a finished transfer into a `Sample`: libcurl's timers and facts,
//! what the handler saw, and our own stamps around the handshake.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use curl::easy::Easy2;

use super::answers;
use super::collector::Collector;
use super::errors::{kind_of, Evidence};
use super::transfer::{Capture, TransferFacts, MAX_CERTS};
use super::transfer_stamps::TransferStamps;
use super::types::{CurlTimers, ErrorKind, Mode, ProbeError, Sample, TcpFacts};

/// How one transfer went, as the probe timed it.
pub struct Outcome {
    pub result: Result<(), curl::Error>,
    pub own_dns: Option<Duration>,
    /// When the clock started (before DNS for cold, before the transfer for warm).
    pub start: Instant,
    /// When `perform` returned.
    pub returned: Instant,
}

/// Everything libcurl and the handler know about the transfer that just
/// ended, as a sample; `tcp_info` is the kernel's view, taken by the caller.
pub(super) fn build(
    easy: &Easy2<Collector>,
    tcp_info: Option<TcpFacts>,
    early_data_asked: bool,
    mode: Mode,
    round: u32,
    https: bool,
    done: Outcome,
) -> Sample {
    let timers = answers::timers(easy);
    let wall_total = response_end(easy, &done).saturating_duration_since(done.start);
    let status = easy.response_code().unwrap_or(0) as u16;
    let addr = peer_of(easy);
    let proto = if status > 0 {
        answers::http_version(easy)
    } else {
        None
    };
    let retry_after = easy
        .get_ref()
        .retry_after
        .map(|raw| raw.read(std::time::SystemTime::now()));
    let timeline_start = timeline_start_us(easy.get_ref());
    let stamps = &easy.get_ref().stamps;
    let (tls_setup, tls_finish) = client_work(stamps, timeline_start, &timers);
    let (reply_wait, reply_first) = reply_wait(stamps, easy.get_ref().first_header_us);
    let socket_open = match (timeline_start, easy.get_ref().socket_opened) {
        (Some(start), Some((opened, _))) => opened.checked_sub(start).map(Duration::from_micros),
        _ => None,
    };
    let server_timing = server_timing_of(easy.get_ref());
    let collector = easy.get_ref();
    let body_overflow = collector.body_overflow;
    let error = match &done.result {
        Ok(()) => None,
        // We stopped reading on purpose; the response itself is fine.
        Err(e) if e.is_write_error() && body_overflow => None,
        Err(e) => Some(Box::new(classify(e, easy, status, timers.connect_us > 0))),
    };
    // TLS facts belong only to probes that made a handshake.
    let tls = (timers.num_connects > 0)
        .then(|| tls_of(collector))
        .flatten();
    let sample = Sample {
        own_dns: done.own_dns,
        wall_total: Some(wall_total),
        timers,
        status,
        proto,
        tls,
        // A second request inside one transfer is libcurl retrying on a new
        // connection after the kept one died under the first.
        retries: collector
            .requests_sent
            .load(Ordering::Relaxed)
            .saturating_sub(1)
            .min(255) as u8,
        bytes: collector.body_bytes as u32,
        addr,
        body_overflow,
        retry_after,
        error,
        tls_setup,
        tls_finish,
        reply_wait,
        reply_first,
        tcp_info,
        socket_open,
        server_timing: server_timing.into_boxed_slice(),
        early_data: early_data_asked.then(|| answers::early_data(easy)),
        ..Sample::new(round, mode, https)
    };
    with_anatomy(sample, collector)
}

/// The handshake's TLS facts, with the tickets the server sent after it.
fn tls_of(c: &Collector) -> Option<super::types::TlsFacts> {
    let mut t = tls_facts_of(c)?;
    let (tickets, early) = c.stamps.tickets();
    t.ticket_early_data = (tickets > 0).then_some(early);
    Some(t)
}

/// The sample with why its handshake cost what it did, and its finish
/// less the work a round trip inside a flight covered (that cost no time:
/// the finish is what the handshake waited for).
fn with_anatomy(mut sample: Sample, c: &Collector) -> Sample {
    let shape = c.stamps.shape();
    if let Some((anatomy, hidden)) = anatomy(&sample, shape, &c.chain, c.leaf.as_ref()) {
        sample.tls_finish = sample
            .tls_finish
            .map(|f| f.saturating_sub(Duration::from_micros(hidden)));
        sample.anatomy = Some(anatomy);
    }
    sample
}

/// Why the handshake this probe made cost what it did, read from the
/// shape its stamps give; `None` for a probe that made none (a warm probe
/// on a kept connection).
fn anatomy(
    s: &Sample,
    shape: Option<super::handshake_shape::Shape>,
    chain: &[openssl::x509::X509],
    leaf: Option<&openssl::x509::X509>,
) -> Option<(Box<super::types::HandshakeAnatomy>, u64)> {
    let tls = s.tls.as_ref()?;
    let shape = shape?;
    let stages = s.stages();
    // The leaf first, as the server sent it (the chain's own first entry).
    let only_leaf;
    let certs = if chain.is_empty() {
        only_leaf = leaf.cloned().into_iter().collect::<Vec<_>>();
        &only_leaf[..]
    } else {
        chain
    };
    let (anatomy, hidden) = super::anatomy::derive(&shape, tls, &stages, stages.min_rtt, certs);
    Some((Box::new(anatomy), hidden))
}

/// When the response ended: at its last byte as delivered to our
/// callbacks (the blank line after the headers of a HEAD answer, the last
/// body chunk of a GET). libcurl's own wrap-up after that (its "done"
/// handling, closing a cold connection) is not the server's time. A chunked
/// terminator or an HTTP/2 END_STREAM that arrives in a frame of its own is
/// not seen here; servers send it with the last data in practice.
fn response_end(easy: &Easy2<Collector>, done: &Outcome) -> std::time::Instant {
    match (&done.result, easy.get_ref().last_byte) {
        (Ok(()), Some(last)) => last,
        (Err(e), Some(last)) if e.is_write_error() && easy.get_ref().body_overflow => last,
        _ => done.returned,
    }
}

/// The address and port the transfer talked to.
fn peer_of(easy: &Easy2<Collector>) -> Option<SocketAddr> {
    match (easy.primary_ip(), easy.primary_port()) {
        (Ok(Some(ip)), Ok(port)) if !ip.is_empty() => ip
            .parse::<IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, port)),
        _ => None,
    }
}

/// The `Server-Timing` metrics of the response, from its raw headers.
fn server_timing_of(collector: &Collector) -> Vec<super::types::ServerTiming> {
    let mut server_timing = Vec::new();
    for line in collector.server_timing_raw.split_inclusive(|&b| b == b'\n') {
        super::server_timing::parse_line(line, &mut server_timing);
    }
    server_timing
}

/// The TLS facts of the handshake the transfer made, with what the leaf
/// certificate and the staple say.
fn tls_facts_of(collector: &Collector) -> Option<super::types::TlsFacts> {
    collector.tls.map(|mut facts| {
        if let Some((days, expired)) = collector.leaf.as_ref().and_then(time_left) {
            facts.cert_days_left = Some(days);
            facts.cert_expired = expired;
        }
        facts.cert_not_after = collector.leaf.as_ref().and_then(not_after_unix);
        facts.ocsp = collector
            .staple
            .judge(collector.leaf.as_deref(), collector.anchors());
        facts
    })
}

/// Where libcurl's time line for this transfer starts, on CLOCK_MONOTONIC
/// (µs): the origin of every `CURLINFO_*_TIME_T`, so that our own stamps and
/// libcurl's timers can be compared. Where libcurl had finished its lookup
/// when it opened the first socket (the usual case, and always with a
/// pinned address), that moment less the lookup timer: late by the few
/// microseconds libcurl spends between the two, never early. Where it had
/// not (it connects on the first answer while waiting for the second), the
/// moment `perform` was called: early by the few microseconds libcurl takes
/// to start its time line.
pub(super) fn timeline_start_us(c: &Collector) -> Option<u64> {
    match c.socket_opened {
        Some((opened, lookup)) if lookup > 0 => Some(opened.saturating_sub(u64::from(lookup))),
        _ => c.perform_started_us,
    }
}

/// Our own work at both ends of the handshake, for a transfer that made
/// exactly one new connection with one: from TCP connected to the ClientHello
/// leaving (set-up), and our work from then until libcurl's handshake-done
/// timer (finish: the CPU time of the thread that ran the transfer, see
/// `handshake_stamps`), from the transfer's `stamps`. libcurl's timers are placed on
/// CLOCK_MONOTONIC from `start` (`timeline_start_us`), against our stamps
/// from OpenSSL's callbacks. `None` where a piece is missing or the stamps
/// are out of order (connected ≤ ClientHello ≤ done must hold): a wrong
/// figure is never shown.
fn client_work(
    stamps: &TransferStamps,
    start: Option<u64>,
    timers: &CurlTimers,
) -> (Option<Duration>, Option<Duration>) {
    if timers.num_connects != 1 || timers.connect_us == 0 || timers.appconnect_us == 0 {
        return (None, None);
    }
    let (Some(start), Some(hello)) = (start, stamps.client_hello_sent_us()) else {
        return (None, None);
    };
    let connected = start + u64::from(timers.connect_us);
    let done = start + u64::from(timers.appconnect_us);
    if !(connected <= hello && hello <= done) {
        return (None, None);
    }
    let setup = Duration::from_micros(hello - connected);
    let finish = stamps
        .client_finish_us(done)
        .filter(|&us| us <= done - hello)
        .map(Duration::from_micros);
    (Some(setup), finish)
}

/// From the request's (last) record written to the first record of its
/// response come in (`TransferStamps::reply`), for a response whose
/// first header line reached our callback at `first_header_us`; and to the
/// server's first data after the request, where the response came in a
/// later read behind a session ticket. `None` where a piece is missing or
/// the stamps are out of order.
fn reply_wait(
    stamps: &TransferStamps,
    first_header_us: Option<u64>,
) -> (Option<Duration>, Option<Duration>) {
    let Some(r) = first_header_us.and_then(|t| stamps.reply(t)) else {
        return (None, None);
    };
    if r.request_us > r.response_us {
        return (None, None);
    }
    let since = |t: u64| Duration::from_micros(t - r.request_us);
    (
        Some(since(r.response_us)),
        r.held_after_us.filter(|&t| t >= r.request_us).map(since),
    )
}

/// The kernel's view for this probe: read when the headers ended, else when
/// libcurl closed the socket; retransmissions counted once per connection.
pub(super) fn tcp_facts(c: &mut Collector) -> Option<TcpFacts> {
    let reading = c.tcp.or_else(|| c.tcp_at_close())?;
    let retrans = reading.total_retrans.saturating_sub(c.retrans_counted);
    c.retrans_counted = reading.total_retrans;
    Some(TcpFacts {
        rtt_us: reading.rtt_us,
        min_rtt_us: reading.min_rtt_us,
        retrans,
    })
}

/// Whole days from now until the certificate's notAfter (OpenSSL gives days
/// and seconds with one sign), and whether that moment has passed.
fn time_left(cert: &openssl::x509::X509) -> Option<(i32, bool)> {
    let now = openssl::asn1::Asn1Time::days_from_now(0).ok()?;
    let left = now.diff(cert.not_after()).ok()?;
    Some((left.days, left.days < 0 || left.secs < 0))
}

/// The certificate's notAfter in seconds since the Unix epoch: OpenSSL's
/// difference from the epoch itself, so no reading of the clock enters it.
fn not_after_unix(cert: &openssl::x509::X509) -> Option<i64> {
    let epoch = openssl::asn1::Asn1Time::from_unix(0).ok()?;
    let d = epoch.diff(cert.not_after()).ok()?;
    Some(i64::from(d.days) * 86_400 + i64::from(d.secs))
}

/// A sample for a probe that failed before libcurl was asked to transfer:
/// our own DNS lookup failed after `wall` (`Some`), or setting up the
/// handle failed before any clock ran (`None`: nothing was measured).
pub(crate) fn failed_before_transfer(
    mode: Mode,
    round: u32,
    https: bool,
    err: ProbeError,
    wall: Option<Duration>,
) -> Sample {
    Sample {
        wall_total: wall,
        error: Some(Box::new(err)),
        ..Sample::new(round, mode, https)
    }
}

/// A probe whose handle could not be set up: an `error` sample, nothing measured.
pub(crate) fn setup_failure(
    mode: Mode,
    round: u32,
    https: bool,
    e: &dyn std::fmt::Display,
) -> Sample {
    let err = ProbeError {
        kind: ErrorKind::Error,
        text: crate::text::redact_userinfo(&e.to_string()),
    };
    failed_before_transfer(mode, round, https, err, None)
}

/// The failure of a transfer, classified from what libcurl, the OS and the
/// certificate check say about it: a probe's, or the push's (`push`).
pub(super) fn classify<H>(
    err: &curl::Error,
    easy: &Easy2<H>,
    status: u16,
    connected: bool,
) -> ProbeError {
    let full = match err.extra_description() {
        Some(extra) => format!("{}: {}", err.description(), extra),
        None => err.description().to_string(),
    };
    let kind = kind_of(&Evidence {
        code: err.code(),
        os_errno: easy.os_errno().unwrap_or(0),
        verify_result: answers::verify_result(easy),
        status,
        text: &full,
        connected,
    });
    ProbeError {
        kind,
        text: error_words(err),
    }
}

/// libcurl's words for a failure (`libcurl_words`), with the user
/// information of any URL in them hidden: a proxy's password, quoted in
/// `Unsupported proxy syntax in '...'`, is never stored, shown or exported.
pub(super) fn error_words(err: &curl::Error) -> String {
    crate::text::redact_userinfo(&libcurl_words(
        err.code(),
        err.description(),
        err.extra_description(),
    ))
}

/// libcurl's words for a failure, said once: the description of its code,
/// then the detail, unless the detail says it already (a refused connect's
/// detail ends with the description, a failed handshake's says "connect
/// error" twice) or the description is not ours to repeat (a refused
/// certificate's "SSL peer certificate or SSH remote key was not OK": no
/// SSH key is checked here).
fn libcurl_words(
    code: super::curl_ffi::codes::CURLcode,
    description: &str,
    extra: Option<&str>,
) -> String {
    let Some(extra) = extra.filter(|e| !e.is_empty()) else {
        return description.to_string();
    };
    if code == super::curl_ffi::codes::CURLE_PEER_FAILED_VERIFICATION {
        return extra.to_string();
    }
    // "SSL connect error: TLS connect error: error:0A00042E:...": OpenSSL's
    // reason is the news, the handshake's failure its kind.
    if code == super::curl_ffi::codes::CURLE_SSL_CONNECT_ERROR {
        if let Some(reason) = extra.strip_prefix("TLS connect error: ") {
            return reason.to_string();
        }
    }
    match extra
        .strip_suffix(description)
        .and_then(|e| e.strip_suffix(": "))
    {
        Some(detail) if !detail.is_empty() => detail.to_string(),
        _ => format!("{description}: {extra}"),
    }
}

/// Everything `capture` asks for about the transfer `easy` just ran for
/// `url`, which ended in `result`: libcurl's answers, and what only we know
/// (the result as curl reports it, the certificates the handler kept). Call
/// after `perform` returned.
pub(super) fn transfer_facts(
    easy: &Easy2<Collector>,
    capture: &Capture,
    url: &str,
    result: &Result<(), curl::Error>,
) -> TransferFacts {
    let collector = easy.get_ref();
    let (exit_code, error_message) = match result {
        Ok(()) => (0, None),
        Err(e) if e.is_write_error() && collector.body_overflow => (0, None),
        Err(e) => {
            let text = e.extra_description().unwrap_or(e.description());
            (e.code() as i32, Some(crate::text::redact_userinfo(text)))
        }
    };
    let certs = if capture.certs {
        collector
            .chain
            .iter()
            .take(MAX_CERTS)
            .map(|cert| super::cert_text::curl_certinfo(cert))
            .collect()
    } else {
        Vec::new()
    };
    TransferFacts {
        exit_code,
        error_message,
        url: url.to_string(),
        certs,
        ..answers::transfer_facts(easy, &capture.headers)
    }
}

#[cfg(test)]
mod words_tests {
    use super::super::curl_ffi::codes;
    use super::libcurl_words;

    #[test]
    fn libcurls_words_say_each_thing_once() {
        assert_eq!(
            libcurl_words(
                codes::CURLE_COULDNT_CONNECT,
                "Could not connect to server",
                Some(
                    "Failed to connect to 127.0.0.1 port 9 after 0 ms: Could not connect to server"
                )
            ),
            "Failed to connect to 127.0.0.1 port 9 after 0 ms"
        );
        assert_eq!(
            libcurl_words(
                codes::CURLE_PEER_FAILED_VERIFICATION,
                "SSL peer certificate or SSH remote key was not OK",
                Some("SSL certificate OpenSSL verify result: self-signed certificate (18)")
            ),
            "SSL certificate OpenSSL verify result: self-signed certificate (18)"
        );
        assert_eq!(
            libcurl_words(
                codes::CURLE_OPERATION_TIMEDOUT,
                "Timeout was reached",
                Some("Operation timed out after 1000 milliseconds with 0 bytes received")
            ),
            "Timeout was reached: Operation timed out after 1000 milliseconds with 0 bytes received"
        );
        assert_eq!(
            libcurl_words(codes::CURLE_GOT_NOTHING, "Empty reply", None),
            "Empty reply"
        );
        assert_eq!(
            libcurl_words(
                codes::CURLE_SSL_CONNECT_ERROR,
                "SSL connect error",
                Some(
                    "TLS connect error: error:0A00042E:SSL routines::tlsv1 alert protocol version"
                )
            ),
            "error:0A00042E:SSL routines::tlsv1 alert protocol version"
        );
        assert_eq!(
            libcurl_words(
                codes::CURLE_SSL_CONNECT_ERROR,
                "SSL connect error",
                Some("Send failure: Broken pipe")
            ),
            "SSL connect error: Send failure: Broken pipe"
        );
    }
}

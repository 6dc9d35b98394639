//! What a transfer's callbacks leave stays with the transfer: two
//! transfers driven together on one thread (one multi handle, as a cold
//! runner drives its probes) each keep their own handshake stamps and their
//! own socket's reading at close. Kept per thread, as they once were, the
//! two handshakes' moments went into one record, and only the socket
//! opened last had its close read.

use std::sync::Arc;
use std::time::{Duration, Instant};

use curl::easy::Easy2;
use curl::multi::Multi;

use super::*;
use crate::calibrate::FloorServer;

/// A handle on our collector for the server on `port`, set up as
/// `ProbeHandle` sets up a cold probe's (the parts these tests read), its
/// closes reported to `watch`.
fn handle(port: u16, watch: &Arc<CloseWatch>) -> Easy2<Collector> {
    let mut easy = Easy2::new(Collector::new(Cancel::new(), None));
    easy.get_mut().close_watch = Arc::clone(watch);
    easy.get_mut().live = LiveHandle::of(&easy);
    // SAFETY: every test here holds `watch` until after the multi handle
    // that runs the transfer (and with it every connection) is gone.
    unsafe { curl_ffi::read_tcp_info_at_close(&mut easy, Arc::as_ptr(watch)).unwrap() };
    easy.url(&format!("https://127.0.0.1:{port}/")).unwrap();
    // The server's certificate is made at its start: not the point here.
    easy.ssl_verify_peer(false).unwrap();
    easy.ssl_verify_host(false).unwrap();
    easy.forbid_reuse(true).unwrap();
    // Full handshakes alike, none resumed from the one before.
    easy.ssl_sessionid_cache(false).unwrap();
    easy.timeout(Duration::from_secs(10)).unwrap();
    easy
}

/// Runs the transfers of `easies` together on `multi` to their ends, then
/// lets their connections close (10 s at most in all).
fn run_together(
    multi: &Multi,
    easies: Vec<Easy2<Collector>>,
    watch: &CloseWatch,
) -> Vec<Easy2<Collector>> {
    let added: Vec<_> = easies.into_iter().map(|e| multi.add2(e).unwrap()).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while multi.perform().unwrap() > 0 && Instant::now() < deadline {
        multi.wait(&mut [], Duration::from_millis(50)).unwrap();
    }
    let done: Vec<_> = added
        .into_iter()
        .map(|h| multi.remove2(h).unwrap())
        .collect();
    while watch.open_socket().is_some() && Instant::now() < deadline {
        multi.perform().unwrap();
        multi.wait(&mut [], Duration::from_millis(50)).unwrap();
    }
    done
}

#[test]
fn two_transfers_on_one_thread_keep_their_own_stamps_and_sockets() {
    let server = FloorServer::start().unwrap();
    let watch = Arc::new(CloseWatch::new());
    let multi = Multi::new();
    // One alone first: what a handshake and its response leave.
    let alone = run_together(&multi, vec![handle(server.port(), &watch)], &watch);
    let alone = alone[0].get_ref();
    assert!(alone.body_bytes() > 0, "the server answered");
    let server_bytes = alone.stamps.shape().unwrap().messages.server_record_bytes;
    let cert_bytes = alone.stamps.shape().unwrap().messages.cert_bytes;
    assert!(cert_bytes.is_some() && server_bytes > 0);
    // Two at once, their callbacks interleaved on this thread.
    let both = run_together(
        &multi,
        vec![handle(server.port(), &watch), handle(server.port(), &watch)],
        &watch,
    );
    let mut hellos = Vec::new();
    let mut sockets = Vec::new();
    for easy in &both {
        let c = easy.get_ref();
        assert!(c.body_bytes() > 0, "each was answered");
        // Its own handshake's bytes (a signature's length varies by a few).
        let bytes = c.stamps.shape().unwrap().messages.server_record_bytes;
        assert!(
            bytes.abs_diff(server_bytes) < 64,
            "{bytes} bytes, alone {server_bytes}"
        );
        let shape = c.stamps.shape().expect("each saw its own ClientHello");
        assert_eq!(
            shape.messages.cert_bytes, cert_bytes,
            "each its own certificate"
        );
        assert!(shape.messages.server_finished && !shape.messages.malformed);
        assert!(
            shape.kernel.is_some(),
            "each read its own socket's TCP_INFO"
        );
        hellos.push(c.stamps.client_hello_sent_us().unwrap());
        assert!(c.tcp_at_close().is_some(), "each socket's close was read");
        sockets.push(c.opened_socket.unwrap());
    }
    assert_ne!(sockets[0], sockets[1]);
    // Each its own ClientHello (building one takes far more than the
    // microsecond the stamps count in); one record per thread gave both the
    // first one's.
    assert_ne!(
        hellos[0], hellos[1],
        "each transfer's ClientHello is its own"
    );
    drop(both);
    drop(multi);
    drop(watch);
}

//! The libcurl multi handle a cold runner's transfers run on.
//!
//! Every cold probe still gets a brand-new easy handle and a brand-new
//! connection, closed after its one transfer. What the multi handle keeps
//! from one probe to the next is the TLS session cache (so round 2 on can
//! resume) and the graceful close of the previous connection, which matters
//! for resumption: a TLS 1.3 server sends its session tickets once it has our
//! Finished, and when it answers early data it answers before that, so the
//! tickets arrive after the response. A connection dropped as soon as the
//! response is in never reads them, and each full handshake's tickets run
//! out after two resumptions. libcurl closes a connection by sending
//! close_notify and reading until the server closes too; any ticket it reads
//! on the way goes into the multi's session cache. `settle` gives it the time
//! for that between probes, and `finish_close` makes sure nothing of it is
//! left when the next cold probe's clock starts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use curl::multi::Multi;

use super::cancel::Cancel;
use super::curl_ffi::{self, CloseWatch};
use super::handle::ProbeHandle;

/// How long past two round trips after its probe a connection may take to
/// close before we end it ourselves (a server that never answers
/// close_notify), and the longest we wait for that in any case.
const CLOSE_MARGIN: Duration = Duration::from_millis(20);
const CLOSE_MAX: Duration = Duration::from_secs(1);
/// The round trip assumed for a connection the kernel gave no RTT for.
const UNKNOWN_RTT: Duration = Duration::from_millis(100);

/// How often a wait for a close looks at the interrupt flag.
const POLL_SLICE: Duration = Duration::from_millis(50);

pub struct ColdDriver {
    // Declared before `watch`: fields drop in order, and cleaning up the
    // multi closes whatever connection is left, which reports to `watch`.
    multi: Multi,
    watch: Arc<CloseWatch>,
    /// When the last probe's close should be over: its session tickets and
    /// the server's close come about one round trip after the response.
    close_due: std::cell::Cell<Option<Instant>>,
}

impl ColdDriver {
    pub fn new() -> ColdDriver {
        ColdDriver {
            multi: Multi::new(),
            watch: Arc::new(CloseWatch::new()),
            close_due: std::cell::Cell::new(None),
        }
    }

    /// The watch every cold handle of this runner reports its closes to.
    pub fn watch(&self) -> &Arc<CloseWatch> {
        &self.watch
    }

    /// Runs the probe's transfer; its connection's close goes on afterwards.
    pub fn perform(&self, handle: &mut ProbeHandle) -> (Result<(), curl::Error>, Instant) {
        handle.perform_on(&self.multi)
    }

    /// The probe just run saw this round trip (`None`: the kernel said
    /// nothing): its close is due two of them from now, and a margin.
    pub fn closing_after(&self, rtt: Option<Duration>) {
        let rtt = rtt.unwrap_or(UNKNOWN_RTT);
        let due = Instant::now() + (rtt * 2 + CLOSE_MARGIN).min(CLOSE_MAX);
        self.close_due.set(Some(due));
    }

    /// Whether the last probe's connection is still closing.
    pub fn closing(&self) -> bool {
        self.watch.open_socket().is_some()
    }

    /// Lets libcurl go on closing the last probe's connection until it is
    /// closed, `until` comes, or the run is interrupted. Outside every timed
    /// interval: the scheduler calls this while it waits between probes.
    pub fn settle(&self, until: Instant, cancel: &Cancel) {
        while self.closing() && !cancel.is_canceled() {
            // Only libcurl's close and OpenSSL's callbacks run here, none
            // that keeps a panic (those are a handle's, `curl_ffi::guarded`).
            let performed = self.multi.perform();
            if performed.is_err() {
                return;
            }
            let now = Instant::now();
            if !self.closing() || now >= until {
                return;
            }
            let _ = self.multi.wait(&mut [], (until - now).min(POLL_SLICE));
        }
    }

    /// Before the next cold probe's clock starts: whatever is left of the
    /// previous close is finished now, so none of it runs inside a timed
    /// interval. It gets until it is due (see `closing_after`), then we hang
    /// up the connection ourselves and let libcurl see it end.
    pub fn finish_close(&self, cancel: &Cancel) {
        if !self.closing() {
            return;
        }
        let now = Instant::now();
        if let Some(due) = self.close_due.take().filter(|&due| due > now) {
            self.settle(due.min(now + CLOSE_MAX), cancel);
        }
        if let Some(sock) = self.watch.open_socket() {
            // SAFETY: the watch reports `sock` still open, and only libcurl,
            // on this thread, closes it (reporting to the watch when it does).
            unsafe { curl_ffi::hang_up(sock) };
            // libcurl reads the end at once; nothing to wait for.
            let _ = self.multi.perform();
        }
    }
}

impl Default for ColdDriver {
    fn default() -> ColdDriver {
        ColdDriver::new()
    }
}

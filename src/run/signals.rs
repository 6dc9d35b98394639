//! Ctrl+C, SIGTERM and SIGHUP: the first stops the run at the next
//! boundary (its output is still printed), a second leaves at once. No wait
//! outlives the first by more than `GRACE`: stdout that nobody reads, or a
//! push that hangs, cannot keep a stopped run alive.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::probe::Cancel;

/// How long a run stopped by a signal may take to write what it has and
/// push it (the push's own timeout) before it leaves all the same, with
/// that signal's exit code.
pub const GRACE: Duration = Duration::from_secs(5);

/// Every SIGINT, SIGTERM and SIGHUP that came, of any kind.
static SEEN: AtomicU32 = AtomicU32::new(0);

/// How many signals have come so far (a step that began at one count and
/// sees a larger one was interrupted).
pub(super) fn seen() -> u32 {
    SEEN.load(Ordering::SeqCst)
}

/// Counts a signal; the first arms the watchdog that ends the process
/// `GRACE` later with `code`, if it has not ended by then.
fn count(code: u8) -> u32 {
    let before = SEEN.fetch_add(1, Ordering::SeqCst);
    if before == 0 {
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            leave_now(code);
        });
    }
    before
}

/// First Ctrl+C: stop at the next boundary (or abort the transfer in flight).
/// Second: leave at once (130). SIGTERM and SIGHUP stop the run the same way,
/// and the run then exits 128 + the signal's number (143, 129) after printing
/// what it has; a second one leaves at once with that code. Returns the
/// terminating signal, once one came.
pub(super) fn install_interrupt(cancel: &Cancel) -> std::sync::Arc<std::sync::atomic::AtomicI32> {
    use std::sync::atomic::AtomicI32;
    let on_int = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        let code = crate::exit::signal_code(libc::SIGINT);
        if count(code) >= 1 {
            leave_now(code);
        }
        on_int.cancel();
    });
    let terminated = std::sync::Arc::new(AtomicI32::new(0));
    let seen = terminated.clone();
    let on_term = cancel.clone();
    use signal_hook::consts::{SIGHUP, SIGTERM};
    // A signal the parent set to be ignored (`nohup` does that to SIGHUP)
    // stays ignored: registering a handler would undo what was asked.
    let wanted: Vec<i32> = [SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| !ignored(s))
        .collect();
    if let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) {
        std::thread::spawn(move || {
            for signal in signals.forever() {
                let code = crate::exit::signal_code(signal);
                let earlier = count(code);
                seen.store(signal, Ordering::SeqCst);
                if earlier >= 1 {
                    leave_now(code);
                }
                on_term.cancel();
            }
        });
    }
    terminated
}

/// Whether `signal` is set to be ignored, as inherited from the parent.
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into `old`, a zeroed plain struct we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Leaves at once (a second interrupt): no exit handlers, which could run
/// OpenSSL's clean-up while the main thread is still inside libcurl.
fn leave_now(code: u8) -> ! {
    // SAFETY: _exit(2) ends the process without touching any of its state.
    unsafe { libc::_exit(i32::from(code)) }
}

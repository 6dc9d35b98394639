//! Ctrl+C (SIGINT), SIGTERM and SIGHUP, from one source (signal-hook,
//! which says which signal came): the first stops the run at the next
//! boundary (its output is still written), a second leaves at once. One
//! question for the rest of the run: has a signal come, and which
//! (`first`, `terminated`). No wait outlives the first by more than
//! `GRACE`: stdout that nobody reads, or a push that hangs, cannot keep a
//! stopped run alive, and the waits of the run's ending give up before
//! then (`deadline`), so the files and the push are done first.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::probe::Cancel;

/// How long a run stopped by a signal may take to write what it has and
/// push it before it leaves all the same, with that signal's exit code.
pub const GRACE: Duration = Duration::from_secs(5);

/// What `GRACE` keeps back for the ending's last steps (the files, the
/// words on stderr) after a wait that `deadline` cut short.
const LAST_STEPS: Duration = Duration::from_secs(1);

/// Every SIGINT, SIGTERM and SIGHUP that came, of any kind.
static SEEN: AtomicU32 = AtomicU32::new(0);
/// The first signal's number, 0 until one came.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// The first SIGTERM or SIGHUP's number, 0 until one came.
static TERMINATED: AtomicI32 = AtomicI32::new(0);
/// When the first signal came.
static FIRST_AT: OnceLock<Instant> = OnceLock::new();

/// How many signals have come so far (a step that began at one count and
/// sees a larger one was interrupted).
pub(super) fn seen() -> u32 {
    SEEN.load(Ordering::SeqCst)
}

/// The first signal that came (SIGINT, SIGTERM or SIGHUP), if one did.
pub(super) fn first() -> Option<i32> {
    Some(FIRST.load(Ordering::SeqCst)).filter(|&n| n != 0)
}

/// The first SIGTERM or SIGHUP that came, if one did: the run then exits
/// with its code, whatever else happened.
pub(super) fn terminated() -> Option<i32> {
    Some(TERMINATED.load(Ordering::SeqCst)).filter(|&n| n != 0)
}

/// When the first signal came, if one did.
pub(super) fn first_at() -> Option<Instant> {
    FIRST_AT.get().copied()
}

/// How long after the first signal the waits of the run's ending give up:
/// early enough in `GRACE` for what comes after them.
pub(super) const DEADLINE_AFTER: Duration = GRACE.saturating_sub(LAST_STEPS);

/// When a wait of the run's ending must give up, once a signal came.
pub(super) fn deadline() -> Option<Instant> {
    FIRST_AT.get().map(|at| *at + DEADLINE_AFTER)
}

/// Whether a wait that began when `before` signals had come must end now:
/// a signal came meanwhile, or the ending's `deadline` passed.
pub(super) fn cuts_short(before: u32) -> bool {
    seen() > before || deadline().is_some_and(|d| Instant::now() >= d)
}

/// Counts `signal`; the first arms the watchdog that ends the process
/// `GRACE` later with its code, if it has not ended by then. Returns how
/// many came before it.
fn count(signal: i32) -> u32 {
    let before = SEEN.fetch_add(1, Ordering::SeqCst);
    if before == 0 {
        let _ = FIRST_AT.set(Instant::now());
        FIRST.store(signal, Ordering::SeqCst);
        let code = crate::exit::signal_code(signal);
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            leave_now(code);
        });
    }
    if signal != libc::SIGINT {
        let _ = TERMINATED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }
    before
}

/// First Ctrl+C: stop at the next boundary (or abort the transfer in
/// flight); the run then exits with the code its samples earn. SIGTERM and
/// SIGHUP stop the run the same way, and the run then exits 128 + the
/// signal's number (143, 129) after writing what it has. A second signal
/// of any kind leaves at once with its own code (130 for Ctrl+C).
pub(super) fn install(cancel: &Cancel) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // A SIGTERM or SIGHUP the parent set to be ignored (`nohup` does that
    // to SIGHUP) stays ignored: registering a handler would undo what was
    // asked. Ctrl+C is always taken, as it always was.
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| s == SIGINT || !ignored(s))
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) else {
        return;
    };
    let cancel = cancel.clone();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if count(signal) >= 1 {
                leave_now(crate::exit::signal_code(signal));
            }
            cancel.cancel();
        }
    });
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

/// Leaves at once (a second signal, or the end of `GRACE`): no exit
/// handlers, which could run OpenSSL's clean-up while the main thread is
/// still inside libcurl.
pub(super) fn leave_now(code: u8) -> ! {
    // SAFETY: _exit(2) ends the process without touching any of its state.
    unsafe { libc::_exit(i32::from(code)) }
}

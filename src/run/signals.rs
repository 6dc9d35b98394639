//! Ctrl+C (SIGINT), SIGTERM and SIGHUP, from one source (signal-hook,
//! which says which signal came): the first stops the run at the next
//! boundary (its output is still written), a second leaves at once. What
//! came is one record (`CAME`), and every part of the run asks it the one
//! question, has a signal come and which (`came`); the probes' `Cancel`
//! is a view of the same record, not a flag of its own (`install`). No
//! wait outlives the first signal by more than `GRACE`: stdout that nobody
//! reads, or a push that hangs, cannot keep a stopped run alive, and the
//! waits of the run's ending give up before then (`Came::deadline`), so
//! the files and the push are done first.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::probe::Cancel;

/// How long a run stopped by a signal may take to write what it has and
/// push it before it leaves all the same, with that signal's exit code.
pub const GRACE: Duration = Duration::from_secs(5);

/// What `GRACE` keeps back for the ending's last steps (the files, the
/// words on stderr) after a wait that `deadline` cut short.
const LAST_STEPS: Duration = Duration::from_secs(1);

/// How long after the first signal the waits of the run's ending give up:
/// early enough in `GRACE` for what comes after them.
pub(super) const DEADLINE_AFTER: Duration = GRACE.saturating_sub(LAST_STEPS);

/// Every signal that came, in one word, so that one load answers: how
/// many came (the low 32 bits), the first one's number (the next 8) and
/// the first SIGTERM or SIGHUP's (the 8 after); 0 until one came. Only
/// the signal thread writes it.
static CAME: AtomicU64 = AtomicU64::new(0);

/// When the first signal came: set before `CAME` counts it, so that
/// whoever sees a signal sees when it came.
static FIRST_AT: OnceLock<Instant> = OnceLock::new();

/// The signals that came, as one answer read at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Came {
    /// How many came, of any kind.
    count: u32,
    /// The first one, 0 until one came.
    first: u8,
    /// The first SIGTERM or SIGHUP, 0 until one came.
    terminated: u8,
}

impl Came {
    fn unpack(word: u64) -> Came {
        Came {
            count: word as u32,
            first: (word >> 32) as u8,
            terminated: (word >> 40) as u8,
        }
    }

    fn pack(self) -> u64 {
        u64::from(self.count) | u64::from(self.first) << 32 | u64::from(self.terminated) << 40
    }

    /// What has come once `signal` came too.
    fn and(self, signal: i32) -> Came {
        let number = u8::try_from(signal).unwrap_or(u8::MAX);
        let ends = signal != libc::SIGINT;
        Came {
            count: self.count.saturating_add(1),
            first: if self.first == 0 { number } else { self.first },
            terminated: if self.terminated == 0 && ends {
                number
            } else {
                self.terminated
            },
        }
    }

    /// The first signal that came (SIGINT, SIGTERM or SIGHUP), if one did.
    pub(super) fn first(self) -> Option<i32> {
        (self.first != 0).then_some(i32::from(self.first))
    }

    /// The signal whose code the run exits with: a SIGTERM or SIGHUP
    /// whenever it came, whatever else happened; the first of any kind
    /// when it cut the run short where no verdict could be reached (`cut`:
    /// before round 1, or in a wait of the run's ending).
    pub(super) fn deciding(self, cut: bool) -> Option<i32> {
        let terminated = (self.terminated != 0).then_some(i32::from(self.terminated));
        terminated.or(self.first().filter(|_| cut))
    }

    /// When the waits of the run's ending must give up, once a signal came.
    pub(super) fn deadline(self) -> Option<Instant> {
        self.at().map(|at| at + DEADLINE_AFTER)
    }

    /// When the first signal came, if one did.
    pub(super) fn at(self) -> Option<Instant> {
        self.first().and(FIRST_AT.get().copied())
    }

    /// Whether a wait that began when `before` had come must end now: a
    /// signal came meanwhile, or the ending's deadline passed.
    pub(super) fn cuts_short(self, before: Came) -> bool {
        self.count > before.count || self.deadline().is_some_and(|d| Instant::now() >= d)
    }

    /// Whether a signal came after `before`.
    pub(super) fn since(self, before: Came) -> bool {
        self.count > before.count
    }
}

/// What has come so far: the one question every part of the run asks.
pub(super) fn came() -> Came {
    Came::unpack(CAME.load(Ordering::SeqCst))
}

/// Records `signal`; the first arms the watchdog that ends the process
/// `GRACE` later with its code, if it has not ended by then. Returns what
/// had come before it.
fn record(signal: i32) -> Came {
    let before = came();
    if before.count == 0 {
        let _ = FIRST_AT.set(Instant::now());
        let code = crate::exit::signal_code(signal);
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            leave_now(code);
        });
    }
    // Only this thread writes: no other update can come between.
    CAME.store(before.and(signal).pack(), Ordering::SeqCst);
    before
}

/// Whether the run was asked to stop: the probes' view of `came`.
fn stopped() -> bool {
    came().count > 0
}

/// First Ctrl+C: stop at the next boundary (or abort the transfer in
/// flight); the run then exits with the code its samples earn. SIGTERM and
/// SIGHUP stop the run the same way, and the run then exits 128 + the
/// signal's number (143, 129) after writing what it has. A second signal
/// of any kind leaves at once with its own code (130 for Ctrl+C). Returns
/// the probes' `Cancel`: a view of what came, whose waits wake when a
/// signal comes.
pub(super) fn install() -> Cancel {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let cancel = Cancel::viewing(stopped);
    // A SIGTERM or SIGHUP the parent set to be ignored (`nohup` does that
    // to SIGHUP) stays ignored: registering a handler would undo what was
    // asked. Ctrl+C is always taken, as it always was.
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| s == SIGINT || !ignored(s))
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) else {
        return cancel;
    };
    let waits = cancel.clone();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if record(signal).count >= 1 {
                leave_now(crate::exit::signal_code(signal));
            }
            waits.cancel();
        }
    });
    cancel
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_came_is_one_word_read_whole() {
        let none = Came::default();
        assert_eq!(none.first(), None);
        assert_eq!(none.deciding(true), None);
        let int = none.and(libc::SIGINT);
        assert_eq!(int.first(), Some(libc::SIGINT));
        assert_eq!(int.deciding(false), None, "Ctrl+C leaves the verdict");
        assert_eq!(
            int.deciding(true),
            Some(libc::SIGINT),
            "unless it cut the run short"
        );
        let then_term = int.and(libc::SIGTERM);
        assert_eq!(then_term.first(), Some(libc::SIGINT));
        assert_eq!(then_term.deciding(false), Some(libc::SIGTERM));
        let hup = none.and(libc::SIGHUP).and(libc::SIGTERM);
        assert_eq!(
            hup.deciding(false),
            Some(libc::SIGHUP),
            "the first that ends it"
        );
        for came in [none, int, then_term, hup] {
            assert_eq!(Came::unpack(came.pack()), came);
        }
        assert!(then_term.since(int) && !int.since(int));
    }
}

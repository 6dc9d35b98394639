//! The run's interrupt, as every probe and every wait between them sees
//! it: whether to stop, and a way to wake the waits when it is time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Whether the run must stop; probes in flight abort at libcurl's next
/// progress check, and sleeps between them wake. A run stopped by its
/// signals reads their record through a view (`Cancel::viewing`), so
/// there is one fact, not a flag beside it; a `Cancel` of its own
/// (`Cancel::new`) holds a flag that `cancel` sets.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    stop: Stop,
    lock: std::sync::Mutex<()>,
    wake: std::sync::Condvar,
}

/// Where a `Cancel` reads whether to stop.
#[derive(Debug)]
enum Stop {
    /// A flag of its own, set by `cancel`.
    Own(AtomicBool),
    /// A record kept elsewhere (the run's signals), read as it is now.
    Viewing(fn() -> bool),
}

impl Default for Stop {
    fn default() -> Stop {
        Stop::Own(AtomicBool::new(false))
    }
}

impl Cancel {
    /// A `Cancel` with a flag of its own, not yet set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// A view of a record kept elsewhere: `stopped` says whether the run
    /// must stop; whoever sets that record calls `cancel` to wake the waits.
    pub fn viewing(stopped: fn() -> bool) -> Cancel {
        Cancel(Arc::new(CancelState {
            stop: Stop::Viewing(stopped),
            lock: std::sync::Mutex::new(()),
            wake: std::sync::Condvar::new(),
        }))
    }

    /// Stops the run (sets the flag of a `Cancel` of its own; a view's
    /// record is set by its keeper) and wakes every wait.
    pub fn cancel(&self) {
        if let Stop::Own(flag) = &self.0.stop {
            flag.store(true, Ordering::SeqCst);
        }
        // Taking the lock orders this wake-up after a sleeper's flag check.
        let _guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.0.wake.notify_all();
    }

    pub fn is_canceled(&self) -> bool {
        match &self.0.stop {
            Stop::Own(flag) => flag.load(Ordering::Relaxed),
            Stop::Viewing(stopped) => stopped(),
        }
    }

    /// Sleeps until `until`; wakes at once on cancel. `true` if the time came.
    pub fn sleep_until(&self, until: Instant) -> bool {
        let mut guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.is_canceled() {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            guard = match self.0.wake.wait_timeout(guard, until - now) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    static RECORD: AtomicBool = AtomicBool::new(false);

    fn recorded() -> bool {
        RECORD.load(Ordering::SeqCst)
    }

    #[test]
    fn a_view_reads_its_record_and_its_cancel_only_wakes() {
        let view = Cancel::viewing(recorded);
        view.cancel();
        assert!(!view.is_canceled(), "a view has no flag to set");
        let sleeper = view.clone();
        let slept = std::thread::spawn(move || {
            sleeper.sleep_until(Instant::now() + Duration::from_secs(10))
        });
        std::thread::sleep(Duration::from_millis(50));
        RECORD.store(true, Ordering::SeqCst);
        view.cancel();
        assert!(!slept.join().unwrap(), "woken before its time");
        assert!(view.is_canceled());
        let own = Cancel::new();
        assert!(!own.is_canceled());
        own.cancel();
        assert!(own.is_canceled());
    }
}

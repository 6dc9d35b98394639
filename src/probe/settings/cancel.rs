//! The run's interrupt flag, shared by every probe and every wait between them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Set from the Ctrl+C handler; probes in flight abort at libcurl's next progress check.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    flag: AtomicBool,
    lock: std::sync::Mutex<()>,
    wake: std::sync::Condvar,
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    pub fn cancel(&self) {
        self.0.flag.store(true, Ordering::SeqCst);
        // Taking the lock orders this wake-up after a sleeper's flag check.
        let _guard = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.0.wake.notify_all();
    }

    pub fn is_canceled(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed)
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

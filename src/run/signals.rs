//! Ctrl+C, SIGTERM and SIGHUP: the first stops the run at the next
//! boundary (its output is still printed), a second leaves at once.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::probe::Cancel;

/// First Ctrl+C: stop at the next boundary (or abort the transfer in flight).
/// Second: leave at once (130). SIGTERM and SIGHUP stop the run the same way,
/// and the run then exits 128 + the signal's number (143, 129) after printing
/// what it has; a second one leaves at once with that code. Returns the
/// terminating signal, once one came.
pub(super) fn install_interrupt(cancel: &Cancel) -> std::sync::Arc<std::sync::atomic::AtomicI32> {
    use std::sync::atomic::AtomicI32;
    static PRESSES: AtomicU32 = AtomicU32::new(0);
    let on_int = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
            leave_now(crate::exit::signal_code(libc::SIGINT));
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
                if seen.swap(signal, Ordering::SeqCst) != 0 {
                    leave_now(crate::exit::signal_code(signal));
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

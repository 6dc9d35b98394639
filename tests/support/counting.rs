//! A global allocator that counts the bytes held and the most ever held,
//! for the memory test and the growth benchmark (each installs it with
//! `#[global_allocator]`). Included by path; not part of the library.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this `layout`.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

/// Bytes held now.
pub fn held() -> usize {
    CURRENT.load(Ordering::SeqCst)
}

/// Starts a new peak from what is held now.
pub fn reset_peak() {
    PEAK.store(held(), Ordering::SeqCst);
}

/// The most held since the last `reset_peak`.
pub fn peak() -> usize {
    PEAK.load(Ordering::SeqCst)
}

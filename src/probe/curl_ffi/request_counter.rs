//! libcurl's pre-request callback, counting the requests a transfer sends.

use std::os::raw::c_void;

use curl::easy::Easy2;

use super::setopt::{setopt, CURLOPT_PREREQDATA, CURLOPT_PREREQFUNCTION};

// curl.h (7.80+): the pre-request callback's "go on" answer.
const CURL_PREREQFUNC_OK: std::os::raw::c_int = 0;

extern "C" fn count_request(
    clientp: *mut c_void,
    _primary_ip: *mut std::os::raw::c_char,
    _local_ip: *mut std::os::raw::c_char,
    _primary_port: std::os::raw::c_int,
    _local_port: std::os::raw::c_int,
) -> std::os::raw::c_int {
    // SAFETY: `clientp` is the `AtomicU32` registered in `count_requests`,
    // alive whenever libcurl calls us (that function's contract).
    let counter = unsafe { &*(clientp as *const std::sync::atomic::AtomicU32) };
    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CURL_PREREQFUNC_OK
}

/// Has libcurl add one to `counter` for every request it is about to send.
/// One `perform` sending two means libcurl retried on a new connection after
/// the kept one died under the first.
///
/// # Safety
/// libcurl keeps the pointer: `counter` must stay at its address, alive, for
/// as long as `easy` exists (`ProbeHandle` holds a reference to the shared
/// counter and drops it only after the easy handle).
pub unsafe fn count_requests<H>(
    easy: &Easy2<H>,
    counter: *const std::sync::atomic::AtomicU32,
) -> Result<(), curl::Error> {
    let cb: extern "C" fn(
        *mut c_void,
        *mut std::os::raw::c_char,
        *mut std::os::raw::c_char,
        std::os::raw::c_int,
        std::os::raw::c_int,
    ) -> std::os::raw::c_int = count_request;
    // SAFETY: the callback has libcurl's prototype (curl_prereq_callback)
    // and the data pointer outlives the handle (above).
    unsafe {
        setopt(easy, CURLOPT_PREREQFUNCTION, cb as *const c_void)?;
        setopt(easy, CURLOPT_PREREQDATA, counter.cast())
    }
}

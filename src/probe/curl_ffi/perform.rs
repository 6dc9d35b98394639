//! Running a transfer on a multi handle, and keeping a panic in one of our
//! callbacks from unwinding into libcurl: it is raised again once libcurl
//! has returned, on the easy path (`raise_caught` after `Easy2::perform`)
//! and the multi path (`perform_on`) alike.

use curl::easy::Easy2;

/// How long one wait for the sockets lasts at most: how soon `stop` is
/// asked again while nothing happens.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Runs the transfer of `easy` to its end on `multi` and takes it off the
/// multi again, whatever the outcome. The multi's own connections in a
/// graceful close advance meanwhile, as in any `curl_multi_perform`.
/// `stop` is asked between waits (every `STOP_POLL` at the latest): `true`
/// abandons the transfer as a callback's abort would (libcurl calls no
/// progress callback before a connection is up, so a TCP or TLS handshake
/// that hangs would otherwise hold the run until its timeout).
pub fn perform_on<H>(
    multi: &curl::multi::Multi,
    easy: &Easy2<H>,
    stop: &dyn Fn() -> bool,
) -> Result<(), curl::Error> {
    perform_polling(multi, easy, stop, STOP_POLL)
}

/// `perform_on`, asking `stop` every `poll` at the latest.
pub fn perform_polling<H>(
    multi: &curl::multi::Multi,
    easy: &Easy2<H>,
    stop: &dyn Fn() -> bool,
    poll: std::time::Duration,
) -> Result<(), curl::Error> {
    // SAFETY: both handles are live for this whole call, and the easy handle
    // is removed from the multi below before we return, so the multi never
    // refers to it past this borrow.
    let rc = unsafe { curl_sys::curl_multi_add_handle(multi.raw(), easy.raw()) };
    if rc != curl_sys::CURLM_OK {
        return Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
    }
    let result = loop {
        if multi.perform().is_err() {
            break Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
        }
        // Only this transfer is on the multi: a finished one is ours.
        let mut done = None;
        multi.messages(|m| {
            if let Some(r) = m.result() {
                done = Some(r);
            }
        });
        if let Some(r) = done {
            // libcurl's own words for a failure (its error buffer), as
            // `Easy2::perform` attaches them.
            break r.map_err(|mut e| {
                if let Some(text) = easy.take_error_buf() {
                    e.set_extra(text);
                }
                e
            });
        }
        if stop() {
            break Err(curl::Error::new(curl_sys::CURLE_ABORTED_BY_CALLBACK));
        }
        // libcurl shortens the wait to its own next timeout.
        if multi.wait(&mut [], poll).is_err() {
            break Err(curl::Error::new(curl_sys::CURLE_FAILED_INIT));
        }
    };
    // SAFETY: as above; removing a handle that finished is always allowed.
    unsafe { curl_sys::curl_multi_remove_handle(multi.raw(), easy.raw()) };
    raise_caught();
    result
}

thread_local! {
    /// A panic `guarded` caught in a callback, until `raise_caught` raises it.
    static CAUGHT: std::cell::RefCell<Option<Box<dyn std::any::Any + Send>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs the body of one of our libcurl callbacks. A panic in it must not
/// unwind into C: it is kept, libcurl is given `aborted` (which ends the
/// transfer), and every later callback on this thread gets `aborted`
/// without running until `raise_caught` raises it, once libcurl has
/// returned. The curl crate does the same, but only `Easy2::perform`
/// raises what it kept; the multi interface the cold probes run on never
/// does, and a bug would pass for a failed probe.
pub fn guarded<T>(aborted: T, body: impl FnOnce() -> T) -> T {
    if CAUGHT.with(|c| c.borrow().is_some()) {
        return aborted;
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            CAUGHT.with(|c| *c.borrow_mut() = Some(payload));
            aborted
        }
    }
}

/// Raises the panic a callback of the transfer that just returned kept, if any.
pub fn raise_caught() {
    if let Some(payload) = CAUGHT.with(|c| c.borrow_mut().take()) {
        std::panic::resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A handler whose body callback panics, as a bug in ours would.
    struct Panics;

    impl curl::easy::Handler for Panics {
        fn write(&mut self, _: &[u8]) -> Result<usize, curl::easy::WriteError> {
            guarded(Ok(0), || panic!("a bug in a transfer callback"))
        }
    }

    /// One plain HTTP answer with a body, on a loopback port, for one
    /// connection (bounded: the thread ends after it, or after 5 s).
    fn one_answer() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let mut request = [0u8; 1024];
            let _ = conn.read(&mut request);
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        });
        port
    }

    #[test]
    fn a_panic_in_a_callback_of_a_multi_transfer_is_raised_again() {
        let port = one_answer();
        let multi = curl::multi::Multi::new();
        let mut easy = Easy2::new(Panics);
        easy.url(&format!("http://127.0.0.1:{port}/")).unwrap();
        easy.timeout(std::time::Duration::from_secs(5)).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            perform_on(&multi, &easy, &|| false)
        }));
        let payload = caught.expect_err("the panic was swallowed into a failed transfer");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"a bug in a transfer callback")
        );
        // Nothing is left stored to poison the next transfer on this thread.
        let port = one_answer();
        let mut next = Easy2::new(Collect(Vec::new()));
        next.url(&format!("http://127.0.0.1:{port}/")).unwrap();
        next.timeout(std::time::Duration::from_secs(5)).unwrap();
        perform_on(&multi, &next, &|| false).unwrap();
        assert_eq!(next.get_ref().0, b"hello");
    }

    struct Collect(Vec<u8>);

    impl curl::easy::Handler for Collect {
        fn write(&mut self, data: &[u8]) -> Result<usize, curl::easy::WriteError> {
            self.0.extend_from_slice(data);
            Ok(data.len())
        }
    }
}

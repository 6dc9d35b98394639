//! Running a transfer on a multi handle, and keeping a panic in one of our
//! callbacks from unwinding into libcurl: the handler keeps it
//! (`CaughtPanic`) and it is raised again once libcurl has returned, on
//! the easy path (`ProbeHandle::perform`, after `Easy2::perform`) and the
//! multi path (`perform_on`) alike.
//!
//! That is what a panic does where panics unwind: in debug and test
//! builds. A release build aborts on a panic (`panic = "abort"` in
//! Cargo.toml): there `catch_unwind` never returns an error, and a panic in
//! a callback prints its message to stderr and ends the process at once
//! with SIGABRT, inside libcurl's call, without unwinding: no transfer is
//! ended, no output finished or flushed, and the exit status is 134 (128 +
//! SIGABRT) from a shell. A bug in a callback is a crash there, never a
//! failed probe.

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
/// A panic one of the handler's callbacks kept (`guarded`) is raised once
/// the transfer is off the multi.
pub fn perform_on<H: KeepsPanic>(
    multi: &curl::multi::Multi,
    easy: &mut Easy2<H>,
    stop: &dyn Fn() -> bool,
) -> Result<(), curl::Error> {
    let result = perform_polling(multi, easy, stop, STOP_POLL);
    easy.get_mut().caught_panic().raise();
    result
}

/// `perform_on`, asking `stop` every `poll` at the latest, for a handler
/// whose callbacks cannot panic (nothing is raised here).
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
    result
}

/// A panic `guarded` caught in one of a handler's callbacks, kept by the
/// handler (so by the transfer whose callback panicked) until it is raised
/// once libcurl has returned.
#[derive(Default)]
pub struct CaughtPanic(Option<Box<dyn std::any::Any + Send>>);

impl CaughtPanic {
    /// Raises the panic kept, if any, and keeps nothing.
    pub fn raise(&mut self) {
        if let Some(payload) = self.0.take() {
            std::panic::resume_unwind(payload);
        }
    }
}

/// A handler whose callbacks run through `guarded`: where it keeps a panic.
pub trait KeepsPanic {
    fn caught_panic(&mut self) -> &mut CaughtPanic;
}

/// Runs the body of one of `handler`'s libcurl callbacks. A panic in it
/// must not unwind into C: the handler keeps it, libcurl is given `aborted`
/// (which ends the transfer), and every later callback of this handler
/// gets `aborted` without running until the panic is raised
/// (`CaughtPanic::raise`), once libcurl has returned. The curl crate does
/// the same, but only `Easy2::perform` raises what it kept; the multi
/// interface the cold probes run on never does, and a bug would pass for a
/// failed probe. In a release build a panic aborts the process instead
/// (see the top of this file).
pub fn guarded<H: KeepsPanic, T>(handler: &mut H, aborted: T, body: impl FnOnce(&mut H) -> T) -> T {
    if handler.caught_panic().0.is_some() {
        return aborted;
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(handler))) {
        Ok(value) => value,
        Err(payload) => {
            handler.caught_panic().0 = Some(payload);
            aborted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A handler whose body callback panics, as a bug in ours would.
    #[derive(Default)]
    struct Panics(CaughtPanic);

    impl KeepsPanic for Panics {
        fn caught_panic(&mut self) -> &mut CaughtPanic {
            &mut self.0
        }
    }

    impl curl::easy::Handler for Panics {
        fn write(&mut self, _: &[u8]) -> Result<usize, curl::easy::WriteError> {
            guarded(self, Ok(0), |_| panic!("a bug in a transfer callback"))
        }
    }

    /// One plain HTTP answer with a body, on a loopback port, for one
    /// connection (bounded: the thread ends after it, or after 5 s).
    fn one_answer() -> u16 {
        answer_after(std::time::Duration::ZERO)
    }

    #[test]
    fn a_panic_in_a_callback_of_a_multi_transfer_is_raised_again() {
        let port = one_answer();
        let multi = curl::multi::Multi::new();
        let mut easy = Easy2::new(Panics::default());
        easy.url(&format!("http://127.0.0.1:{port}/")).unwrap();
        easy.timeout(std::time::Duration::from_secs(5)).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            perform_on(&multi, &mut easy, &|| false)
        }));
        let payload = caught.expect_err("the panic was swallowed into a failed transfer");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"a bug in a transfer callback")
        );
        assert!(easy.get_mut().0 .0.is_none(), "raised, so no longer kept");
        // Nothing is left stored to poison the next transfer on this thread.
        let port = one_answer();
        let mut next = Easy2::new(Collect::default());
        next.url(&format!("http://127.0.0.1:{port}/")).unwrap();
        next.timeout(std::time::Duration::from_secs(5)).unwrap();
        perform_on(&multi, &mut next, &|| false).unwrap();
        assert_eq!(next.get_ref().0, b"hello");
    }

    #[test]
    fn a_panic_kept_by_one_transfer_stays_with_it() {
        // Two transfers on one multi, driven together on this thread; the
        // other's answer comes after the panic. The one whose callback
        // panicked keeps the panic, and the other is neither cut short nor
        // handed it (a panic kept per thread had every later callback on the
        // thread refused, and was raised after whichever transfer ended first).
        let multi = curl::multi::Multi::new();
        let mut bad = Easy2::new(Panics::default());
        bad.url(&format!("http://127.0.0.1:{}/", one_answer()))
            .unwrap();
        let mut good = Easy2::new(Collect::default());
        let port = answer_after(std::time::Duration::from_millis(300));
        good.url(&format!("http://127.0.0.1:{port}/")).unwrap();
        for easy in [bad.raw(), good.raw()] {
            // SAFETY: both handles are live until they are removed below,
            // before they are dropped.
            let rc = unsafe { curl_sys::curl_multi_add_handle(multi.raw(), easy) };
            assert_eq!(rc, curl_sys::CURLM_OK);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while multi.perform().unwrap() > 0 && std::time::Instant::now() < deadline {
            multi
                .wait(&mut [], std::time::Duration::from_millis(100))
                .unwrap();
        }
        for easy in [bad.raw(), good.raw()] {
            // SAFETY: as above; removing a handle that finished is allowed.
            unsafe { curl_sys::curl_multi_remove_handle(multi.raw(), easy) };
        }
        assert!(good.get_mut().1 .0.is_none(), "the other kept nothing");
        assert_eq!(good.get_ref().0, b"hello", "the other ran to its end");
        let raised = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            bad.get_mut().caught_panic().raise()
        }));
        assert!(raised.is_err(), "the panicking one kept its panic");
    }

    /// As `one_answer`, the answer written `after` the request came.
    fn answer_after(after: std::time::Duration) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let mut request = [0u8; 1024];
            let _ = conn.read(&mut request);
            std::thread::sleep(after);
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        });
        port
    }

    #[derive(Default)]
    struct Collect(Vec<u8>, CaughtPanic);

    impl KeepsPanic for Collect {
        fn caught_panic(&mut self) -> &mut CaughtPanic {
            &mut self.1
        }
    }

    impl curl::easy::Handler for Collect {
        fn write(&mut self, data: &[u8]) -> Result<usize, curl::easy::WriteError> {
            guarded(self, Ok(0), |c| {
                c.0.extend_from_slice(data);
                Ok(data.len())
            })
        }
    }
}

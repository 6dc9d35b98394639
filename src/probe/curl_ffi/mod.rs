//! Every raw call into libcurl and OpenSSL, one file per job: the rest of
//! the crate calls none (no `curl_sys` or `openssl_sys` outside this module)
//! and sees only the safe functions and plain types below, and the `unsafe
//! fn`s whose contracts it keeps. Each `unsafe` block is short and says why
//! it holds. A leaf: nothing here imports from the rest of `probe`; what a
//! probe needs in its own types it builds from the plain values returned
//! here (`answers`, `live_tls`), and what OpenSSL's callbacks report goes to
//! the `HandshakeMoments` the probe hands over with each SSL_CTX, which the
//! context keeps. The lowest floor of `probe`;
//! OpenSSL's own side of the boundary is `ssl/`.

use std::ffi::CStr;

mod getinfo;
mod headers;
pub mod info;
mod live;
mod perform;
mod request_counter;
mod setopt;
mod sockets;
mod ssl;
mod url_parts;

use ssl::{handshake, ocsp_staple, trust_store, x509_text};

pub use getinfo::{first_certificate_pem, long, off_t, text, timer_us};
pub use handshake::{stamp_handshake, HandshakeMoments};
pub use headers::each_response_header;
pub use live::{group_name, LiveHandle};
pub use ocsp_staple::{request_staple, take_first_response};
pub use perform::{guarded, perform_on, perform_polling, CaughtPanic, KeepsPanic};
pub use request_counter::count_requests;
pub use setopt::{allow_early_data, multi_quick_exit, quick_exit, set_curves};
pub use sockets::{hang_up, read_tcp_info, read_tcp_info_at_close};
pub use sockets::{open_socket, CloseWatch, KernelTcp};
pub use trust_store::{clear_ca_locations, install_trust_store};
pub use url_parts::{UrlPart, UrlParts};
pub use x509_text::{extension_lines, name_one_line};

/// A socket as libcurl's callbacks pass it.
pub use curl_sys::curl_socket_t;

/// libcurl's result codes (`CURLcode`, `CURLE_*`), for telling its failures apart.
pub mod codes {
    /// A code no failure of ours maps to a kind of its own (the tests' example).
    #[cfg(test)]
    pub use curl_sys::CURLE_URL_MALFORMAT;
    pub use curl_sys::{
        CURLcode, CURLE_ABORTED_BY_CALLBACK, CURLE_BAD_CONTENT_ENCODING, CURLE_COULDNT_CONNECT,
        CURLE_COULDNT_RESOLVE_HOST, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM,
        CURLE_OPERATION_TIMEDOUT, CURLE_PARTIAL_FILE, CURLE_PEER_FAILED_VERIFICATION,
        CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM,
        CURLE_SSL_CIPHER, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND,
    };
}

/// Now on CLOCK_MONOTONIC, in microseconds: the clock libcurl's own timers
/// read (`curlx_now` with `HAVE_CLOCK_GETTIME_MONOTONIC`, as curl-sys builds
/// it), so our stamps and libcurl's timers can be placed on one time line.
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer;
    // CLOCK_MONOTONIC exists on every Linux kernel this builds for.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}

/// The CPU time this thread has used, in microseconds
/// (CLOCK_THREAD_CPUTIME_ID): the client's own work, without the time
/// another thread or process (a server on the same machine) had the CPU.
pub fn thread_cpu_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer;
    // the calling thread's CPU clock always exists.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}

/// Versions actually linked into this binary.
pub fn library_versions() -> (String, String, Option<String>) {
    let v = curl::Version::get();
    let tls = v.ssl_version().unwrap_or("none").to_string();
    let h2 = v.nghttp2_version().map(|s| s.to_string());
    (v.version().to_string(), tls, h2)
}

/// libcurl's description of itself and the libraries it uses
/// (`libcurl/8.22.0 OpenSSL/3.6.1 ...`), which ends curl's `%{json}`.
pub fn curl_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        // SAFETY: curl_version takes nothing and returns libcurl's own
        // NUL-terminated text (never freed by us), copied at once; the
        // OnceLock makes this the only call.
        let text = unsafe { curl_sys::curl_version() };
        if text.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, so a NUL-terminated string (above).
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}

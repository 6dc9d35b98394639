//! OpenSSL's callbacks that report a handshake's moments, each stamped on
//! CLOCK_MONOTONIC, to a `HandshakeMoments` (the probe's keeps the timing
//! logic, `handshake_stamps`).

use std::os::raw::{c_int, c_void};

/// What is told the moments of a handshake. OpenSSL's callbacks get no
/// pointer to our data, so these are plain functions (a recorder keeps its
/// state where it can find it, a thread-local); each is called on the
/// thread running the handshake, inside libcurl's transfer.
pub trait HandshakeMoments {
    /// A record header of ours is about to be written; the first handshake
    /// record is the ClientHello.
    fn header_written(now_us: u64, handshake_record: bool);
    /// A message of ours has been written: its content type (OpenSSL's, as
    /// the message callback gives it) and bytes, lent for the call only.
    fn message_written(now_us: u64, content_type: i32, message: &[u8]);
    /// Server data was taken up: a record header (pseudo content type
    /// 0x100) or a message, its bytes lent for the call only.
    fn server_data(now_us: u64, content_type: i32, data: &[u8]);
    /// OpenSSL handed control back to libcurl to wait for the socket (or
    /// failed, which ends the handshake anyway).
    fn waiting_for_socket(now_us: u64);
}

extern "C" {
    // libssl: the handshake-progress and message callbacks of every SSL made
    // from a context.
    fn SSL_CTX_set_info_callback(
        ctx: *mut openssl_sys::SSL_CTX,
        cb: Option<unsafe extern "C" fn(*const openssl_sys::SSL, c_int, c_int)>,
    );
    fn SSL_CTX_set_msg_callback(
        ctx: *mut openssl_sys::SSL_CTX,
        cb: Option<
            unsafe extern "C" fn(
                c_int,
                c_int,
                c_int,
                *const c_void,
                usize,
                *mut openssl_sys::SSL,
                *mut c_void,
            ),
        >,
    );
}

// ssl3.h: the message callback's pseudo content type for a record header, and
// the record type byte of a handshake record.
const SSL3_RT_HEADER: c_int = 0x100;
const SSL3_RT_HANDSHAKE_BYTE: u8 = 22;

// ssl.h: SSL_ST_CONNECT | SSL_CB_EXIT.
const SSL_CB_CONNECT_EXIT: c_int = 0x1000 | 0x02;

/// OpenSSL's message callback: our record headers (before the write), our
/// messages (after it) and the server's data, in the order they happen.
///
/// # Safety
/// Only OpenSSL calls this (`SSL_CTX_set_msg_callback`): `ssl` is the live
/// connection whose record was just handled, and `buf` holds `len` bytes
/// for the length of the call.
unsafe extern "C" fn on_tls_message<M: HandshakeMoments>(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut openssl_sys::SSL,
    _arg: *mut c_void,
) {
    // Records after the handshake (TLS 1.3 session tickets after our
    // Finished, application data) are no part of it.
    // SAFETY: OpenSSL passes the live SSL whose record was just handled.
    if unsafe { openssl_sys::SSL_is_init_finished(ssl) } == 1 {
        return;
    }
    let now = super::monotonic_us();
    let bytes: &[u8] = if buf.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: OpenSSL's contract for this callback: `buf` holds `len`
        // bytes, valid (and not written to) for the length of the call,
        // which the slice does not outlive.
        unsafe { std::slice::from_raw_parts(buf as *const u8, len) }
    };
    if write_p == 1 && content_type == SSL3_RT_HEADER {
        // The first byte of a record header is the record type.
        let handshake = bytes.first() == Some(&SSL3_RT_HANDSHAKE_BYTE);
        M::header_written(now, handshake);
    } else if write_p == 1 {
        M::message_written(now, content_type, bytes);
    } else {
        M::server_data(now, content_type, bytes);
    }
}

/// OpenSSL's info callback: an "exit" of the client's handshake with a
/// negative result means it hands control back to libcurl to wait for the
/// socket (or fails, which ends the handshake anyway). It reads none of its
/// pointers, so it is a safe function where OpenSSL expects an unsafe one.
extern "C" fn on_handshake_step<M: HandshakeMoments>(
    _ssl: *const openssl_sys::SSL,
    where_: c_int,
    ret: c_int,
) {
    if where_ & SSL_CB_CONNECT_EXIT == SSL_CB_CONNECT_EXIT && ret < 0 {
        let now = super::monotonic_us();
        M::waiting_for_socket(now);
    }
}

/// Has every connection made from this SSL_CTX report its handshake's
/// moments to `M`: when its first ClientHello leaves, and when the client
/// works on the server's replies. This takes OpenSSL's message callback,
/// which libcurl uses only for the TLS part of its verbose trace
/// (`TLSPING_CURL_VERBOSE`, a debugging aid).
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the CURLOPT_SSL_CTX_FUNCTION
/// callback now running.
pub unsafe fn stamp_handshake<M: HandshakeMoments>(ssl_ctx: *mut c_void) {
    let ctx = ssl_ctx as *mut openssl_sys::SSL_CTX;
    // SAFETY: a live SSL_CTX (the caller's contract); both callbacks are plain
    // functions that touch no data of ours but what `M` keeps for itself,
    // so they stay valid for as long as OpenSSL keeps the context.
    unsafe {
        SSL_CTX_set_info_callback(ctx, Some(on_handshake_step::<M>));
        SSL_CTX_set_msg_callback(ctx, Some(on_tls_message::<M>));
    }
}

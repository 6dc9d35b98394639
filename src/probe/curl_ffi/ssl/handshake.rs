//! OpenSSL's callbacks that report a connection's moments, each stamped on
//! CLOCK_MONOTONIC, to a `HandshakeMoments` (the probe's keeps the timing
//! logic, `handshake_stamps`): the handshake's records and waits, its end,
//! and after it the records of the request and the response, with the
//! moments data came in from libcurl's socket (a callback on the read side
//! of the connection's BIO).

use std::os::raw::{c_int, c_void};

/// What is told the moments of a connection. OpenSSL's callbacks get no
/// pointer to our data, so these are plain functions (a recorder keeps its
/// state where it can find it, a thread-local); each is called on the
/// thread running the transfer, inside libcurl's transfer.
pub trait HandshakeMoments {
    /// A record header of ours is about to be written: its record type
    /// (22 handshake, 23 application data, ...); the first handshake
    /// record is the ClientHello.
    fn header_written(now_us: u64, record_type: u8);
    /// A message of ours has been written: its content type (OpenSSL's, as
    /// the message callback gives it) and bytes, lent for the call only.
    fn message_written(now_us: u64, content_type: i32, message: &[u8]);
    /// Server data was taken up: a record header (pseudo content type
    /// 0x100) or a message, its bytes lent for the call only.
    fn server_data(now_us: u64, content_type: i32, data: &[u8]);
    /// OpenSSL handed control back to libcurl to wait for the socket (or
    /// failed, which ends the handshake anyway).
    fn waiting_for_socket(now_us: u64);
    /// The handshake is done (OpenSSL's `SSL_CB_HANDSHAKE_DONE`; a TLS 1.3
    /// session ticket read later does not report it again).
    fn handshake_done(now_us: u64);
    /// A read from libcurl's socket brought `bytes` of data in.
    fn data_read(now_us: u64, bytes: usize);
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
    // libcrypto: the callback a BIO calls around each of its operations.
    fn BIO_set_callback_ex(b: *mut openssl_sys::BIO, cb: Option<BioCallback>);
    fn BIO_get_callback_ex(b: *const openssl_sys::BIO) -> Option<BioCallback>;
}

/// `BIO_callback_fn_ex` (bio.h).
type BioCallback = unsafe extern "C" fn(
    *mut openssl_sys::BIO,
    c_int,
    *const std::os::raw::c_char,
    usize,
    c_int,
    std::os::raw::c_long,
    c_int,
    *mut usize,
) -> std::os::raw::c_long;

// bio.h: the operation codes a BIO callback is called with.
const BIO_CB_READ: c_int = 0x02;
const BIO_CB_RETURN: c_int = 0x80;

// ssl3.h: the message callback's pseudo content type for a record header, and
// the record type byte of a handshake record.
const SSL3_RT_HEADER: c_int = 0x100;
const SSL3_RT_HANDSHAKE_BYTE: u8 = 22;

// ssl.h: SSL_ST_CONNECT | SSL_CB_EXIT, and SSL_CB_HANDSHAKE_DONE.
const SSL_CB_CONNECT_EXIT: c_int = 0x1000 | 0x02;
const SSL_CB_HANDSHAKE_DONE: c_int = 0x20;

/// OpenSSL's message callback: our record headers (before the write), our
/// messages (after it) and the server's data, in the order they happen,
/// during the handshake and after it.
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
        let record_type = bytes.first().copied().unwrap_or(0);
        if record_type == SSL3_RT_HANDSHAKE_BYTE {
            // SAFETY: `ssl` is the live connection (above).
            unsafe { watch_reads::<M>(ssl) };
        }
        M::header_written(now, record_type);
    } else if write_p == 1 {
        M::message_written(now, content_type, bytes);
    } else {
        M::server_data(now, content_type, bytes);
    }
}

/// Has the read side of `ssl`'s connection (libcurl's BIO) report every
/// read that brings data in, once: a BIO that already has a callback (ours,
/// or anyone's) is left as it is.
///
/// # Safety
/// `ssl` is a live SSL (the message callback's).
unsafe fn watch_reads<M: HandshakeMoments>(ssl: *mut openssl_sys::SSL) {
    // SAFETY: a live SSL (the contract); its read BIO, when set, lives as
    // long as the SSL does.
    let bio = unsafe { openssl_sys::SSL_get_rbio(ssl) };
    if bio.is_null() {
        return;
    }
    // SAFETY: `bio` is live (above); reading and setting its callback
    // touches nothing else. Ours is a plain function that reads none of
    // its pointers but `processed`, so it stays valid as long as the BIO.
    unsafe {
        if BIO_get_callback_ex(bio).is_none() {
            BIO_set_callback_ex(bio, Some(on_bio::<M>));
        }
    }
}

/// The BIO callback: after a read (`BIO_CB_READ | BIO_CB_RETURN`) that
/// brought data in, tells `M` when and how much. Every call returns what OpenSSL passed
/// as the result, so the BIO works as it did.
///
/// # Safety
/// Only OpenSSL calls this, around an operation on a live BIO: `processed`
/// is null or points at the bytes the operation moved.
unsafe extern "C" fn on_bio<M: HandshakeMoments>(
    _bio: *mut openssl_sys::BIO,
    oper: c_int,
    _argp: *const std::os::raw::c_char,
    _len: usize,
    _argi: c_int,
    _argl: std::os::raw::c_long,
    ret: c_int,
    processed: *mut usize,
) -> std::os::raw::c_long {
    if oper == BIO_CB_READ | BIO_CB_RETURN && ret > 0 && !processed.is_null() {
        // SAFETY: non-null, so it points at the count of bytes read (the contract).
        let bytes = unsafe { *processed };
        if bytes > 0 {
            M::data_read(super::monotonic_us(), bytes);
        }
    }
    std::os::raw::c_long::from(ret)
}

/// OpenSSL's info callback: an "exit" of the client's handshake with a
/// negative result means it hands control back to libcurl to wait for the
/// socket (or fails, which ends the handshake anyway); "handshake done"
/// with the connection in its final state ends it (OpenSSL also says
/// "done" once the ClientHello of a handshake that sends early data has
/// left, which it is not).
///
/// # Safety
/// Only OpenSSL calls this (`SSL_CTX_set_info_callback`), with the live SSL
/// whose handshake moved.
unsafe extern "C" fn on_handshake_step<M: HandshakeMoments>(
    ssl: *const openssl_sys::SSL,
    where_: c_int,
    ret: c_int,
) {
    if where_ & SSL_CB_CONNECT_EXIT == SSL_CB_CONNECT_EXIT && ret < 0 {
        let now = super::monotonic_us();
        M::waiting_for_socket(now);
    } else if where_ & SSL_CB_HANDSHAKE_DONE != 0
        // SAFETY: OpenSSL passes the live SSL (the contract).
        && unsafe { openssl_sys::SSL_is_init_finished(ssl) } == 1
    {
        M::handshake_done(super::monotonic_us());
    }
}

/// Has every connection made from this SSL_CTX report its moments to `M`:
/// when its first ClientHello leaves, when the client waits and works on
/// the server's replies, when the handshake ends, and the records and
/// reads after it. This takes OpenSSL's message callback,
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

//! OpenSSL's callbacks that report a connection's moments, each stamped on
//! CLOCK_MONOTONIC, to a `HandshakeMoments` (the probe's keeps the timing
//! logic, `handshake_stamps`): the handshake's records and waits, its end,
//! and after it the records of the request and the response, with the
//! moments data came in from libcurl's socket (a callback on the read side
//! of the connection's BIO).

use std::os::raw::{c_int, c_void};
use std::sync::{Arc, OnceLock};

use foreign_types::ForeignTypeRef;
use openssl::ssl::{SslContext, SslContextBuilder, SslContextRef, SslRef};

/// What is told the moments of a connection: the recorder of the transfer
/// whose handle made the connection's SSL_CTX (`stamp_handshake`). Each is
/// called on the thread running the transfer, inside libcurl's transfer;
/// the recorder is shared with the connection's SSL_CTX, which may outlive
/// the transfer (and its handle), so it keeps its state behind `&self`.
pub trait HandshakeMoments: Send + Sync + 'static {
    /// A record header of ours is about to be written: its record type
    /// (22 handshake, 23 application data, ...); the first handshake
    /// record is the ClientHello.
    fn header_written(&self, now_us: u64, record_type: u8);
    /// A message of ours has been written: its content type (OpenSSL's, as
    /// the message callback gives it) and bytes, lent for the call only.
    fn message_written(&self, now_us: u64, content_type: i32, message: &[u8]);
    /// Server data was taken up: a record header (pseudo content type
    /// 0x100) or a message, its bytes lent for the call only.
    fn server_data(&self, now_us: u64, content_type: i32, data: &[u8]);
    /// OpenSSL handed control back to libcurl to wait for the socket (or
    /// failed, which ends the handshake anyway).
    fn waiting_for_socket(&self, now_us: u64);
    /// The handshake is done (OpenSSL's `SSL_CB_HANDSHAKE_DONE`; a TLS 1.3
    /// session ticket read later does not report it again).
    fn handshake_done(&self, now_us: u64);
    /// A read from libcurl's socket brought `bytes` of data in.
    fn data_read(&self, now_us: u64, bytes: usize);
}

/// A recorder as an SSL_CTX keeps it: a counted reference in the context's
/// own data (`ex_data`), dropped by OpenSSL's free callback for the index
/// when the context is freed, which is after every SSL made from it (each
/// holds a reference to its context until it is freed itself).
type Kept = Arc<dyn HandshakeMoments>;

/// The SSL_CTX data index our recorders are kept at, made once per process.
fn kept_index() -> Option<openssl::ex_data::Index<SslContext, Kept>> {
    static INDEX: OnceLock<Option<openssl::ex_data::Index<SslContext, Kept>>> = OnceLock::new();
    *INDEX.get_or_init(|| SslContext::new_ex_index::<Kept>().ok())
}

extern "C" {
    // libssl: the handshake-progress and message callbacks of every SSL made
    // from a context, and the pointer the message callback is given.
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
    // libcrypto: the callback a BIO calls around each of its operations,
    // and the pointer it may read.
    fn BIO_set_callback_ex(b: *mut openssl_sys::BIO, cb: Option<BioCallback>);
    fn BIO_get_callback_ex(b: *const openssl_sys::BIO) -> Option<BioCallback>;
    fn BIO_set_callback_arg(b: *mut openssl_sys::BIO, arg: *mut std::os::raw::c_char);
    fn BIO_get_callback_arg(b: *const openssl_sys::BIO) -> *mut std::os::raw::c_char;
}

/// `SSL_CTX_set_msg_callback_arg` is a macro over this control (ssl.h).
const SSL_CTRL_SET_MSG_CALLBACK_ARG: c_int = 16;

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

/// The recorder a callback's pointer names: the `Kept` in an SSL_CTX's
/// data (`stamp_handshake` hands its address to the message callback and
/// to the read side's BIO); `None` for a null pointer.
///
/// # Safety
/// `kept` is null or the address of the `Kept` of the SSL_CTX of a live
/// SSL that the callback now running belongs to (which keeps the context,
/// and so its data, alive), read for the length of the call.
unsafe fn recorder<'a>(kept: *const c_void) -> Option<&'a dyn HandshakeMoments> {
    // SAFETY: null, or a `Kept` alive for the call (the contract).
    unsafe { (kept as *const Kept).as_ref() }.map(|kept| &**kept)
}

/// OpenSSL's message callback: our record headers (before the write), our
/// messages (after it) and the server's data, in the order they happen,
/// during the handshake and after it, told to the recorder `arg` names.
///
/// # Safety
/// Only OpenSSL calls this (`SSL_CTX_set_msg_callback`): `ssl` is the live
/// connection whose record was just handled, `buf` holds `len` bytes for
/// the length of the call, and `arg` is what `stamp_handshake` set on the
/// connection's context (its `Kept`).
unsafe extern "C" fn on_tls_message(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut openssl_sys::SSL,
    arg: *mut c_void,
) {
    let now = super::monotonic_us();
    // SAFETY: `arg` is the `Kept` of `ssl`'s context, alive while `ssl` is
    // (the contract).
    let Some(moments) = (unsafe { recorder(arg) }) else {
        return;
    };
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
            // SAFETY: `ssl` is the live connection, `arg` its context's
            // `Kept` (above).
            unsafe { watch_reads(ssl, arg) };
        }
        moments.header_written(now, record_type);
    } else if write_p == 1 {
        moments.message_written(now, content_type, bytes);
    } else {
        moments.server_data(now, content_type, bytes);
    }
}

/// Has the read side of `ssl`'s connection (libcurl's BIO) report every
/// read that brings data in to the recorder `kept`, once: a BIO that
/// already has a callback (ours, or anyone's) is left as it is.
///
/// # Safety
/// `ssl` is a live SSL (the message callback's) and `kept` the `Kept` of
/// its context.
unsafe fn watch_reads(ssl: *mut openssl_sys::SSL, kept: *mut c_void) {
    // SAFETY: a live SSL (the contract); its read BIO, when set, lives as
    // long as the SSL does.
    let bio = unsafe { openssl_sys::SSL_get_rbio(ssl) };
    if bio.is_null() {
        return;
    }
    // SAFETY: `bio` is live (above); reading and setting its callback and
    // the pointer it reads touches nothing else. The pointer is the `Kept`
    // of the SSL's context, which outlives the BIO: the SSL frees its BIOs
    // before it lets go of its context.
    unsafe {
        if BIO_get_callback_ex(bio).is_none() {
            BIO_set_callback_arg(bio, kept.cast());
            BIO_set_callback_ex(bio, Some(on_bio));
        }
    }
}

/// The BIO callback: after a read (`BIO_CB_READ | BIO_CB_RETURN`) that
/// brought data in, tells the BIO's recorder when and how much. Every call
/// returns what OpenSSL passed as the result, so the BIO works as it did.
///
/// # Safety
/// Only OpenSSL calls this, around an operation on a live BIO whose
/// callback `watch_reads` set (its pointer the `Kept` of the context of the
/// SSL that owns the BIO): `processed` is null or points at the bytes the
/// operation moved.
unsafe extern "C" fn on_bio(
    bio: *mut openssl_sys::BIO,
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
            let now = super::monotonic_us();
            // SAFETY: a live BIO; its pointer is the recorder `watch_reads`
            // set, alive as long as the BIO (the contract).
            if let Some(moments) = unsafe { recorder(BIO_get_callback_arg(bio).cast()) } {
                moments.data_read(now, bytes);
            }
        }
    }
    std::os::raw::c_long::from(ret)
}

/// The recorder kept by `ssl`'s context (`stamp_handshake`).
///
/// # Safety
/// `ssl` is a live SSL, and the reference is used only while it is.
unsafe fn recorder_of<'a>(ssl: *const openssl_sys::SSL) -> Option<&'a dyn HandshakeMoments> {
    let index = kept_index()?;
    // SAFETY: a live SSL (the contract); its context lives at least as long.
    let ssl = unsafe { SslRef::from_ptr(ssl as *mut openssl_sys::SSL) };
    ssl.ssl_context().ex_data(index).map(|kept| &**kept)
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
unsafe extern "C" fn on_handshake_step(ssl: *const openssl_sys::SSL, where_: c_int, ret: c_int) {
    if where_ & SSL_CB_CONNECT_EXIT == SSL_CB_CONNECT_EXIT && ret < 0 {
        let now = super::monotonic_us();
        // SAFETY: OpenSSL passes the live SSL (the contract).
        if let Some(moments) = unsafe { recorder_of(ssl) } {
            moments.waiting_for_socket(now);
        }
    } else if where_ & SSL_CB_HANDSHAKE_DONE != 0
        // SAFETY: OpenSSL passes the live SSL (the contract).
        && unsafe { openssl_sys::SSL_is_init_finished(ssl) } == 1
    {
        let now = super::monotonic_us();
        // SAFETY: as above.
        if let Some(moments) = unsafe { recorder_of(ssl) } {
            moments.handshake_done(now);
        }
    }
}

/// Has every connection made from this SSL_CTX report its moments to
/// `moments`: when its first ClientHello leaves, when the client waits and
/// works on the server's replies, when the handshake ends, and the records
/// and reads after it. The context keeps a counted reference to `moments`
/// for as long as it lives (a connection, and so its context, may outlive
/// the transfer that made it: a graceful close). This takes OpenSSL's
/// message callback, which libcurl uses only for the TLS part of its
/// verbose trace (`TLSPING_CURL_VERBOSE`, a debugging aid).
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the CURLOPT_SSL_CTX_FUNCTION
/// callback now running.
pub unsafe fn stamp_handshake(ssl_ctx: *mut c_void, moments: Arc<dyn HandshakeMoments>) {
    let Some(index) = kept_index() else {
        return;
    };
    let ctx = ssl_ctx as *mut openssl_sys::SSL_CTX;
    // SAFETY: a live SSL_CTX that is libcurl's (the caller's contract): the
    // builder only borrows it (never dropped, so never freed here) to set
    // its data, which OpenSSL frees with the context (`kept_index`).
    let kept: *const Kept = unsafe {
        let mut builder = std::mem::ManuallyDrop::new(SslContextBuilder::from_ptr(ctx));
        builder.set_ex_data(index, moments);
        SslContextRef::from_ptr(ctx)
            .ex_data(index)
            .map_or(std::ptr::null(), |k| k as *const Kept)
    };
    // SAFETY: a live SSL_CTX (above); the callbacks are plain functions
    // that read no data of ours but the `Kept` the context holds (given to
    // the message callback as its argument, and found by the info
    // callback in the context's data), valid for as long as the context.
    unsafe {
        openssl_sys::SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, kept as *mut c_void);
        SSL_CTX_set_info_callback(ctx, Some(on_handshake_step));
        SSL_CTX_set_msg_callback(ctx, Some(on_tls_message));
    }
}

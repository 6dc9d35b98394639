//! OpenSSL's side of OCSP stapling (`ocsp` judges what is taken): every
//! connection of an SSL_CTX asks for a staple, and a full handshake's is
//! taken off the live connection without allocating or encoding anything.

use std::os::raw::{c_int, c_long, c_void};
use std::ptr;

use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::ocsp::OcspResponse;
use openssl::ssl::SslRef;

/// Has every connection made from this SSL_CTX ask for a stapled response
/// (`SSL_CTX_set_tlsext_status_type`, a macro over `SSL_CTX_ctrl`). With no
/// status callback on the context, OpenSSL keeps whatever arrives and never
/// fails a handshake over what it says.
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the
/// CURLOPT_SSL_CTX_FUNCTION callback now running.
pub unsafe fn request_staple(ssl_ctx: *mut c_void) {
    // SAFETY: a live SSL_CTX that no handshake uses yet (the caller's
    // contract); this control only stores an integer in it, which each SSL
    // made from the context copies.
    unsafe {
        openssl_sys::SSL_CTX_ctrl(
            ssl_ctx as *mut openssl_sys::SSL_CTX,
            openssl_sys::SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE,
            c_long::from(openssl_sys::TLSEXT_STATUSTYPE_ocsp),
            ptr::null_mut(),
        );
    }
}

/// OpenSSL 3.6 keeps the responses it received decoded, one per certificate
/// (`SSL_get0_tlsext_status_ocsp_resp_ex`, a macro over `SSL_ctrl`); its
/// older single-response getter re-encodes the response into a fresh
/// allocation, which would be our work inside the timed interval.
const SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP_EX: c_int = 142;

/// The OpenSSL releases whose handling of the received responses (the
/// stack the control above hands out, how it is freed and who else reads
/// it) was checked against what `take_first_response` does: 3.6.x. Under
/// any other version the staple is not read at all (`ocsp` stays `null`);
/// `tests::the_linked_openssl_is_one_the_staple_code_was_checked_against`
/// fails when the vendored OpenSSL moves on, so the check is made again.
const STAPLE_STACK_CHECKED: std::ops::Range<i64> = 0x3060_0000..0x3070_0000;

/// Whether `version` (`OPENSSL_VERSION_NUMBER`'s layout) is one of those.
fn staple_stack_checked(version: i64) -> bool {
    STAPLE_STACK_CHECKED.contains(&version)
}

extern "C" {
    // libcrypto: `sk_set`, which replaces one entry of a stack and returns
    // the new one. openssl-sys does not bind it.
    fn OPENSSL_sk_set(
        st: *mut openssl_sys::OPENSSL_STACK,
        i: c_int,
        data: *const c_void,
    ) -> *mut c_void;
}

/// The response stapled for the first certificate that carried one (the
/// leaf, in practice), taken out of the live connection: its entry in the
/// connection's list is left null, and the response is ours from then on.
/// Called from a libcurl callback, where nothing else uses the connection.
pub fn take_first_response(ssl: &SslRef) -> Option<OcspResponse> {
    if !staple_stack_checked(openssl::version::number()) {
        return None;
    }
    let mut stack: *mut openssl_sys::OPENSSL_STACK = ptr::null_mut();
    // SAFETY: `ssl` is live for the borrow; this control writes one pointer
    // to the connection's own stack of responses (or null), and returns how
    // many it holds.
    let count = unsafe {
        openssl_sys::SSL_ctrl(
            ssl.as_ptr(),
            SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP_EX,
            0,
            &mut stack as *mut *mut openssl_sys::OPENSSL_STACK as *mut c_void,
        )
    };
    if count <= 0 || stack.is_null() {
        return None;
    }
    // SAFETY: a non-empty stack of OCSP_RESPONSE owned by `ssl`, which
    // nothing else touches while we are inside libcurl's callback. Entry 0
    // is read, then replaced by null, so the response has one owner, us:
    // OpenSSL frees the stack with OCSP_RESPONSE_free on each entry, which
    // accepts null, and reads entries only to re-encode them for
    // SSL_get_tlsext_status_ocsp_resp (which libcurl calls only with
    // CURLOPT_SSL_VERIFYSTATUS, never set) or for Certificate Transparency
    // (never enabled), both of which take a null entry as "none".
    unsafe {
        let first = openssl_sys::OPENSSL_sk_value(stack, 0) as *mut openssl_sys::OCSP_RESPONSE;
        if first.is_null() {
            return None;
        }
        OPENSSL_sk_set(stack, 0, ptr::null());
        Some(OcspResponse::from_ptr(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linked_openssl_is_one_the_staple_code_was_checked_against() {
        let linked = openssl::version::number();
        assert!(
            staple_stack_checked(linked),
            "OpenSSL {} (0x{linked:08x}) is linked: check take_first_response against its \
             handling of received OCSP responses, then widen STAPLE_STACK_CHECKED",
            openssl::version::version()
        );
        assert!(staple_stack_checked(0x3060_0030), "3.6.3");
        assert!(!staple_stack_checked(0x3050_0000), "3.5");
        assert!(!staple_stack_checked(0x3070_0000), "3.7");
        assert!(!staple_stack_checked(0x4000_0000), "4.0");
    }
}

//! The run's shared trust store, installed in every SSL_CTX libcurl sets
//! up instead of a CA file libcurl would load (and parse) itself.

use std::os::raw::c_void;
use std::ptr;

use curl::easy::Easy2;
use foreign_types::ForeignTypeRef;

use super::setopt::{setopt, CURLOPT_CAINFO, CURLOPT_CAPATH};

extern "C" {
    // libcrypto (OpenSSL >= 1.1.0), linked through openssl-sys; not bound there.
    fn X509_STORE_up_ref(store: *mut openssl_sys::X509_STORE) -> std::os::raw::c_int;
}

/// Makes libcurl load no CA file or directory of its own for this handle:
/// the run's shared store is installed from the SSL_CTX callback instead.
pub fn clear_ca_locations<H>(easy: &mut Easy2<H>) -> Result<(), curl::Error> {
    for opt in [CURLOPT_CAINFO, CURLOPT_CAPATH] {
        // SAFETY: a NULL string is documented for both options as "use no
        // file/directory", and libcurl copies nothing.
        unsafe { setopt(easy, opt, ptr::null())? };
    }
    Ok(())
}

/// Installs `store` as the trust store of the SSL_CTX libcurl is setting up.
/// `ssl_ctx` must be the pointer libcurl passed to the CURLOPT_SSL_CTX_FUNCTION callback.
///
/// # Safety
/// `ssl_ctx` must be the `SSL_CTX*` libcurl passed to the callback now running.
pub unsafe fn install_trust_store(
    ssl_ctx: *mut c_void,
    store: &openssl::x509::store::X509StoreRef,
) {
    let store_ptr = store.as_ptr();
    // SAFETY: libcurl calls the SSL_CTX callback with its live `SSL_CTX*`
    // before any handshake uses it. The store is alive (borrowed); we take
    // one more reference for the SSL_CTX, which set_cert_store adopts and
    // releases when the SSL_CTX is freed, so it never outlives its owner.
    unsafe {
        if X509_STORE_up_ref(store_ptr) == 1 {
            openssl_sys::SSL_CTX_set_cert_store(ssl_ctx as *mut openssl_sys::SSL_CTX, store_ptr);
        }
    }
}

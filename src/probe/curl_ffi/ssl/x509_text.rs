//! OpenSSL's printers for what a certificate says, as libcurl's
//! certificate info prints it (`cert_text` puts the lines together): a
//! name on one line, and each extension's name and text.

use std::os::raw::{c_int, c_ulong};

use foreign_types::ForeignTypeRef;
use openssl::asn1::Asn1ObjectRef;
use openssl::x509::{X509NameRef, X509Ref};

// openssl/x509.h: XN_FLAG_ONELINE, the flags libcurl prints names with
// (RFC 2253 escaping, quotes, `, ` between parts, ` = ` inside them).
const XN_FLAG_ONELINE: c_ulong = 0x0082_031f;

extern "C" {
    // libcrypto, linked through openssl-sys, which does not bind these two.
    fn X509_NAME_print_ex(
        out: *mut openssl_sys::BIO,
        name: *const openssl_sys::X509_NAME,
        indent: c_int,
        flags: c_ulong,
    ) -> c_int;
    fn ASN1_STRING_print(out: *mut openssl_sys::BIO, s: *const openssl_sys::ASN1_STRING) -> c_int;
}

/// A memory BIO that OpenSSL's printers write into; freed on drop.
struct MemBio(*mut openssl_sys::BIO);

impl MemBio {
    fn new() -> Option<MemBio> {
        // SAFETY: BIO_s_mem returns a static method table; BIO_new returns a
        // new BIO we own, or NULL.
        let bio = unsafe { openssl_sys::BIO_new(openssl_sys::BIO_s_mem()) };
        (!bio.is_null()).then_some(MemBio(bio))
    }

    /// What has been written so far.
    fn text(&self) -> String {
        let mut data: *mut std::os::raw::c_char = std::ptr::null_mut();
        // SAFETY: `self.0` is our live memory BIO; BIO_get_mem_data points
        // `data` at its buffer and returns the length, valid until the BIO
        // is written to or freed, and copied before either.
        unsafe {
            let len = openssl_sys::BIO_get_mem_data(self.0, &mut data);
            if data.is_null() || len <= 0 {
                return String::new();
            }
            let bytes = std::slice::from_raw_parts(data as *const u8, len as usize);
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

impl Drop for MemBio {
    fn drop(&mut self) {
        // SAFETY: we own the BIO (from `new`) and nothing else frees it.
        unsafe { openssl_sys::BIO_free_all(self.0) }
    }
}

/// A name on one line, as libcurl prints Subject and Issuer (`CN = example.com`).
pub fn name_one_line(name: &X509NameRef) -> String {
    let Some(bio) = MemBio::new() else {
        return String::new();
    };
    // SAFETY: both pointers are live for the call (our BIO, the borrowed name).
    unsafe { X509_NAME_print_ex(bio.0, name.as_ptr(), 0, XN_FLAG_ONELINE) };
    bio.text()
}

/// Each extension as libcurl lists it: its name, and OpenSSL's text for its value.
pub fn extension_lines(cert: &X509Ref) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // SAFETY: the certificate is live (borrowed) for the whole loop; the count
    // and each extension pointer are read-only views into it.
    let count = unsafe { openssl_sys::X509_get_ext_count(cert.as_ptr()) };
    for i in 0..count.max(0) {
        let Some(bio) = MemBio::new() else { break };
        // SAFETY: `i` is below the count, so X509_get_ext returns one of the
        // certificate's own extensions; the object and data it points to live
        // as long as the certificate. Printing only reads them.
        let name = unsafe {
            let ext = openssl_sys::X509_get_ext(cert.as_ptr(), i);
            if ext.is_null() {
                continue;
            }
            let object = openssl_sys::X509_EXTENSION_get_object(ext);
            if openssl_sys::X509V3_EXT_print(bio.0, ext, 0, 0) != 1 {
                let data = openssl_sys::X509_EXTENSION_get_data(ext);
                ASN1_STRING_print(bio.0, data as *const openssl_sys::ASN1_STRING);
            }
            Asn1ObjectRef::from_ptr(object).to_string()
        };
        out.push((name, bio.text()));
    }
    out
}

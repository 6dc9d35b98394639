//! What a user types: the target normaliser, the header parser and the
//! duration parser must refuse bad input with a message, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(target) = tlsping::probe::Target::parse(text) {
        // Whatever is accepted must round-trip into a URL with no line breaks.
        let url = target.request_url(Some(1));
        assert!(!url.contains('\r') && !url.contains('\n'));
        assert!(target.port != 0);
    }
    if let Ok(header) = tlsping::cli::parse_header(text) {
        assert!(!header.contains('\r') && !header.contains('\n'));
        assert!(header.contains(": "));
    }
    let _ = tlsping::cli::parse_duration(text);
});

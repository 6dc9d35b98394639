//! What the network controls: response header lines and body bytes fed
//! through the same libcurl handler the probes use (status lines, Location),
//! and server-chosen text through the CSV guard and the line renderer.
#![no_main]

use curl::easy::Handler;
use libfuzzer_sys::fuzz_target;
use tlsping::probe::{Cancel, Collector};
use tlsping::render::paint::{Line, Paint};

fuzz_target!(|data: &[u8]| {
    let mut collector = Collector::new(Cancel::new(), None);
    // Header lines as libcurl delivers them, one call per line.
    for line in data.split_inclusive(|&b| b == b'\n') {
        assert!(collector.header(line));
    }
    // The body path, with the 64 KiB cap.
    for chunk in data.chunks(7) {
        let _ = collector.write(chunk);
    }
    assert!(collector.body_bytes() <= tlsping::probe::BODY_CAP);
    if let Some(location) = collector.location() {
        assert!(!location.contains('\n'));
    }
    let text = String::from_utf8_lossy(data);
    let cell = tlsping::render::csv::neutralise(&text);
    assert!(!matches!(cell.chars().next(), Some('=' | '+' | '-' | '@' | '\t' | '\r')));
    let width = data.first().map(|&b| b as usize).unwrap_or(0);
    let mut line = Line::new();
    line.push(text.as_ref(), Paint::Red).push(" tail", Paint::Dim);
    let plain = line.render(width, false);
    assert!(plain.chars().count() <= width, "{width}: {plain:?}");
    let _ = line.render(width, true);
});

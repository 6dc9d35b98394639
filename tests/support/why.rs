//! The statistics' `why:` and `new connection` lines held to their own
//! promise: their parts add up to their total (to the rounding of the
//! figures as printed), no part is negative, and a part that is not known
//! is `-` with no `rest` beside it (never folded in).

/// A figure as printed (`40.1ms`, `0.90ms`, `166ms`) and half its last
/// digit: how far the rounding can have moved it.
fn figure(word: &str) -> Option<(f64, f64)> {
    let num = word.trim_end_matches(':').strip_suffix("ms")?;
    let value: f64 = num.parse().ok()?;
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len());
    Some((value, 0.5 * 10f64.powi(-(decimals as i32))))
}

/// A part of a `why:` or `new connection` line as printed (`server` in
/// `+ server 2.34ms`), or its total (`total`); `None` where the line has
/// no such part or it is `-`.
#[allow(dead_code)]
pub fn part(line: &str, name: &str) -> Option<f64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if name == "total" {
        let i = words.iter().position(|w| *w == "=")?;
        return figure(words.get(i + 1)?).map(|(v, _)| v);
    }
    let i = words.windows(2).position(|w| w[0] == "+" && w[1] == name)?;
    figure(words.get(i + 2)?).map(|(v, _)| v)
}

/// Checks one statistics line (any other line passes untouched).
pub fn assert_adds_up(line: &str) {
    let t = line.trim_start();
    let (total_word, rest) = if let Some(r) = t.strip_prefix("why: tls ") {
        r.split_once(" = ")
            .unwrap_or_else(|| panic!("no '=' in {line}"))
    } else if let Some(r) = t.strip_prefix("new connection") {
        let r = r
            .trim_start()
            .strip_prefix("= ")
            .unwrap_or_else(|| panic!("{line}"));
        r.split_once(": ")
            .unwrap_or_else(|| panic!("no ':' in {line}"))
    } else {
        return;
    };
    // The parts end where the note in parentheses begins.
    let parts = rest.split("  (").next().unwrap();
    assert!(
        !parts.contains(" -0") && !parts.contains("+ -"),
        "a negative part: {line}"
    );
    let words: Vec<&str> = parts.split_whitespace().collect();
    let unknown = words
        .windows(2)
        .filter(|w| w[0] != "×" && w[1] == "-")
        .count();
    if unknown > 0 {
        // Unknown parts, and so no rest that would hold them.
        if let Some(i) = words.iter().position(|w| *w == "rest") {
            assert_eq!(
                words.get(i + 1),
                Some(&"-"),
                "an unknown folded into rest: {line}"
            );
        }
        return;
    }
    let (total, total_slack) = figure(total_word).unwrap_or_else(|| panic!("{line}"));
    let trips: f64 = words[0].parse().unwrap_or_else(|_| panic!("{line}"));
    let mut sum = 0.0;
    let mut slack = total_slack;
    let mut iter = words.iter().peekable();
    while let Some(w) = iter.next() {
        if *w == "×" {
            let (rtt, s) = figure(iter.next().unwrap()).unwrap();
            sum += trips * rtt;
            slack += trips * s;
        } else if *w == "+" {
            iter.next(); // the part's name
            let (v, s) = figure(iter.next().unwrap()).unwrap_or_else(|| panic!("{line}"));
            assert!(v >= 0.0, "{line}");
            sum += v;
            slack += s;
        }
    }
    assert!(
        (sum - total).abs() <= slack + 1e-9,
        "the parts make {sum:.3}, the line says {total}: {line}"
    );
}

//! The `Server-Timing` parser against the choices `server_timing.rs` lists,
//! hostile input included.

use super::*;

fn m(name: &str, dur_ms: Option<f64>, desc: Option<&str>) -> ServerTiming {
    ServerTiming {
        name: name.to_string(),
        dur_ms,
        desc: desc.map(str::to_string),
    }
}

fn parse(value: &str) -> Vec<ServerTiming> {
    let mut out = Vec::new();
    parse_value(value, &mut out);
    out
}

fn check_table(table: &[(&str, Vec<ServerTiming>)]) {
    for (value, want) in table {
        assert_eq!(&parse(value), want, "value: {value:?}");
    }
}

#[test]
fn several_metrics_in_one_value() {
    check_table(&[
        (
            "db;dur=53.2, app;dur=47.2;desc=render, cache;desc=\"hit\"",
            vec![
                m("db", Some(53.2), None),
                m("app", Some(47.2), Some("render")),
                m("cache", None, Some("hit")),
            ],
        ),
        ("miss", vec![m("miss", None, None)]),
        (
            "a,b,,  ,c",
            vec![m("a", None, None), m("b", None, None), m("c", None, None)],
        ),
        (
            " \tedge ; dur = 7 ;\tdesc = \"x y\" ,\tCDN-Cache ",
            vec![
                m("edge", Some(7.0), Some("x y")),
                m("CDN-Cache", None, None),
            ],
        ),
        ("Total;dur=1", vec![m("Total", Some(1.0), None)]),
        (
            "x;foo=bar;dur=2;baz;desc=d;qux=\"q\"",
            vec![m("x", Some(2.0), Some("d"))],
        ),
    ]);
}

#[test]
fn empty_values_give_nothing() {
    check_table(&[
        ("", vec![]),
        ("   ", vec![]),
        ("\t", vec![]),
        (",", vec![]),
        (" , ,, ", vec![]),
    ]);
}

#[test]
fn dur_forms() {
    check_table(&[
        ("a;dur=12", vec![m("a", Some(12.0), None)]),
        ("a;dur=12.5", vec![m("a", Some(12.5), None)]),
        ("a;dur=.5", vec![m("a", Some(0.5), None)]),
        ("a;dur=5.", vec![m("a", Some(5.0), None)]),
        ("a;dur=0", vec![m("a", Some(0.0), None)]),
        ("a;dur=007", vec![m("a", Some(7.0), None)]),
        ("a;dur=\"3.2\"", vec![m("a", Some(3.2), None)]),
        // Missing.
        ("a", vec![m("a", None, None)]),
        ("a;desc=x", vec![m("a", None, Some("x"))]),
        ("a;dur", vec![m("a", None, None)]),
        ("a;dur=", vec![m("a", None, None)]),
        ("a;dur=\"\"", vec![m("a", None, None)]),
        // Not a number.
        ("a;dur=abc", vec![m("a", None, None)]),
        ("a;dur=1.2.3", vec![m("a", None, None)]),
        ("a;dur=.", vec![m("a", None, None)]),
        ("a;dur=1e3", vec![m("a", None, None)]),
        ("a;dur=inf", vec![m("a", None, None)]),
        ("a;dur=NaN", vec![m("a", None, None)]),
        ("a;dur=0x10", vec![m("a", None, None)]),
        ("a;dur=\" 3\"", vec![m("a", None, None)]),
        ("a;dur=12ms", vec![m("a", None, None)]),
        // Negative or signed.
        ("a;dur=-1", vec![m("a", None, None)]),
        ("a;dur=-0", vec![m("a", None, None)]),
        ("a;dur=\"-2.5\"", vec![m("a", None, None)]),
        ("a;dur=+1", vec![m("a", None, None)]),
        // Above a million seconds: no timing of one response.
        ("a;dur=1000000000", vec![m("a", Some(1e9), None)]),
        ("a;dur=1000000000.5", vec![m("a", None, None)]),
        ("a;dur=99999999999999999999999", vec![m("a", None, None)]),
        // Too large to be finite.
        (
            &format!("a;dur=1{}", "0".repeat(400)),
            vec![m("a", None, None)],
        ),
        // Trailing junk makes the parameter malformed, not the metric.
        ("a;dur=1 2", vec![m("a", None, None)]),
        ("a;dur=1 2;dur=3", vec![m("a", Some(3.0), None)]),
        // Only the first well-formed `dur` counts, usable or not.
        ("a;dur=1;dur=2", vec![m("a", Some(1.0), None)]),
        ("a;dur=x;dur=2", vec![m("a", None, None)]),
    ]);
}

#[test]
fn desc_forms() {
    check_table(&[
        ("a;desc=plain", vec![m("a", None, Some("plain"))]),
        (
            r#"a;desc="say \"hi\", then go";dur=4, b"#,
            vec![
                m("a", Some(4.0), Some("say \"hi\", then go")),
                m("b", None, None),
            ],
        ),
        (
            r#"a;desc="x;dur=9";dur=1"#,
            vec![m("a", Some(1.0), Some("x;dur=9"))],
        ),
        (
            r#"a;desc="back\\slash\q""#,
            vec![m("a", None, Some("back\\slashq"))],
        ),
        ("a;desc=\"\"", vec![m("a", None, Some(""))]),
        ("a;desc=", vec![m("a", None, Some(""))]),
        ("a;desc", vec![m("a", None, Some(""))]),
        (
            "a;desc=\"caf\u{e9} \u{1F600}\"",
            vec![m("a", None, Some("caf\u{e9} \u{1F600}"))],
        ),
        // Server text is kept as sent, control characters included.
        (
            "a;desc=\"\x1b[31mred\"",
            vec![m("a", None, Some("\x1b[31mred"))],
        ),
        // First well-formed `desc` wins.
        ("a;desc=one;desc=two", vec![m("a", None, Some("one"))]),
        ("a;desc=a/b;desc=two", vec![m("a", None, Some("two"))]),
        // Not a token: the parameter is dropped.
        ("a;desc=a/b", vec![m("a", None, None)]),
        ("a;desc=\"x\"y", vec![m("a", None, None)]),
    ]);
}

#[test]
fn parameter_names_are_case_insensitive() {
    check_table(&[
        ("a;DUR=3;Desc=x", vec![m("a", Some(3.0), Some("x"))]),
        ("a;Dur=3;DESC=\"y\"", vec![m("a", Some(3.0), Some("y"))]),
        ("a;dUr=1;DuR=2", vec![m("a", Some(1.0), None)]),
        // The metric name keeps its case.
        ("MiXeD;dur=1", vec![m("MiXeD", Some(1.0), None)]),
    ]);
}

#[test]
fn junk_is_skipped_and_good_metrics_kept() {
    check_table(&[
        ("=, ok;dur=1", vec![m("ok", Some(1.0), None)]),
        ("=", vec![]),
        (";;", vec![]),
        (";dur=1, b", vec![m("b", None, None)]),
        ("a;;dur=2", vec![m("a", Some(2.0), None)]),
        ("a;=;dur=2", vec![m("a", Some(2.0), None)]),
        ("a;=5;desc=d", vec![m("a", None, Some("d"))]),
        ("a b;dur=1, c;dur=2", vec![m("c", Some(2.0), None)]),
        ("a/b, c", vec![m("c", None, None)]),
        ("\"quoted\", c", vec![m("c", None, None)]),
        (
            "ok, bad name, \"q,q\" x, fine",
            vec![m("ok", None, None), m("fine", None, None)],
        ),
        // A dropped metric's quoted text does not leak its comma.
        (r#"a b;desc="x, y", z"#, vec![m("z", None, None)]),
        ("caf\u{e9}, ok", vec![m("ok", None, None)]),
        // An unclosed quote swallows the rest of the value.
        (
            "a;dur=2;desc=\"open, b;dur=3",
            vec![m("a", Some(2.0), None)],
        ),
        ("a;desc=\"open\\", vec![m("a", None, None)]),
        ("a b \"open, c", vec![]),
        ("a;dur=1;foo=\"open, b", vec![m("a", Some(1.0), None)]),
        ("a;dur=3;", vec![m("a", Some(3.0), None)]),
        ("a;dur==3", vec![m("a", None, None)]),
        ("a;dur=1,", vec![m("a", Some(1.0), None)]),
    ]);
}

#[test]
fn two_values_append_into_one_vec() {
    let mut out = vec![m("earlier", Some(9.0), None)];
    parse_value("db;dur=1, app", &mut out);
    parse_value("cdn;desc=edge;dur=2.5", &mut out);
    assert_eq!(
        out,
        vec![
            m("earlier", Some(9.0), None),
            m("db", Some(1.0), None),
            m("app", None, None),
            m("cdn", Some(2.5), Some("edge")),
        ]
    );
}

#[test]
fn parse_line_matches_only_server_timing() {
    let table: &[(&[u8], bool, Vec<ServerTiming>)] = &[
        (
            b"Server-Timing: db;dur=5\r\n",
            true,
            vec![m("db", Some(5.0), None)],
        ),
        (
            b"server-timing:db;dur=5\n",
            true,
            vec![m("db", Some(5.0), None)],
        ),
        (
            b"SERVER-TIMING:  a;desc=\"x\" , b\r\n",
            true,
            vec![m("a", None, Some("x")), m("b", None, None)],
        ),
        (
            b"Server-Timing: a;dur=1",
            true,
            vec![m("a", Some(1.0), None)],
        ),
        (b"Server-Timing:\r\n", true, vec![]),
        (b"Server-Timing: =, ;\r\n", true, vec![]),
        // Bytes that are not UTF-8 become U+FFFD; the metric with them is
        // not a token and is dropped, the rest survive.
        (
            b"Server-Timing: \xff\xfe, ok;desc=\"a\xc3(b\";dur=1\r\n",
            true,
            vec![m("ok", Some(1.0), Some("a\u{FFFD}(b"))],
        ),
        // Other lines.
        (b"Server: nginx\r\n", false, vec![]),
        (b"Server-Timing-Extra: a;dur=1\r\n", false, vec![]),
        (b"X-Server-Timing: a;dur=1\r\n", false, vec![]),
        (b"Server-Timing : a;dur=1\r\n", false, vec![]),
        (b"Server-Timing\r\n", false, vec![]),
        (b"Server-Timin: a\r\n", false, vec![]),
        (b"HTTP/1.1 200 OK\r\n", false, vec![]),
        (b"\r\n", false, vec![]),
        (b"", false, vec![]),
    ];
    for (line, want_ours, want) in table {
        let mut out = Vec::new();
        let ours = parse_line(line, &mut out);
        let shown = String::from_utf8_lossy(line);
        assert_eq!(ours, *want_ours, "line: {shown:?}");
        assert_eq!(&out, want, "line: {shown:?}");
    }
}

#[test]
fn metric_count_is_capped_at_64() {
    let many: String = (0..100).map(|i| format!("m{i};dur={i},")).collect();

    let mut out = Vec::new();
    parse_value(&many, &mut out);
    assert_eq!(out.len(), MAX_METRICS);
    assert_eq!(out[0], m("m0", Some(0.0), None));
    assert_eq!(out[63], m("m63", Some(63.0), None));

    // The cap is on the whole list, across headers.
    let mut out: Vec<ServerTiming> = (0..60).map(|i| m(&format!("p{i}"), None, None)).collect();
    parse_value(&many, &mut out);
    assert_eq!(out.len(), MAX_METRICS);
    assert_eq!(out[59], m("p59", None, None));
    assert_eq!(out[60], m("m0", Some(0.0), None));
    assert_eq!(out[63], m("m3", Some(3.0), None));

    // A full list still recognises the header but takes nothing more.
    let before = out.clone();
    assert!(parse_line(b"Server-Timing: extra;dur=1\r\n", &mut out));
    assert_eq!(out, before);
}

#[test]
fn name_and_desc_are_truncated_to_256_chars() {
    let long_name = "n".repeat(300);
    let long_desc = "\u{e9}".repeat(300); // two bytes each
    let value = format!("{long_name};desc=\"{long_desc}\";dur=1");
    assert_eq!(
        parse(&value),
        vec![m(&"n".repeat(256), Some(1.0), Some(&"\u{e9}".repeat(256)))]
    );

    // Exactly at the limit nothing is lost; escapes count once unescaped.
    let at_limit = "q".repeat(256);
    let escaped = "\\\"".repeat(300);
    let value = format!("{at_limit};desc={at_limit}, b;desc=\"{escaped}\"");
    assert_eq!(
        parse(&value),
        vec![
            m(&at_limit, None, Some(&at_limit)),
            m("b", None, Some(&"\"".repeat(256))),
        ]
    );
}

#[test]
fn huge_junk_does_not_panic() {
    let open_quote = format!("a;desc=\"{}", "x,".repeat(500_000));
    assert_eq!(parse(&open_quote), vec![m("a", None, None)]);

    let commas = ",".repeat(1_000_000);
    assert_eq!(parse(&commas), vec![]);

    let junk = format!("ok;dur=1,{}", "=;\"\\".repeat(250_000));
    assert_eq!(parse(&junk), vec![m("ok", Some(1.0), None)]);

    let params = format!("a{}", ";dur=1;desc=d".repeat(100_000));
    assert_eq!(parse(&params), vec![m("a", Some(1.0), Some("d"))]);
}

#[test]
fn random_bytes_keep_the_invariants() {
    // A fixed pseudo-random stream drawn from the characters that matter.
    let alphabet = b"ab;=,\"\\ \t.-1dDuUrResc\xff\xc3\r\n";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut total = 0;
    for _ in 0..2000 {
        let mut line = b"Server-Timing: ".to_vec();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 80) as usize;
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            line.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        let mut out = Vec::new();
        assert!(parse_line(&line, &mut out));
        assert!(out.len() <= MAX_METRICS);
        for metric in &out {
            assert!(!metric.name.is_empty());
            assert!(metric.name.bytes().all(is_tchar), "{metric:?}");
            assert!(metric.dur_ms.is_none_or(|d| d.is_finite() && d >= 0.0));
        }
        total += out.len();
    }
    // The stream is fixed, so some metrics must have come through.
    assert!(total > 0);
}

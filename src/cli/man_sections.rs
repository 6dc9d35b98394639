//! The man page's reference sections, each written from the table the code
//! itself runs on: the exit codes (`exit::CODES`), the failure kinds
//! (`ErrorKind`), the sample fields (`render::fields::FIELDS`), the run's
//! figures (`render::summary_fields::SUMMARY_FIELDS`), the
//! write-out variables (`render::write_out::variables`), the environment
//! (`ENVIRONMENT`, which names the constants the code reads) and the
//! limits of the files it reads. Text goes through the `roff` crate, which
//! escapes what roff would read as a request (a leading `.` or `'`) or an
//! escape (`\`, `-`).

use roff::{bold, italic, roman, Inline, Roff};

use crate::exit;
use crate::files::{size_text, CA_LIMIT, CLIENT_PEM_LIMIT};
use crate::probe::ErrorKind;
use crate::render::fields::{JsonKey, FIELDS};
use crate::render::summary_fields::SUMMARY_FIELDS;
use crate::render::write_out::{self, MAX_FORMAT_BYTES};

/// Every environment variable tlsping reads, or has libcurl or OpenSSL
/// read for it, and what it does; one row per variable or family.
/// `tests/generate.rs` holds the code's reads to this table.
pub const ENVIRONMENT: [(&[&str], &str); 10] = [
    (
        &["SSL_CERT_FILE"],
        "A CA bundle (PEM, a regular file of at most 4 MiB) trusted in place of the \
         system's, unless --cacert names one. Set but missing or unreadable, it is an error, \
         never a silent fall-back.",
    ),
    (
        &["SSL_CERT_DIR"],
        "Directories of CA certificates (':' between them), trusted in place of the \
         system's when neither --cacert nor SSL_CERT_FILE is given (at most 4 MiB together). \
         An https --push trusts what these two give, as the probes do without --cacert.",
    ),
    (
        &super::PROXY_VARS,
        "A proxy, taken by libcurl only with --no-pin-ip or --connect-to; a pinned run dials \
         the address it pinned directly, and warns when one of these is set. For an https \
         target libcurl takes https_proxy, else HTTPS_PROXY, else all_proxy, else ALL_PROXY; \
         for an http one http_proxy (never HTTP_PROXY), else all_proxy, else ALL_PROXY. \
         --push takes the probes' way: through the proxy they use, chosen by the target's URL \
         and never the push's, or direct when they use none.",
    ),
    (
        &["no_proxy", "NO_PROXY"],
        "The hosts no proxy is used for, read by libcurl where a proxy would be (no_proxy, \
         else NO_PROXY): names with their subdomains, addresses, CIDR ranges, or * for every \
         host. One that names the target's host sends the probes, and so the push, direct; \
         one that names the Pushgateway's host sends the push direct.",
    ),
    (
        &[super::PUSH_AUTH_VAR],
        "The Pushgateway's USER:PASSWORD for --push (HTTP basic), when --push-auth-file is \
         not given; not UTF-8, or with a control character, it is a usage error.",
    ),
    (
        &["NO_COLOR"],
        "Set to anything, even empty: no colour, as with --no-color.",
    ),
    (
        &["COLUMNS"],
        "The width the table is laid out for, in place of the terminal's (output to a file \
         or a pipe is otherwise not cut at all).",
    ),
    (
        &["LC_ALL", "LC_CTYPE", "LANG"],
        "The first that is set and not empty decides whether the table may use characters \
         beyond ASCII (it names UTF-8).",
    ),
    (
        &[crate::files::KEYLOG_VAR],
        "A file libcurl appends the TLS secrets of every handshake to, for Wireshark or \
         tshark to decrypt a capture. tlsping opens it first, without following a link: a \
         new file is created 0600, an existing one appended to; anything but a regular file \
         of the user's own (a link, a FIFO, a device, another user's file) is a usage error \
         before anything is dialed.",
    ),
    (
        &["TLSPING_CURL_VERBOSE"],
        "Set to anything: libcurl's own trace of every transfer on standard error (a \
         debugging aid; it may show request headers).",
    ),
];

/// The man page's DESCRIPTION (clap_mangen writes it; blank lines part
/// paragraphs).
pub(super) fn description() -> String {
    format!(
        "tlsping measures what a new HTTPS connection costs next to a reused one. Each round \
         makes a cold probe (a new connection: name lookup, TCP connect, TLS handshake, then \
         the request) and a warm probe (the same request on a connection kept from earlier \
         rounds), and splits each into stages: dns, tcp, tls and srv (from the request sent \
         to the first byte of the response) for a cold probe, wait and srv for a warm one. \
         When the rounds end it shows each stage's statistics, cold next to warm.\n\n\
         --json, --jsonl, --csv, --write-out, --openmetrics and --push give the same figures \
         to programs: see OUTPUT FIELDS, SUMMARY FIELDS and WRITE-OUT VARIABLES below.\n\n{}",
        super::SAFETY
    )
}

/// Every section after the flags', as roff.
pub(super) fn reference_sections() -> String {
    let mut roff = Roff::new();
    exit_status(&mut roff);
    failure_kinds(&mut roff);
    environment(&mut roff);
    files(&mut roff);
    output_fields(&mut roff);
    summary_fields(&mut roff);
    write_out_variables(&mut roff);
    examples(&mut roff);
    see_also(&mut roff);
    // The roff crate opens every document with its definition of `\*(Aq`,
    // which clap_mangen's part of the page has made already.
    let preamble = Roff::new().render();
    let text = roff.render();
    text.strip_prefix(&preamble).unwrap_or(&text).to_string()
}

/// One entry of a list: its tag on a line of its own, then what it means.
fn item(roff: &mut Roff, tag: impl Into<Vec<Inline>>, text: &str) {
    roff.control("TP", []).text(tag).text([roman(text)]);
}

fn exit_status(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in exit::CODES {
        item(roff, [bold(code.to_string())], meaning);
    }
    item(roff, [bold("128+"), italic("N")], exit::SIGNALLED);
}

fn failure_kinds(roff: &mut Roff) {
    roff.control("SH", ["FAILURE KINDS"]);
    roff.text([roman(
        "A probe that got no HTTP response says why in error_kind (the JSON and CSV \
         sample field), one of these; error has libcurl's own words. An HTTP error status \
         (4xx, 5xx) is a response, not a failure.",
    )]);
    for kind in ErrorKind::ALL {
        item(roff, [bold(kind.slug())], kind.about());
    }
}

fn environment(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    for (names, meaning) in ENVIRONMENT {
        let mut tag = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                tag.push(roman(", "));
            }
            tag.push(bold(*name));
        }
        item(roff, tag, meaning);
    }
}

fn files(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    roff.text([roman(
        "Standard output carries the table or the one format asked for (--json, --jsonl, \
         --csv, --write-out, --openmetrics -, --svg -); warnings and errors go to standard \
         error. Files are written only when named (./- names a file called -):",
    )]);
    item(
        roff,
        [
            bold("--svg"),
            roman(" "),
            italic("FILE"),
            roman(", "),
            bold("--openmetrics"),
            roman(" "),
            italic("FILE"),
        ],
        "FILE's directory is opened before the first round and held: when the run ends, \
         through it, into a new temporary file of an unguessable name, created exclusively, \
         then renamed over FILE: a reader never sees half of it, and a directory swapped for \
         a link meanwhile is not followed. Only a regular file of the user's own is replaced, \
         its owner, group and mode kept (not its ACLs, extended attributes or other hard \
         links; a new one gets 0666 less the umask); a link, a directory, a device or another \
         user's file is refused before the first round, as are a directory that does not \
         exist or that the user cannot create a file in (read-only, or /proc and /sys, root \
         included), a file whose group the user may not give a new file (a trial file is \
         made, given its group and mode, and removed), and one file named by both flags.",
    );
    roff.control("PP", []);
    roff.text([roman(
        "Files read are bounded, so an endless one cannot fill the memory:",
    )]);
    let read = [
        (
            "--cacert",
            format!(
                "a CA bundle (PEM), a regular file of at most {}",
                size_text(CA_LIMIT)
            ),
        ),
        (
            "--cert, --key",
            format!(
                "a client certificate and its key (PEM), a regular file or a pipe (not a named \
                 FIFO) of at most {} each",
                size_text(CLIENT_PEM_LIMIT)
            ),
        ),
        (
            "--push-auth-file",
            format!(
                "USER:PASSWORD on its first line, a regular file of at most {}",
                size_text(super::metrics::MAX_AUTH_FILE)
            ),
        ),
        (
            "--write-out @",
            format!(
                "a format, a regular file or a pipe (not a named FIFO; @- is standard input) of \
                 at most {}",
                size_text(MAX_FORMAT_BYTES as u64)
            ),
        ),
    ];
    for (flag, what) in read {
        let space = if flag.ends_with('@') { "" } else { " " };
        item(roff, [bold(flag), roman(space), italic("FILE")], &what);
    }
}

fn output_fields(roff: &mut Roff) {
    roff.control("SH", ["OUTPUT FIELDS"]);
    roff.text([roman(
        "Every probe is one sample with these fields: a key of a sample object in --json and \
         --jsonl, a column in --csv, and a --write-out variable where one is named. A name \
         ending in _ms is milliseconds, in _us microseconds; JSON null (an empty CSV cell) is \
         a figure not measured or not applicable.",
    )]);
    for field in &FIELDS {
        let json = match field.json {
            JsonKey::Top(key) => key.to_string(),
            JsonKey::Nested(object, key) => format!("{object}.{key}"),
        };
        let mut places = Vec::new();
        match field.csv {
            Some(column) => places.push(format!("CSV {}", column.name)),
            None => places.push("JSON only".into()),
        }
        if let Some(var) = field.write_out {
            places.push(format!("write-out %{{{}}}", var.name()));
        }
        let tag = [bold(json), roman(format!(" ({})", places.join("; ")))];
        item(roff, tag, field.about);
    }
}

fn summary_fields(roff: &mut Roff) {
    roff.control("SH", ["SUMMARY FIELDS"]);
    roff.text([roman(
        "The run's figures: the summary object of --json, the summary line of --jsonl, and \
         each variant's under --compare. Those marked as a gauge are also in --openmetrics \
         and --push.",
    )]);
    for field in SUMMARY_FIELDS {
        let mut tag = vec![bold(field.name)];
        if let Some(m) = &field.metric {
            let unit = if m.seconds { "_seconds" } else { "" };
            tag.push(roman(format!(" (gauge tlsping_{}{unit})", m.name)));
        }
        item(roff, tag, field.about);
    }
}

fn write_out_variables(roff: &mut Roff) {
    roff.control("SH", ["WRITE-OUT VARIABLES"]);
    roff.text([roman(format!(
        "--write-out FORMAT prints FORMAT for every sample, as curl -w does: %{{name}} is a \
         variable (in any case), %header{{NAME}} the response's first header of that name, \
         %% a percent sign, and \\n, \\r and \\t a newline, a carriage return and a tab. \
         @FILE reads the format from a file and @- from standard input (at most {}). \
         Durations are seconds with six decimals, as curl gives them. curl's variables come \
         first, then tlsping's own; a name curl has that cannot apply to a probe is refused, \
         as is an unknown one.",
        size_text(MAX_FORMAT_BYTES as u64)
    ))]);
    let mut heading = None;
    for var in write_out::variables() {
        let now = if var.of_curl {
            "curl's variables"
        } else {
            "tlsping's own variables"
        };
        if heading != Some(now) {
            roff.control("SS", [now]);
            heading = Some(now);
        }
        let about = match var.refused {
            Some(why) => format!("{}. Refused here: {why}.", var.about),
            None => var.about.to_string(),
        };
        item(roff, [bold(var.name)], &about);
    }
}

fn examples(roff: &mut Roff) {
    roff.control("SH", ["EXAMPLES"]);
    roff.control("nf", []);
    for line in super::EXAMPLES.lines().skip(1) {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
}

fn see_also(roff: &mut Roff) {
    roff.control("SH", ["SEE ALSO"]);
    roff.text([
        bold("curl"),
        roman("(1), whose --write-out variables and timers tlsping shares; "),
        bold("tlsping --help"),
        roman(
            " for the flags in short; the README.md and docs/ of tlsping's source for \
             the measurement, the statistics and every output in depth.",
        ),
    ]);
}

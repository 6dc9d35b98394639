//! The command line: flags (clap), validation, and the `Config` they make.
//! Every usage error exits 3 before anything touches the network.

mod clap_error;
mod compare;
mod connection;
pub mod docs;
mod duration;
pub mod man_sections;
mod metrics;
mod output;
mod target;

use std::time::Duration;

use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

use crate::exit::Exit;
use crate::probe::{Config, HttpVersion, IpVersion, ModeChoice, Order, SettingWarning};
use crate::render::Outputs;

pub use crate::probe::PUSH_AUTH_VAR;
pub use duration::parse_duration;
pub use target::parse_header;

/// What `--calibrate` measures, before its server picks the port.
pub const CALIBRATION_TARGET: &str = "https://localhost/";

/// The smallest interval a run may use: a safety valve for the target.
pub const INTERVAL_FLOOR: Duration = Duration::from_millis(200);

/// The longest timeout a probe may have (its timers are kept in u32 microseconds).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

const SAFETY: &str =
    "Only measure hosts you own or are permitted to test: repeated connections can \
look like an attack to a WAF or IPS. The defaults (10 rounds, 1s apart) are deliberately gentle.";

const EXAMPLES: &str = "Examples:
  tlsping example.com                      10 rounds, cold and warm interleaved
  tlsping -n 21 -i 500ms --json https://example.com/health | jq .summary";

#[derive(Parser, Debug)]
#[command(
    name = "tlsping",
    about = "What a new HTTPS connection costs (DNS, TCP, TLS, server) next to a reused one, round by round.",
    long_about = None,
    disable_version_flag = true,
    disable_help_flag = true,
    after_help = format!("{SAFETY}\n\n{EXAMPLES}"),
)]
pub struct Args {
    /// Host, host:port or URL (https:// is assumed, / is the default path); none with
    /// --compare target=
    #[arg(value_name = "HOST|URL")]
    pub target: Option<String>,

    /// Number of rounds; 0 runs until Ctrl+C
    #[arg(
        short = 'n',
        long = "count",
        visible_short_alias = 'c',
        value_name = "N",
        default_value_t = 10,
        help_heading = "Measurement"
    )]
    pub count: u32,

    /// Gap between round starts (floor 200ms)
    #[arg(short = 'i', long, value_name = "D", default_value = "1s", value_parser = parse_duration,
          help_heading = "Measurement")]
    pub interval: Duration,

    /// Deadline for one probe, from DNS to the end of the body
    #[arg(short = 'w', long, value_name = "D", default_value = "5s", value_parser = parse_timeout,
          help_heading = "Measurement")]
    pub timeout: Duration,

    /// Which probes run: both, cold or warm
    #[arg(short = 'm', long, value_name = "M", value_enum, default_value_t = ModeChoice::Both,
          help_heading = "Measurement")]
    pub mode: ModeChoice,

    /// Probe order in a round: alternate, cold-first or warm-first
    #[arg(long, value_name = "O", value_enum, default_value_t = Order::Alternate,
          help_heading = "Measurement")]
    pub order: Order,

    /// Measure this machine's client floor: rounds against tlsping's own TLS 1.3
    /// server on 127.0.0.1 (no network needed; no target)
    #[arg(long, help_heading = "Measurement")]
    pub calibrate: bool,

    /// Leading rounds left out of the statistics
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Measurement"
    )]
    pub warmup: u32,

    /// Request method (default: HEAD, falling back to GET with Range: bytes=0-0 on 405/501)
    #[arg(
        short = 'X',
        long = "method",
        value_name = "M",
        help_heading = "Request"
    )]
    pub method: Option<String>,

    /// HTTP version: auto (the default: h2 when offered, else 1.1), or 1.1 or 2: that version or
    /// nothing
    #[arg(long = "http-version", value_name = "V", hide_possible_values = true,
          value_parser = Offering::new(parse_http_version, &HTTP_VERSIONS), help_heading = "Request")]
    pub http_version: Option<HttpVersion>,

    /// Append ?_=<seq> to every request
    #[arg(long = "cache-bust", help_heading = "Request")]
    pub cache_bust: bool,

    /// Resolve per round instead of pinning the preflight's address
    #[arg(long = "no-pin-ip", help_heading = "Request")]
    pub no_pin_ip: bool,

    /// Use IPv4 only
    #[arg(short = '4', conflicts_with = "ipv6", help_heading = "Request")]
    pub ipv4: bool,

    /// Use IPv6 only
    #[arg(short = '6', help_heading = "Request")]
    pub ipv6: bool,

    /// Skip certificate verification
    #[arg(short = 'k', long, help_heading = "Request")]
    pub insecure: bool,

    /// Extra request header, repeatable; no control character in it but a tab
    #[arg(short = 'H', long = "header", value_name = "'N: v'", action = ArgAction::Append, help_heading = "Request")]
    pub headers: Vec<String>,

    /// Trust the CA certificates in this PEM file (at most 4 MiB) instead of the system's
    #[arg(long, value_name = "FILE", help_heading = "Request")]
    pub cacert: Option<std::path::PathBuf>,

    /// TLS session resumption across cold probes: on (default) or off (every cold handshake is full)
    #[arg(long, value_name = "on|off", value_enum, help_heading = "Request")]
    pub resume: Option<Switch>,

    /// Highest TLS version offered: 1.2 or 1.3 (the lowest is always 1.2)
    #[arg(long = "tls-max", value_name = "V", hide_possible_values = true,
          value_parser = Offering::new(connection::parse_tls_max, &connection::TLS_MAX_VALUES),
          help_heading = "Connection")]
    pub tls_max: Option<crate::probe::TlsMax>,

    /// Key-exchange groups offered, in order, OpenSSL names in any case with ',' or ':'
    /// between (X25519, P-256, X25519MLKEM768); the first gets a key share
    #[arg(long, value_name = "LIST", help_heading = "Connection")]
    pub curves: Option<String>,

    /// Use ADDR for HOST:PORT instead of looking it up (curl's HOST:PORT:ADDR[,ADDR]); repeatable
    #[arg(long, value_name = "HOST:PORT:ADDR", action = ArgAction::Append,
          help_heading = "Connection")]
    pub resolve: Vec<String>,

    /// Connect to CHOST:CPORT for requests to HOST:PORT (curl's syntax); SNI, Host and the
    /// certificate check keep the URL's host; replaces address pinning; repeatable
    #[arg(long = "connect-to", value_name = "HOST:PORT:CHOST:CPORT", action = ArgAction::Append,
          help_heading = "Connection")]
    pub connect_to: Vec<String>,

    /// Client certificate (PEM, at most 256 KiB) for a server that asks for one
    #[arg(long, value_name = "FILE", help_heading = "Connection")]
    pub cert: Option<std::path::PathBuf>,

    /// Private key for --cert (PEM, at most 256 KiB; default: read from the --cert file)
    #[arg(
        long,
        value_name = "FILE",
        requires = "cert",
        help_heading = "Connection"
    )]
    pub key: Option<std::path::PathBuf>,

    /// Send the request as TLS 1.3 early data (0-RTT) on resumed cold probes; every
    /// sample says whether the server accepted it. Only for requests safe to replay
    #[arg(long = "early-data", help_heading = "Connection")]
    pub early_data: bool,

    // The help lists every axis of `probe::AXES` (`compare::help`).
    #[arg(long, value_name = "AXIS[=A,B,..]", help = compare::help(), hide_possible_values = true,
          value_parser = Offering::new(compare::axis_text, &compare::AXIS_NAMES),
          help_heading = "Measurement")]
    pub compare: Option<String>,

    #[command(flatten)]
    pub output: output::OutputArgs,

    // Our own help flag: clap's own would tell the man page that `-h`
    // prints a summary of `--help`, and both print the same.
    /// Print help
    #[arg(short = 'h', long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// A flag that takes one of probe's own enums (`--mode`, `--order`): its
/// values are the enum's `ALL`, each by its `as_str` (the name the JSON
/// uses too), so a new variant is added in probe alone.
macro_rules! flag_values_of {
    ($($probe:ty),*) => {$(
        impl clap::ValueEnum for $probe {
            fn value_variants<'a>() -> &'a [Self] {
                &<$probe>::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.as_str()))
            }
        }
    )*};
}

flag_values_of!(ModeChoice, Order);

/// `--resume`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

/// What `--http-version` takes, as completions offer it (`1` and `2.0`
/// are accepted too).
const HTTP_VERSIONS: [&str; 3] = ["1.1", "2", "auto"];

/// `--http-version`: `1.1` (or `1`), `2` (or `2.0`), `auto`; HTTP/3 is
/// refused by name, since a user may well try it.
fn parse_http_version(v: &str) -> Result<HttpVersion, String> {
    match v {
        "auto" => Ok(HttpVersion::Auto),
        "1.1" | "1" => Ok(HttpVersion::V1_1),
        "2" | "2.0" => Ok(HttpVersion::V2),
        "3" | "3.0" => Err("--http-version 3 (HTTP/3) is not supported; use 1.1 or 2".into()),
        other => Err(format!(
            "--http-version '{other}' is not one of {}",
            HTTP_VERSIONS.join(", ")
        )),
    }
}

/// Whether a value looks like one of curl's `--write-out` formats: a
/// variable (`%{http_code}`, `%header{server}`, `%output{file}`), an escape
/// (`\n`), or a file to read the format from (`@fmt.txt`, `@-`).
fn looks_like_a_format(v: &str) -> bool {
    let variable = v.match_indices('%').any(|(at, _)| {
        v[at + 1..]
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .starts_with('{')
    });
    variable || v.contains('\\') || v.starts_with('@')
}

/// `-w`/`--timeout`, as in the original tool. curl's `-w` is its
/// `--write-out`, and a curl user may well type `-w '%{http_code}\n'`:
/// a value that looks like a format says where that flag is here.
fn parse_timeout(v: &str) -> Result<Duration, String> {
    parse_duration(v).map_err(|e| {
        if looks_like_a_format(v) {
            format!(
                "'{v}' is a format, not a duration: -w is --timeout here, as in the original \
                 tlsping; curl's -w is --write-out"
            )
        } else {
            e
        }
    })
}

/// A value parser of our own (`parse`, with our words for a refusal) that
/// also tells clap the values it takes, so that the shell completions
/// offer them instead of file names.
#[derive(Clone)]
struct Offering<P> {
    parse: P,
    names: &'static [&'static str],
}

impl<P> Offering<P> {
    const fn new(parse: P, names: &'static [&'static str]) -> Offering<P> {
        Offering { parse, names }
    }
}

impl<P: clap::builder::TypedValueParser> clap::builder::TypedValueParser for Offering<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.names
                .iter()
                .map(|&name| clap::builder::PossibleValue::new(name)),
        ))
    }
}

/// A validated invocation.
#[derive(Debug)]
pub struct Options {
    pub config: Config,
    /// What is written: the format on stdout and the files (`--svg`).
    pub output: Outputs,
    pub no_color: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// Things the user should know before the run starts.
    pub warnings: Vec<SettingWarning>,
    /// `--compare`: the axis and its values.
    pub compare: Option<crate::probe::Compare>,
    /// `--push`: the Pushgateway's URL, without a trailing `/`, and its credentials.
    pub push: Option<crate::probe::PushTarget>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    Run(Box<Options>),
    Version,
}

/// A usage error: one line for stderr (`Exit::Usage`).
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

/// The environment variables through which libcurl picks up a proxy.
pub const PROXY_VARS: [&str; 6] = [
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "HTTP_PROXY",
    "all_proxy",
    "ALL_PROXY",
];

fn proxy_in_env() -> Option<&'static str> {
    PROXY_VARS
        .into_iter()
        .find(|k| std::env::var(k).is_ok_and(|v| !v.is_empty()))
}

/// Checks what clap parsed; `matches` tells which flags the user gave.
pub fn validate(args: Args, matches: &clap::ArgMatches) -> Result<Invocation, UsageError> {
    if args.output.version {
        return Ok(Invocation::Version);
    }
    // `--compare target=A,B`: the first listed stands for the run's target.
    let listed = compare::listed_targets(args.compare.as_deref())?;
    let mut config = Config::new(run_target(&args, &listed)?);
    let mut warnings = Vec::new();
    measurement(&args, &mut config, &mut warnings)?;
    request(&args, &mut config)?;
    connection::apply(
        connection::ConnectionArgs {
            tls_max: args.tls_max,
            curves: args.curves.clone(),
            resolve: args.resolve.clone(),
            connect_to: args.connect_to.clone(),
            cert: args.cert.clone(),
            key: args.key.clone(),
            early_data: args.early_data,
        },
        &mut config,
    )?;
    let https_anywhere = config.target.https || listed.iter().any(|t| t.https);
    if !config.insecure && https_anywhere && !config.settings.calibrate {
        crate::probe::check_trust_sources(config.ca_file.as_deref()).map_err(UsageError)?;
    }
    if args.no_pin_ip && config.settings.mode == ModeChoice::Both {
        warnings.push(SettingWarning::UnpinnedBothModes);
    }
    if config.pin_ip {
        if let Some(variable) = proxy_in_env() {
            warnings.push(SettingWarning::ProxyBypassed { variable });
        }
    }
    let compare = match &args.compare {
        Some(v) => {
            let given =
                |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
            Some(compare::parse(v, &given, &config)?)
        }
        None => None,
    };
    let chosen = output::choose(&args.output, &mut config, &mut warnings)?;
    if chosen.shows_statistics()
        && config.settings.count != 0
        && config.settings.warmup >= config.settings.count
    {
        // In its old place: after the interval's, before the rest.
        let at = warnings
            .iter()
            .take_while(|w| matches!(w, SettingWarning::IntervalRaised { .. }))
            .count();
        let w = SettingWarning::WarmupCoversEveryRound {
            warmup: config.settings.warmup,
            count: config.settings.count,
        };
        warnings.insert(at, w);
    }
    Ok(Invocation::Run(Box::new(Options {
        config,
        output: chosen.outputs,
        no_color: args.output.no_color,
        quiet: args.output.quiet,
        verbose: args.output.verbose,
        warnings,
        compare,
        push: chosen.push,
    })))
}

/// The URL the run measures: `--calibrate`'s own server, the first of
/// `--compare target=`, or the target argument.
fn run_target(
    args: &Args,
    listed: &[crate::probe::Target],
) -> Result<crate::probe::Target, UsageError> {
    if args.calibrate {
        if let Some(t) = &args.target {
            return Err(UsageError(format!(
                "--calibrate measures a server of its own on 127.0.0.1; drop the target '{t}'"
            )));
        }
        if args.cacert.is_some() {
            return Err(UsageError(
                "--calibrate trusts only its own server's certificate; drop --cacert".into(),
            ));
        }
        if args.ipv6 {
            return Err(UsageError(
                "--calibrate serves on 127.0.0.1 (IPv4); drop -6".into(),
            ));
        }
        // The port is the server's, known once it listens; `run` sets it.
        return target::target_arg(CALIBRATION_TARGET).map_err(UsageError);
    }
    match (listed.first(), &args.target) {
        (Some(first), None) => Ok(first.clone()),
        (_, Some(raw)) => target::target_arg(raw).map_err(UsageError),
        (None, None) => Err(UsageError(
            "a target is required: tlsping [flags] <host|url>".into(),
        )),
    }
}

/// The measurement flags: rounds, interval (raised to its floor), timeout,
/// modes, order, warmup.
fn measurement(
    args: &Args,
    config: &mut Config,
    warnings: &mut Vec<SettingWarning>,
) -> Result<(), UsageError> {
    config.settings.count = args.count;
    config.settings.interval = args.interval;
    if config.settings.interval < INTERVAL_FLOOR {
        warnings.push(SettingWarning::IntervalRaised {
            asked: args.interval,
            floor: INTERVAL_FLOOR,
        });
        config.settings.interval = INTERVAL_FLOOR;
    }
    // libcurl counts in milliseconds, and 0 would mean "no timeout at all".
    if args.timeout < Duration::from_millis(1) {
        return Err(UsageError("the timeout must be at least 1ms".into()));
    }
    if args.timeout > MAX_TIMEOUT {
        return Err(UsageError("the timeout can be at most 1h".into()));
    }
    config.settings.timeout = args.timeout;
    config.settings.mode = args.mode;
    config.settings.order = args.order;
    config.settings.warmup = args.warmup;
    config.settings.calibrate = args.calibrate;
    Ok(())
}

/// The request flags: method, HTTP version, headers, address pinning and
/// family, trust and resumption.
fn request(args: &Args, config: &mut Config) -> Result<(), UsageError> {
    if let Some(m) = &args.method {
        if !crate::text::is_token(m) {
            return Err(UsageError(format!("'{m}' is not a valid HTTP method")));
        }
        config.method = Some(m.to_ascii_uppercase());
    }
    config.http_version = args.http_version.unwrap_or(HttpVersion::Auto);
    config.cache_bust = args.cache_bust;
    config.pin_ip = !args.no_pin_ip;
    config.ip_version = match (args.ipv4 || args.calibrate, args.ipv6) {
        (true, _) => IpVersion::V4,
        (_, true) => IpVersion::V6,
        _ => IpVersion::Any,
    };
    config.insecure = args.insecure;
    config.headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<_, _>>()
        .map_err(UsageError)?;
    config.settings.resume = args.resume != Some(Switch::Off);
    config.ca_file = args.cacert.clone();
    Ok(())
}

/// Parses the process arguments. `Err` is a run that ends here: a usage
/// error, or the text `--help` asked for.
pub fn parse_from<I, T>(argv: I) -> Result<Invocation, Exit>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let usage = |message: String| Exit::Usage {
        message,
        help_hint: true,
    };
    let parsed = Args::command()
        .try_get_matches_from(argv)
        .and_then(|matches| {
            // As `Parser::try_parse_from` does; the matches also say which
            // flags the user gave (`--compare` checks them).
            let args =
                Args::from_arg_matches(&matches).map_err(|e| e.format(&mut Args::command()))?;
            Ok((args, matches))
        });
    match parsed {
        // `--generate`: text asked for, as with `--help` (no target needed).
        Ok((args, matches)) => match args.output.generate {
            Some(kind) => Err(Exit::Shown(docs::generate(kind))),
            None => validate(args, &matches).map_err(|UsageError(msg)| usage(msg)),
        },
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                Err(Exit::Shown(e.render().to_string()))
            }
            _ => Err(usage(clap_error::one_line(&e))),
        },
    }
}

//! The output flags: what goes to stdout (the table or one machine format),
//! the files written when the run ends (`--svg`, `--openmetrics`), and
//! `--push` with its labels and credentials. Checked before anything is
//! dialed: two formats that both want stdout, a file that could only fail at
//! the end, or a push that cannot be made are usage errors (exit 3).

use clap::ArgAction;

use crate::files::Destination;
use crate::probe::{Config, PushTarget, SettingWarning};
use crate::render::{Format, Outputs};

use super::{metrics, UsageError};

/// The output flags, in the order `--help` lists them.
#[derive(clap::Args, Debug)]
pub struct OutputArgs {
    /// One JSON document on stdout when the run ends
    #[arg(long, conflicts_with = "csv", help_heading = "Output")]
    pub json: bool,

    /// One CSV row per sample, streamed
    #[arg(long, conflicts_with = "jsonl", help_heading = "Output")]
    pub csv: bool,

    /// With --csv: put t_ms and at right after round, so a spreadsheet opens with
    /// round, time, mode (by default every column of the Go tlsping's CSV keeps its place)
    #[arg(long = "csv-time-first", requires = "csv", help_heading = "Output")]
    pub csv_time_first: bool,

    /// JSON lines, streamed: a run line, one line per sample as it finishes, a summary line
    #[arg(long, conflicts_with = "json", help_heading = "Output")]
    pub jsonl: bool,

    /// Print FORMAT for every sample as it finishes, in place of the table: curl's -w
    /// syntax, variables and units (%{time_connect}, %{http_code}, %header{name},
    /// %{json}, ...) plus %{mode}, %{round}, %{variant}, %{warmup} and %{tlsping_json};
    /// @FILE reads the format from a file, @- from stdin (at most 64 KiB)
    #[arg(long = "write-out", value_name = "FORMAT",
          conflicts_with_all = ["json", "csv", "jsonl"], help_heading = "Output")]
    pub write_out: Option<String>,

    /// Also write a picture of the run to FILE when it ends (SVG: a stacked bar per probe,
    /// the cold and warm distributions), whatever the output format; `-` writes it on
    /// stdout in place of the table
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub svg: Option<std::path::PathBuf>,

    /// Also write the run's figures in the OpenMetrics text format to FILE when it ends
    /// (to a temporary name, then renamed: a collector never reads half of it; a file
    /// replaced keeps its owner, group and mode); `-` writes them on stdout in place of the
    /// table
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub openmetrics: Option<std::path::PathBuf>,

    /// Send the same figures to a Prometheus Pushgateway when the run ends: HTTP PUT to
    /// URL/metrics/job/tlsping/target@base64/<URL>/<label>/<value>..., 5s timeout; a failed
    /// push is a warning and makes an exit of 0 or 1 a 2. It takes the probes' way: direct
    /// while they dial the pinned address; with --no-pin-ip or --connect-to, through the
    /// proxy they use (chosen by the target's URL, never the push's), or direct when they
    /// use none or NO_PROXY names the Pushgateway
    #[arg(long, value_name = "URL", value_hint = clap::ValueHint::Url, help_heading = "Output")]
    pub push: Option<String>,

    /// The Pushgateway's USER:PASSWORD (HTTP basic), from the first line of FILE (a regular
    /// file, at most 4 KiB) rather than the URL, where every local user could read it;
    /// TLSPING_PUSH_AUTH may hold it too
    #[arg(
        long = "push-auth-file",
        value_name = "FILE",
        requires = "push",
        help_heading = "Output"
    )]
    pub push_auth_file: Option<std::path::PathBuf>,

    /// Add NAME=VALUE to every series of --openmetrics and --push (and to the push's
    /// grouping key), e.g. the vantage point; repeatable, at most 16
    #[arg(long, value_name = "NAME=VALUE", action = ArgAction::Append,
          value_hint = clap::ValueHint::Other, help_heading = "Output")]
    pub label: Vec<String>,

    /// Never colour the output (NO_COLOR is honoured too)
    #[arg(long = "no-color", help_heading = "Output")]
    pub no_color: bool,

    /// Only totals and status codes in the table
    #[arg(short = 'q', long, conflicts_with = "verbose", help_heading = "Output")]
    pub quiet: bool,

    /// Residual, TLS details, paired gain and counters
    #[arg(short = 'v', long, help_heading = "Output")]
    pub verbose: bool,

    /// Print the version and the libraries compiled in
    #[arg(long, help_heading = "Output")]
    pub version: bool,

    /// Print the man page (man) or a shell's completion script on stdout, and exit; no
    /// target: tlsping --generate man | man -l -
    #[arg(
        long,
        value_name = "KIND",
        value_enum,
        exclusive = true,
        help_heading = "Output"
    )]
    pub generate: Option<super::docs::Generate>,
}

/// What the output flags settle.
pub(super) struct Chosen {
    pub outputs: Outputs,
    pub push: Option<PushTarget>,
}

impl Chosen {
    /// Whether anything the run writes shows statistics: `--write-out` and
    /// `--csv` print samples alone.
    pub fn shows_statistics(&self) -> bool {
        !matches!(
            self.outputs.stdout,
            Format::WriteOut(_) | Format::Csv { .. }
        ) || self.outputs.svg.is_some()
            || self.outputs.openmetrics.is_some()
            || self.push.is_some()
    }
}

/// Checks the output flags against each other, and sets what the probes
/// must read for `--write-out` (`config.capture`).
pub(super) fn choose(
    args: &OutputArgs,
    config: &mut Config,
    warnings: &mut Vec<SettingWarning>,
) -> Result<Chosen, UsageError> {
    let write_out = match &args.write_out {
        Some(arg) => {
            let format = crate::render::write_out::parse(arg).map_err(UsageError)?;
            // The probes read only what the format prints.
            config.capture = format.needs();
            Some(format)
        }
        None => None,
    };
    let labels = metrics::parse_labels(&args.label).map_err(UsageError)?;
    let push = args
        .push
        .as_deref()
        .map(|url| {
            let route = metrics::push_route(config);
            metrics::parse_push(url, args.push_auth_file.as_deref(), route)
        })
        .transpose()
        .map_err(UsageError)?;
    if args.push.as_deref().is_some_and(metrics::has_password) {
        warnings.push(SettingWarning::PushPasswordInUrl);
    }
    // `-` is standard output for both files.
    let dash = |given: &Option<std::path::PathBuf>| given.as_deref() == Some(STDOUT_NAME.as_ref());
    let metrics_on_stdout = dash(&args.openmetrics);
    let svg_on_stdout = dash(&args.svg);
    let openmetrics = args.openmetrics.clone().filter(|_| !metrics_on_stdout);
    let svg = args.svg.clone().filter(|_| !svg_on_stdout);
    if !labels.is_empty() && openmetrics.is_none() && push.is_none() && !metrics_on_stdout {
        return Err(UsageError(
            "--label labels the figures: give --openmetrics or --push too".into(),
        ));
    }
    let (svg, openmetrics) = check_destinations(svg.as_deref(), openmetrics.as_deref())?;
    let on_stdout = match (metrics_on_stdout, svg_on_stdout) {
        (true, true) => {
            return Err(UsageError(
                "--openmetrics - and --svg - both want standard output; write one of them \
                 to a file"
                    .into(),
            ))
        }
        (true, false) => Some(Format::OpenMetrics),
        (false, true) => Some(Format::Svg),
        (false, false) => None,
    };
    let stdout = stdout_format(args, write_out, on_stdout)?;
    Ok(Chosen {
        outputs: Outputs {
            stdout,
            svg,
            openmetrics,
            labels,
        },
        push,
    })
}

/// The name that means standard output to `--openmetrics` and `--svg`
/// (`./-` names a file called `-`).
const STDOUT_NAME: &str = "-";

/// The one format on stdout; two that both want it are refused. `dash` is
/// the file format `-` sent there (`--openmetrics -`, `--svg -`), if any.
fn stdout_format(
    args: &OutputArgs,
    write_out: Option<crate::render::write_out::WriteOut>,
    dash: Option<Format>,
) -> Result<Format, UsageError> {
    let other_stdout = [
        (write_out.is_some(), "--write-out"),
        (args.json, "--json"),
        (args.jsonl, "--jsonl"),
        (args.csv, "--csv"),
    ];
    if let Some(dash) = dash {
        let flag = if dash == Format::Svg {
            "--svg -"
        } else {
            "--openmetrics -"
        };
        if let Some((_, other)) = other_stdout.iter().find(|(given, _)| *given) {
            return Err(UsageError(format!(
                "{flag} and {other} both want standard output; write the {} to a file",
                if dash == Format::Svg {
                    "picture"
                } else {
                    "figures"
                }
            )));
        }
        return Ok(dash);
    }
    Ok(if let Some(format) = write_out {
        Format::WriteOut(format)
    } else if args.json {
        Format::Json
    } else if args.jsonl {
        Format::Jsonl
    } else if args.csv {
        Format::Csv {
            time_first: args.csv_time_first,
        }
    } else {
        Format::Table
    })
}

/// The files the run writes when it ends (`--svg`, `--openmetrics`), found
/// fit now rather than after the whole run, and their directories held
/// from now on (`files::Destination`): each a regular file of ours or a
/// new one in an existing directory we may write in, and not one file
/// twice (the same name, or two hard links of one file).
fn check_destinations(
    svg: Option<&std::path::Path>,
    openmetrics: Option<&std::path::Path>,
) -> Result<(Option<Destination>, Option<Destination>), UsageError> {
    let open = |flag: &str, path: Option<&std::path::Path>| {
        let Some(path) = path else { return Ok(None) };
        Destination::open(path).map(Some).map_err(|why| {
            UsageError(format!(
                "{flag} {}: {why} (`{flag} -` writes to standard output)",
                path.display()
            ))
        })
    };
    let svg = open("--svg", svg)?;
    let openmetrics = open("--openmetrics", openmetrics)?;
    if let (Some(a), Some(b)) = (&svg, &openmetrics) {
        if a.same_file(b) {
            let names = if a.path() == b.path() {
                b.path().display().to_string()
            } else {
                // Spelled apart, or two hard links of one file.
                format!(
                    "one file, as {} and {}",
                    a.path().display(),
                    b.path().display()
                )
            };
            return Err(UsageError(format!(
                "--svg and --openmetrics both name {names}; give each its own file"
            )));
        }
    }
    Ok((svg, openmetrics))
}

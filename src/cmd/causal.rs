//! `ccc causal`: resolves the command's flags into the profiler's
//! [`Options`](crate::causal::driver::Options) and hands them, with a way to
//! start the server `serve`'s flags describe, to the driver in
//! [`crate::causal::driver`], which does the rest.

use crate::cmd::args::*;
use crate::cmd::serve::ServerArgs;
use crate::error::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Profile `serve` under live load: which code is worth optimizing?
///
/// Runs the server, drives it (or waits for your load), and applies virtual
/// speedups (Coz's method) to its instrumented sites: while a site is
/// "sped up" by P%, everything else is delayed by P% of each visit. The
/// change in served assets per second predicts what a real P% speedup of
/// that site would gain. Prints a table; --json-out, --coz-out (for Coz's
/// viewer) and --plot write the full results.
#[derive(Debug, Args)]
pub struct CausalArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,

    /// Sites to profile, comma-separated [default: all].
    #[arg(long, value_delimiter = ',', value_name = "SITE,...", value_parser = site_parser())]
    pub(crate) sites: Vec<u16>,

    /// Virtual speedups in percent, comma-separated (0 is always added).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,25,50",
        value_name = "PCT,...",
        value_parser = parse_speedup
    )]
    pub(crate) speedups: Vec<u8>,

    /// Rounds over every site and speedup (at least 1).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = parse_rounds)]
    pub(crate) rounds: usize,

    /// Shortest measurement window of one experiment.
    #[arg(long, default_value = "500ms", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub(crate) window: Duration,

    /// Longest window, when progress is slow (at least --window).
    #[arg(long, default_value = "4s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub(crate) max_window: Duration,

    /// Load before the first experiment (warms caches, measures the rate).
    #[arg(long, default_value = "2s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub(crate) warmup: Duration,

    /// Pause after each experiment starts, before measuring.
    #[arg(long, default_value = "100ms", value_parser = parse_duration, value_name = "DURATION")]
    pub(crate) settle: Duration,

    /// Progress counts an experiment needs to be reliable (at least 5, the
    /// least Coz's viewer plots).
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = parse_min_delta)]
    pub(crate) min_delta: u64,

    /// Seed of the experiment order (printed, so a run can be repeated).
    #[arg(long, value_name = "N", value_parser = parse_seed)]
    pub(crate) seed: Option<u64>,

    /// `builtin:N`: N keep-alive clients of ccc's own; `external`: wait for
    /// someone else's load (wrk, oha, ...).
    #[arg(
        long,
        default_value = "builtin:8",
        value_name = "builtin:N|external",
        value_parser = LoadValues,
        hide_possible_values = true
    )]
    pub(crate) load: LoadArg,

    /// URL list for the built-in load, one per line, used in order
    /// [default: every asset, 80% of requests on the first 50].
    #[arg(long, value_name = "FILE")]
    pub(crate) urls: Option<PathBuf>,

    /// How a request from a client moves the worker's virtual clock.
    #[arg(long, value_enum, default_value = "conn")]
    pub(crate) external_wake: ExternalWakeArg,

    /// What times a visit of the selected site: elapsed time less the
    /// profiler's own pauses (`wall`), or the thread's CPU time (`cpu`), for
    /// sites that block on what optimizing them would not shorten.
    #[arg(long, value_enum, default_value = "wall")]
    pub(crate) site_clock: SiteClockArg,

    /// What idle cores do while profiling: `spin` keeps each awake with a
    /// lowest-priority (SCHED_IDLE) spinner, so waking a thread costs the
    /// same whether the profiler pauses threads or not; `sleep` leaves
    /// them to the OS (less power, predictions that run low).
    #[arg(long, value_enum, default_value = "spin")]
    pub(crate) idle_cores: IdleCoresArg,

    /// Write every cell, the summary and the ledger as JSON (`-` for
    /// stdout), as --coz-out writes Coz's profile.
    #[arg(long, value_name = "FILE")]
    pub(crate) json_out: Option<PathBuf>,

    /// Write a profile Coz's viewer loads.
    #[arg(long, value_name = "FILE")]
    pub(crate) coz_out: Option<PathBuf>,

    /// Format of --coz-out.
    #[arg(long, value_enum, default_value = "tsv")]
    pub(crate) coz_format: CozFormatArg,

    /// Append to --coz-out instead of replacing it.
    #[arg(long)]
    pub(crate) coz_append: bool,

    /// Print the delay-accounting audit: per cell, or per cell and thread.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "summary", value_name = "LEVEL")]
    pub(crate) ledger: Option<LedgerArg>,

    /// Exit 4 when the ledger audit finds an error.
    #[arg(long)]
    pub(crate) strict: bool,

    /// Draw the speedup curves as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
}

impl CheckArgs for CausalArgs {
    const COMMAND: &str = "causal";

    fn check(&self) -> Result<(), String> {
        if self.max_window < self.window {
            return Err(format!(
                "--max-window {} is shorter than --window {}; the longest window must be at least the shortest",
                humantime::format_duration(self.max_window),
                humantime::format_duration(self.window),
            ));
        }
        if self.load == LoadArg::External && self.urls.is_some() {
            return Err(
                "--urls lists what the built-in load requests; with --load external your own load generator chooses"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Where `ccc causal`'s load comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadArg {
    /// This many keep-alive clients of ccc's own.
    Builtin(usize),
    /// Someone else's load generator.
    External,
}

impl std::str::FromStr for LoadArg {
    type Err = String;

    fn from_str(s: &str) -> Result<LoadArg, String> {
        if s == "external" {
            return Ok(LoadArg::External);
        }
        let expected = "expected `external` or `builtin:N` with N clients, like builtin:8";
        let n = s.strip_prefix("builtin:").ok_or(expected)?;
        match n.parse::<usize>() {
            Ok(0) => Err("the built-in load needs at least 1 client, like builtin:8".into()),
            Ok(n) => Ok(LoadArg::Builtin(n)),
            Err(_) => Err(format!("`{n}` is not a number of clients; {expected}")),
        }
    }
}

/// `--load`'s values: parsed as [`LoadArg`] is, and offered to shell
/// completion in both forms (`builtin:N` takes any N; the help shows the
/// value name instead).
#[derive(Clone)]
struct LoadValues;

impl clap::builder::TypedValueParser for LoadValues {
    type Value = LoadArg;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<LoadArg, clap::Error> {
        clap::builder::StringValueParser::new()
            .try_map(|s| s.parse::<LoadArg>())
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let values = ["builtin:8", "external"];
        Some(Box::new(
            values.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

impl std::fmt::Display for LoadArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadArg::Builtin(n) => write!(f, "builtin:{n}"),
            LoadArg::External => f.write_str("external"),
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ExternalWakeArg {
    /// Memo of the last response per connection (exact for closed loops).
    Conn,
    /// Idle workers absorb nothing (Coz's rule for blocking I/O).
    Owe,
    /// Idle workers skip all delay (over-predicts closed loops).
    Skip,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum SiteClockArg {
    /// Elapsed time, less pauses and idle waits.
    Wall,
    /// The thread's CPU time (leaves out blocking and preemption).
    Cpu,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum IdleCoresArg {
    /// A SCHED_IDLE spinner per CPU keeps idle cores out of sleep states.
    Spin,
    /// Idle cores sleep as the OS decides.
    Sleep,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum CozFormatArg {
    /// Tab-separated, read by every viewer version.
    Tsv,
    /// JSON lines.
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LedgerArg {
    Summary,
    Full,
}

#[cfg(not(feature = "causal"))]
pub(crate) fn run(_db: &Path, _args: CausalArgs) -> Result<ExitCode> {
    eprintln!(
        "error: this ccc was built without the `causal` feature, so it has no profiler\n  hint: rebuild with the default features: cargo build --release"
    );
    Ok(ExitCode::from(2))
}

#[cfg(feature = "causal")]
pub(crate) fn run(db: &Path, args: CausalArgs) -> Result<ExitCode> {
    let options = options(&args);
    // A free port unless --port names one: the load is ccc's own.
    let mut server_args = args.server;
    server_args.port.get_or_insert(0);
    crate::causal::driver::run(db, &options, || {
        super::serve::open_access_log(&server_args)?;
        crate::serve::Server::start(super::serve::config(db, &server_args)?)
    })
}

/// What the flags ask of the driver, in its own terms.
#[cfg(feature = "causal")]
fn options(args: &CausalArgs) -> crate::causal::driver::Options {
    use crate::causal::driver::awake::IdleCores;
    use crate::causal::driver::sweep::Timing;
    use crate::causal::driver::{LedgerDetail, LoadSource, Options, coz};
    use crate::causal::engine::{ExternalWake, SiteClock};
    Options {
        sites: args.sites.clone(),
        speedups: args.speedups.clone(),
        rounds: args.rounds,
        seed: args.seed,
        timing: Timing {
            warmup: args.warmup,
            window: args.window,
            max_window: args.max_window,
            settle: args.settle,
            min_delta: args.min_delta,
            ..Timing::default()
        },
        load: match args.load {
            LoadArg::Builtin(n) => LoadSource::Builtin(n),
            LoadArg::External => LoadSource::External,
        },
        urls: args.urls.clone(),
        external_wake: match args.external_wake {
            ExternalWakeArg::Conn => ExternalWake::Conn,
            ExternalWakeArg::Owe => ExternalWake::Owe,
            ExternalWakeArg::Skip => ExternalWake::Skip,
        },
        site_clock: match args.site_clock {
            SiteClockArg::Wall => SiteClock::Wall,
            SiteClockArg::Cpu => SiteClock::Cpu,
        },
        idle_cores: match args.idle_cores {
            IdleCoresArg::Spin => IdleCores::Spin,
            IdleCoresArg::Sleep => IdleCores::Sleep,
        },
        json_out: args.json_out.clone(),
        coz_out: args.coz_out.clone(),
        coz_format: match args.coz_format {
            CozFormatArg::Tsv => coz::Format::Tsv,
            CozFormatArg::Jsonl => coz::Format::Jsonl,
        },
        coz_append: args.coz_append,
        ledger: args.ledger.map(|level| match level {
            LedgerArg::Summary => LedgerDetail::Summary,
            LedgerArg::Full => LedgerDetail::Full,
        }),
        strict: args.strict,
        plot: args.plot.clone(),
    }
}

//! `ccc causal`: resolves the command's flags into the profiler's
//! [`Options`](crate::causal::driver::Options) and hands them, with a way to
//! start the server `serve`'s flags describe, to the driver in
//! [`crate::causal::driver`], which does the rest.

use crate::cli::CausalArgs;
use crate::error::Result;
use std::path::Path;
use std::process::ExitCode;

#[cfg(not(feature = "causal"))]
pub fn run(_db: &Path, _args: CausalArgs) -> Result<ExitCode> {
    eprintln!(
        "error: this ccc was built without the `causal` feature, so it has no profiler\n  hint: rebuild with the default features: cargo build --release"
    );
    Ok(ExitCode::from(2))
}

#[cfg(feature = "causal")]
pub fn run(db: &Path, args: CausalArgs) -> Result<ExitCode> {
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
    use crate::cli::{
        CozFormatArg, ExternalWakeArg, IdleCoresArg, LedgerArg, LoadArg, SiteClockArg,
    };
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

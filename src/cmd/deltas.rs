//! `ccc deltas [PKG...]`: makes the deltas a catalog lacks (versions
//! published before ccc made them, or with `--no-deltas`), package by
//! package, version by version (`catalog::make_deltas::catch_up`), and
//! says what each version gained.
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::outcome;
use crate::output::{self, count};
use crate::units::human_size;
use clap::Args;
use indicatif::ProgressBar;
use std::path::Path;
use std::process::ExitCode;

/// Make the deltas the catalog lacks, for versions published before ccc
/// made them or without them (`ccc publish --no-deltas`).
///
/// Goes through every version of each package, oldest first, as publish
/// does for the version it writes: each script, stylesheet, JSON and wasm
/// file is coded against the same file (or hashed-name family) in the
/// newest earlier version and in the one `latest` names when it is older
/// (dcb and dcz, RFC 9842), kept where clearly smaller than its brotli
/// stream. Pairs the catalog holds are not made again, so a second run
/// makes nothing. Each version is one transaction; a running `ccc serve`
/// offers the new deltas within a second.
#[derive(Debug, Args)]
pub struct DeltasArgs {
    /// The packages to bring up to date [default: every package].
    #[arg(value_name = "PKG", value_parser = parse_package)]
    pub(crate) packages: Vec<String>,

    /// Coding threads, at least 1 [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub(crate) jobs: Option<usize>,

    /// Print no progress.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

pub(crate) fn run(db: &Path, args: DeltasArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadWrite)?;
    let every = catalog.package_names()?;
    let packages = match args.packages.is_empty() {
        true => every,
        false => {
            if let Some(missing) = args.packages.iter().find(|p| !every.contains(p)) {
                return Err(Error::package_not_found(missing.clone()));
            }
            args.packages
        }
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let bar = ProgressBar::with_draw_target(None, output::progress_target(args.quiet));
    bar.set_style(output::spinner_style());
    bar.set_prefix("Coding");
    let (mut deltas, mut bytes) = (0, 0);
    for package in &packages {
        let progress = |version: &str, done: u64, total: u64| {
            bar.set_message(format!("{package}@{version}: {done}/{total} pairs"));
        };
        let caught_up = crate::catalog::make_deltas::catch_up(&catalog, package, jobs, &progress);
        bar.suspend(|| -> Result<()> {
            for version in caught_up? {
                deltas += version.made.delta_count;
                bytes += version.made.delta_bytes;
                if let Some(line) = outcome::deltas_line(&version.made) {
                    output::print(format_args!("{package}@{}\n{line}", version.version))?;
                }
            }
            Ok(())
        })?;
    }
    bar.finish_and_clear();
    output::print(format_args!(
        "{} made ({}) for {}",
        count(deltas, "delta"),
        human_size(bytes),
        count(packages.len() as u64, "package")
    ))?;
    Ok(ExitCode::SUCCESS)
}

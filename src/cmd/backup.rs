//! `ccc backup OUT`: a consistent copy of the catalog, safe while it is
//! served and published to (see `catalog::backup`).
use crate::catalog::{Access, Catalog};
use crate::error::Result;
use crate::output::{self, count};
use crate::units::human_size;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Copy the catalog to OUT, consistently, while it is served or published to.
///
/// The copy is made with SQLite's online backup API inside one read
/// transaction, so it holds the catalog exactly as one commit left it, and
/// publishes and the server carry on meanwhile. It is written to a hidden
/// temporary file beside OUT and renamed into place once complete and on
/// disk: OUT is never half-written. An existing OUT is refused unless
/// --force. Check the copy with `ccc --db OUT verify`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write.
    #[arg(value_name = "OUT")]
    pub(crate) out: PathBuf,

    /// Replace OUT if it exists.
    #[arg(long)]
    pub(crate) force: bool,

    /// Print no progress.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(db: &Path, args: BackupArgs) -> Result<ExitCode> {
    let mut catalog = Catalog::open(db, Access::ReadOnly)?;
    catalog.stop_on_interrupt()?;
    let bar = output::byte_bar(0, "Backing up", args.quiet || args.json);
    let report = catalog.backup(&args.out, args.force, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        output::print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::print(format_args!(
        "Backed up {} to {}{}: {}, {}, {}",
        db.display(),
        report.path.display(),
        if report.replaced { " (replaced)" } else { "" },
        count(report.package_count, "package"),
        count(report.version_count, "version"),
        count(report.file_count, "file"),
    ))?;
    output::print(format_args!("{} written", human_size(report.written_bytes)))?;
    Ok(ExitCode::SUCCESS)
}

//! `ccc backup OUT`: a consistent copy of the catalog, safe while it is
//! served and published to (see `catalog::backup`).

use crate::catalog::{Access, Catalog};
use crate::cli::BackupArgs;
use crate::error::Result;
use crate::output::{self, count};
use crate::units::human_size;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: BackupArgs) -> Result<ExitCode> {
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

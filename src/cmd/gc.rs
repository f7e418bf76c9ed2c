//! `ccc gc`: prune versions, drop orphan blobs, reclaim space.

use crate::catalog::gc::Options;
use crate::catalog::{Access, Catalog};
use crate::cli::GcArgs;
use crate::error::Result;
use crate::output;
use crate::units::{human_size, human_time};
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: GcArgs) -> Result<ExitCode> {
    let mut catalog = Catalog::open(db, Access::ReadWrite)?;
    let report = catalog.gc(&Options {
        keep: args.keep,
        older_than: args.older_than,
        dry_run: args.dry_run,
    })?;
    if args.json {
        output::print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if report.dry_run {
        "Would remove"
    } else {
        "Removed"
    };
    if !report.versions.is_empty() {
        let mut table = output::table(&["version", "published", "files", "size"], &[2, 3]);
        for v in &report.versions {
            table.add_row(vec![
                format!("{}@{}", v.package, v.version),
                human_time(v.published_at),
                v.file_count.to_string(),
                human_size(v.raw_bytes),
            ]);
        }
        output::print(table)?;
    }
    output::print(format_args!(
        "{verb} {} versions, {} packages, {} blobs ({} stored)",
        report.versions.len(),
        report.packages_removed.len(),
        report.blobs_removed,
        human_size(report.blob_bytes_removed),
    ))?;
    if !report.dry_run {
        output::print(format_args!(
            "Catalog file: {} -> {}",
            human_size(report.file_bytes_before),
            human_size(report.file_bytes_after),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

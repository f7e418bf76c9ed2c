//! `ccc export [PKG[@VERSION]] DIR`: the catalog as plain files with
//! compressed siblings (`catalog::export`), then a summary: skipped siblings
//! as warnings, counts and bytes as a line or `--json`.

use crate::catalog::export;
use crate::catalog::query::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cli::ExportArgs;
use crate::error::{Error, Result};
use crate::output;
use crate::spec::Target;
use crate::units::human_size;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: ExportArgs) -> Result<ExitCode> {
    let out = args.dir;
    let mut catalog = Catalog::open(db, Access::ReadOnly)?;
    catalog.stop_on_interrupt()?;
    let versions = select(&catalog, args.target.as_ref())?;
    let report = export::export(&catalog, &versions, &out)?;
    if args.json {
        return output::print_json(&report).map(|()| ExitCode::SUCCESS);
    }
    for skipped in &report.siblings_skipped {
        eprintln!(
            "warning: skipped {}: {}; servers send the plain file instead",
            out.join(&skipped.path).display(),
            skipped.reason
        );
    }
    let mut replaced = String::new();
    if report.versions_replaced > 0 {
        replaced = format!(" ({} replaced)", report.versions_replaced);
    }
    output::print(format_args!(
        "Exported {} to {}{replaced}: {}, {} written, {} skipped; {}",
        count(report.versions, "version"),
        out.display(),
        count(report.files, "file"),
        count(report.siblings_written, "compressed sibling"),
        report.siblings_skipped.len(),
        human_size(report.bytes_written)
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `1 file`, `2 files`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn select(catalog: &Catalog, target: Option<&Target>) -> Result<Vec<VersionRow>> {
    let Some(target) = target else {
        let mut all = Vec::new();
        for p in catalog.packages()? {
            all.extend(catalog.versions(&p.name)?);
        }
        return Ok(all);
    };
    match &target.version {
        None => {
            let versions = catalog.versions(&target.package)?;
            if versions.is_empty() {
                return Err(Error::PackageNotFound(target.package.clone()));
            }
            Ok(versions)
        }
        Some(selector) => Ok(vec![catalog.resolve(&target.package, selector)?]),
    }
}

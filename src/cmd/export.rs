//! `ccc export [PKG[@VERSION]] DIR`: the catalog as plain files with
//! compressed siblings (`catalog::export`), then a summary: skipped siblings
//! as warnings, counts and bytes as a line or `--json`.

use crate::catalog::export;
use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cli::ExportArgs;
use crate::error::{Error, Result};
use crate::output::{self, count};
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
    if report.replaced_version_count > 0 {
        replaced = format!(" ({} replaced)", report.replaced_version_count);
    }
    output::print(format_args!(
        "Exported {} to {}{replaced}: {}, {} written, {} skipped; {}",
        count(report.version_count, "version"),
        out.display(),
        count(report.file_count, "file"),
        count(report.sibling_count, "compressed sibling"),
        report.siblings_skipped.len(),
        human_size(report.written_bytes)
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn select(catalog: &Catalog, target: Option<&Target>) -> Result<Vec<VersionRow>> {
    let Some(target) = target else {
        let mut all = Vec::new();
        for name in catalog.package_names()? {
            all.extend(catalog.versions(&name)?);
        }
        return Ok(all);
    };
    match &target.version {
        None => {
            let versions = catalog.versions(&target.package)?;
            if versions.is_empty() {
                return Err(Error::package_not_found(target.package.clone()));
            }
            Ok(versions)
        }
        Some(selector) => Ok(vec![catalog.resolve(&target.package, selector)?]),
    }
}

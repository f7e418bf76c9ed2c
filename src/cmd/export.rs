//! `ccc export [PKG[@VERSION]] DIR`: the catalog as plain files with
//! compressed siblings (`catalog::export`), then a summary: skipped siblings
//! as warnings, counts and bytes as a line or `--json`.
use crate::catalog::export;
use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::output::{self, count};
use crate::spec::Target;
use crate::units::human_size;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write versions out as plain files with precompressed `.gz` and `.br` siblings.
///
/// DIR/PKG/VERSION/PATH holds the original bytes and, for files stored
/// gzipped, PATH.gz holds the stored gzip stream and PATH.br the brotli
/// stream when publish kept one: the layout nginx (`gzip_static on`,
/// `brotli_static on`) and object-store CDNs serve. Without PKG, every
/// version of every package; with PKG, its versions; with PKG@VERSION, one.
///
/// All or nothing: everything is written into a hidden folder in DIR first,
/// then each version folder is moved into place; on any failure DIR is left
/// as it was. DIR may hold other files: only the exported version folders
/// are created, or replaced whole when they exist. A sibling that cannot
/// exist (its name is too long, or the version has a file of that name) is
/// skipped with a warning; servers send the plain file instead.
#[derive(Debug, Args)]
#[command(allow_missing_positional = true)]
pub struct ExportArgs {
    /// What to export: PKG or PKG@VERSION [default: everything].
    #[arg(value_name = "PKG[@VERSION]", value_parser = parse_package_or_version)]
    pub(crate) target: Option<Target>,

    /// The directory to write into.
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,

    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(db: &Path, args: ExportArgs) -> Result<ExitCode> {
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

//! `ccc ls [PKG[@VERSION]]`: packages, a package's versions, or a version's
//! files.

use super::resolve_version;
use crate::catalog::{Access, Catalog};
use crate::cli::LsArgs;
use crate::error::{Error, Result};
use crate::output;
use crate::units::{human_size, human_time, ratio};
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: LsArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let Some(target) = &args.target else {
        return packages(&catalog, args.json);
    };
    if target.version.is_none() {
        return versions(&catalog, &target.package, args.json);
    }
    let version = resolve_version(&catalog, target)?;
    let files = catalog.files(version.id)?;
    if args.json {
        output::print_json(&files)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["path", "type", "size", "stored", "ratio"], &[2, 3, 4]);
    for f in &files {
        table.add_row(vec![
            f.path.clone(),
            f.content_type.clone(),
            human_size(f.raw_size),
            human_size(f.stored_size),
            ratio(f.stored_size, f.raw_size),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

fn packages(catalog: &Catalog, json: bool) -> Result<ExitCode> {
    let packages = catalog.packages()?;
    if json {
        output::print_json(&packages)?;
        return Ok(ExitCode::SUCCESS);
    }
    if packages.is_empty() {
        output::print(
            "the catalog is empty; add a version with `ccc publish <pkg>@<version> <DIR>`",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(
        &["package", "versions", "latest", "files", "stored"],
        &[1, 3, 4],
    );
    for p in &packages {
        table.add_row(vec![
            p.name.clone(),
            p.versions.to_string(),
            p.latest.clone().unwrap_or_default(),
            p.latest_files.to_string(),
            human_size(p.stored_bytes),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

fn versions(catalog: &Catalog, package: &str, json: bool) -> Result<ExitCode> {
    let versions = catalog.versions(package)?;
    if versions.is_empty() {
        return Err(Error::PackageNotFound(package.to_string()));
    }
    if json {
        output::print_json(&versions)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(
        &["version", "published", "files", "size", "stored"],
        &[2, 3, 4],
    );
    for v in &versions {
        table.add_row(vec![
            v.version.to_string(),
            human_time(v.published_at),
            v.file_count.to_string(),
            human_size(v.raw_bytes),
            human_size(v.stored_bytes),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

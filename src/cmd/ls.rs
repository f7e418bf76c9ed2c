//! `ccc ls [PKG[@VERSION]]`: packages, a package's versions (with the
//! dist-tags that name them), or a version's files. A tag or range (`app@latest`, `app@^1`) lists the exact version it
//! resolves to, named in the title and in the JSON.

use super::{resolve_version, version_title};
use crate::catalog::{Access, Catalog};
use crate::cli::LsArgs;
use crate::error::{Error, Result};
use crate::output::{self, Column, Table, count, media_type};
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
    let title = version_title(&version, target, None);
    let listing = catalog.version_files(version)?;
    if args.json {
        output::print_json(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    let v = &listing.version;
    let totals = format!(
        "{}, {} -> {} stored",
        count(v.file_count, "file"),
        human_size(v.raw_bytes),
        human_size(v.stored_bytes),
    );
    output::print_heading(&title, &totals)?;
    let mut table = Table::new(vec![
        Column::path("path"),
        Column::text("type"),
        Column::number("size"),
        Column::number("stored"),
        Column::number("ratio"),
    ]);
    for f in &listing.files {
        table.add_row([
            f.path.clone(),
            media_type(&f.content_type).to_string(),
            human_size(f.raw_bytes),
            human_size(f.stored_bytes),
            ratio(f.stored_bytes, f.raw_bytes),
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
    let mut table = Table::new(vec![
        Column::path("package"),
        Column::number("versions"),
        Column::text("latest"),
        Column::number("files"),
        Column::number("stored"),
    ]);
    for p in &packages {
        table.add_row([
            p.package.clone(),
            p.version_count.to_string(),
            p.latest.clone().unwrap_or_default(),
            p.latest_file_count.to_string(),
            human_size(p.stored_bytes),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

fn versions(catalog: &Catalog, package: &str, json: bool) -> Result<ExitCode> {
    let versions = catalog.tagged_versions(package)?;
    if versions.is_empty() {
        return Err(Error::PackageNotFound(package.to_string()));
    }
    if json {
        output::print_json(&versions)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(vec![
        Column::text("version"),
        Column::text("published"),
        Column::number("files"),
        Column::number("size"),
        Column::number("stored"),
        Column::text("tags"),
    ]);
    for tagged in &versions {
        let v = &tagged.version;
        table.add_row([
            v.version.to_string(),
            human_time(v.published_at),
            v.file_count.to_string(),
            human_size(v.raw_bytes),
            human_size(v.stored_bytes),
            tagged.tags.join(" "),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

//! `ccc ls [PKG[@VERSION]]`: packages, a package's versions (with the
//! dist-tags that name them), or a version's files. A tag or range (`app@latest`, `app@^1`) lists the exact version it
//! resolves to, named in the title and in the JSON.
//!
//! Listings are paged (`--limit`, `--offset`): a catalog of thousands of
//! packages, or a version of 100,000 files, would otherwise take seconds to
//! total and a screenful of thousands of rows nobody reads. Tables show
//! [`TABLE_ROWS`] rows by default and end with a line saying what was left
//! out; JSON and `--names` list everything unless asked, since scripts want
//! every row. `--names` prints one name per line, what the bash completion
//! (`src/cmd/generate`) offers for a package, a version or a file.

use super::{resolve_version, version_title};
use crate::catalog::query::Page;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::output::{self, Column, Table, count, media_type};
use crate::spec::Target;
use crate::units::{human_size, human_time, ratio};
use clap::Args;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// List packages, one package's versions, or one version's files.
///
/// Without an argument, packages with their number of versions, latest
/// version and stored size, by name. With PKG, its versions, newest first.
/// With PKG@VERSION, the files of that version, by path (VERSION may be
/// `latest` or a range such as `^1.2`). A table shows 100 rows unless
/// --limit says otherwise, and says how to see the next ones; --json lists
/// every row unless --limit is given.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// What to list: nothing, PKG, or PKG@VERSION.
    #[arg(value_name = "PKG[@VERSION]", value_parser = parse_package_or_version)]
    pub(crate) target: Option<Target>,

    /// List at most N rows (0: all of them). Default: 100 in a table, all in JSON.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<u64>,

    /// Skip the first N rows of the listing.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) offset: u64,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,

    /// Print names alone, one per line: the packages, a package's versions
    /// as PKG@VERSION (newest first), or a version's paths. For scripts and
    /// shell completion; all of them unless --limit is given.
    #[arg(long, conflicts_with = "json")]
    pub(crate) names: bool,
}

/// Rows a table shows when `--limit` is not given.
pub(crate) const TABLE_ROWS: u64 = 100;

pub(crate) fn run(db: &Path, args: LsArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let page = Page {
        offset: args.offset,
        limit: match args.limit {
            Some(0) => None,
            Some(n) => Some(n),
            None if args.json || args.names => None,
            None => Some(TABLE_ROWS),
        },
    };
    let shape = match (args.json, args.names) {
        (true, _) => Shape::Json,
        (_, true) => Shape::Names,
        _ => Shape::Table,
    };
    let Some(target) = &args.target else {
        return packages(&catalog, page, shape);
    };
    if target.version.is_none() {
        return versions(&catalog, &target.package, page, shape);
    }
    let version = resolve_version(&catalog, target)?;
    let title = version_title(&version, target, None);
    let listing = catalog.version_files(version, page)?;
    match shape {
        Shape::Json => return print_json(&listing),
        Shape::Names => return print_names(listing.files.iter().map(|f| &f.path)),
        Shape::Table => {}
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
        // Detail a narrow terminal can spare for the paths (--json has it).
        Column::number("stored").optional(),
        Column::number("ratio").optional(),
    ]);
    for f in &listing.files {
        table.add_row([
            f.path.clone(),
            media_type(f.content_type).to_string(),
            human_size(f.raw_bytes),
            human_size(f.stored_bytes),
            ratio(f.stored_bytes, f.raw_bytes),
        ]);
    }
    output::print(table)?;
    print_rest(page, listing.files.len(), v.file_count, "file")
}

/// What a listing is printed as.
#[derive(Clone, Copy)]
enum Shape {
    Table,
    Json,
    Names,
}

fn print_json(value: &impl serde::Serialize) -> Result<ExitCode> {
    output::print_json(value)?;
    Ok(ExitCode::SUCCESS)
}

/// One name per line (`--names`).
fn print_names(names: impl Iterator<Item = impl std::fmt::Display>) -> Result<ExitCode> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for name in names {
        writeln!(out, "{name}").map_err(Error::Stdout)?;
    }
    out.flush().map_err(Error::Stdout)?;
    Ok(ExitCode::SUCCESS)
}

fn packages(catalog: &Catalog, page: Page, shape: Shape) -> Result<ExitCode> {
    let packages = catalog.packages(page)?;
    match shape {
        Shape::Json => return print_json(&packages),
        Shape::Names => return print_names(packages.iter().map(|p| &p.package)),
        Shape::Table => {}
    }
    let total = catalog.package_count()?;
    if total == 0 {
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
        // Each content once across the package's versions, where a
        // version's `stored` (and publish's) counts each of its files.
        Column::number("unique stored"),
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
    print_rest(page, packages.len(), total, "package")
}

fn versions(catalog: &Catalog, package: &str, page: Page, shape: Shape) -> Result<ExitCode> {
    let versions = catalog.tagged_versions(package)?;
    if versions.is_empty() {
        return Err(Error::package_not_found(package.to_string()));
    }
    let total = versions.len() as u64;
    let versions = page.apply(versions);
    match shape {
        Shape::Json => return print_json(&versions),
        Shape::Names => {
            let names = versions
                .iter()
                .map(|t| format!("{package}@{}", t.version.version));
            return print_names(names);
        }
        Shape::Table => {}
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
    print_rest(page, versions.len(), total, "version")
}

/// Under a table that shows part of a listing: which rows it showed and
/// how to see the others, `rows 101-200 of 5,000 packages; next: --offset 200`.
fn print_rest(page: Page, shown: usize, total: u64, noun: &str) -> Result<ExitCode> {
    if let Some(line) = rest_line(page, shown, total, noun) {
        output::print(line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The line [`print_rest`] prints, when the table left rows out (`diff`
/// ends its table with it too).
pub(super) fn rest_line(page: Page, shown: usize, total: u64, noun: &str) -> Option<String> {
    let shown = shown as u64;
    if page.offset == 0 && shown >= total {
        return None;
    }
    let of = count(total, noun);
    Some(if shown == 0 {
        format!("no rows past --offset {}: there are {of}", page.offset)
    } else {
        let (first, last) = (page.offset + 1, page.offset + shown);
        let next = if last < total {
            format!("; next: --offset {last} (--limit 0 lists all)")
        } else {
            String::new()
        };
        format!("rows {first}-{last} of {of}{next}")
    })
}

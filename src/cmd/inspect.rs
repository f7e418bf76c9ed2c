//! `ccc inspect PKG@VERSION[/PATH]`: a version's sizes, compression and
//! sharing with a file table, or one file in full detail, its deltas
//! (RFC 9842's dcb and dcz, `catalog::deltas`) among them: against which
//! file, how long, and what share of the brotli a client is sent without.

use super::{resolve_version, version_title};
use crate::catalog::deltas::Listed;
use crate::catalog::query::{AssetRow, Page, StoredLink, VersionFiles};
use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog, Encoding};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table, count, media_type};
use crate::spec::Target;
use crate::units::{human_size, human_time, ratio};
use clap::Args;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// Show a version's sizes, compression and dedup, or one file in detail.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A version, like `app@1.4.0`, or one of its files, `app@1.4.0/js/main.js`.
    #[arg(value_name = "PKG@VERSION[/PATH]", value_parser = parse_version_or_file)]
    pub(crate) target: Target,

    /// Print JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `inspect PKG@VERSION --json`: the listing of `ls PKG@VERSION --json`
/// plus what the version shares.
#[derive(Serialize)]
struct VersionDetail<'a> {
    #[serde(flatten)]
    listing: &'a VersionFiles,
    /// Stored bytes of this version's blobs that other versions also use.
    shared_bytes: u64,
}

/// `inspect PKG@VERSION/PATH --json`.
#[derive(Serialize)]
struct AssetDetail<'a> {
    package: &'a str,
    version: String,
    #[serde(flatten)]
    asset: &'a AssetRow,
    /// Every other file in the catalog with the same content.
    same_content: Vec<String>,
    /// What the file references, as publish resolved it.
    references: Vec<StoredLink>,
    /// The references of the version's files that name this one.
    referenced_by: Vec<StoredLink>,
    /// The deltas of its content, smallest first for each dictionary.
    deltas: Vec<Listed>,
}

pub(crate) fn run(db: &Path, args: InspectArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let target = &args.target;
    let version = resolve_version(&catalog, target)?;
    let title = version_title(&version, target, target.path.as_deref());
    match target.path.as_deref() {
        Some(path) => asset(&catalog, &version, &title, path, args.json),
        None => summary(&catalog, version, &title, args.json),
    }
}

fn summary(catalog: &Catalog, v: VersionRow, title: &str, json: bool) -> Result<ExitCode> {
    let shared = catalog.shared_bytes(v.id)?;
    let listing = catalog.version_files(v, Page::ALL)?;
    if json {
        output::print_json(&VersionDetail {
            listing: &listing,
            shared_bytes: shared,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let v = &listing.version;
    output::print_heading(title, "")?;
    let mut head = Table::pairs(Column::prose(""));
    head.add_row(["published".into(), human_time(v.published_at)]);
    head.add_row(["files".into(), v.file_count.to_string()]);
    head.add_row(["raw".into(), human_size(v.raw_bytes)]);
    head.add_row([
        "stored".into(),
        format!(
            "{} ({} of raw)",
            human_size(v.stored_bytes),
            ratio(v.stored_bytes, v.raw_bytes)
        ),
    ]);
    head.add_row([
        "shared".into(),
        format!("{} also used by other versions", human_size(shared)),
    ]);
    output::print(head)?;
    let mut table = Table::new(vec![
        Column::path("path"),
        // A media type cut in two reads as two words; the digest's start
        // is the detail a narrow terminal can spare (`inspect PATH` and
        // --json have it whole).
        Column::text("type"),
        Column::number("raw"),
        Column::number("stored"),
        Column::number("ratio").optional(),
        // What a client that accepts `br` is sent, where it differs.
        Column::number("brotli").optional(),
        Column::text("sha256").optional(),
    ]);
    for a in &listing.files {
        table.add_row([
            a.path.clone(),
            media_type(a.content_type).to_string(),
            human_size(a.raw_bytes),
            human_size(a.stored_bytes),
            ratio(a.stored_bytes, a.raw_bytes),
            brotli_bytes(a).map_or_else(|| "-".to_string(), human_size),
            hex::encode(&a.sha256[..6]),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

fn asset(
    catalog: &Catalog,
    v: &VersionRow,
    title: &str,
    path: &str,
    json: bool,
) -> Result<ExitCode> {
    let a = catalog.asset(v, path)?;
    let same_content = catalog.same_content(v, &a)?;
    let references = catalog.links(v.id, &a.path, true)?;
    let referenced_by = catalog.links(v.id, &a.path, false)?;
    let deltas = catalog.delta_listing(a.blob_id, &v.package)?;
    if json {
        output::print_json(&AssetDetail {
            package: &v.package,
            version: v.version.to_string(),
            asset: &a,
            same_content,
            references,
            referenced_by,
            deltas,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    output::print_heading(title, "")?;
    let mut table = Table::pairs(Column::path(""));
    table.add_row(["content type".into(), a.content_type.to_string()]);
    table.add_row([
        "raw".into(),
        format!(
            "{} ({})",
            human_size(a.raw_bytes),
            count(a.raw_bytes, "byte")
        ),
    ]);
    table.add_row([
        "stored".into(),
        format!(
            "{}, {} ({} of raw)",
            human_size(a.stored_bytes),
            a.encoding.describe(),
            ratio(a.stored_bytes, a.raw_bytes)
        ),
    ]);
    if let Some(brotli) = brotli_bytes(&a) {
        table.add_row([
            "brotli".into(),
            format!(
                "{} ({} of raw, {} smaller than gzip)",
                human_size(brotli),
                ratio(brotli, a.raw_bytes),
                ratio(a.stored_bytes.saturating_sub(brotli), a.stored_bytes)
            ),
        ]);
    }
    table.add_row(["sha256".into(), hex::encode(a.sha256)]);
    // What a page pins the file with: `integrity="..."`.
    table.add_row(["integrity".into(), a.integrity()]);
    let others = if same_content.is_empty() {
        "no other file".to_string()
    } else {
        same_content.join("\n")
    };
    table.add_row(["same content".into(), others]);
    if !references.is_empty() {
        let lines: Vec<String> = references
            .iter()
            .map(|l| {
                let to = match (&l.target, l.class.as_str()) {
                    (Some(target), "found") => target.clone(),
                    (Some(target), "leaves_version") => {
                        format!("{target} (a root path: leaves the version)")
                    }
                    (Some(target), _) => format!("{target} (case mismatch)"),
                    (None, class) => class.replace('_', " "),
                };
                format!("{}:{} {} -> {to}", l.line, l.column, l.reference)
            })
            .collect();
        table.add_row(["references".into(), lines.join("\n")]);
    }
    if !referenced_by.is_empty() {
        let lines: Vec<String> = referenced_by
            .iter()
            .map(|l| format!("{}:{}:{}", l.file, l.line, l.column))
            .collect();
        table.add_row(["referenced by".into(), lines.join("\n")]);
    }
    if !deltas.is_empty() {
        // What a client holding the dictionary would be sent without it.
        let baseline = brotli_bytes(&a).unwrap_or(a.stored_bytes);
        let lines: Vec<String> = deltas
            .iter()
            .map(|d| {
                let against = d.against.first().map_or("a removed file", String::as_str);
                format!(
                    "{} against {against}: {} ({} of brotli)",
                    d.encoding.as_str(),
                    human_size(d.stored_bytes),
                    ratio(d.stored_bytes, baseline)
                )
            })
            .collect();
        table.add_row(["deltas".into(), lines.join("\n")]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

/// The size of the file's brotli stream, when the catalog holds one.
fn brotli_bytes(a: &AssetRow) -> Option<u64> {
    a.variants
        .iter()
        .find(|v| v.encoding == Encoding::Brotli)
        .map(|v| v.stored_bytes)
}

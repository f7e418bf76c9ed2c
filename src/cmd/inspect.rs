//! `ccc inspect PKG@VERSION[/PATH]`: a version's sizes, compression and
//! sharing with a file table, or one file in full detail.

use super::resolve_version;
use crate::catalog::query::{AssetRow, VersionRow};
use crate::catalog::{Access, Catalog};
use crate::cli::InspectArgs;
use crate::error::Result;
use crate::output;
use crate::units::{human_size, human_time, ratio, rfc3339};
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

#[derive(Serialize)]
struct VersionDetail<'a> {
    package: &'a str,
    version: String,
    published_at: String,
    files: u64,
    raw_bytes: u64,
    stored_bytes: u64,
    /// Stored bytes of this version's blobs that other versions also use.
    shared_bytes: u64,
    assets: &'a [AssetRow],
}

#[derive(Serialize)]
struct AssetDetail<'a> {
    package: &'a str,
    version: String,
    #[serde(flatten)]
    asset: &'a AssetRow,
    /// Every file in the catalog with the same content.
    same_content: Vec<String>,
}

pub fn run(db: &Path, args: InspectArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let version = resolve_version(&catalog, &args.target)?;
    match args.target.path.as_deref() {
        Some(path) => asset(&catalog, &version, path, args.json),
        None => summary(&catalog, &version, args.json),
    }
}

fn summary(catalog: &Catalog, v: &VersionRow, json: bool) -> Result<ExitCode> {
    let assets = catalog.files(v.id)?;
    let shared = catalog.shared_bytes(v.id)?;
    if json {
        output::print_json(&VersionDetail {
            package: &v.package,
            version: v.version.to_string(),
            published_at: rfc3339(v.published_at),
            files: v.file_count,
            raw_bytes: v.raw_bytes,
            stored_bytes: v.stored_bytes,
            shared_bytes: shared,
            assets: &assets,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut head = output::table(&["", ""], &[]);
    head.set_header(vec![format!("{}@{}", v.package, v.version), String::new()]);
    head.add_row(vec!["published".into(), human_time(v.published_at)]);
    head.add_row(vec!["files".into(), v.file_count.to_string()]);
    head.add_row(vec!["raw".into(), human_size(v.raw_bytes)]);
    head.add_row(vec![
        "stored".into(),
        format!(
            "{} ({} of raw)",
            human_size(v.stored_bytes),
            ratio(v.stored_bytes, v.raw_bytes)
        ),
    ]);
    head.add_row(vec![
        "shared".into(),
        format!("{} also used by other versions", human_size(shared)),
    ]);
    output::print(head)?;
    let mut table = output::table(
        &["path", "type", "raw", "stored", "ratio", "sha256"],
        &[2, 3, 4],
    );
    for a in &assets {
        table.add_row(vec![
            a.path.clone(),
            a.content_type.clone(),
            human_size(a.raw_size),
            human_size(a.stored_size),
            ratio(a.stored_size, a.raw_size),
            hex::encode(&a.sha256[..6]),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

fn asset(catalog: &Catalog, v: &VersionRow, path: &str, json: bool) -> Result<ExitCode> {
    let a = catalog.asset(v, path)?;
    let same_content = catalog.blob_users(a.blob_id)?;
    if json {
        output::print_json(&AssetDetail {
            package: &v.package,
            version: v.version.to_string(),
            asset: &a,
            same_content,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["", ""], &[]);
    table.set_header(vec![
        format!("{}@{}/{}", v.package, v.version, a.path),
        String::new(),
    ]);
    table.add_row(vec!["content type".into(), a.content_type.clone()]);
    table.add_row(vec![
        "raw".into(),
        format!("{} ({} bytes)", human_size(a.raw_size), a.raw_size),
    ]);
    table.add_row(vec![
        "stored".into(),
        format!(
            "{} as {} ({} of raw)",
            human_size(a.stored_size),
            a.encoding,
            ratio(a.stored_size, a.raw_size)
        ),
    ]);
    table.add_row(vec!["sha256".into(), hex::encode(a.sha256)]);
    table.add_row(vec!["same content".into(), same_content.join("\n")]);
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

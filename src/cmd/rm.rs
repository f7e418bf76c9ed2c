//! `ccc rm PKG@VERSION...` and `ccc rm --all PKG...`: remove versions in one
//! transaction. Their blobs stay until `ccc gc`; deltas whose file or
//! dictionary no version holds any more go with them.

use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cli::{Checked, RmArgs};
use crate::error::{Error, Result};
use crate::output;
use crate::purge::Purged;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// `rm --json`: the versions removed (or, dry, that would be), the
/// dist-tags that named them and the packages left without versions,
/// which go with them.
#[derive(Serialize)]
struct Removed {
    versions: Vec<VersionRow>,
    tags_removed: Vec<RemovedTag>,
    packages_removed: Vec<String>,
    /// Deltas whose file or dictionary no version holds any more.
    removed_delta_count: u64,
    removed_delta_bytes: u64,
    dry_run: bool,
    /// With --purge, what was purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    purged: Option<Purged>,
}

/// A dist-tag removed with the version it named.
#[derive(Serialize)]
struct RemovedTag {
    package: String,
    tag: String,
    version: String,
}

/// Every target names an exact version, or (with --all) only a package:
/// `Checked` saw to that while parsing.
pub fn run(db: &Path, Checked(args): Checked<RmArgs>) -> Result<ExitCode> {
    let mut catalog = Catalog::open(db, Access::ReadWrite)?;
    let mut removed: Vec<VersionRow> = Vec::new();
    for target in &args.targets {
        let versions = catalog.versions(&target.package)?;
        if versions.is_empty() {
            return Err(Error::package_not_found(target.package.clone()));
        }
        match target.exact_version() {
            None => removed.extend(versions),
            Some(want) => {
                let v = versions
                    .into_iter()
                    .find(|v| v.version == *want)
                    .ok_or_else(|| Error::VersionNotFound {
                        package: target.package.clone(),
                        version: want.to_string(),
                    })?;
                removed.push(v);
            }
        }
    }
    // A version named twice is removed once, listed where first named.
    let mut seen = std::collections::HashSet::new();
    removed.retain(|v| seen.insert(v.id));
    let mut ids: Vec<i64> = removed.iter().map(|v| v.id).collect();
    ids.sort_unstable();
    // The files are listed before they go, for --purge.
    let mut files = Vec::new();
    if !args.purge.caches.is_empty() {
        for v in &removed {
            files.push(
                catalog
                    .files(v.id, crate::catalog::query::Page::ALL)?
                    .into_iter()
                    .map(|f| f.path)
                    .collect(),
            );
        }
    }
    let removal = catalog.remove_versions(&ids, args.dry_run)?;
    let tags: Vec<RemovedTag> = removal
        .tags_removed
        .iter()
        .filter_map(|(id, tag)| {
            let v = removed.iter().find(|v| v.id == *id)?;
            Some(RemovedTag {
                package: v.package.clone(),
                tag: tag.clone(),
                version: v.version.to_string(),
            })
        })
        .collect();
    let packages = removal.packages_removed;
    let (delta_count, delta_bytes) = removal.deltas_removed;
    let (purged, outcome) = super::purge_caches(
        &args.purge,
        args.dry_run,
        removed
            .iter()
            .zip(&files)
            .map(|(v, files): (&VersionRow, &Vec<String>)| {
                (v.package.as_str(), v.version.to_string(), files.as_slice())
            }),
    );
    // What was removed is printed whether or not the purge worked.
    if args.json {
        output::print_json(&Removed {
            versions: removed,
            tags_removed: tags,
            packages_removed: packages,
            removed_delta_count: delta_count,
            removed_delta_bytes: delta_bytes,
            dry_run: args.dry_run,
            purged,
        })?;
    } else {
        let verb = if args.dry_run {
            "Would remove"
        } else {
            "Removed"
        };
        for v in &removed {
            output::print(format_args!("{verb} {}@{}", v.package, v.version))?;
        }
        for t in &tags {
            output::print(format_args!(
                "{verb} dist-tag {}@{} (named {})",
                t.package, t.tag, t.version
            ))?;
        }
        for package in &packages {
            output::print(format_args!("{verb} package {package} (no versions left)"))?;
        }
        if delta_count > 0 {
            output::print(format_args!(
                "{verb} {} ({}): their file or dictionary is in no version any more",
                output::count(delta_count, "delta"),
                crate::units::human_size(delta_bytes)
            ))?;
        }
        if !args.dry_run {
            output::print("Blobs stay until `ccc gc` removes the ones nothing uses.")?;
        }
        if let Some(purged) = &purged {
            super::print_purged(purged)?;
        }
    }
    outcome.map(|()| ExitCode::SUCCESS)
}

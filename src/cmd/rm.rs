//! `ccc rm PKG@VERSION...` and `ccc rm --all PKG...`: remove versions in one
//! transaction. Their blobs stay until `ccc gc`; deltas whose file or
//! dictionary no version holds any more go with them.

use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::{Error, Result};
use crate::remote::RemoteArgs;
use crate::spec::{Part, Target};
use crate::{outcome, output};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Remove versions from the catalog (their blobs stay until `ccc gc`).
///
/// The dist-tags that name a removed version go with it, as with npm's
/// unpublish; without its tag, `latest` is the newest release left.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Versions to remove, like `app@1.4.0`; with --all, package names.
    #[arg(value_name = "PKG@VERSION", required = true, value_parser = parse_rm_target)]
    pub(crate) targets: Vec<Target>,

    /// Remove every version of the named packages.
    #[arg(long)]
    pub(crate) all: bool,

    /// Show what would be removed, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Print what was removed as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) purge: PurgeArgs,

    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

impl CheckArgs for RmArgs {
    const COMMAND: &str = "rm";

    fn check(&self) -> Result<(), String> {
        if self.remote.to.is_some() {
            let local_only = [
                (self.all, "--all"),
                (self.dry_run, "--dry-run"),
                (!self.purge.caches.is_empty(), "--purge"),
            ];
            if let Some((_, flag)) = local_only.iter().find(|(set, _)| *set) {
                return Err(format!(
                    "{flag} is for the catalog file; with --to, name each version to remove"
                ));
            }
        }
        for target in &self.targets {
            match (target.exact_version(), self.all) {
                (None, false) => {
                    return Err(format!(
                        "`{}` names no version: name one (PKG@VERSION), or pass --all to remove every version of the package",
                        target.package
                    ));
                }
                (Some(version), true) => {
                    return Err(format!(
                        "--all takes package names without a version, not `{}@{version}`",
                        target.package
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `PKG@VERSION` with an exact version, or (for --all) a bare `PKG`. Only
/// exact versions: a range is too easy to get wrong when removing.
fn parse_rm_target(s: &str) -> Result<Target, String> {
    let form = "PKG@VERSION (files cannot be removed one by one), or PKG with --all";
    let target = Target::parse_as(s, Part::Optional, Part::Refused, form).map_err(spec_error)?;
    if target.version.is_some() && target.exact_version().is_none() {
        return Err("rm takes exact versions, like app@1.4.0, not `latest` or a range".into());
    }
    Ok(target)
}

/// Every target names an exact version, or (with --all) only a package:
/// `Checked` saw to that while parsing.
pub(crate) fn run(db: &Path, Checked(args): Checked<RmArgs>) -> Result<ExitCode> {
    if args.remote.to.is_some() {
        return to_server(&args);
    }
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
    let tags: Vec<outcome::RemovedTag> = removal
        .tags_removed
        .iter()
        .filter_map(|(id, tag)| {
            let v = removed.iter().find(|v| v.id == *id)?;
            Some(outcome::RemovedTag {
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
        output::print_json(&outcome::Removed {
            versions: removed,
            tags_removed: tags,
            packages_removed: packages,
            removed_delta_count: delta_count,
            removed_delta_bytes: delta_bytes,
            dry_run: args.dry_run,
            purged,
        })?;
    } else {
        output::print(outcome::removed_text(
            &removed,
            &tags,
            &packages,
            (delta_count, delta_bytes),
            args.dry_run,
        ))?;
        if let Some(purged) = &purged {
            super::print_purged(purged)?;
        }
    }
    outcome.map(|()| ExitCode::SUCCESS)
}

/// `rm --to URL`: each version removed by a server's write API, in the
/// order named; the first refusal stops there (what was removed before it
/// is printed). `--json` prints the answers' removals as one, as a local
/// `rm --json` does.
fn to_server(args: &RmArgs) -> Result<ExitCode> {
    use crate::remote::{Remote, TOKEN_ENV};
    let remote = Remote::new(&args.remote, std::env::var(TOKEN_ENV).ok())?;
    let mut merged = serde_json::json!({
        "versions": [], "tags_removed": [], "packages_removed": [], "dry_run": false
    });
    for target in &args.targets {
        let version = target
            .exact_version()
            .ok_or_else(|| Error::Internal("rm --to without a version".into()))?;
        let reply = remote.remove(&target.package, version)?;
        if args.json {
            let result = reply.result.unwrap_or_default();
            for key in ["versions", "tags_removed", "packages_removed"] {
                if let (Some(all), Some(these)) =
                    (merged[key].as_array_mut(), result[key].as_array())
                {
                    all.extend(these.iter().cloned());
                }
            }
        } else if let Some(summary) = &reply.summary {
            output::print(summary)?;
        }
    }
    if args.json {
        output::print_json(&merged)?;
    }
    Ok(ExitCode::SUCCESS)
}

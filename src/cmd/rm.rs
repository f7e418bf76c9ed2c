//! `ccc rm PKG@VERSION...` and `ccc rm --all PKG...`: remove versions in one
//! transaction. Their blobs stay until `ccc gc`.

use crate::catalog::{Access, Catalog};
use crate::cli::RmArgs;
use crate::error::{Error, Result};
use crate::output;
use crate::spec::{self, Target};
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

#[derive(Serialize)]
struct Removed {
    versions: Vec<String>,
    packages: Vec<String>,
    dry_run: bool,
}

pub fn run(db: &Path, args: RmArgs) -> Result<ExitCode> {
    let mut catalog = Catalog::open(db, Access::ReadWrite)?;
    let mut ids = Vec::new();
    let mut names = Vec::new();
    for input in &args.targets {
        let target = Target::parse(input)?;
        if target.path.is_some() {
            return Err(Error::InvalidSpec {
                what: "rm target",
                input: input.clone(),
                why: "files cannot be removed one by one; name a version".into(),
            });
        }
        let versions = catalog.versions(&target.package)?;
        if versions.is_empty() {
            return Err(Error::PackageNotFound(target.package));
        }
        match (target.version.as_deref(), args.all) {
            (None, true) => {
                for v in versions {
                    ids.push(v.id);
                    names.push(format!("{}@{}", v.package, v.version));
                }
            }
            (Some(version), false) => {
                // Only exact versions: a range is too easy to get wrong here.
                let want = spec::version(&target.package, version)?;
                let v = versions
                    .into_iter()
                    .find(|v| v.version == want)
                    .ok_or_else(|| Error::VersionNotFound {
                        package: target.package.clone(),
                        version: version.to_string(),
                    })?;
                ids.push(v.id);
                names.push(format!("{}@{}", v.package, v.version));
            }
            (None, false) => {
                return Err(Error::InvalidSpec {
                    what: "rm target",
                    input: input.clone(),
                    why: "name a version (PKG@VERSION), or pass --all to remove every version of the package".into(),
                });
            }
            (Some(_), true) => {
                return Err(Error::InvalidSpec {
                    what: "rm target",
                    input: input.clone(),
                    why: "--all takes package names without a version".into(),
                });
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    names.dedup();
    let packages = catalog.remove_versions(&ids, args.dry_run)?;
    if args.json {
        output::print_json(&Removed {
            versions: names,
            packages,
            dry_run: args.dry_run,
        })?;
    } else {
        let verb = if args.dry_run {
            "Would remove"
        } else {
            "Removed"
        };
        for name in &names {
            output::print(format_args!("{verb} {name}"))?;
        }
        for package in &packages {
            output::print(format_args!("{verb} package {package} (no versions left)"))?;
        }
        if !args.dry_run {
            output::print("Blobs stay until `ccc gc` removes the ones nothing uses.")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

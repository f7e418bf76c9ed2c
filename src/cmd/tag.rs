//! `ccc tag add PKG@VERSION TAG`, `ccc tag rm PKG TAG`, `ccc tag ls PKG`:
//! a package's dist-tags (see [`crate::catalog::tags`] for the rules).

use crate::catalog::tags::TagChange;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::outcome;
use crate::output::{self, Column, Table};
use crate::remote::RemoteArgs;
use crate::spec::{PackageVersion, Selector};
use clap::{Args, Subcommand};
use std::path::Path;
use std::process::ExitCode;

/// Add, remove or list a package's dist-tags.
///
/// A dist-tag (`latest`, `next`, `beta`) names one version of a package:
/// `PKG@TAG` on the command line and /assets/PKG/TAG/... on the server
/// resolve to it. Tag names are npm's: letters, digits and `-_.!~*'()`,
/// never a version or a range. Without a `latest` tag, `latest` is the
/// newest release; a `latest` tag overrides that until removed or a newer
/// release is published without `ccc publish --tag`.
#[derive(Debug, Args)]
pub struct TagArgs {
    #[command(subcommand)]
    pub(crate) action: TagAction,
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TagAction {
    /// Point TAG at PKG@VERSION (moving it if it names another version).
    Add {
        /// The version, exact, like `app@2.0.0-rc.1`.
        #[arg(value_name = "PKG@VERSION", value_parser = parse_version_to_tag)]
        target: PackageVersion,
        /// The tag, like `next` or `latest`.
        #[arg(value_name = "TAG", value_parser = parse_tag)]
        tag: String,
    },
    /// Remove TAG from PKG (`latest` then is the newest release again).
    Rm {
        /// The package, like `app`.
        #[arg(value_name = "PKG", value_parser = parse_package)]
        package: String,
        /// The tag to remove.
        #[arg(value_name = "TAG", value_parser = parse_tag)]
        tag: String,
    },
    /// List PKG's tags, `latest` first, with the versions they name.
    Ls {
        /// The package, like `app`.
        #[arg(value_name = "PKG", value_parser = parse_package)]
        package: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(db: &Path, args: TagArgs) -> Result<ExitCode> {
    if args.remote.to.is_some() {
        return to_server(args);
    }
    match args.action {
        TagAction::Add { target, tag } => {
            let mut catalog = Catalog::open(db, Access::ReadWrite)?;
            let version = catalog.resolve(&target.package, &Selector::Exact(target.version))?;
            report(&catalog.add_tag(&version, &tag)?)
        }
        TagAction::Rm { package, tag } => {
            let mut catalog = Catalog::open(db, Access::ReadWrite)?;
            report(&catalog.remove_tag(&package, &tag)?)
        }
        TagAction::Ls { package, json } => {
            let catalog = Catalog::open(db, Access::ReadOnly)?;
            let tags = catalog.tags(&package)?;
            if json {
                output::print_json(&tags)?;
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = Table::new(vec![
                Column::text("tag"),
                Column::text("version"),
                Column::prose("set by"),
            ]);
            for t in &tags {
                let set_by = if t.explicit {
                    "tag"
                } else {
                    "newest release (no tag)"
                };
                table.add_row([t.tag.clone(), t.version.to_string(), set_by.to_string()]);
            }
            output::print(table)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `tag add|rm --to URL`: the change made by a server's write API, which
/// answers with the words a local change prints.
fn to_server(args: TagArgs) -> Result<ExitCode> {
    use crate::remote::{Remote, TOKEN_ENV};
    let remote = Remote::new(&args.remote, std::env::var(TOKEN_ENV).ok())?;
    let reply = match &args.action {
        TagAction::Add { target, tag } => remote.tag_add(&target.package, tag, &target.version)?,
        TagAction::Rm { package, tag } => remote.tag_rm(package, tag)?,
        TagAction::Ls { .. } => {
            return Err(crate::error::Error::Usage(
                "`tag ls` reads the catalog; a server lists a package's tags at \
                 /assets/PKG/ (no --to needed)"
                    .into(),
            ));
        }
    };
    if let Some(summary) = &reply.summary {
        output::print(summary)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what a tag change did.
fn report(change: &TagChange) -> Result<ExitCode> {
    output::print(outcome::tag_change(change))?;
    Ok(ExitCode::SUCCESS)
}

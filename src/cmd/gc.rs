//! `ccc gc`: prune versions, drop orphan blobs, reclaim space.
use super::ls::TABLE_ROWS;
use crate::catalog::gc::{Choice, Keep, Options, Reason, Report, Reporter};
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table};
use crate::purge::{self, Purged};
use crate::spool::{JsonLines, Spool};
use crate::units::{human_size, human_time};
use clap::Args;
use serde::Serialize;
use std::num::NonZeroUsize;
use std::path::Path;
use std::process::ExitCode;

/// Prune old versions, drop unreferenced blobs and reclaim disk space.
///
/// --keep N keeps, in each package, the N newest releases (semver order),
/// every prerelease newer than the newest release (the next version's
/// previews), and --keep-prereleases M of the prereleases a release has
/// superseded. --older-than removes versions published longer ago. With
/// both, a version goes only when both allow it; with neither, only blobs no
/// version uses are removed. Whatever the rules, the version `latest`
/// resolves to and every version a dist-tag names are never removed,
/// unless --keep 0 --delete-all-versions.
/// --dry-run lists every version with why it would be kept or removed.
///
/// PKG-GLOB... limits the rules to the packages whose names match (`app`,
/// `'@acme/*'`), so that a vendored library's versions are not judged by
/// the app's rule; one that matches no package is an error. Content no
/// version uses is dropped catalog-wide either way.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Judge only these packages: names, or globs like `@acme/*` (quote
    /// them from the shell) [default: every package].
    #[arg(value_name = "PKG-GLOB", value_parser = parse_package_glob)]
    pub(crate) packages: Vec<String>,

    /// Keep the N newest releases of each package, and the prereleases
    /// newer than them (0 only with --delete-all-versions).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub(crate) keep: Option<usize>,

    /// With --keep, also keep the M newest prereleases that are older than
    /// the package's newest release [default: 0].
    #[arg(long, value_name = "M", requires = "keep", value_parser = parse_count)]
    pub(crate) keep_prereleases: Option<usize>,

    /// Allow --keep 0: remove every version, `latest` included (with
    /// --older-than, every version older than that).
    #[arg(long)]
    pub(crate) delete_all_versions: bool,

    /// Remove versions published longer ago than DURATION, like `30days`,
    /// `2weeks` or `12h`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) older_than: Option<std::time::Duration>,

    /// List every choice (what goes, what stays and why), and change
    /// nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Print no progress.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) purge: PurgeArgs,
}

impl CheckArgs for GcArgs {
    const COMMAND: &str = "gc";

    fn check(&self) -> Result<(), String> {
        let keep_nothing = self.keep == Some(0);
        if keep_nothing && !self.delete_all_versions {
            return Err(
                "--keep 0 would remove every version of every package, the ones `latest` serves \
                 included; add --delete-all-versions if that is what you want \
                 (`ccc rm --all PKG` removes one package)"
                    .into(),
            );
        }
        if self.delete_all_versions && !keep_nothing {
            return Err(
                "--delete-all-versions goes only with --keep 0 (it allows removing every version)"
                    .into(),
            );
        }
        if !self.packages.is_empty() && self.keep.is_none() && self.older_than.is_none() {
            return Err(format!(
                "`{}` limits --keep and --older-than to the packages named; give one of them \
                 (`ccc gc {} --keep 5`)",
                self.packages.join(" "),
                self.packages.join(" ")
            ));
        }
        if keep_nothing && self.keep_prereleases.is_some() {
            return Err(
                "--keep-prereleases cannot keep anything with --keep 0 --delete-all-versions"
                    .into(),
            );
        }
        Ok(())
    }
}

pub(crate) fn run(db: &Path, Checked(args): Checked<GcArgs>) -> Result<ExitCode> {
    let options = options(&args);
    let mut catalog = Catalog::open(db, Access::ReadWrite)?;
    catalog.stop_on_interrupt()?;
    let mut listing = Listing::new(&options, &args)?;
    let report = catalog.gc(&options, &mut listing);
    listing.spinner.finish_and_clear();
    let report = report?;
    let (purged, outcome) = match listing.purge.take() {
        Some(paths) => super::purge_paths(&args.purge, paths),
        None => (None, Ok(())),
    };
    // The report is printed whether or not the purge worked.
    listing.print(&report, purged.as_ref())?;
    outcome.map(|()| ExitCode::SUCCESS)
}

/// What gc is told as it judges, kept for the report: whatever the
/// number of versions, a page of the table, or the JSON lists spooled to
/// temporary files (written out once gc has committed or rolled back, so
/// a failed run prints no report), and the URLs to purge.
struct Listing<'a> {
    options: &'a Options,
    spinner: indicatif::ProgressBar,
    /// With `--json`: the removed versions and the kept ones.
    json: Option<(Spool, Spool)>,
    /// The table's first [`TABLE_ROWS`] rows, and how many rows it has.
    rows: Vec<[String; 6]>,
    row_count: u64,
    /// With `--purge` (not dry): every removed version's URL paths.
    purge: Option<purge::Paths>,
}

impl<'a> Listing<'a> {
    fn new(options: &'a Options, args: &GcArgs) -> Result<Listing<'a>> {
        let spinner = indicatif::ProgressBar::with_draw_target(
            None,
            output::progress_target(args.quiet || args.json),
        );
        spinner.set_style(output::spinner_style());
        spinner.set_prefix("Collecting");
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        let json = if args.json {
            Some((
                Spool::new("the removed versions")?,
                Spool::new("the kept versions")?,
            ))
        } else {
            None
        };
        let purge = if options.list_files {
            Some(purge::Paths::new()?)
        } else {
            None
        };
        Ok(Listing {
            options,
            spinner,
            json,
            rows: Vec::new(),
            row_count: 0,
            purge,
        })
    }

    fn print(self, report: &Report, purged: Option<&Purged>) -> Result<()> {
        if let Some((removed, kept)) = self.json {
            let (removed, kept) = (removed.finish()?, kept.finish()?);
            return output::print_json(&JsonReport {
                versions: JsonLines(&removed),
                kept: JsonLines(&kept),
                report,
                purged,
            });
        }
        if !self.rows.is_empty() {
            // The version and the action are read whole; the date wraps at
            // its space and the reasons between words when the terminal is
            // narrow.
            let mut table = Table::new(vec![
                Column::text("version"),
                Column::prose("published"),
                Column::number("files"),
                Column::number("size"),
                Column::text("action"),
                Column::prose("why"),
            ]);
            for row in self.rows {
                table.add_row(row);
            }
            output::print(table)?;
            if self.row_count > TABLE_ROWS {
                output::print(format_args!(
                    "rows 1-{TABLE_ROWS} of {}; --json lists every one",
                    output::count(self.row_count, "version")
                ))?;
            }
        }
        let verb = if report.dry_run {
            "Would remove"
        } else {
            "Removed"
        };
        // The streams' count is in --json.
        let mut brotli = if report.removed_brotli_count > 0 {
            format!(" + {} brotli", human_size(report.removed_brotli_bytes))
        } else {
            String::new()
        };
        if report.removed_delta_count > 0 {
            brotli.push_str(&format!(
                " + {} in {}",
                human_size(report.removed_delta_bytes),
                output::count(report.removed_delta_count, "delta")
            ));
        }
        if self.options.keep.is_none() && self.options.older_than.is_none() {
            // No rule judged any version: none was kept or removed by one.
            output::print(format_args!(
                "{verb} {} no version uses ({} stored{brotli}); every version stays: \
                 without --keep or --older-than gc removes no version",
                output::count(report.removed_blob_count, "blob"),
                human_size(report.removed_stored_bytes),
            ))?;
        } else {
            output::print(format_args!(
                "{verb} {}, {}, {} ({} stored{brotli}); kept {}",
                output::count(report.removed_version_count, "version"),
                output::count(report.packages_removed.len() as u64, "package"),
                output::count(report.removed_blob_count, "blob"),
                human_size(report.removed_stored_bytes),
                output::count(report.kept_version_count, "version"),
            ))?;
        }
        if !report.dry_run {
            output::print(format_args!(
                "Catalog file: {} -> {}",
                human_size(report.file_bytes_before),
                human_size(report.file_bytes_after),
            ))?;
        }
        if let Some(purged) = purged {
            super::print_purged(purged)?;
        }
        Ok(())
    }
}

impl Reporter for Listing<'_> {
    fn phase(&mut self, what: &str) {
        self.spinner.set_message(what.to_string());
    }

    fn version(&mut self, choice: &Choice) -> Result<()> {
        if let (Some(paths), true) = (&mut self.purge, choice.removed) {
            paths.add_listing(&choice.package, &choice.version.to_string())?;
        }
        if let Some((removed, kept)) = &mut self.json {
            return if choice.removed {
                removed.push_json(choice)
            } else {
                kept.push_json(choice)
            };
        }
        // A dry run shows every choice; a real run what it removed.
        if !choice.removed && !self.options.dry_run {
            return Ok(());
        }
        self.row_count += 1;
        if self.rows.len() < TABLE_ROWS as usize {
            self.rows.push(row(choice, self.options));
        }
        Ok(())
    }

    fn removed_file(&mut self, choice: &Choice, path: &str) -> Result<()> {
        match &mut self.purge {
            Some(paths) => paths.add_file(&choice.package, &choice.version.to_string(), path),
            None => Ok(()),
        }
    }
}

/// `gc --json`: the removed and the kept versions, the rest of the report,
/// and what --purge purged.
#[derive(Serialize)]
struct JsonReport<'a> {
    versions: JsonLines<'a>,
    kept: JsonLines<'a>,
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    purged: Option<&'a Purged>,
}

/// A version's row in the table.
fn row(c: &Choice, options: &Options) -> [String; 6] {
    let action = match (c.removed, options.dry_run) {
        (false, _) => "keep",
        (true, true) => "remove",
        (true, false) => "removed",
    };
    let why: Vec<String> = c.why.iter().map(|r| explain(*r, options)).collect();
    [
        format!("{}@{}", c.package, c.version),
        human_time(c.published_at),
        c.file_count.to_string(),
        human_size(c.raw_bytes),
        action.to_string(),
        why.join("; "),
    ]
}

/// The library's options from the checked flags.
fn options(args: &GcArgs) -> Options {
    // `Checked` let --keep 0 through only with --delete-all-versions.
    let keep = args.keep.map(|n| match NonZeroUsize::new(n) {
        Some(releases) => Keep::Newest {
            releases,
            older_prereleases: args.keep_prereleases.unwrap_or(0),
        },
        None => Keep::Nothing,
    });
    Options {
        packages: args.packages.clone(),
        keep,
        older_than: args.older_than,
        dry_run: args.dry_run,
        // A dry run purges nothing.
        list_files: !args.purge.caches.is_empty() && !args.dry_run,
    }
}

/// One reason, in the words of the flags that gave it.
fn explain(reason: Reason, options: &Options) -> String {
    let (releases, older_prereleases) = match options.keep {
        Some(Keep::Newest {
            releases,
            older_prereleases,
        }) => (releases.get(), older_prereleases),
        _ => (0, 0),
    };
    let age = options
        .older_than
        .map(|d| humantime::format_duration(d).to_string())
        .unwrap_or_default();
    let newest = |n: usize, what: &str| match n {
        1 => format!("the newest {what}"),
        n => format!("one of the {n} newest {what}s"),
    };
    match reason {
        Reason::Latest => "`latest` resolves to it".into(),
        Reason::Tagged => "a dist-tag names it".into(),
        Reason::NewestRelease => newest(releases, "release"),
        Reason::NewerPrerelease => "prerelease newer than every release".into(),
        Reason::NewestOlderPrerelease => format!(
            "{} older than the newest release (--keep-prereleases)",
            newest(older_prereleases, "prerelease")
        ),
        Reason::Recent => format!("published less than {age} ago"),
        Reason::OlderRelease => format!("release older than the {releases} newest (--keep)"),
        Reason::OlderPrerelease => match older_prereleases {
            0 => "prerelease older than the newest release".into(),
            m => format!("prerelease older than the newest release, beyond the {m} newest such"),
        },
        Reason::AllVersions => "--delete-all-versions".into(),
        Reason::Old => format!("published more than {age} ago (--older-than)"),
    }
}

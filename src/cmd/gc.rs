//! `ccc gc`: prune versions, drop orphan blobs, reclaim space.

use crate::catalog::gc::{Choice, Keep, Options, Reason, Report};
use crate::catalog::{Access, Catalog};
use crate::cli::{Checked, GcArgs};
use crate::error::Result;
use crate::output::{self, Column, Table};
use crate::purge::Purged;
use crate::units::{human_size, human_time};
use serde::Serialize;
use std::num::NonZeroUsize;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, Checked(args): Checked<GcArgs>) -> Result<ExitCode> {
    let options = options(&args);
    let mut catalog = Catalog::open(db, Access::ReadWrite)?;
    catalog.stop_on_interrupt()?;
    let spinner = indicatif::ProgressBar::with_draw_target(
        None,
        output::progress_target(args.quiet || args.json),
    );
    spinner.set_style(output::spinner_style());
    spinner.set_prefix("Collecting");
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let report = catalog.gc(&options, &|phase| spinner.set_message(phase.to_string()));
    spinner.finish_and_clear();
    let report = report?;
    let (purged, outcome) = super::purge_caches(
        &args.purge,
        report.dry_run,
        report.versions.iter().map(|c| {
            (
                c.package.as_str(),
                c.version.to_string(),
                c.files.as_slice(),
            )
        }),
    );
    // The report is printed whether or not the purge worked.
    print_report(&report, &options, &args, purged.as_ref())?;
    outcome.map(|()| ExitCode::SUCCESS)
}

/// `gc --json`: the report, and what --purge purged.
#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    purged: Option<&'a Purged>,
}

fn print_report(
    report: &Report,
    options: &Options,
    args: &GcArgs,
    purged: Option<&Purged>,
) -> Result<()> {
    if args.json {
        return output::print_json(&JsonReport { report, purged });
    }
    // A dry run shows every choice; a real run what it removed.
    let kept: &[Choice] = if report.dry_run { &report.kept } else { &[] };
    if !report.versions.is_empty() || !kept.is_empty() {
        let verb = if report.dry_run { "remove" } else { "removed" };
        // The version and the action are read whole; the date wraps at its
        // space and the reasons between words when the terminal is narrow.
        let mut table = Table::new(vec![
            Column::text("version"),
            Column::prose("published"),
            Column::number("files"),
            Column::number("size"),
            Column::text("action"),
            Column::prose("why"),
        ]);
        let mut rows: Vec<(&Choice, &str)> = report.versions.iter().map(|c| (c, verb)).collect();
        rows.extend(kept.iter().map(|c| (c, "keep")));
        // Package by package, newest first, as `ccc ls` lists them.
        rows.sort_by(|(a, _), (b, _)| (&a.package, &b.version).cmp(&(&b.package, &a.version)));
        for (c, action) in rows {
            let why: Vec<String> = c.why.iter().map(|r| explain(*r, options)).collect();
            table.add_row(vec![
                format!("{}@{}", c.package, c.version),
                human_time(c.published_at),
                c.file_count.to_string(),
                human_size(c.raw_bytes),
                action.to_string(),
                why.join("; "),
            ]);
        }
        output::print(table)?;
    }
    let verb = if report.dry_run {
        "Would remove"
    } else {
        "Removed"
    };
    // The streams' count is in --json.
    let brotli = if report.removed_brotli_count > 0 {
        format!(" + {} brotli", human_size(report.removed_brotli_bytes))
    } else {
        String::new()
    };
    output::print(format_args!(
        "{verb} {}, {}, {} ({} stored{brotli}); kept {}",
        output::count(report.versions.len() as u64, "version"),
        output::count(report.packages_removed.len() as u64, "package"),
        output::count(report.removed_blob_count, "blob"),
        human_size(report.removed_stored_bytes),
        output::count(report.kept.len() as u64, "version"),
    ))?;
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
        keep,
        older_than: args.older_than,
        dry_run: args.dry_run,
        list_files: !args.purge.caches.is_empty(),
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

//! `ccc diff PKG@A PKG@B`: the files added, removed and changed from one
//! version to another, from the catalog's rows alone.
//!
//! Paged as `ls` pages (`--limit`, `--offset`, [`super::ls::TABLE_ROWS`]
//! rows in a table by default, a line saying how to see the next ones):
//! the page is of the files that differ, in path order; the summary line
//! counts them all. `--json` lists every file unless `--limit` is given,
//! and then the page's, its totals still the versions'.

use super::ls::TABLE_ROWS;
use super::{resolve_version, version_title};
use crate::catalog::diff::{Diff, Side};
use crate::catalog::query::Page;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table, count};
use crate::spec::{Selector, Target};
use crate::units::human_size;
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Show the files added, removed and changed from one version to another.
///
/// Files are compared by content (sha256) without reading or decompressing
/// any of it: each file added, removed or changed is listed with its size
/// and stored size and their change (--json: both versions' sizes), then
/// the number of unchanged files. A
/// version may be `latest` or a range; the versions compared are named.
/// The table shows 100 files, as `ls` does, and says how to see the next
/// ones (--limit, --offset); the summary line counts them all.
/// Exits 0 whether or not the versions differ, like `git diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The version to compare from, like `app@1.4.0`.
    #[arg(value_name = "PKG@VERSION", value_parser = parse_version)]
    pub(crate) from: Target,

    /// The version to compare to: `app@1.5.0`, `other@2.0.0`, or just
    /// `1.5.0` (`latest`, `next`, `^1`) for another version of the same
    /// package.
    #[arg(value_name = "[PKG@]VERSION", value_parser = parse_other_version)]
    pub(crate) to: OtherVersion,

    /// Show at most N files that differ (0: all of them). Default: 100 in
    /// a table, all in JSON.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<u64>,

    /// Skip the first N files that differ, in path order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) offset: u64,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The second version `diff` compares.
#[derive(Debug, Clone)]
pub(crate) enum OtherVersion {
    /// A version of the first one's package: `1.5.0`, `latest`, `^1`.
    SamePackage(Selector),
    /// `PKG@VERSION`.
    Target(Target),
}

/// `PKG@VERSION` when there is an `@` after a scope's, else a version of
/// the first package.
fn parse_other_version(s: &str) -> Result<OtherVersion, String> {
    if s.get(1..).is_some_and(|rest| rest.contains('@')) {
        return parse_version(s).map(OtherVersion::Target);
    }
    Selector::parse("the first package", s)
        .map(OtherVersion::SamePackage)
        .map_err(|_| {
            "expected PKG@VERSION, or a version of the first package: exact (1.5.0), \
             a range (^1) or a dist-tag (`latest`, `next`)"
                .to_string()
        })
}

pub(crate) fn run(db: &Path, args: DiffArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let from = resolve_version(&catalog, &args.from)?;
    let to_target = match &args.to {
        OtherVersion::SamePackage(selector) => Target {
            package: from.package.clone(),
            version: Some(selector.clone()),
            path: None,
        },
        OtherVersion::Target(target) => target.clone(),
    };
    let to = resolve_version(&catalog, &to_target)?;
    let header = format!(
        "{} -> {}",
        version_title(&from, &args.from, None),
        version_title(&to, &to_target, None)
    );
    let mut diff = catalog.diff(from, to)?;
    let page = Page {
        offset: args.offset,
        limit: match args.limit {
            Some(0) => None,
            Some(n) => Some(n),
            None if args.json => None,
            None => Some(TABLE_ROWS),
        },
    };
    if args.json {
        keep_page(&mut diff, page);
        output::print_json(&diff)?;
    } else {
        output::print(render(&header, &diff, page))?;
    }
    // Like `git diff`: differences are the answer, not a failure.
    Ok(ExitCode::SUCCESS)
}

/// Keeps in `diff`'s lists only the files of `page`, counted over the
/// files that differ in path order.
fn keep_page(diff: &mut Diff, page: Page) {
    if page == Page::ALL {
        return;
    }
    let mut paths: Vec<&str> = diff
        .added
        .iter()
        .map(|f| f.path.as_str())
        .chain(diff.removed.iter().map(|f| f.path.as_str()))
        .chain(diff.changed.iter().map(|f| f.path.as_str()))
        .collect();
    paths.sort_unstable();
    let shown: std::collections::HashSet<String> = paths
        .into_iter()
        .skip(page.offset as usize)
        .take(page.limit.map_or(usize::MAX, |n| n as usize))
        .map(String::from)
        .collect();
    diff.added.retain(|f| shown.contains(&f.path));
    diff.removed.retain(|f| shown.contains(&f.path));
    diff.changed.retain(|f| shown.contains(&f.path));
}

/// The table: one row per file that differs in `page`, then a summary
/// line, then which rows were shown.
fn render(header: &str, diff: &Diff, page: Page) -> String {
    let mut out = String::new();
    // Two long versions break after the arrow rather than past the edge.
    let lines = match output::terminal_width() {
        Some(width) => output::wrap_words(header, width)
            .iter()
            .map(|line| output::shorten_middle(line, width))
            .collect(),
        None => vec![header.to_string()],
    };
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    if diff.is_empty() {
        out.push_str(&format!(
            "same files, same content ({})",
            count(diff.unchanged_count, "file")
        ));
        return out;
    }
    let mut table = Table::new(vec![
        Column::text(""),
        Column::path("path"),
        Column::number("size"),
        Column::number("change"),
        // The stored side is detail a narrow terminal can spare (--json
        // has it).
        Column::number("stored").optional(),
        Column::number("stored change").optional(),
    ]);
    // The size a file has now (before, for a removed file) and the
    // change: two narrow numbers, where `old -> new` would not fit a
    // terminal; --json has both sides.
    let sizes = |from: Option<&Side>, to: Option<&Side>, field: fn(&Side) -> u64| {
        let (a, b) = (from.map(field), to.map(field));
        (
            b.or(a).map(human_size).unwrap_or_default(),
            signed_size(b.unwrap_or(0) as i64 - a.unwrap_or(0) as i64),
        )
    };
    let mut row = |mark: &str, path: &str, from: Option<&Side>, to: Option<&Side>| {
        let (raw, raw_delta) = sizes(from, to, |s| s.raw_bytes);
        let (stored, stored_delta) = sizes(from, to, |s| s.stored_bytes);
        table.add_row(vec![
            mark.to_string(),
            path.to_string(),
            raw,
            raw_delta,
            stored,
            stored_delta,
        ]);
    };
    // By path, whatever the change, as `git diff --stat` lists them.
    let mut rows: Vec<(&str, &str, Option<&Side>, Option<&Side>)> = Vec::new();
    rows.extend(
        diff.added
            .iter()
            .map(|f| ("added", f.path.as_str(), None, Some(&f.side))),
    );
    rows.extend(
        diff.removed
            .iter()
            .map(|f| ("removed", f.path.as_str(), Some(&f.side), None)),
    );
    rows.extend(
        diff.changed
            .iter()
            .map(|f| ("changed", f.path.as_str(), Some(&f.from), Some(&f.to))),
    );
    rows.sort_by(|a, b| a.1.cmp(b.1));
    let total = rows.len() as u64;
    let shown = rows
        .into_iter()
        .skip(page.offset as usize)
        .take(page.limit.map_or(usize::MAX, |n| n as usize));
    let mut count_shown = 0;
    for (mark, path, from, to) in shown {
        row(mark, path, from, to);
        count_shown += 1;
    }
    if count_shown > 0 {
        out.push_str(&format!("{table}\n"));
    }
    out.push_str(&format!(
        "{} added, {} removed, {} changed, {} unchanged; size {}, stored {}",
        diff.added.len(),
        diff.removed.len(),
        diff.changed.len(),
        diff.unchanged_count,
        signed_size(diff.raw_bytes_delta),
        signed_size(diff.stored_bytes_delta),
    ));
    if let Some(rest) = super::ls::rest_line(page, count_shown, total, "differing file") {
        out.push('\n');
        out.push_str(&rest);
    }
    out
}

/// A size change for tables: `+1.2 KiB`, `-300 B`, `0 B`.
fn signed_size(delta: i64) -> String {
    let size = human_size(delta.unsigned_abs());
    match delta.signum() {
        1 => format!("+{size}"),
        -1 => format!("-{size}"),
        _ => size,
    }
}

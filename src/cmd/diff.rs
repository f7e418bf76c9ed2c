//! `ccc diff PKG@A PKG@B`: the files added, removed and changed from one
//! version to another, from the catalog's rows alone.

use super::resolve_version;
use crate::catalog::diff::{Diff, Side};
use crate::catalog::query::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::cli::{DiffArgs, OtherVersion};
use crate::error::Result;
use crate::output::{self, Column, Table, count};
use crate::spec::Selector;
use crate::units::human_size;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: DiffArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let from = resolve_version(&catalog, &args.from)?;
    let (to, asked) = match &args.to {
        OtherVersion::SamePackage(selector) => {
            (catalog.resolve(&from.package, selector)?, selector)
        }
        OtherVersion::Target(target) => (
            resolve_version(&catalog, target)?,
            target.version.as_ref().unwrap_or(&Selector::Latest),
        ),
    };
    let header = format!(
        "{} -> {}",
        described(&from, args.from.version.as_ref()),
        described(&to, Some(asked))
    );
    let diff = catalog.diff(from, to)?;
    if args.json {
        output::print_json(&diff)?;
    } else {
        output::print(render(&header, &diff))?;
    }
    // Like `git diff`: differences are the answer, not a failure.
    Ok(ExitCode::SUCCESS)
}

/// `app@1.4.7`, and what was asked when it was a tag or range.
fn described(row: &VersionRow, asked: Option<&Selector>) -> String {
    let exact = format!("{}@{}", row.package, row.version);
    match asked {
        Some(Selector::Exact(_)) | None => exact,
        Some(asked) => format!("{exact} ({asked})"),
    }
}

/// The table: one row per file that differs, then a summary line.
fn render(header: &str, diff: &Diff) -> String {
    let mut out = format!("{header}\n");
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
        Column::number("stored"),
        Column::number("change"),
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
    for (mark, path, from, to) in rows {
        row(mark, path, from, to);
    }
    out.push_str(&format!(
        "{table}\n{} added, {} removed, {} changed, {} unchanged; size {}, stored {}",
        diff.added.len(),
        diff.removed.len(),
        diff.changed.len(),
        diff.unchanged_count,
        signed_size(diff.raw_bytes_delta),
        signed_size(diff.stored_bytes_delta),
    ));
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

//! `ccc diff PKG@A PKG@B`: the files added, removed and changed from one
//! version to another, from the catalog's rows alone.

use super::{resolve_version, version_title};
use crate::catalog::diff::{Diff, Side};
use crate::catalog::{Access, Catalog};
use crate::cli::{DiffArgs, OtherVersion};
use crate::error::Result;
use crate::output::{self, Column, Table, count};
use crate::spec::Target;
use crate::units::human_size;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: DiffArgs) -> Result<ExitCode> {
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
    let diff = catalog.diff(from, to)?;
    if args.json {
        output::print_json(&diff)?;
    } else {
        output::print(render(&header, &diff))?;
    }
    // Like `git diff`: differences are the answer, not a failure.
    Ok(ExitCode::SUCCESS)
}

/// The table: one row per file that differs, then a summary line.
fn render(header: &str, diff: &Diff) -> String {
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

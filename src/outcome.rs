//! What a change to the catalog says it did: the words `ccc publish`,
//! `rm` and `tag` print for it, which the write API (`serve::api`) also
//! returns as its answer's summary, so that a change made over HTTP reads
//! as the same change made on the command line. The `--json` shapes of a
//! removal live here for the same reason.

use crate::catalog::make_deltas::Made;
use crate::catalog::rows::VersionRow;
use crate::catalog::tags::TagChange;
use crate::catalog::{Catalog, publish};
use crate::error::{Error, Result};
use crate::output::{self, count};
use crate::purge::Purged;
use crate::refs::check::Report;
use crate::units::{human_size, ratio};
use serde::Serialize;

/// The summary for people: totals, then where the content went.
///
/// ```text
/// Published app@1.4.0: 120 files, 3.1 MiB raw -> 812.4 KiB stored (25.6%) in 0.84s
///   the archive's top folder `package/` stripped from every path, as npm does
///   96 files with new content: 640.2 KiB added to the catalog
///     80 of them also as brotli: 512.0 KiB, 12.3% smaller than their gzip (583.9 KiB)
///   21 files (402.0 KiB) already in the catalog
///   3 files (12.1 KiB) repeat content of this version, stored once
///   1 path skipped
/// ```
pub(crate) fn published(report: &publish::Report) -> String {
    let verb = match (report.dry_run, report.replaced) {
        (true, false) => "Would publish",
        (true, true) => "Would replace",
        (false, true) => "Replaced",
        (false, false) => "Published",
    };
    let mut lines = vec![format!(
        "{verb} {}@{}: {}, {} raw -> {} stored ({}) in {:.2}s",
        report.package,
        report.version,
        count(report.file_count, "file"),
        human_size(report.raw_bytes),
        human_size(report.stored_bytes),
        ratio(report.stored_bytes, report.raw_bytes),
        report.elapsed_ms as f64 / 1000.0,
    )];
    if let Some(folder) = &report.stripped_folder {
        lines.push(format!(
            "  the archive's top folder `{folder}/` stripped from every path, as npm does"
        ));
    }
    let new = &report.new_content;
    if new.file_count > 0 {
        let added = if report.dry_run {
            "would be added"
        } else {
            "added"
        };
        lines.push(format!(
            "  {} with new content: {} {added} to the catalog",
            count(new.file_count, "file"),
            human_size(new.stored_bytes),
        ));
    }
    let br = &report.brotli;
    if br.blob_count > 0 {
        lines.push(format!(
            "    {} of them also as brotli: {}, {} smaller than their gzip ({})",
            br.blob_count,
            human_size(br.brotli_bytes),
            ratio(
                br.gzip_bytes - br.brotli_bytes.min(br.gzip_bytes),
                br.gzip_bytes
            ),
            human_size(br.gzip_bytes),
        ));
    }
    let chunked = &report.chunked;
    if chunked.file_count > 0 {
        lines.push(format!(
            "    {} of them ({}) stored uncompressed, in chunks: --chunked-from or larger",
            chunked.file_count,
            human_size(chunked.raw_bytes),
        ));
    }
    let stored = &report.already_stored;
    if stored.file_count > 0 {
        lines.push(format!(
            "  {} ({}) already in the catalog",
            count(stored.file_count, "file"),
            human_size(stored.raw_bytes),
        ));
    }
    let repeated = &report.repeated_in_version;
    if repeated.file_count > 0 {
        let verb = if repeated.file_count == 1 {
            "repeats"
        } else {
            "repeat"
        };
        lines.push(format!(
            "  {} ({}) {verb} content of this version, stored once",
            count(repeated.file_count, "file"),
            human_size(repeated.raw_bytes),
        ));
    }
    if let Some(line) = report.deltas.as_ref().and_then(deltas_line) {
        lines.push(line);
    }
    if let Some(checked) = &report.references {
        lines.push(format!("  references: {}", references_counted(checked)));
        for problem in checked.problems.iter().take(PROBLEMS_SHOWN) {
            lines.push(format!("    {problem}"));
        }
        if checked.problems.len() > PROBLEMS_SHOWN {
            lines.push(format!(
                "    and {} more: `ccc check {}@{}` lists them all",
                checked.problems.len() - PROBLEMS_SHOWN,
                report.package,
                report.version
            ));
        }
        if let Some(hint) = checked.root_path_hint() {
            lines.push(format!("    hint: {hint}"));
        }
        if let Some(entry) = &checked.commonjs_entry {
            lines.push(format!("    note: {entry}"));
        }
    }
    if !report.skipped.is_empty() {
        lines.push(format!(
            "  {} skipped",
            count(report.skipped.len() as u64, "path")
        ));
    }
    if !report.tags.is_empty() {
        let names = if report.dry_run { "would name" } else { "name" };
        lines.push(format!(
            "  dist-tags that {names} it: {}",
            report.tags.join(", ")
        ));
    }
    lines.join("\n")
}

/// The line on the deltas a publish made: what a browser holding the
/// newest predecessor downloads instead of the brotli streams, and what
/// was stored. None when there was no predecessor.
///
/// ```text
///   deltas against 0.169.0: 606 files, 6.0 MiB as brotli -> 210.9 KiB for a browser holding 0.169.0 (96.6% less); 1,211 deltas stored (1016.6 KiB)
/// ```
pub(crate) fn deltas_line(made: &Made) -> Option<String> {
    let newest = made.against.first()?;
    let against = made.against.join(", ");
    if made.file_count == 0 {
        return Some(format!(
            "  deltas against {against}: none clearly smaller than brotli"
        ));
    }
    let saved = made.brotli_bytes.saturating_sub(made.smallest_delta_bytes);
    Some(format!(
        "  deltas against {against}: {}, {} as brotli -> {} for a browser holding {newest} ({} less); {} stored ({})",
        count(made.file_count, "file"),
        human_size(made.brotli_bytes),
        human_size(made.smallest_delta_bytes),
        ratio(saved, made.brotli_bytes),
        count(made.delta_count, "delta"),
        human_size(made.delta_bytes),
    ))
}

/// Problems a publish's summary lists under its references.
const PROBLEMS_SHOWN: usize = 5;

/// The classes references fell in, those with any: `12 found, 1 missing`.
pub(crate) fn references_counted(report: &Report) -> String {
    let r = &report.references;
    let classes = [
        (r.found, "found"),
        (r.missing, "missing"),
        (r.case_mismatch, "case mismatch"),
        (r.leaves_version, "leaving the version"),
        (r.external, "external"),
        (r.unresolvable, "built at runtime"),
    ];
    let counted: Vec<String> = classes
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    match counted.is_empty() {
        true => "none".to_string(),
        false => counted.join(", "),
    }
}

/// What a tag change did, in words: one line for a tag that was added,
/// moved or removed, and a note for a `latest` set by hand. The server's
/// write API answers with the same words.
pub(crate) fn tag_change(change: &TagChange) -> String {
    let TagChange {
        package,
        tag,
        from,
        to,
        removed,
    } = change;
    let name = format!("{package}@{tag}");
    let mut text = match (from.as_deref(), to.as_deref(), removed) {
        (Some(from), Some(to), true) => {
            format!("Removed {name} (was {from}); {name} is the newest release again: {to}")
        }
        (Some(from), _, true) => format!("Removed {name} (was {from})"),
        (Some(from), Some(to), false) if from == to => format!("{name} already is {to}"),
        (Some(from), Some(to), false) => format!("{name}: {from} -> {to}"),
        (None, Some(to), false) => format!("{name}: {to} (new tag)"),
        _ => format!("{name}: nothing changed"),
    };
    // A `latest` set by hand is pinned against the highest-release rule:
    // prereleases, backports and `publish --tag` leave it; as with npm,
    // publishing a release newer than every other without `--tag` moves it.
    if let ("latest", Some(to), false) = (tag.as_str(), to, removed) {
        text.push_str(&format!(
            "\n{name} is pinned at {to}: prereleases, older releases and `publish --tag` leave it \
             there; a release newer than every other moves it, as npm publish does"
        ));
    }
    text
}

/// `rm --json`: the versions removed (or, dry, that would be), the
/// dist-tags that named them and the packages left without versions,
/// which go with them.
#[derive(Serialize)]
pub(crate) struct Removed {
    pub versions: Vec<VersionRow>,
    pub tags_removed: Vec<RemovedTag>,
    pub packages_removed: Vec<String>,
    /// Deltas whose file or dictionary no version holds any more.
    pub removed_delta_count: u64,
    pub removed_delta_bytes: u64,
    pub dry_run: bool,
    /// With --purge, what was purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purged: Option<Purged>,
}

/// A dist-tag removed with the version it named.
#[derive(Serialize)]
pub(crate) struct RemovedTag {
    pub package: String,
    pub tag: String,
    pub version: String,
}

/// What was removed, in words, as `ccc rm` prints it.
pub(crate) fn removed_text(
    removed: &[VersionRow],
    tags: &[RemovedTag],
    packages: &[String],
    (delta_count, delta_bytes): (u64, u64),
    dry_run: bool,
) -> String {
    let verb = if dry_run { "Would remove" } else { "Removed" };
    let mut lines = Vec::new();
    for v in removed {
        lines.push(format!("{verb} {}@{}", v.package, v.version));
    }
    for t in tags {
        lines.push(format!(
            "{verb} dist-tag {}@{} (named {})",
            t.package, t.tag, t.version
        ));
    }
    for package in packages {
        lines.push(format!("{verb} package {package} (no versions left)"));
    }
    if delta_count > 0 {
        lines.push(format!(
            "{verb} {} ({}): their file or dictionary is in no version any more",
            output::count(delta_count, "delta"),
            crate::units::human_size(delta_bytes)
        ));
    }
    if !dry_run {
        lines.push("Blobs stay until `ccc gc` removes the ones nothing uses.".into());
    }
    lines.join("\n")
}

/// Removes `package@version` (the server's write API): what `ccc rm`
/// prints for it, and its `--json`.
pub(crate) fn remove_one(
    catalog: &mut Catalog,
    package: &str,
    version: &semver::Version,
) -> Result<(String, serde_json::Value)> {
    let v = catalog
        .versions(package)?
        .into_iter()
        .find(|v| v.version == *version)
        .ok_or_else(|| Error::VersionNotFound {
            package: package.to_string(),
            version: version.to_string(),
        })?;
    let removal = catalog.remove_versions(&[v.id], false)?;
    let tags: Vec<RemovedTag> = removal
        .tags_removed
        .into_iter()
        .map(|(_, tag)| RemovedTag {
            package: v.package.clone(),
            tag,
            version: v.version.to_string(),
        })
        .collect();
    let removed = vec![v];
    let text = removed_text(
        &removed,
        &tags,
        &removal.packages_removed,
        removal.deltas_removed,
        false,
    );
    let (delta_count, delta_bytes) = removal.deltas_removed;
    let json = serde_json::to_value(Removed {
        versions: removed,
        tags_removed: tags,
        packages_removed: removal.packages_removed,
        removed_delta_count: delta_count,
        removed_delta_bytes: delta_bytes,
        dry_run: false,
        purged: None,
    })
    .map_err(|e| Error::Internal(e.to_string()))?;
    Ok((text, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> publish::Report {
        let group = |file_count, raw_bytes, stored_bytes| publish::Group {
            file_count,
            raw_bytes,
            stored_bytes,
        };
        publish::Report {
            package: "app".into(),
            version: "1.0.0".into(),
            file_count: 6,
            raw_bytes: 6000,
            stored_bytes: 3000,
            new_content: group(3, 3000, 1500),
            already_stored: group(2, 2000, 1000),
            repeated_in_version: group(1, 1000, 500),
            brotli: publish::BrotliGroup::default(),
            deltas: None,
            chunked: publish::Group::default(),
            references: None,
            replaced: false,
            tags: vec!["latest".into()],
            dry_run: false,
            elapsed_ms: 1234,
            skipped: vec![],
            stripped_folder: None,
            warnings: vec![],
        }
    }

    #[test]
    fn the_summary_tells_repeats_from_stored_content() {
        let text = published(&report());
        assert!(
            text.starts_with(
                "Published app@1.0.0: 6 files, 5.9 KiB raw -> 2.9 KiB stored (50.0%) in 1.23s"
            ),
            "{text}"
        );
        assert!(
            text.contains("3 files with new content: 1.5 KiB added to the catalog"),
            "{text}"
        );
        assert!(
            text.contains("2 files (2.0 KiB) already in the catalog"),
            "{text}"
        );
        assert!(
            text.contains("1 file (1000 B) repeats content of this version"),
            "{text}"
        );
        assert!(!text.contains("skipped"), "{text}");
        assert!(text.ends_with("dist-tags that name it: latest"), "{text}");
        assert!(!text.contains("brotli"), "{text}");

        let mut brotli = report();
        brotli.brotli = publish::BrotliGroup {
            blob_count: 2,
            raw_bytes: 2000,
            gzip_bytes: 1000,
            brotli_bytes: 800,
        };
        let text = published(&brotli);
        assert!(
            text.contains(
                "2 of them also as brotli: 800 B, 20.0% smaller than their gzip (1000 B)"
            ),
            "{text}"
        );

        let mut one = report();
        one.file_count = 1;
        one.new_content = publish::Group {
            file_count: 1,
            raw_bytes: 6000,
            stored_bytes: 3000,
        };
        one.already_stored = publish::Group::default();
        one.repeated_in_version = publish::Group::default();
        one.dry_run = true;
        one.skipped = vec![crate::catalog::rows::Skipped {
            path: "link".into(),
            reason: "symlink".into(),
        }];
        let text = published(&one);
        assert!(
            text.starts_with("Would publish app@1.0.0: 1 file,"),
            "{text}"
        );
        assert!(
            text.contains("1 file with new content: 2.9 KiB would be added"),
            "{text}"
        );
        assert!(
            !text.contains("already") && !text.contains("repeat"),
            "{text}"
        );
        assert!(text.contains("  1 path skipped"), "{text}");
        assert!(!text.contains("top folder"), "{text}");

        one.stripped_folder = Some("react".into());
        let text = published(&one);
        assert_eq!(
            text.lines().nth(1),
            Some("  the archive's top folder `react/` stripped from every path, as npm does"),
            "{text}"
        );
    }
}

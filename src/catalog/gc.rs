//! Garbage collection: prune old versions, drop blobs no asset references,
//! then give the freed pages back to the file system.
//!
//! # Which versions go
//!
//! Each package is judged on its own, its versions in semver order, with
//! the rules npm and cargo users expect of a registry:
//!
//! - `--keep N` keeps the N newest *releases*; every prerelease newer than
//!   the newest release (the next version's betas and release candidates)
//!   is kept too; prereleases older than the newest release were superseded
//!   by it, and only the `--keep-prereleases M` newest of them stay (none
//!   by default). A prerelease never takes a release's place among the N.
//! - `--older-than D` removes versions published more than D ago.
//! - With both, a version goes only when both rules let it go; with
//!   neither, no version goes and gc only drops orphan blobs (left by
//!   `ccc rm` or a `--force` publish).
//! - `ccc gc PKG-GLOB...` ([`Options::packages`]) judges only the
//!   packages whose names match (`app`, `@acme/*`), so a vendored
//!   library's versions are not judged by the app's rule; an argument
//!   that matches no package is an error, before anything is removed.
//!   Blobs no version uses are dropped catalog-wide either way: they are
//!   no package's.
//! - Whatever the rules, the [`pinned`] versions stay: the one `latest`
//!   resolves to and every one a dist-tag names, so gc never changes what
//!   those names serve. Only
//!   `--keep 0 --delete-all-versions` ([`Keep::Nothing`]) lifts that, as
//!   its name says.
//!
//! Every version judged is reported with the reasons it stays or goes
//! ([`Reason`]), so `--dry-run` shows exactly these choices.
//!
//! # Memory
//!
//! gc holds one package's versions at a time (and the packages' names),
//! whatever the number of versions: each version is handed to a
//! [`Reporter`] as it is judged (with, for `--purge`, the removed one's
//! file paths one by one) and the package's removed versions are deleted
//! before the next package is read. What to keep of the report (a page of
//! a table, a spooled JSON list) is the reporter's choice.
//!
//! Blobs go with their brotli streams, chunks and piece digests, and any of
//! those whose blob (for a brotli stream's digests, whose stream) is gone
//! (a catalog changed with foreign keys off) go too.
//!
//! Versions and blobs are removed in one transaction; `--dry-run` runs the
//! same statements and rolls back, so what it reports is exactly what a real
//! run would remove. Reclaiming space (`VACUUM`) runs after the commit.

use super::Catalog;
use super::SqliteResult;
use super::rows::VersionRow;
use crate::error::Result;
use crate::spec::Selector;
use crate::units::unix_now;
use semver::Version;
use serde::Serialize;
use std::num::NonZeroUsize;
use std::time::Duration;

/// What `--keep` spares in each package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The `releases` newest releases, every prerelease newer than the
    /// newest release, and the `older_prereleases` newest of the others.
    Newest {
        releases: NonZeroUsize,
        older_prereleases: usize,
    },
    /// Nothing, pinned versions included (`--keep 0 --delete-all-versions`).
    Nothing,
}

/// Told what gc does as it does it, so that nothing in gc grows with the
/// number of versions it judges.
pub(crate) trait Reporter {
    /// A step starts, for a progress line.
    fn phase(&mut self, _what: &str) {}
    /// A version was judged: kept, or removed (with `--dry-run`: would
    /// be), per [`Choice::removed`]. Called before a removed version is
    /// deleted, package by package, versions newest first.
    fn version(&mut self, choice: &Choice) -> Result<()>;
    /// One file path of the removed version `choice`, in path order, after
    /// [`Reporter::version`] was told of it; only with
    /// [`Options::list_files`].
    fn removed_file(&mut self, _choice: &Choice, _path: &str) -> Result<()> {
        Ok(())
    }
}

/// What to prune.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// Judge only the packages whose names match one of these globs
    /// (`app`, `@acme/*`); empty: every package.
    pub packages: Vec<String>,
    pub keep: Option<Keep>,
    pub older_than: Option<Duration>,
    pub dry_run: bool,
    /// Tell [`Reporter::removed_file`] the paths of the removed versions'
    /// files (read in the removing transaction, for `--purge`).
    pub list_files: bool,
}

/// Why gc keeps or removes a version; a version may have several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reason {
    /// Kept: `latest` resolves to it.
    Latest,
    /// Kept: a dist-tag other than `latest` names it.
    Tagged,
    /// Kept: one of the `--keep` newest releases.
    NewestRelease,
    /// Kept: a prerelease newer than the package's newest release.
    NewerPrerelease,
    /// Kept: one of the `--keep-prereleases` newest prereleases older
    /// than the newest release.
    NewestOlderPrerelease,
    /// Kept: published less than `--older-than` ago.
    Recent,
    /// Removed: a release beyond the `--keep` newest.
    OlderRelease,
    /// Removed: a prerelease older than the newest release, beyond
    /// `--keep-prereleases`.
    OlderPrerelease,
    /// Removed: `--keep 0 --delete-all-versions`.
    AllVersions,
    /// Removed: published more than `--older-than` ago.
    Old,
}

/// A version gc judged: removed, or kept, with the reasons.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Choice {
    #[serde(skip)]
    pub id: i64,
    pub package: String,
    #[serde(serialize_with = "super::rows::as_string")]
    pub version: Version,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub published_at: i64,
    pub file_count: u64,
    pub raw_bytes: u64,
    pub stored_bytes: u64,
    /// For a kept version every reason it stays; for a removed one every
    /// rule that let it go.
    pub why: Vec<Reason>,
    /// Removed (or, dry, would be); else kept.
    #[serde(skip)]
    pub removed: bool,
}

/// What gc did (or, dry, would do); the versions themselves went to the
/// [`Reporter`].
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// How many versions were removed.
    #[serde(skip)]
    pub removed_version_count: u64,
    /// How many versions the rules kept (none when no rule was given).
    #[serde(skip)]
    pub kept_version_count: u64,
    /// The packages left without versions, and so removed.
    pub packages_removed: Vec<String>,
    /// Blobs no version used any more, now gone.
    pub removed_blob_count: u64,
    /// Stored bytes of the removed blobs.
    pub removed_stored_bytes: u64,
    /// Brotli streams of the removed blobs, and any whose blob was gone.
    pub removed_brotli_count: u64,
    pub removed_brotli_bytes: u64,
    /// Deltas dropped: their file or their dictionary is in no version
    /// any more (`deltas`).
    pub removed_delta_count: u64,
    pub removed_delta_bytes: u64,
    /// The catalog's size before and after ([`Catalog::size`]).
    pub file_bytes_before: u64,
    pub file_bytes_after: u64,
    pub dry_run: bool,
}

/// The versions of one package (newest first) that gc never removes, with
/// the reason: the one `latest` resolves to, as the server and every
/// command resolve it (its tag, else the newest release), and every one
/// another dist-tag names. `tags` are the package's tag rows, as
/// `(tag, version row id)`. This is the one place such protection is
/// decided, so gc keeps honouring every name users are served by.
pub(crate) fn pinned<'a>(
    versions: &'a [VersionRow],
    tags: &[(String, i64)],
) -> Vec<(&'a Version, Reason)> {
    let by_id = |id: i64| versions.iter().find(|v| v.id == id).map(|v| &v.version);
    let latest = match tags.iter().find(|(tag, _)| tag == "latest") {
        Some((_, id)) => by_id(*id),
        None => Selector::Latest.pick(versions.iter().map(|v| &v.version)),
    };
    let tagged = tags
        .iter()
        .filter(|(tag, _)| tag != "latest")
        .filter_map(|(_, id)| by_id(*id))
        .map(|v| (v, Reason::Tagged));
    let mut out: Vec<(&Version, Reason)> =
        latest.map(|v| (v, Reason::Latest)).into_iter().collect();
    for (v, why) in tagged {
        if !out.contains(&(v, why)) {
            out.push((v, why));
        }
    }
    out
}

/// Judges every version of one package (newest first, as
/// [`Catalog::versions`] lists them); `cutoff` is the `--older-than` limit
/// in Unix seconds. Returns every version, newest first, kept or removed.
fn judge(
    versions: Vec<VersionRow>,
    tags: &[(String, i64)],
    keep: Option<Keep>,
    cutoff: Option<i64>,
) -> Vec<Choice> {
    let pinned: Vec<(Version, Reason)> = if keep == Some(Keep::Nothing) {
        Vec::new()
    } else {
        pinned(&versions, tags)
            .into_iter()
            .map(|(v, why)| (v.clone(), why))
            .collect()
    };
    let newest_release = versions
        .iter()
        .find(|v| v.version.pre.is_empty())
        .map(|v| v.version.clone());
    let (mut releases_seen, mut older_prereleases_seen) = (0, 0);
    let mut choices = Vec::with_capacity(versions.len());
    for v in versions {
        let mut stay = Vec::new();
        let mut go = Vec::new();
        stay.extend(
            pinned
                .iter()
                .filter(|(p, _)| *p == v.version)
                .map(|(_, why)| *why),
        );
        match keep {
            None => {}
            Some(Keep::Nothing) => go.push(Reason::AllVersions),
            Some(Keep::Newest {
                releases,
                older_prereleases,
            }) => {
                if v.version.pre.is_empty() {
                    releases_seen += 1;
                    if releases_seen <= releases.get() {
                        stay.push(Reason::NewestRelease);
                    } else {
                        go.push(Reason::OlderRelease);
                    }
                } else if newest_release.as_ref().is_none_or(|r| v.version > *r) {
                    stay.push(Reason::NewerPrerelease);
                } else {
                    older_prereleases_seen += 1;
                    if older_prereleases_seen <= older_prereleases {
                        stay.push(Reason::NewestOlderPrerelease);
                    } else {
                        go.push(Reason::OlderPrerelease);
                    }
                }
            }
        }
        if let Some(cutoff) = cutoff {
            if v.published_at < cutoff {
                go.push(Reason::Old);
            } else {
                stay.push(Reason::Recent);
            }
        }
        let goes = stay.is_empty() && !go.is_empty();
        choices.push(Choice {
            id: v.id,
            package: v.package,
            version: v.version,
            published_at: v.published_at,
            file_count: v.file_count,
            raw_bytes: v.raw_bytes,
            stored_bytes: v.stored_bytes,
            why: if goes { go } else { stay },
            removed: goes,
        });
    }
    choices
}

/// The packages of `all` whose names match one of `globs` (every one
/// when there are none); an error names a glob that matches none.
fn chosen(all: Vec<String>, globs: &[String]) -> Result<Vec<String>> {
    if globs.is_empty() {
        return Ok(all);
    }
    let mut set = globset::GlobSetBuilder::new();
    for glob in globs {
        let glob = globset::Glob::new(glob).map_err(|e| {
            crate::error::Error::Usage(format!("`{glob}` is not a glob: {}", e.kind()))
        })?;
        set.add(glob);
    }
    let set = set
        .build()
        .map_err(|e| crate::error::Error::Usage(e.to_string()))?;
    let mut used = vec![false; globs.len()];
    let mut out = Vec::new();
    for name in all {
        let hits = set.matches(&name);
        for &hit in &hits {
            used[hit] = true;
        }
        if !hits.is_empty() {
            out.push(name);
        }
    }
    if let Some(unused) = used.iter().position(|u| !u) {
        let glob = &globs[unused];
        let literal = !glob.contains(['*', '?', '[', '{']);
        return Err(match literal {
            true => crate::error::Error::package_not_found(glob.clone()),
            false => crate::error::Error::NoPackageMatches(glob.clone()),
        });
    }
    Ok(out)
}

/// What removing versions removed besides them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Removal {
    /// `(version row id, tag)` of every dist-tag that named a removed
    /// version.
    pub tags_removed: Vec<(i64, String)>,
    pub packages_removed: Vec<String>,
    /// Deltas dropped because no version holds their file or their
    /// dictionary any more (`deltas`): how many, their bytes.
    pub deltas_removed: (u64, u64),
}

/// The ids of blobs no asset uses. Selecting the id alone lets SQLite scan
/// the small sha256 index instead of the table, whose rows hold the
/// bodies (bench/SCALE.md, "gc and verify", measures both at a million
/// assets); only the orphans' own rows are then read.
/// `tests::orphans_are_found_without_reading_bodies` checks the plan.
const ORPHANS: &str = "SELECT id FROM blobs
  WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = blobs.id)";

/// The keys of brotli streams no asset uses: those of blobs about to go,
/// and any whose blob is already gone (a catalog changed with foreign keys
/// off). The brotli table's rows hold the streams, so its keys are read
/// from the `brotli_by_blob` index (schema 5); only the unused streams'
/// own rows are then read, to count their bytes.
/// `tests::unused_brotli_is_found_without_reading_bodies` checks the plan.
const UNUSED_BROTLI: &str = "SELECT blob_id FROM brotli
  WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = brotli.blob_id)";

/// Piece digests (`pieces`) whose stream is gone: their blob, or for a
/// brotli stream's (`coding` 1), that stream. Each is a search by rowid.
const ORPHAN_PIECES: &str = "DELETE FROM pieces
  WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.id = pieces.blob_id)
     OR (coding = 1 AND NOT EXISTS (SELECT 1 FROM brotli r WHERE r.blob_id = pieces.blob_id))";

/// Deletes versions (their assets and dist-tags go with them) and then
/// those of their packages left without versions, whose names are
/// returned. Blobs stay for gc.
fn delete_versions(conn: &rusqlite::Connection, ids: &[i64]) -> rusqlite::Result<Vec<String>> {
    let mut delete =
        conn.prepare_cached("DELETE FROM versions WHERE id = ?1 RETURNING package_id")?;
    let mut packages = std::collections::BTreeSet::new();
    for id in ids {
        let mut rows = delete.query([id])?;
        while let Some(row) = rows.next()? {
            packages.insert(row.get::<_, i64>(0)?);
        }
    }
    let mut empty = conn.prepare_cached(
        "DELETE FROM packages
          WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.package_id = ?1)
         RETURNING name",
    )?;
    let mut removed = Vec::new();
    for package in packages {
        let mut rows = empty.query([package])?;
        while let Some(row) = rows.next()? {
            removed.push(row.get(0)?);
        }
    }
    Ok(removed)
}

impl Catalog {
    /// Removes versions in one transaction (or, with `dry_run`, checks
    /// that it could and rolls back); returns the dist-tags that named
    /// them, which go with them, and the packages left empty and so
    /// removed too. Blobs stay until gc.
    pub(crate) fn remove_versions(&mut self, ids: &[i64], dry_run: bool) -> Result<Removal> {
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let mut tags_removed = Vec::new();
        for id in ids {
            for tag in super::tags::of_version(&tx, *id).at(&path)? {
                tags_removed.push((*id, tag));
            }
        }
        let packages_removed = delete_versions(&tx, ids).at(&path)?;
        let deltas_removed = match self.has_deltas() {
            true => super::deltas::drop_unused(&tx).at(&path)?,
            false => (0, 0),
        };
        if dry_run {
            tx.rollback().at(&path)?;
        } else {
            super::changed(&tx).at(&path)?;
            tx.commit().at(&path)?;
        }
        Ok(Removal {
            tags_removed,
            packages_removed,
            deltas_removed,
        })
    }

    /// Runs gc; see the module doc for the rules. `reporter` is told of
    /// each step as it starts and of each version as it is judged.
    pub(crate) fn gc(&mut self, options: &Options, reporter: &mut dyn Reporter) -> Result<Report> {
        let file_bytes_before = self.size()?;
        let path = self.path().to_path_buf();
        // The write lock first, then the choice: what is judged is exactly
        // what this transaction changes, whatever other processes publish.
        let tx = self.write_transaction()?;
        let (removed_version_count, kept_version_count, packages_removed) =
            self.prune_versions(options, reporter)?;
        // Brotli streams of the blobs about to go, and any whose blob is
        // already gone: deleted here rather than by the cascade, so that
        // they are counted.
        reporter.phase("finding unused blobs");
        let (mut brotli_removed, mut brotli_bytes_removed) = (0i64, 0i64);
        if self.has_brotli() {
            (brotli_removed, brotli_bytes_removed) = tx
                .query_row(
                    &format!(
                        "SELECT count(*), coalesce(sum(length(body)), 0) FROM brotli
                          WHERE blob_id IN ({UNUSED_BROTLI})"
                    ),
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .at(&path)?;
            tx.execute(
                &format!("DELETE FROM brotli WHERE blob_id IN ({UNUSED_BROTLI})"),
                [],
            )
            .at(&path)?;
        }
        // Deltas whose file or dictionary no version holds: before the
        // blobs, so that they are counted rather than cascaded.
        let (deltas_removed, delta_bytes_removed) = match self.has_deltas() {
            true => super::deltas::drop_unused(&tx).at(&path)?,
            false => (0, 0),
        };
        let (blobs_removed, blob_bytes_removed): (i64, i64) = tx
            .query_row(
                &format!(
                    "SELECT count(*), coalesce(sum({}), 0) FROM blobs WHERE id IN ({ORPHANS})",
                    crate::stored_len!("blobs")
                ),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .at(&path)?;
        let deleted = tx
            .execute(&format!("DELETE FROM blobs WHERE id IN ({ORPHANS})"), [])
            .at(&path)?;
        debug_assert_eq!(deleted as i64, blobs_removed);
        // The cascade took the chunks of the blobs just deleted; these are
        // any whose blob was gone already (foreign keys off), found
        // through the key index alone.
        tx.execute(
            "DELETE FROM chunks WHERE blob_id NOT IN (SELECT id FROM blobs)",
            [],
        )
        .at(&path)?;
        // Likewise piece digests, and those of a brotli stream that is gone;
        // the table holds no bodies, so reading all of it is cheap.
        tx.execute(ORPHAN_PIECES, []).at(&path)?;
        let changed = removed_version_count > 0
            || blobs_removed > 0
            || brotli_removed > 0
            || deltas_removed > 0;
        if options.dry_run {
            tx.rollback().at(&path)?;
        } else {
            if changed {
                super::changed(&tx).at(&path)?;
            }
            tx.commit().at(&path)?;
            if changed {
                reporter.phase(&format!(
                    "giving space back (rewriting {})",
                    crate::units::human_size(file_bytes_before)
                ));
                self.reclaim()?;
            }
        }
        Ok(Report {
            removed_version_count,
            kept_version_count,
            packages_removed,
            removed_blob_count: blobs_removed as u64,
            removed_stored_bytes: blob_bytes_removed as u64,
            removed_brotli_count: brotli_removed as u64,
            removed_brotli_bytes: brotli_bytes_removed as u64,
            removed_delta_count: deltas_removed,
            removed_delta_bytes: delta_bytes_removed,
            file_bytes_before,
            file_bytes_after: self.size()?,
            dry_run: options.dry_run,
        })
    }

    /// Rewrites the file without its free pages and empties the WAL; on a
    /// catalog Litestream replicates, leaves the log to it (see `catalog`).
    fn reclaim(&mut self) -> Result<()> {
        let sql = match self.is_replicated() {
            true => "VACUUM;",
            false => "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
        };
        self.conn().execute_batch(sql).at(self)
    }

    /// Judges the versions package by package, tells `reporter` of each,
    /// and deletes each package's removed versions (and the package, left
    /// empty) before reading the next, inside the caller's transaction.
    /// Returns how many versions were removed and kept, and the packages
    /// removed.
    fn prune_versions(
        &self,
        options: &Options,
        reporter: &mut dyn Reporter,
    ) -> Result<(u64, u64, Vec<String>)> {
        let (mut removed, mut kept, mut packages_removed) = (0, 0, Vec::new());
        if options.keep.is_none() && options.older_than.is_none() {
            return Ok((removed, kept, packages_removed));
        }
        let cutoff = options
            .older_than
            .map(|d| unix_now().saturating_sub(d.as_secs() as i64));
        let packages = chosen(self.package_names()?, &options.packages)?;
        let mut doomed = Vec::new();
        for (done, package) in packages.iter().enumerate() {
            reporter.phase(&format!(
                "choosing and removing versions ({done} of {})",
                crate::output::count(packages.len() as u64, "package")
            ));
            let tags = self.tag_rows(package)?;
            doomed.clear();
            for choice in judge(self.versions(package)?, &tags, options.keep, cutoff) {
                reporter.version(&choice)?;
                if !choice.removed {
                    kept += 1;
                    continue;
                }
                if options.list_files {
                    self.each_path(choice.id, |path| reporter.removed_file(&choice, path))?;
                }
                doomed.push(choice.id);
            }
            removed += doomed.len() as u64;
            packages_removed.extend(delete_versions(self.conn(), &doomed).at(self)?);
        }
        Ok((removed, kept, packages_removed))
    }

    /// Calls `each` with the path of every file of a version, in path
    /// order, holding one at a time.
    fn each_path(&self, version_id: i64, mut each: impl FnMut(&str) -> Result<()>) -> Result<()> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT path FROM assets WHERE version_id = ?1 ORDER BY path")
            .at(self)?;
        let mut rows = stmt.query([version_id]).at(self)?;
        while let Some(row) = rows.next().at(self)? {
            let path: String = row.get(0).at(self)?;
            each(&path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that SQLite runs `sql` without walking a table whose rows
    /// hold bodies: every full scan is of a covering index, and there is
    /// one.
    fn assert_reads_no_bodies(sql: &str) {
        let dir = tempfile::tempdir().unwrap();
        let catalog =
            Catalog::open(&dir.path().join("cdn.db"), crate::catalog::Access::Create).unwrap();
        let plan = crate::catalog::query_plan(catalog.conn(), sql, &[]);
        for step in &plan {
            assert!(
                !step.starts_with("SCAN") || step.contains("COVERING INDEX"),
                "a step reads every row of a table: {sql}: {plan:?}"
            );
        }
        assert!(
            plan.iter().any(|s| s.contains("COVERING INDEX")),
            "{sql}: {plan:?}"
        );
    }

    #[test]
    fn orphans_are_found_without_reading_bodies() {
        assert_reads_no_bodies(&format!("DELETE FROM blobs WHERE id IN ({ORPHANS})"));
    }

    #[test]
    fn unused_brotli_is_found_without_reading_bodies() {
        assert_reads_no_bodies(&format!(
            "SELECT count(*), coalesce(sum(length(body)), 0) FROM brotli
              WHERE blob_id IN ({UNUSED_BROTLI})"
        ));
        assert_reads_no_bodies(&format!(
            "DELETE FROM brotli WHERE blob_id IN ({UNUSED_BROTLI})"
        ));
    }

    const DAY: i64 = 86_400;
    const NOW: i64 = 1_000 * DAY;

    /// A package's versions as `(version, age in days)`, newest first as
    /// [`Catalog::versions`] returns them.
    fn history(versions: &[(&str, i64)]) -> Vec<VersionRow> {
        let mut rows: Vec<VersionRow> = versions
            .iter()
            .enumerate()
            .map(|(i, (v, age))| VersionRow {
                id: i as i64,
                package: "p".into(),
                version: Version::parse(v).unwrap(),
                published_at: NOW - age * DAY,
                file_count: 1,
                raw_bytes: 1,
                stored_bytes: 1,
            })
            .collect();
        rows.sort_by(|a, b| b.version.cmp(&a.version));
        rows
    }

    fn keep(releases: usize, older_prereleases: usize) -> Option<Keep> {
        Some(Keep::Newest {
            releases: NonZeroUsize::new(releases).unwrap(),
            older_prereleases,
        })
    }

    /// `version: reasons` of the kept and the removed versions.
    fn run(
        versions: &[(&str, i64)],
        keep: Option<Keep>,
        older_than_days: Option<i64>,
    ) -> (Vec<String>, Vec<String>) {
        let (removed, kept): (Vec<Choice>, Vec<Choice>) = judge(
            history(versions),
            &[],
            keep,
            older_than_days.map(|d| NOW - d * DAY),
        )
        .into_iter()
        .partition(|c| c.removed);
        let show = |choices: Vec<Choice>| {
            choices
                .into_iter()
                .map(|c| format!("{}: {:?}", c.version, c.why))
                .collect()
        };
        (show(kept), show(removed))
    }

    #[test]
    fn keep_counts_releases_and_keeps_newer_prereleases() {
        let (kept, removed) = run(
            &[("1.0.0", 3), ("1.0.1", 2), ("2.0.0-rc.1", 1)],
            keep(1, 0),
            None,
        );
        assert_eq!(
            kept,
            [
                "2.0.0-rc.1: [NewerPrerelease]",
                "1.0.1: [Latest, NewestRelease]"
            ]
        );
        assert_eq!(removed, ["1.0.0: [OlderRelease]"]);
    }

    #[test]
    fn superseded_prereleases_count_separately() {
        let versions = [
            ("6.6.7", 9),
            ("7.0.0-beta.15", 8),
            ("7.0.0-rc.3", 7),
            ("7.0.0", 6),
            ("7.8.0", 5),
            ("7.8.1", 4),
            ("8.0.0-alpha.13", 2),
            ("8.0.0-alpha.14", 1),
        ];
        let (kept, removed) = run(&versions, keep(3, 0), None);
        assert_eq!(
            kept,
            [
                "8.0.0-alpha.14: [NewerPrerelease]",
                "8.0.0-alpha.13: [NewerPrerelease]",
                "7.8.1: [Latest, NewestRelease]",
                "7.8.0: [NewestRelease]",
                "7.0.0: [NewestRelease]",
            ]
        );
        assert_eq!(
            removed,
            [
                "7.0.0-rc.3: [OlderPrerelease]",
                "7.0.0-beta.15: [OlderPrerelease]",
                "6.6.7: [OlderRelease]",
            ]
        );
        let (kept, removed) = run(&versions, keep(3, 1), None);
        assert!(kept.contains(&"7.0.0-rc.3: [NewestOlderPrerelease]".to_string()));
        assert_eq!(removed.len(), 2, "{removed:?}");
    }

    #[test]
    fn a_package_of_prereleases_only_keeps_them_all() {
        let (kept, removed) = run(
            &[("1.0.0-alpha.1", 9), ("1.0.0-alpha.2", 8)],
            keep(1, 0),
            None,
        );
        assert_eq!(
            kept,
            [
                "1.0.0-alpha.2: [Latest, NewerPrerelease]",
                "1.0.0-alpha.1: [NewerPrerelease]"
            ]
        );
        assert!(removed.is_empty());
    }

    #[test]
    fn older_than_never_removes_latest() {
        let versions = [("1.0.0", 90), ("1.1.0", 60), ("2.0.0-beta.1", 50)];
        let (kept, removed) = run(&versions, None, Some(30));
        assert_eq!(kept, ["1.1.0: [Latest]"]);
        assert_eq!(removed, ["2.0.0-beta.1: [Old]", "1.0.0: [Old]"]);
        let (kept, _) = run(&versions, None, Some(55));
        assert_eq!(kept, ["2.0.0-beta.1: [Recent]", "1.1.0: [Latest]"]);
    }

    #[test]
    fn with_both_rules_a_version_goes_only_when_both_let_it() {
        let versions = [("1.0.0", 90), ("1.1.0", 10), ("1.2.0", 60), ("1.3.0", 50)];
        let (kept, removed) = run(&versions, keep(1, 0), Some(30));
        assert_eq!(kept, ["1.3.0: [Latest, NewestRelease]", "1.1.0: [Recent]"]);
        assert_eq!(
            removed,
            ["1.2.0: [OlderRelease, Old]", "1.0.0: [OlderRelease, Old]"]
        );
    }

    #[test]
    fn only_delete_all_versions_lifts_the_pins() {
        let versions = [("1.0.0", 90), ("1.1.0", 60), ("2.0.0-rc.1", 5)];
        let (kept, removed) = run(&versions, Some(Keep::Nothing), None);
        assert!(kept.is_empty(), "{kept:?}");
        assert_eq!(removed.len(), 3);
        let (kept, removed) = run(&versions, Some(Keep::Nothing), Some(30));
        assert_eq!(kept, ["2.0.0-rc.1: [Recent]"]);
        assert_eq!(
            removed,
            ["1.1.0: [AllVersions, Old]", "1.0.0: [AllVersions, Old]"]
        );
    }

    /// Over many histories and every rule, `latest` resolves to the same
    /// version after gc as before.
    #[test]
    fn latest_resolves_the_same_after_any_gc() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let mut names = std::collections::BTreeSet::new();
            for _ in 0..1 + next(8) {
                let pre = match next(3) {
                    0 => format!("-rc.{}", next(3)),
                    _ => String::new(),
                };
                names.insert(format!("{}.{}.0{pre}", next(3), next(3)));
            }
            let versions: Vec<(&str, i64)> = names
                .iter()
                .map(|v| (v.as_str(), next(100) as i64))
                .collect();
            let all = history(&versions);
            let latest = pinned(&all, &[])[0].0.clone();
            for keep in [None, keep(1, 0), keep(2, 1), keep(4, 0)] {
                for cutoff in [None, Some(NOW - 50 * DAY), Some(NOW)] {
                    if keep.is_none() && cutoff.is_none() {
                        continue;
                    }
                    let choices = judge(all.clone(), &[], keep, cutoff);
                    let kept = choices.iter().filter(|c| !c.removed);
                    let after = Selector::Latest.pick(kept.map(|c| &c.version));
                    assert_eq!(after, Some(&latest), "{versions:?} {keep:?} {cutoff:?}");
                }
            }
        }
    }
}

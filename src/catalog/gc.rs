//! Garbage collection: prune old versions, drop blobs no asset references,
//! then give the freed pages back to the file system.
//!
//! Which versions go: with `--keep N`, all but the N newest of each package
//! (semver order); with `--older-than D`, those published more than D ago;
//! with both, only versions that both rules would remove (the newest N and
//! anything younger than D are kept). With neither, no version is removed and
//! gc only drops orphan blobs (left by `ccc rm` or a `--force` publish).
//!
//! Versions and blobs are removed in one transaction; `--dry-run` runs the
//! same statements and rolls back, so what it reports is exactly what a real
//! run would remove. Reclaiming space (`VACUUM`) runs after the commit.

use super::Catalog;
use crate::error::Result;
use crate::units::unix_now;
use serde::Serialize;
use std::time::Duration;

/// What to prune.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub keep: Option<usize>,
    pub older_than: Option<Duration>,
    pub dry_run: bool,
}

/// A version gc removed.
#[derive(Debug, Clone, Serialize)]
pub struct RemovedVersion {
    pub package: String,
    pub version: String,
    pub published_at: i64,
    pub file_count: u64,
    pub raw_bytes: u64,
}

/// What gc did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub versions: Vec<RemovedVersion>,
    pub packages_removed: Vec<String>,
    pub blobs_removed: u64,
    /// Stored bytes of the removed blobs.
    pub blob_bytes_removed: u64,
    /// Catalog size on disk (file plus WAL) before and after.
    pub file_bytes_before: u64,
    pub file_bytes_after: u64,
    pub dry_run: bool,
}

/// Deletes versions (their assets go with them) and then the packages left
/// without versions, whose names are returned. Blobs stay for gc.
fn delete_versions(tx: &rusqlite::Transaction<'_>, ids: &[i64]) -> rusqlite::Result<Vec<String>> {
    let mut delete = tx.prepare("DELETE FROM versions WHERE id = ?1")?;
    for id in ids {
        delete.execute([id])?;
    }
    tx.prepare(
        "DELETE FROM packages
          WHERE NOT EXISTS (SELECT 1 FROM versions v WHERE v.package_id = packages.id)
         RETURNING name",
    )?
    .query_map([], |r| r.get(0))?
    .collect()
}

impl Catalog {
    /// Removes versions in one transaction (or, with `dry_run`, checks
    /// that it could and rolls back); returns the packages left empty and
    /// so removed too. Blobs stay until gc.
    pub fn remove_versions(&mut self, ids: &[i64], dry_run: bool) -> Result<Vec<String>> {
        let path = self.path().to_path_buf();
        let err = |e| super::sqlite_err(&path, e);
        let tx = self
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let packages_removed = delete_versions(&tx, ids).map_err(err)?;
        if dry_run {
            tx.rollback().map_err(err)?;
        } else {
            tx.commit().map_err(err)?;
        }
        Ok(packages_removed)
    }

    /// Runs gc; see the module doc for the rules.
    pub fn gc(&mut self, options: &Options) -> Result<Report> {
        let file_bytes_before = self.disk_size();
        let doomed = self.choose_versions(options)?;
        let path = self.path().to_path_buf();
        let err = |e| super::sqlite_err(&path, e);
        let tx = self
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let ids: Vec<i64> = doomed.iter().map(|(id, _)| *id).collect();
        let packages_removed = delete_versions(&tx, &ids).map_err(err)?;
        let (blobs_removed, blob_bytes_removed): (i64, i64) = tx
            .query_row(
                "SELECT count(*), coalesce(sum(length(body)), 0) FROM blobs
                  WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = blobs.id)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(err)?;
        let deleted = tx
            .execute(
                "DELETE FROM blobs
                  WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = blobs.id)",
                [],
            )
            .map_err(err)?;
        debug_assert_eq!(deleted as i64, blobs_removed);
        if options.dry_run {
            tx.rollback().map_err(err)?;
        } else {
            tx.commit().map_err(err)?;
            if !doomed.is_empty() || blobs_removed > 0 {
                self.reclaim()?;
            }
        }
        Ok(Report {
            versions: doomed.into_iter().map(|(_, v)| v).collect(),
            packages_removed,
            blobs_removed: blobs_removed as u64,
            blob_bytes_removed: blob_bytes_removed as u64,
            file_bytes_before,
            file_bytes_after: self.disk_size(),
            dry_run: options.dry_run,
        })
    }

    /// Rewrites the file without its free pages and empties the WAL.
    fn reclaim(&mut self) -> Result<()> {
        self.conn()
            .execute_batch(
                "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .map_err(|e| self.err(e))
    }

    fn choose_versions(&self, options: &Options) -> Result<Vec<(i64, RemovedVersion)>> {
        if options.keep.is_none() && options.older_than.is_none() {
            return Ok(Vec::new());
        }
        let cutoff = options
            .older_than
            .map(|d| unix_now().saturating_sub(d.as_secs() as i64));
        let mut doomed = Vec::new();
        for package in self.package_names()? {
            // Newest first.
            for (rank, v) in self.versions(&package)?.into_iter().enumerate() {
                let beyond_keep = options.keep.is_none_or(|keep| rank >= keep);
                let too_old = cutoff.is_none_or(|cutoff| v.published_at < cutoff);
                if beyond_keep && too_old {
                    doomed.push((
                        v.id,
                        RemovedVersion {
                            package: v.package,
                            version: v.version.to_string(),
                            published_at: v.published_at,
                            file_count: v.file_count,
                            raw_bytes: v.raw_bytes,
                        },
                    ));
                }
            }
        }
        Ok(doomed)
    }

    fn package_names(&self) -> Result<Vec<String>> {
        self.conn()
            .prepare("SELECT name FROM packages ORDER BY name")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(|e| self.err(e))
    }
}

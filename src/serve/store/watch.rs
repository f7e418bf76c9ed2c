//! The staleness watch: what other processes did to the catalog the store
//! serves. At every [`STALENESS_CHECK`] the actor looks for cached versions
//! that were deleted or replaced, and at every check and before every query
//! it looks at the file the path names; `/healthz` reports what it found
//! ([`CatalogHealth`]).
//!
//! # Staleness
//!
//! Versions are immutable, but `ccc rm`, `ccc gc` or `publish --force` in
//! another process can delete or replace one. Every
//! [`STALENESS_CHECK`] the actor reads SQLite's `data_version`; when it
//! moved, it drops every cached entry whose version row is gone (a forced
//! republish gets a new row id, so it is caught too), which takes it out of
//! the workers' view at once. A deleted asset stops being served within
//! that interval. Entries of blobs whose streams changed since
//! (`recoded`: new deltas, or a brotli stream recompressed) are dropped
//! too, so that the next load offers what the catalog holds now.
//!
//! # The catalog file itself: replaced or deleted
//!
//! The store serves the catalog that its path (`--db`) names. At every
//! staleness check, and before every SQLite query, it compares the file the
//! path names (device and inode, following symlinks) with the one it has
//! open:
//!
//! - **Replaced** (`mv new.db cdn.db`, or a symlink switched): if the new
//!   file is a catalog this ccc can serve, the store closes the old
//!   connection, drops the whole cache and serves the new file from then
//!   on, and logs a note. Until the next check (at most [`STALENESS_CHECK`])
//!   hits may still answer from the old catalog, whose bytes are right for
//!   it; no query ever reads the old file once the path names another.
//! - **Replaced by something that is not a servable catalog** (not SQLite,
//!   not a catalog, a newer schema): the store keeps serving the previous
//!   catalog, which it still holds open, logs an error once for that file,
//!   and `/healthz` says `degraded` with the reason. It retries at every
//!   check, so fixing the file at the path is enough.
//! - **Deleted** (or unreadable): the store keeps serving from the open file,
//!   whose bytes are still on disk until it closes them, logs a warning
//!   once, and `/healthz` says `degraded`. A catalog put back at the path
//!   is picked up like a replacement.
//! - If the old catalog has been let go and the new one then cannot be
//!   opened (it changed again in between, say), there is nothing to answer
//!   from: catalog requests get 503 and `/healthz` says `unavailable` until
//!   a catalog can be opened at the path.
//!
//! - **Written to under an immutable reader**: a server that may not
//!   write the catalog, started while no process had it open, reads the
//!   file `immutable` (`catalog::read_only`), and such a connection sees no
//!   later commit. Before every query and at every check it looks for a
//!   log beside the file and at the file's length and modification time;
//!   when either moved, it opens the file again (through the writer's log
//!   if there is one now), drops the cache and logs a note.
//!
//! Replace the file with a rename, never by writing over it in place
//! (`cp new.db cdn.db` changes pages under every open reader), and only
//! once the new catalog's writer has finished (no `new.db-wal` left).
//!
//! The old connection is closed before the new file is opened, not after:
//! both files use the same `cdn.db-shm` by name, and closing one of two
//! handles on it would drop the locks this process holds through the other.
//! That is why a replacement is first checked with [`Catalog::check_file`],
//! which touches nothing but the file. Closing the old connection leaves
//! the side files alone: SQLite does not fold the log in on close once the
//! path no longer names the connection's file, and here the log is the new
//! file's.

use super::Shared;
use super::shared_read::{self, SharedRead};
use crate::catalog::SqliteResult;
use crate::catalog::{Access, Catalog};
use crate::error::{Error, Result};
use crate::file_id::FileId;
use crate::log;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the actor checks whether another process changed the catalog
/// (and replays the workers' cache hits when no miss did).
pub(crate) const STALENESS_CHECK: Duration = Duration::from_millis(250);

/// Prepared statements the store's connection keeps: its queries (lookup,
/// resolution, listings, dist-tags) and the transaction's `BEGIN` and
/// `COMMIT`, with room to spare; rusqlite's default of 16 is about that many.
const CACHED_STATEMENTS: usize = 32;

/// How much of the catalog file each of serve's connections reads through
/// a memory map rather than `pread` (SQLite's `mmap_size`, up to the 1 TiB
/// the bundled SQLite is built to allow, `.cargo/config.toml`): the whole
/// file, whatever its size. A larger file than that would be read past
/// it with `pread`. The map is address space, not memory: pages count
/// only once read, as page cache.
/// A page read through the map is the kernel's page cache itself: no
/// system call and no copy into SQLite's cache, which made `pread` the
/// largest item of a miss (bench/RPS.md). The mapped pages count in the
/// server's `RssFile`, shared and clean; its anonymous memory shrinks,
/// since SQLite's page cache then holds no page of the file. SQLite reads
/// the map only within a read transaction's snapshot, and in WAL mode no
/// checkpoint truncates the file under a reader's snapshot, so a `gc`
/// that shrinks the file never leaves a mapped page past its end in use.
const MAPPED_BYTES: i64 = 1 << 40;

/// How the catalog being served relates to the file its path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CatalogState {
    /// Serving the file the path names.
    Current,
    /// The path names no file, or one that cannot be read: serving the
    /// catalog as it was.
    Deleted,
    /// The path names a file that is not a servable catalog: serving the
    /// previous one.
    Rejected,
    /// No catalog open: catalog requests get 503.
    Unavailable,
}

impl CatalogState {
    pub(crate) const ALL: [CatalogState; 4] = [
        CatalogState::Current,
        CatalogState::Deleted,
        CatalogState::Rejected,
        CatalogState::Unavailable,
    ];

    /// The name `/healthz` and `/metrics` give it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CatalogState::Current => "current",
            CatalogState::Deleted => "deleted",
            CatalogState::Rejected => "rejected",
            CatalogState::Unavailable => "unavailable",
        }
    }
}

/// What `/healthz` reports about the catalog.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CatalogHealth {
    pub path: PathBuf,
    pub state: CatalogState,
    /// What is wrong, when the state is not `current`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Times the file at the path was replaced by another catalog and the
    /// store switched to it, or was opened again because another process
    /// wrote to a catalog read as an unchanging file.
    pub reloads: u64,
    /// The catalog's generation (`catalog::generation`): which change of
    /// it is served; None for one no ccc has changed since generations
    /// are counted, or when there is no catalog to read.
    pub generation: Option<u64>,
    /// When that change was committed (RFC 3339).
    pub changed_at: Option<String>,
    /// Seconds since then: how old what is served is.
    pub age_secs: Option<u64>,
    /// On a replica (`--max-lag`): what its follower last said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follower: Option<FollowerHealth>,
}

/// A replica's follower, as its heartbeat says: examples/deploy/ccc-follow
/// touches `DB.follow` each time it has checked that the catalog served is
/// the replica's newest (restored, or unchanged). A follower that died, or
/// fails to read or restore, stops touching it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FollowerHealth {
    /// Seconds since the follower last confirmed the catalog; None when
    /// it never has (no heartbeat file).
    pub seen_secs_ago: Option<u64>,
    pub max_lag_secs: u64,
    /// Not confirmed within `--max-lag`: `/healthz` answers 503.
    pub stale: bool,
}

impl FollowerHealth {
    /// The follower of the catalog at `db`, judged against `max_lag`.
    pub(super) fn of(db: &Path, max_lag: std::time::Duration) -> FollowerHealth {
        let seen = std::fs::metadata(crate::follow::heartbeat_path(db))
            .and_then(|m| m.modified())
            .ok()
            .map(|at| at.elapsed().unwrap_or_default());
        FollowerHealth {
            seen_secs_ago: seen.map(|s| s.as_secs()),
            max_lag_secs: max_lag.as_secs(),
            stale: seen.is_none_or(|s| s > max_lag),
        }
    }
}

/// The catalog being served and what is known about its file.
pub(super) struct Served {
    /// None only when [`CatalogState::Unavailable`].
    pub(super) catalog: Option<Catalog>,
    /// The file `catalog` was opened from.
    pub(super) file: Option<FileId>,
    pub(super) state: CatalogState,
    pub(super) problem: Option<String>,
    /// The trouble last logged (state, and the file the path named), so
    /// that trouble lasting many checks is logged once.
    pub(super) logged: Option<(CatalogState, Option<FileId>)>,
    pub(super) reloads: u64,
    pub(super) data_version: i64,
    /// The catalog generation up to which blobs given new streams after
    /// their publish (`catalog::deltas`, `recoded`) have been dropped from
    /// the cache.
    pub(super) recoded_seen: i64,
    /// With `--max-lag`: whether the follower was stale at the last
    /// check (at start, before the first), so that each change is logged
    /// once.
    pub(super) follower_stale: Option<bool>,
}

/// Opens the catalog at `path` read-only, with the file it was opened from,
/// its `data_version` and its generation (0 before its first change).
pub(super) fn open_file(path: &Path) -> Result<(Catalog, FileId, i64, i64)> {
    // Catalog::open's errors say best what is wrong with a missing file.
    let before = FileId::at(path).ok();
    let catalog = Catalog::open(path, Access::ReadOnly)?;
    catalog
        .conn()
        .set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
    catalog
        .conn()
        .pragma_update(None, "mmap_size", MAPPED_BYTES)
        .at(&catalog)?;
    let after = FileId::at(path).map_err(|e| Error::io(path, e))?;
    if before != Some(after) {
        return Err(Error::Unavailable {
            path: path.to_path_buf(),
            why: "the file was replaced while it was being opened".into(),
        });
    }
    let data_version = catalog.data_version()?;
    let generation = catalog.generation()?.map_or(0, |g| g.number as i64);
    Ok((catalog, after, data_version, generation))
}

/// What following the catalog file works on: the catalog served and the
/// read transaction its reads share, which the store owns, and what the
/// workers share with it (the path, their pool, the cache and the index).
pub(super) struct Watch<'a> {
    pub(super) served: &'a mut Served,
    pub(super) shared: &'a mut Option<SharedRead>,
    pub(super) workers: &'a Shared,
}

impl Served {
    /// Opens the workers' pool on the catalog served, unless it is read
    /// `immutable` (see `readers`).
    pub(super) fn open_readers(&self, workers: &Shared) {
        if let (Some(catalog), Some(file)) = (&self.catalog, self.file)
            && !catalog.is_immutable()
            && workers.config.readers > 0
        {
            workers.readers.open(file);
        }
    }

    pub(super) fn health(&self, workers: &Shared) -> CatalogHealth {
        let generation = self.catalog.as_ref().and_then(|catalog| {
            // A catalog that cannot say is reported without one; its
            // trouble shows in `state` at the next check.
            catalog.generation().ok().flatten()
        });
        CatalogHealth {
            path: workers.config.db.clone(),
            state: self.state,
            problem: self.problem.clone(),
            reloads: self.reloads,
            generation: generation.map(|g| g.number),
            changed_at: generation.map(|g| crate::units::rfc3339(g.changed_at)),
            age_secs: generation.map(|g| (crate::units::unix_now() - g.changed_at).max(0) as u64),
            follower: workers
                .config
                .max_lag
                .map(|max_lag| FollowerHealth::of(&workers.config.db, max_lag)),
        }
    }
}

impl Watch<'_> {
    /// Compares the file the path names with the one open, and acts on a
    /// difference: switch to a servable replacement, or keep serving what
    /// is open and say why. A file already rejected is checked again only
    /// when `recheck` (at the staleness check, not on every request).
    pub(super) fn follow_path(&mut self, recheck: bool) {
        let open = self.served.catalog.is_some();
        match FileId::at(&self.workers.config.db) {
            Ok(id) if open && self.served.file == Some(id) => {
                let written = self
                    .served
                    .catalog
                    .as_ref()
                    .is_some_and(Catalog::changed_since_open);
                if written {
                    self.reopen(id);
                } else {
                    self.settle(CatalogState::Current, None, Some(id))
                }
            }
            Ok(id)
                if !recheck && self.served.logged == Some((CatalogState::Rejected, Some(id))) => {}
            Ok(id) => self.replace(id),
            Err(e) => {
                let path = self.workers.config.db.display();
                let (state, why) = if open {
                    let why = format!(
                        "catalog {path} is gone ({e}); still serving it as it was, from the file held open"
                    );
                    (CatalogState::Deleted, why)
                } else {
                    let why =
                        format!("catalog {path} is gone ({e}); answering 503 until one is there");
                    (CatalogState::Unavailable, why)
                };
                self.settle(state, Some(why), None)
            }
        }
    }

    /// The catalog open `immutable` (a user who may not write it, and no
    /// log: see `catalog::read_only`) was written to since: such a
    /// connection would never see it, so open the same file again, through
    /// the writer's log if there is one now.
    fn reopen(&mut self, id: FileId) {
        self.workers.readers.close();
        self.end_shared();
        self.served.catalog = None;
        self.served.file = None;
        self.drop_cache();
        self.open_at_path(id, "was written to by another process");
    }

    /// The path names `id`, another file than the one open (if any).
    fn replace(&mut self, id: FileId) {
        let path = self.workers.config.db.clone();
        if self.served.catalog.is_some() {
            if let Err(e) = Catalog::check_file(&path) {
                let why = format!(
                    "catalog {} was replaced by a file ccc cannot serve ({e}); still serving the previous catalog",
                    path.display()
                );
                return self.settle(CatalogState::Rejected, Some(why), Some(id));
            }
            // Let go of the old file before opening the new (module doc).
            self.workers.readers.close();
            self.end_shared();
            self.served.catalog = None;
            self.served.file = None;
            self.drop_cache();
        }
        self.open_at_path(id, "was replaced by another file");
    }

    /// Opens the file the path names (`id`) after `what` happened to the
    /// one served, which is closed by now.
    fn open_at_path(&mut self, id: FileId, what: &str) {
        let path = self.workers.config.db.clone();
        match open_file(&path) {
            Ok((catalog, file, data_version, generation)) => {
                self.served.catalog = Some(catalog);
                self.served.file = Some(file);
                self.served.data_version = data_version;
                self.served.recoded_seen = generation;
                self.served.reloads += 1;
                self.served.open_readers(self.workers);
                log::err(format_args!(
                    "note: catalog {} {what}; now serving it (cache emptied)",
                    path.display()
                ));
                // That note says it all; what was logged before was about
                // other files.
                self.served.logged = None;
                self.settle(CatalogState::Current, None, Some(file));
            }
            Err(e) => self.settle(
                CatalogState::Unavailable,
                Some(format!(
                    "catalog {} cannot be opened ({e}); answering 503 until it can",
                    path.display()
                )),
                Some(id),
            ),
        }
    }

    /// Records the catalog's state; logs trouble once per state and file,
    /// and its end.
    fn settle(&mut self, state: CatalogState, problem: Option<String>, seen: Option<FileId>) {
        let served = &mut *self.served;
        served.state = state;
        let key = (state, seen);
        match &problem {
            Some(why) if served.logged != Some(key) => {
                let level = match state {
                    CatalogState::Deleted => "warning",
                    _ => "error",
                };
                log::err(format_args!("{level}: {why}"));
                served.logged = Some(key);
            }
            None if served.logged.is_some() => {
                log::err(format_args!(
                    "note: catalog {} is served again from the file its path names",
                    self.workers.config.db.display()
                ));
                served.logged = None;
            }
            _ => {}
        }
        served.problem = problem;
    }

    fn drop_cache(&mut self) {
        // Row ids are per file: what workers read from the old one is
        // neither cached nor remembered (`readers`, `queries`).
        self.workers.readers.changed();
        self.workers.policy().retain(|_| false);
        self.workers.index.retain(|_| false);
        self.workers
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Checks for changes by other processes: first the file (see the
    /// module doc), then, in the file still open, SQLite's `data_version`.
    pub(super) fn check_staleness(&mut self) -> Result<()> {
        self.follow_path(true);
        self.watch_follower();
        let Some(catalog) = &self.served.catalog else {
            return Ok(());
        };
        let now = catalog.data_version()?;
        if now != self.served.data_version {
            // Before the drop: no worker's read from before it is cached
            // after it (`readers`).
            self.workers.readers.changed();
            self.drop_stale()?;
            // Only now: a drop that failed is tried again at the next
            // check, instead of leaving deleted versions cached until
            // the catalog changes again.
            self.served.data_version = now;
        }
        Ok(())
    }

    /// With `--max-lag`: logs the follower turning stale and recovering,
    /// once each, as `/healthz` turns 503 and back. How it was at start
    /// is `ccc serve`'s to say.
    fn watch_follower(&mut self) {
        let Some(max_lag) = self.workers.config.max_lag else {
            return;
        };
        let db = &self.workers.config.db;
        let health = FollowerHealth::of(db, max_lag);
        let before = self.served.follower_stale.replace(health.stale);
        let lag = humantime::format_duration(max_lag);
        let heartbeat = crate::follow::heartbeat_path(db);
        match (before, health.stale, health.seen_secs_ago) {
            (Some(false), true, Some(ago)) => log::err(format_args!(
                "warning: replica stale: its follower last confirmed catalog {} {ago} s ago \
                 ({} is older than --max-lag {lag}); /healthz answers 503 until it confirms \
                 again: is `ccc follow` running, and can it read the replica?",
                db.display(),
                heartbeat.display(),
            )),
            (Some(false), true, None) => log::err(format_args!(
                "warning: replica stale: {} is gone, so nothing confirms catalog {} \
                 (--max-lag {lag}); /healthz answers 503",
                heartbeat.display(),
                db.display(),
            )),
            (Some(true), false, ago) => log::err(format_args!(
                "note: replica current again: its follower confirmed catalog {}{}; /healthz \
                 answers 200",
                db.display(),
                ago.map(|a| format!(" {a} s ago")).unwrap_or_default(),
            )),
            _ => {}
        }
    }

    /// Drops cached entries and index records whose version no longer
    /// exists, and those of blobs whose streams changed since the last
    /// check (new deltas, a recompressed brotli stream), whose entries
    /// would not send them.
    fn drop_stale(&mut self) -> Result<()> {
        let Some(catalog) = &self.served.catalog else {
            return Ok(());
        };
        let (recoded, seen) = catalog.recoded_since(self.served.recoded_seen)?;
        self.served.recoded_seen = seen;
        if !recoded.is_empty() {
            let recoded: HashSet<i64> = recoded.into_iter().collect();
            self.workers
                .policy()
                .retain(|p| !recoded.contains(&p.stored.blob_id));
            self.workers
                .index
                .retain(|r| !recoded.contains(&r.blob_id()));
        }
        let Some(catalog) = &self.served.catalog else {
            return Ok(());
        };
        let mut version_ids: HashSet<i64> = self
            .workers
            .policy()
            .values()
            .map(|p| p.stored.version_id)
            .collect();
        version_ids.extend(self.workers.index.version_ids());
        let mut gone = HashSet::new();
        for id in version_ids {
            if !catalog.version_exists(id)? {
                gone.insert(id);
            }
        }
        if !gone.is_empty() {
            self.workers
                .policy()
                .retain(|p| !gone.contains(&p.stored.version_id));
            self.workers
                .index
                .retain(|r| !gone.contains(&r.version_id()));
        }
        Ok(())
    }

    /// Ends the shared read transaction (see `shared_read`).
    fn end_shared(&mut self) {
        shared_read::end(self.served.catalog.as_ref(), self.shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::Actor;
    use crate::serve::store::owner::Store;
    use crate::serve::store::testing::{
        body, cached, catalog_with, key, mv, noise, publish_at, store,
    };
    use crate::spec::Selector;
    use rusqlite::OptionalExtension;

    #[test]
    fn the_whole_catalog_is_mapped_past_two_gib() {
        // The bundled SQLite clamps mmap_size to SQLITE_MAX_MMAP_SIZE (2 GiB
        // by default): the build's own limit lets the whole request stand.
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let (catalog, _, _, _) = open_file(&db).unwrap();
        let mapped: i64 = catalog
            .conn()
            .pragma_query_value(None, "mmap_size", |r| r.get(0))
            .unwrap();
        assert_eq!(mapped, MAPPED_BYTES);
        assert!(mapped > 1 << 31);
    }

    /// A store that has cached `a`, whose version a writer has just
    /// removed from the catalog in `dir`; the store has not looked yet.
    fn store_after_a_removal(dir: &Path) -> Store {
        let db = catalog_with(dir, &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.get(key("a")).unwrap().unwrap();
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let id = writer.versions("app").unwrap()[0].id;
        writer.remove_versions(&[id], false).unwrap();
        s
    }

    #[test]
    fn deleted_versions_leave_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store_after_a_removal(dir.path());
        assert!(cached(&s, "a"));
        s.housekeeping();
        assert_eq!(s.stats().invalidations, 1);
        assert!(!cached(&s, "a"), "gone from the workers' view too");
        assert!(s.get(key("a")).unwrap().is_none());
    }

    #[test]
    fn a_change_whose_check_failed_is_checked_again() {
        use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
        let dir = tempfile::tempdir().unwrap();
        let mut s = store_after_a_removal(dir.path());
        // The store's connection may not read `versions` for one check.
        let deny = |ctx: AuthContext<'_>| match ctx.action {
            AuthAction::Read {
                table_name: "versions",
                ..
            } => Authorization::Deny,
            _ => Authorization::Allow,
        };
        fn conn(s: &mut Store) -> &mut rusqlite::Connection {
            s.served.catalog.as_mut().unwrap().conn_mut()
        }
        conn(&mut s).authorizer(Some(deny)).unwrap();
        s.housekeeping();
        assert!(cached(&s, "a"), "not dropped by a check that failed");
        conn(&mut s)
            .authorizer(None::<fn(AuthContext<'_>) -> Authorization>)
            .unwrap();
        s.housekeeping();
        assert!(!cached(&s, "a"), "dropped at the next check");
        assert!(s.get(key("a")).unwrap().is_none());
    }

    #[test]
    fn a_catalog_renamed_over_the_path_is_served_from_the_next_query() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        // The actor loop ends the read's transaction once its span is over.
        s.inbox_empty();
        // Published while the store holds the file open, as in production:
        // the write-ahead log outlives this writer.
        publish_at(&db, "1.1.0", &[("c", noise(300))]);
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("a", noise(101)), ("z", noise(50))]);
        mv(&new, &db);

        // A hit still answers from the old catalog, whose bytes are right
        // for it; the first query notices the new file.
        assert_eq!(body(&mut s, "a"), noise(100));
        assert_eq!(body(&mut s, "z"), noise(50));
        assert_eq!(body(&mut s, "a"), noise(101), "the cache was emptied");
        assert!(s.get(key("b")).unwrap().is_none());
        let v11 = |s: &mut Store| s.resolve("app", &Selector::parse("app", "1.1.0").unwrap());
        assert_eq!(v11(&mut s).unwrap(), None, "nothing of the old file's log");
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert_eq!(s.stats().invalidations, 1);
        s.housekeeping();
        assert_eq!(s.health().reloads, 1, "one replacement, one reload");
    }

    #[test]
    fn a_file_that_is_not_a_catalog_is_refused_and_the_old_catalog_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        let junk = dir.path().join("junk");
        std::fs::write(&junk, b"not a catalog\n".repeat(100)).unwrap();
        mv(&junk, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Rejected);
        let problem = health.problem.unwrap();
        assert!(problem.contains("is not a SQLite database"), "{problem}");
        assert!(
            problem.contains("still serving the previous catalog"),
            "{problem}"
        );
        // Uncached files still come, right, from the catalog held open.
        assert_eq!(body(&mut s, "b"), noise(200));
        assert_eq!(body(&mut s, "a"), noise(100));

        let other = dir.path().join("other.db");
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
        drop(conn);
        mv(&other, &db);
        s.housekeeping();
        let problem = s.health().problem.unwrap();
        assert!(problem.contains("not a ccc catalog"), "{problem}");
        assert_eq!(body(&mut s, "b"), noise(200));

        let good = dir.path().join("good.db");
        publish_at(&good, "1.0.0", &[("a", noise(7))]);
        mv(&good, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert!(health.problem.is_none());
        assert_eq!(body(&mut s, "a"), noise(7));
    }

    #[test]
    fn a_deleted_catalog_is_served_from_the_open_file_until_one_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Deleted);
        assert!(health.problem.unwrap().contains("No such file"));
        assert_eq!(body(&mut s, "b"), noise(200), "read from the open file");
        assert!(!db.exists(), "serving never creates a catalog");

        publish_at(&db, "2.0.0", &[("n", noise(9))]);
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Current);
        assert!(s.get(key("b")).unwrap().is_none(), "the new file is served");
    }

    #[test]
    fn letting_go_of_an_old_file_leaves_the_new_files_log_alone() {
        // The old and the new file share cdn.db-wal and cdn.db-shm by name.
        // Closing the old connection must not fold "its" log in and delete
        // it: that log is now the new file's, with a writer's commit in it.
        // SQLite skips the checkpoint on close of a file that has moved or
        // gone (its "database is unmoved" check); this pins that down.
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        std::fs::remove_file(&db).unwrap();
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Deleted);
        publish_at(&db, "2.0.0", &[("b", noise(10))]);
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute("INSERT INTO meta (key, value) VALUES ('marker', 'x')", [])
            .unwrap();
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Current);
        let reader = rusqlite::Connection::open(&db).unwrap();
        let marker: Option<String> = reader
            .query_row("SELECT value FROM meta WHERE key = 'marker'", [], |r| {
                r.get(0)
            })
            .optional()
            .unwrap();
        assert_eq!(marker.as_deref(), Some("x"), "the writer's commit is lost");
        drop(writer);
    }

    #[test]
    fn with_no_catalog_left_to_serve_requests_fail_until_one_opens() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        // A replacement that passes the check of the file alone, but whose
        // write-ahead log cannot be opened: the old catalog is let go first.
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("a", noise(5))]);
        let wal = dir.path().join("cdn.db-wal");
        let _ = std::fs::remove_file(&wal);
        std::fs::create_dir(&wal).unwrap();
        mv(&new, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Unavailable, "{health:?}");
        let err = s.get(key("a")).unwrap_err();
        assert!(matches!(err, Error::Unavailable { .. }), "{err}");
        assert!(s.resolve("app", &Selector::Latest).is_err());

        std::fs::remove_dir(&wal).unwrap();
        s.housekeeping();
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert_eq!(body(&mut s, "a"), noise(5));
    }

    #[test]
    fn a_symlink_switched_to_another_catalog_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.db"), dir.path().join("two.db"));
        publish_at(&one, "1.0.0", &[("a", noise(10))]);
        publish_at(&two, "1.0.0", &[("a", noise(20))]);
        let db = dir.path().join("cdn.db");
        std::os::unix::fs::symlink("one.db", &db).unwrap();
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(10));
        // `ln -sfn two.db cdn.db`: a new link renamed over the old one.
        let next = dir.path().join("cdn.db.next");
        std::os::unix::fs::symlink("two.db", &next).unwrap();
        mv(&next, &db);
        s.housekeeping();
        assert_eq!(s.health().reloads, 1);
        assert_eq!(body(&mut s, "a"), noise(20));
    }

    #[test]
    fn replacements_are_checked_whatever_characters_the_path_has() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a dir?with #odd %41 chars, and ünïcode");
        std::fs::create_dir(&sub).unwrap();
        let db = sub.join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(10))]);
        Catalog::check_file(&db).unwrap();
        let err = Catalog::check_file(&sub.join("missing.db")).unwrap_err();
        assert!(err.to_string().contains("missing.db"), "{err}");
    }
}

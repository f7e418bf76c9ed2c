//! `ccc follow`: keeps a replica's catalog up to date from the writer's
//! Litestream replica, in proportion to each change.
//!
//! Litestream ships the writer's changed pages as LTX files ([`ltx`]). A
//! follower reads the ones after its copy's position ([`plan`]) and writes
//! their page images into the catalog that `ccc serve` reads, through
//! SQLite's `sqlite_dbpage` table, in one write transaction per round. So
//! the catalog stays an ordinary WAL-mode database that SQLite itself
//! changes:
//! - the server's read transactions keep their snapshots and move to the
//!   new state at once when the round commits; it notices the change
//!   through `data_version`, as it notices a local publish;
//! - a round that fails (a torn or damaged file, a full disk, a kill)
//!   rolls back and leaves the catalog as the last round left it;
//! - a round costs the pages changed, not the catalog: no second copy, no
//!   full restore. Only a follower without a copy, or one whose next files
//!   were merged away while it was down, starts from a snapshot, still in
//!   one transaction (its WAL then grows to the catalog's size until
//!   checkpointed).
//!
//! Litestream's own ways were measured and not taken (bench/SCALE.md): its
//! follow mode writes pages under readers without a journal, and its VFS
//! costs milliseconds a read transaction inside the server.
//!
//! The follower owns `DB.follow`: it writes its position there (the
//! replica's transaction id, in hex) after each round that left the copy
//! at the replica's newest, which is also the heartbeat that `ccc serve
//! --max-lag` judges a replica's freshness by. A round that commits but
//! dies before writing it applies the same files again next time, which
//! leaves the same pages. Without the file the copy is taken from a
//! snapshot again.

pub(crate) mod ltx;
pub(crate) mod plan;
pub(crate) mod source;

/// The follower's file beside the catalog; named by the catalog, which
/// refuses to write a copy that has one.
pub(crate) use crate::catalog::side_files::heartbeat_path;
use crate::catalog::side_files::side;
use crate::catalog::sqlite_err;
use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a round waits for another writer of the served catalog.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// A follower: a replica to read and the catalog it keeps.
pub(crate) struct Follower {
    pub replica: source::Source,
    pub served: PathBuf,
}

/// What one round did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Round {
    /// The replica holds no snapshot to start from yet.
    Waiting,
    /// The copy was already at the replica's newest transaction.
    Current { txid: u64 },
    /// Files were applied, in one transaction.
    Applied(Applied),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    pub from: Option<u64>,
    pub txid: u64,
    pub files: usize,
    pub pages: u64,
    /// Started from a snapshot (no copy, or no way on from it).
    pub from_snapshot: bool,
    /// The served catalog did not exist and was made.
    pub created: bool,
    /// When Litestream took the newest transaction from the writer, ms
    /// since the epoch (the LTX timestamp).
    pub shipped_ms: u64,
}

impl Follower {
    /// Brings the served catalog to the replica's newest transaction.
    pub(crate) fn round(&self) -> Result<Round> {
        let files = self.replica.list()?;
        let position = self.position();
        let Some(target) = plan::newest(&files) else {
            return Ok(Round::Waiting);
        };
        let Some(steps) = plan::plan(&files, position) else {
            if files.iter().any(|f| f.level == plan::SNAPSHOT_LEVEL) {
                return Err(Error::BadInput {
                    path: PathBuf::from(self.replica.describe()),
                    what: format!(
                        "no chain of LTX files reaches its newest transaction {target:016x} (files are missing)"
                    ),
                });
            }
            return Ok(Round::Waiting);
        };
        if steps.is_empty() {
            self.record(target)?;
            return Ok(Round::Current { txid: target });
        }
        let from_snapshot = steps[0].level == plan::SNAPSHOT_LEVEL;
        let created = !self.served.exists();
        let local = steps
            .iter()
            .map(|step| self.replica.fetch(step, &self.served))
            .collect::<Result<Vec<_>>>()?;
        let paths: Vec<&Path> = local.iter().map(|l| l.path.as_path()).collect();
        let written = if created {
            self.create(&paths)?
        } else {
            apply(&self.served, &paths, false)?
        };
        self.record(target)?;
        Ok(Round::Applied(Applied {
            from: position.filter(|_| !from_snapshot),
            txid: target,
            files: steps.len(),
            pages: written.pages,
            from_snapshot,
            created,
            shipped_ms: written.shipped_ms,
        }))
    }

    /// Removes what a follower killed mid-round left beside the served
    /// catalog (a catalog being made, downloads); returns their paths.
    pub(crate) fn remove_leftovers(&self) -> Result<Vec<PathBuf>> {
        let building = side(&self.served, ".building");
        let mut leftovers = vec![
            side(&building, "-journal"),
            building,
            side(&self.position_path(), ".tmp"),
        ];
        let downloads = source::download_prefix(&self.served);
        let folder = source::folder_of(&self.served);
        if let Ok(entries) = std::fs::read_dir(folder) {
            leftovers.extend(entries.flatten().map(|e| e.path()).filter(|path| {
                path.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&downloads))
            }));
        }
        let mut removed = Vec::new();
        for path in leftovers {
            if remove_if_there(&path)? {
                removed.push(path);
            }
        }
        Ok(removed)
    }

    /// The heartbeat and position file beside the served catalog.
    pub(crate) fn position_path(&self) -> PathBuf {
        heartbeat_path(&self.served)
    }

    /// The transaction the served catalog holds, as last recorded; None
    /// without a catalog or a readable record.
    fn position(&self) -> Option<u64> {
        if !self.served.exists() {
            return None;
        }
        let text = std::fs::read_to_string(self.position_path()).ok()?;
        u64::from_str_radix(text.trim(), 16).ok()
    }

    /// Records `txid` as the copy's position, atomically; the file's new
    /// modification time is the heartbeat.
    fn record(&self, txid: u64) -> Result<()> {
        let path = self.position_path();
        let temporary = side(&path, ".tmp");
        std::fs::write(&temporary, format!("{txid:016x}\n"))
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(|e| Error::io(&path, e))
    }

    /// Makes the served catalog, which does not exist, from `steps` (a
    /// snapshot first): built beside it and renamed into place once
    /// committed, so that a server waiting for the path never sees half.
    fn create(&self, steps: &[&Path]) -> Result<Written> {
        let building = side(&self.served, ".building");
        for stale in [
            &building,
            &side(&building, "-journal"),
            &side(&self.served, "-wal"),
            &side(&self.served, "-shm"),
        ] {
            remove_if_there(stale)?;
        }
        let written = apply(&building, steps, true).inspect_err(|_| {
            let _ = std::fs::remove_file(&building);
        })?;
        std::fs::rename(&building, &self.served).map_err(|e| Error::io(&self.served, e))?;
        let dir = source::folder_of(&self.served);
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
        Ok(written)
    }
}

/// Removes the file at `path` if there is one; whether there was.
fn remove_if_there(path: &Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

struct Written {
    pages: u64,
    shipped_ms: u64,
}

/// Writes the pages of `steps`, in order, into the database at `db` in one
/// transaction, and cuts it to the last file's size. `fresh`: `db` is a new
/// file, whose page size is set from the files.
fn apply(db: &Path, steps: &[&Path], fresh: bool) -> Result<Written> {
    let sql = |e| sqlite_err(db, e);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | if fresh {
            OpenFlags::SQLITE_OPEN_CREATE
        } else {
            OpenFlags::empty()
        };
    let mut conn = Connection::open_with_flags(db, flags).map_err(sql)?;
    conn.busy_timeout(BUSY_WAIT).map_err(sql)?;
    let page_size = page_size_of(steps)?;
    if fresh {
        conn.pragma_update(None, "page_size", page_size)
            .map_err(sql)?;
    }
    let own: u32 = conn
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .map_err(sql)?;
    if own != page_size {
        return Err(Error::BadInput {
            path: db.to_path_buf(),
            what: format!(
                "its pages are {own} bytes and the replica's {page_size}: remove it (and {}) to take a fresh copy",
                side(db, ".follow").display()
            ),
        });
    }
    let transaction = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let mut pages = 0u64;
    let mut last = None;
    // Page 1 goes in last: it holds the schema's cookie, and a statement
    // that sees the cookie change reads the schema again, which is only
    // whole once every other page of the change is in place.
    let mut first_page = None;
    {
        let mut insert = transaction
            .prepare("INSERT INTO sqlite_dbpage(pgno, data) VALUES (?1, ?2)")
            .map_err(sql)?;
        for step in steps {
            let header = ltx::read(step, |pgno, image| {
                if pgno == 1 {
                    first_page = Some(image.to_vec());
                } else {
                    insert.execute((pgno, image)).map_err(sql)?;
                }
                pages += 1;
                Ok(())
            })
            .map_err(|stop| match stop {
                ltx::Stop::File(e) => damaged(step, e),
                ltx::Stop::Page(e) => e,
            })?;
            last = Some(header);
        }
        if let Some(image) = &first_page {
            insert.execute((1, image)).map_err(sql)?;
        }
    }
    let last = last.expect("a plan that applies has a step");
    let now: u32 = transaction
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .map_err(sql)?;
    if now > last.commit {
        // A NULL page cuts the database before it (sqlite_dbpage).
        transaction
            .execute(
                "INSERT INTO sqlite_dbpage(pgno, data) VALUES (?1, NULL)",
                [last.commit + 1],
            )
            .map_err(sql)?;
    }
    transaction.commit().map_err(sql)?;
    Ok(Written {
        pages,
        shipped_ms: last.timestamp_ms,
    })
}

/// The one page size of the files of `steps`.
fn page_size_of(steps: &[&Path]) -> Result<u32> {
    let mut size = None;
    for step in steps {
        let header = ltx::header(step).map_err(|e| damaged(step, e))?;
        match size {
            Some(size) if size != header.page_size => {
                return Err(Error::BadInput {
                    path: step.to_path_buf(),
                    what: format!(
                        "its pages are {} bytes, the files before it {size}",
                        header.page_size
                    ),
                });
            }
            _ => size = Some(header.page_size),
        }
    }
    size.ok_or_else(|| Error::Internal("a plan that applies has a step".into()))
}

/// An LTX file that cannot be read or applied, named.
fn damaged(path: &Path, e: ltx::LtxError) -> Error {
    match e {
        ltx::LtxError::Io(source) => Error::Io {
            path: path.to_path_buf(),
            source,
        },
        other => Error::BadInput {
            path: path.to_path_buf(),
            what: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer's database in rollback mode, whose file holds exactly its
    /// last commit, and a replica directory of LTX files made from it as
    /// Litestream makes them: a snapshot, then each change's pages.
    struct Writer {
        dir: tempfile::TempDir,
        conn: Connection,
        image: Vec<u8>,
        txid: u64,
    }

    const PAGE: usize = 4096;

    impl Writer {
        fn new() -> Writer {
            let dir = tempfile::tempdir().expect("tempdir");
            let conn = Connection::open(dir.path().join("writer.db")).expect("open");
            conn.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = DELETE; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);")
                .expect("schema");
            let mut writer = Writer {
                dir,
                conn,
                image: Vec::new(),
                txid: 0,
            };
            writer.snapshot();
            writer
        }

        fn replica(&self) -> PathBuf {
            self.dir.path().join("replica")
        }

        fn served(&self) -> PathBuf {
            self.dir.path().join("served.db")
        }

        fn follower(&self) -> Follower {
            Follower {
                replica: source::Source::Dir(self.replica()),
                served: self.served(),
            }
        }

        fn file_image(&self) -> Vec<u8> {
            std::fs::read(self.dir.path().join("writer.db")).expect("read")
        }

        fn write_ltx(&self, level: u8, min_txid: u64, pages: &[(u32, Vec<u8>)], commit: u32) {
            let header = ltx::Header {
                page_size: PAGE as u32,
                commit,
                min_txid,
                max_txid: self.txid,
                timestamp_ms: 1_700_000_000_000,
            };
            let dir = self.replica().join("ltx").join(level.to_string());
            std::fs::create_dir_all(&dir).expect("mkdir");
            let name = format!("{min_txid:016x}-{:016x}.ltx", self.txid);
            std::fs::write(dir.join(name), ltx::encode(&header, pages)).expect("write");
        }

        /// A snapshot of the whole database at the current transaction.
        fn snapshot(&mut self) {
            self.txid += 1;
            self.image = self.file_image();
            let pages: Vec<_> = self
                .image
                .chunks(PAGE)
                .enumerate()
                .map(|(i, p)| (i as u32 + 1, p.to_vec()))
                .collect();
            self.write_ltx(plan::SNAPSHOT_LEVEL, 1, &pages, pages.len() as u32);
        }

        /// Runs `sql`, then writes the pages it changed as one level-0 file.
        fn change(&mut self, sql: &str) {
            self.conn.execute_batch(sql).expect("change");
            self.txid += 1;
            let after = self.file_image();
            let changed: Vec<_> = after
                .chunks(PAGE)
                .enumerate()
                .filter(|(i, p)| self.image.get(i * PAGE..(i + 1) * PAGE) != Some(*p))
                .map(|(i, p)| (i as u32 + 1, p.to_vec()))
                .collect();
            self.write_ltx(0, self.txid, &changed, (after.len() / PAGE) as u32);
            self.image = after;
        }
    }

    fn rows(db: &Path) -> Vec<(i64, Vec<u8>)> {
        let conn = Connection::open(db).expect("open");
        let mut stmt = conn
            .prepare("SELECT k, v FROM t ORDER BY k")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    fn writer_rows(w: &Writer) -> Vec<(i64, Vec<u8>)> {
        rows(&w.dir.path().join("writer.db"))
    }

    #[test]
    fn a_copy_is_made_from_the_snapshot_then_follows_change_by_change() {
        let mut w = Writer::new();
        w.change("INSERT INTO t VALUES (1, zeroblob(10000)), (2, x'0102');");
        let follower = w.follower();
        let Round::Applied(first) = follower.round().expect("round") else {
            panic!("applied")
        };
        assert!(first.created && first.from_snapshot);
        assert_eq!((first.files, first.txid), (2, 2));
        assert_eq!(rows(&w.served()), writer_rows(&w));

        w.change("UPDATE t SET v = x'ff' WHERE k = 2;");
        let Round::Applied(next) = follower.round().expect("round") else {
            panic!("applied")
        };
        assert!(!next.from_snapshot && !next.created);
        assert_eq!((next.from, next.txid, next.files), (Some(2), 3, 1));
        assert!(next.pages <= 2, "one row changed: {next:?}");
        assert_eq!(rows(&w.served()), writer_rows(&w));
        assert_eq!(follower.round().expect("round"), Round::Current { txid: 3 });
        let recorded = std::fs::read_to_string(follower.position_path()).expect("position");
        assert_eq!(recorded.trim(), "0000000000000003");
    }

    #[test]
    fn a_reader_keeps_its_snapshot_through_a_round_and_then_sees_the_change() {
        let mut w = Writer::new();
        w.change("INSERT INTO t VALUES (1, x'01');");
        let follower = w.follower();
        follower.round().expect("first round");
        let served = w.served();
        // The served catalog is in WAL mode, as the writer's would be.
        Connection::open(&served)
            .and_then(|c| c.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())))
            .expect("wal");
        let reader = Connection::open(&served).expect("reader");
        reader.execute_batch("BEGIN").expect("begin");
        let count = |c: &Connection| -> i64 {
            c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .expect("count")
        };
        assert_eq!(count(&reader), 1);

        w.change("INSERT INTO t VALUES (2, x'02'), (3, zeroblob(9000));");
        follower.round().expect("round under a reader");
        assert_eq!(count(&reader), 1, "the reader's snapshot moved under it");
        reader.execute_batch("COMMIT").expect("commit");
        assert_eq!(count(&reader), 3);
    }

    #[test]
    fn a_damaged_file_changes_nothing_and_a_shrink_cuts_the_file() {
        let mut w = Writer::new();
        w.change("INSERT INTO t VALUES (1, zeroblob(40000));");
        let follower = w.follower();
        follower.round().expect("first round");
        let before = rows(&w.served());

        w.change("DELETE FROM t; VACUUM;");
        let name = format!("{:016x}-{:016x}.ltx", w.txid, w.txid);
        let path = w.replica().join("ltx/0").join(name);
        let good = std::fs::read(&path).expect("read");
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        std::fs::write(&path, &bad).expect("damage");
        let err = follower.round().expect_err("a damaged file");
        assert!(err.to_string().contains("checksum"), "{err}");
        assert_eq!(rows(&w.served()), before);
        let recorded = std::fs::read_to_string(follower.position_path()).expect("position");
        assert_eq!(recorded.trim(), "0000000000000002");

        std::fs::write(&path, &good).expect("repair");
        follower.round().expect("round");
        assert!(rows(&w.served()).is_empty());
        let size = std::fs::metadata(w.served()).expect("meta").len() as usize;
        let checkpointed = size == w.image.len();
        assert!(checkpointed, "{size} bytes, the writer's {}", w.image.len());
    }

    /// A catalog's schema outgrows its first page: a change that moves
    /// it (a migration, VACUUM's rewrite) is applied with the schema read
    /// only once every page of the change is in place.
    #[test]
    fn a_schema_past_its_first_page_follows_a_migration_and_a_vacuum() {
        let mut w = Writer::new();
        let tables: String = (0..40)
            .map(|i| format!("CREATE TABLE wide_{i}(id INTEGER PRIMARY KEY, name_{i} TEXT NOT NULL, detail_{i} TEXT, created_at_{i} INTEGER NOT NULL); CREATE INDEX wide_{i}_by_name ON wide_{i}(name_{i});"))
            .collect();
        w.change(&format!(
            "{tables} INSERT INTO t VALUES (1, zeroblob(30000));"
        ));
        let follower = w.follower();
        follower.round().expect("first round");
        assert_eq!(rows(&w.served()), writer_rows(&w));

        w.change("CREATE TABLE later(k TEXT); DROP TABLE wide_3; INSERT INTO t VALUES (2, x'02');");
        w.change("DELETE FROM t WHERE k = 1; VACUUM;");
        follower
            .round()
            .expect("a round over a migration and a VACUUM");
        assert_eq!(rows(&w.served()), writer_rows(&w));
        let check: String = Connection::open(w.served())
            .and_then(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
            .expect("integrity_check");
        assert_eq!(check, "ok");
    }

    #[test]
    fn what_a_killed_follower_left_is_removed_and_nothing_else() {
        let mut w = Writer::new();
        w.change("INSERT INTO t VALUES (1, x'01');");
        let follower = w.follower();
        follower.round().expect("first round");
        let dir = w.dir.path();
        let left = [
            dir.join("served.db.building"),
            dir.join("served.db.building-journal"),
            dir.join("served.db.follow.tmp"),
            dir.join(".served.db.download-x1y2.ltx"),
        ];
        for path in &left {
            std::fs::write(path, b"partial").expect("leftover");
        }
        let kept = [
            dir.join(".other.db.download-x1y2.ltx"),
            follower.position_path(),
        ];
        std::fs::write(&kept[0], b"another catalog's").expect("write");
        let mut removed = follower.remove_leftovers().expect("removed");
        removed.sort();
        let mut expected = left.to_vec();
        expected.sort();
        assert_eq!(removed, expected);
        assert!(kept.iter().all(|p| p.exists()));
        assert_eq!(rows(&w.served()), writer_rows(&w));
    }

    #[test]
    fn without_its_position_a_copy_starts_again_from_the_snapshot() {
        let mut w = Writer::new();
        w.change("INSERT INTO t VALUES (1, x'01');");
        let follower = w.follower();
        follower.round().expect("first round");
        std::fs::remove_file(follower.position_path()).expect("rm position");
        w.change("INSERT INTO t VALUES (2, x'02');");
        let Round::Applied(again) = follower.round().expect("round") else {
            panic!("applied")
        };
        assert!(again.from_snapshot && !again.created, "{again:?}");
        assert_eq!(rows(&w.served()), writer_rows(&w));
    }
}

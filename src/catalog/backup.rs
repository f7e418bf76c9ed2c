//! `ccc backup`: a consistent copy of a catalog that may be in use, made
//! with SQLite's online backup API.
//!
//! Copying `cdn.db` with `cp` while a publish commits copies pages from
//! before and after it, and misses what still sits in `cdn.db-wal`. The
//! backup API copies page by page through a read transaction instead, so
//! the copy is the catalog exactly as some commit left it.
//!
//! The read transaction is held open from the first page to the last. In
//! WAL mode that pins one snapshot: writers carry on (their commits go to
//! the log, which cannot be checkpointed past the snapshot meanwhile), and
//! the copy never sees them. Without it SQLite would restart the copy each
//! time another process commits, and a catalog that is published to often
//! enough would never finish backing up.
//!
//! The copy is written into a temporary file beside the destination, made
//! durable, and only then renamed over it, so the destination is either
//! absent, its old self, or the whole new copy; an interrupted or failed
//! backup leaves nothing behind. The copy's connection keeps no rollback
//! journal (`journal_mode = OFF`): a failed copy is deleted whole, so a
//! journal would have nothing to restore, and SQLite would leave it beside
//! the destination when the write that failed was the disk filling up.
//!
//! Errors while writing the copy name the destination as given (not the
//! catalog, not the temporary file): the backup API reports the failures of
//! both ends through one call, and `copy_side` tells them apart.

use super::SqliteResult;
use super::{APPLICATION_ID, Catalog};
use crate::error::{Error, Result};
use crate::file_id::FileId;
use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages copied per step: 4 MiB of 4 KiB pages, a few milliseconds of
/// work between progress updates and checks for Ctrl-C.
const PAGES_PER_STEP: i32 = 1024;

/// How often a step that found a lock is tried again.
const LOCK_STEP: Duration = Duration::from_millis(10);

/// What `ccc backup` wrote: the object `ccc backup --json` prints.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BackupReport {
    /// The copy, as given on the command line.
    pub path: PathBuf,
    /// Size of the copy.
    pub written_bytes: u64,
    pub package_count: u64,
    pub version_count: u64,
    /// Files of every version in the copy.
    pub file_count: u64,
    /// Whether an existing file at `path` was replaced (`--force`).
    pub replaced: bool,
}

impl Catalog {
    /// Copies the catalog as of one commit into `out`. An existing `out`
    /// is refused unless `replace`. `progress` gets the bytes copied so far
    /// and the total, after each step.
    pub(crate) fn backup(
        &self,
        out: &Path,
        replace: bool,
        progress: &dyn Fn(u64, u64),
    ) -> Result<BackupReport> {
        let existed = check_destination(self.path(), out, replace)?;
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let failed = |why: String| Error::BackupFailed {
            path: out.to_path_buf(),
            why,
        };
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(dir)
            .map_err(|e| failed(folder_trouble(dir, &e)))?;

        let snapshot = Snapshot::begin(self)?;
        let counts = snapshot.counts()?;
        let e = |err: rusqlite::Error| failed(err.to_string());
        let mut copy = Connection::open(temp.path()).map_err(e)?;
        copy.pragma_update_and_check(None, "journal_mode", "OFF", |_| Ok(()))
            .map_err(e)?;
        copy_pages(self, &mut copy, out, progress)?;
        drop(snapshot);
        // The copy is the source's pages, header included: check it reads
        // as a ccc catalog before it takes the destination's name.
        let app_id: i32 = copy
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(e)?;
        if app_id != APPLICATION_ID {
            return Err(Error::Internal(format!(
                "the backup of {} does not read as a catalog (application_id {app_id:#x})",
                self.path().display()
            )));
        }
        copy.close().map_err(|(_, err)| e(err))?;
        // The copy may be read by whoever may read the catalog (a temporary
        // file starts out readable by its owner alone). Set once written:
        // a 444 catalog gives a 444 copy, which could not be written.
        if let Ok(meta) = std::fs::metadata(self.path()) {
            temp.as_file()
                .set_permissions(meta.permissions())
                .map_err(|e| failed(e.to_string()))?;
        }
        temp.as_file()
            .sync_all()
            .map_err(|e| failed(e.to_string()))?;

        let kept = if replace {
            temp.persist(out)
        } else {
            // Fails, rather than replaces, when a file appeared at `out`
            // while the copy was made.
            temp.persist_noclobber(out)
        };
        kept.map_err(|err| match err.error.kind() {
            std::io::ErrorKind::AlreadyExists => exists_error(out),
            _ => Error::io(out, err.error),
        })?;
        // The rename is durable once the folder is.
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
        let written_bytes = std::fs::metadata(out).map_err(|e| Error::io(out, e))?.len();
        Ok(BackupReport {
            path: out.to_path_buf(),
            written_bytes,
            package_count: counts.0,
            version_count: counts.1,
            file_count: counts.2,
            replaced: existed,
        })
    }
}

/// Refuses a destination that is the catalog itself, a folder, or (unless
/// `replace`) any existing file. Returns whether one exists.
fn check_destination(source: &Path, out: &Path, replace: bool) -> Result<bool> {
    let meta = match std::fs::metadata(out) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(Error::BackupFailed {
                path: out.to_path_buf(),
                why: not_a_folder(out),
            });
        }
        Err(e) => return Err(Error::io(out, e)),
    };
    if meta.is_dir() {
        return Err(Error::bad_input(
            out,
            "is a folder; name the file to write, such as backup.db",
        ));
    }
    if FileId::at(source).is_ok_and(|src| src == FileId::of(&meta)) {
        return Err(Error::bad_input(out, "is the catalog being backed up"));
    }
    if !replace {
        return Err(exists_error(out));
    }
    Ok(true)
}

/// Why no file can be made in `dir`, in words that name the folder (the
/// temporary file's name means nothing to the user).
fn folder_trouble(dir: &Path, e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match (e.kind(), e.raw_os_error()) {
        // Said only when it is so: creating a file in /proc fails with
        // ENOENT too.
        (ErrorKind::NotFound, _) => match std::fs::metadata(dir) {
            Err(m) if m.kind() == ErrorKind::NotFound => {
                format!("folder {} does not exist", dir.display())
            }
            Err(m) if m.kind() == ErrorKind::NotADirectory => not_a_folder(dir),
            Ok(meta) if !meta.is_dir() => format!("{} is not a folder", dir.display()),
            _ => format!(
                "cannot create a file in {}: its file system takes no new files",
                dir.display()
            ),
        },
        (ErrorKind::NotADirectory, _) => not_a_folder(dir),
        (_, Some(code)) => format!(
            "cannot create a file in {}: {}",
            dir.display(),
            std::io::Error::from_raw_os_error(code)
        ),
        _ => format!("cannot create a file in {}: {}", dir.display(), e.kind()),
    }
}

/// Which part of `path` is a file where a folder is needed (`npm.db` of
/// `npm.db/x.db`), in words.
fn not_a_folder(path: &Path) -> String {
    let file = path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()));
    match file {
        Some(file) => format!("{} is not a folder", file.display()),
        None => format!("a part of {} is not a folder", path.display()),
    }
}

fn exists_error(out: &Path) -> Error {
    Error::bad_input(out, "already exists; --force replaces it")
}

/// A read transaction on the source, held for the whole copy (see the
/// module doc). Rolled back when dropped.
struct Snapshot<'a> {
    catalog: &'a Catalog,
}

impl<'a> Snapshot<'a> {
    fn begin(catalog: &'a Catalog) -> Result<Snapshot<'a>> {
        // BEGIN alone takes no snapshot; the first read does.
        catalog
            .conn()
            .execute_batch("BEGIN DEFERRED; SELECT count(*) FROM sqlite_master;")
            .at(catalog)?;
        Ok(Snapshot { catalog })
    }

    /// Packages, versions and files in the snapshot.
    fn counts(&self) -> Result<(u64, u64, u64)> {
        self.catalog
            .conn()
            .query_row(
                "SELECT (SELECT count(*) FROM packages), count(*), coalesce(sum(file_count), 0)
                   FROM versions",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)? as u64,
                        r.get::<_, i64>(1)? as u64,
                        r.get::<_, i64>(2)? as u64,
                    ))
                },
            )
            .at(self.catalog)
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let _ = self.catalog.conn().execute_batch("ROLLBACK");
    }
}

/// Whether an error of a backup step comes from writing the copy rather
/// than reading the catalog. The catalog is only read, so the failures of
/// a write (a full disk, a file size limit, a read-only file) are the
/// copy's.
fn copy_side(e: &rusqlite::Error) -> bool {
    use rusqlite::{ErrorCode, ffi};
    let Some(code) = e.sqlite_error_code() else {
        return false;
    };
    let extended = match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
        _ => 0,
    };
    matches!(
        code,
        ErrorCode::DiskFull | ErrorCode::ReadOnly | ErrorCode::CannotOpen
    ) || matches!(
        extended,
        ffi::SQLITE_IOERR_WRITE
            | ffi::SQLITE_IOERR_FSYNC
            | ffi::SQLITE_IOERR_TRUNCATE
            | ffi::SQLITE_IOERR_DIR_FSYNC
    )
}

/// Copies every page of `source` into `copy` (to become `out`), a step at
/// a time, stopping at the next step on Ctrl-C.
fn copy_pages(
    source: &Catalog,
    copy: &mut Connection,
    out: &Path,
    progress: &dyn Fn(u64, u64),
) -> Result<()> {
    let page_size: i64 = source
        .conn()
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .at(source)?;
    let page_size = page_size.max(0) as u64;
    let backup = Backup::new(source.conn(), copy).at(source)?;
    let mut waited = Duration::ZERO;
    loop {
        if let Some(signal) = crate::interrupt::requested() {
            return Err(Error::Interrupted(signal));
        }
        let step = backup.step(PAGES_PER_STEP).map_err(|e| {
            if copy_side(&e) {
                Error::BackupFailed {
                    path: out.to_path_buf(),
                    why: e.to_string(),
                }
            } else {
                super::sqlite_err(source.as_ref(), e)
            }
        })?;
        let p = backup.progress();
        let total = p.pagecount.max(0) as u64;
        progress(
            total.saturating_sub(p.remaining.max(0) as u64) * page_size,
            total * page_size,
        );
        match step {
            StepResult::Done => return Ok(()),
            StepResult::More => waited = Duration::ZERO,
            // The copy is a file only this process knows, and the source is
            // only read, but either may be locked for a moment (a
            // checkpoint's recovery): wait as commands wait for any lock.
            _ => {
                if waited >= super::LOCK_PATIENCE {
                    return Err(Error::Busy(source.path().to_path_buf()));
                }
                std::thread::sleep(LOCK_STEP);
                waited += LOCK_STEP;
            }
        }
    }
}

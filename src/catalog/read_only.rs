//! How read-only commands and `serve` open the catalog: one of three ways
//! SQLite offers, chosen from what this process may do beside the file.
//!
//! A catalog is in WAL mode. A WAL reader normally needs `cdn.db-shm` (the
//! log's index, shared memory between processes) and `cdn.db-wal`, and
//! creates them when they are missing. That is fine for the catalog's owner,
//! but not for everyone else:
//!
//! - a folder the user cannot write (a read-only image, a 555 folder with a
//!   444 catalog) has no room for them, and SQLite then refuses every read
//!   with "attempt to write a readonly database";
//! - another user who may write the folder (a shared, group-writable one)
//!   would leave side files owned by itself that it cannot delete (it opened
//!   the catalog read-only), with the catalog's mode. The owner then cannot
//!   write `cdn.db-shm`, and its next publish fails.
//!
//! So [`choose`] picks, from [`Beside`]:
//!
//! - [`ReadWay::Shared`] when this process may write the catalog and its
//!   folder, and owns the catalog or is root (SQLite hands the side files
//!   root creates to the catalog's owner). The connection is read-write with
//!   `query_only` on, and its close, when it is the last, folds the log into
//!   the file and deletes the side files (see the catalog's module doc).
//! - [`ReadWay::ThroughLog`] (`SQLITE_OPEN_READONLY`) otherwise, when both
//!   `cdn.db-shm` and `cdn.db-wal` exist: a writer has the catalog open, or
//!   left the log behind. SQLite (3.22 and later) reads the log through the
//!   existing `-shm`, read-only if this user may not write it, and creates
//!   nothing.
//! - [`ReadWay::Immutable`] (`immutable=1`) otherwise, when there is no log,
//!   or an empty one: the file alone holds every commit. SQLite reads it
//!   with no lock and no side file. Such a reader does not see a writer
//!   that starts later, so `serve` watches for one and reopens the catalog
//!   ([`Catalog::changed_since_open`](super::Catalog::changed_since_open));
//!   a short command that reads while the owner publishes may see pages the
//!   publish's final checkpoint is rewriting, and fail or report damage
//!   that a second run does not.
//! - An error, naming the log, when `cdn.db-wal` holds commits but there is
//!   no `cdn.db-shm`: reading them needs one, and this process may not (or
//!   should not) create it. Any command the owner runs folds the log in.
//!
//! Between [`choose`] and the open, a writer may start or end. The narrow
//! race that remains: side files that vanish just before a
//! [`ReadWay::ThroughLog`] open are created again by SQLite, owned by this
//! user, when it may write the folder.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What this process may do beside the catalog file, and which side files
/// exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Beside {
    /// May write both the file and its folder (effective ids; a read-only
    /// file system says no even to root).
    pub may_write: bool,
    /// Owns the file, or is root.
    pub owner: bool,
    /// `-shm` exists.
    pub shm: bool,
    /// Length of `-wal`, None when it does not exist.
    pub wal: Option<u64>,
}

/// How a read-only connection is opened (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadWay {
    /// Read-write with `query_only`: may fold the log in as it closes.
    Shared,
    /// `SQLITE_OPEN_READONLY`, through the side files that exist.
    ThroughLog,
    /// `immutable=1`: the file alone, no locks, no side files.
    Immutable,
}

/// The catalog's side files, named after the file the path leads to (SQLite
/// follows symlinks to name them).
#[derive(Debug, Clone)]
pub(crate) struct SideFiles {
    pub file: PathBuf,
    pub wal: PathBuf,
    pub shm: PathBuf,
}

impl SideFiles {
    pub(crate) fn of(path: &Path) -> SideFiles {
        let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let named = |suffix: &str| super::side_files::side(&file, suffix);
        SideFiles {
            wal: named("-wal"),
            shm: named("-shm"),
            file,
        }
    }

    fn folder(&self) -> &Path {
        match self.file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }
}

impl Beside {
    /// Looks at the catalog at `path` as this process.
    pub(crate) fn look(path: &Path) -> Result<(Beside, SideFiles)> {
        use rustix::fs::{Access, AtFlags, CWD, accessat};
        use std::os::unix::fs::MetadataExt;
        let side = SideFiles::of(path);
        let meta = std::fs::metadata(&side.file).map_err(|e| Error::io(path, e))?;
        let writable = |p: &Path| accessat(CWD, p, Access::WRITE_OK, AtFlags::EACCESS).is_ok();
        let euid = rustix::process::geteuid();
        let beside = Beside {
            may_write: writable(&side.file) && writable(side.folder()),
            owner: euid.is_root() || euid.as_raw() == meta.uid(),
            shm: side.shm.exists(),
            wal: std::fs::metadata(&side.wal).ok().map(|m| m.len()),
        };
        Ok((beside, side))
    }
}

/// The way to open a catalog for reading, or why it cannot be read (module
/// doc). `Err` holds what is wrong, for an error that names the log.
pub(crate) fn choose(b: Beside) -> std::result::Result<ReadWay, &'static str> {
    if b.may_write && b.owner {
        return Ok(ReadWay::Shared);
    }
    match (b.shm, b.wal) {
        (true, Some(_)) => Ok(ReadWay::ThroughLog),
        (_, None | Some(0)) => Ok(ReadWay::Immutable),
        (false, Some(_)) if b.may_write => Err(
            "holds commits not yet copied into the catalog, and reading them needs a -shm file that ccc creates only as the catalog's owner (one made by another user would stop the owner's writes)",
        ),
        (false, Some(_)) => Err(
            "holds commits not yet copied into the catalog, and reading them needs a -shm file that this user may not create there",
        ),
    }
}

/// Looks beside the catalog at `path` and picks the way to read it; an
/// error names the log that cannot be read.
pub(crate) fn way_for(path: &Path) -> Result<ReadWay> {
    let (beside, side) = Beside::look(path)?;
    choose(beside).map_err(|why| Error::UnreadableLog {
        path: path.to_path_buf(),
        wal: side.wal,
        why: why.to_string(),
    })
}

/// What an immutable reader checks to notice a writer: the file's length
/// and modification time, and whether a log exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    log: bool,
}

impl Stamp {
    pub(crate) fn of(side: &SideFiles) -> Stamp {
        let meta = std::fs::metadata(&side.file).ok();
        Stamp {
            len: meta.as_ref().map_or(0, |m| m.len()),
            modified: meta.and_then(|m| m.modified().ok()),
            log: side.wal.exists() || side.shm.exists(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beside(may_write: bool, owner: bool, shm: bool, wal: Option<u64>) -> Beside {
        Beside {
            may_write,
            owner,
            shm,
            wal,
        }
    }

    #[test]
    fn the_owner_who_may_write_shares_the_side_files() {
        for (shm, wal) in [
            (false, None),
            (true, Some(0)),
            (true, Some(4096)),
            (false, Some(9)),
        ] {
            assert_eq!(
                choose(beside(true, true, shm, wal)),
                Ok(ReadWay::Shared),
                "{shm} {wal:?}"
            );
        }
    }

    #[test]
    fn others_read_through_a_log_that_exists_and_create_none() {
        // A read-only folder or file, or another user: through the log when
        // both side files are there.
        for (may_write, owner) in [(false, true), (false, false), (true, false)] {
            let b = |shm, wal| beside(may_write, owner, shm, wal);
            assert_eq!(choose(b(true, Some(4096))), Ok(ReadWay::ThroughLog));
            assert_eq!(choose(b(true, Some(0))), Ok(ReadWay::ThroughLog));
            // No log, or an empty one: the file is all there is.
            assert_eq!(choose(b(false, None)), Ok(ReadWay::Immutable));
            assert_eq!(choose(b(false, Some(0))), Ok(ReadWay::Immutable));
            assert_eq!(choose(b(true, None)), Ok(ReadWay::Immutable));
            // Commits in a log with no index to read them through.
            let why = choose(b(false, Some(4096))).unwrap_err();
            assert!(why.contains("-shm"), "{why}");
        }
    }
}

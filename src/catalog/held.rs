//! The catalog files this process holds connections to.
//!
//! Closing any descriptor of a file drops every POSIX lock the process
//! holds on it, SQLite's included (fcntl locks belong to the process, not
//! to the descriptor). Opening a catalog reads its header first, through
//! a descriptor of its own; if another connection of this process had the
//! file open, closing that descriptor would silently give up the
//! connection's shared lock. Another process closing its own connection
//! would then take the catalog for unused, fold the log in and delete
//! `-wal` and `-shm` under this process's connections: a server would
//! stop seeing publishes, and one that writes (the write API, brotli
//! recompression) could checkpoint stale pages over newer ones.
//!
//! So a file is read directly only while this process holds no
//! connection to it: the first open checks the header under this
//! module's lock, and every later one, as long as one stays open, skips
//! it (the file was checked, and SQLite checks it again on first read).

use crate::file_id::FileId;
use std::path::Path;
use std::sync::Mutex;

/// Held files and how many connections each has.
static HELD: Mutex<Vec<(FileId, usize)>> = Mutex::new(Vec::new());

/// One connection's claim on its file; released when dropped, after the
/// connection it was taken for has closed.
#[derive(Debug)]
pub(super) struct Held(FileId);

/// Claims the file at `path` for a connection about to be opened, running
/// `check` on it first when no other connection of this process holds
/// it. None when the file cannot be looked at (the open reports why).
pub(super) fn claim(
    path: &Path,
    check: impl FnOnce() -> crate::error::Result<()>,
) -> crate::error::Result<Option<Held>> {
    let Ok(id) = FileId::at(path) else {
        check()?;
        return Ok(None);
    };
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    match held.iter_mut().find(|(file, _)| *file == id) {
        Some((_, count)) => *count += 1,
        None => {
            check()?;
            held.push((id, 1));
        }
    }
    Ok(Some(Held(id)))
}

/// Runs `check` on the file at `path` unless this process holds it
/// (module doc): for a look at a file no connection will be kept to.
pub(super) fn check_unless_held(
    path: &Path,
    check: impl FnOnce() -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let id = FileId::at(path).ok();
    match id.is_some_and(|id| held.iter().any(|(file, _)| *file == id)) {
        true => Ok(()),
        false => check(),
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = held.iter().position(|(file, _)| *file == self.0) {
            held[i].1 -= 1;
            if held[i].1 == 0 {
                held.swap_remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_file_is_checked_once_until_every_claim_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cdn.db");
        std::fs::write(&path, b"x").unwrap();
        let checks = std::cell::Cell::new(0);
        let check = || {
            checks.set(checks.get() + 1);
            Ok(())
        };
        let first = claim(&path, check).unwrap();
        let second = claim(&path, check).unwrap();
        check_unless_held(&path, check).unwrap();
        assert_eq!(checks.get(), 1, "only the first claim reads the file");
        drop(first);
        check_unless_held(&path, check).unwrap();
        assert_eq!(checks.get(), 1, "still held by the second");
        drop(second);
        check_unless_held(&path, check).unwrap();
        assert_eq!(checks.get(), 2, "read again once nothing holds it");
    }
}

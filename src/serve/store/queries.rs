//! What a read asks of the catalog: the same whether a worker reads on a
//! pooled connection (`readers`) or the actor on its own.

use super::{Resolved, Shared};
use crate::catalog::Catalog;
use crate::catalog::query::{Page, VersionFiles};
use crate::error::{Error, Result};
use crate::importmap::{self, ImportMap};
use crate::spec::Selector;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Most versions whose entry file the store remembers; past it, it
/// forgets them all and starts again.
const ENTRY_MEMO: usize = 4096;

/// The exact version `selector` picks for `package`, if any.
pub(super) fn resolve(
    catalog: &Catalog,
    package: &str,
    selector: &Selector,
) -> Result<Option<Resolved>> {
    match catalog.resolve(package, selector) {
        Ok(v) => Ok(Some(Resolved {
            version: v.version.to_string(),
            id: v.id,
        })),
        Err(
            Error::PackageNotFound { .. }
            | Error::VersionNotFound { .. }
            | Error::TagNotFound { .. },
        ) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The import map of `package@version` with root-relative URLs (and
/// `integrity` if asked), if that exact version exists: what `ccc
/// importmap` prints for it.
pub(super) fn import_map(
    catalog: &Catalog,
    package: &str,
    version: &str,
    integrity: bool,
) -> Result<Option<ImportMap>> {
    let Ok(exact) = semver::Version::parse(version) else {
        return Ok(None);
    };
    let row = match catalog.resolve(package, &Selector::Exact(exact)) {
        Ok(row) => row,
        Err(Error::PackageNotFound { .. } | Error::VersionNotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let options = importmap::Options {
        base: importmap::Base::default(),
        integrity,
    };
    Ok(Some(importmap::generate(catalog, row, &options)?.importmap))
}

/// Most files a version may have for a 404 to look for the path under
/// another case: the look is a scan of the version's paths in the
/// primary key's index, so a scan of missing paths stays cheap.
const CASE_SCAN_FILES: u64 = 10_000;

/// The path of `package@version` equal to `path` but for ASCII case
/// (SQLite's NOCASE), if the version exists, has at most
/// [`CASE_SCAN_FILES`] files and holds one.
pub(super) fn case_variant(
    catalog: &Catalog,
    package: &str,
    version: &str,
    path: &str,
) -> Result<Option<String>> {
    let Ok(exact) = semver::Version::parse(version) else {
        return Ok(None);
    };
    let v = match catalog.resolve(package, &Selector::Exact(exact)) {
        Ok(v) => v,
        Err(Error::PackageNotFound { .. } | Error::VersionNotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    if v.file_count > CASE_SCAN_FILES {
        return Ok(None);
    }
    catalog.path_in_another_case(v.id, path)
}

/// The files of `package@version` in `page`, if that exact version exists.
pub(super) fn list(
    catalog: &Catalog,
    package: &str,
    version: &str,
    page: Page,
) -> Result<Option<VersionFiles>> {
    let Ok(exact) = semver::Version::parse(version) else {
        return Ok(None);
    };
    let v = match catalog.resolve(package, &Selector::Exact(exact)) {
        Ok(v) => v,
        Err(Error::PackageNotFound { .. } | Error::VersionNotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    catalog.version_files(v, page).map(Some)
}

/// A version's entry file, as [`entry`] found it.
pub(super) struct EntryFile {
    /// The version's row id: a row's files never change, and a forced
    /// republish makes a new row, so the entry is remembered by it.
    id: i64,
    file: Option<String>,
    /// Read from the catalog now, not remembered.
    read: bool,
}

impl EntryFile {
    /// The entry file; one read from the catalog now is remembered, unless
    /// the catalog file was replaced since its snapshot began (row ids are
    /// per file): `seen` is the count of changes it was read under.
    pub(super) fn remember(self, shared: &Shared, seen: u64) -> Option<String> {
        if self.read {
            let mut memo = shared
                .entries
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // Checked under the lock the actor empties the memo with.
            if shared.readers.changes() == seen {
                if memo.len() >= ENTRY_MEMO {
                    memo.clear();
                }
                memo.insert(self.id, self.file.clone());
            }
        }
        self.file
    }
}

/// The entry file of `package@version` (an exact version): None when there
/// is no such version.
pub(super) fn entry(
    catalog: &Catalog,
    memo: &Mutex<HashMap<i64, Option<String>>>,
    package: &str,
    version: &str,
) -> Result<Option<EntryFile>> {
    let Ok(exact) = semver::Version::parse(version) else {
        return Ok(None);
    };
    let Some(found) = resolve(catalog, package, &Selector::Exact(exact))? else {
        return Ok(None);
    };
    let remembered = memo
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&found.id)
        .cloned();
    let (file, read) = match remembered {
        Some(file) => (file, false),
        None => (catalog.entry(found.id)?, true),
    };
    Ok(Some(EntryFile {
        id: found.id,
        file,
        read,
    }))
}

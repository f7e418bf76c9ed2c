//! Catalogs are never published (see the parent module): the catalog a
//! publish writes to, recognised with its side files by device and inode
//! ([`CatalogFiles`]), and any other ccc catalog, by its SQLite header.

use super::*;

/// The files SQLite keeps for one database: the database itself (no
/// suffix, no name), then the side files beside it, named by a suffix to its
/// path.
const SQLITE_FILES: &[(&str, &str)] = &[
    ("", ""),
    ("-wal", "write-ahead log"),
    ("-shm", "shared-memory index"),
    ("-journal", "rollback journal"),
];

/// The files of the catalog a publish writes to, known by identity so that
/// the walk can leave them out under any name.
#[derive(Debug, Default)]
pub(crate) struct CatalogFiles {
    /// Every path SQLite may use for the catalog or a side file, with what
    /// that file is. SQLite names side files after the catalog's real path
    /// (symlinks resolved), so both spellings are kept.
    pub(super) paths: Vec<(PathBuf, &'static str)>,
    /// The files found at those paths so far.
    pub(super) found: HashMap<FileId, (PathBuf, &'static str)>,
}

impl CatalogFiles {
    /// The catalog at `db` (which may not exist yet) and its side files as
    /// they are now; [`plan_dir`] looks again after its walk for side files
    /// that appeared meanwhile.
    pub(crate) fn of(db: &Path) -> CatalogFiles {
        let mut bases = vec![db.to_path_buf()];
        bases.extend(real_path(db).filter(|real| real != db));
        let mut files = CatalogFiles::default();
        for base in &bases {
            for (suffix, what) in SQLITE_FILES {
                let mut path = base.clone().into_os_string();
                path.push(suffix);
                files.paths.push((PathBuf::from(path), what));
            }
        }
        files.look();
        files
    }

    /// Records the identity of every catalog file that exists now.
    pub(super) fn look(&mut self) {
        for (path, what) in &self.paths {
            if let Ok(meta) = std::fs::metadata(path) {
                self.found
                    .entry(FileId::of(&meta))
                    .or_insert_with(|| (path.clone(), what));
            }
        }
    }

    /// Why the file `id` must not be published, when it is one of these.
    pub(super) fn reason(&self, id: FileId) -> Option<String> {
        let (path, what) = self.found.get(&id)?;
        Some(format!(
            "{} catalog being published into ({}); catalogs are never published",
            side_file_of(what),
            path.display()
        ))
    }
}

/// The words before a database's name for a file of [`SQLITE_FILES`]:
/// "the write-ahead log of the", or "the" for the database itself.
fn side_file_of(what: &str) -> String {
    match what {
        "" => "the".to_string(),
        side => format!("the {side} of the"),
    }
}

/// `db` with symlinks resolved; for a catalog not created yet, its real
/// folder joined with its name.
fn real_path(db: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(db) {
        return Some(real);
    }
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(db.file_name()?))
}

/// Why a walked file must not be published because it belongs to a ccc
/// catalog other than the one being written: the catalog itself (by its
/// header) or a side file SQLite keeps beside it (by name).
pub(super) fn foreign_catalog_reason(path: &Path, size: u64) -> Result<Option<String>> {
    if may_be_database(size) && is_catalog_file(path)? {
        return Ok(Some(
            "a ccc catalog; catalogs are never published".to_string(),
        ));
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    for (suffix, what) in &SQLITE_FILES[1..] {
        let Some(stem) = name.strip_suffix(suffix).filter(|s| !s.is_empty()) else {
            continue;
        };
        // The side file goes with its database: a stem that cannot be
        // read is not known to be a catalog.
        if is_catalog_file(&path.with_file_name(stem)).unwrap_or(false) {
            return Ok(Some(format!(
                "{} ccc catalog {stem}; catalogs are never published",
                side_file_of(what)
            )));
        }
    }
    Ok(None)
}

/// Whether a file of `size` bytes can be a SQLite database: one is a whole
/// number of pages, each a power of two of 512 bytes or more. Only such
/// files have their header read, which spares the walk an open and a read
/// for almost every file; a file of another size that starts like a catalog
/// (a truncated copy) is refused by the worker that reads it (`process`).
fn may_be_database(size: u64) -> bool {
    size >= 512 && size.is_multiple_of(512)
}

/// Whether the file at `path` starts with a ccc catalog's header. Reads
/// only the header's first bytes.
fn is_catalog_file(path: &Path) -> Result<bool> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking: a FIFO put at this name since it was looked at must not
    // hang the walk (regular files ignore the flag).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let mut header = Vec::with_capacity(CATALOG_HEADER_LEN);
    file.take(CATALOG_HEADER_LEN as u64)
        .read_to_end(&mut header)
        .map_err(|e| Error::io(path, e))?;
    Ok(is_catalog_header(&header))
}

/// The walk left catalogs out; a file that became one since (or one
/// handed over in memory) is refused, never stored. `head` is the file's
/// first bytes.
pub(super) fn refuse_catalog(file: &FileEntry, head: &[u8]) -> Result<()> {
    if !is_catalog_header(head) {
        return Ok(());
    }
    let name = match &file.source {
        Source::Disk(path) => path.clone(),
        _ => PathBuf::from(&file.path),
    };
    Err(Error::bad_input(
        name,
        "is a ccc catalog, and catalogs are never published; leave it out with --exclude",
    ))
}

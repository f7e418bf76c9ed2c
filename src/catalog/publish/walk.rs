//! The walk: a directory's files as a publish plans them, with the
//! excludes (`--exclude` and the defaults), and the paths every publish
//! checks are addressable.

use super::*;

/// Always left out of a published tree.
const DEFAULT_EXCLUDES: &[&str] = &["**/.git", "**/.git/**", "**/.DS_Store"];

/// Walks `dir` and lists what a publish would store, checking every name
/// and size first so that bad input fails before anything is written.
///
/// Symlinks are never followed (each is reported as skipped), so no file
/// outside `dir` can be stored; so are special files (sockets, FIFOs) and
/// catalogs (see the module doc): `catalog_files` are the one being
/// written. `progress.scanned` hears of every file found.
pub(crate) fn plan_dir(
    dir: &Path,
    excludes: &[String],
    max_file_size: u64,
    mut catalog_files: CatalogFiles,
    progress: &dyn Progress,
) -> Result<Plan> {
    // DIR itself may be a symlink the user named on purpose; links inside it
    // are never followed.
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !meta.is_dir() {
        return Err(Error::bad_input(dir, "is not a directory"));
    }
    let excludes = build_excludes(excludes)?;
    let mut plan = Plan::default();
    // The identity of each file in `plan.files`, in the same order.
    let mut ids = Vec::new();
    let mut scanned_bytes = 0u64;
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            // Prune excluded folders whole; the root itself is never excluded.
            // A name that is not UTF-8 (refused below unless excluded) is
            // matched as its bytes, which globset reads on Unix.
            entry.depth() == 0
                || match rel_path(dir, entry.path()) {
                    Some(rel) => !excludes.is_match(rel),
                    None => !entry
                        .path()
                        .strip_prefix(dir)
                        .is_ok_and(|raw| excludes.is_match(raw)),
                }
        });
    for entry in walker {
        crate::interrupt::check()?;
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            match e.into_io_error() {
                Some(io) => Error::io(path, io),
                None => Error::bad_input(path, "could not be walked"),
            }
        })?;
        if entry.depth() == 0 {
            continue;
        }
        let rel = rel_path(dir, entry.path()).ok_or_else(|| {
            Error::bad_input(
                entry.path(),
                "file name is not valid UTF-8; only UTF-8 names can be published (--exclude GLOB leaves it out)",
            )
        })?;
        let file_type = entry.file_type();
        if file_type.is_dir() {
            continue;
        }
        if file_type.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            plan.skipped.push(Skipped {
                path: rel,
                reason: format!("symlink to {target} (symlinks are not followed)"),
            });
            continue;
        }
        if !file_type.is_file() {
            plan.skipped.push(Skipped {
                path: rel,
                reason: "not a regular file".into(),
            });
            continue;
        }
        let meta = entry.metadata().map_err(|e| {
            Error::io(
                entry.path(),
                e.into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("metadata unavailable")),
            )
        })?;
        let (id, size) = (FileId::of(&meta), meta.len());
        let left_out = match catalog_files.reason(id) {
            Some(reason) => Some(reason),
            None => foreign_catalog_reason(entry.path(), size)?,
        };
        if let Some(reason) = left_out {
            plan.skipped.push(Skipped { path: rel, reason });
            continue;
        }
        if size > max_file_size {
            return Err(Error::bad_input(
                entry.path(),
                format!(
                    "file is {} ({}), over --max-file-size {}",
                    crate::output::count(size, "byte"),
                    crate::units::human_size(size),
                    crate::output::count(max_file_size, "byte"),
                ),
            ));
        }
        plan.files.push(FileEntry {
            path: rel,
            size,
            source: Source::Disk(entry.path().to_path_buf()),
        });
        ids.push(id);
        scanned_bytes += size;
        progress.scanned(plan.files.len() as u64, scanned_bytes);
    }
    // A side file the catalog's writer or readers created during the walk
    // may have been listed before it was known.
    catalog_files.look();
    let mut ids = ids.into_iter();
    let mut late = Vec::new();
    plan.files.retain(
        |file| match ids.next().and_then(|id| catalog_files.reason(id)) {
            Some(reason) => {
                late.push(Skipped {
                    path: file.path.clone(),
                    reason,
                });
                false
            }
            None => true,
        },
    );
    plan.skipped.append(&mut late);
    if plan.files.is_empty() {
        return Err(Error::bad_input(
            dir,
            "contains no files to publish (after excludes)",
        ));
    }
    Ok(plan)
}

/// `/`-separated path of `path` below `root`; None when not valid UTF-8.
fn rel_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for part in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part.as_os_str().to_str()?);
    }
    Some(out)
}

pub(in crate::catalog) fn build_excludes(user: &[String]) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for pattern in DEFAULT_EXCLUDES {
        set.add(Glob::new(pattern).map_err(|e| Error::Internal(e.to_string()))?);
    }
    for pattern in user {
        let glob = Glob::new(pattern)
            .map_err(|e| Error::Usage(format!("invalid --exclude `{pattern}`: {e}")))?;
        set.add(glob);
        // `--exclude docs` also means everything below docs/.
        if let Ok(below) = Glob::new(&format!("{}/**", pattern.trim_end_matches('/'))) {
            set.add(below);
        }
    }
    set.build()
        .map_err(|e| Error::Usage(format!("invalid --exclude: {e}")))
}

/// Paths must be unique, relative, `/`-separated and free of empty, `.`
/// and `..` segments: exactly what the server can address.
pub(super) fn check_paths(files: &[FileEntry]) -> Result<()> {
    let mut seen = HashSet::with_capacity(files.len());
    for f in files {
        let bad = f.path.is_empty()
            || f.path
                .split('/')
                .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg.contains('\0'));
        if bad {
            return Err(Error::bad_input(
                &f.path,
                "is not a relative path of non-empty segments",
            ));
        }
        if !seen.insert(f.path.as_str()) {
            return Err(Error::bad_input(&f.path, "appears twice in the publish"));
        }
    }
    Ok(())
}

//! Exporting: versions as plain files under `DIR/PKG/VERSION/`, each file
//! with its original bytes and, where the catalog holds another encoding of
//! it, a sibling such as `NAME.gz`: the layout nginx `gzip_static` and object
//! store CDNs serve. File times are the version's publish time, so such a
//! server's `Last-Modified` matches `ccc serve`'s.
//!
//! ```text
//! plan    every version's files, their siblings, clashes    -- nothing written
//!   -> stage   write every version into DIR/.ccc-export-XXXXXX/PKG/VERSION/
//!   -> commit  move each version folder to DIR/PKG/VERSION in one rename,
//!              or swap it with the folder already there in one exchange
//!   -> remove the staging folder (and the replaced folders now in it)
//! ```
//!
//! # All or nothing
//!
//! DIR may exist and hold anything: an export creates or replaces only the
//! version folders it writes, and a replaced folder holds exactly the
//! version's files afterwards. Nothing is visible in DIR before every
//! version is staged. A failure while staging leaves DIR as it was; a
//! failure while moving folders into place moves back those already moved.
//! A server reading DIR meanwhile sees each version whole, old or new: an
//! existing folder is swapped with `renameat2(RENAME_EXCHANGE)` where the
//! system has it, else with two renames that leave it absent for an
//! instant. A killed export can leave its staging folder behind; it holds
//! nothing but exported files and may be deleted. Ctrl-C is noticed between
//! files while staging, and leaves DIR as a failure does.
//!
//! # Siblings
//!
//! A sibling is another encoding of a file, stored beside it under the
//! file's name plus a suffix (`.gz`, `.br`); servers send it to clients that
//! accept the encoding and fall back to the plain file. A sibling is
//! skipped, and reported, where it cannot exist: the version has a file or
//! folder of that name, or the name is too long for the file system
//! (`ENAMETOOLONG`: a 255-byte file name leaves no room for `.gz`).
//! Siblings are the catalog's own streams, never compressed anew: `.gz` the
//! stored gzip body, `.br` the brotli stream publish kept.

use super::SqliteResult;
use super::chunks::is_chunked;
use super::query::AssetRow;
use super::rows::Skipped;
use super::rows::VersionRow;
use super::{Catalog, Encoding};
use crate::error::{Error, Result};
use flate2::read::GzDecoder;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The encodings an export writes beside a file as `NAME` +
/// [`Encoding::suffix`], in order: `.gz` (nginx `gzip_static`) for files
/// the catalog keeps gzipped, `.br` (`brotli_static`) for those it also
/// keeps as brotli.
pub(crate) const SIBLINGS: &[Encoding] = &[Encoding::Gzip, Encoding::Brotli];

/// The bytes of `file` coded as `sibling`, whose stored body is `stored`;
/// None when the catalog does not hold this encoding of it.
fn sibling_body<'a>(
    catalog: &Catalog,
    sibling: Encoding,
    file: &AssetRow,
    stored: &'a [u8],
) -> Result<Option<Cow<'a, [u8]>>> {
    Ok(match sibling {
        Encoding::Identity => None,
        Encoding::Gzip => (file.encoding == Encoding::Gzip).then_some(Cow::Borrowed(stored)),
        Encoding::Brotli if file.variants.iter().any(|v| v.encoding == sibling) => {
            catalog.brotli_body(file.blob_id)?.map(Cow::Owned)
        }
        Encoding::Brotli => None,
        // A delta is for a client that names its dictionary: no static
        // layout sends one.
        Encoding::Dcb | Encoding::Dcz => None,
    })
}

/// What an export wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Report {
    pub version_count: u64,
    /// Versions whose folder existed in DIR and was replaced.
    pub replaced_version_count: u64,
    pub file_count: u64,
    /// Compressed siblings written.
    pub sibling_count: u64,
    /// Siblings not written, by path below DIR, with the reason.
    pub siblings_skipped: Vec<Skipped>,
    /// Bytes of every file and sibling written.
    pub written_bytes: u64,
}

/// One version to export.
struct Planned<'a> {
    version: &'a VersionRow,
    /// `PKG/VERSION`, below DIR.
    rel: PathBuf,
    files: Vec<AssetRow>,
    /// Every folder the version's paths pass through, `/`-separated.
    folders: HashSet<String>,
}

/// Exports `versions` from `catalog` into `dir` (see the module doc).
pub(crate) fn export(catalog: &Catalog, versions: &[VersionRow], dir: &Path) -> Result<Report> {
    // One read transaction: every version is exported as of one moment,
    // whatever publish, rm or gc do meanwhile.
    let snapshot = catalog.conn().unchecked_transaction().at(catalog)?;
    let plan = plan(catalog, versions, dir)?;

    let created = create_dirs(dir)?;
    let result = stage_and_commit(catalog, &plan, dir);
    if result.is_err() {
        remove_created(&created);
    }
    drop(snapshot);
    result
}

/// Lists every version's files and checks, before anything is written,
/// that each can be a plain file and that nothing in DIR is in the way.
fn plan<'a>(catalog: &Catalog, versions: &'a [VersionRow], dir: &Path) -> Result<Vec<Planned<'a>>> {
    if let Ok(meta) = std::fs::metadata(dir)
        && !meta.is_dir()
    {
        return Err(Error::bad_input(dir, "is not a folder to export into"));
    }
    let mut plan = Vec::with_capacity(versions.len());
    for version in versions {
        let rel = Path::new(&version.package).join(version.version.to_string());
        check_target(dir, &rel)?;
        // Chosen before the snapshot began: it may have gone since.
        if !catalog.version_exists(version.id)? {
            return Err(Error::VersionNotFound {
                package: version.package.clone(),
                version: version.version.to_string(),
            });
        }
        let files = catalog.files(version.id, super::query::Page::ALL)?;
        let mut folders = HashSet::new();
        for file in &files {
            let mut end = 0;
            while let Some(i) = file.path[end..].find('/') {
                end += i;
                folders.insert(file.path[..end].to_string());
                end += 1;
            }
        }
        if let Some(file) = files.iter().find(|f| folders.contains(&f.path)) {
            return Err(Error::bad_input(
                dir.join(&rel).join(&file.path),
                format!(
                    "{}@{} has both a file and a folder at {}, which plain files cannot hold",
                    version.package, version.version, file.path
                ),
            ));
        }
        plan.push(Planned {
            version,
            rel,
            files,
            folders,
        });
    }
    Ok(plan)
}

/// Refuses a version whose folder, or a folder above it, is something
/// other than a folder in DIR: export replaces only folders.
fn check_target(dir: &Path, rel: &Path) -> Result<()> {
    let mut path = dir.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        let last = i + 1 == parts.len();
        // The version folder itself is replaced as it is, so a symlink
        // there is not a folder; folders above it may be links to folders.
        let meta = if last {
            std::fs::symlink_metadata(&path)
        } else {
            std::fs::metadata(&path)
        };
        match meta {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(in_the_way(&path)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    Ok(())
}

fn stage_and_commit(catalog: &Catalog, plan: &[Planned<'_>], dir: &Path) -> Result<Report> {
    // Inside DIR, so that every move into place is a rename within one file
    // system. Removed when dropped, on success or failure.
    let staging = tempfile::Builder::new()
        .prefix(".ccc-export-")
        .tempdir_in(dir)
        .map_err(|e| Error::no_files_in(dir, &e))?;
    let mut report = Report::default();
    for planned in plan {
        stage_version(catalog, planned, staging.path(), dir, &mut report)?;
    }
    // The last moment to stop on Ctrl-C: from here DIR changes.
    crate::interrupt::check()?;
    let rels: Vec<&Path> = plan.iter().map(|p| p.rel.as_path()).collect();
    report.replaced_version_count = commit(staging.path(), dir, &rels)?;
    report.version_count = plan.len() as u64;
    Ok(report)
}

/// Writes one version below `staging`; errors name the file where it was
/// to go in DIR.
fn stage_version(
    catalog: &Catalog,
    planned: &Planned<'_>,
    staging: &Path,
    dir: &Path,
    report: &mut Report,
) -> Result<()> {
    let v = planned.version;
    let mtime = UNIX_EPOCH + Duration::from_secs(v.published_at.max(0) as u64);
    let root = staging.join(&planned.rel);
    let shown = dir.join(&planned.rel);
    std::fs::create_dir_all(&root).map_err(|e| Error::io(&shown, e))?;
    let names: HashSet<&str> = planned.files.iter().map(|f| f.path.as_str()).collect();
    for file in &planned.files {
        crate::interrupt::check()?;
        let stored = catalog.blob_body(file.blob_id)?;
        let target = root.join(&file.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(shown.join(&file.path), e))?;
        }
        if is_chunked(stored.len(), file.raw_bytes) {
            // A big file: copied a chunk at a time, and stored as it is,
            // so it has no sibling.
            write_chunked(
                catalog,
                file.blob_id,
                &target,
                mtime,
                &shown.join(&file.path),
            )?;
            report.file_count += 1;
            report.written_bytes += file.raw_bytes;
            continue;
        }
        let raw: Cow<[u8]> = if file.encoding == Encoding::Gzip {
            let mut raw = Vec::with_capacity(file.raw_bytes as usize);
            GzDecoder::new(&stored[..])
                .read_to_end(&mut raw)
                .map_err(|e| Error::Corrupt {
                    path: catalog.path().to_path_buf(),
                    what: format!(
                        "{}@{}/{} does not decode: {e}",
                        v.package, v.version, file.path
                    ),
                })?;
            Cow::Owned(raw)
        } else {
            Cow::Borrowed(&stored)
        };
        write_file(&target, &raw, mtime).map_err(|e| Error::io(shown.join(&file.path), e))?;
        report.file_count += 1;
        report.written_bytes += raw.len() as u64;

        for &sibling in SIBLINGS {
            let Some(body) = sibling_body(catalog, sibling, file, &stored)? else {
                continue;
            };
            let name = format!("{}{}", file.path, sibling.suffix());
            let clash = if names.contains(name.as_str()) {
                Some("the version has a file of that name".to_string())
            } else if planned.folders.contains(&name) {
                Some("the version has a folder of that name".to_string())
            } else {
                None
            };
            let skipped = match clash {
                Some(reason) => Some(reason),
                None => match write_file(&root.join(&name), &body, mtime) {
                    Ok(()) => None,
                    Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {
                        let base = name.rsplit('/').next().unwrap_or(&name);
                        Some(format!(
                            "the name is too long for the file system ({} bytes)",
                            base.len()
                        ))
                    }
                    Err(e) => return Err(Error::io(shown.join(&name), e)),
                },
            };
            match skipped {
                Some(reason) => report.siblings_skipped.push(Skipped {
                    path: rel_display(&planned.rel, &name),
                    reason,
                }),
                None => {
                    report.sibling_count += 1;
                    report.written_bytes += body.len() as u64;
                }
            }
        }
    }
    Ok(())
}

/// `PKG/VERSION/PATH`, `/`-separated, as reports show it.
fn rel_display(rel: &Path, path: &str) -> String {
    format!("{}/{path}", rel.to_string_lossy())
}

/// Writes a chunked blob's bytes at `path` (`shown` in errors).
fn write_chunked(
    catalog: &Catalog,
    blob_id: i64,
    path: &Path,
    mtime: SystemTime,
    shown: &Path,
) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(shown, e))?;
    let mut writer = io::BufWriter::new(&file);
    catalog.copy_blob(blob_id, &mut writer, &|e| Error::io(shown, e))?;
    writer.flush().map_err(|e| Error::io(shown, e))?;
    drop(writer);
    file.set_modified(mtime).map_err(|e| Error::io(shown, e))
}

fn write_file(path: &Path, bytes: &[u8], mtime: SystemTime) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut writer = io::BufWriter::new(&file);
    writer.write_all(bytes)?;
    writer.flush()?;
    drop(writer);
    file.set_modified(mtime)
}

/// One version folder moved into DIR, and how to move it back.
enum Moved {
    /// Renamed from `staged` to `target`, where nothing was.
    Renamed { staged: PathBuf, target: PathBuf },
    /// Swapped with the folder at `target`, which is now at `staged`.
    Swapped { staged: PathBuf, target: PathBuf },
}

/// Moves each staged `rels` folder from `staging` to the same place in
/// `dir`, replacing a folder already there; returns how many were
/// replaced. On failure, moves back what it moved and removes the folders
/// it created, so that DIR is as it was.
fn commit(staging: &Path, dir: &Path, rels: &[&Path]) -> Result<u64> {
    let mut moved = Vec::with_capacity(rels.len());
    let mut created = Vec::new();
    for rel in rels {
        let step = move_into_place(staging.join(rel), dir.join(rel), &mut created);
        match step {
            Ok(m) => moved.push(m),
            Err(e) => {
                let undone = undo(moved);
                remove_created(&created);
                return match undone {
                    Ok(()) => Err(e),
                    Err(stuck) => Err(Error::bad_input(
                        dir,
                        format!("export failed ({e}) and could not be undone: {stuck}"),
                    )),
                };
            }
        }
    }
    let replaced = moved.iter().filter(|m| matches!(m, Moved::Swapped { .. }));
    Ok(replaced.count() as u64)
}

/// Moves the folder `staged` to `target`, creating the folders above
/// `target` (added to `created`) and swapping with a folder already there.
fn move_into_place(staged: PathBuf, target: PathBuf, created: &mut Vec<PathBuf>) -> Result<Moved> {
    if let Some(parent) = target.parent() {
        created.extend(create_dirs(parent)?);
    }
    // Decided now, not when planned: the folder may have come or gone.
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            swap(&staged, &target).map_err(|e| Error::io(&target, e))?;
            Ok(Moved::Swapped { staged, target })
        }
        Ok(_) => Err(in_the_way(&target)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::rename(&staged, &target).map_err(|e| Error::io(&target, e))?;
            Ok(Moved::Renamed { staged, target })
        }
        Err(e) => Err(Error::io(&target, e)),
    }
}

/// The error for something other than a folder where a version folder goes.
fn in_the_way(path: &Path) -> Error {
    Error::bad_input(
        path,
        "is in the way: export writes a folder there and replaces only folders",
    )
}

/// Moves back every folder `commit` moved, newest first.
fn undo(moved: Vec<Moved>) -> std::result::Result<(), String> {
    let mut stuck = Vec::new();
    for m in moved.into_iter().rev() {
        let (result, target) = match m {
            Moved::Renamed { staged, target } => (std::fs::rename(&target, &staged), target),
            Moved::Swapped { staged, target } => (swap(&staged, &target), target),
        };
        if let Err(e) = result {
            stuck.push(format!("{}: {e}", target.display()));
        }
    }
    if stuck.is_empty() {
        Ok(())
    } else {
        Err(stuck.join("; "))
    }
}

/// Exchanges the folders at `a` and `b`, in one step where the system can
/// (`renameat2(RENAME_EXCHANGE)` on Linux, `RENAME_SWAP` on macOS), else
/// with three renames through a name beside `a`.
fn swap(a: &Path, b: &Path) -> io::Result<()> {
    match exchange(a, b) {
        Ok(()) => Ok(()),
        Err(e) if exchange_unsupported(&e) => swap_by_renames(a, b),
        Err(e) => Err(e),
    }
}

#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The errors of a system or file system without an atomic exchange.
fn exchange_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        )
}

/// [`swap`] without an atomic exchange: `b` is absent between the first
/// two renames. A failure restores what it moved.
fn swap_by_renames(a: &Path, b: &Path) -> io::Result<()> {
    let mut aside = a.as_os_str().to_owned();
    aside.push(".swap");
    let aside = PathBuf::from(aside);
    std::fs::rename(b, &aside)?;
    if let Err(e) = std::fs::rename(a, b) {
        let _ = std::fs::rename(&aside, b);
        return Err(e);
    }
    std::fs::rename(&aside, a)
}

/// Creates `dir` and any missing folders above it; returns those it
/// created, outermost first.
fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut path = dir;
    while !path.as_os_str().is_empty() && std::fs::symlink_metadata(path).is_err() {
        missing.push(path.to_path_buf());
        match path.parent() {
            Some(parent) => path = parent,
            None => break,
        }
    }
    missing.reverse();
    for (i, path) in missing.iter().enumerate() {
        if let Err(e) = std::fs::create_dir(path) {
            remove_created(&missing[..i]);
            return Err(match path.parent() {
                Some(parent) if e.kind() == std::io::ErrorKind::NotADirectory => {
                    Error::bad_input(parent, "is not a folder")
                }
                Some(parent) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    let parent = match parent.as_os_str().is_empty() {
                        true => Path::new("."),
                        false => parent,
                    };
                    Error::no_files_in(parent, &e)
                }
                _ => Error::io(path, e),
            });
        }
    }
    Ok(missing)
}

/// Removes folders [`create_dirs`] created, innermost first, where they
/// are still empty.
fn remove_created(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(root: &Path, rel: &str, marker: &str) {
        let dir = root.join(rel);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("marker"), marker).expect("write");
    }

    fn marker(root: &Path, rel: &str) -> String {
        std::fs::read_to_string(root.join(rel).join("marker")).expect("marker")
    }

    #[test]
    fn both_swaps_exchange_two_folders() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        folder(root, "a", "A");
        folder(root, "b", "B");
        swap(&root.join("a"), &root.join("b")).expect("swap");
        assert_eq!(
            (marker(root, "a"), marker(root, "b")),
            ("B".into(), "A".into())
        );
        swap_by_renames(&root.join("a"), &root.join("b")).expect("swap by renames");
        assert_eq!(
            (marker(root, "a"), marker(root, "b")),
            ("A".into(), "B".into())
        );
        let mut names: Vec<_> = std::fs::read_dir(root)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["a", "b"], "nothing left aside");
    }

    #[test]
    fn a_failed_commit_moves_back_what_it_moved() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (staging, dir) = (tmp.path().join("staging"), tmp.path().join("dir"));
        folder(&staging, "app/1.0.0", "new app 1");
        folder(&staging, "app/2.0.0", "new app 2");
        folder(&staging, "zed/1.0.0", "new zed");
        folder(&dir, "app/1.0.0", "old app 1");
        // In the way of the last version, as if written after planning.
        std::fs::write(dir.join("zed"), "a file where a folder goes").expect("write");

        let rels = [
            Path::new("app/1.0.0"),
            Path::new("app/2.0.0"),
            Path::new("zed/1.0.0"),
        ];
        let e = commit(&staging, &dir, &rels).expect_err("zed is in the way");
        assert!(e.to_string().contains("zed"), "{e}");
        assert_eq!(marker(&dir, "app/1.0.0"), "old app 1");
        assert!(!dir.join("app/2.0.0").exists());
        assert_eq!(marker(&staging, "app/1.0.0"), "new app 1");
        assert_eq!(marker(&staging, "app/2.0.0"), "new app 2");

        // Once the way is clear, the same commit goes through.
        std::fs::remove_file(dir.join("zed")).expect("rm");
        assert_eq!(commit(&staging, &dir, &rels).expect("commit"), 1);
        assert_eq!(marker(&dir, "app/1.0.0"), "new app 1");
        assert_eq!(marker(&dir, "zed/1.0.0"), "new zed");
        assert_eq!(
            marker(&staging, "app/1.0.0"),
            "old app 1",
            "the old folder is staged for removal"
        );
    }

    #[test]
    fn created_folders_are_listed_and_removed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let deep = tmp.path().join("a/b/c");
        let created = create_dirs(&deep).expect("create");
        assert_eq!(
            created,
            [tmp.path().join("a"), tmp.path().join("a/b"), deep.clone()]
        );
        assert!(create_dirs(&deep).expect("again").is_empty());
        remove_created(&created);
        assert!(!tmp.path().join("a").exists());
    }
}

//! Archives as publish input: a tar stream, plain or gzipped, from a file or
//! stdin, read front to back and handed to the publish pipeline one file at
//! a time ([`super::publish::Stream`]). Nothing is extracted to disk, and
//! each file's bytes are held once, from the read until its worker is done.
//!
//! # Format
//!
//! Told by the first bytes, never by the file name: gzip (`1f 8b`, a
//! `.tgz`/`.tar.gz`, several members allowed), then a tar archive inside or
//! as it is (POSIX ustar, GNU and PAX; a pre-POSIX header is recognised by its
//! checksum). bzip2, xz, zstd and zip are named in the error.
//!
//! # Layout
//!
//! As npm reads a package tarball: the first segment of every entry's name
//! is a folder that is not part of the version, whatever it is called, and
//! is stripped. `npm pack` writes `package/`, but published tarballs carry
//! others (`@types/react` has `react/`), and `tar -czf site.tgz dist` has
//! `dist/`; `tar -czf site.tgz -C dist .` has `./`, so it publishes what
//! is inside `dist` as well. The publish summary names the folder stripped
//! (`./` is not named: it is no folder).
//!
//! npm quietly drops an entry at the top (nothing is left once its first
//! segment goes) and merges entries below different first folders. ccc
//! refuses both instead, naming the entry, because either means the
//! archive is not one package's folder and some file would be lost or
//! land where nobody put it. The first entry decides: when it is a file at
//! the top, the archive has no folder to strip and every entry is
//! published as it is (`tar -cf site.tar index.html js`). Empty and `.`
//! segments below the first are dropped, as tar does.
//!
//! # The rules of a directory publish
//!
//! - Links are never followed: symlinks and hard links are left out and
//!   reported, like symlinks in a directory; so are devices and FIFOs.
//! - Entry names must be relative UTF-8 without `..` segments or NUL bytes:
//!   anything else fails the whole publish, naming the entry.
//! - A path may appear once, and never as both a file and a folder.
//! - `--exclude`, `.git/` and `.DS_Store` leave entries out as they leave
//!   files out of a directory, and a ccc catalog in the archive is left
//!   out and reported like one found in a directory.
//! - `--max-file-size` bounds each file, `--max-unpacked-size` the whole
//!   tar stream once decompressed, and the header records before one entry
//!   (long names, PAX) may take [`MAX_ENTRY_METADATA`]: a small archive
//!   cannot make ccc allocate or churn through more than those.

use super::publish::{FileEntry, Sink, Source, Streamed, build_excludes};
use super::rows::Skipped;
use crate::error::{Error, Result};
use std::cell::Cell;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Most bytes of header records (GNU long names, PAX extensions) read
/// before one entry: real ones take a few hundred bytes.
pub(crate) const MAX_ENTRY_METADATA: u64 = 1 << 20;

/// Default `--max-unpacked-size`: 4 GiB.
pub(crate) const DEFAULT_MAX_UNPACKED_SIZE: u64 = 4 << 30;

/// How to read an archive.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub excludes: Vec<String>,
    pub max_file_size: u64,
    /// Files of this size or more go to a temporary file, not memory.
    pub chunked_from: u64,
    pub max_unpacked_size: u64,
    /// Read the name and version from the root `package.json`.
    pub want_identity: bool,
}

/// The package and version the root `package.json` of the archive
/// `input` (called `name` in errors) names: a first pass that reads entry
/// headers up to it, for `publish --to`, which names them in its URL
/// before sending the archive. The root is the top (`package.json`) or
/// the one folder below it (`package/package.json`), as npm reads it.
pub(crate) fn identity(name: &Path, input: impl Read) -> Result<super::rows::Identity> {
    let bad = |what: String| Error::bad_input(name, what);
    let tar = open(name, input)?;
    let mut archive = tar::Archive::new(tar);
    let entries = archive
        .entries()
        .map_err(|e| bad(format!("is not a readable tar archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("is not a readable tar archive: {e}")))?;
        let path = entry.path_bytes().into_owned();
        let path = String::from_utf8_lossy(&path);
        let segments: Vec<&str> = path
            .trim_start_matches("./")
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let at_root = matches!(segments.as_slice(), ["package.json"] | [_, "package.json"]);
        if !at_root || !entry.header().entry_type().is_file() {
            continue;
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(super::manifest::MAX_MANIFEST_SIZE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        return super::manifest::identity(&bytes, &name.join(&*path));
    }
    Err(bad(
        "has no package.json at its root to name the package and version: give PKG@VERSION".into(),
    ))
}

/// Reads the archive `input`, called `name` in errors (its path, or
/// `stdin`), and passes each file to `sink`.
pub(crate) fn read(
    name: &Path,
    input: impl Read,
    rules: &Rules,
    sink: &Sink<'_>,
) -> Result<Streamed> {
    let bad = |what: String| Error::bad_input(name, what);
    let excludes = build_excludes(&rules.excludes)?;
    let tar = open(name, input)?;
    let meter = Rc::new(Meter {
        read: Cell::new(0),
        stop_at: Cell::new(u64::MAX),
        max_total: rules.max_unpacked_size,
        tripped: Cell::new(None),
    });
    let mut archive = tar::Archive::new(Metered {
        inner: tar,
        meter: meter.clone(),
    });
    let mut entries = archive
        .entries()
        .map_err(|e| bad(format!("is not a readable tar archive: {e}")))?;

    let mut out = Streamed::default();
    let mut layout = None;
    let mut tree = Tree::default();
    let mut last = String::new();
    let mut sent = 0u64;
    let mut named = false;
    loop {
        crate::interrupt::check()?;
        meter.stop_at.set(meter.read.get() + MAX_ENTRY_METADATA);
        let next = entries.next();
        meter.stop_at.set(u64::MAX);
        let mut entry = match next {
            None => break,
            Some(Ok(entry)) => entry,
            Some(Err(e)) => return Err(bad(meter.explain(e, &last, rules))),
        };
        let raw = entry.path_bytes().into_owned();
        last = shown(&raw);
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            // `git archive` writes one; it names no file.
            continue;
        }
        let refuse = |why: &str| {
            bad(format!(
                "archive entry `{}` {why}; nothing was published",
                shown(&raw)
            ))
        };
        let full = normalize(&raw).map_err(refuse)?;
        if full.is_empty() {
            continue;
        }
        // `normalize` has checked the name: it is UTF-8, relative, without
        // `..` or NUL.
        let text = String::from_utf8_lossy(&raw);
        let layout = layout.get_or_insert_with(|| Layout::of(&text, kind.is_dir()));
        let Some(path) = layout.strip(&text, &full).map_err(|why| refuse(&why))? else {
            if !kind.is_dir() {
                return Err(refuse(&format!(
                    "is a file where this archive has its top folder `{}/`",
                    layout.folder().unwrap_or_default()
                )));
            }
            continue;
        };
        let drain = |entry: &mut tar::Entry<'_, _>| {
            std::io::copy(entry, &mut std::io::sink())
                .map_err(|e| bad(meter.explain(e, &last, rules)))
        };
        if excludes.is_match(&path) {
            drain(&mut entry)?;
            continue;
        }
        let link = |what: &str| {
            let target = entry
                .link_name_bytes()
                .map_or_else(|| "?".to_string(), |t| shown(&t));
            format!("{what} to {target} (links in an archive are not followed)")
        };
        let left_out = match kind {
            tar::EntryType::Directory => {
                tree.folder(&path).map_err(refuse)?;
                None
            }
            tar::EntryType::Symlink => Some(link("symlink")),
            tar::EntryType::Link => Some(link("hard link")),
            tar::EntryType::Regular | tar::EntryType::Continuous | tar::EntryType::GNUSparse => {
                let read = read_file(&mut entry, rules).map_err(|e| match e {
                    FileError::TooLarge(size) => refuse(&format!(
                        "is {size} bytes ({}), over --max-file-size {} bytes",
                        crate::units::human_size(size),
                        rules.max_file_size
                    )),
                    FileError::Io(e) => bad(meter.explain(e, &last, rules)),
                })?;
                tree.file(&path).map_err(refuse)?;
                let (head, source) = match read {
                    EntryBytes::Whole(bytes) => (
                        bytes
                            .get(..super::CATALOG_HEADER_LEN)
                            .unwrap_or(&bytes)
                            .to_vec(),
                        Source::Read(bytes),
                    ),
                    EntryBytes::Spooled(head, temp) => (head, Source::Spooled(temp)),
                };
                if super::is_catalog_header(&head) {
                    out.skipped.push(Skipped {
                        path,
                        reason: "a ccc catalog; catalogs are never published".into(),
                    });
                    continue;
                }
                if rules.want_identity
                    && path == "package.json"
                    && let Source::Read(bytes) = &source
                {
                    let whence = PathBuf::from(format!("{}: {full}", name.display()));
                    sink.named(super::manifest::identity(bytes, &whence)?);
                    named = true;
                }
                sink.send(FileEntry {
                    size: entry.size(),
                    path,
                    source,
                })?;
                sent += 1;
                continue;
            }
            _ => Some("not a regular file".to_string()),
        };
        if let Some(reason) = left_out {
            out.skipped.push(Skipped { path, reason });
        }
        drain(&mut entry)?;
    }
    if sent == 0 {
        return Err(bad("contains no files to publish (after excludes)".into()));
    }
    let stripped = layout.as_ref().and_then(Layout::folder);
    if rules.want_identity && !named {
        let at = match stripped {
            Some(folder) => format!("{folder}/package.json"),
            None => "package.json".into(),
        };
        return Err(bad(format!(
            "has no {at} to name the package and version; give them: \
             `ccc publish PKG@VERSION {}`",
            name.display()
        )));
    }
    out.stripped_folder = stripped.map(str::to_string);
    Ok(out)
}

/// Where an archive keeps the version's files (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Layout {
    /// Below this first segment of every entry's name (`package`, `react`,
    /// `.`), which is stripped.
    Below(String),
    /// At the root: the first entry is a file at the top.
    Plain,
}

impl Layout {
    /// The layout of an archive whose first entry is named `first` (as
    /// written, a folder when `is_dir`).
    fn of(first: &str, is_dir: bool) -> Layout {
        match first.split_once('/') {
            Some((top, _)) => Layout::Below(top.to_string()),
            None if is_dir => Layout::Below(first.to_string()),
            None => Layout::Plain,
        }
    }

    /// The folder stripped from every entry, for the summary; None when
    /// nothing is (`./` strips no folder).
    fn folder(&self) -> Option<&str> {
        match self {
            Layout::Below(top) if top != "." => Some(top),
            _ => None,
        }
    }

    /// The path in the version of the entry named `text` as written,
    /// `full` once normalized; None for the top folder itself.
    fn strip(&self, text: &str, full: &str) -> std::result::Result<Option<String>, String> {
        let Layout::Below(top) = self else {
            return Ok(Some(full.to_string()));
        };
        let (first, rest) = text.split_once('/').unwrap_or((text, ""));
        if first != top {
            return Err(format!(
                "is outside `{top}/`, the folder of this archive's first entry; \
                 that folder is stripped from every entry as npm does, so every \
                 entry must lie below it"
            ));
        }
        // The whole name was checked; what follows its first segment only
        // needs the same clean-up.
        let rest = normalize(rest.trim_start_matches('/').as_bytes()).map_err(str::to_string)?;
        Ok((!rest.is_empty()).then_some(rest))
    }
}

/// The paths an archive has given so far, to refuse a path given twice and
/// a path that is a file in one entry and a folder in another (which no
/// file system, and so no `ccc export`, could hold).
#[derive(Default)]
struct Tree {
    /// Every path seen, and whether it is a file.
    paths: std::collections::HashMap<String, bool>,
}

impl Tree {
    fn file(&mut self, path: &str) -> std::result::Result<(), &'static str> {
        self.parents(path)?;
        match self.paths.insert(path.to_string(), true) {
            Some(true) => Err("appears twice in the archive"),
            Some(false) => Err("is a file, and a folder in another entry"),
            None => Ok(()),
        }
    }

    fn folder(&mut self, path: &str) -> std::result::Result<(), &'static str> {
        self.parents(path)?;
        match self.paths.insert(path.to_string(), false) {
            Some(true) => Err("is a folder, and a file in another entry"),
            _ => Ok(()),
        }
    }

    fn parents(&mut self, path: &str) -> std::result::Result<(), &'static str> {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            if let Some(true) = self.paths.insert(path[..end].to_string(), false) {
                return Err("lies below a path that is a file in another entry");
            }
            end += 1;
        }
        Ok(())
    }
}

/// An entry name as a `/`-separated relative path: `.` and empty segments
/// dropped; refused when absolute, with a `..` segment, a NUL byte or bytes
/// that are not UTF-8.
fn normalize(raw: &[u8]) -> std::result::Result<String, &'static str> {
    let text = std::str::from_utf8(raw).map_err(
        |_| "is not valid UTF-8; only UTF-8 names can be published (--exclude GLOB leaves it out)",
    )?;
    if text.contains('\0') {
        return Err("contains a NUL byte");
    }
    if text.starts_with('/') {
        return Err("is an absolute path");
    }
    let mut out = String::with_capacity(text.len());
    for segment in text.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err("has a `..` segment, which would point outside the archive"),
            _ => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(segment);
            }
        }
    }
    Ok(out)
}

/// An entry name for messages: as it is when UTF-8 (control characters
/// escaped), else with its bytes escaped.
fn shown(raw: &[u8]) -> String {
    match std::str::from_utf8(raw) {
        Ok(text) => text.escape_debug().to_string(),
        Err(_) => raw.escape_ascii().to_string(),
    }
}

enum FileError {
    TooLarge(u64),
    Io(std::io::Error),
}

/// A file entry as read: in memory, or (a big one) copied to a
/// temporary file, with its first bytes.
enum EntryBytes {
    Whole(Vec<u8>),
    Spooled(Vec<u8>, std::sync::Arc<tempfile::TempPath>),
}

/// Reads one file entry, refusing one over `max` bytes before reading it:
/// whole when smaller than what publish stores in chunks, else into a
/// temporary file, so that memory never holds a big file.
fn read_file<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    rules: &Rules,
) -> std::result::Result<EntryBytes, FileError> {
    let size = entry.size();
    if size > rules.max_file_size {
        return Err(FileError::TooLarge(size));
    }
    if size < rules.chunked_from {
        // The header's size is under the threshold: a bounded allocation.
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry.read_to_end(&mut bytes).map_err(FileError::Io)?;
        return Ok(EntryBytes::Whole(bytes));
    }
    let mut temp = tempfile::NamedTempFile::new().map_err(FileError::Io)?;
    let mut head = vec![0; super::CATALOG_HEADER_LEN];
    let n = super::chunks::read_full(entry, &mut head).map_err(FileError::Io)?;
    head.truncate(n);
    std::io::Write::write_all(&mut temp, &head).map_err(FileError::Io)?;
    std::io::copy(entry, &mut temp).map_err(FileError::Io)?;
    Ok(EntryBytes::Spooled(
        head,
        std::sync::Arc::new(temp.into_temp_path()),
    ))
}

/// Wraps `input` in a gzip decoder when it is one, and checks that what
/// comes out is a tar archive.
fn open<'a>(name: &Path, input: impl Read + 'a) -> Result<Box<dyn Read + 'a>> {
    let bad = |what: String| Error::bad_input(name, what);
    let (head, input) = peek(input, 512).map_err(|e| Error::io(name, e))?;
    let (head, tar): (Vec<u8>, Box<dyn Read>) = if head.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::read::MultiGzDecoder::new(input);
        let (inner, gz) = peek(gz, 512).map_err(|e| {
            bad(format!(
                "is gzip-compressed but cannot be decompressed: {e}"
            ))
        })?;
        if !is_tar(&inner) {
            return Err(bad(
                "is gzip-compressed, but what it holds is not a tar archive".into(),
            ));
        }
        (inner, Box::new(gz))
    } else {
        (head, Box::new(input))
    };
    if !is_tar(&head) {
        let what = match head.as_slice() {
            [] => "is empty, not a tar archive".to_string(),
            [b'B', b'Z', b'h', ..] => {
                "is bzip2-compressed; ccc reads .tar and .tar.gz (.tgz)".into()
            }
            [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => {
                "is xz-compressed; ccc reads .tar and .tar.gz (.tgz)".into()
            }
            [0x28, 0xb5, 0x2f, 0xfd, ..] => {
                "is zstd-compressed; ccc reads .tar and .tar.gz (.tgz)".into()
            }
            [b'P', b'K', 3, 4, ..] => "is a zip file; ccc reads .tar and .tar.gz (.tgz)".into(),
            _ => "is neither a tar archive nor a gzipped one (.tgz, .tar.gz)".into(),
        };
        return Err(bad(what));
    }
    Ok(tar)
}

/// Reads up to `n` bytes of `input` and gives them back, with a reader
/// that yields them again followed by the rest.
fn peek<'a, R: Read + 'a>(
    mut input: R,
    n: usize,
) -> std::io::Result<(Vec<u8>, Box<dyn Read + 'a>)> {
    let mut head = Vec::with_capacity(n);
    (&mut input).take(n as u64).read_to_end(&mut head)?;
    let again = Cursor::new(head.clone()).chain(input);
    Ok((head, Box::new(again)))
}

/// Whether `block`, the first 512 bytes of a stream, starts a tar archive:
/// a ustar magic, a pre-POSIX header with a valid checksum, or the two zero
/// blocks of an empty archive (the first of them is enough here).
fn is_tar(block: &[u8]) -> bool {
    let Some(block) = block.get(..512) else {
        return false;
    };
    if &block[257..262] == b"ustar" || block.iter().all(|&b| b == 0) {
        return true;
    }
    let field = std::str::from_utf8(&block[148..156]).unwrap_or("");
    let Ok(recorded) = u32::from_str_radix(field.trim_matches(|c| c == ' ' || c == '\0'), 8) else {
        return false;
    };
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    sum == recorded
}

/// Which limit stopped the tar reader.
#[derive(Debug, Clone, Copy)]
enum Trip {
    Unpacked,
    Metadata,
}

/// The bytes the tar reader has taken from the decompressed stream, and
/// where it must stop.
struct Meter {
    read: Cell<u64>,
    /// Set to the current position plus [`MAX_ENTRY_METADATA`] while the
    /// tar reader looks for the next entry.
    stop_at: Cell<u64>,
    max_total: u64,
    tripped: Cell<Option<Trip>>,
}

impl Meter {
    /// The message for an error reading the archive after entry `last`.
    fn explain(&self, e: std::io::Error, last: &str, rules: &Rules) -> String {
        let after = if last.is_empty() {
            "at its start".to_string()
        } else {
            format!("after entry `{last}`")
        };
        match self.tripped.get() {
            Some(Trip::Unpacked) => format!(
                "unpacks to more than --max-unpacked-size {} bytes ({}); nothing was published",
                rules.max_unpacked_size,
                crate::units::human_size(rules.max_unpacked_size)
            ),
            Some(Trip::Metadata) => format!(
                "has over {} of header records (long names, PAX) before one entry, {after}; \
                 nothing was published",
                crate::units::human_size(MAX_ENTRY_METADATA)
            ),
            None => format!("is damaged or cut short {after}: {e}"),
        }
    }
}

/// The decompressed stream as the tar reader sees it, stopped at the
/// [`Meter`]'s limits.
struct Metered<R> {
    inner: R,
    meter: Rc<Meter>,
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let meter = &self.meter;
        let read = meter.read.get();
        let (limit, trip) = if meter.stop_at.get() < meter.max_total {
            (meter.stop_at.get(), Trip::Metadata)
        } else {
            (meter.max_total, Trip::Unpacked)
        };
        let room = limit.saturating_sub(read);
        if room == 0 && !buf.is_empty() {
            // Anything more is over the limit; an archive that ends exactly
            // there reads 0 bytes from `inner` and is fine.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            meter.tripped.set(Some(trip));
            return Err(std::io::Error::other("archive limit reached"));
        }
        let take = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..take])?;
        meter.read.set(read + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_or_refused() {
        assert_eq!(normalize(b"./a//b/./c.js").as_deref(), Ok("a/b/c.js"));
        assert_eq!(normalize(b"./").as_deref(), Ok(""));
        for bad in [
            &b"/etc/passwd"[..],
            b"a/../../b",
            b"..",
            b"a\0b",
            b"caf\xe9",
        ] {
            assert!(normalize(bad).is_err(), "{}", shown(bad));
        }
        assert_eq!(shown(b"caf\xe9\n"), "caf\\xe9\\n");
        assert_eq!(shown("ü\0".as_bytes()), "ü\\0");
    }

    #[test]
    fn the_first_folder_is_stripped_whatever_its_name() {
        let below = |top: &str| Layout::Below(top.into());
        assert_eq!(Layout::of("package/index.js", false), below("package"));
        assert_eq!(Layout::of("package", true), below("package"));
        assert_eq!(Layout::of("react/index.d.ts", false), below("react"));
        assert_eq!(Layout::of("./index.html", false), below("."));
        assert_eq!(Layout::of("package", false), Layout::Plain);
        assert_eq!(Layout::of("index.html", false), Layout::Plain);
        let strip =
            |layout: &Layout, text: &str| layout.strip(text, &normalize(text.as_bytes()).unwrap());
        let react = below("react");
        assert_eq!(strip(&react, "react/a/b.d.ts"), Ok(Some("a/b.d.ts".into())));
        assert_eq!(
            strip(&react, "react//a/./b.d.ts"),
            Ok(Some("a/b.d.ts".into()))
        );
        assert_eq!(strip(&react, "react/"), Ok(None));
        assert_eq!(strip(&react, "react"), Ok(None));
        for outside in ["other/a.js", "a.js", "./react/a.js", "reactx/a.js"] {
            let err = strip(&react, outside).unwrap_err();
            assert!(err.contains("outside `react/`"), "{outside}: {err}");
        }
        let dot = below(".");
        assert_eq!(strip(&dot, "./js/a.js"), Ok(Some("js/a.js".into())));
        assert_eq!(dot.folder(), None, "`./` is no folder to name");
        assert_eq!(react.folder(), Some("react"));
        assert_eq!(
            strip(&Layout::Plain, "package/a.js"),
            Ok(Some("package/a.js".into()))
        );
    }

    #[test]
    fn a_path_is_a_file_or_a_folder_once() {
        let mut tree = Tree::default();
        assert!(tree.file("a/b.js").is_ok());
        assert!(tree.folder("a").is_ok());
        assert!(tree.file("a/b.js").is_err(), "twice");
        assert!(tree.file("a").is_err(), "a file where a folder is");
        assert!(tree.file("a/b.js/c").is_err(), "below a file");
        assert!(tree.folder("a/b.js").is_err(), "a folder where a file is");
    }

    #[test]
    fn tar_headers_are_recognised() {
        let mut header = tar::Header::new_old();
        header.set_path("index.js").unwrap();
        header.set_size(3);
        header.set_cksum();
        assert!(is_tar(header.as_bytes()), "a pre-POSIX header");
        let mut damaged = *header.as_bytes();
        damaged[0] ^= 1;
        assert!(!is_tar(&damaged));
        assert!(is_tar(tar::Header::new_gnu().as_bytes()));
        assert!(is_tar(&[0; 512]));
        assert!(!is_tar(&[b'x'; 512]));
        assert!(!is_tar(&[0; 100]));
    }
}

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
//! `npm pack` puts every file below a `package/` folder; the files of the
//! version are what is inside it. So when the archive's first entry is
//! `package/` or lies below it, that folder is stripped from every entry and
//! an entry outside it is refused. Any other archive is published as it is:
//! a lone top-level folder of another name stays (an archive made with
//! `tar -czf site.tgz dist` publishes `dist/index.html`; `-C dist .` publishes
//! `index.html`), because stripping it would silently move every URL. A
//! leading `./` and empty or `.` segments are dropped, as tar does.
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

use super::publish::{FileEntry, Sink, Skipped, Source, Streamed, build_excludes};
use crate::error::{Error, Result};
use std::cell::Cell;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Most bytes of header records (GNU long names, PAX extensions) read
/// before one entry: real ones take a few hundred bytes.
pub const MAX_ENTRY_METADATA: u64 = 1 << 20;

/// Default `--max-unpacked-size`: 4 GiB.
pub const DEFAULT_MAX_UNPACKED_SIZE: u64 = 4 << 30;

/// The folder `npm pack` puts a package's files in.
const NPM_FOLDER: &str = "package";

/// How to read an archive.
#[derive(Debug, Clone)]
pub struct Rules {
    pub excludes: Vec<String>,
    pub max_file_size: u64,
    pub max_unpacked_size: u64,
    /// Read the name and version from the root `package.json`.
    pub want_identity: bool,
}

/// Reads the archive `input`, called `name` in errors (its path, or
/// `stdin`), and passes each file to `sink`.
pub fn read(name: &Path, input: impl Read, rules: &Rules, sink: &Sink<'_>) -> Result<Streamed> {
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
        let layout = *layout.get_or_insert(Layout::of(&full, kind.is_dir()));
        let Some(path) = layout.strip(&full).map_err(refuse)? else {
            if !kind.is_dir() {
                return Err(refuse(
                    "is a file where this npm archive has its `package/` folder",
                ));
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
                let bytes = read_file(&mut entry, rules.max_file_size).map_err(|e| match e {
                    FileError::TooLarge(size) => refuse(&format!(
                        "is {size} bytes ({}), over --max-file-size {} bytes",
                        crate::units::human_size(size),
                        rules.max_file_size
                    )),
                    FileError::Io(e) => bad(meter.explain(e, &last, rules)),
                })?;
                tree.file(&path).map_err(refuse)?;
                if super::is_catalog_header(&bytes) {
                    out.skipped.push(Skipped {
                        path,
                        reason: "a ccc catalog; catalogs are never published".into(),
                    });
                    continue;
                }
                if rules.want_identity && path == "package.json" {
                    let whence = PathBuf::from(format!("{}: {full}", name.display()));
                    sink.named(super::manifest::identity(&bytes, &whence)?);
                    named = true;
                }
                sink.send(FileEntry {
                    size: bytes.len() as u64,
                    path,
                    source: Source::Read(bytes),
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
    if rules.want_identity && !named {
        let at = match layout {
            Some(Layout::Npm) => "package/package.json",
            _ => "package.json",
        };
        return Err(bad(format!(
            "has no {at} to name the package and version; give them: \
             `ccc publish PKG@VERSION {}`",
            name.display()
        )));
    }
    Ok(out)
}

/// Where an archive keeps the version's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `npm pack`'s: everything below `package/`.
    Npm,
    /// At the root.
    Plain,
}

impl Layout {
    /// The layout of an archive whose first entry is `first` (a folder
    /// when `is_dir`).
    fn of(first: &str, is_dir: bool) -> Layout {
        match first.split_once('/') {
            Some((NPM_FOLDER, _)) => Layout::Npm,
            None if first == NPM_FOLDER && is_dir => Layout::Npm,
            _ => Layout::Plain,
        }
    }

    /// The path of an entry in the version; None for `package/` itself.
    fn strip(self, full: &str) -> std::result::Result<Option<String>, &'static str> {
        match self {
            Layout::Plain => Ok(Some(full.to_string())),
            Layout::Npm if full == NPM_FOLDER => Ok(None),
            Layout::Npm => match full.split_once('/') {
                Some((NPM_FOLDER, rest)) => Ok(Some(rest.to_string())),
                _ => Err("is outside `package/`, where this npm archive's first entry is"),
            },
        }
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
    let text = std::str::from_utf8(raw)
        .map_err(|_| "is not valid UTF-8; only UTF-8 names can be published")?;
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

/// Reads one file entry whole, refusing one over `max` bytes before
/// reading it.
fn read_file<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    max: u64,
) -> std::result::Result<Vec<u8>, FileError> {
    let size = entry.size();
    if size > max {
        return Err(FileError::TooLarge(size));
    }
    // The header's size is at most `max`, so this allocation is bounded.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    entry.read_to_end(&mut bytes).map_err(FileError::Io)?;
    Ok(bytes)
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
    fn only_npm_s_folder_is_stripped() {
        assert_eq!(Layout::of("package/index.js", false), Layout::Npm);
        assert_eq!(Layout::of("package", true), Layout::Npm);
        assert_eq!(Layout::of("package", false), Layout::Plain);
        assert_eq!(Layout::of("dist/index.js", false), Layout::Plain);
        assert_eq!(Layout::of("packages/a.js", false), Layout::Plain);
        let npm = Layout::Npm;
        assert_eq!(npm.strip("package/a/b.js"), Ok(Some("a/b.js".into())));
        assert_eq!(npm.strip("package"), Ok(None));
        assert!(npm.strip("other/a.js").is_err());
        assert_eq!(
            Layout::Plain.strip("package/a.js"),
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

//! Publishing: a directory, an archive (or files in memory) becomes one
//! immutable `package@version` in a single transaction.
//!
//! ```text
//! plan (walk, filter, check names and sizes)          -- nothing written yet
//!   -> BEGIN IMMEDIATE (the write lock, held to the end)
//!   [an archive instead: a reader thread checks and reads one entry at a
//!    time into a channel as short as the workers are many; see `archive`]
//!   -> N workers: read + sha256 -> already stored? -> gzip (level 9) + sha256 of the
//!      stored bytes [-> brotli (quality 5) when gzip was kept] + the XXH3 of
//!      each 64 KiB piece of a stream longer than one (`pieces`) -> bounded channel
//!   -> this thread: INSERT new blobs as they arrive (bodies dropped right after)
//!   -> INSERT version + assets, totals from SQL
//!   [-> a `Rewrite` gives some files new content, read from the rows just
//!    written (`--importmap`); stored as above, the totals follow]
//!   -> COMMIT (fsync'd)
//! ```
//!
//! A file of `--chunked-from` bytes or more is only hashed by its worker,
//! a chunk at a time, and stored in chunks by this thread, which reads it
//! again (see [`super::chunks`]); an archive entry that big is copied to a
//! temporary file first. Memory is bounded by the workers' files in flight
//! (each under `--chunked-from`) plus a short channel of compressed bodies,
//! never by the size of the tree or of its largest file. Any error, or a kill at
//! any point, leaves the catalog exactly as it was: nothing is visible before
//! the commit. Workers check for existing blobs through their own read-only
//! connections; since this publish holds the write lock, what they see cannot
//! change under them. Identical files within one publish are compressed once
//! (a shared set of claimed digests). Ctrl-C is noticed between files, in
//! the walk and in the workers, and ends the publish with
//! [`Error::Interrupted`] before the commit (see `interrupt`).
//!
//! A `_redirects` or `_headers` at the version's root is a site's rules:
//! its worker parses it (`site::rules`), and one that ccc cannot follow
//! refuses the version ([`Error::SiteRules`], naming the line) before the
//! commit, as a broken file would only show once the site is served.
//! Files of those names in folders are ordinary files.
//!
//! # Catalogs are never published
//!
//! A catalog holds every version ever published; storing it as an asset
//! would let `serve` hand all of it to anyone. The walk leaves out, and
//! reports like a symlink:
//!
//! - the catalog this publish writes to and its `-wal`, `-shm` and
//!   `-journal` files, recognised by device and inode ([`CatalogFiles`]), so
//!   another name or a hard link is caught too;
//! - any other ccc catalog, recognised by the `application_id` in its SQLite
//!   header, and the side files SQLite keeps beside it under its name.
//!
//! Other SQLite files are ordinary assets.
//!
//! # Files
//!
//! This file holds the options, the report and the pipeline (the workers,
//! their channel, the transaction); `walk` plans a directory, `never_catalogs`
//! keeps catalogs out, `deflate` holds the encoders, and `write` inserts the
//! blobs and the version.

use super::SqliteResult;
use super::compression::{BrotliQuality, GzipLevel, MIN_BROTLI_SAVING, MIN_GZIP_SAVING};
use super::digest::xxh3_digest;
use super::pieces::{self, Coding};
use super::rows::{Identity, Skipped};
use super::{CATALOG_HEADER_LEN, Catalog, Encoding, content_type, is_catalog_header};
use crate::error::{Error, Result};
use crate::file_id::FileId;
use crate::units::unix_now;
use flate2::{Compression, Crc, write::DeflateEncoder};
use globset::{Glob, GlobSet, GlobSetBuilder};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Instant;

mod deflate;
mod never_catalogs;
mod walk;
mod write;

use deflate::Deflater;
use never_catalogs::{foreign_catalog_reason, refuse_catalog};
use walk::check_paths;
use write::{Blobs, Collected, replace_files, write_links, write_version};

pub(crate) use never_catalogs::CatalogFiles;
pub(super) use walk::build_excludes;
pub(crate) use walk::plan_dir;

/// Default `--max-file-size`: 4 GiB. Files of `--chunked-from` bytes or
/// more are read a chunk at a time, so the limit is about disk, not
/// memory.
pub(crate) const DEFAULT_MAX_FILE_SIZE: u64 = 4 << 30;

/// Where a file's bytes come from.
#[derive(Debug, Clone)]
pub enum Source {
    Disk(PathBuf),
    Memory(Arc<[u8]>),
    /// Read from a stream (an archive entry): owned by the entry alone, and
    /// dropped once hashed and compressed.
    Read(Vec<u8>),
    /// A big file read from a stream, copied to a temporary file that
    /// goes away with the last clone (see [`super::chunks`]).
    Spooled(Arc<tempfile::TempPath>),
}

/// One file to publish, with its `/`-separated path inside the version.
#[derive(Debug, Clone)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
    pub source: Source,
}

/// The files a directory would publish.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub files: Vec<FileEntry>,
    pub skipped: Vec<Skipped>,
}

/// How to publish.
#[derive(Debug, Clone)]
pub struct Options {
    /// Gzip level.
    pub level: GzipLevel,
    /// Brotli quality; quality 0 stores no brotli streams.
    pub brotli_quality: BrotliQuality,
    /// Replace an existing version atomically instead of refusing.
    pub force: bool,
    /// Do all the work, then roll back.
    pub dry_run: bool,
    /// Worker threads; 0 means one per core.
    pub jobs: usize,
    /// Largest file accepted, in bytes.
    pub max_file_size: u64,
    /// Files of this size or more are stored in chunks (`chunks`).
    pub chunked_from: u64,
    /// Read the references of scripts, stylesheets and pages (`refs`).
    pub check: bool,
    /// Refuse the version when a reference is missing, in another case
    /// or leaves it (`--strict`).
    pub strict: bool,
    /// The dist-tag to point at the version (`--tag`); None moves `latest`
    /// only to a newest release (see [`super::tags`]).
    pub tag: Option<String>,
    /// Refuse the version when its root `package.json` names another
    /// package or version ([`Error::ManifestDisagrees`]) instead of
    /// warning: an upload names both in its URL, and a mismatch there is
    /// a mistake in the CI job, not a choice.
    pub manifest_must_agree: bool,
    /// The audit row of this publish (an upload's), written in the
    /// publish's own transaction; its action and target are set here.
    pub audit: Option<super::audit::Entry>,
    /// Make the deltas of the version's files against their predecessors
    /// (`super::make_deltas`); `--no-deltas` turns it off.
    pub deltas: bool,
    /// New content for some of the version's files, made once its rows
    /// are written and before the commit ([`Rewrite`]); `--importmap`
    /// writes the import map into its pages so.
    pub rewrite: Option<Rewrite>,
}

/// Files of a version given new content inside its publish: called with
/// the catalog, whose reads see this publish's rows before anyone else
/// can, and the version just written, it returns the new bytes of each
/// file to change, by path. The files are then stored as any published
/// file is, the version's totals follow, and the references of each are
/// read again; an error refuses the version, leaving the catalog as it
/// was. The publish knows nothing of why a file changes, so a layer
/// above the catalog (the import map) can change it.
#[derive(Clone)]
pub struct Rewrite(pub(crate) Arc<RewriteFn>);

/// What a [`Rewrite`] calls.
pub(crate) type RewriteFn =
    dyn Fn(&Catalog, &super::rows::VersionRow) -> Result<Rewritten> + Send + Sync;

/// The new bytes of files of a version, by path: what a [`Rewrite`]
/// returns.
pub(crate) type Rewritten = Vec<(String, Vec<u8>)>;

impl std::fmt::Debug for Rewrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rewrite")
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            level: GzipLevel::DEFAULT,
            brotli_quality: BrotliQuality::DEFAULT,
            force: false,
            dry_run: false,
            jobs: 0,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            chunked_from: super::chunks::CHUNKED_FROM,
            check: true,
            strict: false,
            tag: None,
            manifest_must_agree: false,
            audit: None,
            deltas: true,
            rewrite: None,
        }
    }
}

/// What a publish did (or, dry, would do).
///
/// Every file of the version falls in exactly one of three groups, so the
/// groups' counts and bytes add up to the version's.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub package: String,
    pub version: String,
    pub file_count: u64,
    pub raw_bytes: u64,
    /// Stored bytes of the version's files (each blob counted per file).
    pub stored_bytes: u64,
    /// Files whose content this publish added to the catalog; their
    /// `stored_bytes` is what the catalog grew by.
    pub new_content: Group,
    /// Files whose content the catalog held before this publish.
    pub(crate) already_stored: Group,
    /// Files with the same content as another file of this version that
    /// is new to the catalog: stored once, with that file.
    pub(crate) repeated_in_version: Group,
    /// The brotli streams this publish added, against the gzip streams of
    /// the same files.
    pub(crate) brotli: BrotliGroup,
    /// The deltas this publish made against the version's predecessors
    /// (`super::make_deltas`); None with `--no-deltas`.
    pub(crate) deltas: Option<super::make_deltas::Made>,
    /// Whether the version's references resolve inside it (`ccc
    /// check`'s report); None with `--no-check`.
    pub(crate) references: Option<crate::refs::check::Report>,
    /// The new content stored as it is, in chunks (`--chunked-from`): a
    /// part of `new_content`.
    pub(crate) chunked: Group,
    /// Whether an existing version was replaced.
    pub replaced: bool,
    /// The dist-tags that name the version once published, `latest` first
    /// when it resolves to it.
    pub tags: Vec<String>,
    pub dry_run: bool,
    pub elapsed_ms: u64,
    pub skipped: Vec<Skipped>,
    /// The top folder of an archive that was left out of every path, as
    /// npm reads a tarball (`package`, `react`); None for a directory and
    /// for an archive with nothing stripped.
    pub stripped_folder: Option<String>,
    /// What looks like a mistake, published all the same ([`Warning`]).
    pub(crate) warnings: Vec<Warning>,
}

/// Something about a publish that is usually a mistake; the version is
/// published all the same (a script may mean it), and the words say what
/// to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Warning {
    /// Most files are under a `node_modules/` folder: the project folder
    /// was published instead of its build (`dist/`).
    NodeModules {
        /// Files under `node_modules/`, and in the whole version.
        node_modules_file_count: u64,
        file_count: u64,
    },
    /// A new package whose name differs from a package of the catalog
    /// only in case (`jsonstream` beside `JSONStream`): two packages, as
    /// names and URLs are case-sensitive.
    CaseClash { existing: String },
    /// The root `package.json` names another package or version than the
    /// one published.
    ManifestDisagrees {
        /// Its `name` and `version`, as written (None when absent).
        name: Option<String>,
        version: Option<String>,
    },
}

/// A publish's mistakes that [`Warning`] names: judged from every path of
/// the version, its root `package.json`, and the catalog's other names.
fn warnings(
    tx: &Connection,
    (package, version): &Identity,
    collected: &Collected,
) -> rusqlite::Result<Vec<Warning>> {
    let mut out = Vec::new();
    let file_count = collected.rows.len() as u64;
    let node_modules_file_count = collected
        .rows
        .iter()
        .filter(|row| row.0.split('/').any(|segment| segment == "node_modules"))
        .count() as u64;
    if node_modules_file_count * 2 > file_count {
        out.push(Warning::NodeModules {
            node_modules_file_count,
            file_count,
        });
    }
    let known: bool = tx
        .prepare_cached("SELECT 1 FROM packages WHERE name = ?1")?
        .exists([package])?;
    if !known {
        let existing: Option<String> = tx
            .query_row(
                "SELECT name FROM packages WHERE name = ?1 COLLATE NOCASE AND name <> ?1
                  ORDER BY name LIMIT 1",
                [package],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(existing) = existing {
            out.push(Warning::CaseClash { existing });
        }
    }
    if let Some(manifest) = collected
        .manifest
        .as_deref()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
    {
        let name = manifest["name"].as_str().map(String::from);
        let declared = manifest["version"].as_str().map(String::from);
        let name_differs = name.as_ref().is_some_and(|n| n != package);
        let version_differs = declared.as_ref().is_some_and(|v| {
            semver::Version::parse(v.trim().trim_start_matches(['v', '=']))
                .map_or(true, |v| v != *version)
        });
        if name_differs || version_differs {
            out.push(Warning::ManifestDisagrees {
                name,
                version: declared,
            });
        }
    }
    Ok(out)
}

/// A group of a publish's files: how many, their size, and the stored size
/// of their content (counted once per file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Group {
    pub file_count: u64,
    pub raw_bytes: u64,
    pub stored_bytes: u64,
}

impl Group {
    fn add(&mut self, raw_bytes: u64, stored_bytes: u64) {
        self.file_count += 1;
        self.raw_bytes += raw_bytes;
        self.stored_bytes += stored_bytes;
    }

    /// Takes a file [`Group::add`] added out again.
    fn remove(&mut self, raw_bytes: u64, stored_bytes: u64) {
        self.file_count = self.file_count.saturating_sub(1);
        self.raw_bytes = self.raw_bytes.saturating_sub(raw_bytes);
        self.stored_bytes = self.stored_bytes.saturating_sub(stored_bytes);
    }
}

/// The new content of a publish that also got a brotli stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BrotliGroup {
    /// New blobs with a brotli stream.
    pub blob_count: u64,
    /// Their original size.
    pub raw_bytes: u64,
    /// Their gzip streams.
    pub gzip_bytes: u64,
    /// Their brotli streams: what a client that accepts `br` is sent.
    pub brotli_bytes: u64,
}

/// Progress callbacks; the CLI draws a bar, library users may ignore them.
pub trait Progress: Sync {
    /// The walk found its `files`-th file; `bytes` found so far.
    fn scanned(&self, _files: u64, _bytes: u64) {}
    /// Work starts on `files` files of `bytes` bytes in all.
    fn start(&self, _files: u64, _bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
    /// The deltas: `done` of `total` pairs coded.
    fn deltas(&self, _done: u64, _total: u64) {}
}

/// Progress that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What a worker hands back for one file.
struct Processed {
    path: String,
    sha256: [u8; 32],
    raw_size: u64,
    content: Content,
    /// What the file references, read while its bytes were in memory
    /// (`refs`); resolved once every path of the version is known. None
    /// for a file not read for references.
    references: Option<crate::refs::Extracted>,
    /// The bytes of the version's `package.json`, when this file is it.
    manifest: Option<Vec<u8>>,
}

/// Where a file's content comes from.
enum Content {
    /// New to the catalog, compressed by this worker.
    New(NewBlob),
    /// New to the catalog, and big: stored in chunks by the writer, read
    /// again from its source (see [`super::chunks`]).
    NewChunked(Source),
    /// Already in the catalog: the blob's id and stored size.
    Stored(i64, u64),
    /// New, but another file of this publish carries (or carried) it.
    Repeated,
}

struct NewBlob {
    encoding: Encoding,
    body: Vec<u8>,
    /// The digests of `body`: sha256, and XXH3-128, which the server checks.
    stored_sha256: [u8; 32],
    stored_xxh3: [u8; 16],
    /// The XXH3-128 of each piece of `body`, when longer than one
    /// (`pieces`).
    pieces: Option<Vec<u8>>,
    /// A brotli stream of a gzip blob, when it is worth keeping.
    brotli: Option<BrotliStream>,
}

struct BrotliStream {
    body: Vec<u8>,
    stored_sha256: [u8; 32],
    stored_xxh3: [u8; 16],
    /// As [`NewBlob::pieces`].
    pieces: Option<Vec<u8>>,
}

/// Which [`Report`] group a file counts in.
#[derive(Clone, Copy)]
enum Kind {
    New,
    Stored,
    Repeated,
}

/// One file of the version: path, sha256, raw size, its group, and the
/// blob's id and stored size once known.
type FileRow = (String, [u8; 32], u64, Kind, Option<(i64, u64)>);

/// Files that arrive while a publish runs: an archive, read front to back.
///
/// The function runs on a thread of its own and hands each file to the
/// [`Sink`] as soon as it is read, so that the workers hash and compress one
/// file while the next is read; memory holds the few files in flight, never
/// the archive. It returns what it left out.
pub(crate) type Stream<'a> = Box<dyn FnOnce(&Sink<'_>) -> Result<Streamed> + Send + 'a>;

/// What a [`Stream`] read besides its files.
#[derive(Debug, Default)]
pub(crate) struct Streamed {
    pub skipped: Vec<Skipped>,
    /// The archive's top folder, stripped from every path (see
    /// [`super::archive`]); None when there was none.
    pub stripped_folder: Option<String>,
}

/// Where a [`Stream`] hands over what it reads.
pub(crate) struct Sink<'a> {
    files: mpsc::SyncSender<FileEntry>,
    named: &'a OnceLock<Identity>,
}

impl<'a> Sink<'a> {
    /// A sink sending files to `files` and the identity to `named`: for a
    /// reader of an archive other than publish (`ccc check`).
    pub(crate) fn new(
        files: mpsc::SyncSender<FileEntry>,
        named: &'a OnceLock<Identity>,
    ) -> Sink<'a> {
        Sink { files, named }
    }

    /// Hands a file to the workers. Fails once the publish has stopped (an
    /// error elsewhere); the stream then returns that error.
    pub(crate) fn send(&self, file: FileEntry) -> Result<()> {
        self.files
            .send(file)
            .map_err(|_| Error::Internal("the publish stopped reading".into()))
    }

    /// The package and version the files name (their package.json), as
    /// soon as they are read: an existing version is refused then, not
    /// once the whole stream has been read. The first one named counts.
    pub(crate) fn named(&self, identity: Identity) {
        let _ = self.named.set(identity);
    }
}

/// Publishes `files` as `package@version` into `catalog`.
pub fn publish(
    catalog: &mut Catalog,
    package: &str,
    version: &semver::Version,
    files: Vec<FileEntry>,
    skipped: Vec<Skipped>,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report> {
    check_paths(&files)?;
    let identity = (package.to_string(), version.clone());
    run(
        catalog,
        Some(identity),
        Input::Listed(files, skipped),
        options,
        progress,
    )
}

/// Publishes the files of `stream` into `catalog`, as `identity` or, when
/// that is None, as the package and version the stream names
/// ([`Sink::named`]). The stream checks its own paths (see
/// [`super::archive`]). The version's existence is checked before the
/// work when `identity` is given, else as soon as the stream names it.
pub(crate) fn publish_stream(
    catalog: &mut Catalog,
    identity: Option<Identity>,
    stream: Stream<'_>,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report> {
    run(
        catalog,
        identity,
        Input::Streamed(stream),
        options,
        progress,
    )
}

/// The files of a publish, as [`run`] gets them.
enum Input<'a> {
    /// Listed before the publish starts (a directory walk), with what the
    /// listing left out.
    Listed(Vec<FileEntry>, Vec<Skipped>),
    Streamed(Stream<'a>),
}

/// Where workers take their next file from.
enum Feed<'a> {
    Listed {
        files: &'a [FileEntry],
        next: AtomicUsize,
    },
    /// The receiving end of a [`Stream`]'s channel; taken out (closing the
    /// channel, so that the stream's next `send` fails) when the publish
    /// stops early.
    Streamed(Mutex<Option<mpsc::Receiver<FileEntry>>>),
}

impl Feed<'_> {
    fn next(&self) -> Option<std::borrow::Cow<'_, FileEntry>> {
        match self {
            Feed::Listed { files, next } => files
                .get(next.fetch_add(1, Ordering::Relaxed))
                .map(std::borrow::Cow::Borrowed),
            Feed::Streamed(rx) => {
                let rx = rx.lock().ok()?;
                rx.as_ref()?.recv().ok().map(std::borrow::Cow::Owned)
            }
        }
    }

    fn close(&self) {
        if let Feed::Streamed(rx) = self
            && let Ok(mut rx) = rx.lock()
        {
            rx.take();
        }
    }
}

/// The id of `package@version` when it exists; an error when it does and
/// `force` does not allow replacing it, and, even with `force`, when
/// another version differs from it only in build metadata: semver leaves
/// build metadata out of precedence, so `1.0.0+build.5` is `1.0.0` again,
/// and npm refuses it the same way.
fn existing_version(
    tx: &Connection,
    (package, version): &Identity,
    force: bool,
) -> rusqlite::Result<std::result::Result<Option<i64>, Error>> {
    let wanted = version.to_string();
    let mut stmt = tx.prepare_cached(
        "SELECT v.version FROM versions v JOIN packages p ON p.id = v.package_id
          WHERE p.name = ?1",
    )?;
    let twin = stmt
        .query_map([package], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?
        .into_iter()
        .find(|other| {
            *other != wanted
                && semver::Version::parse(other)
                    .is_ok_and(|other| other.cmp_precedence(version).is_eq())
        });
    if let Some(existing) = twin {
        return Ok(Err(Error::BuildMetadataTwin {
            package: package.clone(),
            version: wanted,
            existing,
        }));
    }
    let existing: Option<i64> = tx
        .query_row(
            "SELECT v.id FROM versions v JOIN packages p ON p.id = v.package_id
              WHERE p.name = ?1 AND v.version = ?2",
            params![package, version.to_string()],
            |r| r.get(0),
        )
        .optional()?;
    if existing.is_some() && !force {
        return Ok(Err(Error::VersionExists {
            package: package.clone(),
            version: version.to_string(),
        }));
    }
    Ok(Ok(existing))
}

/// The pipeline of the module doc, for listed and streamed files alike:
/// workers hash and compress while this thread stores each new blob, then
/// the version's rows are written and committed, all in one write
/// transaction.
fn run(
    catalog: &mut Catalog,
    identity: Option<Identity>,
    input: Input<'_>,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report> {
    let started = Instant::now();
    if let Some((package, _)) = &identity {
        crate::spec::package_name(package)?;
    }
    if let Some(tag) = &options.tag {
        crate::spec::tag_name(tag)?;
    }
    let work = Work {
        jobs: match options.jobs {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        },
        reader_path: catalog.is_file().then(|| catalog.path().to_path_buf()),
        level: Compression::new(options.level.get()),
        brotli_quality: options.brotli_quality.get(),
        max_file_size: options.max_file_size,
        chunked_from: options.chunked_from,
        check: options.check,
    };
    let path = catalog.path().to_path_buf();
    let tx = catalog.write_transaction()?;

    // Known now: refuse an existing version before any work; else as soon
    // as the stream names it. `None` until checked.
    let mut existing = match &identity {
        Some(identity) => Some(existing_version(&tx, identity, options.force).at(&path)??),
        None => None,
    };
    let (files, mut skipped, stream) = match input {
        Input::Listed(files, skipped) => (files, skipped, None),
        Input::Streamed(stream) => (Vec::new(), Vec::new(), Some(stream)),
    };
    // A stream's totals are not known up front: 0 says so.
    progress.start(files.len() as u64, files.iter().map(|f| f.size).sum());
    let named = OnceLock::new();
    let mut blobs = Blobs::new(&tx, &path, options.dry_run, options.brotli_quality)?;
    let streamed = compress_all(&work, &files, stream, &named, &mut |batch| {
        for done in batch {
            progress.advance(done.raw_size);
            blobs.add(done)?;
        }
        if existing.is_none()
            && let Some(identity) = named.get()
        {
            existing = Some(existing_version(&tx, identity, options.force).at(&path)??);
        }
        Ok(())
    })
    .map_err(|e| {
        e.naming_version(|| {
            let (package, version) = identity.as_ref().or(named.get())?;
            Some(format!("{package}@{version}"))
        })
    })?;
    let mut collected = blobs.finish();
    let mut stripped_folder = None;
    if let Some(streamed) = streamed {
        skipped = streamed.skipped;
        stripped_folder = streamed.stripped_folder;
    }
    let identity = identity.or_else(|| named.into_inner()).ok_or_else(|| {
        Error::Internal("nothing named the package and version to publish as".into())
    })?;
    let existing = match existing {
        Some(existing) => existing,
        None => existing_version(&tx, &identity, options.force).at(&path)??,
    };
    crate::spec::package_name(&identity.0)?;
    progress.finish();
    crate::interrupt::check()?;
    // A package a site serves is checked at the site's root, where root
    // paths name its own files.
    let mount = match catalog.serves_as_site(&identity.0)? {
        true => crate::refs::Mount::SiteRoot,
        false => crate::refs::Mount::Assets,
    };
    let references = options
        .check
        .then(|| check_references(&identity, &mut collected, options.strict, mount))
        .transpose()?;

    let warnings = warnings(&tx, &identity, &collected).at(&path)?;
    if options.manifest_must_agree {
        for warning in &warnings {
            if let Warning::ManifestDisagrees { name, version } = warning {
                return Err(Error::ManifestDisagrees {
                    package: identity.0.clone(),
                    version: identity.1.to_string(),
                    name: name.clone(),
                    declared: version.clone(),
                });
            }
        }
    }
    // What `latest` named before this publish: a predecessor.
    let latest_before = match options.deltas {
        true => catalog
            .resolve(&identity.0, &crate::spec::Selector::Latest)
            .ok()
            .map(|v| v.id),
        false => None,
    };
    let mut new_blobs: HashSet<i64> = collected.new_blobs.values().map(|(id, _)| *id).collect();
    let mut written =
        write_version(&tx, &identity, existing, collected, options.tag.as_deref()).at(&path)?;
    if let Some(checked) = &references {
        write_links(&tx, written.version_id, &checked.links).at(&path)?;
    }
    if let Some(Rewrite(rewrite)) = &options.rewrite {
        let row = catalog
            .versions(&identity.0)?
            .into_iter()
            .find(|v| v.id == written.version_id)
            .ok_or_else(|| Error::Internal("the version being published is not readable".into()))?;
        let files = rewrite(catalog, &row)?;
        crate::interrupt::check()?;
        let changed = replace_files(&tx, &path, &mut written, &mut new_blobs, files, options)?;
        if references.is_some() && !changed.is_empty() {
            rewrite_links(&tx, catalog, &identity, &written, changed, mount)?;
        }
    }
    if let Some(entry) = &options.audit {
        let mut entry = entry.clone();
        entry.action = if existing.is_some() {
            "replace"
        } else {
            "publish"
        }
        .into();
        entry.target = format!("{}@{}", identity.0, identity.1);
        entry.detail = format!("{} files, {} bytes", written.file_count, written.raw_bytes);
        super::audit::record(&tx, &entry).at(&path)?;
    }
    let deltas = match options.deltas {
        true => {
            use super::make_deltas;
            let (package, version) = &identity;
            let against = make_deltas::predecessors(
                catalog,
                package,
                written.version_id,
                version,
                latest_before,
            )?;
            let tasks = make_deltas::plan(catalog, written.version_id, &against, &new_blobs)?;
            let levels = crate::delta::PUBLISH_LEVELS;
            let progress = |done, total| progress.deltas(done, total);
            Some(make_deltas::make(
                catalog, tasks, work.jobs, levels, &against, &progress,
            )?)
        }
        false => None,
    };
    // The last moment to stop: after the commit the version is published.
    crate::interrupt::check()?;
    if options.dry_run {
        tx.rollback().at(&path)?;
    } else {
        super::changed(&tx).at(&path)?;
        crate::interrupt::commit(|| tx.commit()).at(&path)?;
    }
    Ok(Report {
        package: identity.0,
        version: identity.1.to_string(),
        file_count: written.file_count,
        raw_bytes: written.raw_bytes,
        stored_bytes: written.stored_bytes,
        new_content: written.new_content,
        already_stored: written.already_stored,
        repeated_in_version: written.repeated_in_version,
        brotli: written.brotli,
        deltas,
        chunked: written.chunked,
        replaced: existing.is_some(),
        tags: written.tags,
        dry_run: options.dry_run,
        elapsed_ms: started.elapsed().as_millis() as u64,
        skipped,
        stripped_folder,
        references,
        warnings,
    })
}

/// Reads the references of files a [`Rewrite`] changed again, from
/// their new bytes, and stores them in place of those of their old.
fn rewrite_links(
    tx: &Connection,
    catalog: &Catalog,
    (package, version): &Identity,
    written: &write::Written,
    changed: Vec<(String, Vec<u8>)>,
    mount: crate::refs::Mount,
) -> Result<()> {
    let path = catalog.path();
    let read: Vec<(String, crate::refs::Extracted)> = changed
        .into_iter()
        .filter(|(file, _)| crate::refs::check::is_read(file))
        .map(|(file, bytes)| {
            let extracted = crate::refs::extract(&file, &bytes);
            (file, extracted)
        })
        .collect();
    let mut delete = tx
        .prepare_cached("DELETE FROM refs WHERE version_id = ?1 AND path = ?2")
        .at(path)?;
    for (file, _) in &read {
        delete.execute(params![written.version_id, file]).at(path)?;
    }
    let paths = written.rows.iter().map(|row| row.0.clone()).collect();
    let manifest = catalog.manifest(written.version_id)?;
    let report = crate::refs::check::resolve_all(
        package,
        &version.to_string(),
        paths,
        read,
        manifest,
        mount,
    );
    write_links(tx, written.version_id, &report.links).at(path)?;
    Ok(())
}

/// Resolves the references the workers read against every path of the
/// version; with `strict`, a reference that does not resolve refuses it
/// (the caller's transaction then rolls back).
fn check_references(
    (package, version): &Identity,
    collected: &mut Collected,
    strict: bool,
    mount: crate::refs::Mount,
) -> Result<crate::refs::check::Report> {
    let paths: Vec<String> = collected.rows.iter().map(|row| row.0.clone()).collect();
    let read = std::mem::take(&mut collected.references);
    let manifest = collected.manifest.clone();
    let report = crate::refs::check::resolve_all(
        package,
        &version.to_string(),
        paths,
        read,
        manifest,
        mount,
    );
    if strict && let Some(first) = report.problems.first() {
        return Err(Error::BrokenReferences {
            package: package.clone(),
            version: version.to_string(),
            count: report.problems.len(),
            first: first.to_string(),
            root_paths: report.root_path_hint().is_some(),
        });
    }
    Ok(report)
}

/// What the workers need to know, the same for every file.
struct Work {
    jobs: usize,
    /// The catalog file, which each worker opens to look up whether a
    /// content is stored; None for a catalog that is not a file yet.
    reader_path: Option<PathBuf>,
    level: Compression,
    brotli_quality: u32,
    max_file_size: u64,
    chunked_from: u64,
    /// Read each file's references (`Options::check`).
    check: bool,
}

/// Hashes and compresses every file on [`Work::jobs`] workers, reading a
/// stream on a thread of its own, and hands what they finish to `collect`
/// on this thread. Returns what a stream read besides its files.
fn compress_all(
    work: &Work,
    files: &[FileEntry],
    stream: Option<Stream<'_>>,
    named: &OnceLock<Identity>,
    collect: &mut dyn FnMut(Vec<Processed>) -> Result<()>,
) -> Result<Option<Streamed>> {
    let cancel = AtomicBool::new(false);
    let claimed = Mutex::new(HashSet::<[u8; 32]>::new());
    let (stream, feed) = match stream {
        None => (
            None,
            Feed::Listed {
                files,
                next: AtomicUsize::new(0),
            },
        ),
        // As many files read ahead as there are workers: enough to keep
        // them busy, few enough to keep memory flat.
        Some(stream) => {
            let (tx, rx) = mpsc::sync_channel::<FileEntry>(work.jobs);
            (Some((stream, tx)), Feed::Streamed(Mutex::new(Some(rx))))
        }
    };
    std::thread::scope(|scope| {
        let reading = match stream {
            Some((stream, tx)) => Some(
                std::thread::Builder::new()
                    .name("publish-read".into())
                    .spawn_scoped(scope, move || stream(&Sink { files: tx, named }))
                    .map_err(|e| Error::system("cannot start the publish-read thread", e))?,
            ),
            None => None,
        };
        // Room for a couple of finished files per worker keeps workers busy
        // while this thread writes, without buffering the tree. Files whose
        // content is already stored travel in batches: one message (and one
        // wake-up of this thread) per file costs as much as hashing a small
        // file.
        let (tx_done, rx_done) = mpsc::sync_channel::<Result<Vec<Processed>>>(work.jobs * 2);
        let mut workers = Vec::with_capacity(work.jobs);
        for worker in 0..work.jobs {
            let tx_done = tx_done.clone();
            let (feed, cancel, claimed) = (&feed, &cancel, &claimed);
            let handle = std::thread::Builder::new()
                .name(format!("publish-{worker}"))
                .spawn_scoped(scope, move || work.worker(feed, cancel, claimed, tx_done))
                .map_err(|e| {
                    Error::system(format!("cannot start the publish-{worker} thread"), e)
                })?;
            workers.push(handle);
        }
        drop(tx_done);
        let collected = rx_done.iter().try_for_each(|batch| collect(batch?));
        if collected.is_err() {
            // Stop the workers, unblock those waiting to send, and a stream
            // waiting to hand over a file.
            cancel.store(true, Ordering::Relaxed);
            feed.close();
        }
        drop(rx_done);
        // A worker that panicked is a bug, reported as one instead of
        // taking the process down with it; its files never arrived, so
        // nothing is committed.
        let panicked = workers
            .into_iter()
            .map(|w| w.join())
            .filter(Result::is_err)
            .count();
        let read = match reading.map(|r| r.join()) {
            None => Ok(None),
            Some(Ok(streamed)) => streamed.map(Some),
            Some(Err(_)) => Err(Error::Internal("the publish reader panicked".into())),
        };
        // The first error is the cause; a stream's own error comes after
        // the workers' (it may only say that they stopped).
        collected?;
        if panicked > 0 {
            return Err(Error::Internal(format!(
                "{panicked} publish worker(s) panicked"
            )));
        }
        read
    })
}

impl Work {
    /// One worker: takes files from `feed` until there are none, the
    /// publish is cancelled or a file fails, and sends what it made to
    /// `done`: a new blob at once, files whose content is stored in
    /// batches.
    fn worker(
        &self,
        feed: &Feed<'_>,
        cancel: &AtomicBool,
        claimed: &Mutex<HashSet<[u8; 32]>>,
        done: mpsc::SyncSender<Result<Vec<Processed>>>,
    ) {
        let reader = match self.reader_path.as_deref().map(open_reader).transpose() {
            Ok(reader) => self.reader_path.as_deref().zip(reader),
            Err(e) => {
                let _ = done.send(Err(e));
                return;
            }
        };
        // One deflate state per worker, reset for every file: a level-9
        // state is ~380 KB, and allocating one per file fragments the
        // allocator's heaps.
        let mut deflate = Deflater::new(self.level, self.brotli_quality);
        let mut batch = Vec::new();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            if let Err(e) = crate::interrupt::check() {
                let _ = done.send(Err(e));
                return;
            }
            let Some(file) = feed.next() else { break };
            let reader = reader.as_ref().map(|(path, conn)| (*path, conn));
            let sent = match process(&file, reader, claimed, &mut deflate, self) {
                Ok(new) if matches!(new.content, Content::New(_) | Content::NewChunked(_)) => {
                    done.send(Ok(vec![new]))
                }
                Ok(stored) => {
                    batch.push(stored);
                    match batch.len() >= 256 {
                        true => done.send(Ok(std::mem::take(&mut batch))),
                        false => Ok(()),
                    }
                }
                Err(e) => {
                    let _ = done.send(Err(e));
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
        if !batch.is_empty() {
            let _ = done.send(Ok(batch));
        }
    }
}

fn open_reader(path: &Path) -> Result<Connection> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .at(path)
}

/// Reads, hashes and (when the content is new) compresses one file; a big
/// one is only hashed here, and stored in chunks by the writer.
fn process(
    file: &FileEntry,
    reader: Option<(&Path, &Connection)>,
    claimed: &Mutex<HashSet<[u8; 32]>>,
    deflate: &mut Deflater,
    work: &Work,
) -> Result<Processed> {
    let max_file_size = work.max_file_size;
    let chunked = file.size >= work.chunked_from || matches!(file.source, Source::Spooled(_));
    if chunked && crate::site::rules::is_rules_file(&file.path) {
        check_big_rules_file(file)?;
    }
    if chunked {
        let (sha256, raw_size) = hash_source(file, max_file_size)?;
        let content = classify(sha256, reader, claimed, || {
            Content::NewChunked(file.source.clone())
        })?;
        return Ok(Processed {
            path: file.path.clone(),
            sha256,
            raw_size,
            content,
            // Never read whole, so never parsed.
            references: None,
            manifest: None,
        });
    }
    let owned;
    let bytes: &[u8] = match &file.source {
        Source::Disk(path) => {
            owned = read_no_follow(path, max_file_size)?;
            &owned
        }
        Source::Memory(bytes) => bytes,
        Source::Read(bytes) => bytes,
        Source::Spooled(_) => unreachable!("spooled files are chunked"),
    };
    refuse_catalog(file, bytes)?;
    // A site's rules that ccc cannot follow refuse the version (`site::rules`).
    crate::site::rules::check(&file.path, bytes)?;
    let sha256: [u8; 32] = Sha256::digest(bytes).into();
    let content = classify(sha256, reader, claimed, || {
        Content::New(deflate.compress(bytes, sha256))
    })?;
    let references = (work.check && crate::refs::check::is_read(&file.path))
        .then(|| crate::refs::extract(&file.path, bytes));
    let manifest = (file.path == "package.json").then(|| bytes.to_vec());
    Ok(Processed {
        path: file.path.clone(),
        sha256,
        raw_size: bytes.len() as u64,
        content,
        references,
        manifest,
    })
}

/// Whether content `sha256` is stored already, carried by another file of
/// this publish, or new to store (`new` makes it).
fn classify(
    sha256: [u8; 32],
    reader: Option<(&Path, &Connection)>,
    claimed: &Mutex<HashSet<[u8; 32]>>,
    new: impl FnOnce() -> Content,
) -> Result<Content> {
    let stored: Option<(i64, u64)> = match reader {
        Some((db, conn)) => conn
            .prepare_cached(concat!(
                "SELECT id, ",
                crate::stored_len!("blobs"),
                " FROM blobs WHERE sha256 = ?1"
            ))
            .and_then(|mut s| {
                s.query_row([&sha256[..]], |r| {
                    Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
                })
                .optional()
            })
            .at(db)?,
        None => None,
    };
    if let Some((id, stored)) = stored {
        return Ok(Content::Stored(id, stored));
    }
    let first_claim = claimed
        .lock()
        .map_err(|_| Error::Internal("a publish worker panicked".into()))?
        .insert(sha256);
    Ok(if first_claim {
        new()
    } else {
        Content::Repeated
    })
}

/// Checks a rules file stored in chunks (`--chunked-from` below its
/// size): read whole all the same, up to one byte past the most a rules
/// file may hold, which the check then refuses.
fn check_big_rules_file(file: &FileEntry) -> Result<()> {
    use std::io::Read;
    let (source, name) = open_source(&file.source, &file.path)?;
    let mut bytes = Vec::new();
    source
        .take(crate::site::rules::MAX_FILE_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&name, e))?;
    Ok(crate::site::rules::check(&file.path, &bytes)?)
}

/// A big file's sha256 and size, read a chunk at a time.
fn hash_source(file: &FileEntry, max_file_size: u64) -> Result<([u8; 32], u64)> {
    let (source, name) = open_source(&file.source, &file.path)?;
    let mut source = std::io::Read::take(source, max_file_size + 1);
    let mut sha = Sha256::new();
    let mut buf = vec![0; super::chunks::CHUNK_SIZE];
    let mut total = 0u64;
    loop {
        crate::interrupt::check()?;
        let n = super::chunks::read_full(&mut source, &mut buf).map_err(|e| Error::io(&name, e))?;
        if total == 0 {
            refuse_catalog(file, &buf[..n])?;
        }
        sha.update(&buf[..n]);
        total += n as u64;
        if n < buf.len() {
            break;
        }
    }
    if total > max_file_size {
        return Err(Error::bad_input(
            name,
            "file grew past --max-file-size while publishing",
        ));
    }
    Ok((sha.finalize().into(), total))
}

/// A reader of a file's bytes, and the name to give in errors: a file on
/// disk opened without following a symlink at its name.
fn open_source<'s>(
    source: &'s Source,
    path: &str,
) -> Result<(Box<dyn std::io::Read + 's>, PathBuf)> {
    Ok(match source {
        Source::Disk(path) => (Box::new(open_no_follow(path)?), path.clone()),
        Source::Spooled(temp) => {
            let file =
                std::fs::File::open(temp.as_ref()).map_err(|e| Error::io(temp.as_ref(), e))?;
            (Box::new(file), PathBuf::from(path))
        }
        Source::Memory(bytes) => (Box::new(&bytes[..]), PathBuf::from(path)),
        Source::Read(bytes) => (Box::new(&bytes[..]), PathBuf::from(path)),
    })
}

fn open_no_follow(path: &Path) -> Result<std::fs::File> {
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NOFOLLOW);
    }
    open.open(path).map_err(|e| Error::io(path, e))
}

/// Reads a file without following a symlink at its name, so a file swapped
/// for a link after the walk cannot pull in bytes from outside the tree; a
/// file that grew past the limit since the walk is refused.
fn read_no_follow(path: &Path, max_file_size: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = open_no_follow(path)?;
    let mut bytes = Vec::new();
    file.take(max_file_size + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max_file_size {
        return Err(Error::bad_input(
            path,
            "file grew past --max-file-size while publishing",
        ));
    }
    Ok(bytes)
}

/// `lines` lines of varied script, on which brotli beats gzip by more than
/// 5% (as on real bundles), for tests.
#[cfg(test)]
pub(crate) fn script_like(lines: u32) -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..lines {
        let word = ["render", "state", "props", "effect", "memo"][(i * 7 % 5) as usize];
        text.extend_from_slice(
            format!(
                "function {word}{}(a,b){{return a.{word}+b*{}}}\n",
                i % 97,
                i * 31
            )
            .as_bytes(),
        );
    }
    text
}

/// Gzips `bytes` once, keeping the raw bytes when gzip saves too little.
#[cfg(test)]
fn compress(bytes: &[u8], level: Compression) -> NewBlob {
    Deflater::new(level, 0).compress(bytes, Sha256::digest(bytes).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incompressible_bytes_stay_raw() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let raw = compress(&noise, Compression::best());
        assert_eq!(raw.encoding, Encoding::Identity);
        let digest = |bytes: &[u8]| -> [u8; 32] { Sha256::digest(bytes).into() };
        assert_eq!(raw.stored_sha256, digest(&noise));
        let text = b"function f(){return 1}\n".repeat(200);
        let blob = compress(&text, Compression::best());
        assert_eq!(blob.encoding, Encoding::Gzip);
        assert!(blob.body.len() < text.len() / 10);
        assert_eq!(
            blob.stored_sha256,
            digest(&blob.body),
            "the digest of the gzip stream, not of the file"
        );
        assert_eq!(
            compress(b"", Compression::best()).encoding,
            Encoding::Identity
        );
        // Same bytes as flate2's GzEncoder, and a reused state gives the
        // same stream again.
        let mut d = Deflater::new(Compression::best(), 0);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&text).unwrap();
        let want = gz.finish().unwrap();
        assert_eq!(d.compress(&text, digest(&text)).body, want);
        assert_eq!(
            d.compress(&noise, digest(&noise)).encoding,
            Encoding::Identity
        );
        assert_eq!(d.compress(&text, digest(&text)).body, want);
    }

    #[test]
    fn brotli_is_kept_for_text_only_when_it_beats_gzip() {
        let digest = |bytes: &[u8]| -> [u8; 32] { Sha256::digest(bytes).into() };
        // Varied text, as a bundle is: brotli beats gzip on it by more
        // than 5%.
        let text = script_like(3000);
        let blob = Deflater::new(Compression::best(), BrotliQuality::DEFAULT.get())
            .compress(&text, digest(&text));
        assert_eq!(blob.encoding, Encoding::Gzip);
        let br = blob.brotli.expect("brotli saves more than 5% on text");
        assert!((br.body.len() as f64) <= blob.body.len() as f64 * 0.95);
        assert_eq!(br.stored_sha256, digest(&br.body));
        let mut decoded = Vec::new();
        brotli::BrotliDecompress(&mut &br.body[..], &mut decoded).unwrap();
        assert_eq!(decoded, text);
        // Quality 0 is off.
        assert!(
            Deflater::new(Compression::best(), 0)
                .compress(&text, digest(&text))
                .brotli
                .is_none()
        );
        // The rule itself: kept when at least 5% smaller than the gzip.
        let d = Deflater::new(Compression::best(), BrotliQuality::DEFAULT.get());
        let len = br.body.len();
        let just_enough = (len as f64 / 0.95).ceil() as usize;
        assert_eq!(d.brotli(&text, just_enough).map(|b| b.body), Some(br.body));
        assert!(d.brotli(&text, just_enough - 1).is_none());
        assert!(d.brotli(&text, len).is_none());
    }

    #[test]
    fn a_catalog_handed_over_in_memory_is_refused() {
        let mut header = vec![0u8; 4096];
        header[..16].copy_from_slice(b"SQLite format 3\0");
        header[68..72].copy_from_slice(&crate::catalog::APPLICATION_ID.to_be_bytes());
        let file = FileEntry {
            path: "data/cdn.db".into(),
            size: header.len() as u64,
            source: Source::Memory(Arc::from(header)),
        };
        // Read whole, and hashed a chunk at a time as a big file is.
        for chunked_from in [1 << 20, 1024] {
            let work = Work {
                jobs: 1,
                reader_path: None,
                level: Compression::fast(),
                brotli_quality: 0,
                max_file_size: 1 << 20,
                chunked_from,
                check: true,
            };
            let claimed = Mutex::new(HashSet::new());
            let mut deflate = Deflater::new(Compression::fast(), 0);
            let Err(e) = process(&file, None, &claimed, &mut deflate, &work) else {
                panic!("a catalog was processed for storing");
            };
            let message = e.to_string();
            assert!(message.contains("data/cdn.db"), "{message}");
            assert!(message.contains("never published"), "{message}");
        }
    }

    #[test]
    fn a_root_rules_file_ccc_cannot_follow_is_refused() {
        let file = |path: &str, text: &str| FileEntry {
            path: path.into(),
            size: text.len() as u64,
            source: Source::Memory(Arc::from(text.as_bytes())),
        };
        let bad = "/a /b 302\n/ /fr 302 Country=fr\n";
        // Read whole, and as a file stored in chunks.
        for chunked_from in [1 << 20, 8] {
            let work = Work {
                jobs: 1,
                reader_path: None,
                level: Compression::fast(),
                brotli_quality: 0,
                max_file_size: 1 << 20,
                chunked_from,
                check: false,
            };
            let claimed = Mutex::new(HashSet::new());
            let mut deflate = Deflater::new(Compression::fast(), 0);
            let mut process = |file: &FileEntry| process(file, None, &claimed, &mut deflate, &work);
            let Err(e) = process(&file("_redirects", bad)) else {
                panic!("a _redirects with a condition was processed for storing");
            };
            assert!(
                matches!(&e, Error::SiteRules { target: None, rules } if rules.line == 2),
                "{e:?}"
            );
            let Err(e) = process(&file("_headers", "/*\n  Content-Length: 1\n")) else {
                panic!("a _headers setting Content-Length was processed for storing");
            };
            assert!(e.to_string().starts_with("_headers line 2: "), "{e}");
            assert!(process(&file("_redirects", "/a /b 302\n")).is_ok());
            assert!(process(&file("docs/_redirects", bad)).is_ok());
            assert!(process(&file("docs/_headers", "nonsense")).is_ok());
        }
    }

    #[test]
    fn paths_are_checked() {
        let f = |p: &str| FileEntry {
            path: p.into(),
            size: 0,
            source: Source::Memory(Arc::from(&b""[..])),
        };
        assert!(check_paths(&[f("a/b"), f("c d/#%+@.js")]).is_ok());
        for bad in ["", "a//b", "../x", "a/./b", "/abs"] {
            assert!(check_paths(&[f(bad)]).is_err(), "{bad}");
        }
        assert!(check_paths(&[f("a"), f("a")]).is_err());
    }
}

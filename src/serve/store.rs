//! The store: the one owner of the server's read-only catalog connection,
//! and the only one who decides what the asset cache holds.
//!
//! HTTP workers reach it through a [`Handle`]: `get` reads the cache
//! directly and only a miss becomes a call on the actor; version
//! resolutions, listings and counters are always calls. An asset comes back
//! as an `Arc` shared with the cache, its responses prepared
//! ([`Prepared`]), so no body bytes are copied between the cache and the
//! socket and no header is built per request.
//!
//! # Cache
//!
//! [`crate::serve::cache`]: workers look up without waiting for the actor
//! and record their hits in lossy buffers; the actor replays them into a
//! strict LRU order before each insertion and at every housekeeping tick,
//! and alone admits, evicts and invalidates. Bounded both by entries
//! (`--cache-capacity`, 0 turns the cache off) and by the bytes an entry
//! holds (`--cache-bytes`: bodies, names, prepared headers and the cache's
//! own index, [`Prepared::weight`]); an asset heavier than the byte budget
//! is never cached.
//! Keys are `(package, exact version, path)`; ranges are resolved before
//! the cache is consulted.
//!
//! # Every body is checked before it is used
//!
//! A body loaded from SQLite (a cache miss) is checked against its record
//! before it is cached or sent ([`AssetRecord::check`]): the bytes as
//! stored must hash to the blob's recorded `stored_sha256`, or, for a blob
//! older than that digest, decode to the recorded size and sha256 of the
//! raw file. A body that fails is neither cached nor
//! sent: the request gets a 500 and stderr names the asset
//! (`package@version/path`), its recorded sha256 and what is wrong.
//! Cached bodies are in memory and were checked when loaded, so a hit costs
//! nothing more; `bench/STORE_FAULTS.md` has what the check costs a miss.
//!
//! # Staleness
//!
//! Versions are immutable, but `ccc rm`, `ccc gc` or `publish --force` in
//! another process can delete or replace one. Every
//! [`STALENESS_CHECK`] the actor reads SQLite's `data_version`; when it
//! moved, it drops every cached entry whose version row is gone (a forced
//! republish gets a new row id, so it is caught too), which takes it out of
//! the workers' view at once. A deleted asset stops being served within
//! that interval.
//!
//! # One read transaction per busy run
//!
//! In WAL mode every statement outside a transaction begins and ends its
//! own read transaction: shared locks on `cdn.db-shm` (fcntl calls) and a
//! look at the log's index to begin, the same undone to end. Measured on a
//! mostly-miss load that was about a quarter of the time SQLite spent on a
//! lookup (`bench/RPS.md`). So when the actor takes a message while others
//! wait behind it (a *busy run*, see [`crate::actor`]), the catalog reads of
//! that run share one deferred transaction: `BEGIN` before the run's first
//! read, `COMMIT` when the inbox is empty. A lone message reads outside a
//! transaction, as every read did before, so an idle server pays nothing
//! more.
//!
//! A transaction sees the catalog as it was when its first read began, so
//! a shared one is also ended, and the next read begins another:
//!
//! - after [`SHARED_READS`] reads or [`SHARED_SPAN`], whichever comes
//!   first, so that a server kept busy for minutes still sees other
//!   processes' commits within a couple of milliseconds (plus the one
//!   message being handled). Shared by 64 reads, the begin/end pair costs
//!   each under half a percent of its SQLite time, so a longer run buys
//!   nothing; 64 misses take 1.5-2 ms of the actor here, so under load the
//!   two bounds agree. A short bound matters for writers too: a checkpoint
//!   cannot restart the write-ahead log while a reader's snapshot still
//!   needs its frames.
//! - before the staleness check, which reads `data_version` (it only moves
//!   between transactions) and asks whether cached versions still exist;
//! - before the connection is let go of (a replaced catalog file, or the
//!   store stopping);
//! - after any failed request (`SQLITE_BUSY`, a damaged page, an I/O
//!   error, a body that fails its check): ROLLBACK if COMMIT fails; the
//!   request gets today's error and the next read starts afresh.
//!
//! The store never writes: its connection is `query_only`, and a read-only
//! open migrates nothing, so no write can meet a read transaction.
//!
//! # The catalog file itself: replaced or deleted
//!
//! The store serves the catalog that its path (`--db`) names. At every
//! staleness check, and before every SQLite query, it compares the file the
//! path names (device and inode, following symlinks) with the one it has
//! open:
//!
//! - **Replaced** (`mv new.db cdn.db`, or a symlink switched): if the new
//!   file is a catalog this ccc can serve, the store closes the old
//!   connection, drops the whole cache and serves the new file from then
//!   on, and logs a note. Until the next check (at most [`STALENESS_CHECK`])
//!   hits may still answer from the old catalog, whose bytes are right for
//!   it; no query ever reads the old file once the path names another.
//! - **Replaced by something that is not a servable catalog** (not SQLite,
//!   not a catalog, a newer schema): the store keeps serving the previous
//!   catalog, which it still holds open, logs an error once for that file,
//!   and `/healthz` says `degraded` with the reason. It retries at every
//!   check, so fixing the file at the path is enough.
//! - **Deleted** (or unreadable): the store keeps serving from the open file,
//!   whose bytes are still on disk until it closes them, logs a warning
//!   once, and `/healthz` says `degraded`. A catalog put back at the path
//!   is picked up like a replacement.
//! - If the old catalog has been let go and the new one then cannot be
//!   opened (it changed again in between, say), there is nothing to answer
//!   from: catalog requests get 503 and `/healthz` says `unavailable` until
//!   a catalog can be opened at the path.
//!
//! Replace the file with a rename, never by writing over it in place
//! (`cp new.db cdn.db` changes pages under every open reader), and only
//! once the new catalog's writer has finished (no `new.db-wal` left).
//!
//! The old connection is closed before the new file is opened, not after:
//! both files use the same `cdn.db-shm` by name, and closing one of two
//! handles on it would drop the locks this process holds through the other.
//! That is why a replacement is first checked with [`Catalog::check_file`],
//! which touches nothing but the file. Closing the old connection leaves
//! the side files alone: SQLite does not fold the log in on close once the
//! path no longer names the connection's file, and here the log is the new
//! file's.

use crate::actor::{self, Actor, Reply};
use crate::catalog::query::{AssetRecord, PackageRow, PackageVersions, Page, VersionFiles};
use crate::catalog::{Access, Catalog, Encoding};
use crate::causal;
use crate::error::{Error, Result};
use crate::log;
use crate::serve::cache::{self, Cache, Lookup, Reader};
use crate::serve::prepared::Prepared;
use crate::spec::Selector;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the actor checks whether another process changed the catalog
/// (and replays the workers' cache hits when no miss did).
pub const STALENESS_CHECK: Duration = Duration::from_millis(250);

/// Most catalog reads that share one read transaction (module doc).
pub const SHARED_READS: u32 = 64;
/// Longest a read transaction is shared, from its first read (module doc).
pub const SHARED_SPAN: Duration = Duration::from_millis(2);

/// Prepared statements the store's connection keeps: its queries (lookup,
/// resolution, listings, dist-tags) and the transaction's `BEGIN` and
/// `COMMIT`, with room to spare; rusqlite's default of 16 is about that many.
const CACHED_STATEMENTS: usize = 32;

/// Default `--cache-capacity`: the hot set of a few busy sites.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;
/// Default `--cache-bytes`, as `--help` shows it (parsed like the flag).
pub const DEFAULT_CACHE_BYTES: &str = "64MiB";

/// How the store is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub db: PathBuf,
    pub cache_entries: usize,
    pub cache_bytes: u64,
    /// Print a line to stderr for every cache miss.
    pub log_misses: bool,
}

/// Everything the server needs to answer for one asset, body included:
/// the store's own type, made from the catalog's row once the body passed
/// its check, so the response side never names the catalog.
#[derive(Debug)]
pub struct StoredAsset {
    pub version_id: i64,
    pub body: Arc<[u8]>,
    /// How `body` is coded: gzip, or identity (the raw bytes).
    pub encoding: Encoding,
    /// The original file's digest.
    pub sha256: [u8; 32],
    /// The brotli stream of a gzip body, when the catalog holds one.
    pub brotli: Option<Arc<[u8]>>,
    pub content_type: String,
    pub raw_size: u64,
    pub published_at: i64,
}

impl From<AssetRecord> for StoredAsset {
    fn from(row: AssetRecord) -> StoredAsset {
        StoredAsset {
            version_id: row.version_id,
            body: row.body,
            encoding: row.encoding,
            sha256: row.sha256,
            brotli: row.brotli.map(|br| br.body),
            content_type: row.content_type,
            raw_size: row.raw_size,
            published_at: row.published_at,
        }
    }
}

impl StoredAsset {
    /// The stored bytes of one coding of the asset, if held.
    pub fn body(&self, encoding: Encoding) -> Option<&Arc<[u8]>> {
        match encoding {
            Encoding::Brotli => self.brotli.as_ref(),
            stored if stored == self.encoding => Some(&self.body),
            _ => None,
        }
    }
}

/// A cache key: one file of one exact version. The three names share one
/// allocation (a miss makes one key, and a cached asset keeps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetKey {
    /// Package, version and path, one after the other.
    names: Box<str>,
    /// Where the version starts in `names`, and where the path does.
    version_at: usize,
    path_at: usize,
}

/// An [`AssetKey`] borrowed from a request: what a cache hit is looked up
/// with, so a hit copies no names. It hashes as its key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AssetKeyRef<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub path: &'a str,
}

impl AssetKey {
    pub fn new(package: &str, version: &str, path: &str) -> AssetKey {
        let mut names = String::with_capacity(package.len() + version.len() + path.len());
        names.push_str(package);
        names.push_str(version);
        names.push_str(path);
        AssetKey {
            names: names.into_boxed_str(),
            version_at: package.len(),
            path_at: package.len() + version.len(),
        }
    }

    pub fn package(&self) -> &str {
        &self.names[..self.version_at]
    }

    pub fn version(&self) -> &str {
        &self.names[self.version_at..self.path_at]
    }

    pub fn path(&self) -> &str {
        &self.names[self.path_at..]
    }

    /// The heap its names hold, for the cache's byte budget.
    pub fn weight(&self) -> u64 {
        cache::allocation(self.names.len())
    }

    pub fn borrowed(&self) -> AssetKeyRef<'_> {
        AssetKeyRef {
            package: self.package(),
            version: self.version(),
            path: self.path(),
        }
    }
}

/// As the borrowed form hashes, so a hit finds its key without making one.
impl std::hash::Hash for AssetKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.borrowed().hash(state);
    }
}

impl AssetKeyRef<'_> {
    pub fn to_key(self) -> AssetKey {
        AssetKey::new(self.package, self.version, self.path)
    }
}

impl Lookup<AssetKey> for AssetKeyRef<'_> {
    fn matches(&self, key: &AssetKey) -> bool {
        // The path first: it differs between most keys of a bucket.
        self.path == key.path() && self.version == key.version() && self.package == key.package()
    }
}

/// An asset as the store hands it out: shared with the cache, responses
/// prepared.
pub type Asset = Arc<cache::Entry<AssetKey, Prepared>>;

/// Cache counters, cumulative since the server started.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Misses not cached: the cache was full and the entry they would
    /// have evicted had been asked for as often lately (see `cache`).
    pub rejections: u64,
    /// Entries dropped because their version was deleted or replaced, or
    /// the whole catalog file was.
    pub invalidations: u64,
    /// Loaded bodies that failed their recorded size or sha256, and were
    /// neither cached nor sent.
    pub corrupt: u64,
    pub entries: u64,
    pub bytes: u64,
    pub max_entries: u64,
    pub max_bytes: u64,
}

/// How the catalog being served relates to the file its path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CatalogState {
    /// Serving the file the path names.
    Current,
    /// The path names no file, or one that cannot be read: serving the
    /// catalog as it was.
    Deleted,
    /// The path names a file that is not a servable catalog: serving the
    /// previous one.
    Rejected,
    /// No catalog open: catalog requests get 503.
    Unavailable,
}

/// What `/healthz` reports about the catalog.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogHealth {
    pub path: PathBuf,
    pub state: CatalogState,
    /// What is wrong, when the state is not `current`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Times the file at the path was replaced by another catalog and the
    /// store switched to it.
    pub reloads: u64,
}

/// The exact version an alias (`latest`, a dist-tag, a range) names now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub version: String,
    /// The version's row id: a forced republish gives it a new one.
    pub id: i64,
}

/// Most versions whose entry file the store remembers; past it, it
/// forgets them all and starts again.
const ENTRY_MEMO: usize = 4096;

/// Messages the store actor handles; callers use [`Handle`]'s methods.
enum Msg {
    Get(AssetKey, Reply<Result<Option<Asset>>>),
    /// The exact version a selector picks, if any.
    Resolve(String, Selector, Reply<Result<Option<Resolved>>>),
    List(String, String, Page, Reply<Result<Option<VersionFiles>>>),
    Package(String, Page, Reply<Result<Option<PackageVersions>>>),
    Entry(String, String, Reply<Result<Option<Option<String>>>>),
    /// Every package with its totals.
    Packages(Page, Reply<Result<Vec<PackageRow>>>),
    Stats(Reply<CacheStats>),
    Health(Reply<CatalogHealth>),
}

/// How HTTP workers reach the store: cache hits are read directly, the rest
/// is a call on the actor.
#[derive(Clone)]
pub struct Handle {
    actor: actor::Handle<Msg>,
    cache: Arc<Reader<AssetKey, Prepared>>,
    /// Calls on the actor fail with [`Error::WouldBlock`] instead of
    /// waiting: the view of a thread that must not block ([`Handle::inline`]).
    inline: bool,
}

impl Handle {
    /// The same store for a thread that must never wait on the actor (an
    /// async runtime's): the cache is read as usual, and whatever needs
    /// the actor fails with [`Error::WouldBlock`], to be asked again from
    /// a thread that may wait.
    pub fn inline(&self) -> Handle {
        Handle {
            inline: true,
            ..self.clone()
        }
    }

    /// Whether this is the view that must not wait.
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// Asks the actor and waits for its reply.
    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Msg) -> Result<T> {
        if self.inline {
            return Err(Error::WouldBlock);
        }
        Ok(self.actor.call(make)?)
    }

    /// One file of an exact version, or None when there is no such file.
    /// A cache hit returns without a message to the actor.
    pub fn get(&self, key: AssetKeyRef<'_>) -> Result<Option<Asset>> {
        match self.cached(key) {
            Some(hit) => Ok(Some(hit)),
            None => self.load(key),
        }
    }

    /// The cached asset, if any: the worker's own lookup, no message.
    pub fn cached(&self, key: AssetKeyRef<'_>) -> Option<Asset> {
        let _s = causal::site!(CACHE_LOOKUP);
        self.cache.get(&key)
    }

    /// Asks the actor for an asset the cache did not have (it may have it
    /// by now, from another worker's miss).
    pub fn load(&self, key: AssetKeyRef<'_>) -> Result<Option<Asset>> {
        self.call(|reply| Msg::Get(key.to_key(), reply))?
    }

    /// The exact version `selector` picks for `package`, if any.
    pub fn resolve(&self, package: &str, selector: Selector) -> Result<Option<Resolved>> {
        self.call(|reply| Msg::Resolve(package.to_string(), selector, reply))?
    }

    /// The dist-tags of `package` and its versions in `page`, if it has
    /// any version.
    pub fn package(&self, package: String, page: Page) -> Result<Option<PackageVersions>> {
        self.call(|reply| Msg::Package(package, page, reply))?
    }

    /// The entry file of `package@version` (an exact version): None when
    /// there is no such version, `Some(None)` when no rule finds a file.
    pub fn entry(&self, package: String, version: String) -> Result<Option<Option<String>>> {
        self.call(|reply| Msg::Entry(package, version, reply))?
    }

    /// The files of `package@version` in `page`, if that exact version
    /// exists.
    pub fn list(
        &self,
        package: String,
        version: String,
        page: Page,
    ) -> Result<Option<VersionFiles>> {
        self.call(|reply| Msg::List(package, version, page, reply))?
    }

    /// The packages of `page` with their totals, by name.
    pub fn packages(&self, page: Page) -> Result<Vec<PackageRow>> {
        self.call(|reply| Msg::Packages(page, reply))?
    }

    /// The cache's counters.
    pub fn stats(&self) -> Result<CacheStats> {
        self.call(Msg::Stats)
    }

    /// How the catalog being served relates to the file its path names.
    pub fn health(&self) -> Result<CatalogHealth> {
        self.call(Msg::Health)
    }
}

/// A running store: its handle and its thread.
pub struct Running {
    pub handle: Handle,
    actor: actor::Running<Msg>,
}

impl Running {
    /// Drops this handle and waits for the actor to finish; every clone of
    /// the handle must be gone too.
    pub fn join(self) {
        drop(self.handle);
        self.actor.join();
    }
}

/// Starts the store actor; fails (before any port is bound) when the
/// catalog is missing or not a catalog.
pub fn start(config: Config) -> Result<Running> {
    let cache = Cache::new(config.cache_entries, config.cache_bytes);
    let reader = cache.reader();
    let actor = actor::spawn("store", 1024, move || Store::open(config, cache))?;
    Ok(Running {
        handle: Handle {
            actor: actor.handle.clone(),
            cache: reader,
            inline: false,
        },
        actor,
    })
}

/// Which file a path names: device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The file `path` names now, following symlinks.
    fn of(path: &Path) -> std::io::Result<FileId> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        Ok(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// The catalog being served and what is known about its file.
struct Served {
    /// None only when [`CatalogState::Unavailable`].
    catalog: Option<Catalog>,
    /// The file `catalog` was opened from.
    file: Option<FileId>,
    state: CatalogState,
    problem: Option<String>,
    /// The trouble last logged (state, and the file the path named), so
    /// that trouble lasting many checks is logged once.
    logged: Option<(CatalogState, Option<FileId>)>,
    reloads: u64,
    data_version: i64,
}

/// Opens the catalog at `path` read-only, with the file it was opened from
/// and its `data_version`.
fn open_file(path: &Path) -> Result<(Catalog, FileId, i64)> {
    // Catalog::open's errors say best what is wrong with a missing file.
    let before = FileId::of(path).ok();
    let catalog = Catalog::open(path, Access::ReadOnly)?;
    catalog
        .conn()
        .set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
    let after = FileId::of(path).map_err(|e| Error::io(path, e))?;
    if before != Some(after) {
        return Err(Error::Unavailable {
            path: path.to_path_buf(),
            why: "the file was replaced while it was being opened".into(),
        });
    }
    let data_version = catalog.data_version()?;
    Ok((catalog, after, data_version))
}

/// When a shared read transaction must end (module doc).
#[derive(Debug, Clone, Copy)]
struct SharingBound {
    reads: u32,
    span: Duration,
}

/// The read transaction the reads of a busy run share.
struct SharedRead {
    begun: Instant,
    reads: u32,
}

/// Makes the next read of a busy run part of its shared transaction:
/// begins one when there is none or the one open has reached its bound
/// (it is ended first).
fn share(catalog: &Catalog, shared: &mut Option<SharedRead>, bound: SharingBound) -> Result<()> {
    if let Some(open) = shared {
        // SQLite may have rolled it back by itself after an error.
        if open.reads < bound.reads && open.begun.elapsed() < bound.span && catalog.in_transaction()
        {
            open.reads += 1;
            return Ok(());
        }
        *shared = None;
        catalog.end_read()?;
    }
    catalog.begin_read()?;
    *shared = Some(SharedRead {
        begun: Instant::now(),
        reads: 1,
    });
    Ok(())
}

struct Store {
    served: Served,
    /// In a busy run: from the actor loop's `more_queued` to its
    /// `inbox_empty`.
    busy: bool,
    /// The read transaction of the busy run, when one is open.
    shared: Option<SharedRead>,
    bound: SharingBound,
    cache: Cache<AssetKey, Prepared>,
    /// Entry files by version row id: a row's files never change, and a
    /// forced republish makes a new row. Emptied with the cache when the
    /// catalog file is replaced (row ids are per file).
    entries: std::collections::HashMap<i64, Option<String>>,
    config: Config,
    /// Misses and corrupt bodies; the cache keeps the rest of the counters.
    stats: CacheStats,
}

impl Store {
    fn open(config: Config, cache: Cache<AssetKey, Prepared>) -> Result<Store> {
        let (catalog, file, data_version) = open_file(&config.db)?;
        Ok(Store {
            served: Served {
                catalog: Some(catalog),
                file: Some(file),
                state: CatalogState::Current,
                problem: None,
                logged: None,
                reloads: 0,
                data_version,
            },
            busy: false,
            shared: None,
            bound: SharingBound {
                reads: SHARED_READS,
                span: SHARED_SPAN,
            },
            cache,
            entries: std::collections::HashMap::new(),
            stats: CacheStats {
                max_entries: config.cache_entries as u64,
                max_bytes: config.cache_bytes,
                ..CacheStats::default()
            },
            config,
        })
    }

    /// The catalog to query, after making sure it is the one the path
    /// names (see the module doc), inside the busy run's read transaction
    /// when there is a run; an error when there is no catalog.
    fn catalog(&mut self) -> Result<&Catalog> {
        self.follow_path(false);
        let Some(catalog) = &self.served.catalog else {
            return Err(Error::Unavailable {
                path: self.config.db.clone(),
                why: self
                    .served
                    .problem
                    .clone()
                    .unwrap_or_else(|| "no catalog is open".into()),
            });
        };
        if self.busy {
            share(catalog, &mut self.shared, self.bound)?;
        }
        Ok(catalog)
    }

    /// Ends the busy run's read transaction, if one is open: the next read
    /// sees the catalog as it is now.
    fn end_shared(&mut self) {
        self.shared = None;
        if let Some(catalog) = &self.served.catalog
            && let Err(e) = catalog.end_read()
        {
            log::err(format_args!(
                "warning: ending a read transaction on the catalog failed: {e}"
            ));
        }
    }

    /// A request's result, after ending the shared read transaction if the
    /// request failed: whatever went wrong stays out of the next reads.
    fn after_read<T>(&mut self, result: Result<T>) -> Result<T> {
        if result.is_err() {
            self.end_shared();
        }
        result
    }

    /// Compares the file the path names with the one open, and acts on a
    /// difference: switch to a servable replacement, or keep serving what
    /// is open and say why. A file already rejected is checked again only
    /// when `recheck` (at the staleness check, not on every request).
    fn follow_path(&mut self, recheck: bool) {
        let open = self.served.catalog.is_some();
        match FileId::of(&self.config.db) {
            Ok(id) if open && self.served.file == Some(id) => {
                self.settle(CatalogState::Current, None, Some(id))
            }
            Ok(id)
                if !recheck && self.served.logged == Some((CatalogState::Rejected, Some(id))) => {}
            Ok(id) => self.replace(id),
            Err(e) => {
                let path = self.config.db.display();
                let (state, why) = if open {
                    let why = format!(
                        "catalog {path} is gone ({e}); still serving it as it was, from the file held open"
                    );
                    (CatalogState::Deleted, why)
                } else {
                    let why =
                        format!("catalog {path} is gone ({e}); answering 503 until one is there");
                    (CatalogState::Unavailable, why)
                };
                self.settle(state, Some(why), None)
            }
        }
    }

    /// The path names `id`, another file than the one open (if any).
    fn replace(&mut self, id: FileId) {
        let path = self.config.db.clone();
        if self.served.catalog.is_some() {
            if let Err(e) = Catalog::check_file(&path) {
                let why = format!(
                    "catalog {} was replaced by a file ccc cannot serve ({e}); still serving the previous catalog",
                    path.display()
                );
                return self.settle(CatalogState::Rejected, Some(why), Some(id));
            }
            // Let go of the old file before opening the new (module doc).
            self.end_shared();
            self.served.catalog = None;
            self.served.file = None;
            self.drop_cache();
        }
        match open_file(&path) {
            Ok((catalog, file, data_version)) => {
                self.served.catalog = Some(catalog);
                self.served.file = Some(file);
                self.served.data_version = data_version;
                self.served.reloads += 1;
                log::err(format_args!(
                    "note: catalog {} was replaced by another file; now serving it (cache emptied)",
                    path.display()
                ));
                // That note says it all; what was logged before was about
                // other files.
                self.served.logged = None;
                self.settle(CatalogState::Current, None, Some(file));
            }
            Err(e) => self.settle(
                CatalogState::Unavailable,
                Some(format!(
                    "catalog {} cannot be opened ({e}); answering 503 until it can",
                    path.display()
                )),
                Some(id),
            ),
        }
    }

    /// Records the catalog's state; logs trouble once per state and file,
    /// and its end.
    fn settle(&mut self, state: CatalogState, problem: Option<String>, seen: Option<FileId>) {
        let served = &mut self.served;
        served.state = state;
        let key = (state, seen);
        match &problem {
            Some(why) if served.logged != Some(key) => {
                let level = match state {
                    CatalogState::Deleted => "warning",
                    _ => "error",
                };
                log::err(format_args!("{level}: {why}"));
                served.logged = Some(key);
            }
            None if served.logged.is_some() => {
                log::err(format_args!(
                    "note: catalog {} is served again from the file its path names",
                    self.config.db.display()
                ));
                served.logged = None;
            }
            _ => {}
        }
        served.problem = problem;
    }

    fn drop_cache(&mut self) {
        self.cache.retain(|_| false);
        self.entries.clear();
    }

    fn health(&self) -> CatalogHealth {
        CatalogHealth {
            path: self.config.db.clone(),
            state: self.served.state,
            problem: self.served.problem.clone(),
            reloads: self.served.reloads,
        }
    }

    /// A miss in the workers' view of the cache. Another worker's miss for
    /// the same key may have filled it meanwhile.
    fn get(&mut self, key: AssetKey) -> Result<Option<Asset>> {
        if let Some(hit) = self.cache.get(&key) {
            return Ok(Some(hit));
        }
        self.stats.misses += 1;
        let started = Instant::now();
        let catalog = self.catalog()?;
        let found = {
            let _s = causal::site!(SQLITE_QUERY);
            catalog.lookup(key.package(), key.version(), key.path())?
        };
        let Some(row) = found else {
            return Ok(None);
        };
        if let Err(wrong) = row.check() {
            self.stats.corrupt += 1;
            return Err(Error::Corrupt {
                path: self.config.db.clone(),
                what: format!(
                    "{}@{}/{} (blob sha256 {}) {wrong}; not served",
                    key.package(),
                    key.version(),
                    key.path(),
                    hex::encode(row.sha256)
                ),
            });
        }
        if self.config.log_misses {
            log::err(format_args!(
                "cache miss: {}@{}/{} ({} bytes, {} us)",
                key.package(),
                key.version(),
                key.path(),
                row.body.len(),
                started.elapsed().as_micros()
            ));
        }
        let _s = causal::site!(CACHE_INSERT);
        let prepared = Prepared::new(StoredAsset::from(row));
        // Builds the common response's lines now, once, before a worker's
        // hit would: the weight counts them (see `Prepared::weight`). With
        // the cache off nothing is kept, and the response builds the lines
        // of the coding it sends.
        let weight = if self.cache.is_on() {
            prepared.weight() + key.weight()
        } else {
            0
        };
        Ok(Some(self.cache.insert(key, prepared, weight)))
    }

    /// Checks for changes by other processes: first the file (see the
    /// module doc), then, in the file still open, SQLite's `data_version`.
    fn check_staleness(&mut self) -> Result<()> {
        self.follow_path(true);
        let Some(catalog) = &self.served.catalog else {
            return Ok(());
        };
        let now = catalog.data_version()?;
        if now != self.served.data_version {
            self.served.data_version = now;
            self.drop_stale()?;
        }
        Ok(())
    }

    /// Drops cached entries whose version no longer exists.
    fn drop_stale(&mut self) -> Result<()> {
        let Some(catalog) = &self.served.catalog else {
            return Ok(());
        };
        let version_ids: HashSet<i64> = self.cache.values().map(|p| p.stored.version_id).collect();
        let mut gone = HashSet::new();
        for id in version_ids {
            if !catalog.version_exists(id)? {
                gone.insert(id);
            }
        }
        if !gone.is_empty() {
            self.cache.retain(|p| !gone.contains(&p.stored.version_id));
        }
        Ok(())
    }

    fn stats(&self) -> CacheStats {
        let counts = self.cache.stats();
        CacheStats {
            hits: counts.hits,
            evictions: counts.evictions,
            rejections: counts.rejections,
            invalidations: counts.invalidations,
            entries: counts.entries,
            bytes: counts.bytes,
            ..self.stats.clone()
        }
    }

    fn resolve(&mut self, package: &str, selector: &Selector) -> Result<Option<Resolved>> {
        match self.catalog()?.resolve(package, selector) {
            Ok(v) => Ok(Some(Resolved {
                version: v.version.to_string(),
                id: v.id,
            })),
            Err(
                Error::PackageNotFound(_)
                | Error::VersionNotFound { .. }
                | Error::TagNotFound { .. },
            ) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn package(&mut self, package: &str, page: Page) -> Result<Option<PackageVersions>> {
        self.catalog()?.package_versions(package, page)
    }

    fn entry(&mut self, package: &str, version: &str) -> Result<Option<Option<String>>> {
        let Ok(exact) = semver::Version::parse(version) else {
            return Ok(None);
        };
        let Some(found) = self.resolve(package, &Selector::Exact(exact))? else {
            return Ok(None);
        };
        if let Some(entry) = self.entries.get(&found.id) {
            return Ok(Some(entry.clone()));
        }
        let entry = self.catalog()?.entry(found.id)?;
        if self.entries.len() >= ENTRY_MEMO {
            self.entries.clear();
        }
        self.entries.insert(found.id, entry.clone());
        Ok(Some(entry))
    }

    fn list(&mut self, package: &str, version: &str, page: Page) -> Result<Option<VersionFiles>> {
        let Ok(exact) = semver::Version::parse(version) else {
            return Ok(None);
        };
        let catalog = self.catalog()?;
        let v = match catalog.resolve(package, &Selector::Exact(exact)) {
            Ok(v) => v,
            Err(Error::PackageNotFound(_) | Error::VersionNotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        catalog.version_files(v, page).map(Some)
    }
}

impl Drop for Store {
    /// The connection closes with no transaction open.
    fn drop(&mut self) {
        self.end_shared();
    }
}

impl Actor for Store {
    type Msg = Msg;

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Get(key, reply) => {
                let result = self.get(key);
                reply.send(self.after_read(result))
            }
            Msg::Resolve(package, selector, reply) => {
                let result = self.resolve(&package, &selector);
                reply.send(self.after_read(result))
            }
            Msg::List(package, version, page, reply) => {
                let result = self.list(&package, &version, page);
                reply.send(self.after_read(result))
            }
            Msg::Package(package, page, reply) => {
                let result = self.package(&package, page);
                reply.send(self.after_read(result))
            }
            Msg::Entry(package, version, reply) => {
                let result = self.entry(&package, &version);
                reply.send(self.after_read(result))
            }
            Msg::Packages(page, reply) => {
                let result = self.catalog().and_then(|c| c.packages(page));
                reply.send(self.after_read(result))
            }
            Msg::Stats(reply) => reply.send(self.stats()),
            Msg::Health(reply) => reply.send(self.health()),
        }
    }

    fn more_queued(&mut self) {
        self.busy = true;
    }

    fn inbox_empty(&mut self) {
        self.busy = false;
        self.end_shared();
    }

    fn housekeeping_every(&self) -> Option<Duration> {
        Some(STALENESS_CHECK)
    }

    fn housekeeping(&mut self) {
        // The check needs the catalog as it is now, not a run's snapshot.
        self.end_shared();
        self.cache.replay();
        if let Err(e) = self.check_staleness() {
            log::err(format_args!(
                "warning: checking the catalog for changes failed: {e}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
    use rusqlite::OptionalExtension;

    fn catalog_with(dir: &std::path::Path, files: &[(&str, usize)]) -> PathBuf {
        let db = dir.join("cdn.db");
        let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, n)| (*p, noise(*n))).collect();
        publish_at(&db, "1.0.0", &files);
        db
    }

    /// Publishes `app@VERSION` with `files` into the catalog at `db`
    /// (created when missing); the writer is closed when this returns.
    fn publish_at(db: &Path, version: &str, files: &[(&str, Vec<u8>)]) {
        let mut catalog = Catalog::open(db, Access::Create).unwrap();
        let entries = files
            .iter()
            .map(|(path, bytes)| FileEntry {
                path: path.to_string(),
                size: bytes.len() as u64,
                source: Source::Memory(Arc::from(&bytes[..])),
            })
            .collect();
        publish::publish(
            &mut catalog,
            "app",
            &semver::Version::parse(version).unwrap(),
            entries,
            vec![],
            &Options::default(),
            &NoProgress,
        )
        .unwrap();
    }

    /// Incompressible bytes, so stored sizes equal raw sizes.
    fn noise(len: usize) -> Vec<u8> {
        let mut x = len as u64 | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn key(path: &str) -> AssetKey {
        AssetKey::new("app", "1.0.0", path)
    }

    #[test]
    fn a_borrowed_key_hashes_and_matches_as_the_key() {
        use std::hash::BuildHasher;
        let hasher = foldhash::fast::RandomState::default();
        let owned = key("js/a.js");
        let borrowed = owned.borrowed();
        assert_eq!(hasher.hash_one(&owned), hasher.hash_one(borrowed));
        assert!(borrowed.matches(&owned));
        let other = AssetKeyRef {
            path: "js/b.js",
            ..borrowed
        };
        assert!(!other.matches(&owned));
        assert_eq!(borrowed.to_key(), owned);
    }

    fn store(db: PathBuf, entries: usize, bytes: u64) -> Store {
        let config = Config {
            db,
            cache_entries: entries,
            cache_bytes: bytes,
            log_misses: false,
        };
        let cache = Cache::new(entries, bytes);
        Store::open(config, cache).unwrap()
    }

    fn cached(s: &Store, path: &str) -> bool {
        s.cache.reader().get(&key(path)).is_some()
    }

    #[test]
    fn hits_share_the_body_and_budgets_evict_in_lru_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 1000), ("b", 1000), ("c", 1000)]);
        let mut s = store(db, 2, 1 << 20);
        let first = s.get(key("a")).unwrap().unwrap();
        let again = s.get(key("a")).unwrap().unwrap();
        assert!(
            Arc::ptr_eq(&first.value().stored.body, &again.value().stored.body),
            "a hit copies no body bytes"
        );
        s.get(key("b")).unwrap();
        s.get(key("a")).unwrap(); // a is now most recent
        s.get(key("c")).unwrap(); // asked once, as often as b: not cached
        assert_eq!((s.stats().entries, s.stats().rejections), (2, 1));
        s.get(key("c")).unwrap(); // asked again: evicts b
        let stats = s.stats();
        assert_eq!(
            (stats.hits, stats.misses, stats.evictions, stats.rejections),
            (2, 4, 1, 1)
        );
        assert!(!cached(&s, "b") && cached(&s, "a") && cached(&s, "c"));
        assert!(s.get(key("nope")).unwrap().is_none());
    }

    #[test]
    fn the_byte_budget_bounds_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 600), ("b", 600), ("big", 5000)]);
        let size =
            |s: &mut Store, p: &str| s.get(key(p)).unwrap().unwrap().value().stored.body.len();
        // What one 600-byte asset weighs: its body, and what the budget
        // counts beside it (its names, validators, header lines, the
        // cache's index), which for a small file is more than the body.
        let mut roomy = store(db.clone(), 100, 1 << 20);
        let asset = roomy.get(key("a")).unwrap().unwrap();
        let weight = roomy.stats().bytes;
        let lines = asset.value().lines(asset.value().smallest());
        let beside = lines.capacity() as u64
            + (key("a").weight() + Cache::<AssetKey, Prepared>::ENTRY_BYTES);
        assert!(
            weight >= 600 + beside,
            "{weight} counts only part of {beside}"
        );
        assert!(
            weight < 600 + 6 * beside,
            "{weight}: {beside} beside the body"
        );

        let mut s = store(db, 100, 2 * weight - 1);
        assert_eq!(size(&mut s, "a"), 600);
        size(&mut s, "b");
        assert_eq!(s.stats().entries, 1, "two entries of 600 bytes do not fit");
        size(&mut s, "b"); // asked more often than a now: replaces it
        assert!(cached(&s, "b") && !cached(&s, "a"));
        assert_eq!((s.stats().bytes, s.stats().evictions), (weight, 1));
        assert_eq!(size(&mut s, "big"), 5000);
        assert!(!cached(&s, "big"), "larger than the budget: never cached");
        assert!(s.stats().bytes < 2 * weight);
        let mut off = store(dir.path().join("cdn.db"), 0, 1000);
        off.get(key("a")).unwrap();
        assert_eq!(off.stats().entries, 0, "capacity 0 turns the cache off");
    }

    #[test]
    fn the_default_byte_budget_parses() {
        assert_eq!(crate::units::parse_size(DEFAULT_CACHE_BYTES), Ok(64 << 20));
    }

    #[test]
    fn hits_are_served_without_the_actor() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut owner = store(db, 10, 1 << 20);
        owner.get(key("a")).unwrap().unwrap();
        // A handle whose actor serves an empty catalog, reading the cache
        // the first store filled: an answer for `a` can only come from the
        // cache, without a call.
        let empty = tempfile::tempdir().unwrap();
        Catalog::open(&empty.path().join("cdn.db"), Access::Create).unwrap();
        let other = start(Config {
            db: empty.path().join("cdn.db"),
            cache_entries: 10,
            cache_bytes: 1 << 20,
            log_misses: false,
        })
        .unwrap();
        let handle = Handle {
            actor: other.handle.actor.clone(),
            cache: owner.cache.reader(),
            inline: false,
        };
        let hit = handle
            .get(key("a").borrowed())
            .unwrap()
            .expect("served from the cache");
        assert_eq!(hit.value().stored.body.len(), 100);
        assert!(
            handle.get(key("b").borrowed()).unwrap().is_none(),
            "a miss asks the actor"
        );
        assert_eq!(
            handle.stats().unwrap().misses,
            1,
            "the actor saw only the miss"
        );
        drop(handle);
        other.join();
    }

    #[test]
    fn deleted_versions_leave_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.get(key("a")).unwrap().unwrap();
        assert!(cached(&s, "a"));
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let id = writer.versions("app").unwrap()[0].id;
        writer.remove_versions(&[id], false).unwrap();
        s.housekeeping();
        assert_eq!(s.stats().invalidations, 1);
        assert!(!cached(&s, "a"), "gone from the workers' view too");
        assert!(s.get(key("a")).unwrap().is_none());
    }

    fn body(s: &mut Store, path: &str) -> Vec<u8> {
        s.get(key(path))
            .unwrap()
            .unwrap()
            .value()
            .stored
            .body
            .to_vec()
    }

    /// Renames `from` over `to`, as `mv` does.
    fn mv(from: &Path, to: &Path) {
        std::fs::rename(from, to).unwrap();
    }

    #[test]
    fn a_catalog_renamed_over_the_path_is_served_from_the_next_query() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        // Published while the store holds the file open, as in production:
        // the write-ahead log outlives this writer.
        publish_at(&db, "1.1.0", &[("c", noise(300))]);
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("a", noise(101)), ("z", noise(50))]);
        mv(&new, &db);

        // A hit still answers from the old catalog, whose bytes are right
        // for it; the first query notices the new file.
        assert_eq!(body(&mut s, "a"), noise(100));
        assert_eq!(body(&mut s, "z"), noise(50));
        assert_eq!(body(&mut s, "a"), noise(101), "the cache was emptied");
        assert!(s.get(key("b")).unwrap().is_none());
        let v11 = |s: &mut Store| s.resolve("app", &Selector::parse("app", "1.1.0").unwrap());
        assert_eq!(v11(&mut s).unwrap(), None, "nothing of the old file's log");
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert_eq!(s.stats().invalidations, 1);
        s.housekeeping();
        assert_eq!(s.health().reloads, 1, "one replacement, one reload");
    }

    #[test]
    fn a_file_that_is_not_a_catalog_is_refused_and_the_old_catalog_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        let junk = dir.path().join("junk");
        std::fs::write(&junk, b"not a catalog\n".repeat(100)).unwrap();
        mv(&junk, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Rejected);
        let problem = health.problem.unwrap();
        assert!(problem.contains("is not a SQLite database"), "{problem}");
        assert!(
            problem.contains("still serving the previous catalog"),
            "{problem}"
        );
        // Uncached files still come, right, from the catalog held open.
        assert_eq!(body(&mut s, "b"), noise(200));
        assert_eq!(body(&mut s, "a"), noise(100));

        let other = dir.path().join("other.db");
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
        drop(conn);
        mv(&other, &db);
        s.housekeeping();
        let problem = s.health().problem.unwrap();
        assert!(problem.contains("not a ccc catalog"), "{problem}");
        assert_eq!(body(&mut s, "b"), noise(200));

        let good = dir.path().join("good.db");
        publish_at(&good, "1.0.0", &[("a", noise(7))]);
        mv(&good, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert!(health.problem.is_none());
        assert_eq!(body(&mut s, "a"), noise(7));
    }

    #[test]
    fn a_deleted_catalog_is_served_from_the_open_file_until_one_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100)), ("b", noise(200))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Deleted);
        assert!(health.problem.unwrap().contains("No such file"));
        assert_eq!(body(&mut s, "b"), noise(200), "read from the open file");
        assert!(!db.exists(), "serving never creates a catalog");

        publish_at(&db, "2.0.0", &[("n", noise(9))]);
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Current);
        assert!(s.get(key("b")).unwrap().is_none(), "the new file is served");
    }

    #[test]
    fn letting_go_of_an_old_file_leaves_the_new_files_log_alone() {
        // The old and the new file share cdn.db-wal and cdn.db-shm by name.
        // Closing the old connection must not fold "its" log in and delete
        // it: that log is now the new file's, with a writer's commit in it.
        // SQLite skips the checkpoint on close of a file that has moved or
        // gone (its "database is unmoved" check); this pins that down.
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        std::fs::remove_file(&db).unwrap();
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Deleted);
        publish_at(&db, "2.0.0", &[("b", noise(10))]);
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute("INSERT INTO meta (key, value) VALUES ('marker', 'x')", [])
            .unwrap();
        s.housekeeping();
        assert_eq!(s.health().state, CatalogState::Current);
        let reader = rusqlite::Connection::open(&db).unwrap();
        let marker: Option<String> = reader
            .query_row("SELECT value FROM meta WHERE key = 'marker'", [], |r| {
                r.get(0)
            })
            .optional()
            .unwrap();
        assert_eq!(marker.as_deref(), Some("x"), "the writer's commit is lost");
        drop(writer);
    }

    #[test]
    fn with_no_catalog_left_to_serve_requests_fail_until_one_opens() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(100));
        // A replacement that passes the check of the file alone, but whose
        // write-ahead log cannot be opened: the old catalog is let go first.
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("a", noise(5))]);
        let wal = dir.path().join("cdn.db-wal");
        let _ = std::fs::remove_file(&wal);
        std::fs::create_dir(&wal).unwrap();
        mv(&new, &db);
        s.housekeeping();
        let health = s.health();
        assert_eq!(health.state, CatalogState::Unavailable, "{health:?}");
        let err = s.get(key("a")).unwrap_err();
        assert!(matches!(err, Error::Unavailable { .. }), "{err}");
        assert!(s.resolve("app", &Selector::Latest).is_err());

        std::fs::remove_dir(&wal).unwrap();
        s.housekeeping();
        let health = s.health();
        assert_eq!((health.state, health.reloads), (CatalogState::Current, 1));
        assert_eq!(body(&mut s, "a"), noise(5));
    }

    #[test]
    fn a_symlink_switched_to_another_catalog_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.db"), dir.path().join("two.db"));
        publish_at(&one, "1.0.0", &[("a", noise(10))]);
        publish_at(&two, "1.0.0", &[("a", noise(20))]);
        let db = dir.path().join("cdn.db");
        std::os::unix::fs::symlink("one.db", &db).unwrap();
        let mut s = store(db.clone(), 10, 1 << 20);
        assert_eq!(body(&mut s, "a"), noise(10));
        // `ln -sfn two.db cdn.db`: a new link renamed over the old one.
        let next = dir.path().join("cdn.db.next");
        std::os::unix::fs::symlink("two.db", &next).unwrap();
        mv(&next, &db);
        s.housekeeping();
        assert_eq!(s.health().reloads, 1);
        assert_eq!(body(&mut s, "a"), noise(20));
    }

    #[test]
    fn replacements_are_checked_whatever_characters_the_path_has() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a dir?with #odd %41 chars, and ünïcode");
        std::fs::create_dir(&sub).unwrap();
        let db = sub.join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(10))]);
        Catalog::check_file(&db).unwrap();
        let err = Catalog::check_file(&sub.join("missing.db")).unwrap_err();
        assert!(err.to_string().contains("missing.db"), "{err}");
    }

    /// Rewrites the stored body of `app@1.0.0/PATH` in the catalog at `db`.
    fn tamper(db: &Path, path: &str, body: &[u8]) {
        let catalog = Catalog::open(db, Access::ReadWrite).unwrap();
        let changed = catalog
            .conn()
            .execute(
                "UPDATE blobs SET body = ?1 WHERE id =
                   (SELECT blob_id FROM assets WHERE path = ?2)",
                rusqlite::params![body, path],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }

    fn in_transaction(s: &Store) -> bool {
        s.served.catalog.as_ref().unwrap().in_transaction()
    }

    fn resolve_v11(s: &mut Store) -> Option<Resolved> {
        s.resolve("app", &Selector::parse("app", "1.1.0").unwrap())
            .unwrap()
    }

    #[test]
    fn the_reads_of_a_busy_run_share_one_snapshot_until_the_inbox_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.get(key("a")).unwrap().unwrap();
        assert!(!in_transaction(&s), "a lone message reads on its own");

        s.more_queued();
        assert!(s.get(key("b")).unwrap().is_some());
        assert!(in_transaction(&s));
        publish_at(&db, "1.1.0", &[("c", noise(10))]);
        assert_eq!(resolve_v11(&mut s), None, "the run's snapshot");
        s.inbox_empty();
        assert!(!in_transaction(&s));
        assert!(resolve_v11(&mut s).is_some(), "idle: the catalog as it is");
    }

    #[test]
    fn a_shared_read_transaction_ends_at_its_bound_while_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        s.get(key("a")).unwrap().unwrap();
        publish_at(&db, "1.1.0", &[("c", noise(10))]);
        // The read that found the transaction at its bound begins the next.
        let seen = (1..=SHARED_READS).find(|_| resolve_v11(&mut s).is_some());
        assert_eq!(seen, Some(SHARED_READS), "after {SHARED_READS} reads");
        assert!(in_transaction(&s), "the run goes on in a new transaction");

        s.bound = SharingBound {
            reads: u32::MAX,
            span: SHARED_SPAN,
        };
        publish_at(&db, "1.2.0", &[("d", noise(10))]);
        std::thread::sleep(SHARED_SPAN * 2);
        let v12 = s
            .resolve("app", &Selector::parse("app", "1.2.0").unwrap())
            .unwrap();
        assert!(v12.is_some(), "after {SHARED_SPAN:?}");
    }

    #[test]
    fn the_staleness_check_ends_the_shared_read_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        s.get(key("a")).unwrap().unwrap();
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let id = writer.versions("app").unwrap()[0].id;
        writer.remove_versions(&[id], false).unwrap();
        s.housekeeping();
        assert_eq!(s.stats().invalidations, 1, "data_version moved");
        assert!(s.get(key("a")).unwrap().is_none());
    }

    #[test]
    fn a_catalog_renamed_over_the_path_mid_run_is_read_in_a_transaction_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a", noise(100))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.bound.span = Duration::from_secs(3600);
        s.more_queued();
        assert_eq!(body(&mut s, "a"), noise(100));
        let new = dir.path().join("new.db");
        publish_at(&new, "1.0.0", &[("z", noise(50))]);
        mv(&new, &db);
        assert_eq!(body(&mut s, "z"), noise(50));
        assert!(in_transaction(&s), "the run reads the new file in one");
        assert_eq!(s.health().reloads, 1);
    }

    /// A store behind the actor loop, which a test can hold busy while it
    /// queues messages behind `Hold`.
    struct Held {
        store: Store,
        /// Told at each end of a busy run.
        idle: std::sync::mpsc::Sender<()>,
    }

    enum HeldMsg {
        /// Says it has begun, then waits to be released.
        Hold(
            std::sync::mpsc::SyncSender<()>,
            std::sync::mpsc::Receiver<()>,
        ),
        Store(Msg),
    }

    impl Actor for Held {
        type Msg = HeldMsg;
        fn handle(&mut self, msg: HeldMsg) {
            match msg {
                HeldMsg::Hold(begun, release) => {
                    let _ = begun.send(());
                    let _ = release.recv();
                }
                HeldMsg::Store(msg) => self.store.handle(msg),
            }
        }
        fn more_queued(&mut self) {
            self.store.more_queued();
        }
        fn inbox_empty(&mut self) {
            self.store.inbox_empty();
            let _ = self.idle.send(());
        }
    }

    type HeldActor = (actor::Running<HeldMsg>, std::sync::mpsc::Receiver<()>);

    fn held(db: PathBuf, bound: SharingBound) -> HeldActor {
        let (idle, idled) = std::sync::mpsc::channel();
        let running = actor::spawn("held store", 256, move || {
            let mut store = store(db, 10, 1 << 20);
            store.bound = bound;
            Ok::<_, Error>(Held { store, idle })
        })
        .unwrap();
        (running, idled)
    }

    /// Holds the actor busy; the sender releases it.
    fn hold(actor: &actor::Handle<HeldMsg>) -> std::sync::mpsc::SyncSender<()> {
        let (begun, release) = queue_hold(actor);
        begun.recv().unwrap();
        release
    }

    /// Queues a hold behind what is already queued: `begun` says when the
    /// actor reached it, `release` lets it go on.
    fn queue_hold(
        actor: &actor::Handle<HeldMsg>,
    ) -> (
        std::sync::mpsc::Receiver<()>,
        std::sync::mpsc::SyncSender<()>,
    ) {
        let (begun_tx, begun) = std::sync::mpsc::sync_channel(1);
        let (release, release_rx) = std::sync::mpsc::sync_channel(1);
        actor
            .ask::<()>(|_| HeldMsg::Hold(begun_tx, release_rx))
            .unwrap();
        (begun, release)
    }

    fn ask_get(
        actor: &actor::Handle<HeldMsg>,
        path: &str,
    ) -> actor::Pending<Result<Option<Asset>>> {
        actor
            .ask(|r| HeldMsg::Store(Msg::Get(key(path), r)))
            .unwrap()
    }

    fn ask_version(
        actor: &actor::Handle<HeldMsg>,
        version: &str,
    ) -> actor::Pending<Result<Option<Resolved>>> {
        let selector = Selector::parse("app", version).unwrap();
        actor
            .ask(|r| HeldMsg::Store(Msg::Resolve("app".into(), selector, r)))
            .unwrap()
    }

    #[test]
    fn queued_lookups_share_one_read_transaction_through_the_actor_loop() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100), ("c", 100)]);
        let long = SharingBound {
            reads: SHARED_READS,
            span: Duration::from_secs(3600),
        };
        let (running, idled) = held(db.clone(), long);
        let actor = &running.handle;
        let first = hold(actor);
        while idled.try_recv().is_ok() {}
        let a = ask_get(actor, "a");
        let b = ask_get(actor, "b");
        let (begun, second) = queue_hold(actor);
        let v11 = ask_version(actor, "1.1.0");
        let c = ask_get(actor, "c");
        first.send(()).unwrap();
        // `a` and `b` have been read; another process commits mid-run.
        begun.recv().unwrap();
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        for found in [a, b, c] {
            assert!(found.wait().unwrap().unwrap().is_some());
        }
        assert_eq!(
            v11.wait().unwrap().unwrap(),
            None,
            "read in the transaction `a` began"
        );
        idled
            .recv_timeout(Duration::from_secs(30))
            .expect("the run ends");
        let after = ask_version(actor, "1.1.0").wait().unwrap().unwrap();
        assert!(after.is_some(), "the run over, the next read is fresh");
        running.join();
    }

    #[test]
    fn a_continuously_busy_actor_sees_a_commit_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let bound = SharingBound {
            reads: SHARED_READS,
            span: SHARED_SPAN,
        };
        let (running, _idled) = held(db.clone(), bound);
        let actor = &running.handle;
        let first = hold(actor);
        let a = ask_get(actor, "a");
        let (begun, second) = queue_hold(actor);
        // Never an empty inbox from here to the last: only the bound can
        // end the transaction `a` began.
        let reads = 3 * SHARED_READS as usize;
        let resolved: Vec<_> = (0..reads).map(|_| ask_version(actor, "1.1.0")).collect();
        first.send(()).unwrap();
        begun.recv().unwrap();
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        assert!(a.wait().unwrap().unwrap().is_some());
        let seen: Vec<bool> = resolved
            .into_iter()
            .map(|r| r.wait().unwrap().unwrap().is_some())
            .collect();
        let first_seen = seen.iter().position(|s| *s).expect("never seen");
        assert!(
            first_seen < SHARED_READS as usize,
            "seen at read {first_seen}"
        );
        assert!(seen[first_seen..].iter().all(|s| *s));
        running.join();
    }

    #[test]
    fn a_failed_read_ends_the_shared_transaction_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100), ("b", 100)]);
        let long = SharingBound {
            reads: SHARED_READS,
            span: Duration::from_secs(3600),
        };
        let (running, _idled) = held(db.clone(), long);
        let actor = &running.handle;
        let first = hold(actor);
        // A real SQLite error in the middle of a run: the lookup's table
        // is gone ("no such table").
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute_batch("ALTER TABLE brotli RENAME TO brotli_away")
            .unwrap();
        let a = ask_get(actor, "a");
        let (begun, second) = queue_hold(actor);
        let v11 = ask_version(actor, "1.1.0");
        let b = ask_get(actor, "b");
        first.send(()).unwrap();
        begun.recv().unwrap();
        writer
            .execute_batch("ALTER TABLE brotli_away RENAME TO brotli")
            .unwrap();
        drop(writer);
        publish_at(&db, "1.1.0", &[("d", noise(10))]);
        second.send(()).unwrap();
        let err = a.wait().unwrap().unwrap_err().to_string();
        assert!(err.contains("brotli"), "{err}");
        assert!(
            v11.wait().unwrap().unwrap().is_some(),
            "the failed transaction was ended; the next read is fresh"
        );
        assert!(b.wait().unwrap().unwrap().is_some(), "not wedged");
        running.join();
    }

    #[test]
    fn a_body_that_fails_its_record_is_neither_served_nor_cached() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let text = b"console.log('hello');\n".repeat(200);
        publish_at(
            &db,
            "1.0.0",
            &[("raw", noise(1000)), ("text.js", text.clone())],
        );
        let mut s = store(db.clone(), 10, 1 << 20);
        let text_asset = s.get(key("text.js")).unwrap().unwrap();
        assert_eq!(
            text_asset.value().stored.encoding,
            Encoding::Gzip,
            "text is stored gzip"
        );
        let text_sha = hex::encode(text_asset.value().stored.sha256);
        s.cache.retain(|_| false);

        let mut raw = noise(1000);
        raw[500] ^= 1;
        tamper(&db, "raw", &raw);
        // A valid gzip stream of other bytes: it decodes, to the wrong thing.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&b"console.log('HELLO');\n".repeat(200))
            .unwrap();
        tamper(&db, "text.js", &gz.finish().unwrap());

        for (path, sha) in [("raw", None), ("text.js", Some(&text_sha))] {
            for _ in 0..2 {
                let err = s.get(key(path)).unwrap_err().to_string();
                assert!(err.contains(&format!("app@1.0.0/{path}")), "{err}");
                assert!(err.contains("blob sha256 "), "{err}");
                if let Some(sha) = sha {
                    assert!(err.contains(sha.as_str()), "{err}");
                }
            }
        }
        assert_eq!(s.stats.corrupt, 4);
        assert_eq!(s.stats().entries, 0, "nothing that failed was cached");
    }

    #[test]
    fn a_brotli_stream_that_fails_its_digest_is_neither_served_nor_cached() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let text = publish::script_like(2000);
        publish_at(&db, "1.0.0", &[("app.js", text.clone())]);
        let mut s = store(db.clone(), 10, 1 << 20);
        let asset = s.get(key("app.js")).unwrap().unwrap();
        let brotli = asset
            .value()
            .stored
            .brotli
            .as_ref()
            .expect("a brotli stream");
        let mut decoded = Vec::new();
        brotli::BrotliDecompress(&mut &brotli[..], &mut decoded).unwrap();
        assert_eq!(decoded, text);
        drop(asset);
        s.cache.retain(|_| false);

        // Another valid brotli stream: only the digest tells.
        let mut other = Vec::new();
        brotli::BrotliCompress(&mut &b"console.log(1)"[..], &mut other, &Default::default())
            .unwrap();
        let writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let changed = writer
            .conn()
            .execute("UPDATE brotli SET body = ?1", [other])
            .unwrap();
        assert_eq!(changed, 1);
        let err = s.get(key("app.js")).unwrap_err().to_string();
        assert!(err.contains("app@1.0.0/app.js"), "{err}");
        assert!(err.contains("brotli stream: stored bytes hash to"), "{err}");
        assert_eq!(s.stats.corrupt, 1);
        assert_eq!(s.stats().entries, 0);
    }
}

//! The store: the server's read-only catalog connections and the asset
//! cache in front of them.
//!
//! HTTP workers reach it through a [`Handle`]: `get` reads the cache
//! directly, and a miss, a version resolution or a listing is read on the
//! worker's own thread from a pool of catalog connections (`readers`),
//! and the worker admits its miss to the cache when no other thread holds
//! the cache's owner side. The actor answers what the pool cannot, and
//! keeps what must stay single: the staleness watch, the file the path
//! names, and the cache's upkeep between requests. An asset comes back
//! as an `Arc` shared with the cache, its responses prepared
//! ([`Prepared`]), so no body bytes are copied between the cache and the
//! socket and no header is built per request.
//!
//! # Cache
//!
//! [`crate::serve::cache`]: workers look up without waiting for anyone
//! and record their hits in lossy buffers; whoever holds the cache's owner
//! side (a worker admitting its miss, or the actor) replays them into a
//! strict LRU order before each insertion, and the actor at every
//! housekeeping tick; only the owner side admits, evicts and invalidates.
//! Bounded by the bytes an entry holds, and by entries when
//! `--cache-capacity` is given (0 turns the cache off) (`--cache-bytes`: bodies, names, prepared headers and the cache's
//! own index, [`Prepared::weight`]); an asset heavier than the byte budget
//! is never cached.
//! Keys are `(package, exact version, path)`; ranges are resolved before
//! the cache is consulted.
//!
//! # Where each part is
//!
//! This file has the [`Handle`] workers use, the messages it sends the
//! actor, and [`start`]. The rest, one concern a file:
//!
//! - `owner`: the actor, its state and its loop;
//! - `readers`: the workers' pool of connections, and how its reads stay
//!   as fresh as the actor's;
//! - `queries`: what a read asks of the catalog, the same on either;
//! - `load`: a cache miss, from the catalog's row to a cached asset, and
//!   the check of every body loaded;
//! - `index`: the file index, what misses found of each file, so that its
//!   next miss reads only its bytes;
//! - `watch`: staleness, and the catalog file replaced or deleted;
//! - `shared_read`: one read transaction for reads close together;
//! - `key`: the cache key.
//!
//! The asset as loaded, before its responses are prepared, is
//! [`StoredAsset`](crate::serve::stored::StoredAsset).

mod index;
mod key;
mod load;
mod owner;
mod queries;
mod readers;
mod shared_read;
#[cfg(test)]
mod testing;
mod watch;

pub(crate) use index::{DEFAULT_INDEX_BYTES, IndexStats};
pub(crate) use key::Asset;
pub use key::{AssetKey, AssetKeyRef};
pub(crate) use load::{Brotli, Want};
pub(crate) use shared_read::{SHARED_READS, SHARED_SPAN};
pub(crate) use watch::{CatalogHealth, CatalogState};

use crate::actor::{self, Reply};
use crate::catalog::Catalog;
use crate::catalog::chunks::{ChunkCursor, ChunkedBlob};
use crate::catalog::query::{PackageRow, PackageVersions, Page, VersionFiles};
use crate::causal;
use crate::error::Result;
use crate::importmap::ImportMap;
use crate::serve::cache::{Cache, Reader};
use crate::serve::in_flight::{InFlight, Reservation};
use crate::serve::prepared::Prepared;
use crate::serve::site::map::SiteMap;
use crate::spec::Selector;
use index::FileIndex;
use load::Keep;
use owner::Store;
use readers::{Kept, Offer, Outbox, Readers};
use serde::Serialize;
use shared_read::SharingBound;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, TryLockError};

/// Default `--cache-bytes`, as `--help` shows it (parsed like the flag).
/// The cache is bounded by bytes alone by default (no `--cache-capacity`):
/// 256 MiB holds about 90,000 assets of a typical front-end build (2.8 KB
/// stored on average, and what each entry holds beside its body), the hot
/// set of many sites, and is a fixed amount an operator can plan a
/// container's memory around, unlike a share of the machine's RAM.
pub(crate) const DEFAULT_CACHE_BYTES: &str = "256MiB";

/// How the store is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub db: PathBuf,
    pub cache_entries: usize,
    pub cache_bytes: u64,
    /// `--index-bytes`: what the file index holds (`index`; 0: off).
    pub index_bytes: u64,
    /// `--in-flight-bytes`: what responses may hold beyond the cache.
    pub in_flight_bytes: u64,
    /// Print a line to stderr for every cache miss.
    pub log_misses: bool,
    /// Connections workers read with: one per thread that serves requests
    /// (0: the actor answers every read).
    pub readers: usize,
    /// On a replica (`--max-lag`): how long its follower may go without
    /// confirming the catalog is the replica's newest (`watch`).
    pub max_lag: Option<std::time::Duration>,
}

/// Cache counters, cumulative since the server started.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Misses not cached: the cache was full and they had not been asked
    /// for lately three more times than the entry they would have evicted
    /// (see `cache`).
    pub rejections: u64,
    /// Entries dropped because their version was deleted or replaced, or
    /// the whole catalog file was.
    pub invalidations: u64,
    /// Loaded bodies that failed their recorded size or digest, and were
    /// neither cached nor sent.
    pub corrupt: u64,
    pub entries: u64,
    pub bytes: u64,
    /// None: no limit but the bytes.
    pub max_entries: Option<u64>,
    pub max_bytes: u64,
    /// The file index's (`index`): its hits are misses of the cache.
    pub(crate) index: IndexStats,
}

/// The exact version an alias (`latest`, a dist-tag, a range) names now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub version: String,
    /// The version's row id: a forced republish gives it a new one.
    pub id: i64,
}

/// What the workers and the actor share.
struct Shared {
    config: Config,
    cache: Arc<Reader<AssetKey, Prepared>>,
    /// The cache's owner side (admission, recency, eviction): taken by a
    /// worker to admit its own miss when no one holds it, and by the actor.
    policy: Mutex<Cache<AssetKey, Prepared>>,
    /// What misses found of each file, for the next miss (`index`).
    index: FileIndex,
    readers: Readers,
    /// Entry files by version row id (see `queries::entry`).
    entries: Mutex<HashMap<i64, Option<String>>>,
    /// The sites as last read, with the count of changes they were read
    /// under (`Handle::sites`).
    sites: RwLock<Option<(u64, Arc<SiteMap>)>>,
    misses: AtomicU64,
    /// Loaded bodies that failed their check.
    corrupt: AtomicU64,
    in_flight: Arc<InFlight>,
}

/// An asset found for a request, and the in-flight memory of the bodies
/// read for it (given back once its response is sent).
pub(crate) type Found = (Asset, Option<Reservation>);

/// Where a piece of a stream left in the catalog is, and what it must
/// hash to.
#[derive(Debug, Clone)]
pub(crate) struct PieceAt {
    pub blob_id: i64,
    pub coding: crate::catalog::pieces::Coding,
    pub index: usize,
    pub digests: Arc<[[u8; 16]]>,
    pub verified: Arc<crate::serve::stored::Verified>,
    pub stream_len: u64,
}

impl PieceAt {
    /// The bytes `part` (within the stream) of the piece: the whole piece,
    /// read and checked against its digest, the first time this server
    /// reads it; only `part`, when it was checked before. Returns the
    /// bytes and where `part` starts in them.
    fn read(&self, catalog: &Catalog, part: std::ops::Range<u64>) -> Result<(Vec<u8>, usize)> {
        let piece = crate::catalog::pieces::piece_range(self.index, self.stream_len);
        if self.verified.is(self.index) {
            let mut bytes = vec![0; (part.end - part.start) as usize];
            catalog.read_stream(self.blob_id, self.coding, part.start, &mut bytes)?;
            return Ok((bytes, 0));
        }
        let mut bytes = Vec::new();
        catalog.read_piece(
            self.blob_id,
            self.coding,
            self.index,
            &self.digests,
            self.stream_len,
            &mut bytes,
        )?;
        self.verified.mark(self.index);
        Ok((bytes, (part.start - piece.start) as usize))
    }
}

/// Messages the store actor handles; callers use [`Handle`]'s methods.
enum Msg {
    Get(AssetKey, Want, Reply<Result<Option<Found>>>),
    /// An asset's entry for a dictionary, from its entry without one.
    GetDelta(AssetKey, Asset, Reply<Result<Option<Found>>>),
    /// A worker's miss, offered to the cache (`readers`).
    Offer(Offer),
    /// A slot's offers are waiting: take every slot's.
    TakeOffers,
    /// The exact version a selector picks, if any.
    Resolve(String, Selector, Reply<Result<Option<Resolved>>>),
    List(String, String, Page, Reply<Result<Option<VersionFiles>>>),
    /// An exact version's import map, with integrity or without.
    ImportMap(String, String, bool, Reply<Result<Option<ImportMap>>>),
    Package(String, Page, Reply<Result<Option<PackageVersions>>>),
    Entry(String, String, Reply<Result<Option<Option<String>>>>),
    /// The path of an exact version equal to one but for case.
    CaseVariant(String, String, String, Reply<Result<Option<String>>>),
    /// Every package with its totals.
    Packages(Page, Reply<Result<Vec<PackageRow>>>),
    /// Every site, with what it serves.
    Sites(Reply<Result<SiteMap>>),
    /// One checked chunk of a big file's blob.
    Chunk(ChunkedBlob, u64, Reply<Result<Vec<u8>>>),
    /// Part of a checked piece of a stream left in the catalog.
    Piece(
        PieceAt,
        std::ops::Range<u64>,
        Reply<Result<(Vec<u8>, usize)>>,
    ),
    Stats(Reply<CacheStats>),
    Health(Reply<CatalogHealth>),
}

/// How HTTP workers reach the store: cache hits and reads the pool can
/// take are done on the worker's thread, the rest is a call on the actor.
#[derive(Clone)]
pub struct Handle {
    actor: actor::Handle<Msg>,
    shared: Arc<Shared>,
}

impl Handle {
    /// Asks the actor and waits for its reply.
    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Msg) -> Result<T> {
        Ok(self.actor.call(make)?)
    }

    /// One file of an exact version, whole, or None when there is no such
    /// file, for a caller that sends no response (a benchmark, a test): a
    /// body read for it gives its in-flight reservation back at once.
    pub fn get(&self, key: AssetKeyRef<'_>) -> Result<Option<Asset>> {
        match self.cached(key) {
            Some(hit) => Ok(Some(hit)),
            None => Ok(self
                .load(key, Want::Whole, Brotli::Accepted)?
                .map(|(asset, _)| asset)),
        }
    }

    /// The cached asset, if any: the worker's own lookup, no message.
    pub(crate) fn cached(&self, key: AssetKeyRef<'_>) -> Option<Asset> {
        let _s = causal::site!(CACHE_LOOKUP);
        self.shared.cache.get(&key)
    }

    /// Loads an asset the cache did not have, on a pooled connection, and
    /// offers it to the cache without waiting (`readers`) when it is all
    /// in memory; asks the actor when the pool cannot read (the actor's
    /// cache may have it by now, from another worker's miss). The
    /// reservation holds the in-flight memory of bodies read for this
    /// response (`load`).
    pub(crate) fn load(
        &self,
        key: AssetKeyRef<'_>,
        want: Want,
        brotli: Brotli,
    ) -> Result<Option<Found>> {
        let shared = &self.shared;
        let read = shared.readers.read(|catalog, outbox| {
            let key = key.to_key();
            let seen = outbox.seen();
            let Some(loaded) = load::load(catalog, &key, shared, want, brotli, seen)? else {
                return Ok(None);
            };
            let asset = shared.cache.wrap(key, loaded.prepared, loaded.weight);
            let _s = causal::site!(CACHE_INSERT);
            let kept = match loaded.keep {
                Keep::Offer { counted } if shared.cache.is_on() => {
                    outbox.offer(asset.clone(), loaded.weight, counted);
                    Some(shared.admit_waiting(outbox))
                }
                _ => None,
            };
            Ok(Some((asset, loaded.reserved, kept)))
        });
        let Some(read) = read else {
            return self.call(|reply| Msg::Get(key.to_key(), want, reply))?;
        };
        let Some((asset, reserved, kept)) = read.result? else {
            return Ok(None);
        };
        // Lossy: a full inbox drops the message (`readers`).
        match kept {
            Some(Kept::Full) => self.actor.try_tell(Msg::TakeOffers),
            Some(Kept::Send(offer)) => self.actor.try_tell(Msg::Offer(offer)),
            Some(Kept::Held | Kept::Admitted) | None => true,
        };
        Ok(Some((asset, reserved)))
    }

    /// The asset's entry for the dictionary `key` names: `plain` (its
    /// entry without one) with its deltas against that dictionary, from
    /// the cache, or loaded and offered to it as [`Handle::load`] does.
    /// None when there is none to send now (`load::load_delta`).
    pub(crate) fn delta(&self, key: AssetKeyRef<'_>, plain: &Asset) -> Result<Option<Found>> {
        if let Some(hit) = self.cached(key) {
            return Ok(Some((hit, None)));
        }
        let shared = &self.shared;
        let read = shared.readers.read(|catalog, outbox| {
            let key = key.to_key();
            let Some(loaded) = load::load_delta(catalog, &key, plain.value(), shared)? else {
                return Ok(None);
            };
            let asset = shared.cache.wrap(key, loaded.prepared, loaded.weight);
            let _s = causal::site!(CACHE_INSERT);
            let kept = shared.cache.is_on().then(|| {
                outbox.offer(asset.clone(), loaded.weight, false);
                shared.admit_waiting(outbox)
            });
            Ok(Some((asset, loaded.reserved, kept)))
        });
        let Some(read) = read else {
            return self.call(|reply| Msg::GetDelta(key.to_key(), plain.clone(), reply))?;
        };
        let Some((asset, reserved, kept)) = read.result? else {
            return Ok(None);
        };
        match kept {
            Some(Kept::Full) => self.actor.try_tell(Msg::TakeOffers),
            Some(Kept::Send(offer)) => self.actor.try_tell(Msg::Offer(offer)),
            Some(Kept::Held | Kept::Admitted) | None => true,
        };
        Ok(Some((asset, reserved)))
    }

    /// Whether a body of `bytes` could be read whole and cached: the cache
    /// is on and holds that much (`load`).
    pub(crate) fn could_cache(&self, bytes: u64) -> bool {
        self.shared.cache.is_on() && bytes <= self.shared.config.cache_bytes
    }

    /// The in-flight budget (`--in-flight-bytes`).
    pub(crate) fn in_flight(&self) -> &Arc<InFlight> {
        &self.shared.in_flight
    }

    /// A read on a pooled connection, or the actor's answer when the pool
    /// cannot read.
    fn read<T>(
        &self,
        read: impl FnOnce(&Catalog) -> Result<T>,
        ask: impl FnOnce(Reply<Result<T>>) -> Msg,
    ) -> Result<T> {
        match self.shared.readers.read(|catalog, _| read(catalog)) {
            Some(read) => read.result,
            None => self.call(ask)?,
        }
    }

    /// The exact version `selector` picks for `package`, if any.
    pub(crate) fn resolve(&self, package: &str, selector: Selector) -> Result<Option<Resolved>> {
        self.read(
            |c| queries::resolve(c, package, &selector),
            |reply| Msg::Resolve(package.to_string(), selector.clone(), reply),
        )
    }

    /// The dist-tags of `package` and its versions in `page`, if it has
    /// any version.
    pub(crate) fn package(&self, package: String, page: Page) -> Result<Option<PackageVersions>> {
        self.read(
            |c| c.package_versions(&package, page),
            |reply| Msg::Package(package.clone(), page, reply),
        )
    }

    /// The entry file of `package@version` (an exact version): None when
    /// there is no such version, `Some(None)` when no rule finds a file.
    pub(crate) fn entry(&self, package: String, version: String) -> Result<Option<Option<String>>> {
        let shared = &self.shared;
        match shared
            .readers
            .read(|c, _| queries::entry(c, &shared.entries, &package, &version))
        {
            Some(read) => Ok(read.result?.map(|found| found.remember(shared, read.seen))),
            None => self.call(|reply| Msg::Entry(package, version, reply))?,
        }
    }

    /// The path of `package@version` (exact) that equals `path` but for
    /// ASCII case, if there is one: for a 404's "did you mean".
    pub(crate) fn case_variant(
        &self,
        package: String,
        version: String,
        path: String,
    ) -> Result<Option<String>> {
        self.read(
            |c| queries::case_variant(c, &package, &version, &path),
            |reply| Msg::CaseVariant(package.clone(), version.clone(), path.clone(), reply),
        )
    }

    /// The files of `package@version` in `page`, if that exact version
    /// exists.
    pub(crate) fn list(
        &self,
        package: String,
        version: String,
        page: Page,
    ) -> Result<Option<VersionFiles>> {
        self.read(
            |c| queries::list(c, &package, &version, page),
            |reply| Msg::List(package.clone(), version.clone(), page, reply),
        )
    }

    /// The import map of `package@version` (root-relative, with
    /// `integrity` if asked), if that exact version exists.
    pub(crate) fn import_map(
        &self,
        package: String,
        version: String,
        integrity: bool,
    ) -> Result<Option<ImportMap>> {
        self.read(
            |c| queries::import_map(c, &package, &version, integrity),
            |reply| Msg::ImportMap(package.clone(), version.clone(), integrity, reply),
        )
    }

    /// The sites, as read once per change of the catalog: the map read
    /// last, unless the catalog changed since the read it was made in
    /// began (`site::map`).
    pub(crate) fn sites(&self) -> Result<Arc<SiteMap>> {
        let shared = &self.shared;
        let changes = shared.readers.changes();
        if let Some((seen, map)) = &*shared.sites.read().unwrap_or_else(PoisonError::into_inner)
            && *seen == changes
        {
            return Ok(map.clone());
        }
        let (map, seen) = match shared.readers.read(|c, _| SiteMap::read(c)) {
            Some(read) => (Arc::new(read.result?), read.seen),
            None => (Arc::new(self.call(Msg::Sites)??), changes),
        };
        *shared.sites.write().unwrap_or_else(PoisonError::into_inner) = Some((seen, map.clone()));
        Ok(map)
    }

    /// The packages of `page` with their totals, by name.
    pub(crate) fn packages(&self, page: Page) -> Result<Vec<PackageRow>> {
        self.read(|c| c.packages(page), |reply| Msg::Packages(page, reply))
    }

    /// The next piece of a big file's range, read and checked a chunk at
    /// a time, each read its own short transaction (`catalog::chunks`).
    /// The piece's memory is `reserved`, given back when its bytes are
    /// dropped.
    pub(crate) fn next_piece(
        &self,
        cursor: &mut ChunkCursor,
        reserved: Reservation,
    ) -> Result<Option<bytes::Bytes>> {
        let Some(seq) = cursor.next_seq() else {
            return Ok(None);
        };
        let blob = cursor.blob;
        let chunk = self.read(
            |c| c.read_chunk(&blob, seq),
            |reply| Msg::Chunk(blob, seq, reply),
        )?;
        let chunk = crate::serve::in_flight::owned_bytes(chunk, Some(reserved));
        Ok(Some(cursor.take(chunk)))
    }

    /// The bytes `part` of piece `at.index` of a stream left in the
    /// catalog, in their own short read ([`PieceAt`] says which bytes are
    /// read and how they are checked), and where `part` starts in them.
    pub(crate) fn piece(
        &self,
        at: &PieceAt,
        part: std::ops::Range<u64>,
    ) -> Result<(Vec<u8>, usize)> {
        self.read(
            |c| at.read(c, part.clone()),
            |reply| Msg::Piece(at.clone(), part.clone(), reply),
        )
    }

    /// The cache's counters.
    pub fn stats(&self) -> Result<CacheStats> {
        self.call(Msg::Stats)
    }

    /// How the catalog being served relates to the file its path names.
    pub(crate) fn health(&self) -> Result<CatalogHealth> {
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
    let shared = Arc::new(Shared::new(config));
    let owned = shared.clone();
    let actor = actor::spawn("store", 1024, move || Store::open(owned))?;
    Ok(Running {
        handle: Handle {
            actor: actor.handle.clone(),
            shared,
        },
        actor,
    })
}

impl Shared {
    fn new(config: Config) -> Shared {
        let cache = Cache::new(config.cache_entries, config.cache_bytes);
        Shared {
            readers: Readers::new(
                config.db.clone(),
                config.readers,
                SharingBound {
                    reads: SHARED_READS,
                    span: SHARED_SPAN,
                },
            ),
            cache: cache.reader(),
            policy: Mutex::new(cache),
            index: FileIndex::new(config.index_bytes),
            entries: Mutex::new(HashMap::new()),
            sites: RwLock::new(None),
            misses: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
            in_flight: InFlight::new(config.in_flight_bytes),
            config,
        }
    }

    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The cache's owner side, waiting for whoever holds it.
    fn policy(&self) -> MutexGuard<'_, Cache<AssetKey, Prepared>> {
        self.policy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the cache would refuse, now, an asset for `key` of at least
    /// `weight` (`Cache::refuses`, which counts the access): true with the
    /// cache off; None when another thread holds the owner side.
    fn refuses(&self, key: &AssetKey, weight: u64) -> Option<bool> {
        if !self.cache.is_on() {
            return Some(true);
        }
        let mut cache = match self.policy.try_lock() {
            Ok(cache) => cache,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(cache.refuses(key, weight))
    }

    /// Admits the offers waiting in a worker's slot when no one holds the
    /// cache's owner side; otherwise they wait there for the next worker
    /// or the actor (`readers`).
    fn admit_waiting(&self, outbox: &mut Outbox<'_>) -> Kept {
        let mut cache = match self.policy.try_lock() {
            Ok(cache) => cache,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return outbox.kept(),
        };
        outbox.admit(&mut cache, self.readers.changes());
        Kept::Admitted
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{catalog_with, css, key, store};
    use super::*;
    use crate::catalog::{Access, Catalog};

    #[test]
    fn the_default_byte_budget_parses() {
        assert_eq!(crate::units::parse_size(DEFAULT_CACHE_BYTES), Ok(256 << 20));
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
        let config = Config {
            db: empty.path().join("cdn.db"),
            cache_entries: 10,
            cache_bytes: 1 << 20,
            index_bytes: 1 << 20,
            in_flight_bytes: 1 << 20,
            log_misses: false,
            readers: 0,
            max_lag: None,
        };
        let other = start(config.clone()).unwrap();
        let handle = Handle {
            actor: other.handle.actor.clone(),
            shared: Arc::new(Shared {
                cache: owner.workers.cache.clone(),
                ..Shared::new(config)
            }),
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

    /// The worker's miss of `path` (a pooled read), for a client that
    /// takes brotli or not, and whether the asset it got holds brotli.
    fn miss(handle: &Handle, path: &str, brotli: Brotli) -> bool {
        let (asset, _) = handle
            .load(key(path).borrowed(), Want::Whole, brotli)
            .unwrap()
            .expect("the file is there");
        asset.value().stored.brotli.is_some()
    }

    /// A miss the cache would refuse, from a client that does not take
    /// brotli, reads only the stored stream and is not offered; the same
    /// miss for a client that takes brotli reads both. Each refused miss
    /// still counts, so a file that keeps being asked for wins its place,
    /// whole.
    #[test]
    fn a_miss_the_cache_would_refuse_reads_only_what_it_sends() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        testing::publish_at(&db, "1.0.0", &[("a.css", css(1)), ("b.css", css(2))]);
        let running = start(Config {
            db,
            cache_entries: 1,
            cache_bytes: 1 << 20,
            index_bytes: 1 << 20,
            in_flight_bytes: 1 << 20,
            log_misses: false,
            readers: 1,
            max_lag: None,
        })
        .unwrap();
        let handle = running.handle.clone();
        let cached = |path: &str| handle.cached(key(path).borrowed()).is_some();
        // `a` fills the cache and is asked for often.
        assert!(miss(&handle, "a.css", Brotli::Accepted));
        for _ in 0..4 {
            assert!(cached("a.css"));
        }
        // `b`'s first miss is looked up (whole) and refused; its record is
        // indexed.
        assert!(miss(&handle, "b.css", Brotli::NotAccepted));
        assert!(!cached("b.css"));
        let refused = handle.stats().unwrap().rejections;
        assert!(
            !miss(&handle, "b.css", Brotli::NotAccepted),
            "no brotli read"
        );
        assert_eq!(handle.stats().unwrap().rejections, refused + 1);
        assert!(miss(&handle, "b.css", Brotli::Accepted), "brotli read");
        // Its record's lines name the brotli stream left in the catalog:
        // the gzip head is the same either way.
        let head = |brotli| {
            let load = handle.load(key("b.css").borrowed(), Want::Whole, brotli);
            let (asset, _) = load.unwrap().expect("the file is there");
            asset.value().head(crate::encoding::Encoding::Gzip, true)
        };
        assert_eq!(head(Brotli::NotAccepted), head(Brotli::Accepted));
        assert!(cached("a.css") && !cached("b.css"));
        // Asked for more often than `a`, `b` is read whole and cached.
        let mut misses = 0;
        while !cached("b.css") {
            misses += 1;
            assert!(misses < 16, "b never admitted");
            miss(&handle, "b.css", Brotli::NotAccepted);
        }
        let entry = handle.cached(key("b.css").borrowed()).unwrap();
        assert!(entry.value().stored.brotli.is_some(), "cached whole");
        drop((handle, entry));
        running.join();
    }
}

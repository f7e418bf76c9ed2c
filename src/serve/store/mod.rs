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
//! # Where each part is
//!
//! This file has the [`Handle`] workers use, the messages it sends the
//! actor, and [`start`]. The rest, one concern a file:
//!
//! - `owner`: the actor, its state and its loop;
//! - `load`: a cache miss, from the catalog's row to a cached asset, and
//!   the check of every body loaded;
//! - `watch`: staleness, and the catalog file replaced or deleted;
//! - `shared_read`: one read transaction for reads close together;
//! - `key`: the cache key.
//!
//! The asset as loaded, before its responses are prepared, is
//! [`StoredAsset`](crate::serve::stored::StoredAsset).

mod key;
mod load;
mod owner;
mod shared_read;
#[cfg(test)]
mod testing;
mod watch;

pub use key::{Asset, AssetKey, AssetKeyRef};
pub use shared_read::{SHARED_READS, SHARED_SPAN};
pub use watch::{CatalogHealth, CatalogState, STALENESS_CHECK};

use crate::actor::{self, Reply};
use crate::catalog::query::{PackageRow, PackageVersions, Page, VersionFiles};
use crate::causal;
use crate::error::Result;
use crate::serve::cache::{Cache, Reader};
use crate::serve::prepared::Prepared;
use crate::spec::Selector;
use owner::Store;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

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

/// The exact version an alias (`latest`, a dist-tag, a range) names now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub version: String,
    /// The version's row id: a forced republish gives it a new one.
    pub id: i64,
}

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
}

impl Handle {
    /// Asks the actor and waits for its reply.
    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Msg) -> Result<T> {
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
        },
        actor,
    })
}

#[cfg(test)]
mod tests {
    use super::testing::{catalog_with, key, store};
    use super::*;
    use crate::catalog::{Access, Catalog};

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
}

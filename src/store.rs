//! The store actor: the one owner of the server's read-only catalog
//! connection and of the asset cache, so neither needs a lock.
//!
//! HTTP workers ask it for assets, version resolutions and listings through
//! an [`actor::Handle`]; a cache hit hands back an `Arc` of the stored body,
//! so no body bytes are copied between the cache and the socket.
//!
//! # Cache
//!
//! Strict LRU (`lru`, O(1) get/put/pop), bounded both by entries
//! (`--cache-capacity`, 0 turns the cache off) and by body bytes
//! (`--cache-bytes`); an asset larger than the byte budget is never cached.
//! Keys are `(package, exact version, path)`; ranges are resolved before
//! the cache is consulted.
//!
//! # Every body is checked before it is used
//!
//! A body loaded from SQLite (a cache miss) is checked against its record
//! before it is cached or sent: decoded when stored gzip, it must have the
//! recorded size and sha256 (the digest covers the raw file, so a gzip
//! body is inflated to check it). A body that fails is neither cached nor
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
//! republish gets a new row id, so it is caught too). A deleted asset stops
//! being served within that interval.

use crate::actor::{self, Actor, Reply};
use crate::catalog::query::{StoredAsset, VersionFiles};
use crate::catalog::{Access, Catalog};
use crate::causal;
use crate::error::{Error, Result};
use crate::log;
use crate::spec::Selector;
use lru::LruCache;
use serde::Serialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the actor checks whether another process changed the catalog.
pub const STALENESS_CHECK: Duration = Duration::from_millis(250);

/// Default `--cache-capacity`.
pub const DEFAULT_CACHE_ENTRIES: usize = 256;
/// Default `--cache-bytes`: 64 MiB.
pub const DEFAULT_CACHE_BYTES: u64 = 64 << 20;

/// How the store is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub db: PathBuf,
    pub cache_entries: usize,
    pub cache_bytes: u64,
    /// Print a line to stderr for every cache miss.
    pub log_misses: bool,
}

/// A cache key: one file of one exact version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AssetKey {
    pub package: String,
    pub version: String,
    pub path: String,
}

/// Cache counters, cumulative since the server started.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Entries dropped because their version was deleted or replaced.
    pub invalidations: u64,
    /// Loaded bodies that failed their recorded size or sha256, and were
    /// neither cached nor sent.
    pub corrupt: u64,
    pub entries: u64,
    pub bytes: u64,
    pub max_entries: u64,
    pub max_bytes: u64,
}

/// Messages the store actor handles.
pub enum Msg {
    Get(AssetKey, Reply<Result<Option<Arc<StoredAsset>>>>),
    /// The exact version a selector picks, if any.
    Resolve(String, Selector, Reply<Result<Option<String>>>),
    List(String, String, Reply<Result<Option<VersionFiles>>>),
    Stats(Reply<CacheStats>),
}

/// The handle HTTP workers use.
pub type Handle = actor::Handle<Msg>;

/// Starts the store actor; fails (before any port is bound) when the
/// catalog is missing or not a catalog.
pub fn start(config: Config) -> Result<actor::Running<Msg>> {
    actor::spawn("store", 1024, move || Store::open(config))
}

struct Store {
    catalog: Catalog,
    cache: LruCache<AssetKey, Arc<StoredAsset>>,
    config: Config,
    stats: CacheStats,
    data_version: i64,
}

impl Store {
    fn open(config: Config) -> Result<Store> {
        let catalog = Catalog::open(&config.db, Access::ReadOnly)?;
        let data_version = catalog.data_version()?;
        Ok(Store {
            catalog,
            cache: LruCache::unbounded(),
            stats: CacheStats {
                max_entries: config.cache_entries as u64,
                max_bytes: config.cache_bytes,
                ..CacheStats::default()
            },
            config,
            data_version,
        })
    }

    fn get(&mut self, key: AssetKey) -> Result<Option<Arc<StoredAsset>>> {
        let hit = {
            let _s = causal::site!(CACHE_LOOKUP);
            self.cache.get(&key).cloned()
        };
        if let Some(hit) = hit {
            self.stats.hits += 1;
            return Ok(Some(hit));
        }
        self.stats.misses += 1;
        let started = Instant::now();
        let found = {
            let _s = causal::site!(SQLITE_QUERY);
            self.catalog.lookup(&key.package, &key.version, &key.path)?
        };
        let Some(asset) = found else {
            return Ok(None);
        };
        if let Err(wrong) = asset.check() {
            self.stats.corrupt += 1;
            return Err(Error::Corrupt {
                path: self.config.db.clone(),
                what: format!(
                    "{}@{}/{} (blob sha256 {}) {wrong}; not served",
                    key.package,
                    key.version,
                    key.path,
                    hex::encode(asset.sha256)
                ),
            });
        }
        let asset = Arc::new(asset);
        if self.config.log_misses {
            log::err(format_args!(
                "cache miss: {}@{}/{} ({} bytes, {} us)",
                key.package,
                key.version,
                key.path,
                asset.body.len(),
                started.elapsed().as_micros()
            ));
        }
        {
            let _s = causal::site!(CACHE_INSERT);
            self.insert(key, asset.clone());
        }
        Ok(Some(asset))
    }

    /// Caches an asset, evicting least recently used entries to stay within
    /// both budgets.
    fn insert(&mut self, key: AssetKey, asset: Arc<StoredAsset>) {
        let size = asset.body.len() as u64;
        if self.config.cache_entries == 0 || size > self.config.cache_bytes {
            return;
        }
        while self.cache.len() >= self.config.cache_entries
            || self.stats.bytes + size > self.config.cache_bytes
        {
            match self.cache.pop_lru() {
                Some((_, old)) => {
                    self.stats.bytes -= old.body.len() as u64;
                    self.stats.evictions += 1;
                }
                None => break,
            }
        }
        self.stats.bytes += size;
        if let Some(old) = self.cache.put(key, asset) {
            // Two misses for one key raced through the inbox: keep one.
            self.stats.bytes -= old.body.len() as u64;
        }
    }

    /// Drops cached entries whose version no longer exists.
    fn drop_stale(&mut self) -> Result<()> {
        let version_ids: HashSet<i64> = self.cache.iter().map(|(_, a)| a.version_id).collect();
        let mut gone = HashSet::new();
        for id in version_ids {
            if !self.catalog.version_exists(id)? {
                gone.insert(id);
            }
        }
        if gone.is_empty() {
            return Ok(());
        }
        let doomed: Vec<AssetKey> = self
            .cache
            .iter()
            .filter(|(_, a)| gone.contains(&a.version_id))
            .map(|(k, _)| k.clone())
            .collect();
        for key in doomed {
            if let Some(old) = self.cache.pop(&key) {
                self.stats.bytes -= old.body.len() as u64;
                self.stats.invalidations += 1;
            }
        }
        Ok(())
    }

    fn resolve(&self, package: &str, selector: &Selector) -> Result<Option<String>> {
        match self.catalog.resolve(package, selector) {
            Ok(v) => Ok(Some(v.version.to_string())),
            Err(Error::PackageNotFound(_) | Error::VersionNotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn list(&self, package: &str, version: &str) -> Result<Option<VersionFiles>> {
        let Ok(exact) = semver::Version::parse(version) else {
            return Ok(None);
        };
        let v = match self.catalog.resolve(package, &Selector::Exact(exact)) {
            Ok(v) => v,
            Err(Error::PackageNotFound(_) | Error::VersionNotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.catalog.version_files(v).map(Some)
    }
}

impl Actor for Store {
    type Msg = Msg;

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Get(key, reply) => reply.send(self.get(key)),
            Msg::Resolve(package, selector, reply) => reply.send(self.resolve(&package, &selector)),
            Msg::List(package, version, reply) => reply.send(self.list(&package, &version)),
            Msg::Stats(reply) => {
                let mut stats = self.stats.clone();
                stats.entries = self.cache.len() as u64;
                reply.send(stats);
            }
        }
    }

    fn housekeeping_every(&self) -> Option<Duration> {
        Some(STALENESS_CHECK)
    }

    fn housekeeping(&mut self) {
        let result = self.catalog.data_version().and_then(|now| {
            if now != self.data_version {
                self.data_version = now;
                self.drop_stale()?;
            }
            Ok(())
        });
        if let Err(e) = result {
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
    use std::path::Path;

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
        AssetKey {
            package: "app".into(),
            version: "1.0.0".into(),
            path: path.into(),
        }
    }

    fn store(db: PathBuf, entries: usize, bytes: u64) -> Store {
        Store::open(Config {
            db,
            cache_entries: entries,
            cache_bytes: bytes,
            log_misses: false,
        })
        .unwrap()
    }

    #[test]
    fn hits_share_the_body_and_budgets_evict_in_lru_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 1000), ("b", 1000), ("c", 1000)]);
        let mut s = store(db, 2, 1 << 20);
        let first = s.get(key("a")).unwrap().unwrap();
        let again = s.get(key("a")).unwrap().unwrap();
        assert!(
            Arc::ptr_eq(&first.body, &again.body),
            "a hit copies no body bytes"
        );
        s.get(key("b")).unwrap();
        s.get(key("a")).unwrap(); // a is now most recent
        s.get(key("c")).unwrap(); // evicts b
        assert_eq!((s.stats.hits, s.stats.misses, s.stats.evictions), (2, 3, 1));
        assert!(s.cache.contains(&key("a")) && !s.cache.contains(&key("b")));
        assert!(s.get(key("nope")).unwrap().is_none());
    }

    #[test]
    fn the_byte_budget_bounds_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 600), ("b", 600), ("big", 5000)]);
        let mut s = store(db, 100, 1000);
        let size = |s: &mut Store, p: &str| s.get(key(p)).unwrap().unwrap().body.len() as u64;
        assert_eq!(size(&mut s, "a"), 600);
        size(&mut s, "b");
        assert_eq!(s.cache.len(), 1, "600 + 600 bytes do not fit in 1000");
        assert_eq!((s.stats.bytes, s.stats.evictions), (600, 1));
        size(&mut s, "big");
        assert!(
            !s.cache.contains(&key("big")),
            "larger than the budget: never cached"
        );
        assert!(s.stats.bytes <= 1000);
        let mut off = store(dir.path().join("cdn.db"), 0, 1000);
        off.get(key("a")).unwrap();
        assert_eq!(off.cache.len(), 0, "capacity 0 turns the cache off");
    }

    #[test]
    fn deleted_versions_leave_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        s.get(key("a")).unwrap().unwrap();
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let id = writer.versions("app").unwrap()[0].id;
        writer.remove_versions(&[id], false).unwrap();
        s.housekeeping();
        assert_eq!(s.stats.invalidations, 1);
        assert!(s.get(key("a")).unwrap().is_none());
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
        assert!(text_asset.gzip, "text is stored gzip");
        let text_sha = hex::encode(text_asset.sha256);
        s.cache.clear();
        s.stats.bytes = 0;

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
        assert_eq!(s.cache.len(), 0, "nothing that failed was cached");
    }
}

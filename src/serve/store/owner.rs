//! The store actor: the state it owns (its catalog connection, the cache,
//! the workers' pool of connections) and its loop. Each message is a
//! worker's miss offered to the cache, or a read the pool could not take,
//! answered from the cache or with a catalog query; the shared read
//! transaction ends when the inbox has stayed empty for what is left of its
//! span; at every housekeeping tick the workers' hits are replayed, idle
//! pooled transactions past their span ended and the catalog checked for
//! changes. How an asset is loaded is in `load`, how the actor follows the
//! catalog file in `watch`, how its reads share a transaction in
//! `shared_read`, how the pool's stay fresh in `readers`.

use super::queries;
use super::readers::{self, Offer};
use super::shared_read::{self, SHARED_READS, SHARED_SPAN, SharedRead, SharingBound, share};
use super::watch::{
    CatalogHealth, CatalogState, FollowerHealth, STALENESS_CHECK, Served, Watch, open_file,
};
use super::{AssetKey, CacheStats, Msg, Shared};
use crate::actor::Actor;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::log;
use crate::serve::cache::Cache;
use crate::serve::prepared::Prepared;
use crate::serve::site::map::SiteMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

/// The actor's state: everything the store owns.
pub(super) struct Store {
    pub(super) served: Served,
    /// The read transaction reads share, when one is open.
    pub(super) shared: Option<SharedRead>,
    pub(super) bound: SharingBound,
    /// What the workers see of the store: the cache's reader, the pool of
    /// connections they read with, the entry files, the miss counters.
    pub(super) workers: Arc<Shared>,
    /// The offers taken from the slots, being admitted (kept for its
    /// allocation).
    offers: Vec<Offer>,
}

impl Store {
    pub(super) fn open(workers: Arc<Shared>) -> Result<Store> {
        let (catalog, file, data_version, recoded_seen) = open_file(&workers.config.db)?;
        let store = Store {
            served: Served {
                catalog: Some(catalog),
                file: Some(file),
                state: CatalogState::Current,
                problem: None,
                logged: None,
                reloads: 0,
                data_version,
                recoded_seen,
                // As at start, which `ccc serve` itself reports.
                follower_stale: workers
                    .config
                    .max_lag
                    .map(|lag| FollowerHealth::of(&workers.config.db, lag).stale),
            },
            shared: None,
            bound: SharingBound {
                reads: SHARED_READS,
                span: SHARED_SPAN,
            },
            workers,
            offers: Vec::new(),
        };
        store.served.open_readers(&store.workers);
        Ok(store)
    }

    /// What following the catalog file works on (see `watch`).
    fn watch(&mut self) -> Watch<'_> {
        Watch {
            served: &mut self.served,
            shared: &mut self.shared,
            workers: &self.workers,
        }
    }

    /// The catalog to query, after making sure it is the one the path
    /// names (see `watch`), inside the shared read transaction (see
    /// `shared_read`); an error when there is no catalog.
    pub(super) fn catalog(&mut self) -> Result<&Catalog> {
        self.watch().follow_path(false);
        let Some(catalog) = &self.served.catalog else {
            return Err(Error::Unavailable {
                path: self.workers.config.db.clone(),
                why: self
                    .served
                    .problem
                    .clone()
                    .unwrap_or_else(|| "no catalog is open".into()),
            });
        };
        share(catalog, &mut self.shared, self.bound)?;
        Ok(catalog)
    }

    pub(super) fn stats(&self) -> CacheStats {
        let counts = self.cache().stats();
        let config = &self.workers.config;
        CacheStats {
            hits: counts.hits,
            misses: self.workers.misses.load(Ordering::Relaxed),
            evictions: counts.evictions,
            rejections: counts.rejections,
            invalidations: counts.invalidations,
            corrupt: self.workers.corrupt.load(Ordering::Relaxed),
            entries: counts.entries,
            bytes: counts.bytes,
            max_entries: (config.cache_entries != usize::MAX)
                .then_some(config.cache_entries as u64),
            max_bytes: config.cache_bytes,
            index: self.workers.index.stats(),
        }
    }

    pub(super) fn resolve(
        &mut self,
        package: &str,
        selector: &crate::spec::Selector,
    ) -> Result<Option<super::Resolved>> {
        queries::resolve(self.catalog()?, package, selector)
    }

    fn entry(&mut self, package: &str, version: &str) -> Result<Option<Option<String>>> {
        let workers = self.workers.clone();
        let found = queries::entry(self.catalog()?, &workers.entries, package, version)?;
        // The actor's reads are never older than its last look for changes.
        Ok(found.map(|found| found.remember(&workers, workers.readers.changes())))
    }

    /// A worker's miss, offered to the cache (see `readers`): refused when
    /// read before the catalog last changed, and when the key is cached
    /// already (another worker's miss, or the actor's).
    fn offer(&mut self, offer: Offer) {
        readers::admit(&mut self.cache(), offer, self.workers.readers.changes());
    }

    /// Takes the offers waiting in the workers' slots.
    pub(super) fn take_offers(&mut self) {
        self.workers.readers.take_offers(&mut self.offers);
        let changes = self.workers.readers.changes();
        let mut cache = self.workers.policy();
        for offer in self.offers.drain(..) {
            readers::admit(&mut cache, offer, changes);
        }
    }

    /// Ends the shared read transaction, if one is open: the next read
    /// sees the catalog as it is now.
    pub(super) fn end_shared(&mut self) {
        shared_read::end(self.served.catalog.as_ref(), &mut self.shared);
    }

    /// A request's result, after ending the shared read transaction if the
    /// request failed: whatever went wrong stays out of the next reads.
    pub(super) fn after_read<T>(&mut self, result: Result<T>) -> Result<T> {
        if result.is_err() {
            self.end_shared();
        }
        result
    }

    /// What `/healthz` reports of the catalog (see `watch`).
    pub(super) fn health(&self) -> CatalogHealth {
        self.served.health(&self.workers)
    }

    /// The cache's owner side, which workers share (`readers`).
    pub(super) fn cache(&self) -> MutexGuard<'_, Cache<AssetKey, Prepared>> {
        self.workers.policy()
    }
}

impl Drop for Store {
    /// The connection closes with no transaction open.
    fn drop(&mut self) {
        self.workers.readers.close();
        self.end_shared();
    }
}

impl Actor for Store {
    type Msg = Msg;

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Get(key, want, reply) => {
                let result = self.get_for(key, want);
                reply.send(self.after_read(result))
            }
            Msg::GetDelta(key, plain, reply) => {
                let result = self.get_delta_for(key, plain.value());
                reply.send(self.after_read(result))
            }
            Msg::Resolve(package, selector, reply) => {
                let result = self.resolve(&package, &selector);
                reply.send(self.after_read(result))
            }
            Msg::Offer(offer) => self.offer(offer),
            Msg::TakeOffers => self.take_offers(),
            Msg::List(package, version, page, reply) => {
                let result = self
                    .catalog()
                    .and_then(|c| queries::list(c, &package, &version, page));
                reply.send(self.after_read(result))
            }
            Msg::CaseVariant(package, version, path, reply) => {
                let result = self
                    .catalog()
                    .and_then(|c| queries::case_variant(c, &package, &version, &path));
                reply.send(self.after_read(result))
            }
            Msg::ImportMap(package, version, integrity, reply) => {
                let result = self
                    .catalog()
                    .and_then(|c| queries::import_map(c, &package, &version, integrity));
                reply.send(self.after_read(result))
            }
            Msg::Package(package, page, reply) => {
                let result = self
                    .catalog()
                    .and_then(|c| c.package_versions(&package, page));
                reply.send(self.after_read(result))
            }
            Msg::Entry(package, version, reply) => {
                let result = self.entry(&package, &version);
                reply.send(self.after_read(result))
            }
            Msg::Sites(reply) => {
                let result = self.catalog().and_then(SiteMap::read);
                reply.send(self.after_read(result))
            }
            Msg::Packages(page, reply) => {
                let result = self.catalog().and_then(|c| c.packages(page));
                reply.send(self.after_read(result))
            }
            Msg::Chunk(blob, seq, reply) => {
                let result = self.catalog().and_then(|c| c.read_chunk(&blob, seq));
                reply.send(self.after_read(result))
            }
            Msg::Piece(at, part, reply) => {
                let result = self.catalog().and_then(|c| at.read(c, part));
                reply.send(self.after_read(result))
            }
            Msg::Stats(reply) => {
                // Counters that count what workers read: admitted.
                self.take_offers();
                reply.send(self.stats())
            }
            Msg::Health(reply) => reply.send(self.health()),
        }
    }

    fn inbox_empty(&mut self) {
        self.end_shared();
    }

    fn lingering(&self) -> Option<std::time::Instant> {
        self.shared
            .as_ref()
            .map(|open| open.begun + self.bound.span)
    }

    fn housekeeping_every(&self) -> Option<Duration> {
        Some(STALENESS_CHECK)
    }

    fn housekeeping(&mut self) {
        // The check needs the catalog as it is now, not a run's snapshot.
        self.end_shared();
        self.workers.readers.end_idle();
        self.take_offers();
        self.cache().replay();
        if let Err(e) = self.watch().check_staleness() {
            log::err(format_args!(
                "warning: checking the catalog for changes failed: {e}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Offer;
    use crate::actor::Actor;
    use crate::serve::store::testing::{cached, catalog_with, key, publish_at, store};

    #[test]
    fn an_offer_read_before_the_catalog_changed_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 10, 1 << 20);
        let asset = s.get(key("a")).unwrap().unwrap();
        s.cache().retain(|_| false);
        let before = s.workers.readers.changes();
        let offer = |asset: &super::super::Asset, seen| Offer {
            asset: asset.clone(),
            seen,
            counted: false,
        };
        s.offer(offer(&asset, before));
        assert!(cached(&s, "a"), "offered under the current count");
        s.cache().retain(|_| false);

        // Another process publishes: the catalog changed, no version went.
        publish_at(&db, "2.0.0", &[("b", vec![1])]);
        s.housekeeping();
        s.offer(offer(&asset, before));
        assert!(!cached(&s, "a"), "read before the change: refused");
        s.offer(offer(&asset, s.workers.readers.changes()));
        assert!(s.cache().holds(&asset));

        s.cache().retain(|_| false);
        let loaded = s.get(key("a")).unwrap().unwrap();
        s.offer(offer(&asset, s.workers.readers.changes()));
        assert!(
            s.cache().holds(&loaded) && !s.cache().holds(&asset),
            "cached already: the entry cached is kept"
        );
    }
}

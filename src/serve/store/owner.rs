//! The store actor: the state it owns (the catalog connection, the cache,
//! the entry files it remembers, its counters) and its loop. Each message
//! is answered from the cache or with a catalog query; the shared read
//! transaction ends when the inbox has stayed empty for what is left of
//! its span; at every housekeeping tick the
//! workers' hits are replayed and the catalog checked for changes. How it
//! loads an asset is in `load`, how it follows the catalog file in `watch`,
//! how its reads share a transaction in `shared_read`.

use super::shared_read::{SHARED_READS, SHARED_SPAN, SharedRead, SharingBound, share};
use super::watch::{CatalogState, STALENESS_CHECK, Served, open_file};
use super::{AssetKey, CacheStats, Config, Msg, Resolved};
use crate::actor::Actor;
use crate::catalog::Catalog;
use crate::catalog::query::{PackageVersions, Page, VersionFiles};
use crate::error::{Error, Result};
use crate::log;
use crate::serve::cache::Cache;
use crate::serve::prepared::Prepared;
use crate::spec::Selector;
use std::time::Duration;

/// Most versions whose entry file the store remembers; past it, it
/// forgets them all and starts again.
const ENTRY_MEMO: usize = 4096;

/// The actor's state: everything the store owns.
pub(super) struct Store {
    pub(super) served: Served,
    /// The read transaction reads share, when one is open.
    pub(super) shared: Option<SharedRead>,
    pub(super) bound: SharingBound,
    pub(super) cache: Cache<AssetKey, Prepared>,
    /// Entry files by version row id: a row's files never change, and a
    /// forced republish makes a new row. Emptied with the cache when the
    /// catalog file is replaced (row ids are per file).
    pub(super) entries: std::collections::HashMap<i64, Option<String>>,
    pub(super) config: Config,
    /// Misses and corrupt bodies; the cache keeps the rest of the counters.
    pub(super) stats: CacheStats,
}

impl Store {
    pub(super) fn open(config: Config, cache: Cache<AssetKey, Prepared>) -> Result<Store> {
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
    /// names (see `watch`), inside the shared read transaction (see
    /// `shared_read`); an error when there is no catalog.
    pub(super) fn catalog(&mut self) -> Result<&Catalog> {
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
        share(catalog, &mut self.shared, self.bound)?;
        Ok(catalog)
    }

    pub(super) fn stats(&self) -> CacheStats {
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

    pub(super) fn resolve(
        &mut self,
        package: &str,
        selector: &Selector,
    ) -> Result<Option<Resolved>> {
        match self.catalog()?.resolve(package, selector) {
            Ok(v) => Ok(Some(Resolved {
                version: v.version.to_string(),
                id: v.id,
            })),
            Err(
                Error::PackageNotFound { .. }
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
            Err(Error::PackageNotFound { .. } | Error::VersionNotFound { .. }) => return Ok(None),
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
        self.cache.replay();
        if let Err(e) = self.check_staleness() {
            log::err(format_args!(
                "warning: checking the catalog for changes failed: {e}"
            ));
        }
    }
}

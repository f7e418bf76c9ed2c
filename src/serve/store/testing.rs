//! What the store's tests share: catalogs published into a temporary
//! directory, a store opened on one without its actor, and lookups by path
//! in `app@1.0.0`.

use super::owner::Store;
use super::{AssetKey, Config, Shared};
use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
use crate::catalog::{Access, Catalog};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) fn catalog_with(dir: &std::path::Path, files: &[(&str, usize)]) -> PathBuf {
    let db = dir.join("cdn.db");
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, n)| (*p, noise(*n))).collect();
    publish_at(&db, "1.0.0", &files);
    db
}

/// Publishes `app@VERSION` with `files` into the catalog at `db`
/// (created when missing); the writer is closed when this returns.
pub(super) fn publish_at(db: &Path, version: &str, files: &[(&str, Vec<u8>)]) {
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

/// A stylesheet that gzip and brotli both shrink, different per `seed`.
pub(super) fn css(seed: usize) -> Vec<u8> {
    (0..400)
        .flat_map(|i| format!(".c{i} {{ color: #{:06x} }}\n", (i + seed) * 7919).into_bytes())
        .collect()
}

/// Incompressible bytes, so stored sizes equal raw sizes.
pub(super) fn noise(len: usize) -> Vec<u8> {
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

pub(super) fn key(path: &str) -> AssetKey {
    AssetKey::new("app", "1.0.0", path)
}

pub(super) fn store(db: PathBuf, entries: usize, bytes: u64) -> Store {
    let config = Config {
        db,
        cache_entries: entries,
        cache_bytes: bytes,
        index_bytes: 1 << 20,
        in_flight_bytes: 64 << 20,
        log_misses: false,
        readers: 0,
        max_lag: None,
    };
    Store::open(Arc::new(Shared::new(config))).unwrap()
}

pub(super) fn cached(s: &Store, path: &str) -> bool {
    s.workers.cache.get(&key(path)).is_some()
}

pub(super) fn body(s: &mut Store, path: &str) -> Vec<u8> {
    s.get(key(path))
        .unwrap()
        .unwrap()
        .value()
        .stored
        .body_bytes()
        .to_vec()
}

/// Renames `from` over `to`, as `mv` does.
pub(super) fn mv(from: &Path, to: &Path) {
    std::fs::rename(from, to).unwrap();
}

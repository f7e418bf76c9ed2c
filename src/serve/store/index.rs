//! The file index: what the catalog said of each file a miss read, without
//! its bytes, so that the next miss of that file reads only its bytes.
//!
//! A miss that finds nothing in the cache looks the file up by package,
//! version and path: three B-tree searches (the asset, its blob, its brotli
//! stream), the dictionaries it has deltas against, its content type and
//! `Use-As-Dictionary`. None of that changes while the version exists, so
//! the index keeps it ([`FileRecord`]): the blob's id, each stored stream's
//! length and XXH3-128, what the asset's responses are built from, and the
//! values of its header lines as the miss that made the record prepared
//! them (tags, lengths, `Last-Modified`: [`Lines`]). A miss of an indexed
//! file reads the blob's streams by its id, one search of each table by
//! rowid ([`Catalog::stored_streams`]), checks them against the recorded
//! lengths and digests, and shares the record's lines: it formats no
//! value. This is what nginx's `open_file_cache` keeps of a file (its
//! descriptor, size and modification time) while the page cache keeps its
//! bytes; here SQLite's pages are the page cache. A miss the cache
//! would refuse, for a client that does not take brotli, reads and checks
//! the stored stream alone (`load`).
//!
//! Only files whose streams are each at most a piece (read whole by the
//! lookup) and carry XXH3 digests are indexed: longer ones are read in
//! checked pieces, and their entries are cached whole already.
//!
//! # Never stale for longer than the cache
//!
//! The index is bounded by bytes (`--index-bytes`; 0 turns it off) and
//! kept as the cache is: a worker's record enters only when the catalog
//! has not changed since its read began, and the staleness watch drops the
//! records of deleted versions and of blobs whose streams changed
//! (`watch`), so an index record outlives its version no longer than a
//! cached asset does. A stream read through a record that no longer
//! matches it (another length or digest: recompressed since, or damaged)
//! is not sent: the miss looks the file up again, and a damaged stream is
//! then reported as any miss reports it.
//!
//! [`Catalog::stored_streams`]: crate::catalog::Catalog::stored_streams

use super::AssetKey;
use crate::catalog::Catalog;
use crate::catalog::content_type::ContentType;
use crate::catalog::digest::xxh3_digest;
use crate::catalog::lookup::AssetRecord;
use crate::encoding::Encoding;
use crate::error::Result;
use crate::serve::cache::{Cache, Counts, Entry, Lookup, Reader};
use crate::serve::prepared::{Lines, Prepared};
use crate::serve::stored::{Dictionaries, StoredAsset, Stream, line_value_bytes};
use http::HeaderValue;
use std::sync::{Arc, Mutex, PoisonError, TryLockError};

/// Default `--index-bytes`, as `--help` shows it (parsed like the flag).
/// A record of a typical front-end file (a script offered as a
/// dictionary) weighs about 1,050 bytes with its key, its lines and the
/// index's own bookkeeping, so 128 MiB indexes about 125,000 files.
pub(crate) const DEFAULT_INDEX_BYTES: &str = "128MiB";

/// What the index keeps of one file: everything a miss needs but its
/// stored bytes.
#[derive(Debug)]
pub(super) struct FileRecord {
    version_id: i64,
    blob_id: i64,
    encoding: Encoding,
    sha256: [u8; 32],
    raw_size: u64,
    published_at: i64,
    content_type: ContentType,
    stored: Checked,
    brotli: Option<Checked>,
    deltas: Dictionaries,
    use_as_dictionary: Option<HeaderValue>,
    /// The values of the asset's lines, shared with every asset read
    /// through the record.
    lines: Arc<Lines>,
}

/// A stored stream's length and recorded XXH3-128. An indexed stream is
/// at most a piece long, so its length fits 32 bits.
#[derive(Debug, Clone, Copy)]
struct Checked {
    len: u32,
    xxh3: [u8; 16],
}

impl Checked {
    fn of(bytes: &[u8], xxh3: [u8; 16]) -> Option<Checked> {
        Some(Checked {
            len: u32::try_from(bytes.len()).ok()?,
            xxh3,
        })
    }

    /// Whether `bytes` are the stream recorded.
    fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len as usize && xxh3_digest(bytes) == self.xxh3
    }
}

/// What a record takes of a checked row before the row becomes a
/// [`StoredAsset`] ([`FileRecord::of`]): the XXH3-128 of its streams (None
/// when a stream was not loaded, being longer than a piece, or has no
/// XXH3 digest), and its content type.
pub(super) struct RowParts {
    stored: Option<[u8; 16]>,
    brotli: Option<Option<[u8; 16]>>,
    content_type: ContentType,
}

impl RowParts {
    pub(super) fn of(row: &AssetRecord) -> RowParts {
        let loaded = |body: &Option<Arc<[u8]>>, xxh3: Option<[u8; 16]>| body.as_ref().and(xxh3);
        RowParts {
            content_type: row.content_type,
            stored: loaded(&row.body, row.stored.xxh3),
            brotli: row
                .brotli
                .as_ref()
                .map(|br| loaded(&br.body, br.stored.xxh3)),
        }
    }
}

impl FileRecord {
    /// The record of an asset a miss loaded and checked, with what `row`
    /// kept of its row; None when it cannot be indexed (module doc).
    pub(super) fn of(prepared: &Prepared, row: &RowParts) -> Option<FileRecord> {
        let asset = &prepared.stored;
        if asset.chunks.is_some() || asset.delta.is_some() {
            return None;
        }
        let checked = |stream: &Stream, xxh3: Option<[u8; 16]>| Checked::of(stream.bytes()?, xxh3?);
        let brotli = match (&asset.brotli, row.brotli) {
            (None, None) => None,
            (Some(stream), Some(xxh3)) => Some(checked(stream, xxh3)?),
            _ => return None,
        };
        Some(FileRecord {
            version_id: asset.version_id,
            blob_id: asset.blob_id,
            encoding: asset.encoding,
            sha256: asset.sha256,
            raw_size: asset.raw_size,
            published_at: asset.published_at,
            content_type: row.content_type,
            stored: checked(&asset.body, row.stored)?,
            brotli,
            deltas: asset.deltas.clone(),
            use_as_dictionary: asset.use_as_dictionary.clone(),
            lines: prepared.lines().clone(),
        })
    }

    /// The heap the record and its key hold, for the index's byte budget
    /// (the index adds what it spends on the entry). `Use-As-Dictionary`,
    /// the dictionaries and the lines are shared with the assets made from
    /// the record, and charged to each as well: an upper bound. The
    /// content type is static.
    fn weight(&self, key: &AssetKey) -> u64 {
        key.weight()
            + self.deltas.heap_bytes()
            + self.use_as_dictionary.as_ref().map_or(0, line_value_bytes)
            + self.lines.weight()
    }

    /// The version the record is of.
    pub(super) fn version_id(&self) -> i64 {
        self.version_id
    }

    /// The blob the record is of.
    pub(super) fn blob_id(&self) -> i64 {
        self.blob_id
    }

    /// The least the cache would count for the asset read through the
    /// record: its streams and its key (the prepared responses add more).
    pub(super) fn least_weight(&self, key: &AssetKey) -> u64 {
        let streams = u64::from(self.stored.len) + self.brotli.map_or(0, |b| u64::from(b.len));
        streams + key.weight()
    }

    /// The asset, its streams read from `catalog` by the blob's id and
    /// checked against the record, its lines the record's; None when they
    /// no longer match it (or the blob is gone): the miss then looks the
    /// file up again. Without `brotli`, the brotli stream is left in the
    /// catalog and the asset has none (its lines still name it): for a
    /// response that does not send it, never cached.
    pub(super) fn load(&self, catalog: &Catalog, brotli: bool) -> Result<Option<Prepared>> {
        let want_brotli = brotli && self.brotli.is_some();
        let Some((body, read)) = catalog.stored_streams(self.blob_id, want_brotli)? else {
            return Ok(None);
        };
        if !self.stored.matches(&body) {
            return Ok(None);
        }
        let brotli = match (self.brotli.filter(|_| want_brotli), read) {
            (None, None) => None,
            (Some(checked), Some(bytes)) if checked.matches(&bytes) => Some(Stream::Memory(bytes)),
            _ => return Ok(None),
        };
        let stored = StoredAsset {
            version_id: self.version_id,
            blob_id: self.blob_id,
            body: Stream::Memory(body),
            encoding: self.encoding,
            sha256: self.sha256,
            brotli,
            content_type: Some(self.content_type.header_value().clone()),
            raw_size: self.raw_size,
            published_at: self.published_at,
            chunks: None,
            deltas: self.deltas.clone(),
            delta: None,
            use_as_dictionary: self.use_as_dictionary.clone(),
        };
        Ok(Some(Prepared::with_lines(stored, self.lines.clone())))
    }
}

/// The index: lookups by any worker without waiting, and an owner side
/// (one lock) that admits, evicts and drops records, as the cache's.
pub(super) struct FileIndex {
    reader: Arc<Reader<AssetKey, FileRecord>>,
    owner: Mutex<Cache<AssetKey, FileRecord>>,
    max_bytes: u64,
}

/// The index's counters, for `/_stats` and `/metrics`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct IndexStats {
    /// Misses that found the file's record: its bytes read by the blob's
    /// id, without the lookup (unless the record was stale, when the miss
    /// was looked up as well).
    pub hits: u64,
    pub entries: u64,
    pub bytes: u64,
    pub max_bytes: u64,
}

impl FileIndex {
    /// An index of at most `max_bytes` (0: off).
    pub(super) fn new(max_bytes: u64) -> FileIndex {
        let entries = if max_bytes == 0 { 0 } else { usize::MAX };
        let owner = Cache::new(entries, max_bytes);
        FileIndex {
            reader: owner.reader(),
            owner: Mutex::new(owner),
            max_bytes,
        }
    }

    /// The record of `key`, if indexed, counted as a hit (a record found
    /// stale still counts: its miss is then looked up).
    pub(super) fn get<Q: Lookup<AssetKey> + ?Sized>(
        &self,
        key: &Q,
    ) -> Option<Arc<Entry<AssetKey, FileRecord>>> {
        self.reader.get(key)
    }

    /// Admits `record` of `key`, read while the catalog had changed `seen`
    /// times, when no one holds the owner side (lossy: the next miss of
    /// the file offers it again) and the catalog has not changed since
    /// (`changes`, read under the lock the watch takes to drop records).
    pub(super) fn admit(
        &self,
        key: &AssetKey,
        record: FileRecord,
        seen: u64,
        changes: impl Fn() -> u64,
    ) {
        if !self.reader.is_on() || key.dictionary().is_some() {
            return;
        }
        let mut owner = match self.owner.try_lock() {
            Ok(owner) => owner,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if changes() != seen {
            return;
        }
        let weight = record.weight(key);
        let entry = self.reader.wrap(key.clone(), record, weight);
        owner.admit(entry);
    }

    /// Drops every record `keep` refuses (the watch, under the owner side's
    /// lock).
    pub(super) fn retain(&self, keep: impl FnMut(&FileRecord) -> bool) {
        self.owner().retain(keep);
    }

    /// The versions the index holds records of.
    pub(super) fn version_ids(&self) -> Vec<i64> {
        self.owner().values().map(FileRecord::version_id).collect()
    }

    pub(super) fn stats(&self) -> IndexStats {
        let Counts { entries, bytes, .. } = self.owner().stats();
        IndexStats {
            hits: self.reader.hits(),
            entries,
            bytes,
            max_bytes: self.max_bytes,
        }
    }

    fn owner(&self) -> std::sync::MutexGuard<'_, Cache<AssetKey, FileRecord>> {
        self.owner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use crate::actor::Actor;
    use crate::catalog::digest::xxh3_digest;
    use crate::serve::store::testing::{catalog_with, css, key, publish_at, store};
    use crate::serve::store::{Asset, owner::Store};
    use sha2::Digest;

    fn get(s: &mut Store, path: &str) -> Asset {
        s.get(key(path)).unwrap().expect("the file is there")
    }

    fn streams(asset: &Asset) -> (Vec<u8>, Option<Vec<u8>>) {
        let stored = &asset.value().stored;
        let brotli = stored.brotli.as_ref().map(|b| b.bytes().unwrap().to_vec());
        (stored.body_bytes().to_vec(), brotli)
    }

    /// With the cache off every request is a miss: the first looks the
    /// file up, the next read its streams through its record, the same
    /// bytes.
    #[test]
    fn a_file_missed_again_is_read_through_its_record() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a.css", css(0))]);
        let mut s = store(db, 0, 1 << 20);
        let first = streams(&get(&mut s, "a.css"));
        assert!(first.1.is_some(), "a brotli stream too");
        for _ in 0..2 {
            assert_eq!(streams(&get(&mut s, "a.css")), first);
        }
        let stats = s.stats();
        assert_eq!((stats.misses, stats.index.hits), (3, 2));
        assert_eq!(stats.index.entries, 1);
        assert!(stats.index.bytes > 0 && stats.index.bytes <= stats.index.max_bytes);
    }

    /// A miss read through a record makes no values of its own: its lines
    /// are the record's, made by the miss that looked the file up, and a
    /// value the first response made is the next miss's too.
    #[test]
    fn a_miss_read_through_a_record_shares_its_lines() {
        use crate::encoding::Encoding::Gzip;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a.css", css(0))]);
        let mut s = store(db, 0, 1 << 20);
        let looked_up = get(&mut s, "a.css");
        let (first, second) = (get(&mut s, "a.css"), get(&mut s, "a.css"));
        assert_eq!(s.stats().index.hits, 2);
        for read in [&first, &second] {
            assert!(!std::sync::Arc::ptr_eq(read, &looked_up), "not cached");
            assert!(std::sync::Arc::ptr_eq(
                read.value().lines(),
                looked_up.value().lines()
            ));
        }
        let tag = |asset: &Asset| asset.value().head(Gzip, true)["etag"].as_bytes().as_ptr();
        assert_eq!(tag(&first), tag(&second), "made once, by the first");
        assert_eq!(
            first.value().head(Gzip, true),
            looked_up.value().head(Gzip, true)
        );
    }

    /// A script of a front-end build, offered as a dictionary, is what
    /// the index holds most: its record, with its lines, weighs no more
    /// than the default budget's share for 125,000 files, as README's memory
    /// section says.
    #[test]
    fn a_script_s_record_fits_the_default_budget_s_share() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let script: Vec<u8> = (0..120u64)
            .flat_map(|i| {
                format!("export const v{i} = {};\n", i * 2_654_435_761 % 1_000_003).into_bytes()
            })
            .collect();
        let path = "dist/chunks/chunk-15.7031113d.js";
        publish_at(&db, "1.4.0", &[(path, script)]);
        let mut s = store(db, 0, 1 << 20);
        let key = crate::serve::store::AssetKey::new("app", "1.4.0", path);
        for _ in 0..2 {
            let asset = s.get(key.clone()).unwrap().expect("the file is there");
            assert!(asset.value().stored.use_as_dictionary.is_some());
        }
        let stats = s.stats();
        assert_eq!((stats.index.entries, stats.index.hits), (1, 1));
        let budget: u64 = crate::units::parse_size(super::DEFAULT_INDEX_BYTES).unwrap();
        assert!(
            stats.index.bytes <= budget / 125_000,
            "{} bytes a record",
            stats.index.bytes
        );
    }

    #[test]
    fn an_index_of_no_bytes_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let config = crate::serve::store::Config {
            index_bytes: 0,
            ..uncached(db)
        };
        let mut s = Store::open(std::sync::Arc::new(crate::serve::store::Shared::new(
            config,
        )))
        .unwrap();
        get(&mut s, "a");
        get(&mut s, "a");
        let stats = s.stats();
        assert_eq!((stats.index.hits, stats.index.entries), (0, 0));
    }

    /// A store's settings with the cache off and the index on.
    fn uncached(db: std::path::PathBuf) -> crate::serve::store::Config {
        crate::serve::store::Config {
            db,
            cache_entries: 0,
            cache_bytes: 1 << 20,
            index_bytes: 1 << 20,
            in_flight_bytes: 64 << 20,
            log_misses: false,
            readers: 0,
            max_lag: None,
        }
    }

    /// A brotli stream rewritten after the record was made (as `recompress`
    /// does, with its digests) no longer matches it: the miss looks the
    /// file up again and sends the new stream, and records it.
    #[test]
    fn a_stream_changed_since_its_record_is_looked_up_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a.css", css(0))]);
        let mut s = store(db.clone(), 0, 1 << 20);
        let (_, old) = streams(&get(&mut s, "a.css"));
        let mut new = Vec::new();
        {
            let mut writer = brotli::CompressorWriter::new(&mut new, 4096, 1, 22);
            std::io::Write::write_all(&mut writer, &css(0)).unwrap();
        }
        assert_ne!(Some(&new), old.as_ref());
        let writer = rusqlite::Connection::open(&db).unwrap();
        let sha: [u8; 32] = sha2::Sha256::digest(&new).into();
        let changed = writer
            .execute(
                "UPDATE brotli SET body = ?1, stored_sha256 = ?2, stored_xxh3 = ?3",
                rusqlite::params![new, &sha[..], &xxh3_digest(&new)[..]],
            )
            .unwrap();
        assert_eq!(changed, 1);
        drop(writer);
        s.inbox_empty();
        assert_eq!(streams(&get(&mut s, "a.css")).1.as_ref(), Some(&new));
        assert_eq!(streams(&get(&mut s, "a.css")).1.as_ref(), Some(&new));
        let stats = s.stats();
        assert_eq!(
            stats.index.hits, 2,
            "both tried the record; the second used it"
        );
        assert_eq!(stats.corrupt, 0);
    }

    /// Bytes damaged in place after the record was made are never sent:
    /// the lookup that follows finds them wrong and says so.
    #[test]
    fn damaged_bytes_are_not_sent_through_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 100)]);
        let mut s = store(db.clone(), 0, 1 << 20);
        let (body, _) = streams(&get(&mut s, "a"));
        let mut damaged = body.clone();
        damaged[50] ^= 1;
        let writer = rusqlite::Connection::open(&db).unwrap();
        writer
            .execute("UPDATE blobs SET body = ?1", [&damaged])
            .unwrap();
        drop(writer);
        s.inbox_empty();
        let err = s.get(key("a")).unwrap_err().to_string();
        assert!(err.contains("app@1.0.0/a"), "{err}");
        assert_eq!(s.stats().corrupt, 1);
    }

    /// A record of a version removed since is dropped by the staleness
    /// watch, as a cached entry is: the file is not found any more,
    /// though its blob is still in the catalog.
    #[test]
    fn records_of_removed_versions_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("a.css", css(0))]);
        publish_at(&db, "1.1.0", &[("a.css", css(0))]);
        let mut s = store(db.clone(), 0, 1 << 20);
        get(&mut s, "a.css");
        get(&mut s, "a.css");
        assert_eq!(s.stats().index.hits, 1);
        let mut writer =
            crate::catalog::Catalog::open(&db, crate::catalog::Access::ReadWrite).unwrap();
        let id = writer
            .versions("app")
            .unwrap()
            .into_iter()
            .find(|v| v.version.to_string() == "1.0.0")
            .unwrap()
            .id;
        writer.remove_versions(&[id], false).unwrap();
        drop(writer);
        s.housekeeping();
        assert_eq!(s.stats().index.entries, 0);
        assert!(s.get(key("a.css")).unwrap().is_none());
    }
}

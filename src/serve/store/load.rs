//! A cache miss: a worker (or the store actor) loads the asset from the
//! catalog, checks its body against its record, prepares its responses and
//! offers it to the cache.
//!
//! # Every body is checked before it is used
//!
//! A body loaded from SQLite (a cache miss) is checked against its record
//! before it is cached or sent ([`AssetRecord::check`]): the bytes as
//! stored must hash to the blob's recorded `stored_xxh3` (or, for a blob
//! older than that digest, its `stored_sha256`; older still, decode to the
//! recorded size and sha256 of the raw file). A body longer than one piece
//! is read after the lookup, each piece checked against its own digest
//! (`Catalog::load_bodies`; whole, as above, on a catalog older than piece
//! digests). A body that fails is neither
//! cached nor sent: the request gets a 500 and stderr names the asset
//! (`package@version/path`), its recorded sha256 and what is wrong.
//! Cached bodies are in memory and were checked when loaded, so a hit costs
//! nothing more; bench/RPS.md has what the check costs a miss.
//!
//! [`AssetRecord::check`]: crate::catalog::lookup::AssetRecord::check

use super::index::{FileRecord, RowParts};
use super::owner::Store;
use super::{AssetKey, Found, Shared};
use crate::catalog::Catalog;
use crate::catalog::lookup::AssetRecord;
use crate::catalog::pieces::Coding;
use crate::causal;
use crate::error::{Error, Result};
use crate::log;
use crate::serve::in_flight::Reservation;
use crate::serve::prepared::Prepared;
use crate::serve::stored::StoredAsset;
use std::time::Instant;

/// What a request needs of a missed asset's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// The whole body: a GET without `Range`. A long body is read whole,
    /// and offered to the cache, when half the in-flight budget has room
    /// for it.
    Whole,
    /// Maybe none of it (HEAD, a conditional request) or a part (`Range`):
    /// a long body stays in the catalog, read a checked piece at a time
    /// as far as the answer needs.
    Part,
}

/// Whether the response to a miss may be sent in brotli, as the request's
/// `Accept-Encoding` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Brotli {
    /// The client takes brotli: the stream is read when the file has one.
    Accepted,
    /// The client does not: a miss the cache would refuse leaves the
    /// stream in the catalog.
    NotAccepted,
}

/// What the cache is told of a loaded miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keep {
    /// Offered to the cache; `counted` when the miss's access was counted
    /// already, by asking whether the cache would refuse it.
    Offer { counted: bool },
    /// Not offered: the cache said it would refuse the asset, so the miss
    /// read only what its own response sends.
    Refused,
}

/// A loaded asset: its responses prepared, the weight the cache would
/// count (0 when it is not offered: the cache is off, or would refuse
/// it), what the cache is told of it, and the in-flight memory its
/// bodies hold until the response that asked for them is sent. An asset
/// with a coding left in the catalog is cached too, as what nginx's
/// `open_file_cache` keeps of a file: its headers, piece digests and
/// verified-once marks, its bytes read from the catalog for each
/// response.
pub(super) struct Loaded {
    pub prepared: Prepared,
    pub weight: u64,
    pub reserved: Option<Reservation>,
    pub keep: Keep,
}

impl Loaded {
    /// `prepared`, weighed for the cache of `shared` under `key` unless it
    /// is not to be offered (`keep`).
    fn new(
        prepared: Prepared,
        key: &AssetKey,
        shared: &Shared,
        reserved: Option<Reservation>,
        keep: Keep,
    ) -> Loaded {
        let weight = if shared.cache.is_on() && keep != Keep::Refused {
            prepared.weight() + key.weight()
        } else {
            0
        };
        Loaded {
            prepared,
            weight,
            reserved,
            keep,
        }
    }
}

/// Loads `key` from `catalog`, checks what it read against its record and
/// prepares its responses: through the file index when it has the file
/// (its bytes read by the blob's id, `index`), else by a lookup. A body
/// longer than a piece is read whole only for `Want::Whole` within the
/// in-flight budget (or from a catalog without piece digests, which has
/// no other way to check it); otherwise it stays in the catalog. None when
/// there is no such file. Counted as a miss, on whichever thread reads it;
/// `seen` is the count of catalog changes its read began under
/// (`readers`), for the index.
///
/// A miss the index answers, for a whole body, first asks the cache
/// whether it would keep the asset. When it would not (the cache is off,
/// or a full cache prefers what it holds), nothing is offered, and only
/// the coding the response may send is read and checked: the brotli
/// stream stays in the catalog for a client that does not take brotli,
/// since a cached entry holds every coding and this response sends one.
pub(super) fn load(
    catalog: &Catalog,
    key: &AssetKey,
    shared: &Shared,
    want: Want,
    brotli: Brotli,
    seen: u64,
) -> Result<Option<Loaded>> {
    Shared::count(&shared.misses);
    let started = shared.config.log_misses.then(Instant::now);
    let mut keep = Keep::Offer { counted: false };
    let indexed = match shared.index.get(key) {
        Some(entry) => {
            let record = entry.value();
            if want == Want::Whole {
                let _s = causal::site!(CACHE_INSERT);
                keep = match shared.refuses(key, record.least_weight(key)) {
                    Some(true) => Keep::Refused,
                    Some(false) => Keep::Offer { counted: true },
                    None => keep,
                };
            }
            let _s = causal::site!(SQLITE_QUERY);
            record.load(catalog, keep != Keep::Refused || brotli == Brotli::Accepted)?
        }
        None => None,
    };
    if indexed.is_none() && keep == Keep::Refused {
        // The record was stale: the lookup reads every coding, and the
        // access is counted already.
        keep = Keep::Offer { counted: true };
    }
    let read = match indexed {
        Some(stored) => Read::Indexed(stored),
        None => match look_up(catalog, key, shared, want)? {
            Some(found) => Read::LookedUp(found),
            None => return Ok(None),
        },
    };
    let _s = causal::site!(CACHE_INSERT);
    let (prepared, reserved) = match read {
        Read::Indexed(prepared) => (prepared, None),
        Read::LookedUp(found) => found.into_asset(catalog, key, shared, seen)?,
    };
    if let Some(started) = started {
        log::err(format_args!(
            "cache miss: {}@{}/{} ({} bytes, {} us)",
            key.package(),
            key.version(),
            key.path(),
            prepared.stored.body.len(),
            started.elapsed().as_micros()
        ));
    }
    Ok(Some(Loaded::new(prepared, key, shared, reserved, keep)))
}

/// How a miss found its file.
enum Read {
    /// Through the file index: its streams read by the blob's id, its
    /// lines the record's.
    Indexed(Prepared),
    /// By the lookup.
    LookedUp(LookedUp),
}

/// A miss the index could not answer, as the lookup found it: the row,
/// checked, the piece digests of each stream left in the catalog, and the
/// in-flight memory of the long bodies read.
struct LookedUp {
    row: AssetRecord,
    digests: Vec<(Coding, Vec<[u8; 16]>)>,
    reserved: Option<Reservation>,
}

/// The lookup of a miss the index could not answer: the row, its check,
/// and the long bodies read or left in the catalog (`load`).
fn look_up(
    catalog: &Catalog,
    key: &AssetKey,
    shared: &Shared,
    want: Want,
) -> Result<Option<LookedUp>> {
    let found = {
        let _s = causal::site!(SQLITE_QUERY);
        catalog.lookup(key.package(), key.version(), key.path())?
    };
    let Some(mut row) = found else {
        return Ok(None);
    };
    let corrupt = |wrong: String, sha256: &[u8; 32]| {
        Shared::count(&shared.corrupt);
        Error::Corrupt {
            path: shared.config.db.clone(),
            what: format!(
                "{}@{}/{} (blob sha256 {}) {wrong}; not served",
                key.package(),
                key.version(),
                key.path(),
                hex::encode(sha256)
            ),
        }
    };
    if let Err(wrong) = row.check() {
        return Err(corrupt(wrong, &row.sha256));
    }
    let mut digests = Vec::new();
    let mut reserved = None;
    let body_left = row.body.is_none().then_some(row.stored_len);
    let brotli_left = (row.brotli.as_ref())
        .filter(|br| br.body.is_none())
        .map(|br| br.stored_len);
    let left = body_left.unwrap_or(0) + brotli_left.unwrap_or(0);
    if left > 0 {
        for (coding, stream_left) in [(Coding::Stored, body_left), (Coding::Brotli, brotli_left)] {
            if stream_left.is_some()
                && let Some(d) = catalog.piece_digests(row.blob_id, coding)?
            {
                digests.push((coding, d));
            }
        }
        let checkable_in_pieces =
            digests.len() == usize::from(body_left.is_some()) + usize::from(brotli_left.is_some());
        let cacheable = shared.cache.is_on() && left <= shared.config.cache_bytes;
        reserved = match (want, checkable_in_pieces) {
            (Want::Whole, true) if cacheable => shared.in_flight.try_reserve_whole(left),
            (_, true) => None,
            // Without piece digests the body can only be checked whole.
            (_, false) => Some(shared.in_flight.reserve_over(left)),
        };
        if reserved.is_some() {
            digests.clear();
            match catalog.load_bodies(&mut row) {
                Ok(()) => {}
                Err(Error::Corrupt { what, .. }) => return Err(corrupt(what, &row.sha256)),
                Err(e) => return Err(e),
            }
        } else if want == Want::Whole {
            shared.in_flight.streamed();
        }
    }
    Ok(Some(LookedUp {
        row,
        digests,
        reserved,
    }))
}

impl LookedUp {
    /// The asset of the row, with its dictionary side, prepared, and its
    /// record offered to the index (`seen`: see [`load`]).
    fn into_asset(
        self,
        catalog: &Catalog,
        key: &AssetKey,
        shared: &Shared,
        seen: u64,
    ) -> Result<(Prepared, Option<Reservation>)> {
        let LookedUp {
            row,
            mut digests,
            reserved,
        } = self;
        let recorded = RowParts::of(&row);
        let mut stored = StoredAsset::from_row(row, |coding| {
            digests
                .iter()
                .position(|(c, _)| *c == coding)
                .map(|i| digests.swap_remove(i).1)
        })?;
        dictionary_side(catalog, key, &mut stored)?;
        let prepared = Prepared::new(stored);
        if let Some(record) = FileRecord::of(&prepared, &recorded) {
            shared
                .index
                .admit(key, record, seen, || shared.readers.changes());
        }
        Ok((prepared, reserved))
    }
}

/// What a script, stylesheet, JSON or wasm file has of Compression
/// Dictionary Transport: `Use-As-Dictionary` when it may serve as a
/// dictionary (`crate::delta`), and the deltas the catalog holds of it.
/// Other files are not asked about.
fn dictionary_side(catalog: &Catalog, key: &AssetKey, stored: &mut StoredAsset) -> Result<()> {
    use crate::delta::{DictionarySize, kind};
    let Some(kind) = kind(key.path()) else {
        return Ok(());
    };
    if stored.encoding != crate::encoding::Encoding::Gzip || stored.chunks.is_some() {
        return Ok(());
    }
    let smallest = stored.brotli.as_ref().unwrap_or(&stored.body).len();
    if DictionarySize::fits(stored.raw_size, smallest) {
        let value = crate::http::dictionary::use_as_dictionary(key.package(), key.path(), kind);
        stored.use_as_dictionary = crate::serve::stored::line_value(value);
    }
    stored.deltas =
        crate::serve::stored::Dictionaries::new(catalog.delta_dictionaries(stored.blob_id)?);
    Ok(())
}

/// Loads the asset's entry for the dictionary `key` names: `plain`'s
/// codings, shared, and its deltas against that dictionary, read and
/// checked (each against its XXH3-128). None when the catalog no longer
/// has them, or the in-flight budget has no room for them now: the
/// request is then answered from `plain`, as without a dictionary.
pub(super) fn load_delta(
    catalog: &Catalog,
    key: &AssetKey,
    plain: &Prepared,
    shared: &Shared,
) -> Result<Option<Loaded>> {
    use crate::encoding::Encoding;
    use crate::serve::stored::{DeltaBodies, DeltaBody, Stream};
    let Some(dictionary) = key.dictionary().copied() else {
        return Ok(None);
    };
    Shared::count(&shared.misses);
    let bodies = {
        let _s = causal::site!(SQLITE_QUERY);
        match catalog.delta_bodies(plain.stored.blob_id, &dictionary) {
            Ok(bodies) => bodies,
            Err(Error::Corrupt { what, .. }) => {
                Shared::count(&shared.corrupt);
                return Err(Error::Corrupt {
                    path: shared.config.db.clone(),
                    what: format!(
                        "{}@{}/{} (blob sha256 {}) {what}; not served",
                        key.package(),
                        key.version(),
                        key.path(),
                        hex::encode(plain.stored.sha256)
                    ),
                });
            }
            Err(e) => return Err(e),
        }
    };
    let len: u64 = bodies.iter().map(|(_, b)| b.len() as u64).sum();
    if bodies.is_empty() {
        return Ok(None);
    }
    let Some(reserved) = shared.in_flight.try_reserve(len) else {
        return Ok(None);
    };
    let mut delta = DeltaBodies {
        dictionary,
        dcb: None,
        dcz: None,
    };
    for (coding, body) in bodies {
        let xxh3 = crate::catalog::digest::xxh3_digest(&body);
        let body = Some(DeltaBody {
            stream: Stream::Memory(body.into()),
            xxh3,
        });
        match coding {
            Encoding::Dcb => delta.dcb = body,
            Encoding::Dcz => delta.dcz = body,
            _ => {}
        }
    }
    let _s = causal::site!(CACHE_INSERT);
    let prepared = Prepared::new(plain.stored.with_delta(delta));
    let keep = Keep::Offer { counted: false };
    Ok(Some(Loaded::new(
        prepared,
        key,
        shared,
        Some(reserved),
        keep,
    )))
}

impl Store {
    /// A miss the actor answers (the workers' pool could not read it).
    /// Another worker's miss for the same key may have filled the cache
    /// meanwhile.
    pub(super) fn get_for(&mut self, key: AssetKey, want: Want) -> Result<Option<Found>> {
        if let Some(hit) = self.cache().get(&key) {
            return Ok(Some((hit, None)));
        }
        let workers = self.workers.clone();
        let seen = workers.readers.changes();
        let catalog = self.catalog()?;
        let Some(loaded) = load(catalog, &key, &workers, want, Brotli::Accepted, seen)? else {
            return Ok(None);
        };
        let _s = causal::site!(CACHE_INSERT);
        let asset = workers.cache.wrap(key, loaded.prepared, loaded.weight);
        if let Keep::Offer { counted } = loaded.keep {
            self.cache().admit_miss(asset.clone(), counted);
        }
        Ok(Some((asset, loaded.reserved)))
    }

    /// A miss of an asset's entry for a dictionary the actor answers
    /// ([`load_delta`]).
    pub(super) fn get_delta_for(
        &mut self,
        key: AssetKey,
        plain: &Prepared,
    ) -> Result<Option<Found>> {
        if let Some(hit) = self.cache().get(&key) {
            return Ok(Some((hit, None)));
        }
        let workers = self.workers.clone();
        let Some(loaded) = load_delta(self.catalog()?, &key, plain, &workers)? else {
            return Ok(None);
        };
        let _s = causal::site!(CACHE_INSERT);
        let asset = self.cache().insert(key, loaded.prepared, loaded.weight);
        Ok(Some((asset, loaded.reserved)))
    }

    /// [`Store::get_for`] the whole body, without its reservation.
    #[cfg(test)]
    pub(super) fn get(&mut self, key: AssetKey) -> Result<Option<super::Asset>> {
        Ok(self.get_for(key, Want::Whole)?.map(|(asset, _)| asset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::publish;
    use crate::catalog::{Access, Catalog, Encoding};
    use crate::serve::cache::Cache;
    use crate::serve::store::testing::{cached, catalog_with, key, noise, publish_at, store};
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn hits_share_the_body_and_budgets_evict_in_lru_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 1000), ("b", 1000), ("c", 1000)]);
        let mut s = store(db, 2, 1 << 20);
        let first = s.get(key("a")).unwrap().unwrap();
        let again = s.get(key("a")).unwrap().unwrap();
        assert!(
            Arc::ptr_eq(
                first.value().stored.body_bytes(),
                again.value().stored.body_bytes()
            ),
            "a hit copies no body bytes"
        );
        s.get(key("b")).unwrap();
        s.get(key("a")).unwrap(); // a is now most recent
        // c needs three requests more than b's one to take its place.
        for _ in 0..3 {
            s.get(key("c")).unwrap();
        }
        assert_eq!((s.stats().entries, s.stats().rejections), (2, 3));
        s.get(key("c")).unwrap(); // the fourth: evicts b
        let stats = s.stats();
        assert_eq!(
            (stats.hits, stats.misses, stats.evictions, stats.rejections),
            (2, 6, 1, 3)
        );
        assert!(!cached(&s, "b") && cached(&s, "a") && cached(&s, "c"));
        assert!(s.get(key("nope")).unwrap().is_none());
    }

    #[test]
    fn the_byte_budget_bounds_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let db = catalog_with(dir.path(), &[("a", 600), ("b", 600), ("big", 5000)]);
        let size = |s: &mut Store, p: &str| {
            s.get(key(p)).unwrap().unwrap().value().stored.body.len() as usize
        };
        // What one 600-byte asset weighs: its body, and what the budget
        // counts beside it (its names, validators, the cache's index).
        let mut roomy = store(db.clone(), 100, 1 << 20);
        roomy.get(key("a")).unwrap().unwrap();
        let weight = roomy.stats().bytes;
        let beside = key("a").weight() + Cache::<AssetKey, Prepared>::ENTRY_BYTES;
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
        for _ in 0..3 {
            size(&mut s, "b");
        }
        assert_eq!(s.stats().entries, 1, "two entries of 600 bytes do not fit");
        size(&mut s, "b"); // asked three more times than a now: replaces it
        assert!(cached(&s, "b") && !cached(&s, "a"));
        assert_eq!((s.stats().bytes, s.stats().evictions), (weight, 1));
        assert_eq!(size(&mut s, "big"), 5000);
        assert!(!cached(&s, "big"), "larger than the budget: never cached");
        assert!(s.stats().bytes < 2 * weight);
        let mut off = store(dir.path().join("cdn.db"), 0, 1000);
        off.get(key("a")).unwrap();
        assert_eq!(off.stats().entries, 0, "capacity 0 turns the cache off");
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
        assert_eq!(
            text_asset.value().stored.encoding,
            Encoding::Gzip,
            "text is stored gzip"
        );
        let text_sha = hex::encode(text_asset.value().stored.sha256);
        s.cache().retain(|_| false);

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
        assert_eq!(s.stats().corrupt, 4);
        assert_eq!(s.stats().entries, 0, "nothing that failed was cached");
    }

    #[test]
    fn the_check_is_of_the_xxh3_digest_and_of_sha256_without_one() {
        use sha2::{Digest, Sha256};
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_at(&db, "1.0.0", &[("raw", noise(1000))]);
        let mut s = store(db.clone(), 10, 1 << 20);
        // Other bytes under a sha256 made to match: only XXH3 tells.
        let mut raw = noise(1000);
        raw[500] ^= 1;
        let writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        let rewrite = |sql: &str| {
            let params = rusqlite::params![raw, Sha256::digest(&raw).to_vec()];
            assert_eq!(writer.conn().execute(sql, params).unwrap(), 1);
        };
        rewrite("UPDATE blobs SET body = ?1, stored_sha256 = ?2");
        let err = s.get(key("raw")).unwrap_err().to_string();
        assert!(err.contains("stored bytes hash to xxh3"), "{err}");
        // A blob from before XXH3 digests is checked with its sha256.
        rewrite("UPDATE blobs SET body = ?1, stored_sha256 = ?2, stored_xxh3 = NULL");
        s.end_shared();
        let asset = s.get(key("raw")).unwrap().unwrap();
        assert_eq!(asset.value().stored.body_bytes()[..], raw[..]);
        assert_eq!(s.stats().corrupt, 1);
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
            .and_then(|b| b.bytes())
            .expect("a brotli stream");
        let mut decoded = Vec::new();
        brotli::BrotliDecompress(&mut &brotli[..], &mut decoded).unwrap();
        assert_eq!(decoded, text);
        drop(asset);
        s.cache().retain(|_| false);

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
        // The store's read transaction may still hold the snapshot from
        // before the change.
        s.end_shared();
        let err = s.get(key("app.js")).unwrap_err().to_string();
        assert!(err.contains("app@1.0.0/app.js"), "{err}");
        assert!(err.contains("brotli stream: stored bytes hash to"), "{err}");
        assert_eq!(s.stats().corrupt, 1);
        assert_eq!(s.stats().entries, 0);
    }
}

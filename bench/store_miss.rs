//! What checking a loaded body against its record costs a cache miss, and
//! what a hit costs, side by side in one process:
//!
//! ```text
//! cargo bench --bench store_miss                 # default: 41 rounds
//! cargo bench --bench store_miss -- --rounds 101
//! ```
//!
//! It publishes one catalog in a temporary folder: JavaScript-like text
//! (stored gzip) and random bytes (stored as they are) at 1 KiB, 16 KiB,
//! 256 KiB and 4 MiB. Then, per file, in interleaved rounds, it times:
//!
//! - `lookup`: the asset query with the body copied out of SQLite, which is
//!   all a miss did before bodies were checked;
//! - `stat`: the look at the catalog's path a miss now makes first;
//! - `decode`: the check of a blob without a stored digest (schema 1, or
//!   written before it): decoding (gzip) and hashing against the record;
//! - `sha256`: the check of a blob with a stored sha256 and no XXH3-128
//!   (schema 2 to 5): hashing the body as stored with sha256;
//! - `xxh3`: the check of a blob written today: hashing the body as stored
//!   with XXH3-128;
//! - `miss 1` and `miss 2`: a full `Get` through the store actor's handle
//!   with the cache off (every call loads and checks), on a copy of the
//!   catalog turned back into schema 1 (no stored digests) and on the
//!   catalog itself;
//! - `hit`: the same with the file cached.
//!
//! A file stored in more than one piece (64 KiB, `catalog::pieces`) is not
//! loaded by the lookup: its body is read and checked piece by piece as
//! part of `miss 2` (whole, as before, in `miss 1`), so its `decode`,
//! `sha256` and `xxh3` columns are NaN.
//!
//! Each number is the median over rounds of the mean of a batch, in µs.
//! Results: bench/STORE_FAULTS.md.

#[path = "common/publish.rs"]
mod common;

use ccc::testing::catalog::{Access, AssetRecord, Catalog, StoredDigests};
use ccc::testing::serve::store::{self, AssetKey};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

const SIZES: [usize; 4] = [1 << 10, 16 << 10, 256 << 10, 4 << 20];

fn main() {
    let rounds = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(41usize);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("cdn.db");
    let files = seed(&db);
    let schema_1 = dir.path().join("schema-1.db");
    copy_as_schema_1(&db, &schema_1);
    let catalog = Catalog::open(&db, Access::ReadOnly).expect("open");
    let cached = start(&db, 1024);
    let uncached = start(&db, 0);
    let uncached_schema_1 = start(&schema_1, 0);

    println!(
        "{rounds} rounds; µs per call (median of per-round batch means); decode/, sha256/, xxh3/ = the check over lookup, what it adds to SQLite's part of a miss"
    );
    println!(
        "{:<18} {:>14} {:>8} {:>6} {:>9} {:>8} {:>8} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8}",
        "file",
        "stored as",
        "lookup",
        "stat",
        "decode",
        "sha256",
        "xxh3",
        "miss 1",
        "miss 2",
        "hit",
        "decode/",
        "sha256/",
        "xxh3/"
    );
    for (path, _) in &files {
        let key = AssetKey::new("app", "1.0.0", path);
        let asset = catalog
            .lookup("app", "1.0.0", path)
            .expect("lookup")
            .expect("published");
        asset.check().expect("a sound body");
        // Loaded by the lookup: one piece or less.
        let whole = asset.body.is_some();
        assert!(
            !whole || asset.stored.xxh3.is_some(),
            "published with digests"
        );
        // The same blob as older catalogs give it: no stored digest
        // (schema 1), or a sha256 alone (schema 2 to 5).
        let older = |stored| AssetRecord {
            body: asset.body.clone(),
            stored,
            brotli: None,
            content_type: asset.content_type,
            ..asset
        };
        let legacy = older(StoredDigests::default());
        let sha_only = older(StoredDigests {
            xxh3: None,
            ..asset.stored
        });
        legacy.check().expect("a sound body");
        sha_only.check().expect("a sound body");
        // Enough calls per batch for about a millisecond of work.
        let batch = (1 << 20) / (asset.stored_len as usize).max(1024) + 1;
        let get = |handle: &store::Handle| {
            let got = handle
                .get(key.borrowed())
                .expect("no error")
                .expect("found");
            black_box(got);
        };
        get(&cached.handle); // now cached
        let mut samples: [Vec<f64>; 8] = Default::default();
        for _ in 0..rounds {
            samples[0].push(timed(batch, || {
                black_box(catalog.lookup("app", "1.0.0", path).expect("lookup"));
            }));
            samples[1].push(timed(batch, || {
                black_box(std::fs::metadata(&db).expect("stat"));
            }));
            let check = |record: &AssetRecord| match whole {
                true => timed(batch, || black_box(record.check()).expect("sound")),
                false => f64::NAN,
            };
            samples[2].push(check(&legacy));
            samples[3].push(check(&sha_only));
            samples[4].push(check(&asset));
            samples[5].push(timed(batch, || get(&uncached_schema_1.handle)));
            samples[6].push(timed(batch, || get(&uncached.handle)));
            samples[7].push(timed(batch, || get(&cached.handle)));
        }
        let [lookup, stat, decode, sha256, xxh3, miss_1, miss_2, hit] = samples.map(median);
        let kind = asset.encoding;
        println!(
            "{:<18} {:>14} {:>8.1} {:>6.1} {:>9.1} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>6.1} {:>7.2}x {:>7.2}x {:>7.2}x",
            path,
            format!("{} {kind}", human(asset.stored_len as usize)),
            lookup,
            stat,
            decode,
            sha256,
            xxh3,
            miss_1,
            miss_2,
            hit,
            decode / lookup,
            sha256 / lookup,
            xxh3 / lookup
        );
    }
    let stats = cached.handle.stats().expect("stats");
    assert_eq!(stats.misses as usize, files.len(), "the hits were hits");
    cached.join();
    uncached.join();
    uncached_schema_1.join();
}

/// Copies the catalog at `from` to `to` as the previous ccc wrote it:
/// schema 1, without `blobs.stored_sha256`.
fn copy_as_schema_1(from: &Path, to: &Path) {
    // Nothing has the catalog open: it is one file.
    std::fs::copy(from, to).expect("copy");
    let conn = rusqlite::Connection::open(to).expect("open the copy");
    conn.execute_batch(
        "ALTER TABLE blobs DROP COLUMN stored_sha256;
         UPDATE meta SET value = '1' WHERE key = 'schema_version';
         PRAGMA user_version = 1;",
    )
    .expect("back to schema 1");
    drop(conn);
    let copy = Catalog::open(to, Access::ReadOnly).expect("open the copy");
    assert_eq!(copy.schema(), 1);
}

/// Mean µs per call over a batch of `n` calls.
fn timed(n: usize, mut f: impl FnMut()) -> f64 {
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn human(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1}M", b as f64 / (1 << 20) as f64),
        b => format!("{:.1}K", b as f64 / 1024.0),
    }
}

fn start(db: &Path, entries: usize) -> store::Running {
    store::start(store::Config {
        db: db.to_path_buf(),
        cache_entries: entries,
        cache_bytes: 1 << 30,
        // Off: a miss here is the lookup and its check, every time.
        index_bytes: 0,
        in_flight_bytes: 1 << 30,
        log_misses: false,
        readers: 1,
        max_lag: None,
    })
    .expect("store")
}

/// Publishes `app@1.0.0`: for each size, JavaScript-like text and random
/// bytes.
fn seed(db: &Path) -> Vec<(String, Vec<u8>)> {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let words = [
        "function",
        "return",
        "const",
        "let",
        "this",
        "props",
        "state",
        "render",
        "value",
        "=>",
        "{",
        "}",
        "(",
        ")",
        ";",
        "if",
        "else",
        "null",
        "undefined",
        "export",
    ];
    let mut files = Vec::new();
    for size in SIZES {
        let mut text = Vec::with_capacity(size);
        while text.len() < size {
            let r = next();
            let word = words[(r % words.len() as u64) as usize];
            text.extend_from_slice(word.as_bytes());
            // Identifiers with some entropy, as minified code has.
            text.extend_from_slice(format!("_{:x} ", (r >> 32) % 4096).as_bytes());
        }
        text.truncate(size);
        let random: Vec<u8> = (0..size).map(|_| next() as u8).collect();
        files.push((format!("text-{}.js", human(size)), text));
        files.push((format!("random-{}.bin", human(size)), random));
    }
    common::app_1_0_0(db, &files);
    files
}

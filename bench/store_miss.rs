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
//! - `check`: decoding (gzip) and hashing the body against its record;
//! - `stored`: hashing the body as stored, without decoding it: what the
//!   check would cost with a digest of the stored bytes in the schema;
//! - `miss` and `hit`: a full `Get` through the store actor's handle, with
//!   the cache off (every call loads and checks) and with the file cached.
//!
//! Each number is the median over rounds of the mean of a batch, in µs.
//! Results: bench/STORE_FAULTS.md.

use ccc::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
use ccc::catalog::{Access, Catalog};
use ccc::store::{self, AssetKey, Msg};
use sha2::{Digest, Sha256};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
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
    let catalog = Catalog::open(&db, Access::ReadOnly).expect("open");
    let cached = start(&db, 1024);
    let uncached = start(&db, 0);

    println!(
        "{rounds} rounds; µs per call (median of per-round batch means); check/lookup = what the check adds to SQLite's part of a miss"
    );
    println!(
        "{:<18} {:>14} {:>8} {:>6} {:>8} {:>8} {:>8} {:>6} {:>12}",
        "file", "stored as", "lookup", "stat", "check", "stored", "miss", "hit", "check/lookup"
    );
    for (path, _) in &files {
        let key = AssetKey {
            package: "app".into(),
            version: "1.0.0".into(),
            path: path.clone(),
        };
        let asset = catalog
            .lookup("app", "1.0.0", path)
            .expect("lookup")
            .expect("published");
        asset.check().expect("a sound body");
        // Enough calls per batch for about a millisecond of work.
        let batch = (1 << 20) / asset.body.len().max(1024) + 1;
        let get = |handle: &store::Handle| {
            let got = handle
                .call(|reply| Msg::Get(key.clone(), reply))
                .expect("store running")
                .expect("no error")
                .expect("found");
            black_box(got);
        };
        get(&cached.handle); // now cached
        let mut samples: [Vec<f64>; 6] = Default::default();
        for _ in 0..rounds {
            samples[0].push(timed(batch, || {
                black_box(catalog.lookup("app", "1.0.0", path).expect("lookup"));
            }));
            samples[1].push(timed(batch, || {
                black_box(std::fs::metadata(&db).expect("stat"));
            }));
            samples[2].push(timed(batch, || {
                black_box(asset.check()).expect("sound");
            }));
            samples[3].push(timed(batch, || {
                black_box(Sha256::digest(&asset.body[..]));
            }));
            samples[4].push(timed(batch, || get(&uncached.handle)));
            samples[5].push(timed(batch, || get(&cached.handle)));
        }
        let [lookup, stat, check, stored, miss, hit] = samples.map(median);
        let kind = if asset.gzip { "gzip" } else { "identity" };
        println!(
            "{:<18} {:>14} {:>8.1} {:>6.1} {:>8.1} {:>8.1} {:>8.1} {:>6.1} {:>11.2}x",
            path,
            format!("{} {kind}", human(asset.body.len())),
            lookup,
            stat,
            check,
            stored,
            miss,
            hit,
            check / lookup
        );
    }
    let stats = cached.handle.call(Msg::Stats).expect("stats");
    assert_eq!(stats.misses as usize, files.len(), "the hits were hits");
    cached.join();
    uncached.join();
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

fn start(db: &Path, entries: usize) -> ccc::actor::Running<Msg> {
    store::start(store::Config {
        db: db.to_path_buf(),
        cache_entries: entries,
        cache_bytes: 1 << 30,
        log_misses: false,
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
    let mut catalog = Catalog::open(db, Access::Create).expect("create");
    let entries = files
        .iter()
        .map(|(path, bytes)| FileEntry {
            path: path.clone(),
            size: bytes.len() as u64,
            source: Source::Memory(Arc::from(&bytes[..])),
        })
        .collect();
    publish::publish(
        &mut catalog,
        "app",
        &semver::Version::new(1, 0, 0),
        entries,
        vec![],
        &Options::default(),
        &NoProgress,
    )
    .expect("publish");
    files
}

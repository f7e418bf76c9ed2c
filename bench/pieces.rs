//! What reading a stored stream in checked pieces costs, against loading
//! it whole as a miss did before, and what the upgrade that records the
//! pieces' digests costs, in one process:
//!
//! ```text
//! cargo bench --locked --bench pieces                 # 21 rounds, 40 blobs of 5 MB
//! cargo bench --locked --bench pieces -- --rounds 41 --blobs 80
//! ```
//!
//! It publishes into a temporary catalog `--blobs` files of 5 MB of random
//! bytes (stored as they are) and a 4 MB script (stored gzip, with a
//! brotli stream), then, per stream, in interleaved rounds, times:
//!
//! - `lookup`: [`Catalog::lookup`] of the file, which now leaves a stream
//!   longer than a piece in the catalog and reads its length;
//! - `whole`: `SELECT body` and the XXH3-128 of it, what a miss did before
//!   (the lookup loaded the body, the check hashed it);
//! - `load`: [`Catalog::load_stream`], the stream read through one handle
//!   piece by piece, each checked: what a miss does until the server sends
//!   pieces as it reads them;
//! - `first`, `last`: [`Catalog::read_piece`] of the first and the last
//!   piece (a handle opened, the piece read and checked, the handle
//!   closed), with the digests in hand;
//! - `pieces`: `read_piece` of every piece in turn, each with a handle of
//!   its own: what sending the whole stream piece by piece reads;
//! - `byte`: [`Catalog::read_stream`] of the stream's last byte;
//! - `digests`: [`Catalog::piece_digests`].
//!
//! Each number is the median over rounds of the mean of a batch, in µs,
//! once with SQLite reading pages with `pread` (its default, the commands')
//! and once through a 2 GiB memory map (`mmap_size`, as `serve` reads):
//! a read at an offset of a stream walks its overflow pages from the first
//! one, a read of each page with `pread`, a pointer in the map. Then it
//! turns a copy of the catalog back into schema 8 (no `pieces`)
//! and times the upgrade that fills it, three times. Results:
//! bench/PIECES.md.

use ccc::testing::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
use ccc::testing::catalog::{Access, Catalog, Coding, piece_count};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let rounds: usize = flag("--rounds").unwrap_or(21);
    let blobs: usize = flag("--blobs").unwrap_or(40);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("cdn.db");
    seed(&db, blobs);
    for (reads, mmap_size) in [("pread", 0i64), ("mmap", 1 << 31)] {
        let catalog = Catalog::open(&db, Access::ReadOnly).expect("open");
        catalog
            .conn()
            .pragma_update(None, "mmap_size", mmap_size)
            .expect("mmap_size");
        println!(
            "pages read by {reads}; {rounds} rounds; µs per call (median of per-round batch means); a piece is {} KiB",
            ccc::testing::catalog::PIECE_SIZE >> 10
        );
        table(&catalog, rounds);
    }
    upgrade(&db, dir.path());
}

/// Times every read of each stream of `catalog`, in interleaved rounds.
fn table(catalog: &Catalog, rounds: usize) {
    println!(
        "{:<22} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>6} {:>8}",
        "stream", "bytes", "lookup", "whole", "load", "first", "last", "pieces", "byte", "digests"
    );
    for (path, coding) in [
        ("random-0.bin", Coding::Stored),
        ("script.js", Coding::Stored),
        ("script.js", Coding::Brotli),
    ] {
        let found = catalog
            .lookup("app", "1.0.0", path)
            .expect("lookup")
            .expect("published");
        let (id, len) = match coding {
            Coding::Stored => (found.blob_id, found.stored_len),
            Coding::Brotli => (
                found.blob_id,
                found.brotli.as_ref().expect("a brotli stream").stored_len,
            ),
        };
        let digests = catalog
            .piece_digests(id, coding)
            .expect("digests")
            .expect("over a piece");
        let (table, key) = match coding {
            Coding::Stored => ("blobs", "id"),
            Coding::Brotli => ("brotli", "blob_id"),
        };
        let select = format!("SELECT body FROM {table} WHERE {key} = ?1");
        let last = piece_count(len) - 1;
        let mut buf = Vec::new();
        let batch = 20;
        let mut samples: [Vec<f64>; 8] = Default::default();
        for _ in 0..rounds {
            samples[0].push(timed(batch, || {
                black_box(catalog.lookup("app", "1.0.0", path).expect("lookup"));
            }));
            samples[1].push(timed(batch, || {
                let body: Vec<u8> = catalog
                    .conn()
                    .prepare_cached(&select)
                    .and_then(|mut s| s.query_row([id], |r| r.get(0)))
                    .expect("body");
                black_box(twox_hash::XxHash3_128::oneshot(&body));
            }));
            samples[2].push(timed(batch, || {
                black_box(catalog.load_stream(id, coding, len).expect("load"));
            }));
            for (sample, index) in [(3, 0), (4, last)] {
                samples[sample].push(timed(batch, || {
                    catalog
                        .read_piece(id, coding, index, &digests, len, &mut buf)
                        .expect("piece");
                    black_box(&buf);
                }));
            }
            samples[7].push(timed(2, || {
                for index in 0..=last {
                    catalog
                        .read_piece(id, coding, index, &digests, len, &mut buf)
                        .expect("piece");
                    black_box(&buf);
                }
            }));
            samples[5].push(timed(batch, || {
                let mut byte = [0u8];
                catalog
                    .read_stream(id, coding, len - 1, &mut byte)
                    .expect("byte");
                black_box(byte);
            }));
            samples[6].push(timed(batch, || {
                black_box(catalog.piece_digests(id, coding).expect("digests"));
            }));
        }
        let [lookup, whole, load, first, last, byte, digests, pieces] = samples.map(median);
        let name = match coding {
            Coding::Stored => format!("{path} ({})", found.encoding),
            Coding::Brotli => format!("{path} (br)"),
        };
        println!(
            "{name:<22} {len:>9} {lookup:>8.1} {whole:>8.1} {load:>8.1} {first:>7.1} {last:>7.1} {pieces:>8.1} {byte:>6.1} {digests:>8.1}"
        );
    }
}

/// Times the upgrade from schema 8 of copies of the catalog at `db`.
fn upgrade(db: &Path, dir: &Path) {
    let copy = dir.join("schema-8.db");
    let (count, bytes): (i64, i64) = rusqlite::Connection::open(db)
        .expect("open")
        .query_row(
            "SELECT count(*), sum(length(digests)) / 16 * 65536 FROM pieces",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("pieces");
    for run in 1..=3 {
        std::fs::copy(db, &copy).expect("copy");
        let conn = rusqlite::Connection::open(&copy).expect("open the copy");
        conn.execute_batch(
            "DROP TABLE pieces;
             UPDATE meta SET value = '8' WHERE key = 'schema_version';
             PRAGMA user_version = 8;",
        )
        .expect("back to schema 8");
        drop(conn);
        let started = Instant::now();
        let catalog = Catalog::open(&copy, Access::ReadWrite).expect("upgrade");
        let took = started.elapsed();
        drop(catalog);
        println!(
            "upgrade {run}: {count} streams, about {} MB, in {:.0} ms",
            bytes / 1_000_000,
            took.as_secs_f64() * 1e3
        );
    }
}

/// Publishes `blobs` files of 5 MB of random bytes and a script of about
/// 4 MB as `app@1.0.0` into a catalog at `db`.
fn seed(db: &Path, blobs: usize) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut noise = |len: usize| -> Vec<u8> {
        (0..len / 8)
            .flat_map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()
            })
            .collect()
    };
    let mut files: Vec<(String, Vec<u8>)> = (0..blobs)
        .map(|i| (format!("random-{i}.bin"), noise(5_000_000)))
        .collect();
    let mut script = Vec::new();
    let mut i = 0u64;
    while script.len() < 4_000_000 {
        let word = ["render", "state", "props", "effect", "memo"][(i % 5) as usize];
        let line = format!(
            "function {word}{}(a,b){{return a.{word}+b*{}+{}}}\n",
            i % 97,
            i * 31,
            (i * 2_654_435_761) % 100_003
        );
        script.extend_from_slice(line.as_bytes());
        i += 1;
    }
    files.push(("script.js".into(), script));
    let mut catalog = Catalog::open(db, Access::Create).expect("create");
    let entries = files
        .into_iter()
        .map(|(path, bytes)| FileEntry {
            path,
            size: bytes.len() as u64,
            source: Source::Memory(Arc::from(bytes)),
        })
        .collect();
    let options = Options {
        check: false,
        ..Options::default()
    };
    publish::publish(
        &mut catalog,
        "app",
        &semver::Version::new(1, 0, 0),
        entries,
        vec![],
        &options,
        &NoProgress,
    )
    .expect("publish");
}

/// The value after `name` on the command line.
fn flag<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::args()
        .skip_while(|a| a != name)
        .nth(1)
        .and_then(|v| v.parse().ok())
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

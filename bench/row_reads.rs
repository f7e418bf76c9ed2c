//! Three ways to read one stored body by its blob's id, side by side in
//! one process, on a catalog given by path:
//!
//! ```text
//! cargo bench --bench row_reads -- /tmp/h32-rps/data/cdn.db            # 5 rounds
//! cargo bench --bench row_reads -- /tmp/h32-rps/data/cdn.db --rounds 9
//! ```
//!
//! - `statement`: what a miss through the file index does today
//!   (`Catalog::stored_streams`): a statement from rusqlite's cache, the
//!   body copied out of SQLite's register into an `Arc<[u8]>`;
//! - `blob_open`: an incremental-blob handle opened for each read, the
//!   body read straight into its buffer;
//! - `reopen`: one handle moved from row to row (`sqlite3_blob_reopen`),
//!   which a server could only do by keeping the handle beside its
//!   connection between requests.
//!
//! The connection reads as serve's do: read-only, through a memory map of
//! the whole file, inside one read transaction. Ids are visited in a
//! scattered order, as uniform misses visit them. Each figure is ns a
//! read; results in bench/RPS.md.

use rusqlite::{Connection, MAIN_DB, OpenFlags};
use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

const READS: usize = 200_000;

fn main() {
    let (db, rounds) = arguments().unwrap_or_else(|problem| {
        eprintln!(
            "row_reads: {problem}\nusage: cargo bench --bench row_reads -- CDN_DB [--rounds N]"
        );
        std::process::exit(2);
    });
    let (conn, ids) = open(&db).unwrap_or_else(|problem| {
        eprintln!("row_reads: the catalog {db}: {problem}");
        std::process::exit(1);
    });
    conn.execute_batch("BEGIN").expect("begin");
    // A stride prime to any catalog's count scatters the visits.
    let id = |i: usize| ids[i.wrapping_mul(7_919) % ids.len()];
    let mut bytes = 0usize;
    let mut times: [Vec<f64>; 3] = Default::default();
    for _ in 0..rounds {
        let started = Instant::now();
        for i in 0..READS {
            let mut statement = conn
                .prepare_cached("SELECT body FROM blobs WHERE id = ?1")
                .expect("prepare");
            let body: Arc<[u8]> = statement
                .query_row([id(i)], |r| Ok(Arc::from(r.get_ref(0)?.as_blob()?)))
                .expect("read");
            bytes += body.len();
        }
        times[0].push(started.elapsed().as_nanos() as f64 / READS as f64);

        let started = Instant::now();
        for i in 0..READS {
            let mut blob = conn
                .blob_open(MAIN_DB, c"blobs", c"body", id(i), true)
                .expect("open");
            bytes += read_whole(&mut blob).len();
        }
        times[1].push(started.elapsed().as_nanos() as f64 / READS as f64);

        let started = Instant::now();
        let mut blob = conn
            .blob_open(MAIN_DB, c"blobs", c"body", id(0), true)
            .expect("open");
        for i in 0..READS {
            blob.reopen(id(i)).expect("reopen");
            bytes += read_whole(&mut blob).len();
        }
        drop(blob);
        times[2].push(started.elapsed().as_nanos() as f64 / READS as f64);
    }
    println!(
        "{} blobs, {} reads a round, {rounds} rounds, {bytes} bytes read",
        ids.len(),
        READS
    );
    for (name, samples) in ["statement", "blob_open", "reopen"].iter().zip(&mut times) {
        let per_round: Vec<String> = samples.iter().map(|t| format!("{t:.0}")).collect();
        samples.sort_by(f64::total_cmp);
        println!(
            "{name:>9}: median {:.0} ns a read ({})",
            samples[samples.len() / 2],
            per_round.join(", ")
        );
    }
}

/// The catalog opened as serve's readers open it (read-only, mapped
/// whole), and its blobs' ids.
fn open(db: &str) -> Result<(Connection, Vec<i64>), String> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "mmap_size", 1i64 << 40)
        .map_err(|e| e.to_string())?;
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM blobs")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| format!("{e} (is it a ccc catalog?)"))?;
    if ids.is_empty() {
        return Err("it holds no blobs".into());
    }
    Ok((conn, ids))
}

/// The catalog's path and the number of rounds (at least one, 5 unless
/// `--rounds` says otherwise).
fn arguments() -> Result<(String, usize), String> {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut db, mut rounds) = (None, 5);
    while let Some(arg) = args.next() {
        if arg == "--rounds" {
            let n = args.next().ok_or("--rounds needs a number")?;
            rounds = match n.parse() {
                Ok(n) if n > 0 => n,
                _ => return Err(format!("--rounds {n}: give a whole number of at least 1")),
            };
        } else if db.is_none() {
            db = Some(arg);
        } else {
            return Err(format!("unexpected argument `{arg}`"));
        }
    }
    Ok((db.ok_or("no catalog given")?, rounds))
}

/// The blob's bytes, read straight into the `Arc` that would hold them.
fn read_whole(blob: &mut rusqlite::blob::Blob<'_>) -> Arc<[u8]> {
    let mut body: Arc<[u8]> = std::iter::repeat_n(0u8, blob.len()).collect();
    let buffer = Arc::get_mut(&mut body).expect("not shared yet");
    blob.read_exact(buffer).expect("read");
    body
}

//! Cache misses per second through the store's handle, by how many threads
//! ask at once and how many connections they read with, in one process (no
//! HTTP):
//!
//! ```text
//! cargo bench --locked --bench store_readers                 # 9 rounds of 1 s each
//! cargo bench --locked --bench store_readers -- --rounds 21 --seconds 2
//! cargo bench --locked --bench store_readers -- --only 'pool 2'  # to profile one setup
//! ```
//!
//! It publishes 2,500 files of 0.5 to 5 KiB (script-like text, stored gzip,
//! 2.8 KB on average, as the HTTP benchmark's catalog) into a temporary
//! catalog, starts stores with the cache off, so that every `get` is a miss
//! that loads, checks and prepares its asset, and in interleaved rounds
//! times, for each setup, every thread calling `get` on the files in turn
//! (each thread from its own offset):
//!
//! - `actor 1`, `actor 2`: no pool, 1 and 2 threads: every miss a call on
//!   the store actor;
//! - `pool 1`, `pool 2`: 1 and 2 threads, each with a pooled connection
//!   of its own.
//!
//! It prints misses per second for each setup (median over rounds), and the
//! ratios of the medians of per-round ratios. Results: bench/RPS.md.

#[path = "common/publish.rs"]
mod common;

use ccc::testing::serve::store::{self, AssetKeyRef};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const FILES: usize = 2_500;

fn main() {
    let rounds: usize = flag("--rounds").unwrap_or(9);
    let seconds: f64 = flag("--seconds").unwrap_or(1.0);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("cdn.db");
    let paths = seed(&db);
    let setups: [(&str, usize, usize); 4] = [
        ("actor 1", 1, 0),
        ("actor 2", 2, 0),
        ("pool 1", 1, 1),
        ("pool 2", 2, 2),
    ];
    let stores: Vec<store::Running> = setups
        .iter()
        .map(|&(_, _, readers)| {
            store::start(store::Config {
                db: db.clone(),
                cache_entries: 0,
                cache_bytes: 0,
                // Off: every miss is the lookup the setups compare.
                index_bytes: 0,
                in_flight_bytes: 1 << 30,
                log_misses: false,
                readers,
                max_lag: None,
            })
            .expect("store")
        })
        .collect();
    println!(
        "{rounds} rounds of {seconds} s per setup; {} cores; misses per second",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let only: Option<String> = flag("--only");
    for round in 0..rounds {
        // Interleaved, and the order turned each round.
        for i in 0..setups.len() {
            let s = (i + round) % setups.len();
            if only.as_ref().is_some_and(|name| name != setups[s].0) {
                rates[s].push(f64::NAN);
                continue;
            }
            let (_, threads, _) = setups[s];
            let rate = run(&stores[s].handle, &paths, threads, seconds);
            rates[s].push(rate);
        }
    }
    for (s, (name, threads, readers)) in setups.iter().enumerate() {
        println!(
            "{name:<8} threads {threads} connections {readers}: {:>8.0} misses/s",
            median(rates[s].clone())
        );
    }
    let ratio =
        |a: usize, b: usize| median(rates[a].iter().zip(&rates[b]).map(|(x, y)| x / y).collect());
    println!("pool 2 / pool 1:  {:.2}x", ratio(3, 2));
    println!("actor 2 / actor 1: {:.2}x", ratio(1, 0));
    println!("pool 1 / actor 1: {:.2}x", ratio(2, 0));
    println!("pool 2 / actor 2: {:.2}x", ratio(3, 1));
    for running in stores {
        running.join();
    }
}

/// Misses per second: `threads` threads calling `get` for `seconds`.
fn run(handle: &store::Handle, paths: &[String], threads: usize, seconds: f64) -> f64 {
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let total: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (handle, stop) = (handle.clone(), &stop);
                scope.spawn(move || {
                    let mut done = 0u64;
                    let mut i = t * paths.len() / threads.max(1);
                    while !stop.load(Ordering::Relaxed) {
                        let key = AssetKeyRef::of("app", "1.0.0", &paths[i % paths.len()]);
                        let asset = handle.get(key).expect("a read").expect("published");
                        std::hint::black_box(asset);
                        done += 1;
                        i += 1;
                    }
                    done
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().expect("thread")).sum()
    });
    total as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn flag<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::args()
        .skip_while(|a| a != name)
        .nth(1)
        .and_then(|v| v.parse().ok())
}

/// Publishes `app@1.0.0` with [`FILES`] script-like files; returns their
/// paths.
fn seed(db: &Path) -> Vec<String> {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let words = [
        "function", "return", "const", "let", "this", "props", "state", "=>", "{", "}", "(", ")",
    ];
    let files: Vec<(String, Vec<u8>)> = (0..FILES)
        .map(|n| {
            let size = 512 + (next() % 4608) as usize;
            let mut text = Vec::with_capacity(size);
            while text.len() < size {
                let r = next();
                text.extend_from_slice(words[(r % words.len() as u64) as usize].as_bytes());
                text.extend_from_slice(format!("_{:x} ", (r >> 32) % 4096).as_bytes());
            }
            text.truncate(size);
            (format!("dist/chunk-{n}.js"), text)
        })
        .collect();
    common::app_1_0_0(db, &files);
    files.into_iter().map(|(path, _)| path).collect()
}

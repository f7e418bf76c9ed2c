//! serve's memory is bounded by `--cache-bytes` plus a constant: the
//! budget counts what a cached asset holds beside its bodies (its names,
//! validators and every set of header lines it may build), which for small
//! files is more than the bodies. Memory is anonymous resident memory
//! (`RssAnon`): the catalog's pages serve reads are mapped from the file,
//! the kernel's page cache (`RssFile`), shared and reclaimable, as nginx's
//! files are. Linux only: both are read from `/proc`.

use crate::serve_util::{Server, agent, request_with};
use crate::util::{Rng, Workspace};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a small file of a web build looks like: a few hundred bytes of
/// code-like text, compressible (so gzip and brotli streams are stored).
fn small_file(rng: &mut Rng, i: usize) -> Vec<u8> {
    const WORDS: [&str; 16] = [
        "export", "const", "function", "return", "import", "from", "await", "this", "value",
        "render", "props", "state", "null", "true", "=>", "{}",
    ];
    let mut text = format!("// chunk {i}\n");
    for n in 0..220 {
        text.push_str(WORDS[rng.below(WORDS.len())]);
        text.push(if n % 12 == 11 { '\n' } else { ' ' });
    }
    text.into_bytes()
}

/// A `/proc/PID/status` field of `pid` in bytes (`RssAnon`, `RssFile`).
pub fn memory(pid: u32, field: &str) -> u64 {
    memory_if_running(pid, field).unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

/// [`memory`], or None once the process is gone.
fn memory_if_running(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())?;
    Some(kb * 1024)
}

/// The highest `RssAnon` of a process while something runs: sampled
/// every 20 ms on a thread of its own from [`AnonPeak::start`] until
/// [`AnonPeak::stop`].
pub struct AnonPeak {
    peak: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<()>,
}

impl AnonPeak {
    pub fn start(pid: u32) -> AnonPeak {
        let peak = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if let Some(now) = memory_if_running(pid, "RssAnon") {
                        peak.fetch_max(now, Ordering::Relaxed);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            })
        };
        AnonPeak {
            peak,
            done,
            sampler,
        }
    }

    /// The highest sample, in bytes.
    pub fn stop(self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        self.sampler.join().expect("the RssAnon sampler");
        self.peak.load(Ordering::Relaxed)
    }
}

fn rss(pid: u32) -> u64 {
    memory(pid, "RssAnon")
}

#[test]
fn rss_stays_within_the_cache_budget_plus_a_constant() {
    const FILES: usize = 4000;
    const BUDGET: u64 = 2 << 20;
    /// What serve may hold beyond the budget once warm: allocator arenas
    /// of its threads, SQLite's page caches (pages of the file are mapped,
    /// not held there), connection buffers.
    const CONSTANT: u64 = 14 << 20;
    let ws = Workspace::new();
    let mut rng = Rng::new(11);
    let tree: Vec<(String, Vec<u8>)> = (0..FILES)
        .map(|i| (format!("chunks/{i:05}.js"), small_file(&mut rng, i)))
        .collect();
    ws.write_tree("site", &tree);
    ws.publish("mem@1.0.0", "site", &[]);
    let server = Server::start(
        &ws,
        &[
            "--threads",
            "4",
            "--cache-capacity",
            "1000000",
            "--cache-bytes",
            "2MiB",
        ],
    );

    // Each file in each coding, then revalidated in each: every set of
    // header lines an asset can hold is built. Four clients at once, so
    // every worker thread allocates.
    let load = |files: &[(String, Vec<u8>)]| {
        let agent = agent();
        for (path, _) in files {
            let url = server.url(&format!("/assets/mem/1.0.0/{path}"));
            for coding in ["br", "gzip", "identity"] {
                let r = request_with(&agent, "GET", &url, &[("Accept-Encoding", coding)]);
                assert_eq!(r.status, 200, "{path} ({coding})");
                let etag = r.must("etag").to_string();
                let r = request_with(
                    &agent,
                    "GET",
                    &url,
                    &[("Accept-Encoding", coding), ("If-None-Match", &etag)],
                );
                assert_eq!(r.status, 304, "{path} ({coding})");
            }
        }
    };
    // Warm: the server's threads, SQLite and the connections are set up.
    load(&tree[..20]);
    let warm = rss(server.pid());
    std::thread::scope(|s| {
        for part in tree.chunks(FILES / 4) {
            s.spawn(|| load(part));
        }
    });
    let after = rss(server.pid());
    let stats = server.stats();
    let cache = &stats["cache"];
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "serve RssAnon {:.1} MiB warm, {:.1} MiB after {FILES} files in a 2 MiB budget ({} entries); RssFile {:.1} MiB",
        mib(warm),
        mib(after),
        cache["entries"],
        mib(memory(server.pid(), "RssFile"))
    );
    assert!(
        after <= warm + BUDGET + CONSTANT,
        "RssAnon grew by {:.1} MiB with a {:.0} MiB budget",
        mib(after.saturating_sub(warm)),
        mib(BUDGET)
    );
    // Filled: a full cache rejects most one-time misses (TinyLFU) rather
    // than evicting, so the bytes say it, not the evictions.
    let bytes = cache["bytes"].as_u64().expect("cache bytes");
    assert!(
        bytes > BUDGET * 3 / 4 && bytes <= BUDGET,
        "the budget filled: {stats}"
    );
}

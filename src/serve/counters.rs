//! Request counters the workers share, and the report `/_stats` returns
//! and `ccc serve` prints when it stops.

use crate::frontend::{ConnReport, ConnStats};
use crate::log::{self, LogStats};
use crate::serve::store::CacheStats;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Request counters, shared by the workers.
#[derive(Debug)]
pub struct Counters {
    started: Instant,
    by_status: [AtomicU64; STATUSES.len() + 1],
    bytes_sent: AtomicU64,
    pub(super) connections: Arc<ConnStats>,
}

/// Statuses counted one by one; anything else counts as "other".
const STATUSES: [u16; 15] = [
    200, 204, 206, 302, 304, 400, 404, 405, 413, 414, 416, 431, 500, 503, 505,
];

impl Counters {
    pub(super) fn new() -> Counters {
        Counters {
            started: Instant::now(),
            by_status: Default::default(),
            bytes_sent: AtomicU64::new(0),
            connections: Arc::default(),
        }
    }

    pub(super) fn record(&self, status: u16, body_bytes: u64) {
        let slot = STATUSES
            .iter()
            .position(|s| *s == status)
            .unwrap_or(STATUSES.len());
        self.by_status[slot].fetch_add(1, Ordering::Relaxed);
        self.bytes_sent.fetch_add(body_bytes, Ordering::Relaxed);
    }

    /// A snapshot, with the cache's counters.
    pub fn snapshot(&self, cache: CacheStats) -> StatsReport {
        let mut by_status = std::collections::BTreeMap::new();
        let mut total = 0;
        for (i, count) in self.by_status.iter().enumerate() {
            let n = count.load(Ordering::Relaxed);
            total += n;
            if n > 0 {
                let key = STATUSES
                    .get(i)
                    .map_or("other".to_string(), |s| s.to_string());
                by_status.insert(key, n);
            }
        }
        StatsReport {
            uptime_secs: self.started.elapsed().as_secs_f64(),
            requests: total,
            by_status,
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            cache,
            connections: self.connections.report(),
            log: log::stats(),
        }
    }
}

/// What `/_stats` returns and what the server prints when it stops.
#[derive(Debug, Serialize)]
pub struct StatsReport {
    pub uptime_secs: f64,
    pub requests: u64,
    pub by_status: std::collections::BTreeMap<String, u64>,
    /// Body bytes sent (headers not included).
    pub bytes_sent: u64,
    pub cache: CacheStats,
    pub connections: ConnReport,
    /// Log lines written and dropped (a stream not writable or not read).
    pub log: LogStats,
}

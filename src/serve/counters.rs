//! Request counters the workers share, and the report `/_stats` returns
//! and `ccc serve` prints when it stops; `/metrics` renders the same
//! counters for Prometheus ([`super::metrics`]).
//!
//! Every request costs a few relaxed atomic increments and no lock: a slot
//! per (method, status), the body bytes, one latency bucket and the latency
//! sum; an asset's answer with a body, two more by its coding. Sums and
//! cumulative views are made when a report is read, not when
//! a request is counted.

use crate::encoding::Encoding;
use crate::log::{self, LogStats};
use crate::serve::in_flight::InFlightStats;
use crate::serve::store::CacheStats;
use crate::transport::{ConnReport, ConnStats};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// The representation an asset's answer sent, as the counters record
/// it (by encoding, and the bytes saved against the smallest stored one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    pub encoding: Encoding,
    /// The length of the representation.
    pub length: usize,
    /// The length of the smallest of br, gzip and the file.
    pub baseline: usize,
}

/// The methods counted apart; the rest count as [`Method::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Options,
    /// Any other method, and the requests the transport refused before a
    /// worker saw them (a connection over the cap, a head too large).
    Other,
}

impl Method {
    pub(crate) const ALL: [Method; 4] = [Method::Get, Method::Head, Method::Options, Method::Other];

    pub(crate) fn of(method: &str) -> Method {
        match method {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
            Method::Other => "other",
        }
    }
}

/// Status codes 100 to 599 each have a slot; the last slot counts any
/// other code (none is sent today).
const FIRST_STATUS: u16 = 100;
const STATUS_SLOTS: usize = 500 + 1;

fn status_slot(status: u16) -> usize {
    usize::from(status.wrapping_sub(FIRST_STATUS)).min(STATUS_SLOTS - 1)
}

/// The status a slot counts, `None` for the last ("other").
fn slot_status(slot: usize) -> Option<u16> {
    (slot < STATUS_SLOTS - 1).then(|| FIRST_STATUS + slot as u16)
}

/// Upper bounds of the latency histogram's buckets. A cache hit takes tens
/// of microseconds, a miss that reads SQLite and checks the body's digest
/// up to a few milliseconds for a large file, a request that waited behind
/// busy workers longer: the buckets run from 25 µs to 10 s, about three per
/// decade, and a last bucket (`+Inf`) takes the rest.
pub(crate) const LATENCY_BOUNDS: [Duration; 18] = [
    Duration::from_micros(25),
    Duration::from_micros(50),
    Duration::from_micros(100),
    Duration::from_micros(250),
    Duration::from_micros(500),
    Duration::from_millis(1),
    Duration::from_micros(2_500),
    Duration::from_millis(5),
    Duration::from_millis(10),
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_millis(2_500),
    Duration::from_secs(5),
    Duration::from_secs(10),
];

/// Request latencies: a count per bucket (not cumulative: one increment per
/// request) and the sum in nanoseconds (u64 holds 584 years of it).
#[derive(Debug)]
struct Histogram {
    buckets: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        // The first bucket whose bound is at least `elapsed` (`le`).
        let slot = LATENCY_BOUNDS.partition_point(|bound| *bound < elapsed);
        self.buckets[slot].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn snapshot(&self) -> Latency {
        let mut total = 0;
        let cumulative = self
            .buckets
            .iter()
            .map(|bucket| {
                total += bucket.load(Ordering::Relaxed);
                total
            })
            .collect();
        Latency {
            cumulative,
            sum: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)),
        }
    }
}

/// A snapshot of the latency histogram.
#[derive(Debug, Clone)]
pub(crate) struct Latency {
    /// Requests at or under each of [`LATENCY_BOUNDS`], then all of them
    /// (`+Inf`): one more entry than there are bounds.
    pub cumulative: Vec<u64>,
    pub sum: Duration,
}

impl Latency {
    pub(crate) fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

/// What kind of answer a request got: the duration histogram's `route`
/// label, so that an asset's time is not averaged with a listing's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteClass {
    /// A file of a version (200, 206, 304).
    Asset,
    /// A redirect: an alias, a dist-tag, a version's entry file.
    Redirect,
    /// A package's or version's listing, or the index.
    Listing,
    /// Any status from 400.
    Error,
    /// The rest: health, stats, metrics, CORS preflights.
    Other,
}

impl RouteClass {
    pub(crate) const ALL: [RouteClass; 5] = [
        RouteClass::Asset,
        RouteClass::Redirect,
        RouteClass::Listing,
        RouteClass::Error,
        RouteClass::Other,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RouteClass::Asset => "asset",
            RouteClass::Redirect => "redirect",
            RouteClass::Listing => "listing",
            RouteClass::Error => "error",
            RouteClass::Other => "other",
        }
    }

    /// The class an answer of `status` counts in, given what answered it:
    /// every status from 400 is an error and every 3xx but 304 a redirect,
    /// whatever route gave it.
    pub(crate) fn of(answered: RouteClass, status: u16) -> RouteClass {
        match status {
            400.. => RouteClass::Error,
            300..=399 if status != 304 => RouteClass::Redirect,
            _ => answered,
        }
    }
}

/// Request counters, shared by the workers.
#[derive(Debug)]
pub(crate) struct Counters {
    started: Instant,
    started_at: SystemTime,
    by_method_status: [[AtomicU64; STATUS_SLOTS]; Method::ALL.len()],
    bytes_sent: AtomicU64,
    /// Responses whose body did not all reach the client.
    cut_short: AtomicU64,
    /// One histogram per [`RouteClass`], in `ALL`'s order.
    latency: [Histogram; RouteClass::ALL.len()],
    /// Requests being answered now: from the head received until the
    /// response has left, or was cut short.
    in_flight: AtomicU64,
    /// Asset responses with a body, by the coding sent (in
    /// [`Encoding::ALL`]'s order), and their body bytes.
    by_encoding: [EncodingCount; Encoding::ALL.len()],
    /// What deltas spared: for each whole delta sent, the bytes of what the
    /// client would have been sent without one (brotli, gzip or the file)
    /// less the delta's.
    delta_saved: AtomicU64,
    pub(super) connections: Arc<ConnStats>,
}

/// `encoding`'s place in [`Counters::by_encoding`].
fn slot(encoding: Encoding) -> usize {
    Encoding::ALL
        .iter()
        .position(|e| *e == encoding)
        .unwrap_or_default()
}

/// Responses and body bytes of one coding.
#[derive(Debug, Default)]
struct EncodingCount {
    responses: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    pub(super) fn new() -> Counters {
        Counters {
            started: Instant::now(),
            started_at: SystemTime::now(),
            by_method_status: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            bytes_sent: AtomicU64::new(0),
            cut_short: AtomicU64::new(0),
            latency: std::array::from_fn(|_| Histogram {
                buckets: Default::default(),
                sum_nanos: AtomicU64::new(0),
            }),
            in_flight: AtomicU64::new(0),
            by_encoding: Default::default(),
            delta_saved: AtomicU64::new(0),
            connections: Arc::default(),
        }
    }

    /// Counts an asset's answer with a body: `sent` of it, `body` bytes
    /// (a part, for a range). Only a whole delta counts what it saved.
    pub(super) fn record_sent(&self, sent: &Sent, body: usize) {
        let count = &self.by_encoding[slot(sent.encoding)];
        count.responses.fetch_add(1, Ordering::Relaxed);
        count.bytes.fetch_add(body as u64, Ordering::Relaxed);
        if sent.encoding.is_delta() && body == sent.length {
            let saved = sent.baseline.saturating_sub(sent.length) as u64;
            self.delta_saved.fetch_add(saved, Ordering::Relaxed);
        }
    }

    /// Asset responses with a body and their body bytes, by coding.
    pub(crate) fn by_encoding(&self) -> impl Iterator<Item = (Encoding, u64, u64)> + '_ {
        Encoding::ALL.into_iter().map(|e| {
            let count = &self.by_encoding[slot(e)];
            (
                e,
                count.responses.load(Ordering::Relaxed),
                count.bytes.load(Ordering::Relaxed),
            )
        })
    }

    /// The bytes deltas spared clients against what they would have been
    /// sent without one.
    pub(crate) fn delta_saved(&self) -> u64 {
        self.delta_saved.load(Ordering::Relaxed)
    }

    /// Counts a request a worker answered, `elapsed` after its head was
    /// received, in the class [`RouteClass::of`] gives its answer. It is
    /// in flight until [`Counters::delivered`].
    pub(super) fn record(&self, method: Method, status: u16, class: RouteClass, elapsed: Duration) {
        self.by_method_status[method as usize][status_slot(status)].fetch_add(1, Ordering::Relaxed);
        self.latency[RouteClass::of(class, status) as usize].observe(elapsed);
    }

    /// A request's head was received: it is in flight until delivered.
    pub(super) fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A response left: `body_bytes` of its body reached the client, all
    /// of it unless `complete` is false.
    pub(super) fn delivered(&self, body_bytes: u64, complete: bool) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.bytes_sent.fetch_add(body_bytes, Ordering::Relaxed);
        if !complete {
            self.cut_short.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Responses whose body did not all reach the client.
    pub(crate) fn cut_short(&self) -> u64 {
        self.cut_short.load(Ordering::Relaxed)
    }

    /// Requests being answered now.
    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Counts an answer the transport gave itself (its body is not counted:
    /// it is a few bytes of JSON, sent before any request was read whole).
    pub(super) fn record_refused(&self, status: u16) {
        self.by_method_status[Method::Other as usize][status_slot(status)]
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Requests by method and status, those with a count only; `None` for
    /// a status outside 100 to 599.
    pub(crate) fn requests(&self) -> Vec<(Method, Option<u16>, u64)> {
        let mut out = Vec::new();
        for method in Method::ALL {
            for (slot, count) in self.by_method_status[method as usize].iter().enumerate() {
                let n = count.load(Ordering::Relaxed);
                if n > 0 {
                    out.push((method, slot_status(slot), n));
                }
            }
        }
        out
    }

    pub(crate) fn bytes_sent(&self) -> u64 {
        self.bytes_sent.load(Ordering::Relaxed)
    }

    /// The latencies of the requests answered in `class`.
    pub(crate) fn latency_of(&self, class: RouteClass) -> Latency {
        self.latency[class as usize].snapshot()
    }

    /// The latencies of every request answered.
    #[cfg(test)]
    fn latency(&self) -> Latency {
        let mut all = self.latency_of(RouteClass::Asset);
        for class in &RouteClass::ALL[1..] {
            let more = self.latency_of(*class);
            for (total, n) in all.cumulative.iter_mut().zip(more.cumulative) {
                *total += n;
            }
            all.sum += more.sum;
        }
        all
    }

    /// When the server started, as wall-clock time.
    pub(crate) fn started_at(&self) -> SystemTime {
        self.started_at
    }

    pub(crate) fn connections(&self) -> ConnReport {
        self.connections.report()
    }

    /// A snapshot, with the cache's counters.
    pub(crate) fn snapshot(&self, cache: CacheStats, in_flight: InFlightStats) -> StatsReport {
        let mut by_status = BTreeMap::new();
        let mut total = 0;
        for (_, status, n) in self.requests() {
            total += n;
            let key = status.map_or("other".to_string(), |s| s.to_string());
            *by_status.entry(key).or_insert(0) += n;
        }
        StatsReport {
            uptime_secs: self.started.elapsed().as_secs_f64(),
            requests: total,
            by_status,
            bytes_sent: self.bytes_sent(),
            cut_short: self.cut_short(),
            cache,
            in_flight,
            connections: self.connections(),
            log: log::stats(),
        }
    }
}

/// What `/_stats` returns and what the server prints when it stops.
#[derive(Debug, Serialize)]
pub(crate) struct StatsReport {
    pub uptime_secs: f64,
    pub requests: u64,
    pub by_status: BTreeMap<String, u64>,
    /// Body bytes written to clients (headers not included).
    pub bytes_sent: u64,
    /// Responses whose body did not all reach the client (a reset stream,
    /// a closed connection, a timeout).
    pub cut_short: u64,
    pub cache: CacheStats,
    /// What responses in flight hold beyond the cache (`--in-flight-bytes`).
    pub in_flight: InFlightStats,
    pub connections: ConnReport,
    /// Log lines written and dropped (a stream not writable or not read).
    pub log: LogStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_own_slot() {
        let counters = Counters::new();
        let ms = Duration::from_millis(1);
        for (method, status, bytes) in [
            (Method::Get, 200, 10),
            (Method::Get, 200, 5),
            (Method::Head, 200, 0),
            (Method::Options, 204, 0),
            (Method::of("DELETE"), 405, 30),
            (Method::Get, 416, 0),
        ] {
            counters.begin();
            counters.record(method, status, RouteClass::Asset, ms);
            counters.delivered(bytes, true);
        }
        counters.record_refused(503);
        counters.record(Method::Get, 99, RouteClass::Asset, ms);
        counters.record(Method::Get, 600, RouteClass::Asset, ms);
        let mut got = counters.requests();
        // By status, "other" (None) first.
        got.sort_by_key(|(m, s, _)| (*s, m.as_str()));
        assert_eq!(
            got,
            vec![
                (Method::Get, None, 2),
                (Method::Get, Some(200), 2),
                (Method::Head, Some(200), 1),
                (Method::Options, Some(204), 1),
                (Method::Other, Some(405), 1),
                (Method::Get, Some(416), 1),
                (Method::Other, Some(503), 1),
            ]
        );
        assert_eq!(counters.bytes_sent(), 45);
        let stats = counters.snapshot(CacheStats::default(), InFlightStats::default());
        assert_eq!(stats.requests, 9);
        assert_eq!(stats.by_status["200"], 3);
        assert_eq!(stats.by_status["other"], 2);
        // Refused answers are requests, but no worker timed them.
        assert_eq!(counters.latency().count(), 8);
    }

    #[test]
    fn latencies_fall_in_the_first_bucket_that_holds_them() {
        let counters = Counters::new();
        for micros in [0, 25, 26, 100, 999, 1_000, 7_000_000, 60_000_000] {
            counters.record(
                Method::Get,
                200,
                RouteClass::Asset,
                Duration::from_micros(micros),
            );
        }
        let latency = counters.latency();
        let at = |bound: Duration| {
            let i = LATENCY_BOUNDS
                .iter()
                .position(|b| *b == bound)
                .expect("a bound");
            latency.cumulative[i]
        };
        assert_eq!(latency.cumulative.len(), LATENCY_BOUNDS.len() + 1);
        // `le` includes the bound itself.
        assert_eq!(at(Duration::from_micros(25)), 2);
        assert_eq!(at(Duration::from_micros(50)), 3);
        assert_eq!(at(Duration::from_micros(100)), 4);
        assert_eq!(at(Duration::from_millis(1)), 6);
        assert_eq!(at(Duration::from_secs(5)), 6);
        assert_eq!(at(Duration::from_secs(10)), 7);
        assert_eq!(latency.count(), 8);
        assert!(latency.cumulative.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(latency.sum, Duration::from_micros(67_002_150));
    }
}

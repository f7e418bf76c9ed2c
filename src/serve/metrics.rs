//! `/metrics`: the server's counters for Prometheus, in the OpenMetrics
//! text format, written by the Prometheus project's Rust client
//! (`prometheus-client`).
//!
//! The numbers are the ones `/_stats` reports ([`Counters`], the store's
//! [`CacheStats`], the transport's connection counters, the log's line
//! counts, the in-flight budget) and the process's own, read when a scrape
//! arrives. Requests touch only ccc's own atomics, shared with `/_stats`
//! and the final report, never a metrics crate's types (whose labelled
//! families find their series under a lock on every increment): each
//! scrape registers what it read as constant counters, gauges and
//! histograms in a registry of its own, and the crate writes the page
//! (`_total` after a counter family's name, a period after its help,
//! cumulative `_bucket{le}` lines, escapes, `# EOF`). What is left here is
//! which numbers go out under which names.

use crate::log::LogStats;
use crate::serve::counters::{Counters, LATENCY_BOUNDS, Latency, RouteClass};
use crate::serve::in_flight::InFlightStats;
use crate::serve::store::{CacheStats, CatalogHealth, CatalogState};
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet, text};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;
use std::fmt::{self, Debug};
use std::time::UNIX_EPOCH;

/// The `Content-Type` of the OpenMetrics text format.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The whole `/metrics` page.
pub(crate) fn render(
    counters: &Counters,
    cache: &CacheStats,
    in_flight: &InFlightStats,
    catalog: &CatalogHealth,
    log: &LogStats,
) -> String {
    // Help is given without its final period, which the registry adds.
    let mut r = Registry::default();
    let version = [("version", env!("CARGO_PKG_VERSION"))];
    let build = Labelled(vec![(version, ConstGauge::new(1))]);
    r.register("ccc_build_info", "The ccc version serving; always 1", build);
    let started = counters
        .started_at()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    r.register(
        "process_start_time_seconds",
        "When the server started, in seconds since the Unix epoch",
        ConstGauge::new(started.as_secs_f64()),
    );
    process(&mut r);

    let requests = counters.requests().into_iter().map(|(method, status, n)| {
        let status = status.map_or("other".to_string(), |s| s.to_string());
        let labels = ([("method", method.as_str())], [("status", status)]);
        (labels, ConstCounter::new(n))
    });
    r.register(
        "ccc_http_requests",
        "Responses sent, by method (GET, HEAD, OPTIONS, other) and status code; answers to \
         refused connections and heads count under method=other",
        Labelled(requests.collect()),
    );
    r.counter(
        "ccc_http_response_body_bytes",
        "Response body bytes written to clients (headers not included; 0 for HEAD and 304)",
        counters.bytes_sent(),
    );
    let by_encoding = |of: fn(u64, u64) -> u64| {
        let each = counters.by_encoding().map(|(encoding, responses, bytes)| {
            let label = [("encoding", encoding.as_str())];
            (label, ConstCounter::new(of(responses, bytes)))
        });
        Labelled(each.collect())
    };
    r.register(
        "ccc_asset_responses",
        "Asset responses with a body (200 and 206 to GET), by the content coding sent: br, \
         gzip, identity, or a delta (dcb, dcz) against a dictionary the client held",
        by_encoding(|responses, _| responses),
    );
    r.register(
        "ccc_asset_response_body_bytes",
        "Body bytes of those responses, by content coding",
        by_encoding(|_, bytes| bytes),
    );
    r.counter(
        "ccc_delta_saved_bytes",
        "Bytes whole dcb and dcz responses spared clients: what each would have been sent without \
         a dictionary (br, else gzip, else the file) less the delta",
        counters.delta_saved(),
    );
    r.counter(
        "ccc_http_responses_cut_short",
        "Responses whose body did not all reach the client (a reset stream, a closed connection, a \
         timeout)",
        counters.cut_short(),
    );
    let latencies = RouteClass::ALL.map(|class| {
        let latency = Histogram(counters.latency_of(class));
        ([("route", class.as_str())], latency)
    });
    r.register(
        "ccc_http_request_duration_seconds",
        "Time from a request's head being received to its response being handed to the socket, \
         by route: asset, redirect (an alias), listing, error (a status from 400), other",
        Labelled(latencies.into()),
    );
    r.gauge(
        "ccc_http_requests_in_flight",
        "Requests being answered now (head received, response not yet written whole or cut short)",
        counters.in_flight(),
    );

    r.counter(
        "ccc_cache_hits",
        "Asset requests answered from the cache",
        cache.hits,
    );
    r.counter(
        "ccc_cache_misses",
        "Asset requests that read the catalog",
        cache.misses,
    );
    r.counter(
        "ccc_cache_evictions",
        "Cache entries dropped to make room",
        cache.evictions,
    );
    r.counter(
        "ccc_cache_rejections",
        "Misses not cached: not asked for lately three more times than the entry they would have evicted",
        cache.rejections,
    );
    r.counter(
        "ccc_cache_invalidations",
        "Cache entries dropped because their version was deleted or replaced",
        cache.invalidations,
    );
    r.counter(
        "ccc_cache_corrupt",
        "Loaded bodies that failed their recorded size or digest (answered 500, never cached)",
        cache.corrupt,
    );
    r.gauge("ccc_cache_entries", "Assets in the cache", cache.entries);
    r.gauge(
        "ccc_cache_bytes",
        "Bytes the cached assets hold: bodies, names, headers, the cache index",
        cache.bytes,
    );
    if let Some(max) = cache.max_entries {
        r.gauge(
            "ccc_cache_max_entries",
            "Most assets the cache holds (--cache-capacity; absent: no limit but the bytes)",
            max,
        );
    }
    r.gauge(
        "ccc_cache_max_bytes",
        "Most bytes the cache holds (--cache-bytes)",
        cache.max_bytes,
    );
    r.counter(
        "ccc_index_hits",
        "Cache misses answered through the file index: the file's bytes read by its blob's id, \
         without the lookup",
        cache.index.hits,
    );
    r.gauge(
        "ccc_index_entries",
        "Files the file index holds records of",
        cache.index.entries,
    );
    r.gauge(
        "ccc_index_bytes",
        "Bytes the file index holds: records, names and its own index",
        cache.index.bytes,
    );
    r.gauge(
        "ccc_index_max_bytes",
        "Most bytes the file index holds (--index-bytes; 0: off)",
        cache.index.max_bytes,
    );
    r.gauge(
        "ccc_in_flight_bytes",
        "Bytes responses in flight hold beyond the cache: bodies read for them, pieces being sent, \
         decoders",
        in_flight.bytes,
    );
    r.gauge(
        "ccc_in_flight_max_bytes",
        "Most bytes responses in flight may hold beyond the cache (--in-flight-bytes)",
        in_flight.max_bytes,
    );
    r.gauge(
        "ccc_in_flight_peak_bytes",
        "The most bytes responses in flight held at once since the server started",
        in_flight.peak_bytes,
    );
    r.counter(
        "ccc_in_flight_waits",
        "Pieces of a body that waited for in-flight memory to be given back",
        in_flight.waits,
    );
    r.counter(
        "ccc_in_flight_streamed",
        "Misses of a body longer than a piece sent from the catalog a piece at a time, because the \
         in-flight budget had no room to read it whole",
        in_flight.streamed,
    );

    let states = CatalogState::ALL.map(|state| {
        let on = i64::from(state == catalog.state);
        ([("state", state.as_str())], ConstGauge::new(on))
    });
    r.register(
        "ccc_catalog_state",
        "1 for the state of the catalog served, 0 for the others (as /healthz says): current, \
         deleted (serving the file held open), rejected (the path names no servable catalog), \
         unavailable (answering 503)",
        Labelled(states.into()),
    );
    r.counter(
        "ccc_catalog_reloads",
        "Times another catalog file at the path was opened and served",
        catalog.reloads,
    );
    if let (Some(generation), Some(age)) = (catalog.generation, catalog.age_secs) {
        r.gauge(
            "ccc_catalog_generation",
            "Which change of the catalog is served: every publish, rm, gc and tag change raises it \
             by one, so replicas at the same generation serve the same catalog",
            generation,
        );
        r.gauge(
            "ccc_catalog_age_seconds",
            "Seconds since the change served was committed",
            age,
        );
    }
    if let Some(follower) = &catalog.follower {
        r.gauge(
            "ccc_catalog_stale",
            "On a replica (--max-lag): 1 when its follower has not confirmed the catalog within \
             --max-lag (/healthz answers 503), else 0",
            u64::from(follower.stale),
        );
        if let Some(seen) = follower.seen_secs_ago {
            r.gauge(
                "ccc_follower_seen_seconds_ago",
                "On a replica: seconds since its follower last confirmed the catalog is the \
                 replica's newest",
                seen,
            );
        }
    }

    let conns = counters.connections();
    r.gauge(
        "ccc_connections_open",
        "Client connections open now",
        conns.open as u64,
    );
    r.counter(
        "ccc_connections_accepted",
        "Connections accepted and served",
        conns.accepted,
    );
    r.counter(
        "ccc_connections_refused",
        "Connections refused with 503 at --max-connections",
        conns.refused,
    );
    r.counter(
        "ccc_connections_reclaimed",
        "Connections closed to make room at --max-connections: idle ones and ones that had not \
         sent a whole request, oldest first",
        conns.reclaimed,
    );
    r.counter(
        "ccc_connections_header_timeouts",
        "Connections closed because a request head was not complete within --header-timeout",
        conns.header_timeouts,
    );
    r.counter(
        "ccc_connections_idle_closed",
        "Keep-alive connections closed after --keepalive-timeout idle",
        conns.idle_closed,
    );
    r.counter(
        "ccc_connections_send_timeouts",
        "Connections dropped because the client took nothing for --send-timeout",
        conns.send_timeouts,
    );
    r.counter(
        "ccc_http2_stalled_streams",
        "HTTP/2 streams reset because the client gave them no flow-control window for \
         --send-timeout",
        conns.stalled_streams,
    );
    r.counter(
        "ccc_accept_errors",
        "Failed accept calls (out of descriptors, memory or buffers)",
        conns.accept_errors,
    );
    r.counter(
        "ccc_tls_handshake_failures",
        "TLS handshakes that failed or did not finish within --header-timeout",
        conns.tls_failures,
    );

    let file = log.access_log;
    for (name, help, stdout, stderr, access_log) in [
        (
            "ccc_log_lines_written",
            "Log lines written, by stream (stdout carries the access log, unless it has a file: \
             access_log)",
            log.stdout.written,
            log.stderr.written,
            file.map(|f| f.written),
        ),
        (
            "ccc_log_lines_dropped",
            "Log lines dropped because their stream was not writable or not read",
            log.stdout.dropped,
            log.stderr.dropped,
            file.map(|f| f.dropped),
        ),
    ] {
        let streams = [("stdout", Some(stdout)), ("stderr", Some(stderr))];
        let lines = streams.into_iter().chain([("access_log", access_log)]);
        let each =
            lines.filter_map(|(stream, n)| Some(([("stream", stream)], ConstCounter::new(n?))));
        r.register(name, help, Labelled(each.collect()));
    }

    let mut page = String::new();
    // Encoding fails only when the writer does, and a String does not.
    let _ = text::encode(&mut page, &r);
    page
}

/// The process's own numbers under the names Prometheus' client libraries
/// give them (`process_*`), and the anonymous memory that ccc's memory
/// budget is judged by (file-backed pages of the memory-mapped catalog are
/// page cache), read from `/proc/self` when a scrape arrives. A number
/// that cannot be read (not Linux) is left out.
fn process(r: &mut Registry) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after `(comm)`, which may hold spaces: state is the first.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let ticks = rustix::param::clock_ticks_per_second();
    if let (Some(user), Some(system), true) = (field(14), field(15), ticks > 0) {
        r.register(
            "process_cpu_seconds",
            "CPU time the process used, user and system, in seconds",
            ConstCounter::new((user + system) as f64 / ticks as f64),
        );
    }
    if let Some(bytes) = field(23) {
        r.gauge(
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes",
            bytes,
        );
    }
    if let Some(pages) = field(24) {
        r.gauge(
            "process_resident_memory_bytes",
            "Resident memory in bytes, page cache of the mapped catalog included",
            pages * rustix::param::page_size() as u64,
        );
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss_anon = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kib) = rss_anon {
        r.gauge(
            "ccc_process_resident_anon_bytes",
            "Resident anonymous memory in bytes: what --cache-bytes bounds, without page cache",
            kib * 1024,
        );
    }
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        // Less the descriptor that reads the folder.
        let open = dir.count().saturating_sub(1) as u64;
        r.gauge("process_open_fds", "Open file descriptors", open);
    }
    if let Some(max) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        r.gauge(
            "process_max_fds",
            "The most file descriptors the process may open",
            max,
        );
    }
}

/// Families of one sample without labels.
trait Plain {
    /// A counter, named without the `_total` its sample gets.
    fn counter(&mut self, name: &str, help: &str, value: u64);
    fn gauge(&mut self, name: &str, help: &str, value: u64);
}

impl Plain for Registry {
    fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.register(name, help, ConstCounter::new(value));
    }

    fn gauge(&mut self, name: &str, help: &str, value: u64) {
        self.register(name, help, ConstGauge::new(value));
    }
}

/// A family of one metric per label set, in the order given.
#[derive(Debug)]
struct Labelled<L, M>(Vec<(L, M)>);

impl<L: EncodeLabelSet + Debug, M: EncodeMetric + TypedMetric> EncodeMetric for Labelled<L, M> {
    fn encode(&self, mut family: MetricEncoder) -> fmt::Result {
        for (labels, metric) in &self.0 {
            metric.encode(family.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        M::TYPE
    }
}

/// A latency histogram, handed to the crate as it takes one: each
/// bucket's own count (it adds them up again), the sum and the count.
#[derive(Debug)]
struct Histogram(Latency);

impl TypedMetric for Histogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut out: MetricEncoder) -> fmt::Result {
        let Histogram(latency) = self;
        let bounds = LATENCY_BOUNDS.iter().map(|b| b.as_secs_f64());
        let mut below = 0;
        let own = latency
            .cumulative
            .iter()
            .map(|&n| n - std::mem::replace(&mut below, n));
        let buckets: Vec<_> = bounds.chain([f64::INFINITY]).zip(own).collect();
        let sum = latency.sum.as_secs_f64();
        out.encode_histogram::<NoLabelSet>(sum, latency.count(), &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::counters::Method;
    use std::time::Duration;

    #[test]
    fn a_family_is_help_type_then_samples() {
        let counters = Counters::new();
        counters.record(
            Method::Get,
            200,
            RouteClass::Asset,
            Duration::from_micros(30),
        );
        counters.begin();
        counters.delivered(7, true);
        counters.record(
            Method::Head,
            304,
            RouteClass::Asset,
            Duration::from_millis(3),
        );
        counters.record(
            Method::Get,
            302,
            RouteClass::Other,
            Duration::from_millis(1),
        );
        let catalog = CatalogHealth {
            path: "cdn.db".into(),
            state: CatalogState::Current,
            problem: None,
            reloads: 0,
            generation: Some(7),
            changed_at: None,
            age_secs: Some(3),
            follower: None,
        };
        let page = render(
            &counters,
            &CacheStats::default(),
            &InFlightStats::default(),
            &catalog,
            &LogStats::default(),
        );
        let want = "# HELP ccc_http_requests ";
        let at = page.find(want).expect("the requests family");
        let family: Vec<&str> = page[at..].lines().take(5).collect();
        // A counter family is named without the `_total` its samples carry.
        assert_eq!(family[1], "# TYPE ccc_http_requests counter");
        assert_eq!(
            &family[2..],
            [
                "ccc_http_requests_total{method=\"GET\",status=\"200\"} 1",
                "ccc_http_requests_total{method=\"GET\",status=\"302\"} 1",
                "ccc_http_requests_total{method=\"HEAD\",status=\"304\"} 1",
            ]
        );
        for line in [
            "ccc_http_request_duration_seconds_bucket{le=\"0.000025\",route=\"asset\"} 0",
            "ccc_http_request_duration_seconds_bucket{le=\"0.00005\",route=\"asset\"} 1",
            "ccc_http_request_duration_seconds_bucket{le=\"0.0025\",route=\"asset\"} 1",
            "ccc_http_request_duration_seconds_bucket{le=\"0.005\",route=\"asset\"} 2",
            "ccc_http_request_duration_seconds_bucket{le=\"10.0\",route=\"asset\"} 2",
            "ccc_http_request_duration_seconds_bucket{le=\"+Inf\",route=\"asset\"} 2",
            "ccc_http_request_duration_seconds_sum{route=\"asset\"} 0.00303",
            "ccc_http_request_duration_seconds_count{route=\"asset\"} 2",
            // A 302 counts as a redirect whatever answered it.
            "ccc_http_request_duration_seconds_count{route=\"redirect\"} 1",
            "ccc_http_request_duration_seconds_count{route=\"listing\"} 0",
            "ccc_http_requests_in_flight 0",
            "ccc_catalog_state{state=\"current\"} 1",
            "ccc_catalog_state{state=\"deleted\"} 0",
            "ccc_catalog_generation 7",
            "ccc_catalog_age_seconds 3",
            "ccc_http_response_body_bytes_total 7",
            "ccc_log_lines_dropped_total{stream=\"stderr\"} 0",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in\n{page}");
        }
        // Every sample line belongs to the family declared above it.
        let mut family = "";
        for line in page.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                family = rest.split(' ').next().unwrap_or_default();
            } else if !line.starts_with('#') {
                assert!(line.starts_with(family), "`{line}` outside {family}");
            }
        }
        assert!(page.ends_with("\n# EOF\n"), "{page}");
        // The crate writes help text as given, with a period after it:
        // none may need an escape or end with a period of its own.
        for help in page.lines().filter(|l| l.starts_with("# HELP ")) {
            assert!(!help.contains(['"', '\\']), "{help}");
            assert!(help.ends_with('.') && !help.ends_with(".."), "{help}");
        }
        assert!(
            !page.contains("stream=\"access_log\""),
            "no file, no stream"
        );
        // With `--access-log PATH`, its file is a stream of its own.
        let logs = LogStats {
            access_log: Some(crate::log::StreamStats {
                written: 12,
                dropped: 3,
            }),
            ..LogStats::default()
        };
        let page = render(
            &counters,
            &CacheStats::default(),
            &InFlightStats::default(),
            &catalog,
            &logs,
        );
        for line in [
            "ccc_log_lines_written_total{stream=\"access_log\"} 12",
            "ccc_log_lines_dropped_total{stream=\"access_log\"} 3",
        ] {
            assert!(page.lines().any(|l| l == line), "no `{line}` in\n{page}");
        }
    }
}

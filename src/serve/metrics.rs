//! `/metrics`: the server's counters in the Prometheus text exposition
//! format, version 0.0.4 (`# HELP` and `# TYPE` before each family, one
//! sample a line, histograms as cumulative `_bucket{le=...}` lines with
//! `_sum` and `_count`).
//!
//! The numbers are the ones `/_stats` reports ([`Counters`], the store's
//! [`CacheStats`], the transport's connection counters, the log's line
//! counts), read when a scrape arrives; nothing here runs per request.
//! They are rendered here rather than kept in a metrics crate's registry:
//! the counters are ccc's own atomics, shared with `/_stats` and the final
//! report, and the `prometheus` crate's labelled vectors look label values
//! up under a lock on every increment, while `prometheus-client` writes
//! OpenMetrics rather than this format.

use crate::log::LogStats;
use crate::serve::counters::{Counters, LATENCY_BOUNDS, RouteClass};
use crate::serve::in_flight::InFlightStats;
use crate::serve::store::{CacheStats, CatalogHealth, CatalogState};
use std::fmt::{Display, Write};
use std::time::UNIX_EPOCH;

/// The `Content-Type` of the text format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The whole `/metrics` page.
pub(crate) fn render(
    counters: &Counters,
    cache: &CacheStats,
    in_flight: &InFlightStats,
    catalog: &CatalogHealth,
    log: &LogStats,
) -> String {
    let mut page = Page::default();

    page.family(
        "ccc_build_info",
        "gauge",
        "The ccc version serving; always 1.",
    );
    page.sample(
        "ccc_build_info",
        &[("version", env!("CARGO_PKG_VERSION"))],
        1,
    );
    let started = counters
        .started_at()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    page.family(
        "process_start_time_seconds",
        "gauge",
        "When the server started, in seconds since the Unix epoch.",
    );
    page.sample("process_start_time_seconds", &[], started.as_secs_f64());
    process(&mut page);

    page.family(
        "ccc_http_requests_total",
        "counter",
        "Responses sent, by method (GET, HEAD, OPTIONS, other) and status code; \
         answers to refused connections and heads count under method=\"other\".",
    );
    for (method, status, n) in counters.requests() {
        let status = status.map_or("other".to_string(), |s| s.to_string());
        page.sample(
            "ccc_http_requests_total",
            &[("method", method.as_str()), ("status", &status)],
            n,
        );
    }
    page.counter(
        "ccc_http_response_body_bytes_total",
        "Response body bytes written to clients (headers not included; 0 for HEAD and 304).",
        counters.bytes_sent(),
    );
    page.family(
        "ccc_asset_responses_total",
        "counter",
        "Asset responses with a body (200 and 206 to GET), by the content coding sent: br, \
         gzip, identity, or a delta (dcb, dcz) against a dictionary the client held.",
    );
    for (encoding, responses, _) in counters.by_encoding() {
        let label = [("encoding", encoding.as_str())];
        page.sample("ccc_asset_responses_total", &label, responses);
    }
    page.family(
        "ccc_asset_response_body_bytes_total",
        "counter",
        "Body bytes of those responses, by content coding.",
    );
    for (encoding, _, bytes) in counters.by_encoding() {
        let label = [("encoding", encoding.as_str())];
        page.sample("ccc_asset_response_body_bytes_total", &label, bytes);
    }
    page.counter(
        "ccc_delta_saved_bytes_total",
        "Bytes whole dcb and dcz responses spared clients: what each would have been sent \
         without a dictionary (br, else gzip, else the file) less the delta.",
        counters.delta_saved(),
    );
    page.counter(
        "ccc_http_responses_cut_short_total",
        "Responses whose body did not all reach the client (a reset stream, a closed \
         connection, a timeout).",
        counters.cut_short(),
    );

    let name = "ccc_http_request_duration_seconds";
    page.family(
        name,
        "histogram",
        "Time from a request's head being received to its response being handed to the socket, \
         by route: asset, redirect (an alias), listing, error (a status from 400), other.",
    );
    let bucket = format!("{name}_bucket");
    for class in RouteClass::ALL {
        let latency = counters.latency_of(class);
        let route = ("route", class.as_str());
        for (bound, n) in LATENCY_BOUNDS.iter().zip(&latency.cumulative) {
            page.sample(
                &bucket,
                &[route, ("le", &bound.as_secs_f64().to_string())],
                n,
            );
        }
        page.sample(&bucket, &[route, ("le", "+Inf")], latency.count());
        let sum = latency.sum.as_secs_f64();
        page.sample(&format!("{name}_sum"), &[route], sum);
        page.sample(&format!("{name}_count"), &[route], latency.count());
    }
    page.gauge(
        "ccc_http_requests_in_flight",
        "Requests being answered now (head received, response not yet written whole or cut \
         short).",
        counters.in_flight(),
    );

    page.counter(
        "ccc_cache_hits_total",
        "Asset requests answered from the cache.",
        cache.hits,
    );
    page.counter(
        "ccc_cache_misses_total",
        "Asset requests that read the catalog.",
        cache.misses,
    );
    page.counter(
        "ccc_cache_evictions_total",
        "Cache entries dropped to make room.",
        cache.evictions,
    );
    page.counter(
        "ccc_cache_rejections_total",
        "Misses not cached: the entry they would have evicted was asked for as often lately.",
        cache.rejections,
    );
    page.counter(
        "ccc_cache_invalidations_total",
        "Cache entries dropped because their version was deleted or replaced.",
        cache.invalidations,
    );
    page.counter(
        "ccc_cache_corrupt_total",
        "Loaded bodies that failed their recorded size or digest (answered 500, never cached).",
        cache.corrupt,
    );
    page.gauge("ccc_cache_entries", "Assets in the cache.", cache.entries);
    page.gauge(
        "ccc_cache_bytes",
        "Bytes the cached assets hold: bodies, names, headers, the cache index.",
        cache.bytes,
    );
    if let Some(max_entries) = cache.max_entries {
        page.gauge(
            "ccc_cache_max_entries",
            "Most assets the cache holds (--cache-capacity; absent: no limit but the bytes).",
            max_entries,
        );
    }
    page.gauge(
        "ccc_cache_max_bytes",
        "Most bytes the cache holds (--cache-bytes).",
        cache.max_bytes,
    );
    page.counter(
        "ccc_index_hits_total",
        "Cache misses answered through the file index: the file's bytes read by its blob's id, \
         without the lookup.",
        cache.index.hits,
    );
    page.gauge(
        "ccc_index_entries",
        "Files the file index holds records of.",
        cache.index.entries,
    );
    page.gauge(
        "ccc_index_bytes",
        "Bytes the file index holds: records, names and its own index.",
        cache.index.bytes,
    );
    page.gauge(
        "ccc_index_max_bytes",
        "Most bytes the file index holds (--index-bytes; 0: off).",
        cache.index.max_bytes,
    );
    page.gauge(
        "ccc_in_flight_bytes",
        "Bytes responses in flight hold beyond the cache: bodies read for them, pieces being \
         sent, decoders.",
        in_flight.bytes,
    );
    page.gauge(
        "ccc_in_flight_max_bytes",
        "Most bytes responses in flight may hold beyond the cache (--in-flight-bytes).",
        in_flight.max_bytes,
    );
    page.gauge(
        "ccc_in_flight_peak_bytes",
        "The most bytes responses in flight held at once since the server started.",
        in_flight.peak_bytes,
    );
    page.counter(
        "ccc_in_flight_waits_total",
        "Pieces of a body that waited for in-flight memory to be given back.",
        in_flight.waits,
    );
    page.counter(
        "ccc_in_flight_streamed_total",
        "Misses of a body longer than a piece sent from the catalog a piece at a time, because \
         the in-flight budget had no room to read it whole.",
        in_flight.streamed,
    );

    page.family(
        "ccc_catalog_state",
        "gauge",
        "1 for the state of the catalog served, 0 for the others (as /healthz says): \
         current, deleted (serving the file held open), rejected (the path names \
         no servable catalog), unavailable (answering 503).",
    );
    for state in CatalogState::ALL {
        let on = u8::from(state == catalog.state);
        page.sample("ccc_catalog_state", &[("state", state.as_str())], on);
    }
    page.counter(
        "ccc_catalog_reloads_total",
        "Times another catalog file at the path was opened and served.",
        catalog.reloads,
    );
    if let (Some(generation), Some(age)) = (catalog.generation, catalog.age_secs) {
        page.gauge(
            "ccc_catalog_generation",
            "Which change of the catalog is served: every publish, rm, gc and tag change \
             raises it by one, so replicas at the same generation serve the same catalog.",
            generation,
        );
        page.gauge(
            "ccc_catalog_age_seconds",
            "Seconds since the change served was committed.",
            age,
        );
    }

    if let Some(follower) = &catalog.follower {
        page.gauge(
            "ccc_catalog_stale",
            "On a replica (--max-lag): 1 when its follower has not confirmed the catalog \
             within --max-lag (/healthz answers 503), else 0.",
            u8::from(follower.stale),
        );
        if let Some(seen) = follower.seen_secs_ago {
            page.gauge(
                "ccc_follower_seen_seconds_ago",
                "On a replica: seconds since its follower last confirmed the catalog is the \
                 replica's newest.",
                seen,
            );
        }
    }

    let conns = counters.connections();
    page.gauge(
        "ccc_connections_open",
        "Client connections open now.",
        conns.open,
    );
    page.counter(
        "ccc_connections_accepted_total",
        "Connections accepted and served.",
        conns.accepted,
    );
    page.counter(
        "ccc_connections_refused_total",
        "Connections refused with 503 at --max-connections.",
        conns.refused,
    );
    page.counter(
        "ccc_connections_reclaimed_total",
        "Connections closed to make room at --max-connections: idle ones and ones that had not \
         sent a whole request, oldest first.",
        conns.reclaimed,
    );
    page.counter(
        "ccc_connections_header_timeouts_total",
        "Connections closed because a request head was not complete within --header-timeout.",
        conns.header_timeouts,
    );
    page.counter(
        "ccc_connections_idle_closed_total",
        "Keep-alive connections closed after --keepalive-timeout idle.",
        conns.idle_closed,
    );
    page.counter(
        "ccc_connections_send_timeouts_total",
        "Connections dropped because the client took nothing for --send-timeout.",
        conns.send_timeouts,
    );
    page.counter(
        "ccc_http2_stalled_streams_total",
        "HTTP/2 streams reset because the client gave them no flow-control window for \
         --send-timeout.",
        conns.stalled_streams,
    );
    page.counter(
        "ccc_accept_errors_total",
        "Failed accept calls (out of descriptors, memory or buffers).",
        conns.accept_errors,
    );
    page.counter(
        "ccc_tls_handshake_failures_total",
        "TLS handshakes that failed or did not finish within --header-timeout.",
        conns.tls_failures,
    );

    let file = log.access_log;
    for (name, help, stdout, stderr, access_log) in [
        (
            "ccc_log_lines_written_total",
            "Log lines written, by stream (stdout carries the access log, unless it has a file: access_log).",
            log.stdout.written,
            log.stderr.written,
            file.map(|f| f.written),
        ),
        (
            "ccc_log_lines_dropped_total",
            "Log lines dropped because their stream was not writable or not read.",
            log.stdout.dropped,
            log.stderr.dropped,
            file.map(|f| f.dropped),
        ),
    ] {
        page.family(name, "counter", help);
        page.sample(name, &[("stream", "stdout")], stdout);
        page.sample(name, &[("stream", "stderr")], stderr);
        if let Some(lines) = access_log {
            page.sample(name, &[("stream", "access_log")], lines);
        }
    }
    page.text
}

/// The process's own numbers under the names Prometheus' client libraries
/// give them (`process_*`), and the anonymous memory that ccc's memory
/// budget is judged by (file-backed pages of the memory-mapped catalog are
/// page cache), read from `/proc/self` when a scrape arrives. A number
/// that cannot be read (not Linux) is left out.
fn process(page: &mut Page) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after `(comm)`, which may hold spaces: state is the first.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let ticks = rustix::param::clock_ticks_per_second();
    if let (Some(user), Some(system), true) = (field(14), field(15), ticks > 0) {
        page.family(
            "process_cpu_seconds_total",
            "counter",
            "CPU time the process used, user and system, in seconds.",
        );
        page.sample(
            "process_cpu_seconds_total",
            &[],
            (user + system) as f64 / ticks as f64,
        );
    }
    if let Some(bytes) = field(23) {
        page.gauge(
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            bytes,
        );
    }
    if let Some(pages) = field(24) {
        page.gauge(
            "process_resident_memory_bytes",
            "Resident memory in bytes, page cache of the mapped catalog included.",
            pages * rustix::param::page_size() as u64,
        );
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss_anon = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kib) = rss_anon {
        page.gauge(
            "ccc_process_resident_anon_bytes",
            "Resident anonymous memory in bytes: what --cache-bytes bounds, without page cache.",
            kib * 1024,
        );
    }
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        // Less the descriptor that reads the folder.
        let open = dir.count().saturating_sub(1);
        page.gauge("process_open_fds", "Open file descriptors.", open);
    }
    if let Some(max) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        page.gauge(
            "process_max_fds",
            "The most file descriptors the process may open.",
            max,
        );
    }
}

/// The page being written.
#[derive(Default)]
struct Page {
    text: String,
}

impl Page {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {}", escape(help, false));
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (label, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{label}=\"{}\"", escape(value, true));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }

    fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, "counter", help);
        self.sample(name, &[], value);
    }

    fn gauge(&mut self, name: &str, help: &str, value: impl Display) {
        self.family(name, "gauge", help);
        self.sample(name, &[], value);
    }
}

/// The format's escapes: `\` and newline in help text, and `"` too in
/// label values.
fn escape(text: &str, label_value: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if label_value => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::counters::Method;
    use std::time::Duration;

    #[test]
    fn help_and_labels_are_escaped() {
        assert_eq!(escape("a\\b\nc \"d\"", false), "a\\\\b\\nc \"d\"");
        assert_eq!(escape("a\\b\nc \"d\"", true), "a\\\\b\\nc \\\"d\\\"");
    }

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
        let want = "# HELP ccc_http_requests_total ";
        let at = page.find(want).expect("the requests family");
        let family: Vec<&str> = page[at..].lines().take(5).collect();
        assert_eq!(family[1], "# TYPE ccc_http_requests_total counter");
        assert_eq!(
            &family[2..],
            [
                "ccc_http_requests_total{method=\"GET\",status=\"200\"} 1",
                "ccc_http_requests_total{method=\"GET\",status=\"302\"} 1",
                "ccc_http_requests_total{method=\"HEAD\",status=\"304\"} 1",
            ]
        );
        for line in [
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"0.000025\"} 0",
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"0.00005\"} 1",
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"0.0025\"} 1",
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"0.005\"} 2",
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"10\"} 2",
            "ccc_http_request_duration_seconds_bucket{route=\"asset\",le=\"+Inf\"} 2",
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

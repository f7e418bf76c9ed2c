//! `/metrics` read by the Prometheus project's own strict OpenMetrics
//! parser (the Python client's `prometheus_client.openmetrics.parser`),
//! checked against the traffic the test sent: requests by method and
//! status, body bytes, the latency histogram, the cache and the connection
//! counters.
//!
//! The parser is not on every machine: the test is ignored by default and
//! `.ci/run` installs `prometheus_client` in a virtualenv and runs it with
//! `CCC_TEST_PYTHON` naming that interpreter.

use crate::serve_util::{Server, get, parse_raw, poll_until, raw_get};
use crate::util::{Rng, Workspace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A sample: its name (`..._bucket`, `..._total`), labels and value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses `text` with `prometheus_client`'s OpenMetrics parser, which
/// refuses what the format does not allow (a missing `# EOF`, buckets out
/// of order, a `_count` other than the `+Inf` bucket...), and returns, per
/// family, its type and samples.
fn parse(text: &str) -> BTreeMap<String, (String, Vec<Sample>)> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    out.append({
        "name": family.name,
        "type": family.type,
        "help": family.documentation,
        "samples": [[s.name, s.labels, s.value] for s in family.samples],
    })
print(json.dumps(out))
"#;
    let python = std::env::var("CCC_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(&python)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} (CCC_TEST_PYTHON): {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write /metrics to the parser");
    let out = child.wait_with_output().expect("the parser's output");
    assert!(
        out.status.success(),
        "prometheus_client refused /metrics:\n{}\n---\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let families: Vec<Value> = serde_json::from_slice(&out.stdout).expect("the parser's JSON");
    families
        .into_iter()
        .map(|f| {
            let samples = f["samples"]
                .as_array()
                .expect("samples")
                .iter()
                .map(|s| {
                    let labels = s[1]
                        .as_object()
                        .expect("labels")
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().expect("label").to_string()))
                        .collect();
                    (
                        s[0].as_str().expect("name").to_string(),
                        labels,
                        s[2].as_f64().expect("value"),
                    )
                })
                .collect();
            assert!(
                !f["help"].as_str().unwrap_or_default().is_empty(),
                "{} has no HELP",
                f["name"]
            );
            let name = f["name"].as_str().expect("name").to_string();
            // A sample whose name fits no declared family is read as a
            // family of its own, of unknown type.
            assert_ne!(f["type"], "unknown", "{name} has no TYPE:\n{text}");
            (
                name,
                (f["type"].as_str().expect("type").to_string(), samples),
            )
        })
        .collect()
}

/// Requests sent by (method label, status), and the body bytes received.
#[derive(Default)]
struct Tally {
    requests: BTreeMap<(&'static str, u16), u64>,
    body_bytes: u64,
}

impl Tally {
    fn add(&mut self, method: &'static str, status: u16, body: usize) {
        *self.requests.entry((method, status)).or_default() += 1;
        self.body_bytes += body as u64;
    }
}

/// A connection that made one request (`GET /healthz`, counted in `sent`)
/// and stays open, idle, for the keep-alive timeout.
fn keep_alive(server: &Server, sent: &mut Tally) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).expect("read /healthz");
        assert!(n > 0, "closed before the answer: {got:?}");
        got.extend_from_slice(&chunk[..n]);
        if let Some(r) = parse_raw(&got) {
            let length: usize = r
                .header("content-length")
                .expect("length")
                .parse()
                .expect("n");
            if r.after_headers.len() == length {
                assert_eq!(r.status, 200);
                sent.add("GET", 200, length);
                return stream;
            }
        }
    }
}

#[test]
#[ignore = "needs python3 with prometheus_client; .ci/run installs it and sets CCC_TEST_PYTHON"]
fn prometheus_reads_what_the_server_counted() {
    let ws = Workspace::new();
    let mut rng = Rng::new(5);
    let files = [
        ("a.js", rng.text(30_000)),
        ("b.css", rng.text(5_000)),
        ("c.bin", rng.bytes(4_000)),
    ];
    for (path, body) in &files {
        ws.write(&format!("dist/{path}"), body);
    }
    ws.publish("app@1.0.0", "dist", &[]);
    // Two cache entries for three files: the third evicts one.
    let server = Server::start(
        &ws,
        &[
            "--cache-capacity",
            "2",
            "--max-connections",
            "2",
            "--header-timeout",
            "1s",
        ],
    );
    let url = |path: &str| server.url(&format!("/assets/app/1.0.0/{path}"));

    // The traffic, and what the client saw of it.
    let mut sent = Tally::default();
    for _ in 0..3 {
        for (path, body) in &files {
            let r = get(&url(path), &[]);
            assert_eq!((r.status, &r.body), (200, body), "{path}");
            sent.add("GET", 200, r.body.len());
        }
    }
    let head = raw_get(server.addr, "HEAD", "/assets/app/1.0.0/a.js", &[]);
    assert_eq!(head.status, 200);
    sent.add("HEAD", 200, 0);
    let etag = get(&url("a.js"), &[]).must("etag").to_string();
    sent.add("GET", 200, files[0].1.len());
    let cached = get(&url("a.js"), &[("If-None-Match", &etag)]);
    assert_eq!(cached.status, 304);
    sent.add("GET", 304, 0);
    let missing = get(&url("nope.js"), &[]);
    assert_eq!(missing.status, 404);
    sent.add("GET", 404, missing.body.len());
    let post = raw_get(server.addr, "POST", "/assets/app/1.0.0/a.js", &[]);
    assert_eq!(post.status, 405);
    sent.add("other", 405, post.body().len());
    let latest = get(&server.url("/assets/app/latest/a.js"), &[]);
    assert_eq!(latest.status, 302);
    sent.add("GET", 302, latest.body.len());

    // A head that never completes: closed at --header-timeout.
    let mut slow = TcpStream::connect(server.addr).expect("connect");
    slow.write_all(b"GET /healthz HTTP/1.1\r\n")
        .expect("half a head");
    slow.set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    let _ = slow.read_to_end(&mut Vec::new());
    drop(slow);

    // Two idle keep-alive connections fill --max-connections 2: the next
    // one makes room by closing the longest idle.
    let idle: Vec<TcpStream> = (0..2).map(|_| keep_alive(&server, &mut sent)).collect();
    let room = raw_get(server.addr, "GET", "/healthz", &[]);
    assert_eq!(room.status, 200);
    sent.add("GET", 200, room.body().len());
    drop(idle);
    // Two connections answering a request fill it with nothing to
    // reclaim (HTTP/2 streams given no window: their answers' heads are
    // sent, their bodies wait): the next is refused with 503.
    let busy: Vec<crate::attack::h2::H2> = (0..2)
        .map(|_| {
            use crate::attack::h2::*;
            let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
            c.send(&header_frames(
                1,
                &request("/assets/app/1.0.0/a.js", &[]),
                true,
            ))
            .expect("a request");
            sent.add("GET", 200, 0);
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // (Until the idle ones are gone, a try may still find room.)
    let refused = poll_until(Duration::from_secs(10), || {
        let r = raw_get(server.addr, "GET", "/healthz", &[]);
        if r.status == 503 {
            sent.add("other", 503, 0);
            return true;
        }
        sent.add("GET", r.status, r.body().len());
        false
    });
    assert!(
        refused.is_some(),
        "no 503 with the cap full of busy connections"
    );
    drop(busy);
    // The held connections close; a scrape gets through again (each try
    // refused meanwhile is counted too).
    let mut page = None;
    poll_until(Duration::from_secs(10), || {
        let r = get(&server.url("/metrics"), &[]);
        if r.status == 503 {
            sent.add("other", 503, 0);
            return false;
        }
        page = Some(r);
        true
    });
    let page = page.expect("a /metrics answer once the connections closed");
    // Everything in /_stats now and in the scrape was counted before it.
    let stats = server.stats();
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(
        page.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let families = parse(&page.text());

    let value = |family: &str, sample: &str, labels: &[(&str, &str)]| -> f64 {
        let (_, samples) = families
            .get(family)
            .unwrap_or_else(|| panic!("no family {family} in\n{}", page.text()));
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let found: Vec<f64> = samples
            .iter()
            .filter(|(name, l, _)| name == sample && *l == want)
            .map(|(_, _, v)| *v)
            .collect();
        let [v] = found[..] else {
            panic!("want one {sample}{labels:?}, found {found:?}")
        };
        v
    };
    let kind = |family: &str| families[family].0.clone();

    // Requests: exactly what was sent, plus the refusals at the cap.
    assert_eq!(kind("ccc_http_requests"), "counter");
    let (_, requests) = &families["ccc_http_requests"];
    let mut seen: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (name, labels, v) in requests {
        assert_eq!(name, "ccc_http_requests_total");
        seen.insert((labels["method"].clone(), labels["status"].clone()), *v);
    }
    let want: BTreeMap<(String, String), f64> = sent
        .requests
        .iter()
        .map(|((m, s), n)| ((m.to_string(), s.to_string()), *n as f64))
        .collect();
    assert_eq!(seen, want);
    let refused = sent.requests[&("other", 503)];
    assert_eq!(
        value(
            "ccc_http_response_body_bytes",
            "ccc_http_response_body_bytes_total",
            &[]
        ),
        sent.body_bytes as f64
    );
    // /_stats counts the scrape's body too.
    assert_eq!(
        stats["bytes_sent"],
        sent.body_bytes + page.body.len() as u64
    );

    // The histogram, by route: each cumulative, ending at +Inf = its
    // _count; the counts add up to the requests a worker answered, and a
    // status from 400 counts as an error whatever answered it.
    let h = "ccc_http_request_duration_seconds";
    assert_eq!(kind(h), "histogram");
    let total = (sent.requests.values().sum::<u64>() - refused) as f64;
    let mut counted = 0.0;
    for route in ["asset", "redirect", "listing", "error", "other"] {
        let buckets: Vec<(f64, f64)> = families[h]
            .1
            .iter()
            .filter(|(name, labels, _)| name == &format!("{h}_bucket") && labels["route"] == route)
            .map(|(_, labels, v)| {
                let le = &labels["le"];
                let bound = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().expect("le")
                };
                (bound, *v)
            })
            .collect();
        assert!(buckets.len() >= 10, "{route}: {buckets:?}");
        assert!(
            buckets
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
        assert_eq!(buckets[0].0, 0.000025, "sub-millisecond buckets first");
        assert_eq!(buckets.last().map(|b| b.0), Some(f64::INFINITY));
        let count = value(h, &format!("{h}_count"), &[("route", route)]);
        assert_eq!(buckets.last().map(|b| b.1), Some(count), "{route}");
        // Nothing on a loopback took 10 s.
        let ten = buckets.iter().find(|(b, _)| *b == 10.0).expect("le=10");
        assert_eq!(ten.1, count, "{route}");
        let sum = value(h, &format!("{h}_sum"), &[("route", route)]);
        assert!(sum >= 0.0 && sum < count.max(1.0) * 10.0, "{route}: {sum}s");
        counted += count;
    }
    assert_eq!(counted, total);
    // (Refusals at the cap are counted, but no worker timed them.)
    let errors: u64 = sent
        .requests
        .iter()
        .filter(|((_, status), _)| *status >= 400)
        .map(|(_, n)| n)
        .sum::<u64>()
        - refused;
    assert_eq!(
        value(h, &format!("{h}_count"), &[("route", "error")]),
        errors as f64
    );
    assert!(value(h, &format!("{h}_count"), &[("route", "asset")]) >= 3.0);
    // The scrape itself was being answered.
    assert_eq!(kind("ccc_http_requests_in_flight"), "gauge");
    let in_flight = value(
        "ccc_http_requests_in_flight",
        "ccc_http_requests_in_flight",
        &[],
    );
    assert!(in_flight >= 1.0, "{in_flight}");

    // The process, by the names Prometheus' client libraries use.
    let gauge = |name: &str| value(name, name, &[]);
    let resident = gauge("process_resident_memory_bytes");
    let anon = gauge("ccc_process_resident_anon_bytes");
    assert!(
        resident > 1e6 && anon > 0.0 && anon < resident,
        "{resident} {anon}"
    );
    assert!(gauge("process_virtual_memory_bytes") > resident);
    let open = gauge("process_open_fds");
    assert!(open >= 3.0 && open <= gauge("process_max_fds"), "{open}");
    assert_eq!(kind("process_cpu_seconds"), "counter");
    let cpu = value("process_cpu_seconds", "process_cpu_seconds_total", &[]);
    assert!(cpu > 0.0 && cpu < 600.0, "{cpu}");

    // The cache: the same numbers as /_stats, and what two entries for
    // three files must show.
    for (family, field) in [
        ("ccc_cache_hits", "hits"),
        ("ccc_cache_misses", "misses"),
        ("ccc_cache_evictions", "evictions"),
        ("ccc_cache_rejections", "rejections"),
    ] {
        assert_eq!(kind(family), "counter");
        let v = value(family, &format!("{family}_total"), &[]);
        assert_eq!(v, stats["cache"][field].as_f64().expect(field), "{family}");
    }
    for (family, field) in [
        ("ccc_cache_entries", "entries"),
        ("ccc_cache_bytes", "bytes"),
    ] {
        assert_eq!(kind(family), "gauge");
        let v = value(family, family, &[]);
        assert_eq!(v, stats["cache"][field].as_f64().expect(field), "{family}");
    }
    assert!(value("ccc_cache_misses", "ccc_cache_misses_total", &[]) >= 3.0);
    assert!(value("ccc_cache_hits", "ccc_cache_hits_total", &[]) >= 1.0);
    // The third file either took a place or was turned away: asked for
    // in turn with the two cached ones, it is never asked for more often.
    assert!(
        value("ccc_cache_evictions", "ccc_cache_evictions_total", &[])
            + value("ccc_cache_rejections", "ccc_cache_rejections_total", &[])
            >= 1.0
    );
    assert!(value("ccc_cache_entries", "ccc_cache_entries", &[]) <= 2.0);
    assert_eq!(
        value("ccc_cache_max_entries", "ccc_cache_max_entries", &[]),
        2.0
    );

    // Connections.
    let conn = |name: &str| value(name, &format!("{name}_total"), &[]);
    assert_eq!(conn("ccc_connections_refused"), refused as f64);
    assert!(conn("ccc_connections_reclaimed") >= 1.0);
    assert_eq!(conn("ccc_connections_header_timeouts"), 1.0);
    assert_eq!(conn("ccc_connections_send_timeouts"), 0.0);
    assert_eq!(
        conn("ccc_connections_accepted"),
        stats["connections"]["accepted"].as_f64().expect("accepted") - 1.0,
        "the /_stats connection came after the scrape"
    );
    assert_eq!(kind("ccc_connections_open"), "gauge");
    assert!(value("ccc_connections_open", "ccc_connections_open", &[]) >= 1.0);
    assert_eq!(kind("process_start_time_seconds"), "gauge");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        value("ccc_build_info", "ccc_build_info", &[("version", version)]),
        1.0
    );
}

/// The alerting rules ccc ships name only metrics the server exports, with
/// the labels they match on.
#[test]
fn the_shipped_alerts_name_metrics_the_server_exports() {
    let rules =
        std::fs::read_to_string(crate::util::repo_root().join("examples/deploy/ccc-alerts.yml"))
            .expect("examples/deploy/ccc-alerts.yml");
    let ws = Workspace::new();
    ws.write("dist/a.js", "1\n");
    ws.publish("app@1.0.0", "dist", &[]);
    // A replica's server, its follower's heartbeat fresh.
    std::fs::write(format!("{}.follow", ws.db().display()), b"").expect("heartbeat");
    let server = Server::start(&ws, &["--max-lag", "1h"]);
    get(&server.url("/assets/app/1.0.0/a.js"), &[]);
    let page = get(&server.url("/metrics"), &[]).text();
    let exported: std::collections::BTreeSet<&str> = page
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut named = std::collections::BTreeSet::new();
    for word in rules.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("ccc_") || word.starts_with("process_") {
            named.insert(word);
        }
    }
    assert!(named.len() >= 10, "{named:?}");
    for name in &named {
        assert!(
            exported.contains(name),
            "the alerts name {name}, which /metrics lacks:\n{page}"
        );
    }
    for (family, label) in [
        ("ccc_catalog_state", "state=\"current\""),
        (
            "ccc_http_request_duration_seconds_bucket",
            "route=\"asset\"",
        ),
        ("ccc_http_requests_total", "status=\"200\""),
        ("ccc_log_lines_dropped_total", "stream=\"stdout\""),
    ] {
        let sample = format!("{family}{{");
        assert!(
            page.lines()
                .any(|l| l.starts_with(&sample) && l.contains(label)),
            "no {family} with {label}"
        );
    }
}

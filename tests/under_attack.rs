//! Well-behaved clients keep being served while `ccc serve` is attacked.
//!
//! Each test starts its own `ccc serve --threads 4` on a catalog holding a
//! site of small files (what the well-behaved clients ask for) and a 16 MiB
//! file of noise (stored as is, so it stays 16 MiB on the wire: what slow
//! readers and resets ask for). Four keep-alive clients and two clients
//! opening a connection per request probe the server every 20 ms: 1 s of
//! warm-up, 3 s quiet (the reference), 8 s under attack plus 1 s while the
//! attack's connections close, then 3 s quiet again. Every 200's body is
//! checked against the catalog's sha256.
//!
//! The bar ([`Report::violations`]): during the attack no refused
//! connection, no timeout, no reset, no 5xx but the deliberate 503 (with
//! `Retry-After`) at the connection cap on a new connection, and a p99
//! within 10x the quiet p99 (or 500 ms, whichever is larger: a loaded
//! 2-core machine's quiet p99 is a few ms); after it, every request right
//! and a p99 within 3x quiet (or 100 ms), with no restart. Each test prints
//! its figures, peak RSS and threads included.
//!
//! Two tests hold connections by the thousand at the default settings
//! instead: 10,000 idle keep-alive connections and 3,000 slowloris ones at
//! once, all open together, must leave newcomers served (200, no 503, p99
//! of new connections within 50 ms) at a bounded memory and thread count;
//! and at `--max-connections 100`, idle connections make room for a
//! newcomer while busy ones do not.
//!
//! Six more hold serve to its own settings (the rows of the issue that
//! asked for it): HTTP/2 streams given no window are reset at the send
//! timeout; stalled readers of a file the cache cannot hold (20 HTTP/2
//! connections of 128 streams and 1,000 HTTP/1.1 clients) keep anonymous
//! memory under the cache and in-flight budgets plus a constant per
//! connection, and it goes back after; partial prefaces leave nothing
//! behind; at a cap of 300, connections without a request make room for
//! at least 95% of newcomers; one-byte ranges and HEADs of an uncached
//! file leave the probe's p99 under 5 ms. And 1,000 idle TLS HTTP/1.1
//! connections cost at most 8 KB each.
//!
//! The tests are `#[ignore]`: they hold thousands of connections and judge
//! latency, so `.ci/run` runs them on their own, one at a time, in release
//! mode:
//!
//! ```text
//! cargo test --locked --release --test main under_attack -- --ignored --test-threads=1 --nocapture
//! ```

use crate::attack::digest::Digests;
use crate::attack::{self, Attack, Bounds, ProbeConfig, Report, Timing, procfs, wire};
use crate::serve_util::{Server, asset_path, poll_until};
use crate::util::{Rng, Workspace, ccc_path, hermetic};
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Worker threads of every server here; slow readers outnumber them.
const WORKERS: usize = 4;

/// A catalog to attack and the probe that measures it.
pub struct Fixture {
    pub ws: Workspace,
    pub probe: ProbeConfig,
    /// The 16 MiB asset.
    pub large: String,
}

/// `site@1.0.0`: 24 small text files (2 to 24 KiB); `big@1.0.0`: one 16 MiB
/// file of noise.
pub fn fixture() -> Fixture {
    let ws = Workspace::new();
    let mut rng = Rng::new(8);
    let site: Vec<(String, Vec<u8>)> = (0..24)
        .map(|i| {
            let len = 2048 + rng.below(22 << 10);
            (format!("js/chunk-{i}.js"), rng.text(len))
        })
        .collect();
    ws.write_tree("site", &site);
    ws.publish("site@1.0.0", "site", &[]);
    ws.write("big/big.bin", rng.bytes(16 << 20));
    ws.publish("big@1.0.0", "big", &["--level", "1"]);
    let inspected = ws.json(&["inspect", "site@1.0.0", "--json"]);
    let digests: HashMap<String, String> = inspected["files"]
        .as_array()
        .expect("inspect --json lists files")
        .iter()
        .map(|a| {
            let path = a["path"].as_str().expect("path");
            let sha = a["sha256"].as_str().expect("sha256");
            (asset_path("site", "1.0.0", path), sha.to_string())
        })
        .collect();
    let mut probe = ProbeConfig::new(digests.keys().cloned().collect(), 4, 2);
    probe.check = Some(Arc::new(Digests(digests)));
    Fixture {
        ws,
        probe,
        large: asset_path("big", "1.0.0", "big.bin"),
    }
}

/// `ccc serve --threads 4 EXTRA...`, with the open-files limit set to
/// `soft`/`hard` first when given (a shell's `ulimit`, so the server starts
/// under it as it would on such a host).
pub fn serve(ws: &Workspace, nofile: Option<(u64, u64)>, extra: &[&str]) -> Server {
    let threads = WORKERS.to_string();
    let mut flags = vec!["--threads", &threads];
    flags.extend_from_slice(extra);
    let Some((soft, hard)) = nofile else {
        return Server::start(ws, &flags);
    };
    let db = ws.db();
    let mut args = vec!["serve", "--db", db.to_str().expect("UTF-8 temp path")];
    args.extend_from_slice(&["--port", "0"]);
    args.extend_from_slice(&flags);
    let mut cmd = std::process::Command::new("sh");
    hermetic(&mut cmd);
    cmd.current_dir(ws.path())
        .arg("-c")
        .arg(format!(
            "ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$0\" \"$@\""
        ))
        .arg(ccc_path())
        .args(&args);
    let server = Server::start_with(&mut cmd);
    let (_, got_hard) = procfs::open_files_limit(server.pid()).expect("/proc/PID/limits");
    assert_eq!(
        got_hard, hard,
        "the server should run under a hard limit of {hard}"
    );
    server
}

/// The phases every test here runs, in seconds.
pub fn timing() -> Timing {
    Timing::seconds(3, 8, 1, 3)
}

/// Runs `attack` against a fresh server and requires the bar be met.
#[track_caller]
fn must_survive(
    make: impl FnOnce(&Fixture) -> Attack,
    nofile: Option<(u64, u64)>,
    extra: &[&str],
) -> Report {
    must_survive_with_stats(make, nofile, extra).0
}

/// [`must_survive`], with the server's `/_stats` once the run is over.
#[track_caller]
fn must_survive_with_stats(
    make: impl FnOnce(&Fixture) -> Attack,
    nofile: Option<(u64, u64)>,
    extra: &[&str],
) -> (Report, serde_json::Value) {
    let fixture = fixture();
    let server = serve(&fixture.ws, nofile, extra);
    let attack = make(&fixture);
    let report = attack::run(
        server.addr,
        &[server.pid()],
        &attack,
        &fixture.probe,
        timing(),
    );
    println!("{}", report.summary());
    let violations = report.violations(&Bounds::default());
    let stderr = server.stderr();
    assert!(
        violations.is_empty(),
        "{}: {}\n{}\nlast lines of the server's stderr:\n{}",
        attack.mode(),
        attack.describe(),
        violations.join("\n"),
        tail(&stderr, 40)
    );
    (report, server.stats())
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn slow_readers_do_not_hold_the_workers() {
    let readers = 8 * WORKERS;
    let report = must_survive(
        |f| Attack::SlowReaders {
            count: readers,
            target: f.large.clone(),
        },
        None,
        &[],
    );
    assert_eq!(
        report.attack.peak_open, readers as u64,
        "{:?}",
        report.attack
    );
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn slowloris_on_a_host_with_the_usual_1024_soft_limit() {
    // 3,000 half-sent heads: three times the soft limit a host usually
    // starts a server with (the hard limit is higher, as systemd sets it).
    let report = must_survive(
        |_| Attack::Slowloris {
            count: 3000,
            trickle: std::time::Duration::from_secs(1),
        },
        Some((1024, 8192)),
        &[],
    );
    assert!(report.attack.opened >= 3000, "{:?}", report.attack);
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn descriptor_flood_under_ulimit_64() {
    // 200 idle connections against 64 descriptors: far more than the
    // server can hold at once.
    let report = must_survive(|_| Attack::Flood { count: 200 }, Some((64, 64)), &[]);
    assert!(report.attack.opened >= 200, "{:?}", report.attack);
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn oversized_heads_and_garbage() {
    let report = must_survive(|_| Attack::Malformed { workers: 8 }, None, &[]);
    let answered: u64 = report.attack.answers.values().sum();
    assert!(answered >= 10, "{:?}", report.attack);
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn connections_reset_mid_response() {
    let report = must_survive(
        |f| Attack::Reset {
            workers: 8,
            target: f.large.clone(),
            read_bytes: 64 << 10,
        },
        None,
        &[],
    );
    let started = report.attack.answers.get("200").copied().unwrap_or(0);
    assert!(started >= 20, "{:?}", report.attack);
}

/// `/_stats`' `connections` object, on a connection of its own; None when
/// the server does not answer 200 (at the cap with no idle connection, it
/// answers 503).
fn connection_stats(addr: SocketAddr) -> Option<serde_json::Value> {
    let mut conn = wire::Conn::open(addr, Duration::from_secs(5)).ok()?;
    conn.send(&wire::get_request(addr, "/_stats", &[])).ok()?;
    let answer = conn.read(false).ok()?;
    if answer.status != 200 {
        return None;
    }
    let stats: serde_json::Value = serde_json::from_slice(&answer.body).ok()?;
    Some(stats["connections"].clone())
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn ten_thousand_idle_and_three_thousand_slowloris_leave_room() {
    // The default settings: no --threads, no shorter --header-timeout (a
    // slowloris head has its 60 s, so all 13,000 are open at once), the
    // default cap (16,384) and the open-files limit raised by serve itself.
    const IDLE: usize = 10_000;
    const SLOW: usize = 3_000;
    let needed = (IDLE + SLOW + 100) as u64;
    let (_, hard) = procfs::open_files_limit(std::process::id()).expect("/proc/self/limits");
    assert!(
        hard >= needed,
        "this test holds {needed} sockets on each side; the hard open-files limit is {hard}"
    );
    let fixture = fixture();
    let server = Server::start(&fixture.ws, &[]);
    let attack = Attack::Together(vec![
        Attack::IdleKeepAlive {
            count: IDLE,
            target: asset_path("site", "1.0.0", "js/chunk-0.js"),
        },
        Attack::Slowloris {
            count: SLOW,
            trickle: Duration::from_secs(1),
        },
    ]);
    // The server's own count of open connections, every half second.
    let stop = Arc::new(AtomicBool::new(false));
    let most_open = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (addr, stop, most_open) = (server.addr, stop.clone(), most_open.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(open) = connection_stats(addr).and_then(|c| c["open"].as_u64()) {
                    most_open.fetch_max(open, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };
    let timing = Timing {
        ramp: Duration::from_secs(30),
        ..Timing::seconds(3, 10, 1, 3)
    };
    let report = attack::run(
        server.addr,
        &[server.pid()],
        &attack,
        &fixture.probe,
        timing,
    );
    stop.store(true, Ordering::Relaxed);
    watcher.join().expect("the stats watcher panicked");
    let most_open = most_open.load(Ordering::Relaxed);
    let reclaimed =
        connection_stats(server.addr).map_or(0, |c| c["reclaimed"].as_u64().unwrap_or(0));
    println!("{}", report.summary());
    println!(
        "the server counted at most {most_open} connections open; {reclaimed} idle ones reclaimed"
    );
    let stderr = server.stderr();
    let context = format!(
        "{}\nlast lines of the server's stderr:\n{}",
        report.summary(),
        tail(&stderr, 20)
    );
    let violations = report.violations(&Bounds::default());
    assert!(
        violations.is_empty(),
        "{}\n{context}",
        violations.join("\n")
    );
    assert!(
        report.ramp_complete,
        "the attack never held all its connections\n{context}"
    );
    assert!(
        most_open >= (IDLE + SLOW) as u64,
        "the server never had {} connections open at once (at most {most_open})\n{context}",
        IDLE + SLOW
    );
    let during = &report.during;
    assert!(
        during.ok > 0 && during.status_503() == 0 && report.ramp.status_503() == 0,
        "newcomers must get 200 and never 503\n{context}"
    );
    // The bar of the issue, at the default settings on a 2-core machine.
    assert!(
        during.new_conn_answers > 0 && during.new_conn_p99_ms <= 50.0,
        "p99 of requests on new connections {:.1} ms (over {} of them) is over 50 ms\n{context}",
        during.new_conn_p99_ms,
        during.new_conn_answers
    );
    let peak = report.peak();
    let hwm_mib = report.vm_hwm_kib.unwrap_or(0) as f64 / 1024.0;
    assert!(
        hwm_mib <= 150.0,
        "peak RSS (VmHWM) {hwm_mib:.1} MiB is over 150 MiB ({:.1} MiB anonymous, {:.1} KiB per held connection)\n{context}",
        peak.peak_rss_anon_kib as f64 / 1024.0,
        peak.peak_rss_anon_kib
            .saturating_sub(report.footprint_quiet.peak_rss_anon_kib) as f64
            / (IDLE + SLOW) as f64
    );
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    assert!(
        peak.peak_threads <= 4 * cores + 16,
        "{} threads on {cores} cores\n{context}",
        peak.peak_threads
    );
}

#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn at_the_cap_idle_connections_make_room_and_busy_ones_do_not() {
    // Busy connections must hold their response in flight for the test.
    let fixture = fixture();
    let server = Server::start(&fixture.ws, &["--max-connections", "100"]);
    let addr = server.addr;
    let asset = asset_path("site", "1.0.0", "js/chunk-0.js");
    let timeout = Duration::from_secs(5);
    let get = |conn: &mut wire::Conn| {
        conn.send(&wire::get_request(addr, &asset, &[]))
            .and_then(|()| {
                conn.read(false)
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
    };

    // 100 idle keep-alive connections: the cap is reached.
    let mut idle: Vec<wire::Conn> = (0..100)
        .map(|i| {
            let mut conn = wire::Conn::open(addr, timeout).expect("connect");
            let answer = get(&mut conn).unwrap_or_else(|e| panic!("idle connection {i}: {e}"));
            assert_eq!(answer.status, 200, "idle connection {i}");
            conn
        })
        .collect();
    // A newcomer is served: the longest idle connection makes room.
    let mut newcomer = wire::Conn::open(addr, timeout).expect("connect");
    let answer = get(&mut newcomer).expect("the newcomer's answer");
    assert_eq!(
        answer.status,
        200,
        "at the cap with 100 idle connections: {:?}",
        String::from_utf8_lossy(&answer.body)
    );
    let stats = connection_stats(addr).expect("/_stats at the cap with idle connections");
    assert!(stats["reclaimed"].as_u64() >= Some(1), "{stats}");
    assert_eq!(stats["refused"], 0, "{stats}");
    drop(newcomer);
    idle.clear();
    assert!(
        poll_until(Duration::from_secs(10), || {
            connection_stats(addr).is_some_and(|c| c["open"].as_u64() <= Some(1))
        })
        .is_some(),
        "the idle connections' close was never seen"
    );

    // 100 busy connections, each answering a request the client does not
    // read (the 16 MiB file through a small receive window): nothing to
    // reclaim. (A head that never ends is not busy: it is reclaimed.)
    let get_large = wire::get_request(addr, &fixture.large, &["Accept-Encoding: identity"]);
    let mut busy = Vec::new();
    for i in 0..100 {
        if i == 99 {
            // 99 held and this /_stats: the server has every one of them.
            let stats = connection_stats(addr).expect("/_stats below the cap");
            assert_eq!(stats["open"], 100, "{stats}");
        }
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("socket");
        socket.set_recv_buffer_size(4096).expect("rcvbuf");
        socket.connect(&addr.into()).expect("connect");
        let mut stream: std::net::TcpStream = socket.into();
        stream.write_all(&get_large).expect("a request");
        // The head of its answer: the request is being answered.
        stream.set_read_timeout(Some(timeout)).expect("timeout");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            std::io::Read::read_exact(&mut stream, &mut byte).expect("an answer's head");
            head.push(byte[0]);
        }
        busy.push(stream);
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut newcomer = wire::Conn::open(addr, timeout).expect("connect");
    let answer = get(&mut newcomer).expect("the newcomer's answer");
    assert_eq!(
        (answer.status, answer.header("retry-after").is_some()),
        (503, true),
        "at the cap with 100 busy connections: {answer:?}"
    );
    drop(busy);
    let stats = poll_until(Duration::from_secs(10), || connection_stats(addr).is_some())
        .and_then(|_| connection_stats(addr))
        .expect("/_stats once the busy connections closed");
    assert!(stats["refused"].as_u64() >= Some(1), "{stats}");
}

/// Row 1 of the issue on serve's settings: HTTP/2 clients that give their
/// streams no window (initial window 0, never a WINDOW_UPDATE) have every
/// stream reset at `--send-timeout` and their connections sent away, and
/// others are served meanwhile.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn http2_streams_given_no_window_are_reset_at_the_send_timeout() {
    const CONNS: usize = 20;
    const STREAMS: usize = 100;
    let (report, stats) = must_survive_with_stats(
        |f| Attack::H2NoWindow {
            count: CONNS,
            streams: STREAMS,
            target: f.large.clone(),
        },
        None,
        &["--send-timeout", "2s"],
    );
    // Held 8 s, each sent away at about 2 s and opened again a second
    // later: closed by the server at least twice each.
    assert!(
        report.attack.closed_by_server >= 2 * CONNS as u64,
        "{:?}",
        report.attack
    );
    let stalled = stats["connections"]["stalled_streams"]
        .as_u64()
        .unwrap_or(0);
    assert!(stalled >= (2 * CONNS * STREAMS) as u64, "{stats}");
}

/// Row 2, at ten times the issue's size: HTTP/2 streams and HTTP/1.1
/// clients that ask for a file the cache cannot hold and never read make
/// serve hold no more than its budgets plus a constant per connection,
/// and the memory goes back once they leave.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn stalled_readers_of_uncached_files_stay_within_the_budgets() {
    const H2_CONNS: usize = 20;
    const H1_CONNS: usize = 1000;
    /// What a connection answering one stalled request may hold beyond
    /// the budgets: its protocol's state and buffers (README, "Memory and
    /// limits").
    const PER_CONNECTION_KIB: u64 = 48;
    let (report, stats) = must_survive_with_stats(
        |f| {
            Attack::Together(vec![
                Attack::H2Stalled {
                    count: H2_CONNS,
                    streams: 128,
                    target: f.large.clone(),
                },
                Attack::SlowReaders {
                    count: H1_CONNS,
                    target: f.large.clone(),
                },
            ])
        },
        None,
        &["--cache-bytes", "1MiB", "--in-flight-bytes", "16MiB"],
    );
    let quiet = report.footprint_quiet.peak_rss_anon_kib;
    let budgets = 1024 + 16 * 1024;
    let bound = quiet + budgets + PER_CONNECTION_KIB * (H2_CONNS + H1_CONNS) as u64;
    let peak = report.peak().peak_rss_anon_kib;
    println!(
        "RssAnon: quiet {quiet} KiB, peak {peak} KiB (bound {bound} KiB), end {} KiB; in flight {}",
        report.footprint_after.last_rss_anon_kib, stats["in_flight"]
    );
    assert!(peak <= bound, "peak RssAnon {peak} KiB over {bound} KiB");
    assert!(
        stats["in_flight"]["peak_bytes"].as_u64() <= Some(16 << 20),
        "{stats}"
    );
    let end = report.footprint_after.last_rss_anon_kib;
    assert!(
        end <= quiet + 8 * 1024,
        "RssAnon {end} KiB three seconds after the attack, {quiet} KiB before"
    );
}

/// Row 3: clients that send part of the HTTP/2 preface and close, in a
/// loop, leave no connection behind and the server idle.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn partial_prefaces_leave_nothing_behind() {
    let fixture = fixture();
    let server = serve(&fixture.ws, None, &["--header-timeout", "60s"]);
    let attack = Attack::PrefaceCycles { workers: 4 };
    let report = attack::run(
        server.addr,
        &[server.pid()],
        &attack,
        &fixture.probe,
        timing(),
    );
    println!("{}", report.summary());
    let violations = report.violations(&Bounds::default());
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    assert!(report.attack.opened >= 1000, "{:?}", report.attack);
    std::thread::sleep(Duration::from_secs(1));
    let open = connection_stats(server.addr).and_then(|c| c["open"].as_u64());
    assert_eq!(open, Some(1), "only the /_stats connection is left");
    let before = procfs::cpu_ticks(server.pid()).expect("/proc/PID/stat");
    std::thread::sleep(Duration::from_secs(2));
    let spent = procfs::cpu_ticks(server.pid()).expect("/proc/PID/stat") - before;
    assert!(spent <= 5, "{spent} ticks of CPU in 2 s with no client");
}

/// Row 4: at a cap of 300, connections that have not sent a whole
/// request (silent, or a head that never ends) are reclaimed, oldest
/// first, so that at least 95% of newcomers are served.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn at_the_cap_connections_without_a_request_make_room() {
    for attack in [
        Attack::Flood { count: 400 },
        Attack::Slowloris {
            count: 400,
            trickle: Duration::from_secs(1),
        },
    ] {
        let fixture = fixture();
        let server = serve(&fixture.ws, None, &["--max-connections", "300"]);
        let report = attack::run(
            server.addr,
            &[server.pid()],
            &attack,
            &fixture.probe,
            timing(),
        );
        println!("{}", report.summary());
        let d = &report.during;
        let served = d.ok as f64 / (d.ok + d.status_503()).max(1) as f64;
        assert!(
            served >= 0.95 && d.failures() == 0,
            "{}: {} of {} served: {}",
            attack.mode(),
            d.ok,
            d.ok + d.status_503(),
            report.summary()
        );
    }
}

/// Row 5: one-byte ranges and HEADs of a file the cache does not hold
/// cost what they send: well-behaved clients keep a p99 under 5 ms while
/// eight connections ask for them without pause.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn tiny_ranges_of_uncached_files_cost_what_they_send() {
    let (report, stats) = must_survive_with_stats(
        |f| Attack::TinyRanges {
            workers: 8,
            target: f.large.clone(),
        },
        None,
        &["--cache-bytes", "1MiB"],
    );
    let answered = report.attack.answers.get("206").copied().unwrap_or(0)
        + report.attack.answers.get("200").copied().unwrap_or(0);
    println!(
        "{answered} ranges and HEADs answered; cache {}",
        stats["cache"]
    );
    assert!(answered >= 1000, "{:?}", report.attack);
    assert!(
        report.during.p99_ms < 5.0,
        "p99 {:.1} ms during the attack",
        report.during.p99_ms
    );
}

/// Idle TLS keep-alive connections cost at most 8 KB each: 1,000 HTTP/1.1
/// clients over TLS each make one request and stay open, and the server's
/// anonymous memory grows by at most 8,000 bytes a connection. Measured
/// from 100 connections already open, so that what the first ones cost
/// once (the allocator's arenas, the session cache) is not counted.
#[test]
#[ignore = "heavy and timing-sensitive: .ci/run runs it alone in release mode"]
fn idle_tls_connections_cost_at_most_8_kb_each() {
    use tokio_rustls::rustls::{self, pki_types};
    const IDLE: usize = 1000;
    attack::attacks::raise_fd_limit();
    let ws = Workspace::new();
    ws.write("site/v.txt", "1.0.0");
    ws.publish("site@1.0.0", "site", &[]);
    let (server, ca) = crate::serve_protocol::tls_server_with(&ws, "idle", &["--threads", "2"]);
    let config = crate::serve_protocol::tls_client(&ca);
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: localhost\r\n\r\n",
        asset_path("site", "1.0.0", "v.txt")
    );
    let open =
        |count: usize| -> Vec<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>> {
            (0..count)
                .map(|_| {
                    let name = pki_types::ServerName::try_from("localhost").expect("a name");
                    let tls = rustls::ClientConnection::new(config.clone(), name).expect("TLS");
                    let tcp = std::net::TcpStream::connect(server.addr).expect("connect");
                    tcp.set_read_timeout(Some(Duration::from_secs(10)))
                        .expect("timeout");
                    let mut stream = rustls::StreamOwned::new(tls, tcp);
                    stream.write_all(request.as_bytes()).expect("the request");
                    let mut answer = Vec::new();
                    let mut chunk = [0u8; 1024];
                    while !answer.ends_with(b"\r\n\r\n1.0.0") {
                        let n = std::io::Read::read(&mut stream, &mut chunk).expect("the answer");
                        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&answer));
                        answer.extend_from_slice(&chunk[..n]);
                    }
                    stream
                })
                .collect()
        };
    let anon = || crate::serve_memory::memory(server.pid(), "RssAnon");
    let warm = open(100);
    std::thread::sleep(Duration::from_secs(1));
    let before = anon();
    let idle = open(IDLE);
    // Past the 100 ms after which an idle HTTP/1 connection is parked, and
    // past two of the allocator's releases (each second while it finds
    // free memory, `serve::allocator`): one second after the burst, the
    // free blocks its handshakes left could still be resident.
    std::thread::sleep(Duration::from_millis(2500));
    let after = anon();
    let each = after.saturating_sub(before) / IDLE as u64;
    println!(
        "{IDLE} idle TLS connections: RssAnon {} -> {} KiB, {each} B each",
        before / 1024,
        after / 1024
    );
    assert!(each <= 8000, "an idle TLS connection costs {each} B");
    drop((warm, idle));
}

//! Varnish in front of `ccc serve`, configured by the VCL ccc ships
//! (`examples/deploy/ccc.vcl`), both on 127.0.0.1: what README "Running
//! ccc in production" promises of the cache tier.
//!
//! Needs `varnishd`, `varnishadm` and `varnishstat` (Debian's `varnish`),
//! which `.ci/run` installs for this test's own step; hence `#[ignore]`.
//! Varnish runs unjailed (`-j none`) in the test's temporary directory as
//! whoever runs the test, on a port it picks itself.

use crate::serve_util::{Client, Resp, STARTUP, Server, get, poll_until, sigterm};
use crate::util::{Rng, Workspace, gunzip, repo_root};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a redirect from `latest` or a range may be cached (ccc's
/// `Cache-Control: public, max-age=60`).
const REDIRECT_MAX_AGE: Duration = Duration::from_secs(60);

/// A running varnishd (foreground master), stopped on drop.
struct Varnish {
    child: Child,
    workdir: PathBuf,
    base: String,
}

impl Varnish {
    /// Starts varnishd with `vcl` on 127.0.0.1, a port of its choosing.
    fn start(dir: &Path, vcl: &Path) -> Varnish {
        let workdir = dir.join("varnish");
        let child = Command::new("varnishd")
            .args(["-F", "-j", "none", "-a", "127.0.0.1:0", "-T", "127.0.0.1:0"])
            .args(["-s", "malloc,64m", "-n"])
            .arg(&workdir)
            .arg("-f")
            .arg(vcl)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("varnishd (Debian's varnish) is installed");
        let mut varnish = Varnish {
            child,
            workdir,
            base: String::new(),
        };
        let mut port = None;
        poll_until(STARTUP, || {
            // `a0 127.0.0.1 PORT` once the child listens.
            port = varnish
                .admin(&["debug.listen_address"])
                .ok()
                .and_then(|out| out.split_whitespace().nth(2)?.parse::<u16>().ok());
            port.is_some()
        })
        .expect("varnishd listens within the start-up bound");
        varnish.base = format!("http://127.0.0.1:{}", port.expect("a port"));
        varnish
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `varnishadm -n WORKDIR ARGS`: its output, or its error.
    fn admin(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("varnishadm")
            .arg("-n")
            .arg(&self.workdir)
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(text)
        } else {
            Err(format!("{text}{}", String::from_utf8_lossy(&out.stderr)))
        }
    }

    /// Loads `vcl` and makes it the active configuration.
    fn use_vcl(&self, name: &str, vcl: &Path) {
        let path = vcl.to_str().expect("UTF-8 path");
        self.admin(&["vcl.load", name, path]).expect("vcl.load");
        self.admin(&["vcl.use", name]).expect("vcl.use");
    }

    /// A counter of `varnishstat -j` (`MAIN.cache_hit`, ...).
    fn counter(&self, name: &str) -> u64 {
        let out = Command::new("varnishstat")
            .arg("-n")
            .arg(&self.workdir)
            .args(["-j", "-f", name])
            .output()
            .expect("run varnishstat");
        let json: Value = serde_json::from_slice(&out.stdout).expect("varnishstat -j is JSON");
        // Varnish 6.5 and later nest the counters; older ones do not.
        let counters = json.get("counters").unwrap_or(&json);
        counters[name]["value"]
            .as_u64()
            .unwrap_or_else(|| panic!("no counter {name} in {json}"))
    }
}

impl Varnish {
    /// `MAIN.cache_hit` and `MAIN.cache_miss` once they stop moving (read
    /// 300 ms apart), with every request so far counted.
    fn settled_hits_and_misses(&self) -> (u64, u64) {
        let read = || {
            (
                self.counter("MAIN.cache_hit"),
                self.counter("MAIN.cache_miss"),
                self.counter("MAIN.client_req"),
            )
        };
        let mut last = read();
        poll_until(Duration::from_secs(15), || {
            std::thread::sleep(Duration::from_millis(300));
            let now = read();
            std::mem::replace(&mut last, now) == now
        })
        .expect("varnishstat's counters settle");
        (last.0, last.1)
    }
}

impl Drop for Varnish {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            sigterm(self.child.id());
            if crate::serve_util::wait_timeout(&mut self.child, Duration::from_secs(10)).is_none() {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

/// The shipped VCL with `replace` applied; each pattern must be there, so
/// a change to the file that this test no longer matches fails here.
fn vcl(dir: &Path, name: &str, replace: &[(&str, &str)]) -> PathBuf {
    let shipped = repo_root().join("examples/deploy/ccc.vcl");
    let mut text = std::fs::read_to_string(&shipped).expect("read examples/deploy/ccc.vcl");
    for (from, to) in replace {
        assert_eq!(text.matches(from).count(), 1, "{from:?} once in ccc.vcl");
        text = text.replace(from, to);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the VCL");
    path
}

/// The `Accept-Encoding` values the variants are checked with: none,
/// gzip, brotli (with and without gzip), and refusals of gzip.
const CLIENTS: &[&[(&str, &str)]] = &[
    &[],
    &[("Accept-Encoding", "gzip, deflate")],
    &[("Accept-Encoding", "br, gzip")],
    &[("Accept-Encoding", "br")],
    &[("Accept-Encoding", "gzip;q=0")],
    &[("Accept-Encoding", "identity")],
];

/// The decoded body of a response, for the encodings ccc sends through
/// Varnish to a client that asked for them.
fn decoded(r: &Resp) -> Vec<u8> {
    match r.header("content-encoding") {
        None => r.body.clone(),
        Some("gzip") => gunzip(&r.body),
        Some("br") => {
            let mut out = Vec::new();
            ::brotli::BrotliDecompress(&mut &r.body[..], &mut out).expect("a brotli stream");
            out
        }
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
}

struct Site {
    /// `(URL path, original bytes)` of app@1.0.0's files.
    files: Vec<(String, Vec<u8>)>,
}

/// app@1.0.0 with 30 text files (stored gzip) and 10 incompressible ones
/// (stored as they are), app@1.1.0 with two.
fn publish_site(ws: &Workspace) -> Site {
    let mut rng = Rng::new(11);
    let mut files = Vec::new();
    for i in 0..40 {
        let (name, bytes) = if i < 30 {
            (format!("js/chunk-{i}.js"), rng.text(2_000 + 700 * i))
        } else {
            (format!("img/pic-{i}.png"), rng.bytes(3_000 + 500 * i))
        };
        ws.write(&format!("v1/{name}"), &bytes);
        files.push((format!("/assets/app/1.0.0/{name}"), bytes));
    }
    ws.publish("app@1.0.0", "v1", &[]);
    ws.write("v11/index.html", b"<p>1.1.0</p>".repeat(50));
    ws.write("v11/late.js", rng.text(5_000));
    ws.publish("app@1.1.0", "v11", &[]);
    Site { files }
}

/// Assets ccc itself has looked up (its `/_stats`: cache hits and
/// misses), which leaves out Varnish's health probes and the reads of
/// `/_stats`.
fn origin_requests(server: &Server) -> u64 {
    let cache = &server.stats()["cache"];
    cache["hits"].as_u64().expect("hits") + cache["misses"].as_u64().expect("misses")
}

/// The count of one status in ccc's `/_stats`.
fn origin_status(server: &Server, status: &str) -> u64 {
    server.stats()["by_status"][status].as_u64().unwrap_or(0)
}

/// `PURGE path` sent from 127.0.0.2, an address the VCL's acl leaves out:
/// the status line.
fn purge_from_elsewhere(varnish: &Varnish, path: &str) -> String {
    use std::io::{Read, Write};
    let addr: std::net::SocketAddr = varnish
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("an address");
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    let from: std::net::SocketAddr = "127.0.0.2:0".parse().expect("an address");
    socket.bind(&from.into()).expect("bind 127.0.0.2");
    socket.connect(&addr.into()).expect("connect to varnish");
    let mut stream: std::net::TcpStream = socket.into();
    write!(
        stream,
        "PURGE {path} HTTP/1.1\r\nHost: cdn\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or("").to_string()
}

#[test]
#[ignore = "needs varnishd (Debian's varnish); .ci/run installs it and runs this alone"]
fn varnish_in_front_of_ccc() {
    let ws = Workspace::new();
    let site = publish_site(&ws);
    let server = Server::start(&ws, &[]);
    let port = server.addr.port().to_string();
    let backend = format!(".port = \"{port}\";");
    // Both origins of the shipped VCL are this one server.
    let main_vcl = vcl(
        ws.path(),
        "ccc.vcl",
        &[
            (".port = \"8333\";", &backend),
            (".port = \"8334\";", &backend),
        ],
    );
    let varnish = Varnish::start(ws.path(), &main_vcl);
    let client = Client::new();

    // Redirects: cached, for their max-age only (checked at the end).
    let latest = "/assets/app/latest/index.html";
    let range = "/assets/app/%5E1/late.js";
    let redirects_cached_at = Instant::now();
    for path in [latest, range] {
        let first = client.get(&varnish.url(path), &[]);
        assert_eq!(first.status, 302, "{path}");
        assert_eq!(first.must("cache-control"), "public, max-age=60");
        let again = client.get(&varnish.url(path), &[]);
        assert_eq!(again.must("x-cache"), "hit", "{path} is cached");
        assert_eq!(again.must("location"), first.must("location"));
    }
    assert_eq!(
        client.get(&varnish.url(latest), &[]).must("location"),
        "/assets/app/1.1.0/index.html"
    );

    // Every variant goes to the client that asked for it: the same coding
    // and bytes as ccc itself sends that client, through `Vary`.
    for (path, original) in &site.files {
        for headers in CLIENTS {
            let direct = client.get(&server.url(path), headers);
            let edge = client.get(&varnish.url(path), headers);
            assert_eq!(edge.status, 200, "{path} {headers:?}");
            assert_eq!(
                edge.header("content-encoding"),
                direct.header("content-encoding"),
                "{path} {headers:?}"
            );
            assert!(edge.body == direct.body, "{path} {headers:?}");
            assert!(&decoded(&edge) == original, "{path} {headers:?}");
            assert_eq!(edge.must("vary"), "Accept-Encoding");
            assert_eq!(
                edge.must("cache-control"),
                "public, max-age=31536000, immutable"
            );
        }
        let plain = client.get(&varnish.url(path), &[]);
        assert!(plain.header("content-encoding").is_none());
        // A range of the original bytes, from the cache.
        let part = client.get(&varnish.url(path), &[("Range", "bytes=10-99")]);
        assert_eq!(part.status, 206, "{path}");
        assert!(part.body == original[10..100], "{path}: the range's bytes");
        if path.ends_with(".js") {
            let gz = client.get(&varnish.url(path), &[("Accept-Encoding", "gzip")]);
            assert_eq!(gz.must("content-encoding"), "gzip", "{path}");
        }
    }

    // The hot set after warm-up: nearly every request is a hit, and ccc
    // hardly sees any.
    // Varnish's workers add their counts to the shared counters in
    // batches and when a connection ends: the warm-up's connection is
    // closed and its counts settled before the measured requests.
    drop(client);
    let (hits, misses) = varnish.settled_hits_and_misses();
    let origin_before = origin_requests(&server);
    let hot = Client::new();
    let mut sent = 0u64;
    for round in 0..25 {
        for (i, (path, original)) in site.files.iter().enumerate() {
            let headers = CLIENTS[(i + round) % 3];
            let r = hot.get(&varnish.url(path), headers);
            assert_eq!(r.status, 200);
            assert!(&decoded(&r) == original, "{path} {headers:?}");
            sent += 1;
        }
    }
    drop(hot);
    let (after_hits, after_misses) = varnish.settled_hits_and_misses();
    let (hits, misses) = (after_hits - hits, after_misses - misses);
    let ratio = hits as f64 / (hits + misses) as f64;
    let origin = origin_requests(&server) - origin_before;
    println!(
        "hot set: {sent} requests, {hits} hits, {misses} misses (hit ratio {:.2}%), {origin} reached ccc",
        ratio * 100.0
    );
    assert_eq!(hits + misses, sent, "varnishstat counted every request");
    assert!(ratio >= 0.99, "hit ratio {ratio}");
    assert!(origin * 100 <= sent, "{origin} of {sent} reached ccc");

    let client = Client::new();
    // Revalidation through the cache: a client's validators get a 304 from
    // Varnish, with either representation's tag, without asking ccc.
    let origin_before = origin_requests(&server);
    for (path, _) in &site.files {
        for headers in [&[("Accept-Encoding", "gzip")][..], &[]] {
            let full = client.get(&varnish.url(path), headers);
            let tag = full.must("etag");
            let mut conditional = headers.to_vec();
            conditional.push(("If-None-Match", tag));
            let r = client.get(&varnish.url(path), &conditional);
            assert_eq!(r.status, 304, "{path} {conditional:?}");
            assert!(r.body.is_empty());
            assert_eq!(r.must("x-cache"), "hit");
        }
    }
    assert_eq!(origin_requests(&server), origin_before, "ccc was not asked");

    // The purge is taken from 127.0.0.1 only.
    let (first_path, first_bytes) = &site.files[0];
    assert!(
        purge_from_elsewhere(&varnish, first_path).contains(" 405 "),
        "a purge from 127.0.0.2 is refused"
    );
    assert!(&decoded(&client.get(&varnish.url(first_path), &[])) == first_bytes);

    // A removed version is gone from the edge as soon as `rm --purge`
    // returns: every URL, every variant.
    ws.publish("app@1.2.0", "v11", &[]);
    let out = ws.ok(&["rm", "app@1.0.0", "--purge", &varnish.base]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Purged 41 URLs from 1 cache"), "{stdout}");
    for (path, _) in &site.files {
        for headers in CLIENTS {
            let r = client.get(&varnish.url(path), headers);
            assert_eq!(r.status, 404, "{path} {headers:?} after rm --purge");
        }
    }
    let listing = client.get(&varnish.url("/assets/app/1.0.0/"), &[]);
    assert_eq!(listing.status, 404);

    // A forced republish with --purge: the edge serves the new bytes at
    // once, to every kind of client.
    let late = "/assets/app/1.1.0/late.js";
    for headers in CLIENTS {
        assert_eq!(client.get(&varnish.url(late), headers).status, 200);
    }
    let replacement = Rng::new(12).text(6_000);
    ws.write("v11b/index.html", b"<p>1.1.0</p>".repeat(50));
    ws.write("v11b/late.js", &replacement);
    let out = ws.ok(&[
        "publish",
        "app@1.1.0",
        "v11b",
        "--force",
        "--purge",
        &varnish.base,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Purged 3 URLs from 1 cache"), "{stdout}");
    for headers in CLIENTS {
        let r = client.get(&varnish.url(late), headers);
        assert!(
            decoded(&r) == replacement,
            "{headers:?} after publish --force --purge"
        );
    }

    // With the day's cap shortened to 2 s: a file past its cap is
    // revalidated with its ETag (ccc answers 304, no body), and a version
    // removed without --purge leaves the edge within cap + grace.
    let short = vcl(
        ws.path(),
        "short.vcl",
        &[
            (".port = \"8333\";", &backend),
            (".port = \"8334\";", &backend),
            ("set beresp.ttl = 1d;", "set beresp.ttl = 2s;"),
        ],
    );
    varnish.use_vcl("short", &short);
    let page = "/assets/app/1.1.0/index.html";
    let gz = [("Accept-Encoding", "gzip")];
    let fresh = client.get(&varnish.url(page), &gz);
    assert_eq!((fresh.status, fresh.must("x-cache")), (200, "miss"));
    let (fetch_304, origin_304) = (
        varnish.counter("MAIN.fetch_304"),
        origin_status(&server, "304"),
    );
    std::thread::sleep(Duration::from_millis(2_500));
    poll_until(Duration::from_secs(20), || {
        let r = client.get(&varnish.url(page), &gz);
        assert_eq!(r.status, 200);
        assert!(r.body == fresh.body, "the revalidated copy is the same");
        varnish.counter("MAIN.fetch_304") > fetch_304
    })
    .expect("Varnish revalidated the expired copy with ccc");
    assert!(
        origin_status(&server, "304") > origin_304,
        "ccc answered 304"
    );

    ws.ok(&["rm", "app@1.1.0"]);
    let removed = Instant::now();
    let gone = poll_until(Duration::from_secs(30), || {
        client.get(&varnish.url(page), &gz).status == 404
    })
    .expect("a removed version leaves the edge without a purge");
    println!("without --purge, gone from the edge after {gone:?} (cap 2 s + grace 10 s)");
    assert!(removed.elapsed() <= Duration::from_secs(2 + 10 + 8));

    // The redirects cached at the start still point at 1.1.0 until their
    // max-age runs out. The first request after that may still get the
    // old one while Varnish fetches the new in the background (grace);
    // the next ones name the new latest.
    assert_eq!(
        client.get(&varnish.url(latest), &[]).must("location"),
        "/assets/app/1.1.0/index.html",
        "the cached redirect is served until its max-age ends"
    );
    let expires = redirects_cached_at + REDIRECT_MAX_AGE;
    std::thread::sleep(expires.saturating_duration_since(Instant::now()));
    for (path, now) in [
        (latest, "/assets/app/1.2.0/index.html"),
        (range, "/assets/app/1.2.0/late.js"),
    ] {
        let moved = poll_until(Duration::from_secs(15), || {
            client.get(&varnish.url(path), &[]).header("location") == Some(now)
        })
        .expect("the redirect follows `latest` once its max-age is over");
        println!("{path}: new redirect {moved:?} after its max-age ended");
    }
    assert!(
        redirects_cached_at.elapsed() < REDIRECT_MAX_AGE + Duration::from_secs(10),
        "a redirect outlived its max-age by more than the grace"
    );
    // The server lived through it all.
    assert_eq!(get(&server.url("/healthz"), &[]).status, 200);
}

/// Restarts behind the cache tier cost clients nothing: the shipped VCL
/// takes two origins in turn and tries a failed fetch once more on the
/// other. Each origin is restarted (SIGTERM, drained, started again on its
/// port) five times in all while 150 requests a second go through Varnish,
/// every one of them a miss (a query string of its own).
#[test]
#[ignore = "needs Varnish (Debian's varnish); .ci/run installs it and runs this alone"]
fn origin_restarts_behind_varnish_cost_clients_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let ws = Workspace::new();
    publish_site(&ws);
    let mut origins = [Server::start(&ws, &[]), Server::start(&ws, &[])];
    let ports = [origins[0].addr.port(), origins[1].addr.port()];
    let (a, b) = (
        format!(".port = \"{}\";", ports[0]),
        format!(".port = \"{}\";", ports[1]),
    );
    let two = vcl(
        ws.path(),
        "two.vcl",
        &[(".port = \"8333\";", &a), (".port = \"8334\";", &b)],
    );
    let varnish = Varnish::start(ws.path(), &two);

    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let (base, stop) = (varnish.url("/assets/app/1.1.0/index.html"), stop.clone());
        std::thread::spawn(move || {
            let client = Client::new();
            let started = Instant::now();
            let (mut sent, mut failed) = (0u64, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                let r = client.get(&format!("{base}?n={sent}"), &[]);
                if r.status != 200 {
                    failed.push(format!("request {sent}: {} {}", r.status, r.text()));
                }
                sent += 1;
                // 150 a second.
                let due = started + Duration::from_millis(sent * 1000 / 150);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            (sent, failed, started.elapsed())
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    for round in 0..5 {
        let i = round % 2;
        sigterm(origins[i].pid());
        let exit = origins[i].wait_exit(Duration::from_secs(60));
        assert_eq!(exit.and_then(|e| e.code()), Some(0), "origin {i} drained");
        let port = ports[i].to_string();
        let db = ws.db();
        let mut cmd = ws.ccc_std();
        cmd.args([
            "serve",
            "--db",
            db.to_str().expect("UTF-8 path"),
            "--port",
            &port,
        ]);
        origins[i] = Server::start_with(&mut cmd);
        // Back in the rotation (two probes a second apart) before the
        // other one goes.
        std::thread::sleep(Duration::from_secs(3));
    }
    stop.store(true, Ordering::Relaxed);
    let (sent, failed, took) = load.join().expect("the load thread");
    println!(
        "through 5 origin restarts: {sent} requests in {took:?}, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:?}");
    assert!(
        sent as f64 >= took.as_secs_f64() * 150.0 * 0.8,
        "{sent} in {took:?}"
    );
}

/// Deltas through Varnish: a client holding the previous release's file
/// gets ccc's delta, kept apart by `Available-Dictionary` and a hit the
/// second time, decoding to the exact file; everyone else shares the
/// brotli copy; a dictionary ccc has no delta against is never kept.
#[test]
#[ignore = "needs varnishd (Debian's varnish); .ci/run installs it and runs this alone"]
fn deltas_behind_varnish() {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let ws = Workspace::new();
    let one = crate::deltas::release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = crate::deltas::release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    let server = Server::start(&ws, &[]);
    let backend = format!(".port = \"{}\";", server.addr.port());
    let main_vcl = vcl(
        ws.path(),
        "ccc.vcl",
        &[
            (".port = \"8333\";", &backend),
            (".port = \"8334\";", &backend),
        ],
    );
    let varnish = Varnish::start(ws.path(), &main_vcl);
    let client = Client::new();
    let holds = |bytes: &[u8]| {
        format!(
            ":{}:",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(bytes))
        )
    };
    let chromium = "gzip, deflate, br, zstd, dcb, dcz";
    let pairs = [
        ("app.js".to_string(), &one.app, &two.app),
        (two.bundle.0.clone(), &one.bundle.1, &two.bundle.1),
        ("css/site.css".to_string(), &one.style, &two.style),
        ("data.json".to_string(), &one.data, &two.data),
    ];
    for (path, old, new) in pairs {
        let url = varnish.url(&format!("/assets/app/1.1.0/{path}"));
        let dictionary = holds(old);
        let asks = [
            ("Accept-Encoding", chromium),
            ("Available-Dictionary", &dictionary),
        ];
        let direct = client.get(&server.url(&format!("/assets/app/1.1.0/{path}")), &asks);
        let mut tag = String::new();
        for round in ["miss", "hit"] {
            let edge = client.get(&url, &asks);
            assert_eq!(edge.status, 200, "{path}");
            assert_eq!(edge.must("x-cache"), round, "{path}");
            let coding = edge.must("content-encoding").to_string();
            assert!(coding == "dcb" || coding == "dcz", "{path}: {coding}");
            assert_eq!(
                edge.header("content-encoding"),
                direct.header("content-encoding")
            );
            assert!(edge.body == direct.body, "{path}: ccc's bytes");
            assert!(
                crate::deltas::decode(&ws, &coding, &edge.body, old) == *new,
                "{path}: decodes to the file"
            );
            assert_eq!(edge.must("vary"), "Accept-Encoding, Available-Dictionary");
            tag = edge.must("etag").to_string();
        }
        // A revalidation of the delta it holds.
        let r = client.get(&url, &[asks[0], asks[1], ("If-None-Match", &tag)]);
        assert_eq!(r.status, 304, "{path}");
        // Everyone else: brotli, one copy for all of them.
        let plain = [("Accept-Encoding", "br, gzip")];
        let garbled = [
            ("Accept-Encoding", chromium),
            ("Available-Dictionary", "::"),
        ];
        let one_coding = [
            ("Accept-Encoding", "br, dcb"),
            ("Available-Dictionary", &dictionary),
        ];
        for headers in [&plain[..], &garbled, &one_coding] {
            let r = client.get(&url, headers);
            assert_eq!(r.must("content-encoding"), "br", "{path} {headers:?}");
            assert!(&decoded(&r) == new, "{path} {headers:?}");
            assert_ne!(r.must("etag"), tag);
        }
        assert_eq!(client.get(&url, &plain).must("x-cache"), "hit", "{path}");
        // A dictionary ccc has no delta against: brotli, never kept.
        let stranger = holds(format!("no release holds {path}").as_bytes());
        let made_up = [
            ("Accept-Encoding", chromium),
            ("Available-Dictionary", &stranger),
        ];
        for _ in 0..2 {
            let r = client.get(&url, &made_up);
            assert_eq!(r.must("content-encoding"), "br", "{path}");
            assert_eq!(r.must("x-cache"), "miss", "{path}");
            assert!(&decoded(&r) == new, "{path}");
        }
    }
}

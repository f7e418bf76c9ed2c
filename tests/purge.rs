//! `ccc rm --purge`, `ccc gc --purge` and `ccc publish --force --purge`:
//! after the change commits, every file of every removed or replaced
//! version and its listing are purged in each cache named; a cache that
//! refuses is reported by name with what it did not purge, and the change
//! stands. Against Varnish itself: tests/deploy_varnish.rs.

use crate::util::Workspace;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// A stand-in for an HTTP cache: records every request line it gets and
/// answers each with `status`. It serves on its own runtime, dropped with
/// it.
struct FakeCache {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
    _runtime: tokio::runtime::Runtime,
}

impl FakeCache {
    fn start(status: u16) -> FakeCache {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind a port");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = log.clone();
                let service = hyper::service::service_fn(move |request: http::Request<_>| {
                    log.lock().expect("log").push(format!(
                        "{} {}",
                        request.method(),
                        request.uri()
                    ));
                    let mut response =
                        http::Response::new(http_body_util::Empty::<bytes::Bytes>::new());
                    *response.status_mut() = http::StatusCode::from_u16(status).expect("a status");
                    async move { Ok::<_, Infallible>(response) }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        FakeCache {
            base,
            seen,
            _runtime: runtime,
        }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}

fn workspace() -> Workspace {
    let ws = Workspace::new();
    for version in ["1.0.0", "1.1.0", "2.0.0"] {
        let dir = format!("dist-{version}");
        ws.write(&format!("{dir}/index.html"), format!("<p>{version}</p>"));
        ws.write(&format!("{dir}/js/a b.js"), format!("let v = '{version}';"));
        ws.publish(&format!("@team/app@{version}"), &dir, &[]);
    }
    ws
}

fn purges(version: &str) -> Vec<String> {
    let base = format!("/assets/@team/app/{version}/");
    vec![
        format!("PURGE {base}"),
        format!("PURGE {base}index.html"),
        format!("PURGE {base}js/a%20b.js"),
    ]
}

#[test]
fn rm_purges_every_file_and_the_listing_in_every_cache() {
    let ws = workspace();
    let (one, two) = (FakeCache::start(200), FakeCache::start(404));
    let out = ws.ok(&[
        "rm",
        "@team/app@1.0.0",
        "--purge",
        &one.base,
        "--purge",
        &format!("{}/", two.base),
        "--purge-delay",
        "0s",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Removed @team/app@1.0.0"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "Purged 3 URLs from 2 caches: {}, {}",
            one.base, two.base
        )),
        "{stdout}"
    );
    // 404: the cache never held it, which is as good as purged.
    assert_eq!(one.seen(), purges("1.0.0"));
    assert_eq!(two.seen(), purges("1.0.0"));

    let json = ws.json(&["rm", "@team/app@1.1.0", "--purge", &one.base, "--json"]);
    assert_eq!(json["purged"]["paths"], 3);
    assert_eq!(json["purged"]["caches"][0], one.base.as_str());
    assert_eq!(one.seen()[3..], purges("1.1.0"));

    ws.ok(&["rm", "@team/app@2.0.0", "--dry-run", "--purge", &one.base]);
    assert_eq!(one.seen().len(), 6, "a dry run purges nothing");
}

#[test]
fn a_cache_that_refuses_is_named_and_the_removal_stands() {
    let ws = workspace();
    let (good, refusing) = (FakeCache::start(200), FakeCache::start(405));
    let out = ws.fails(
        &[
            "rm",
            "@team/app@1.0.0",
            "--purge",
            &refusing.base,
            "--purge",
            &good.base,
            "--purge-delay",
            "10ms",
        ],
        1,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("Removed @team/app@1.0.0"), "{stdout}");
    assert!(
        stderr.contains(&format!(
            "error: the catalog is changed, but purging failed in {} after 0 of 3 URLs: \
             PURGE {}/assets/@team/app/1.0.0/: the cache answered 405 Method Not Allowed",
            refusing.base, refusing.base
        )),
        "{stderr}"
    );
    for path in purges("1.0.0") {
        let url = path.replace("PURGE ", &refusing.base);
        assert!(stderr.contains(&format!("not purged: {url}\n")), "{stderr}");
    }
    assert!(stderr.contains("curl -X PURGE"), "{stderr}");
    assert_eq!(refusing.seen().len(), 1, "no more sent after a refusal");
    assert_eq!(good.seen(), purges("1.0.0"), "the other cache is purged");
    assert_eq!(ws.versions("@team/app"), ["2.0.0", "1.1.0"]);

    // A cache that is not there at all.
    let gone = FakeCache::start(200);
    let base = gone.base.clone();
    drop(gone);
    let out = ws.fails(&["rm", "@team/app@1.1.0", "--purge", &base], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("purging failed in {base} after 0 of 3 URLs")),
        "{stderr}"
    );
    assert_eq!(ws.versions("@team/app"), ["2.0.0"]);
}

#[test]
fn gc_purges_the_versions_it_removes() {
    let ws = workspace();
    let cache = FakeCache::start(200);
    let report = ws.json(&["gc", "--keep", "1", "--purge", &cache.base, "--json"]);
    assert_eq!(report["versions"].as_array().map(Vec::len), Some(2));
    assert_eq!(report["purged"]["paths"], 6);
    let mut expected = purges("1.0.0");
    expected.extend(purges("1.1.0"));
    let mut seen = cache.seen();
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected);

    let out = ws.ok(&["gc", "--keep", "1", "--purge", &cache.base]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("Purged"),
        "nothing removed, nothing purged: {stdout}"
    );
    assert_eq!(cache.seen().len(), 6);
}

#[test]
fn purge_urls_are_checked_before_anything_is_removed() {
    let ws = workspace();
    for (bad, says) in [
        ("https://edge", "https is not supported"),
        ("edge:6081", "expected an http:// URL"),
    ] {
        let out = ws.fails(&["rm", "@team/app@1.0.0", "--purge", bad], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--purge"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    assert_eq!(ws.versions("@team/app").len(), 3);
}

#[test]
fn publish_force_purges_the_replaced_files_and_the_new_ones() {
    let ws = workspace();
    let cache = FakeCache::start(200);
    ws.write("again/index.html", "<p>again</p>");
    ws.write("again/new.js", "let fresh = 1;");
    let report = ws.json(&[
        "publish",
        "@team/app@1.1.0",
        "again",
        "--force",
        "--purge",
        &cache.base,
        "--purge-delay",
        "0s",
        "--json",
    ]);
    assert_eq!(report["replaced"], true);
    assert_eq!(report["purged"]["paths"], 4);
    let base = "/assets/@team/app/1.1.0/";
    let mut seen = cache.seen();
    seen.sort();
    assert_eq!(
        seen,
        [
            format!("PURGE {base}"),
            format!("PURGE {base}index.html"),
            format!("PURGE {base}js/a%20b.js"),
            format!("PURGE {base}new.js"),
        ]
    );

    // A first publish has nothing in any cache; a dry run changes nothing.
    let out = ws.fails(
        &[
            "publish",
            "@team/app@3.0.0",
            "again",
            "--purge",
            &cache.base,
        ],
        2,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--purge purges the files --force replaces"),
        "{stderr}"
    );
    ws.ok(&[
        "publish",
        "@team/app@1.1.0",
        "again",
        "--force",
        "--dry-run",
        "--purge",
        &cache.base,
    ]);
    assert_eq!(cache.seen().len(), 4);
}

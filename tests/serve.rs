//! `ccc serve` end to end: a real server process on 127.0.0.1, a real
//! catalog, real HTTP. Every server is killed when its test ends (see
//! `serve_util::Server`), and every wait is bounded.

use crate::serve_util::{
    Client, RawResp, Resp, STARTUP, Server, agent, asset_path, enc, get, head, poll_until, raw_get,
    request, request_with, sigterm,
};
use crate::util::{Rng, Workspace, gunzip};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::{Duration, Instant, UNIX_EPOCH};

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");

/// One file of a published version, as `ccc ls PKG@VERSION --json` reports
/// it, with its original bytes.
#[derive(Debug, Clone)]
struct File {
    path: String,
    bytes: Vec<u8>,
    gzip: bool,
    sha256: String,
    content_type: String,
}

/// The awkward tree: text and binary, every byte value, an empty file,
/// names with unicode, space, `%`, `#`, `+`, `@`, `?` and look-alikes of
/// `..` and `%2F`, a path 22 folders deep, and files larger than one
/// socket buffer.
fn awkward_tree() -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(20_240_601);
    let deep: Vec<String> = (0..22).map(|i| format!("d{i}")).collect();
    vec![
        (
            "index.html".into(),
            b"<!doctype html><title>t</title>\n".repeat(40),
        ),
        ("js/app.js".into(), rng.text(6_000)),
        ("css/site.css".into(), b"body { margin: 0 }\n".repeat(50)),
        ("data.json".into(), br#"{"a": [1, 2, 3]}"#.repeat(30)),
        ("img/logo.png".into(), rng.bytes(3_000)),
        (
            "bin/all-bytes.bin".into(),
            (0..=255u8).cycle().take(256 * 40).collect(),
        ),
        ("bin/each-byte-once.bin".into(), (0..=255u8).collect()),
        ("empty.txt".into(), Vec::new()),
        ("big/bundle.js".into(), rng.text(300_000)),
        ("big/noise.bin".into(), rng.bytes(100_000)),
        (
            "日本語/ファイル.txt".into(),
            "こんにちは\n".repeat(20).into_bytes(),
        ),
        ("ünïcödé 😀.css".into(), "a::after{content:'😀'}\n".into()),
        ("with space.txt".into(), b"space\n".to_vec()),
        ("100%.txt".into(), b"percent\n".to_vec()),
        ("a#b.txt".into(), b"hash\n".to_vec()),
        ("c+d.txt".into(), b"plus\n".to_vec()),
        ("e@f.txt".into(), b"at\n".to_vec()),
        ("%2F.txt".into(), b"literal percent-two-F\n".to_vec()),
        ("%2e%2e".into(), b"not a parent folder\n".to_vec()),
        ("...".into(), b"three dots\n".to_vec()),
        ("q?x=1&y.txt".into(), b"question\n".to_vec()),
        ("[x]{y};z=1,w.txt".into(), b"brackets\n".to_vec()),
        (
            format!("{}/deep.js", deep.join("/")),
            b"export const deep = 22;\n".repeat(10),
        ),
        ("x/y/z/noise.wasm".into(), rng.bytes(40_000)),
    ]
}

/// Publishes `files` as `target` from a folder of the workspace.
fn publish(ws: &Workspace, target: &str, files: &[(String, Vec<u8>)], extra: &[&str]) {
    let dir = format!("src-{}", enc(target));
    let _ = std::fs::remove_dir_all(ws.path().join(&dir));
    ws.write_tree(&dir, files);
    ws.publish(target, &dir, extra);
}

/// The files of `pkg@version` with their catalog metadata.
fn catalog_files(ws: &Workspace, version: &str, originals: &[(String, Vec<u8>)]) -> Vec<File> {
    let originals: BTreeMap<&str, &Vec<u8>> =
        originals.iter().map(|(p, b)| (p.as_str(), b)).collect();
    let files: Vec<File> = ws
        .files(version)
        .iter()
        .map(|f| {
            let path = f["path"].as_str().expect("path").to_string();
            let bytes = originals
                .get(path.as_str())
                .unwrap_or_else(|| panic!("{path} was not in the tree"))
                .to_vec();
            File {
                gzip: f["encoding"] == "gzip",
                sha256: f["sha256"].as_str().expect("sha").to_string(),
                content_type: f["content_type"].as_str().expect("type").to_string(),
                path,
                bytes,
            }
        })
        .collect();
    assert_eq!(files.len(), originals.len(), "every file was published");
    files
}

fn http_date(unix: i64) -> String {
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(unix as u64))
}

/// The `max-age` of a Cache-Control value.
fn max_age(cache_control: &str) -> u64 {
    cache_control
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no max-age in {cache_control:?}"))
}

/// Checks the answer to a GET of `file` that accepted gzip or not.
#[track_caller]
fn check_body(file: &File, r: &Resp, accepted_gzip: bool, url: &str) {
    assert_eq!(r.status, 200, "GET {url}: {}", r.text());
    if let Some(len) = r.header("content-length") {
        assert_eq!(
            len.parse::<usize>().expect("a number"),
            r.body.len(),
            "GET {url}: Content-Length"
        );
    }
    assert_eq!(r.header("vary"), Some("Accept-Encoding"), "GET {url}");
    assert_eq!(r.must("content-type"), file.content_type, "GET {url}");
    match r.header("content-encoding") {
        Some("gzip") => {
            assert!(accepted_gzip, "GET {url}: gzip sent to a client without it");
            assert!(
                file.gzip,
                "GET {url}: gzip sent for an identity-stored file"
            );
            assert_eq!(gunzip(&r.body), file.bytes, "GET {url}: gunzipped body");
            assert_eq!(r.must("etag"), format!("\"{}-gz\"", file.sha256), "{url}");
        }
        None => {
            assert!(
                !(accepted_gzip && file.gzip),
                "GET {url}: a gzip-stored file should go out gzipped when gzip is accepted"
            );
            assert!(
                r.body == file.bytes,
                "GET {url}: body differs from the original ({} vs {} bytes)",
                r.body.len(),
                file.bytes.len()
            );
            assert_eq!(r.must("etag"), format!("\"{}\"", file.sha256), "{url}");
        }
        // No caller of this check accepts br (tests/brotli.rs does).
        Some(other) => panic!("GET {url}: unexpected Content-Encoding {other}"),
    }
}

#[test]
fn every_file_round_trips_with_and_without_gzip() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    let scoped_tree: Vec<(String, Vec<u8>)> = vec![
        ("index.js".into(), b"export default 1;\n".repeat(30)),
        ("sub dir/x@2x.png".into(), Rng::new(3).bytes(700)),
    ];
    publish(&ws, "@scope/name@1.0.0", &scoped_tree, &[]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let scoped = catalog_files(&ws, "@scope/name@1.0.0", &scoped_tree);
    assert!(files.iter().any(|f| f.gzip) && files.iter().any(|f| !f.gzip));
    assert!(scoped.iter().any(|f| f.gzip) && scoped.iter().any(|f| !f.gzip));
    let deepest = files.iter().map(|f| f.path.matches('/').count()).max();
    assert!(deepest >= Some(20), "the tree has a path 20+ folders deep");

    let server = Server::start(&ws, &[]);
    let client = agent();
    for (package, files) in [("site", &files), ("@scope/name", &scoped)] {
        for file in files {
            let url = server.url(&asset_path(package, "1.0.0", &file.path));
            let plain = request_with(&client, "GET", &url, &[]);
            check_body(file, &plain, false, &url);
            let gz = request_with(&client, "GET", &url, &[GZIP]);
            check_body(file, &gz, true, &url);
            // Again: the second answers come from the cache.
            check_body(
                file,
                &request_with(&client, "GET", &url, &[GZIP]),
                true,
                &url,
            );
            check_body(file, &request_with(&client, "GET", &url, &[]), false, &url);
        }
    }

    // Characters that may go unescaped in a path mean themselves: `+` is
    // not a space, `@` and a scope's `@` need no escaping, and an escaped
    // `@scope%2Fname` is the same package.
    let by_path = |p: &str| files.iter().find(|f| f.path == p).expect("file");
    for (target, path) in [
        ("/assets/site/1.0.0/c+d.txt", "c+d.txt"),
        ("/assets/site/1.0.0/e@f.txt", "e@f.txt"),
        ("/assets/site/1.0.0/with%20space.txt", "with space.txt"),
        ("/assets/site/1.0.0/100%25.txt", "100%.txt"),
        ("/assets/site/1.0.0/%252F.txt", "%2F.txt"),
        ("/assets/site/1.0.0/%252e%252e", "%2e%2e"),
        ("/assets/site/1.0.0/...", "..."),
        (
            "/assets/site/1.0.0/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E3%83%95%E3%82%A1%E3%82%A4%E3%83%AB.txt",
            "日本語/ファイル.txt",
        ),
    ] {
        let url = server.url(target);
        check_body(by_path(path), &get(&url, &[]), false, &url);
    }
    let scoped_index = scoped.iter().find(|f| f.path == "index.js").expect("file");
    for target in [
        "/assets/@scope/name/1.0.0/index.js",
        "/assets/%40scope%2Fname/1.0.0/index.js",
    ] {
        let url = server.url(target);
        check_body(scoped_index, &get(&url, &[GZIP]), true, &url);
    }
    // A name that is not there, next to ones that are.
    let missing = get(&server.url("/assets/site/1.0.0/c%20d.txt"), &[]);
    assert_eq!(missing.status, 404, "{}", missing.text());
}

/// On a file with gzip and identity only, so that a `-br` tag, which names
/// a representation the file does not have, is shown not to validate
/// (tests/brotli.rs has the 304s of a file with all three).
#[test]
fn conditional_requests() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &["--brotli-quality", "0"]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let published = ws.published_at("site", "1.0.0");
    let server = Server::start(&ws, &[]);
    let client = Client::new();
    let html = files.iter().find(|f| f.path == "index.html").expect("html");
    assert!(html.gzip, "index.html is stored gzipped");
    let url = server.url("/assets/site/1.0.0/index.html");
    let plain_tag = format!("\"{}\"", html.sha256);
    let gz_tag = format!("\"{}-gz\"", html.sha256);

    let first = client.get(&url, &[GZIP]);
    assert_eq!(first.must("etag"), gz_tag);
    assert_eq!(first.must("last-modified"), http_date(published));

    // If-None-Match: the tag of the representation asked for, weak or
    // not, alone or in a list, and `*`, validate it; the other
    // representation's tag does not (RFC 9110 13.1.2): a shared cache that
    // holds one copy never gets a 304 that matches none of its copies.
    for (accept, own, other) in [
        (&[][..], &plain_tag, &gz_tag),
        (&[GZIP][..], &gz_tag, &plain_tag),
    ] {
        let mut other_headers = accept.to_vec();
        other_headers.push(("If-None-Match", other));
        let r = client.get(&url, &other_headers);
        assert_eq!(r.status, 200, "If-None-Match: {other} with {accept:?}");
        for inm in [
            own.clone(),
            format!("W/{own}"),
            format!("\"nope\", {own}"),
            "*".to_string(),
        ] {
            let mut headers = accept.to_vec();
            headers.push(("If-None-Match", &inm));
            let r = client.get(&url, &headers);
            assert_eq!(r.status, 304, "If-None-Match: {inm} with {accept:?}");
            assert!(r.body.is_empty(), "a 304 has no body");
            assert_eq!(r.must("etag"), own, "If-None-Match: {inm}");
            assert_eq!(r.header("cache-control"), Some(IMMUTABLE));
            assert_eq!(r.header("vary"), Some("Accept-Encoding"));
            assert_eq!(r.header("content-encoding"), None, "no content headers");
        }
    }
    for inm in [
        "\"nope\"".to_string(),
        html.sha256.clone(), // unquoted: not an entity tag
        format!("\"{}\"", &html.sha256[..63]),
        format!("\"{}-br\"", html.sha256),
    ] {
        let r = client.get(&url, &[GZIP, ("If-None-Match", &inm)]);
        assert_eq!(r.status, 200, "If-None-Match: {inm}");
        assert_eq!(gunzip(&r.body), html.bytes);
    }

    // On the wire, a 304 carries no body bytes at all.
    let wire = raw_get(
        server.addr,
        "GET",
        "/assets/site/1.0.0/index.html",
        &[&format!("If-None-Match: {plain_tag}")],
    );
    assert_eq!(wire.status, 304);
    assert!(wire.after_headers.is_empty(), "{wire:?}");
    assert_eq!(wire.header("etag"), Some(plain_tag.as_str()));

    // If-Modified-Since: equal to or after Last-Modified -> 304, before ->
    // 200; an unparsable date is ignored.
    let cases = [
        (http_date(published), 304),
        (http_date(published + 1), 304),
        (http_date(published - 1), 200),
        (http_date(0), 200),
        ("yesterday".to_string(), 200),
    ];
    for (ims, want) in &cases {
        let r = client.get(&url, &[("If-Modified-Since", ims)]);
        assert_eq!(r.status, *want, "If-Modified-Since: {ims}");
        if *want == 304 {
            assert!(r.body.is_empty());
            assert_eq!(r.must("etag"), plain_tag);
        } else {
            assert_eq!(r.body, html.bytes);
        }
    }

    // If-None-Match decides alone when both are present.
    let later = http_date(published + 3600);
    let earlier = http_date(published - 3600);
    let r = client.get(
        &url,
        &[("If-None-Match", "\"nope\""), ("If-Modified-Since", &later)],
    );
    assert_eq!(r.status, 200, "a failed If-None-Match beats a passing IMS");
    let r = client.get(
        &url,
        &[
            ("If-None-Match", &plain_tag),
            ("If-Modified-Since", &earlier),
        ],
    );
    assert_eq!(
        r.status, 304,
        "a matching If-None-Match beats a failing IMS"
    );

    // HEAD validates the same way.
    let r = client.head(&url, &[("If-None-Match", &plain_tag)]);
    assert_eq!(r.status, 304);
}

#[test]
fn headers_content_types_and_head() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let server = Server::start(&ws, &[]);
    let client = Client::new();

    for (path, want_type) in [
        ("index.html", "text/html; charset=utf-8"),
        ("js/app.js", "text/javascript; charset=utf-8"),
        ("css/site.css", "text/css; charset=utf-8"),
        ("img/logo.png", "image/png"),
    ] {
        let r = client.get(&server.url(&asset_path("site", "1.0.0", path)), &[GZIP]);
        assert_eq!(r.status, 200, "{path}");
        let ct = r.must("content-type");
        assert_eq!(ct, want_type, "{path}: Content-Type");
        if path.ends_with(".png") {
            assert!(!ct.contains("charset"), "{path}: {ct}");
        }
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{path}");
        assert_eq!(r.header("cache-control"), Some(IMMUTABLE), "{path}");
        let etag = r.must("etag");
        assert!(
            etag.starts_with('"') && etag.ends_with('"'),
            "{path}: a strong ETag, got {etag}"
        );
    }

    // The gzip and identity representations of one file are different
    // byte sequences, so their strong ETags differ.
    let html_url = server.url("/assets/site/1.0.0/index.html");
    let gz = client.get(&html_url, &[GZIP]);
    let plain = client.get(&html_url, &[]);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(plain.header("content-encoding"), None);
    assert_ne!(gz.must("etag"), plain.must("etag"));

    // HEAD: the same headers as GET (Content-Length included), no body.
    for file in &files {
        let url = server.url(&asset_path("site", "1.0.0", &file.path));
        for accept in [&[][..], &[GZIP][..]] {
            let g = client.get(&url, accept);
            let h = client.head(&url, accept);
            assert_eq!(h.status, 200, "HEAD {url}");
            assert_eq!(
                h.stable_headers(),
                g.stable_headers(),
                "HEAD {url} {accept:?}"
            );
            assert!(h.body.is_empty());
        }
    }
    // On the wire: Content-Length is the GET body's length and nothing
    // follows the headers.
    for (path, accept) in [
        ("index.html", "gzip"),
        ("index.html", "identity"),
        ("img/logo.png", "gzip"),
        ("empty.txt", "gzip"),
        ("big/bundle.js", "identity"),
    ] {
        let target = asset_path("site", "1.0.0", path);
        let ae = format!("Accept-Encoding: {accept}");
        let g = raw_get(server.addr, "GET", &target, &[&ae]);
        let h = raw_get(server.addr, "HEAD", &target, &[&ae]);
        assert_eq!((g.status, h.status), (200, 200), "{path}");
        assert!(h.after_headers.is_empty(), "HEAD {path} sent a body: {h:?}");
        assert_eq!(
            h.header("content-length"),
            g.header("content-length"),
            "HEAD {path} ({accept})"
        );
        assert_eq!(
            h.header("transfer-encoding"),
            g.header("transfer-encoding"),
            "HEAD {path} ({accept})"
        );
        if let Some(len) = g.header("content-length") {
            assert_eq!(len.parse::<usize>().expect("number"), g.body().len());
        }
    }
}

/// `--bind` takes a host name, and listens on every address it resolves
/// to, on one port.
#[test]
fn bind_accepts_a_host_name() {
    let ws = Workspace::new();
    publish(&ws, "pkg@1.0.0", &[("a.txt".into(), b"a\n".to_vec())], &[]);
    let server = Server::start(&ws, &["--bind", "localhost"]);
    let r = get(&server.url(&asset_path("pkg", "1.0.0", "a.txt")), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"a\n");
    let addrs: Vec<std::net::SocketAddr> = server
        .stdout()
        .lines()
        .filter_map(|l| l.strip_prefix("listening on http://"))
        .map(|a| a.parse().expect("an address"))
        .collect();
    assert!(!addrs.is_empty());
    for addr in &addrs {
        assert!(addr.ip().is_loopback(), "{addr}");
        assert_eq!(addr.port(), server.addr.port(), "one port: {addrs:?}");
    }
    // An address with its port, or a name no host has, is refused at once.
    for bad in ["127.0.0.1:8080", "local_host", "host-.example"] {
        let out = ws.fails(&["serve", "--bind", bad, "--port", "0"], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--bind"), "{bad}: {stderr}");
    }
}

/// Between gzip and identity, as for every file without a brotli stream
/// (all of a catalog from before brotli, and files where brotli saves too
/// little); tests/brotli.rs negotiates with br in the running.
#[test]
fn accept_encoding_negotiation() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &["--brotli-quality", "0"]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let html = files.iter().find(|f| f.path == "index.html").expect("html");
    let png = files
        .iter()
        .find(|f| f.path == "img/logo.png")
        .expect("png");
    assert!(html.gzip && !png.gzip);
    let server = Server::start(&ws, &[]);
    let url = server.url("/assets/site/1.0.0/index.html");
    for (accept, gzip) in [
        ("gzip", true),
        ("GZIP", true),
        ("x-gzip", true),
        ("gzip, deflate, br", true),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", true),
        ("*", true),
        ("identity;q=0, gzip", true),
        ("gzip;q=0", false),
        ("gzip;q=0.000", false),
        ("br, deflate", false),
        ("identity", false),
        ("*;q=0, identity", false),
        ("gzip;q=0.5, identity;q=1", false),
        ("", false),
    ] {
        let r = get(&url, &[("Accept-Encoding", accept)]);
        check_body(html, &r, gzip, &url);
        assert_eq!(
            r.header("content-encoding") == Some("gzip"),
            gzip,
            "Accept-Encoding: {accept:?}"
        );
    }
    // A file kept raw goes out raw whatever the client accepts.
    let png_url = server.url("/assets/site/1.0.0/img/logo.png");
    check_body(png, &get(&png_url, &[GZIP]), true, &png_url);
}

/// A site whose every version says which it is.
fn versions_tree(version: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        ("v.txt".into(), version.as_bytes().to_vec()),
        (
            "app.js".into(),
            format!("console.log('{version}');\n")
                .repeat(20)
                .into_bytes(),
        ),
        ("odd/a b#c%d?e.txt".into(), version.as_bytes().to_vec()),
    ]
}

#[test]
fn latest_and_ranges_redirect_to_the_newest_match() {
    let ws = Workspace::new();
    for v in ["1.2.0", "1.4.0", "1.4.7", "1.5.0", "2.0.0-rc.1"] {
        publish(&ws, &format!("app@{v}"), &versions_tree(v), &[]);
    }
    publish(&ws, "@s/lib@0.3.1", &versions_tree("0.3.1"), &[]);
    let server = Server::start(&ws, &[]);
    let client = agent();
    for (package, selector, want) in [
        ("app", "latest", "1.5.0"),
        ("app", "^1.2", "1.5.0"),
        ("app", "1", "1.5.0"),
        ("app", "~1.4.0", "1.4.7"),
        ("app", "1.4", "1.4.7"),
        ("app", "1.4.x", "1.4.7"),
        ("app", ">=1.2.0 <1.4.5", "1.4.0"),
        ("app", "^2.0.0-rc.0", "2.0.0-rc.1"),
        ("@s/lib", "latest", "0.3.1"),
        ("@s/lib", "^0.3", "0.3.1"),
    ] {
        for path in ["v.txt", "app.js", "odd/a b#c%d?e.txt"] {
            let url = server.url(&asset_path(package, selector, path));
            let r = request_with(&client, "GET", &url, &[]);
            assert_eq!(r.status, 302, "GET {url}: {}", r.text());
            let location = r.must("location");
            let decoded = percent_encoding::percent_decode_str(location)
                .decode_utf8()
                .expect("UTF-8");
            assert_eq!(
                decoded,
                format!("/assets/{package}/{want}/{path}"),
                "GET {url} should point at {want} (Location: {location})"
            );
            let cc = r.must("cache-control");
            assert!(
                max_age(cc) <= 3600 && !cc.contains("immutable"),
                "a redirect from a range is cached briefly: {cc}"
            );
            let target = location.to_string();
            let followed = request_with(&client, "GET", &server.url(&target), &[]);
            assert_eq!(followed.status, 200, "GET {target}");
            if path != "app.js" {
                assert_eq!(followed.text(), want, "GET {target}");
            }
        }
    }
    // An exact pre-release is served as is.
    let r = get(&server.url("/assets/app/2.0.0-rc.1/v.txt"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "2.0.0-rc.1"));

    for selector in ["^3", "~1.3.0", "0.x", "1.4.8", "1.9.9"] {
        let url = server.url(&asset_path("app", selector, "v.txt"));
        let r = get(&url, &[]);
        assert_eq!(r.status, 404, "GET {url}: {}", r.text());
        assert_eq!(r.json()["status"], 404);
    }
    // A package that does not exist has no latest.
    let r = get(&server.url("/assets/nope/latest/v.txt"), &[]);
    assert_eq!(r.status, 404, "{}", r.text());
}

#[test]
fn listings_and_their_redirects() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    for v in ["0.9.0", "1.1.0", "2.0.0-beta.1"] {
        publish(&ws, &format!("site@{v}"), &versions_tree(v), &[]);
    }
    publish(&ws, "@scope/name@3.1.4", &versions_tree("3.1.4"), &[]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let published = ws.json(&["ls", "site@1.0.0", "--json"])["published_at"].clone();
    let server = Server::start(&ws, &[]);

    let r = get(&server.url("/assets/site/1.0.0/"), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.must("content-type").starts_with("application/json"));
    let listing = r.json();
    assert_eq!(listing["package"], "site");
    assert_eq!(listing["version"], "1.0.0");
    assert_eq!(listing["published_at"], published);
    let listed: BTreeMap<String, &Value> = listing["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| (f["path"].as_str().expect("path").to_string(), f))
        .collect();
    assert_eq!(listed.len(), files.len(), "{listing}");
    for file in &files {
        let entry = listed
            .get(&file.path)
            .unwrap_or_else(|| panic!("{} missing from the listing", file.path));
        assert_eq!(entry["raw_bytes"], file.bytes.len() as u64, "{}", file.path);
        assert_eq!(entry["sha256"], file.sha256, "{}", file.path);
        assert!(entry["stored_bytes"].as_u64().is_some(), "{}", file.path);
    }

    // `?limit=&offset=` pages the files; `file_count` counts them all.
    let paths = |v: &Value| -> Vec<String> {
        v["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["path"].as_str().expect("path").to_string())
            .collect()
    };
    let every = paths(&listing);
    assert!(every.len() > 3, "{listing}");
    for (query, want) in [
        ("?limit=2", &every[..2]),
        ("?offset=1&limit=2", &every[1..3]),
        ("?v=7&offset=3", &every[3..]),
        ("?limit=0", &every[..]),
        ("?offset=100000", &every[..0]),
    ] {
        let r = get(&server.url(&format!("/assets/site/1.0.0/{query}")), &[]);
        assert_eq!(r.status, 200, "{query}: {}", r.text());
        let page = r.json();
        assert_eq!(paths(&page), want, "{query}");
        assert_eq!(page["file_count"], files.len() as u64, "{query}");
    }
    // The list of packages pages the same way.
    let json = [("Accept", "application/json")];
    let all = get(&server.url("/assets/"), &json).json();
    assert_eq!(all.as_array().map(Vec::len), Some(2), "{all}");
    let second = get(&server.url("/assets/?offset=1&limit=5"), &json).json();
    assert_eq!(second, Value::Array(vec![all[1].clone()]));
    // So does a package's list of versions (a package of thousands of
    // nightlies): `version_count` counts them all, the tags stay whole.
    let package = get(&server.url("/assets/site/"), &json).json();
    let versions = |v: &Value| -> Vec<String> {
        v["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .map(|v| v["version"].as_str().expect("version").to_string())
            .collect()
    };
    let newest_first = ["2.0.0-beta.1", "1.1.0", "1.0.0", "0.9.0"];
    assert_eq!(versions(&package), newest_first, "{package}");
    for (query, want) in [
        ("?limit=2", &newest_first[..2]),
        ("?offset=1&limit=2", &newest_first[1..3]),
        ("?offset=3", &newest_first[3..]),
        ("?limit=0", &newest_first[..]),
        ("?offset=10", &newest_first[..0]),
    ] {
        let r = get(&server.url(&format!("/assets/site/{query}")), &json);
        assert_eq!(r.status, 200, "{query}: {}", r.text());
        let page = r.json();
        assert_eq!(versions(&page), want, "{query}");
        assert_eq!(page["version_count"], 4, "{query}");
        assert_eq!(page["tags"], package["tags"], "{query}");
    }
    // Each page has its own ETag: the whole list's does not revalidate one.
    let whole = get(&server.url("/assets/site/"), &json);
    let r = get(
        &server.url("/assets/site/?limit=1"),
        &[json[0], ("If-None-Match", whole.must("etag"))],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = get(&server.url("/assets/site/?offset=-1"), &json);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text()
            .contains("`offset` must be a whole number, not `-1`"),
        "{}",
        r.text()
    );
    let r = get(&server.url("/assets/site/1.0.0/?limit=ten"), &[]);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text()
            .contains("`limit` must be a whole number, not `ten`"),
        "{}",
        r.text()
    );
    let r = get(&server.url("/assets/site/latest/?limit=2"), &[]);
    assert_eq!(r.header("location"), Some("/assets/site/1.1.0/?limit=2"));

    for (from, to) in [
        // A bare version leads to its entry file (index.html), or to its
        // list when it has none (tests/serve_aliases.rs has the rules).
        ("/assets/site/1.0.0", "/assets/site/1.0.0/index.html"),
        ("/assets/site", "/assets/site/1.1.0/"),
        ("/assets/site/latest/", "/assets/site/1.1.0/"),
        ("/assets/site/%5E0.9/", "/assets/site/0.9.0/"),
        ("/assets/@scope/name", "/assets/@scope/name/3.1.4/"),
        ("/assets/@scope/name/3.1.4", "/assets/@scope/name/3.1.4/"),
    ] {
        let r = get(&server.url(from), &[]);
        assert_eq!(r.status, 302, "GET {from}: {}", r.text());
        assert_eq!(r.header("location"), Some(to), "GET {from}");
    }
    // Following a range's version root ends at an exact listing.
    let mut at = "/assets/site/latest".to_string();
    for _ in 0..3 {
        let r = get(&server.url(&at), &[]);
        if r.status != 302 {
            assert_eq!(r.status, 200, "GET {at}");
            assert_eq!(r.json()["version"], "1.1.0");
            break;
        }
        at = r.must("location").to_string();
    }
    assert_eq!(at, "/assets/site/1.1.0/");
    let scoped = get(&server.url("/assets/@scope/name/3.1.4/"), &[]);
    assert_eq!(scoped.status, 200);
    assert_eq!(scoped.json()["package"], "@scope/name");

    for missing in [
        "/assets/site/1.0.1/",
        "/assets/nope/1.0.0/",
        "/assets/nope",
        "/assets/site/1.0.0/js/", // no folder listings
    ] {
        let r = get(&server.url(missing), &[]);
        assert_eq!(r.status, 404, "GET {missing}: {}", r.text());
    }
}

#[test]
fn stats_and_health() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let html = files.iter().find(|f| f.path == "index.html").expect("html");
    // The bodies the cache holds of the file: its stored body and, when it
    // has one, its brotli stream.
    let stored: u64 = ws
        .files("site@1.0.0")
        .iter()
        .find(|f| f["path"] == "index.html")
        .and_then(|f| {
            let variants = f["variants"].as_array()?;
            let brotli: Option<u64> = variants.iter().map(|v| v["stored_bytes"].as_u64()).sum();
            Some(f["stored_bytes"].as_u64()? + brotli?)
        })
        .expect("stored size");
    let server = Server::start(&ws, &[]);
    let url = server.url("/assets/site/1.0.0/index.html");

    let mut body_bytes = 0;
    let mut send = |method: &str, url: &str, headers: &[(&str, &str)], want: u16| {
        let r = request(method, url, headers);
        assert_eq!(r.status, want, "{method} {url}: {}", r.text());
        body_bytes += r.body.len() as u64;
        r
    };
    let health = send("GET", &server.url("/healthz"), &[], 200);
    assert_eq!(health.json()["status"], "ok");
    send("GET", &url, &[], 200); // miss
    send("GET", &url, &[], 200); // hit
    send("GET", &url, &[GZIP], 200); // hit
    send("HEAD", &url, &[GZIP], 200); // hit, no body
    send("GET", &server.url("/assets/site/1.0.0/nope.js"), &[], 404); // miss
    let tag = format!("\"{}\"", html.sha256);
    send("GET", &url, &[("If-None-Match", &tag)], 304); // hit
    send(
        "GET",
        &server.url("/assets/site/latest/index.html"),
        &[],
        302,
    );
    send("DELETE", &url, &[], 405);
    send("GET", &server.url("/nowhere"), &[], 404);

    let stats = server.stats();
    assert_eq!(stats["requests"], 10, "{stats}");
    let by_status: BTreeMap<String, u64> =
        serde_json::from_value(stats["by_status"].clone()).expect("by_status");
    let want: BTreeMap<String, u64> = [("200", 5), ("302", 1), ("304", 1), ("404", 2), ("405", 1)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(by_status, want, "{stats}");
    assert_eq!(stats["bytes_sent"], body_bytes, "{stats}");
    let cache = &stats["cache"];
    assert_eq!(cache["hits"], 4, "{stats}");
    assert_eq!(cache["misses"], 2, "{stats}");
    assert_eq!(cache["evictions"], 0, "{stats}");
    assert_eq!(cache["entries"], 1, "{stats}");
    // The budget counts the bodies and what the entry holds beside them:
    // its names, validators, prepared heads (up to three, one per coding,
    // of about 1.9 KB each) and the cache's node.
    let bytes = cache["bytes"].as_u64().expect("cache bytes");
    assert!(
        bytes > stored + 1024 && bytes < stored + 8 * 1024,
        "{bytes} for {stored} bytes of bodies: {stats}"
    );
    assert!(stats["uptime_secs"].as_f64().is_some_and(|s| s >= 0.0));

    // The first /_stats is counted by the second.
    let again = server.stats();
    assert_eq!(again["requests"], 11, "{again}");
    assert_eq!(again["by_status"]["200"], 6, "{again}");
    let h = head(&server.url("/healthz"), &[]);
    assert_eq!(h.status, 200);
}

#[test]
fn errors_are_small_json_with_the_right_status() {
    let ws = Workspace::new();
    publish(&ws, "site@1.0.0", &versions_tree("1.0.0"), &[]);
    let server = Server::start(&ws, &[]);

    #[track_caller]
    fn check_error(r: &RawResp, want: u16, what: &str) {
        assert_eq!(r.status, want, "{what}: {r:?}");
        assert!(
            r.header("content-type")
                .is_some_and(|t| t.starts_with("application/json")),
            "{what}: {r:?}"
        );
        let body = r.body();
        assert!(
            body.len() < 512,
            "{what}: a small body, got {} bytes",
            body.len()
        );
        let json = r.json();
        assert_eq!(json["status"], want, "{what}: {json}");
        assert!(
            json["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{what}: {json}"
        );
    }

    // 400: unsafe or malformed paths, sent raw so that no client library
    // normalizes them away.
    for target in [
        "/assets/site/1.0.0/../1.0.0/v.txt",
        "/assets/site/1.0.0/a/../v.txt",
        "/assets/site/1.0.0/%2e%2e/v.txt",
        "/assets/site/1.0.0/%2E%2E/v.txt",
        "/assets/site/1.0.0/./v.txt",
        "/assets/site/1.0.0//v.txt",
        "/assets/site/1.0.0/v%00.txt",
        "/assets/site/1.0.0/%FF.txt",
        "/assets/@S/site/1.0.0/v.txt",
        "/assets/site/not%20a%20version/v.txt",
    ] {
        let r = raw_get(server.addr, "GET", target, &[]);
        check_error(&r, 400, &format!("GET {target}"));
    }
    // 404: unknown package, version, file, route.
    for target in [
        "/assets/nope/1.0.0/v.txt",
        // A name npm gave before lowercase is a name: not this package.
        "/assets/Site/1.0.0/v.txt",
        "/assets/site/9.9.9/v.txt",
        "/assets/site/1.0.0/nope.txt",
        "/assets/site/1.0.0/v.txt/more",
        "/nope",
        "/",
        "/assetsx",
        "/_stats/x",
    ] {
        let r = raw_get(server.addr, "GET", target, &[]);
        check_error(&r, 404, &format!("GET {target}"));
    }
    // 405 with Allow, for every method but GET, HEAD and OPTIONS, on every
    // route.
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE"] {
        for target in [
            "/assets/site/1.0.0/v.txt",
            "/assets/site/1.0.0/",
            "/_stats",
            "/healthz",
        ] {
            let r = raw_get(server.addr, method, target, &["Content-Length: 0"]);
            check_error(&r, 405, &format!("{method} {target}"));
            assert_eq!(
                r.header("allow"),
                Some("GET, HEAD, OPTIONS"),
                "{method} {target}"
            );
        }
    }
    // The same through an ordinary client that sends a body.
    let r = request("POST", &server.url("/assets/site/1.0.0/v.txt"), &[]);
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("GET, HEAD, OPTIONS"))
    );

    // 414 past 8 KiB of request target (the router's answer); past the
    // 32 KiB head hyper reads, its 431 (serve_limits).
    let prefix = "/assets/site/1.0.0/";
    let long = format!("{prefix}{}", "a".repeat(9_000 - prefix.len()));
    check_error(
        &raw_get(server.addr, "GET", &long, &[]),
        414,
        "9000-byte target",
    );
    let longer = format!("{prefix}{}", "b".repeat(24 * 1024));
    check_error(
        &raw_get(server.addr, "GET", &longer, &[]),
        414,
        "24 KiB target",
    );
    let at_limit = format!("{prefix}{}", "c".repeat(8 * 1024 - prefix.len()));
    assert_eq!(at_limit.len(), 8 * 1024);
    check_error(
        &raw_get(server.addr, "GET", &at_limit, &[]),
        404,
        "an 8 KiB target is within the limit",
    );

    // Still serving, and it counted all of that.
    let ok = get(&server.url("/assets/site/1.0.0/v.txt"), &[]);
    assert_eq!((ok.status, ok.text().as_str()), (200, "1.0.0"));
    assert_eq!(get(&server.url("/healthz"), &[]).status, 200);
    let stats = server.stats();
    assert_eq!(stats["by_status"]["400"], 10, "{stats}");
    assert_eq!(stats["by_status"]["414"], 2, "{stats}");
    assert_eq!(stats["by_status"]["405"], 21, "{stats}");
}

#[test]
fn not_found_names_the_missing_package_version_or_file() {
    let ws = Workspace::new();
    for v in ["1.0.0", "1.1.0"] {
        publish(&ws, &format!("site@{v}"), &versions_tree(v), &[]);
    }
    publish(&ws, "@s/lib@0.3.1", &versions_tree("0.3.1"), &[]);
    let server = Server::start(&ws, &[]);

    let package = |name: &str| {
        serde_json::json!({
            "error": format!("package `{name}` is not in the catalog"),
            "missing": "package",
            "package": name,
        })
    };
    let version = |name: &str, version: &str| {
        serde_json::json!({
            "error": format!("{name} has no version {version}"),
            "missing": "version",
            "package": name,
            "version": version,
        })
    };
    let no_match = |name: &str, range: &str| {
        serde_json::json!({
            "error": format!("no version of {name} matches {range}"),
            "missing": "version",
            "package": name,
            "version": range,
        })
    };
    let file = |name: &str, version: &str, path: &str| {
        serde_json::json!({
            "error": format!("{name}@{version} has no file {path}"),
            "missing": "file",
            "package": name,
            "version": version,
            "path": path,
        })
    };
    for (target, mut want) in [
        ("/assets/nope/1.0.0/v.txt", package("nope")),
        ("/assets/nope/latest/v.txt", package("nope")),
        ("/assets/nope/^1/v.txt", package("nope")),
        ("/assets/nope/1.0.0/", package("nope")),
        ("/assets/nope", package("nope")),
        ("/assets/@s/nope/", package("@s/nope")),
        ("/assets/site/9.9.9/v.txt", version("site", "9.9.9")),
        ("/assets/site/1.0.1/", version("site", "1.0.1")),
        (
            "/assets/site/2.0.0-rc.1/v.txt",
            version("site", "2.0.0-rc.1"),
        ),
        ("/assets/site/%5E3/v.txt", no_match("site", "^3")),
        ("/assets/site/~1.3.0/", no_match("site", "~1.3.0")),
        ("/assets/site/0.x/", no_match("site", "0.x")),
        (
            "/assets/site/1.0.0/nope.txt",
            file("site", "1.0.0", "nope.txt"),
        ),
        (
            "/assets/site/1.0.0/v.txt/more",
            file("site", "1.0.0", "v.txt/more"),
        ),
        (
            "/assets/site/1.1.0/odd/a%20b%23c%25d%3Fe.txt.map",
            file("site", "1.1.0", "odd/a b#c%d?e.txt.map"),
        ),
        (
            "/assets/@s/lib/0.3.1/x/y.js",
            file("@s/lib", "0.3.1", "x/y.js"),
        ),
    ] {
        let r = raw_get(server.addr, "GET", target, &[]);
        assert_eq!(r.status, 404, "GET {target}: {r:?}");
        assert!(
            r.header("content-type")
                .is_some_and(|t| t.starts_with("application/json")),
            "GET {target}: {r:?}"
        );
        want["status"] = 404.into();
        assert_eq!(r.json(), want, "GET {target}");
        // Cacheable for --not-found-max-age (5 s by default), so that a
        // scan of missing paths stops at the cache in front.
        let cache = r.header("cache-control");
        assert_eq!(cache, Some("public, max-age=5"), "GET {target}");
    }
    for (flag, want) in [("0s", "no-store"), ("30s", "public, max-age=30")] {
        let server = Server::start(&ws, &["--not-found-max-age", flag]);
        for target in ["/assets/site/1.0.0/nope.txt", "/assets/nope/1.0.0/"] {
            let r = raw_get(server.addr, "GET", target, &[]);
            assert_eq!(r.status, 404, "{target}");
            assert_eq!(r.header("cache-control"), Some(want), "{flag} {target}");
        }
    }
    // A range that does match still redirects, and its target 404s on the
    // file alone.
    let r = raw_get(server.addr, "GET", "/assets/site/^1/gone.js", &[]);
    assert_eq!(r.status, 302, "{r:?}");
    let location = r.header("location").expect("location").to_string();
    let r = raw_get(server.addr, "GET", &location, &[]);
    assert_eq!(r.json()["error"], "site@1.1.0 has no file gone.js", "{r:?}");

    // Paths ccc does not serve say where files are.
    for target in ["/nope", "/", "/assets//", "/_stats/x"] {
        let json = raw_get(server.addr, "GET", target, &[]).json();
        assert_eq!(json["status"], 404, "GET {target}: {json}");
        assert_eq!(
            json["error"],
            "no such path: files are served at /assets/<package>/<version>/<path> \
             (or /<package>@<version>/<path>)",
            "GET {target}"
        );
        assert!(json.get("missing").is_none(), "GET {target}: {json}");
    }
    let json = raw_get(server.addr, "GET", "/assets/site/1.0.0/odd/", &[]).json();
    assert_eq!(
        json["error"], "odd/ is a folder; /assets/site/1.0.0/ lists every file of site@1.0.0",
        "{json}"
    );
}

#[test]
fn redirects_keep_the_query_string() {
    let ws = Workspace::new();
    for v in ["1.0.0", "1.1.0"] {
        publish(&ws, &format!("site@{v}"), &versions_tree(v), &[]);
    }
    let server = Server::start(&ws, &[]);
    for (from, to) in [
        (
            "/assets/site/latest/v.txt?v=3&utm_source=a%20b",
            "/assets/site/1.1.0/v.txt?v=3&utm_source=a%20b",
        ),
        (
            "/assets/site/%5E1.0/odd/a%20b%23c%25d%3Fe.txt?x=?y",
            "/assets/site/1.1.0/odd/a%20b%23c%25d%3Fe.txt?x=?y",
        ),
        (
            "/assets/site/1.0/v.txt?a=1&a=2",
            "/assets/site/1.0.0/v.txt?a=1&a=2",
        ),
        ("/assets/site?v=1", "/assets/site/1.1.0/?v=1"),
        ("/assets/site/latest/?v=1", "/assets/site/1.1.0/?v=1"),
        // A version without its trailing slash.
        ("/assets/site/1.0.0?v=1", "/assets/site/1.0.0/?v=1"),
        ("/assets/site/latest?v=1", "/assets/site/1.1.0/?v=1"),
        // An empty query is dropped, as is a fragment.
        ("/assets/site/latest/v.txt?", "/assets/site/1.1.0/v.txt"),
        ("/assets/site/latest/v.txt#top", "/assets/site/1.1.0/v.txt"),
    ] {
        let r = raw_get(server.addr, "GET", from, &[]);
        assert_eq!(r.status, 302, "GET {from}: {r:?}");
        assert_eq!(r.header("location"), Some(to), "GET {from}");
    }
    // The query reaches the file too (it is ignored there).
    let r = raw_get(server.addr, "GET", "/assets/site/1.1.0/v.txt?v=3", &[]);
    assert_eq!((r.status, r.body()), (200, b"1.1.0".to_vec()));
}

#[test]
fn sixteen_clients_share_a_one_entry_cache() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    let mut files = catalog_files(&ws, "site@1.0.0", &tree);
    // Everything but the two biggest files, to keep the run short.
    files.retain(|f| f.bytes.len() < 50_000);
    assert!(files.len() >= 10 && files.iter().any(|f| f.gzip));
    let server = Server::start(&ws, &["--cache-capacity", "1"]);
    let started = Instant::now();
    const THREADS: usize = 16;
    const REQUESTS: usize = 500;
    let mut mismatches: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (files, server) = (&files, &server);
                scope.spawn(move || {
                    let client = agent();
                    let mut rng = Rng::new(t as u64 + 1);
                    let mut bad = Vec::new();
                    for i in 0..REQUESTS {
                        let file = &files[rng.below(files.len())];
                        let gzip = rng.below(2) == 0;
                        let url = server.url(&asset_path("site", "1.0.0", &file.path));
                        let headers: &[(&str, &str)] = if gzip { &[GZIP] } else { &[] };
                        let r = request_with(&client, "GET", &url, headers);
                        let body = if r.header("content-encoding") == Some("gzip") {
                            gunzip(&r.body)
                        } else {
                            r.body.clone()
                        };
                        let sent_gzip = r.header("content-encoding") == Some("gzip");
                        if r.status != 200 || body != file.bytes || sent_gzip != (gzip && file.gzip)
                        {
                            bad.push(format!(
                                "thread {t} request {i}: {} gzip={gzip} -> {} ({} bytes)",
                                file.path,
                                r.status,
                                r.body.len()
                            ));
                        }
                    }
                    bad
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("client thread"))
            .collect()
    });
    let elapsed = started.elapsed();
    mismatches.truncate(20);
    assert!(
        mismatches.is_empty(),
        "wrong answers:\n{}",
        mismatches.join("\n")
    );
    let stats = server.stats();
    let total = (THREADS * REQUESTS) as u64;
    assert_eq!(stats["requests"], total, "{stats}");
    assert_eq!(stats["by_status"]["200"], total, "{stats}");
    let cache = &stats["cache"];
    assert!(cache["evictions"].as_u64() > Some(0), "{stats}");
    assert!(cache["entries"].as_u64() <= Some(1), "{stats}");
    assert_eq!(
        cache["hits"].as_u64().expect("hits") + cache["misses"].as_u64().expect("misses"),
        total,
        "{stats}"
    );
    eprintln!("{total} requests from {THREADS} clients in {elapsed:?}");
}

#[test]
fn a_removed_version_stops_being_served_within_a_second() {
    let ws = Workspace::new();
    publish(&ws, "app@1.0.0", &versions_tree("1.0.0"), &[]);
    publish(&ws, "app@1.1.0", &versions_tree("1.1.0"), &[]);
    let server = Server::start(&ws, &[]);
    let url = server.url("/assets/app/1.0.0/app.js");
    for accept in [&[][..], &[GZIP][..], &[][..]] {
        assert_eq!(get(&url, accept).status, 200);
    }
    assert!(
        server.stats()["cache"]["hits"].as_u64() >= Some(2),
        "cached"
    );

    ws.ok(&["rm", "app@1.0.0"]);
    let took = poll_until(Duration::from_secs(1), || get(&url, &[]).status == 404);
    assert!(
        took.is_some(),
        "GET {url} still answers {} a second after `ccc rm`",
        get(&url, &[]).status
    );
    let gone = get(&url, &[GZIP]);
    assert_eq!(gone.status, 404);
    assert_eq!(gone.json()["status"], 404);
    // The other version is untouched, and `latest` still resolves.
    assert_eq!(
        get(&server.url("/assets/app/1.1.0/v.txt"), &[]).text(),
        "1.1.0"
    );
    assert_eq!(
        get(&server.url("/assets/app/1.0.0/"), &[]).status,
        404,
        "the listing is gone too"
    );
}

/// Republishes `app@VERSION` with `--force` while a server holds its old
/// bytes in cache, and requires the new bytes within a second.
fn forced_republish_is_served(versions: &[&str], replaced: &str) {
    let ws = Workspace::new();
    for v in versions {
        publish(&ws, &format!("app@{v}"), &versions_tree(v), &[]);
    }
    let server = Server::start(&ws, &[]);
    let url = server.url(&format!("/assets/app/{replaced}/v.txt"));
    let js_url = server.url(&format!("/assets/app/{replaced}/app.js"));
    assert_eq!(get(&url, &[]).text(), replaced);
    assert_eq!(get(&url, &[]).text(), replaced); // now cached
    assert_eq!(get(&js_url, &[GZIP]).status, 200);
    let old_tag = get(&js_url, &[GZIP]).must("etag").to_string();

    let new_tree = vec![
        ("v.txt".to_string(), b"replaced".to_vec()),
        (
            "app.js".to_string(),
            b"console.log('replaced');\n".repeat(20),
        ),
    ];
    publish(&ws, &format!("app@{replaced}"), &new_tree, &["--force"]);
    let took = poll_until(Duration::from_secs(1), || {
        get(&url, &[]).body == b"replaced"
    });
    let now = get(&url, &[]);
    assert!(
        took.is_some(),
        "GET {url} still answers {} {:?} a second after `ccc publish app@{replaced} --force` \
         replaced it with \"replaced\"",
        now.status,
        now.text()
    );
    let js = get(&js_url, &[GZIP]);
    assert_eq!(gunzip(&js.body), new_tree[1].1);
    assert_ne!(js.must("etag"), old_tag);
}

#[test]
fn a_forced_republish_of_an_older_version_is_served_within_a_second() {
    forced_republish_is_served(&["1.0.0", "1.1.0"], "1.0.0");
}

#[test]
fn a_forced_republish_of_the_newest_version_is_served_within_a_second() {
    // The replaced version is the last row inserted, so SQLite hands its
    // rowid to the replacement.
    forced_republish_is_served(&["1.0.0"], "1.0.0");
}

/// Runs a `ccc serve` that must fail to start; returns its stderr.
fn serve_fails(ws: &Workspace, db: &str) -> String {
    let mut child = ws
        .ccc_std()
        .args(["serve", "--db", db, "--port", "0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn ccc serve");
    let started = Instant::now();
    let status = crate::serve_util::wait_timeout(&mut child, STARTUP);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("ccc serve --db {db} is still running after {STARTUP:?}");
    }
    let out = child.wait_with_output().expect("output");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ccc serve --db {db} took {:?} to fail",
        started.elapsed()
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "ccc serve --db {db} succeeded");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stdout.contains("listening"),
        "ccc serve --db {db} must not claim to listen: {stdout}"
    );
    assert!(stderr.contains("error:"), "{stderr}");
    assert!(stderr.contains(db), "the error names {db}: {stderr}");
    stderr
}

#[test]
fn startup_fails_fast_without_a_catalog() {
    let ws = Workspace::new();
    let stderr = serve_fails(&ws, "missing.db");
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(
        !ws.path().join("missing.db").exists(),
        "serve must not create a catalog"
    );
    ws.write(
        "junk.db",
        b"this is not a database, just text\n".repeat(200),
    );
    serve_fails(&ws, "junk.db");
    let rng_bytes = Rng::new(9).bytes(8192);
    ws.write("noise.db", &rng_bytes);
    serve_fails(&ws, "noise.db");
    assert_eq!(
        std::fs::read(ws.path().join("noise.db")).expect("read"),
        rng_bytes,
        "serve left the file alone"
    );
    // A SQLite database that is not a catalog.
    let conn = rusqlite::Connection::open(ws.path().join("other.db")).expect("create");
    conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .expect("sql");
    drop(conn);
    serve_fails(&ws, "other.db");
}

#[test]
fn startup_errors_about_a_non_catalog_file_carry_a_hint() {
    let ws = Workspace::new();
    ws.write(
        "junk.db",
        b"this is not a database, just text\n".repeat(200),
    );
    let stderr = serve_fails(&ws, "junk.db");
    assert!(
        stderr.contains("hint:"),
        "`ccc serve --db junk.db` (a text file) should say what to do: {stderr}"
    );
}

#[test]
fn the_port_can_come_from_ccc_port() {
    let ws = Workspace::new();
    publish(&ws, "site@1.0.0", &versions_tree("1.0.0"), &[]);
    let db = ws.db();
    let server = Server::start_with(
        ws.ccc_std()
            .args(["serve", "--db", db.to_str().expect("UTF-8")])
            .env("CCC_PORT", "0"),
    );
    assert_ne!(server.addr.port(), 8333, "CCC_PORT=0 picks a free port");
    assert_eq!(get(&server.url("/healthz"), &[]).status, 200);
    assert_eq!(
        get(&server.url("/assets/site/1.0.0/v.txt"), &[]).text(),
        "1.0.0"
    );
}

#[test]
fn sigterm_stops_the_server_cleanly_with_final_stats() {
    let ws = Workspace::new();
    publish(&ws, "site@1.0.0", &versions_tree("1.0.0"), &[]);
    let mut server = Server::start(&ws, &[]);
    // Connections left open must not keep the server alive: one idle
    // keep-alive connection after a request, one that never finished
    // sending its request.
    let client = Client::new();
    for _ in 0..3 {
        assert_eq!(
            client
                .get(&server.url("/assets/site/1.0.0/v.txt"), &[])
                .status,
            200
        );
    }
    let mut half = std::net::TcpStream::connect(server.addr).expect("connect");
    half.write_all(b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n")
        .expect("send half a request");
    std::thread::sleep(Duration::from_millis(200));
    sigterm(server.pid());
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("ccc serve exits within 10 s of SIGTERM");
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status}; stderr:\n{}",
        server.stderr()
    );
    let stdout = server.stdout();
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        last.starts_with("stopped after "),
        "the last stdout line reports the run: {stdout:?}"
    );
    assert!(last.contains("3 requests"), "{last}");
    assert!(
        last.contains("1 miss /") && last.contains("2 hits"),
        "{last}"
    );
    // The port is free again.
    assert!(
        std::net::TcpStream::connect_timeout(&server.addr, Duration::from_secs(2)).is_err(),
        "nothing listens on {} any more",
        server.addr
    );
}

#[test]
fn a_client_that_hangs_up_mid_body_does_not_hurt_the_server() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    publish(&ws, "site@1.0.0", &tree, &[]);
    let server = Server::start(&ws, &["--threads", "2"]);
    for _ in 0..8 {
        let mut s = std::net::TcpStream::connect(server.addr).expect("connect");
        s.write_all(b"GET /assets/site/1.0.0/big/noise.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        let mut some = [0u8; 512];
        let _ = s.read(&mut some).expect("first bytes");
        drop(s);
    }
    let files = catalog_files(&ws, "site@1.0.0", &tree);
    let noise = files
        .iter()
        .find(|f| f.path == "big/noise.bin")
        .expect("noise");
    let url = server.url("/assets/site/1.0.0/big/noise.bin");
    check_body(noise, &get(&url, &[]), false, &url);
    assert_eq!(get(&server.url("/healthz"), &[]).status, 200);
}

#[test]
fn absolute_form_request_targets_are_served() {
    // RFC 9112 3.2.2: "a server MUST accept the absolute-form in requests"
    // (a client talking to the origin as if it were a proxy sends
    // `GET http://host/path HTTP/1.1`).
    let ws = Workspace::new();
    publish(&ws, "site@1.0.0", &versions_tree("1.0.0"), &[]);
    let server = Server::start(&ws, &[]);
    let target = format!("http://{}/assets/site/1.0.0/v.txt", server.addr);
    let r = raw_get(server.addr, "GET", &target, &[]);
    let body = String::from_utf8_lossy(&r.body()).into_owned();
    assert_eq!(r.status, 200, "GET {target} HTTP/1.1 answered {body}");
    assert_eq!(body, "1.0.0");
}

/// Which change of the catalog a server answers from, and how old it is:
/// every publish, tag change, rm and gc raises the generation by one, and
/// a dry run or a refused write does not.
#[test]
fn healthz_and_metrics_say_which_change_of_the_catalog_is_served() {
    let ws = Workspace::new();
    publish(&ws, "app@1.0.0", &versions_tree("1.0.0"), &[]);
    let server = Server::start(&ws, &[]);
    let health = || get(&server.url("/healthz"), &[]).json();
    let generation = || health()["catalog"]["generation"].as_u64();
    let first = health();
    assert_eq!(first["catalog"]["generation"], 1, "{first}");
    let changed = first["catalog"]["changed_at"].as_str().expect("changed_at");
    assert!(changed.ends_with('Z') && changed.len() == 20, "{changed}");
    assert!(first["catalog"]["age_secs"].as_u64() <= Some(60), "{first}");

    let mut want = 1;
    for change in [
        &["publish", "app@1.1.0", "v1", "--quiet"][..],
        &["tag", "add", "app@1.0.0", "stable"],
        &["rm", "app@1.1.0"],
        &["gc", "--keep", "1"],
    ] {
        if change[0] == "publish" {
            ws.write("v1/x.txt", "x\n");
        }
        ws.ok(change);
        want += 1;
        let seen = poll_until(STARTUP, || generation() == Some(want));
        assert!(seen.is_some(), "{change:?}: {}", health());
    }
    // Neither a dry run nor a refused publish is a change.
    ws.ok(&["publish", "app@2.0.0", "v1", "--dry-run", "--quiet"]);
    ws.fails(&["publish", "app@1.0.0", "v1"], 1);
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(generation(), Some(want));
    let metrics = get(&server.url("/metrics"), &[]).text();
    for line in [
        format!("ccc_catalog_generation {want}"),
        "ccc_catalog_state{state=\"current\"} 1".to_string(),
        "ccc_catalog_state{state=\"deleted\"} 0".to_string(),
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no `{line}` in\n{metrics}"
        );
    }
}

/// A server holds several connections to its catalog. If it ever gave up
/// the file's locks (a descriptor of the file closed while they are held
/// drops every lock of the process), another process closing its own
/// connection would take the catalog for unused and delete the log under
/// the server, which would then miss every later publish.
#[test]
fn another_process_closing_the_catalog_leaves_a_running_servers_log_alone() {
    let ws = Workspace::new();
    ws.write("v1/a.txt", "one\n");
    ws.publish("app@1.0.0", "v1", &[]);
    let server = Server::start(&ws, &[]);
    let url = |v: &str| format!("{}/assets/app/{v}/a.txt", server.base);
    // Past a few of the server's checks of its catalog file.
    std::thread::sleep(Duration::from_secs(1));
    let wal = ws.path().join("cdn.db-wal");
    assert!(wal.exists(), "the server's connections keep the log");
    // Another process reads and closes, as `sqlite3 cdn.db` would: the
    // system's SQLite, through Python's module.
    let read = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
             print(c.execute('SELECT count(*) FROM versions').fetchone()[0]); c.close()",
        )
        .arg(ws.db())
        .output()
        .expect("python3 runs");
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "1",
        "{read:?}"
    );
    assert!(wal.exists(), "another reader's close left the log in place");
    assert_eq!(get(&url("1.0.0"), &[]).status, 200);
    ws.write("v2/a.txt", "two\n");
    ws.publish("app@2.0.0", "v2", &[]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(&url("2.0.0"), &[]).status != 200 {
        assert!(Instant::now() < deadline, "the server never saw 2.0.0");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A miss the full cache would refuse, from a client that takes gzip but
/// not brotli, is read without its brotli stream and not offered; its
/// head and body are the ones the same request gets once the file is
/// cached whole, and a client that takes brotli still gets brotli.
#[test]
fn a_refused_miss_sends_what_a_cached_file_sends() {
    let ws = Workspace::new();
    let css = |seed: usize| -> Vec<u8> {
        (0..400)
            .flat_map(|i| format!(".c{i} {{ color: #{:06x} }}\n", (i + seed) * 7919).into_bytes())
            .collect()
    };
    let files = [("a.css".to_string(), css(1)), ("b.css".to_string(), css(2))];
    publish(&ws, "site@1.0.0", &files, &[]);
    let server = Server::start(&ws, &["--cache-capacity", "1"]);
    let gzip = |path: &str| {
        let r = raw_get(
            server.addr,
            "GET",
            &asset_path("site", "1.0.0", path),
            &["Accept-Encoding: gzip"],
        );
        assert_eq!(
            (r.status, r.header("content-encoding")),
            (200, Some("gzip")),
            "{r:?}"
        );
        let head: Vec<_> = r
            .headers
            .iter()
            .filter(|(n, _)| n != "date")
            .cloned()
            .collect();
        (head, r.body())
    };
    let hits = || server.stats()["cache"]["hits"].as_u64().expect("hits");
    let rejections = || {
        server.stats()["cache"]["rejections"]
            .as_u64()
            .expect("rejections")
    };
    for _ in 0..5 {
        gzip("a.css");
    }
    let first = gzip("b.css"); // looked up, then refused
    let before = rejections();
    let refused = gzip("b.css"); // through the file index: refused first
    assert_eq!(rejections(), before + 1, "{}", server.stats());
    assert_eq!(refused, first);
    let br = raw_get(
        server.addr,
        "GET",
        &asset_path("site", "1.0.0", "b.css"),
        &["Accept-Encoding: br, gzip"],
    );
    assert_eq!(br.header("content-encoding"), Some("br"), "{br:?}");
    // Asked for often enough, b.css is cached; its hit sends the same.
    for _ in 0..20 {
        let before = hits();
        let answer = gzip("b.css");
        if hits() > before {
            assert_eq!(
                answer, refused,
                "a hit's head and body against a refused miss's"
            );
            return;
        }
    }
    panic!("b.css was never cached: {}", server.stats());
}

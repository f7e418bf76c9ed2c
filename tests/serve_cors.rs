//! Cross-origin and security headers on every answer of a real
//! `ccc serve`, whatever its status and whoever built it (the workers or
//! ccc's refusals of heads), `OPTIONS`, and the content types of
//! front-end builds.

use crate::serve_util::{RawResp, Server, asset_path, get, raw, raw_get, request};
use crate::util::Workspace;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// What every response carries, exactly.
const EVERY_RESPONSE: [(&str, &str); 5] = [
    ("access-control-allow-origin", "*"),
    ("access-control-expose-headers", "*"),
    ("cross-origin-resource-policy", "cross-origin"),
    ("timing-allow-origin", "*"),
    ("x-content-type-options", "nosniff"),
];

const ORIGIN: &str = "Origin: https://evil.example";

#[track_caller]
fn check_headers(r: &RawResp, status: u16, what: &str) {
    assert_eq!(r.status, status, "{what}: {r:?}");
    for (name, value) in EVERY_RESPONSE {
        let got: Vec<&str> = r
            .headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(got, [value], "{what}: {name} in {r:?}");
    }
}

fn site(ws: &Workspace) {
    ws.write_tree(
        "site",
        &[
            ("app.js".into(), b"export const a = 1;\n".repeat(200)),
            ("logo.bin".into(), (0..=255u8).cycle().take(5000).collect()),
        ],
    );
    ws.publish("app@1.0.0", "site", &[]);
}

/// Reads one whole answer from `stream` (the server closes after it).
fn read_answer(mut stream: TcpStream) -> RawResp {
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    crate::serve_util::parse_raw(&all)
        .unwrap_or_else(|| panic!("no answer: {:?}", String::from_utf8_lossy(&all)))
}

fn send_raw(server: &Server, bytes: &[u8]) -> RawResp {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream.write_all(bytes).expect("send");
    read_answer(stream)
}

#[test]
fn every_status_class_carries_the_cross_origin_and_security_headers() {
    let ws = Workspace::new();
    site(&ws);
    // A body that fails its digest: the 500 path.
    let conn = ws.conn();
    let changed = conn
        .execute(
            "UPDATE blobs SET body = zeroblob(length(body)) WHERE id =
               (SELECT blob_id FROM assets WHERE path = 'logo.bin')",
            [],
        )
        .expect("tamper");
    assert_eq!(changed, 1);
    let server = Server::start(&ws, &[]);
    let at = |method: &str, target: &str, headers: &[&str]| {
        let mut all = vec![ORIGIN];
        all.extend_from_slice(headers);
        raw_get(server.addr, method, target, &all)
    };
    let asset = "/assets/app/1.0.0/app.js";
    let tag = at("GET", asset, &[])
        .header("etag")
        .expect("etag")
        .to_string();
    let if_none_match = format!("If-None-Match: {tag}");
    let long = format!("/assets/app/1.0.0/{}", "a".repeat(9000));
    let worker_answers: Vec<(&str, &str, Vec<&str>, u16)> = vec![
        ("GET", asset, vec![], 200),
        ("GET", asset, vec!["Accept-Encoding: gzip"], 200),
        ("HEAD", asset, vec![], 200),
        ("GET", "/assets/app/1.0.0/", vec![], 200),
        ("GET", "/_stats", vec![], 200),
        ("GET", "/metrics", vec![], 200),
        ("GET", "/healthz", vec![], 200),
        ("GET", asset, vec!["Range: bytes=0-9"], 206),
        (
            "OPTIONS",
            asset,
            vec!["Access-Control-Request-Method: GET"],
            204,
        ),
        ("GET", "/assets/app/latest/app.js", vec![], 302),
        ("GET", "/assets/app/1.0.0", vec![], 302),
        ("GET", asset, vec![&if_none_match], 304),
        ("GET", "/assets/app/1.0.0/%2e%2e/x", vec![], 400),
        ("GET", "/assets/app/^x/app.js", vec![], 400),
        ("GET", "/assets/app/1.0.0/nope.js", vec![], 404),
        ("GET", "/nope", vec![], 404),
        ("DELETE", asset, vec![], 405),
        ("GET", asset, vec!["Range: bytes=99999-"], 416),
        ("GET", "/assets/app/1.0.0/logo.bin", vec![], 500),
    ];
    for (method, target, headers, status) in &worker_answers {
        let r = at(method, target, headers);
        check_headers(&r, *status, &format!("{method} {target} {headers:?}"));
    }

    // ccc's refusals of heads hyper accepts: an HTTP/1.1 request without
    // Host (400), a request target (414) or a header line (431) over the
    // limits (the 503 past the connection cap has its own test). hyper's
    // own answers to heads it cannot parse carry only their status
    // (serve_limits).
    let refusals = [
        ("GET /healthz HTTP/1.1\r\n\r\n".to_string(), 400),
        (format!("GET {long} HTTP/1.1\r\nHost: x\r\n\r\n"), 414),
        (
            format!(
                "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
                "b".repeat(9000)
            ),
            431,
        ),
    ];
    for (head, status) in refusals {
        let r = send_raw(&server, head.as_bytes());
        check_headers(&r, status, &head[..head.len().min(40)]);
    }
    // Every status class was seen.
    let stats = server.stats();
    for status in [200, 204, 206, 302, 304, 400, 404, 405, 414, 416, 431, 500] {
        assert!(
            stats["by_status"][status.to_string()].as_u64() >= Some(1),
            "{status}: {stats}"
        );
    }
}

#[test]
fn a_connection_past_the_cap_is_refused_with_the_same_headers() {
    let ws = Workspace::new();
    site(&ws);
    // Responses in flight hold the cap: a client that takes nothing of a
    // body larger than the socket buffers.
    ws.write_tree(
        "big",
        &[("big.bin".into(), crate::util::Rng::new(3).bytes(16 << 20))],
    );
    ws.publish("big@1.0.0", "big", &["--level", "1"]);
    let server = Server::start(&ws, &["--max-connections", "2"]);
    let held: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).expect("connect");
            s.write_all(b"GET /assets/big/1.0.0/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
                .expect("a request");
            // Its answer has begun: the request holds its place.
            s.set_read_timeout(Some(Duration::from_secs(15)))
                .expect("timeout");
            s.read_exact(&mut [0; 12])
                .expect("the answer's first bytes");
            s
        })
        .collect();
    let refused = send_raw(&server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    check_headers(&refused, 503, "past the connection cap");
    drop(held);
}

#[test]
fn options_answers_204_on_any_target() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    for target in [
        "/assets/app/1.0.0/app.js",
        "/assets/app/latest/x",
        "/nope",
        "*",
        "/_stats",
    ] {
        // A browser's preflight.
        let r = raw_get(
            server.addr,
            "OPTIONS",
            target,
            &[
                ORIGIN,
                "Access-Control-Request-Method: GET",
                "Access-Control-Request-Headers: range,if-none-match,traceparent",
            ],
        );
        check_headers(&r, 204, target);
        assert_eq!(
            r.header("access-control-allow-methods"),
            Some("GET, HEAD, OPTIONS")
        );
        assert_eq!(
            r.header("access-control-allow-headers"),
            Some("range, if-none-match, traceparent")
        );
        assert_eq!(r.header("access-control-max-age"), Some("86400"));
        assert_eq!(r.header("vary"), Some("Access-Control-Request-Headers"));
        assert_eq!(
            r.header("content-length"),
            None,
            "204 has no Content-Length"
        );
        assert!(r.after_headers.is_empty(), "{r:?}");
        // A plain OPTIONS: what the resource allows.
        let plain = raw(server.addr, &format!("OPTIONS {target} HTTP/1.1"));
        check_headers(&plain, 204, target);
        assert_eq!(plain.header("allow"), Some("GET, HEAD, OPTIONS"));
        assert_eq!(
            plain.header("access-control-allow-headers"),
            Some("If-Modified-Since, If-None-Match, If-Range, Range")
        );
    }
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE"] {
        let r = request(method, &server.url("/assets/app/1.0.0/app.js"), &[]);
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"), "{method}");
    }
}

/// What front-end builds contain, and the type each is served with.
const TYPES: [(&str, &str); 38] = [
    ("index.js", "text/javascript; charset=utf-8"),
    ("esm/index.mjs", "text/javascript; charset=utf-8"),
    ("cjs/index.cjs", "text/javascript; charset=utf-8"),
    ("src/index.ts", "text/plain; charset=utf-8"),
    ("types/index.d.ts", "text/plain; charset=utf-8"),
    ("src/App.tsx", "text/plain; charset=utf-8"),
    ("src/mod.mts", "text/plain; charset=utf-8"),
    ("src/mod.cts", "text/plain; charset=utf-8"),
    ("types/mod.d.mts", "text/plain; charset=utf-8"),
    ("index.js.map", "application/json; charset=utf-8"),
    ("pkg/lib_bg.wasm", "application/wasm"),
    (
        "site.webmanifest",
        "application/manifest+json; charset=utf-8",
    ),
    ("fonts/a.woff", "font/woff"),
    ("fonts/a.woff2", "font/woff2"),
    ("fonts/a.ttf", "font/ttf"),
    ("fonts/a.otf", "font/otf"),
    ("package.json", "application/json; charset=utf-8"),
    ("logo.svg", "image/svg+xml; charset=utf-8"),
    ("img/a.avif", "image/avif"),
    ("img/a.webp", "image/webp"),
    ("img/a.png", "image/png"),
    ("README.md", "text/markdown; charset=utf-8"),
    ("index.html", "text/html; charset=utf-8"),
    ("style.css", "text/css; charset=utf-8"),
    // The text files packages carry without an extension.
    ("LICENSE", "text/plain; charset=utf-8"),
    ("LICENCE", "text/plain; charset=utf-8"),
    ("LICENSE-MIT", "text/plain; charset=utf-8"),
    ("README", "text/plain; charset=utf-8"),
    ("CHANGELOG", "text/plain; charset=utf-8"),
    ("CHANGES", "text/plain; charset=utf-8"),
    ("HISTORY", "text/plain; charset=utf-8"),
    ("AUTHORS", "text/plain; charset=utf-8"),
    ("CONTRIBUTING", "text/plain; charset=utf-8"),
    ("NOTICE", "text/plain; charset=utf-8"),
    ("COPYING", "text/plain; charset=utf-8"),
    ("docs/Authors", "text/plain; charset=utf-8"),
    ("Makefile", "application/octet-stream"),
    ("v1.2/data", "application/octet-stream"),
];

#[test]
fn content_types_of_front_end_builds() {
    let ws = Workspace::new();
    let files: Vec<(String, Vec<u8>)> = TYPES
        .iter()
        .map(|(path, _)| {
            (
                path.to_string(),
                format!("content of {path}\n").repeat(20).into_bytes(),
            )
        })
        .collect();
    ws.write_tree("build", &files);
    ws.publish("build@1.0.0", "build", &[]);
    let check = |server: &Server, what: &str| {
        for (path, expected) in TYPES {
            let r = get(&server.url(&asset_path("build", "1.0.0", path)), &[]);
            assert_eq!(r.status, 200, "{what} {path}");
            assert_eq!(r.header("content-type"), Some(expected), "{what} {path}");
        }
        let listing = get(&server.url("/assets/build/1.0.0/"), &[]).json();
        for file in listing["files"].as_array().expect("files") {
            let path = file["path"].as_str().expect("path");
            let expected = TYPES.iter().find(|(p, _)| *p == path).expect(path).1;
            assert_eq!(file["content_type"], expected, "{what} listing {path}");
        }
    };
    let server = Server::start(&ws, &[]);
    check(&server, "published now");
    drop(server);

    // A catalog published by an older ccc, which stored `.ts` as MPEG
    // video and fonts as `application/font-*`, is served right as it is.
    let rewritten = ws
        .conn()
        .execute(
            "UPDATE assets SET content_type = CASE
               WHEN path LIKE '%ts' THEN 'video/mp2t'
               ELSE 'application/font-sfnt' END
             WHERE path LIKE '%ts' OR path LIKE 'fonts/%'",
            [],
        )
        .expect("rewrite the stored types");
    assert_eq!(rewritten, 9);
    let server = Server::start(&ws, &[]);
    check(&server, "stored wrong");
    let ls = ws.json(&["ls", "build@1.0.0", "--json"]);
    let ts = ls["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"] == "types/index.d.ts")
        .expect("index.d.ts");
    assert_eq!(ts["content_type"], "text/plain; charset=utf-8", "{ls}");
}

//! `ccc importmap` and `GET /assets/PKG/VERSION/?importmap`: small
//! packages published into a temporary catalog, and the map checked
//! entry by entry: a version's own entry points (exports conditions,
//! subpath patterns), dependencies chosen by range (newest match first),
//! followed transitively into scopes, what cannot be resolved reported,
//! integrity equal to the bytes the server sends, and the server's map
//! equal to the command's.

use crate::serve_util::{Server, get, poll_until};
use crate::util::{Workspace, gunzip};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Publishes `files` (with `package.json` holding `manifest` plus the
/// name and version) as `package@version`.
fn publish(ws: &Workspace, package: &str, version: &str, manifest: Value, files: &[(&str, &str)]) {
    let dir = format!("src/{}-{version}", package.replace('/', "+"));
    let mut manifest = manifest;
    manifest["name"] = json!(package);
    manifest["version"] = json!(version);
    ws.write(&format!("{dir}/package.json"), manifest.to_string());
    for (path, text) in files {
        ws.write(&format!("{dir}/{path}"), text);
    }
    ws.publish(&format!("{package}@{version}"), &dir, &[]);
}

/// `ccc importmap ARGS --json`, whatever its exit code (0, or 1 with
/// unresolved specifiers).
fn generated(ws: &Workspace, args: &[&str], code: i32) -> Value {
    let mut all = vec!["importmap"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = ws.fails(&all, code);
    serde_json::from_slice(&out.stdout).expect("importmap --json")
}

#[test]
fn a_version_s_own_entries_follow_exports_conditions_and_patterns() {
    let ws = Workspace::new();
    publish(
        &ws,
        "lib",
        "1.0.0",
        json!({
            "exports": {
                ".": {"types": "./index.d.ts", "node": "./cjs/index.js",
                      "require": "./cjs/index.js", "default": "./esm/index.js"},
                "./feature/*": "./esm/feature/*",
                "./icons/*": {"import": "./esm/icons/*.js"},
                "./server": {"node": "./cjs/server.js"},
                "./package.json": "./package.json"
            },
            "main": "./cjs/index.js"
        }),
        &[
            ("esm/index.js", "export const lib = 1;\n"),
            ("cjs/index.js", "exports.lib = 1;\n"),
            ("cjs/server.js", "exports.server = 1;\n"),
            ("esm/feature/a.js", "export const a = 1;\n"),
            ("esm/icons/add.js", "export default 'add';\n"),
            ("esm/icons/cut.js", "export default 'cut';\n"),
        ],
    );
    let out = generated(&ws, &["lib@1.0.0"], 0);
    assert_eq!(
        out["importmap"],
        json!({"imports": {
            "lib": "/assets/lib/1.0.0/esm/index.js",
            "lib/feature/": "/assets/lib/1.0.0/esm/feature/",
            "lib/icons/add": "/assets/lib/1.0.0/esm/icons/add.js",
            "lib/icons/cut": "/assets/lib/1.0.0/esm/icons/cut.js",
            "lib/package.json": "/assets/lib/1.0.0/package.json"
        }}),
        "`./server` is only for Node: {out}"
    );
    assert_eq!(out["unresolved"], json!([]));

    // Without exports: `module` before `main`, and the whole version.
    publish(
        &ws,
        "old",
        "2.0.0",
        json!({"main": "old.js", "module": "es/index"}),
        &[
            ("old.js", "module.exports = 1;\n"),
            ("es/index.js", "export default 1;\n"),
        ],
    );
    let out = ws.ok(&["importmap", "old@latest", "--base", "https://cdn.example/"]);
    let map: Value = serde_json::from_slice(&out.stdout).expect("a map");
    assert_eq!(
        map,
        json!({"imports": {
            "old": "https://cdn.example/assets/old/2.0.0/es/index.js",
            "old/": "https://cdn.example/assets/old/2.0.0/"
        }})
    );
}

#[test]
fn dependencies_are_the_newest_version_in_range_followed_into_scopes() {
    let ws = Workspace::new();
    for version in ["1.0.0", "1.4.0", "1.5.0-beta.1", "2.0.0"] {
        publish(
            &ws,
            "shared",
            version,
            json!({"exports": {".": "./index.js", "./util.js": "./util.js"}}),
            &[
                ("index.js", &format!("export const v = '{version}';\n")),
                ("util.js", "export const u = 1;\n"),
            ],
        );
    }
    // widget needs shared 1.x; it imports shared through a file of its
    // own, and `tiny`, which nothing else imports.
    publish(
        &ws,
        "@ui/widget",
        "3.1.0",
        json!({"module": "w.js", "dependencies": {"shared": "^1.0.0", "tiny": "~0.1.0"}}),
        &[
            // As written, a browser would ask for `inner`: the map sends
            // it to inner.js.
            ("w.js", "export * from './inner';\nimport 'tiny';\n"),
            ("inner.js", "export { v } from 'shared';\n"),
            ("test/w.test.js", "import 'never-published';\n"),
        ],
    );
    publish(
        &ws,
        "tiny",
        "0.1.3",
        json!({}),
        &[("index.js", "export {};\n")],
    );
    publish(
        &ws,
        "tiny",
        "0.2.0",
        json!({}),
        &[("index.js", "export {};\n")],
    );
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"dependencies": {"shared": "^2.0.0 || ^1.0.0", "@ui/widget": "3.x"}}),
        &[(
            "js/main.js",
            "import { v } from 'shared';\nimport 'shared/util.js';\n\
             import '@ui/widget';\nconsole.log(v);\n",
        )],
    );
    let out = generated(&ws, &["app@1.0.0"], 0);
    assert_eq!(
        out["importmap"],
        json!({
            "imports": {
                "app/": "/assets/app/1.0.0/",
                "shared": "/assets/shared/2.0.0/index.js",
                "shared/util.js": "/assets/shared/2.0.0/util.js",
                "@ui/widget": "/assets/@ui/widget/3.1.0/w.js",
                "tiny": "/assets/tiny/0.1.3/index.js"
            },
            "scopes": {
                "/assets/@ui/widget/3.1.0/": {
                    "shared": "/assets/shared/1.4.0/index.js",
                    "/assets/@ui/widget/3.1.0/inner": "/assets/@ui/widget/3.1.0/inner.js"
                }
            }
        }),
        "newest in range, not the prerelease; a test file's import is not traced; \
         an import without its extension mapped to the file: {out}"
    );
    assert_eq!(
        out["dependencies"],
        json!([
            {"package": "@ui/widget", "version": "3.1.0"},
            {"package": "shared", "version": "1.4.0"},
            {"package": "shared", "version": "2.0.0"},
            {"package": "tiny", "version": "0.1.3"}
        ])
    );
}

#[test]
fn what_cannot_be_resolved_is_reported_and_the_map_still_written() {
    let ws = Workspace::new();
    publish(
        &ws,
        "dep",
        "1.0.0",
        json!({"exports": {".": "./i.js"}}),
        &[("i.js", "export {};\n")],
    );
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"dependencies": {"dep": "^1.0.0", "gone": "^1.0.0", "later": "^2.0.0"},
               "module": "main.js"}),
        &[(
            "main.js",
            "import 'dep';\nimport 'dep/private.js';\nimport 'gone';\nimport 'later';\n",
        )],
    );
    publish(
        &ws,
        "later",
        "1.9.0",
        json!({}),
        &[("index.js", "export {};\n")],
    );
    let out = ws.fails(&["importmap", "app@1.0.0"], 1);
    let map: Value = serde_json::from_slice(&out.stdout).expect("the map, written anyway");
    assert_eq!(map["imports"]["dep"], "/assets/dep/1.0.0/i.js");
    assert_eq!(
        map["imports"].as_object().map(|m| m.len()),
        Some(3),
        "{map}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "warning: unresolved: app@1.0.0 main.js: dep/private.js (^1.0.0): dep@1.0.0: its `exports` has no `./private.js`",
        "warning: unresolved: app@1.0.0 main.js: gone (^1.0.0): gone is not in the catalog",
        "later (^2.0.0): no version of later in the catalog satisfies ^2.0.0 (it has 1.9.0)",
        "3 specifiers left out of the map",
    ] {
        assert!(stderr.contains(needle), "{needle}\n{stderr}");
    }
    let out = generated(&ws, &["app@1.0.0"], 1);
    let specifiers: Vec<&str> = out["unresolved"]
        .as_array()
        .expect("unresolved")
        .iter()
        .map(|u| u["specifier"].as_str().expect("specifier"))
        .collect();
    assert_eq!(specifiers, ["dep/private.js", "gone", "later"]);
    assert_eq!(out["unresolved"][1]["range"], "^1.0.0");
    assert_eq!(out["unresolved"][1]["file"], "main.js");
}

#[test]
fn bad_input_is_named() {
    let ws = Workspace::new();
    ws.write("site/index.html", "<p>hi</p>\n");
    ws.publish("site@1.0.0", "site", &[]);
    let out = ws.fails(&["importmap", "site@1.0.0"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: site@1.0.0 has no import map: it has no package.json"),
        "{stderr}"
    );
    let out = ws.fails(&["importmap", "sight@1.0.0"], 1);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("package sight is not in the catalog"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for base in [
        "cdn.example.com",
        "ftp://cdn.example.com",
        "https://cdn.example.com/?v=1",
    ] {
        let out = ws.fails(&["importmap", "site@1.0.0", "--base", base], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("`{base}`")), "{stderr}");
    }
}

fn sri(bytes: &[u8]) -> String {
    format!("sha256-{}", STANDARD.encode(Sha256::digest(bytes)))
}

#[test]
fn integrity_is_what_the_server_sends_and_the_server_sends_the_same_map() {
    let ws = Workspace::new();
    // Big enough to be stored gzipped: integrity is of the decoded bytes.
    let big = format!("export const words = `{}`;\n", "lorem ipsum ".repeat(2000));
    publish(
        &ws,
        "dep",
        "1.0.0",
        json!({"exports": {".": "./index.js"}}),
        &[
            ("index.js", "export * from './words.js';\n"),
            ("words.js", &big),
        ],
    );
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"dependencies": {"dep": "1.0.0"}}),
        &[
            (
                "main.js",
                "import { words } from 'dep';\nconsole.log(words);\n",
            ),
            ("page.css", ""),
        ],
    );
    let cli = ws.ok(&["importmap", "app@1.0.0", "--integrity"]).stdout;
    let map: Value = serde_json::from_slice(&cli).expect("a map");
    let integrity = map["integrity"].as_object().expect("integrity");
    let urls: Vec<&String> = integrity.keys().collect();
    assert_eq!(
        urls,
        [
            "/assets/app/1.0.0/main.js",
            "/assets/dep/1.0.0/index.js",
            "/assets/dep/1.0.0/words.js"
        ],
        "every module, the one only a relative import reaches too"
    );
    let server = Server::start(&ws, &[]);
    let mut coded = false;
    for (url, value) in integrity {
        for encoding in ["identity", "gzip"] {
            let served = get(&server.url(url), &[("Accept-Encoding", encoding)]);
            assert_eq!(served.status, 200, "{url}");
            // Decoded, as a browser decodes a body before checking it.
            let body = match served.header("content-encoding") {
                Some("gzip") => gunzip(&served.body),
                _ => served.body.clone(),
            };
            assert_eq!(value, &sri(&body), "{url} ({encoding})");
        }
        coded |= get(&server.url(url), &[("Accept-Encoding", "gzip")])
            .header("content-encoding")
            .is_some();
    }

    assert!(coded, "words.js is sent gzipped");

    let served = get(&server.url("/assets/app/1.0.0/?importmap&integrity"), &[]);
    assert_eq!(served.status, 200, "{}", served.text());
    assert_eq!(served.must("content-type"), "application/importmap+json");
    assert_eq!(
        served.body, cli,
        "the server's map is the command's, byte for byte"
    );
    let plain = get(&server.url("/assets/app/1.0.0/?importmap"), &[]);
    assert_eq!(plain.body, ws.ok(&["importmap", "app@1.0.0"]).stdout);
    // It moves when a newer dependency is published: cached as aliases
    // are, and revalidated by its ETag.
    assert_eq!(plain.must("cache-control"), "public, max-age=60");
    let etag = plain.must("etag").to_string();
    let again = get(
        &server.url("/assets/app/1.0.0/?importmap"),
        &[("If-None-Match", &etag)],
    );
    assert_eq!(again.status, 304);
    // A range is sent to the exact version's map.
    let alias = get(&server.url("/assets/app/latest/?importmap"), &[]);
    assert_eq!(alias.status, 302);
    assert_eq!(alias.must("location"), "/assets/app/1.0.0/?importmap");
    let missing = get(&server.url("/assets/app/9.9.9/?importmap"), &[]);
    assert_eq!(missing.status, 404);
}

#[test]
fn a_dependency_published_without_its_references_is_read_now() {
    let ws = Workspace::new();
    publish(
        &ws,
        "leaf",
        "1.0.0",
        json!({}),
        &[("index.js", "export {};\n")],
    );
    ws.write(
        "src/mid/package.json",
        r#"{"name": "mid", "version": "1.0.0", "dependencies": {"leaf": "1"}}"#,
    );
    ws.write("src/mid/index.js", "export * from './lib.js';\n");
    ws.write("src/mid/lib.js", "import 'leaf';\n");
    ws.publish("mid@1.0.0", "src/mid", &["--no-check"]);
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"dependencies": {"mid": "^1.0.0"}}),
        &[("a.js", "import 'mid';\n")],
    );
    let out = generated(&ws, &["app@1.0.0"], 0);
    assert_eq!(
        out["importmap"]["imports"]["leaf"], "/assets/leaf/1.0.0/index.js",
        "{out}"
    );
}

/// The npm tarball `var` names (.ci/run packs them).
fn tarball(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var}: the path of an `npm pack` tarball"))
}

/// Changes one byte of the file at `path` of `package@version` in the
/// catalog, and the digests the server checks the stored body by, as
/// someone who can write the catalog could: the server then sends the
/// changed bytes. Its brotli stream goes, so every client gets them.
fn tamper(ws: &Workspace, package: &str, version: &str, path: &str, at: &[u8]) {
    use std::io::Write;
    let conn = ws.conn();
    let (id, body, encoding): (i64, Vec<u8>, String) = conn
        .query_row(
            "SELECT b.id, b.body, b.encoding FROM assets a
               JOIN versions v ON v.id = a.version_id JOIN packages p ON p.id = v.package_id
               JOIN blobs b ON b.id = a.blob_id
              WHERE p.name = ?1 AND v.version = ?2 AND a.path = ?3",
            [package, version, path],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the file's blob");
    let mut bytes = match encoding.as_str() {
        "gzip" => gunzip(&body),
        _ => body,
    };
    let offset = bytes
        .windows(at.len())
        .position(|w| w == at)
        .unwrap_or_else(|| panic!("{path} has no {:?}", String::from_utf8_lossy(at)));
    bytes[offset] ^= 0x20;
    let stored = match encoding.as_str() {
        "gzip" => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&bytes).expect("gzip");
            gz.finish().expect("gzip")
        }
        _ => bytes,
    };
    conn.execute(
        "UPDATE blobs SET body = ?1, stored_sha256 = ?2, stored_xxh3 = ?3 WHERE id = ?4",
        rusqlite::params![
            stored,
            Sha256::digest(&stored).to_vec(),
            ccc::testing::catalog::xxh3_digest(&stored).to_vec(),
            id
        ],
    )
    .expect("rewrite the blob");
    conn.execute("DELETE FROM brotli WHERE blob_id = ?1", [id])
        .expect("drop its brotli stream");
}

/// A page whose only scripts are `map` and a module importing `app`.
fn page_with(ws: &Workspace, map: &str) {
    ws.write(
        "page/index.html",
        format!(
            "<!doctype html><meta charset=utf-8><title>app</title><link rel=icon href=\"data:,\">\n\
             <script type=importmap>\n{map}</script>\n\
             <script type=module>import 'app';</script>\n"
        ),
    );
    ws.publish("page@1.0.0", "page", &[]);
}

#[test]
#[ignore = "needs Chromium and the npm tarballs of lodash-es, rxjs and tslib (CCC_TEST_LODASH_ES, CCC_TEST_RXJS, CCC_TEST_TSLIB); .ci/run provides them"]
fn chromium_runs_an_app_from_its_import_map_and_refuses_a_tampered_module() {
    let started = std::time::Instant::now();
    let ws = Workspace::new();
    for var in ["CCC_TEST_LODASH_ES", "CCC_TEST_RXJS", "CCC_TEST_TSLIB"] {
        ws.ok(&["publish", &tarball(var), "--quiet"]);
    }
    ws.write(
        "app/package.json",
        r#"{"name": "app", "version": "1.0.0", "module": "js/main.js",
            "dependencies": {"lodash-es": "^4.17.21", "rxjs": "^7.8.1"}}"#,
    );
    ws.write(
        "app/js/main.js",
        "import debounce from 'lodash-es/debounce.js';\n\
         import { kebabCase } from 'lodash-es';\n\
         import { of, firstValueFrom } from 'rxjs';\n\
         import { map, toArray } from 'rxjs/operators';\n\
         const doubled = await firstValueFrom(of(1, 2, 3).pipe(map((n) => n * 2), toArray()));\n\
         window.result = `${kebabCase('Loaded From CCC')} ${doubled} ${typeof debounce}`;\n",
    );
    ws.publish("app@1.0.0", "app", &[]);
    ws.ok(&["check", "app@1.0.0"]);
    let map = ws.ok(&["importmap", "app@1.0.0", "--integrity"]).stdout;
    let map = String::from_utf8(map).expect("UTF-8");
    let parsed: Value = serde_json::from_str(&map).expect("a map");
    assert_eq!(
        parsed["imports"]["tslib"], "/assets/tslib/2.8.1/tslib.es6.mjs",
        "rxjs's own dependency, for its esm5 build"
    );
    let debounce = "/assets/lodash-es/4.17.21/debounce.js";
    let pinned = parsed["integrity"][debounce]
        .as_str()
        .expect("debounce.js pinned");
    page_with(&ws, &map);

    let run = |browser: &mut crate::chromium::Browser, server: &Server| {
        let reports = browser.goto(&server.url("/assets/page/1.0.0/index.html"));
        let mut result = Value::Null;
        poll_until(Duration::from_secs(20), || {
            result = browser.eval("window.result || null");
            !result.is_null()
        });
        // What the page said after it ran, too.
        browser.drain(Duration::from_millis(300));
        (result, [reports, browser.reports()].concat())
    };

    let server = Server::start(&ws, &[]);
    let mut browser = crate::chromium::Browser::launch();
    let (result, reports) = run(&mut browser, &server);
    let problems: Vec<_> = reports
        .iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception" | "warning"))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(result, "loaded-from-ccc 2,4,6 function");
    drop(browser);
    drop(server);

    // One byte of debounce.js changed in the catalog: the server sends
    // it, the browser (a fresh one, no cached copy) refuses it.
    tamper(&ws, "lodash-es", "4.17.21", "debounce.js", b"Error message");
    let server = Server::start(&ws, &[]);
    let served = get(&server.url(debounce), &[]);
    assert_eq!(served.status, 200, "the server sends the changed bytes");
    assert_ne!(sri(&served.body), pinned);
    let mut browser = crate::chromium::Browser::launch();
    browser.goto(&server.url("/assets/page/1.0.0/index.html"));
    let refused = |r: &crate::chromium::Report| {
        r.text.contains("integrity") && r.text.contains("debounce.js")
    };
    poll_until(Duration::from_secs(20), || {
        browser.drain(Duration::from_millis(100));
        browser.reports().iter().any(refused)
    });
    let reports = browser.reports();
    let refusal = reports.iter().find(|r| refused(r));
    assert!(
        refusal.is_some(),
        "no integrity failure for debounce.js: {reports:?}"
    );
    println!("refused: {refusal:?}");
    let result = browser.eval("window.result || null");
    assert!(
        result.is_null(),
        "the app ran on a tampered module: {result}"
    );
    println!(
        "importmap in chromium: {} entries pinned, run and refusal in {:.1} s",
        parsed["integrity"].as_object().map_or(0, |m| m.len()),
        started.elapsed().as_secs_f64()
    );
}

/// A stand-in npm registry on a local port: each package document of
/// `documents` at `/NAME` (a scope's `/` as `%2f`, as npm asks), 404 for
/// anything else. Returns its URL; it serves until the test ends.
fn registry(documents: Vec<(&'static str, Value)>) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            // The rest of the head.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/");
            let name = path.trim_start_matches('/').replace("%2f", "/");
            let (status, body) = match documents.iter().find(|(n, _)| *n == name) {
                Some((_, document)) => ("200 OK", document.to_string()),
                None => ("404 Not Found", "{\"error\":\"Not found\"}".to_string()),
            };
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// An abbreviated package document, as the registry sends npm: one
/// version, its dependencies and peers, `latest` on it.
fn document(name: &str, version: &str, dependencies: Value, peers: Value) -> Value {
    json!({
        "name": name,
        "dist-tags": {"latest": version},
        "versions": {version: {
            "name": name,
            "version": version,
            "dependencies": dependencies,
            "peerDependencies": peers,
        }}
    })
}

/// The map lacks react-dom and a private package: `ccc importmap` lists
/// them and, as the registry says, everything below react-dom (scheduler,
/// loose-envify, js-tokens) at once, each with who wants it, and the
/// `npm pack` line for them all; react, in the catalog but CommonJS, is
/// left out of the map with the ES module builds to use instead, and
/// `check` and publish say the same of react itself. `--offline` lists
/// only what the map itself lacks.
#[test]
fn the_whole_lacking_tree_is_listed_at_once_and_commonjs_is_named() {
    let ws = Workspace::new();
    let cjs = "'use strict';\nmodule.exports = require('./cjs/react.production.min.js');\n";
    ws.write(
        "react/package.json",
        r#"{"name": "react", "version": "18.3.1", "main": "index.js"}"#,
    );
    ws.write("react/index.js", cjs);
    ws.write(
        "react/cjs/react.production.min.js",
        "exports.createElement = function () {};\n",
    );
    let out = ws.ok(&["publish", "react@18.3.1", "react"]);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary
            .contains("note: its entry point index.js is CommonJS, which a browser cannot import")
            && summary.contains("preact/compat"),
        "{summary}"
    );
    let checked = ws.json(&["check", "react@18.3.1", "--json"]);
    assert_eq!(checked["commonjs_entry"]["file"], "index.js", "{checked}");
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"module": "main.js",
               "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1", "@acme/ui": "^2.0.0"}}),
        &[(
            "main.js",
            "import React from 'react';\nimport { createRoot } from 'react-dom/client';\n\
             import '@acme/ui';\n",
        )],
    );
    let url = registry(vec![
        (
            "react-dom",
            document(
                "react-dom",
                "18.3.1",
                json!({"loose-envify": "^1.1.0", "scheduler": "^0.23.2"}),
                json!({"react": "^18.3.1"}),
            ),
        ),
        (
            "scheduler",
            document(
                "scheduler",
                "0.23.2",
                json!({"loose-envify": "^1.1.0"}),
                json!({}),
            ),
        ),
        (
            "loose-envify",
            document(
                "loose-envify",
                "1.4.0",
                json!({"js-tokens": "^3.0.0 || ^4.0.0"}),
                json!({}),
            ),
        ),
        (
            "js-tokens",
            document("js-tokens", "4.0.0", json!({}), json!({})),
        ),
    ]);
    let out = ws
        .ccc()
        .env_remove("CCC_OFFLINE")
        .args(["importmap", "app@1.0.0", "--json", "--registry", &url])
        .output()
        .expect("run importmap");
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("importmap --json");
    let lacking: Vec<(String, Value)> = report["lacking"]
        .as_array()
        .expect("lacking")
        .iter()
        .map(|l| {
            (
                l["package"].as_str().unwrap_or_default().to_string(),
                l["version"].clone(),
            )
        })
        .collect();
    let at = |name: &str, version: Option<&str>| {
        (name.to_string(), version.map_or(Value::Null, Value::from))
    };
    assert_eq!(
        lacking,
        vec![
            at("@acme/ui", None),
            at("react-dom", Some("18.3.1")),
            at("loose-envify", Some("1.4.0")),
            at("scheduler", Some("0.23.2")),
            at("js-tokens", Some("4.0.0")),
        ],
        "react is in the catalog: not lacking; {report}"
    );
    assert_eq!(
        report["lacking"][2]["wanted_by"],
        json!([{"by": "react-dom@18.3.1", "range": "^1.1.0"}, {"by": "scheduler@0.23.2", "range": "^1.1.0"}])
    );
    let react = report["unresolved"]
        .as_array()
        .and_then(|all| all.iter().find(|u| u["specifier"] == "react"))
        .expect("react is left out");
    assert!(
        react["reason"].as_str().is_some_and(|r| r
            .contains("react@18.3.1's index.js is CommonJS, which a browser cannot import")
            && r.contains("preact/compat")),
        "{react}"
    );
    assert_eq!(
        report["importmap"]["imports"].get("react"),
        None,
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: npm registry: @acme/ui is not in the registry either"),
        "{stderr}"
    );

    let out = ws
        .ccc()
        .env_remove("CCC_OFFLINE")
        .args(["importmap", "app@1.0.0", "--registry", &url])
        .output()
        .expect("run importmap");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "  loose-envify@1.4.0  for react-dom@18.3.1 (^1.1.0), scheduler@0.23.2 (^1.1.0)"
        ) && stderr.contains(
            "npm pack --silent '@acme/ui@^2.0.0' react-dom@18.3.1 loose-envify@1.4.0 \
                 scheduler@0.23.2 js-tokens@4.0.0 | xargs -n1 ccc --db"
        ),
        "{stderr}"
    );
    // Offline (as every other test runs): the map's own lacks, by range.
    let out = ws.fails(&["importmap", "app@1.0.0"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--offline")
            && stderr.contains("npm pack --silent '@acme/ui@^2.0.0' 'react-dom@^18.3.1' |"),
        "{stderr}"
    );
    assert!(!stderr.contains("scheduler"), "{stderr}");
    // A registry that is not there is said so, once (it is not asked
    // again, so none waits its timeout); the map's lacks are listed.
    let out = ws
        .ccc()
        .env_remove("CCC_OFFLINE")
        .args([
            "importmap",
            "app@1.0.0",
            "--registry",
            "http://127.0.0.1:9/",
        ])
        .output()
        .expect("run importmap");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: npm registry: http://127.0.0.1:9/@acme%2fui")
            && stderr.contains("the registry is not asked again")
            && stderr.matches("warning: npm registry").count() == 1
            && stderr.contains("'react-dom@^18.3.1'"),
        "{stderr}"
    );
    let out = ws.fails(&["importmap", "app@1.0.0", "--registry", "ftp://x"], 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not an http:// or https:// URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The real npm registry and react 18: an app that imports react-dom,
/// with only react published, gets the whole tree react-dom needs listed
/// at once (scheduler, loose-envify, js-tokens), and running the `npm
/// pack` line `ccc importmap` prints fetches and publishes every one of
/// them, after which nothing lacks; react and react-dom are still left
/// out of the map, as CommonJS a browser cannot import. Needs npm, the
/// registry and `CCC_TEST_REACT` (`npm pack react@18.3.1`).
#[test]
#[ignore = "needs the npm registry, npm and CCC_TEST_REACT; .ci/run provides them"]
fn registry_lists_react_dom_s_whole_tree_and_its_npm_pack_line_publishes_it() {
    let ws = Workspace::new();
    ws.ok(&["publish", &tarball("CCC_TEST_REACT"), "--quiet"]);
    publish(
        &ws,
        "app",
        "1.0.0",
        json!({"module": "main.js", "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1"}}),
        &[(
            "main.js",
            "import React from 'react';\nimport { createRoot } from 'react-dom/client';\n",
        )],
    );
    let importmap = |ws: &Workspace| {
        ws.ccc()
            .env_remove("CCC_OFFLINE")
            .args(["importmap", "app@1.0.0", "--json"])
            .output()
            .expect("run importmap")
    };
    let out = importmap(&ws);
    let report: Value = serde_json::from_slice(&out.stdout).expect("importmap --json");
    let lacking: Vec<&str> = report["lacking"]
        .as_array()
        .expect("lacking")
        .iter()
        .filter_map(|l| l["package"].as_str())
        .collect();
    for needed in ["react-dom", "scheduler", "loose-envify", "js-tokens"] {
        assert!(lacking.contains(&needed), "{needed}: {report}");
    }
    assert!(!lacking.contains(&"react"), "{report}");
    let out = ws
        .ccc()
        .env_remove("CCC_OFFLINE")
        .args(["importmap", "app@1.0.0"])
        .output()
        .expect("run importmap");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("npm pack "))
        .unwrap_or_else(|| panic!("no npm pack line in\n{stderr}"))
        .trim()
        .to_string();
    // As a user runs it: in a folder of their own, ccc on the PATH.
    let bin = crate::util::ccc_path();
    let path = format!(
        "{}:{}",
        bin.parent().expect("ccc's folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    ws.write("fetch/.keep", "");
    let status = std::process::Command::new("sh")
        .args(["-c", &line])
        .current_dir(ws.path().join("fetch"))
        .env("PATH", path)
        .env_remove("CCC_DB_PATH")
        .status()
        .expect("run the npm pack line");
    assert!(status.success(), "{line}");
    let out = importmap(&ws);
    let report: Value = serde_json::from_slice(&out.stdout).expect("importmap --json");
    assert_eq!(report["lacking"], json!([]), "{report}");
    let reasons: Vec<&str> = report["unresolved"]
        .as_array()
        .expect("unresolved")
        .iter()
        .filter_map(|u| u["reason"].as_str())
        .collect();
    assert_eq!(reasons.len(), 2, "{report}");
    assert!(
        reasons
            .iter()
            .all(|r| r.contains("is CommonJS, which a browser cannot import")),
        "{report}"
    );
}

/// The build of `app@1.0.0` for `publish --importmap`: a page that loads
/// `main.js` as a module (long enough to be stored gzipped), a page with
/// no module, and `main.js` importing `lib`.
fn app_build(ws: &Workspace, index: &str) {
    ws.write(
        "app/package.json",
        r#"{"name": "app", "version": "1.0.0", "module": "main.js",
            "dependencies": {"lib": "^1.0.0"}}"#,
    );
    ws.write("app/index.html", index);
    ws.write(
        "app/about.html",
        "<!doctype html><title>about</title><script src=\"./classic.js\"></script>\n",
    );
    ws.write("app/classic.js", "document.title += '!';\n");
    ws.write(
        "app/main.js",
        "import { lib } from 'lib';\nwindow.result = `loaded ${lib}`;\n",
    );
}

/// A page that loads `main.js` as a module, after a stylesheet.
fn module_page() -> String {
    format!(
        "<!doctype html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  \
         <link rel=\"stylesheet\" href=\"data:text/css,\">\n  \
         <script type=\"module\" src=\"./main.js\"></script>\n</head>\n<body>\n<p>{}</p>\n\
         </body>\n</html>\n",
        "Every word of this page is here to make it worth gzipping. ".repeat(40)
    )
}

/// The JSON of the `<script type="importmap">` of `page`.
fn inline_map(page: &str) -> Value {
    let start = page
        .find("<script type=\"importmap\">")
        .unwrap_or_else(|| panic!("no import map in {page}"))
        + "<script type=\"importmap\">".len();
    let end = start + page[start..].find("</script>").expect("the map's end");
    serde_json::from_str(&page[start..end]).expect("the map is JSON")
}

#[test]
fn publish_writes_the_import_map_into_the_pages_that_load_modules() {
    let ws = Workspace::new();
    publish(
        &ws,
        "lib",
        "1.0.0",
        json!({"module": "index.js"}),
        &[("index.js", "export const lib = 'lib 1.0.0';\n")],
    );
    let original = module_page();
    app_build(&ws, &original);
    let blobs_before = ws.blob_totals().0;
    let report = ws.publish_json("app@1.0.0", "app", &["--importmap", "--integrity"]);
    assert_eq!(
        report["importmap"]["pages"],
        json!(["index.html"]),
        "{report}"
    );
    assert_eq!(report["importmap"]["unresolved"], json!([]), "{report}");

    // The page holds the map `ccc importmap` prints, before its module.
    let page = String::from_utf8(ws.cat("app@1.0.0/index.html")).expect("UTF-8");
    let cli: Value =
        serde_json::from_slice(&ws.ok(&["importmap", "app@1.0.0", "--integrity"]).stdout)
            .expect("a map");
    let map = inline_map(&page);
    assert_eq!(map, cli);
    assert_eq!(map["imports"]["lib"], "/assets/lib/1.0.0/index.js");
    assert_eq!(report["importmap"]["importmap"], cli, "{report}");
    let lib_bytes = ws.cat("lib@1.0.0/index.js");
    assert_eq!(
        map["integrity"]["/assets/lib/1.0.0/index.js"],
        sri(&lib_bytes)
    );
    assert_eq!(
        page,
        original.replace(
            "  <script type=\"module\"",
            &format!(
                "  <script type=\"importmap\">{}</script>\n  <script type=\"module\"",
                serde_json::to_string(&cli).expect("JSON")
            )
        ),
        "everything else is as it was"
    );
    // A page with no module, and every other file, is as published.
    for file in ["about.html", "main.js", "classic.js"] {
        assert_eq!(
            ws.cat(&format!("app@1.0.0/{file}")),
            std::fs::read(ws.path().join("app").join(file)).expect("the build's file"),
            "{file}"
        );
    }

    // Sizes and digests are the new page's, everywhere they are kept.
    let files = ws.files("app@1.0.0");
    let index = files
        .iter()
        .find(|f| f["path"] == "index.html")
        .expect("index.html");
    assert_eq!(index["raw_bytes"], page.len() as u64, "{index}");
    assert_eq!(
        index["sha256"],
        crate::util::sha256_hex(page.as_bytes()),
        "{index}"
    );
    let raw: u64 = files.iter().map(|f| f["raw_bytes"].as_u64().unwrap()).sum();
    let stored: u64 = files
        .iter()
        .map(|f| f["stored_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(report["raw_bytes"], raw, "{report}");
    assert_eq!(report["stored_bytes"], stored, "{report}");
    let groups: u64 = ["new_content", "already_stored", "repeated_in_version"]
        .iter()
        .map(|g| report[g]["raw_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(groups, raw, "the groups add up to the version: {report}");
    let versions = ws.json(&["ls", "app", "--json"]);
    assert_eq!(versions[0]["raw_bytes"], raw, "{versions}");
    assert_eq!(versions[0]["stored_bytes"], stored, "{versions}");
    ws.ok(&["verify"]);
    // The page as published had no other blob left behind: one per file.
    assert_eq!(ws.blob_totals().0, blobs_before + 5);
    // The references kept are the new page's: the map's URLs among them.
    ws.ok(&["check", "app@1.0.0"]);
    let inspected = ws.json(&["inspect", "app@1.0.0/index.html", "--json"]);
    let text = inspected.to_string();
    assert!(
        text.contains("/assets/lib/1.0.0/index.js") && text.contains("main.js"),
        "{inspected}"
    );

    // Served with the map; its ETag is the new page's.
    let server = Server::start(&ws, &[]);
    let served = get(&server.url("/assets/app/1.0.0/index.html"), &[]);
    assert_eq!(served.status, 200);
    let body = match served.header("content-encoding") {
        Some("gzip") => gunzip(&served.body),
        _ => served.body.clone(),
    };
    assert_eq!(body, page.as_bytes());
    let etag = served.header("etag").expect("an ETag");
    assert!(
        etag.contains(&crate::util::sha256_hex(page.as_bytes())),
        "{etag}"
    );
    drop(server);

    // Published again, the same map: its page is the one stored already,
    // and nothing is left over.
    let blobs = ws.blob_totals();
    let again = ws.publish_json(
        "app@1.0.0",
        "app",
        &["--importmap", "--integrity", "--force"],
    );
    assert_eq!(again["new_content"]["file_count"], 0, "{again}");
    assert_eq!(ws.blob_totals(), blobs);
    assert_eq!(ws.cat("app@1.0.0/index.html"), page.as_bytes());
    ws.ok(&["verify"]);
}

#[test]
fn publish_importmap_refuses_what_it_cannot_write_and_changes_nothing() {
    let ws = Workspace::new();
    publish(
        &ws,
        "lib",
        "1.0.0",
        json!({"module": "index.js"}),
        &[("index.js", "export const lib = 1;\n")],
    );
    // A page with a map of its own: refused, naming the page.
    app_build(
        &ws,
        "<!doctype html>\n<script type=\"importmap\">{\"imports\": {}}</script>\n\
         <script type=\"module\" src=\"./main.js\"></script>\n",
    );
    ws.publish_fails(
        &["publish", "app@1.0.0", "app", "--importmap"],
        &[
            "app@1.0.0 was not published",
            "index.html has an import map of its own (line 2)",
        ],
    );
    // Without --importmap, that page is published as it is.
    ws.publish("app@1.0.0", "app", &["--dry-run"]);

    // A specifier nothing satisfies: a warning, the map written without
    // it; with --strict, refused.
    app_build(&ws, &module_page());
    ws.write(
        "app/main.js",
        "import { lib } from 'lib';\nimport pad from 'left-pad';\n",
    );
    ws.publish_fails(
        &["publish", "app@1.0.0", "app", "--importmap", "--strict"],
        &[
            "app@1.0.0 was not published",
            "1 specifier is left out of its import map (--strict)",
            "left-pad",
        ],
    );
    let out = ws.ok(&["publish", "app@1.0.0", "app", "--importmap"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: unresolved: app@1.0.0 main.js: left-pad"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("import map: written into index.html"),
        "{stdout}"
    );
    let page = String::from_utf8(ws.cat("app@1.0.0/index.html")).expect("UTF-8");
    assert_eq!(
        inline_map(&page)["imports"]["lib"],
        "/assets/lib/1.0.0/index.js"
    );
    ws.ok(&["verify"]);

    // Flags that only mean something with --importmap, and --to.
    ws.fails(&["publish", "app@2.0.0", "app", "--integrity"], 2);
    let out = ws.fails(
        &[
            "publish",
            "app@2.0.0",
            "app",
            "--importmap",
            "--to",
            "http://127.0.0.1:9",
        ],
        2,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--importmap"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

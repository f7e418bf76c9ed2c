//! The browse UI end to end: a browser's `Accept` gets HTML pages for
//! `/assets/`, a package and a version, everyone else the JSON as before;
//! hostile file names stay text and their links reach the files; and, in a
//! real headless Chromium (`in_chromium`, ignored without it), the pages
//! load without a console error, every link resolves, the copy button puts
//! the integrity on the clipboard, and screenshots are saved.

use crate::chromium::{self, Browser};
use crate::serve_util::{Server, agent, asset_path, get, head, request_with};
use crate::util::{Workspace, gunzip};
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What Chromium sends when it navigates.
const BROWSER: (&str, &str) = (
    "Accept",
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
);

/// File names a hostile publisher could choose: markup, quotes, `&`,
/// spaces, `%`, `?`, `#`, a scheme look-alike, unicode.
fn hostile_tree() -> Vec<(String, Vec<u8>)> {
    [
        "<script>alert(1)</script>.js",
        "\"><img src=x onerror=alert(1)>.css",
        "it's & \"quoted\".txt",
        "a&b=c&amp;d.txt",
        "with space/100% sure.txt",
        "q?x=1#frag.js",
        "javascript:alert(1).js",
        "日本語/файл ✓.json",
        "index.html",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| {
        (
            name.to_string(),
            format!("file {i}: {name}\n").repeat(20).into_bytes(),
        )
    })
    .collect()
}

/// `sha256-<base64>` of `bytes`, computed here, not by ccc.
fn sri(bytes: &[u8]) -> String {
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(bytes))
    )
}

/// The values of every `href="..."` in `page`, entities decoded.
fn hrefs(page: &str) -> Vec<String> {
    page.match_indices(" href=\"")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            unescape(&rest[..rest.find('"').expect("closing quote")])
        })
        .filter(|h| h != "data:,")
        .collect()
}

fn decode(url: &str) -> String {
    percent_encoding::percent_decode_str(url)
        .decode_utf8()
        .expect("UTF-8")
        .into_owned()
}

/// HTML-escapes `& < > " '`, the way the pages must show names.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A catalog with `app@1.0.0` (dist-tag `stable`), `app@1.1.0` (`latest`)
/// and `@scope/lib@0.1.0`.
fn catalog() -> Workspace {
    let ws = Workspace::new();
    ws.write_tree("site", &hostile_tree());
    ws.write("lib/index.js", "export const lib = 1;\n".repeat(50));
    ws.publish("app@1.0.0", "site", &[]);
    ws.publish("app@1.1.0", "site", &[]);
    ws.publish("@scope/lib@0.1.0", "lib", &[]);
    ws.ok(&["tag", "add", "app@1.0.0", "stable"]);
    ws
}

#[test]
fn browsers_get_pages_and_everyone_else_json() {
    let ws = catalog();
    let server = Server::start(&ws, &[]);
    for path in ["/assets/", "/assets/app/", "/assets/app/1.0.0/"] {
        let url = server.url(path);
        let page = get(&url, &[BROWSER]);
        assert_eq!(page.status, 200, "{path}: {page:?}");
        assert_eq!(page.must("content-type"), "text/html; charset=utf-8");
        assert_eq!(page.must("vary"), "Accept, Accept-Encoding", "{path}");
        assert!(
            page.must("content-security-policy")
                .starts_with("default-src 'none'; style-src 'sha256-"),
            "{path}"
        );
        assert!(page.text().starts_with("<!doctype html>"), "{path}");
        assert_eq!(page.must("access-control-allow-origin"), "*", "{path}");
        // Gzipped for a browser that takes it; HEAD has the same length.
        let gz = get(&url, &[BROWSER, ("Accept-Encoding", "gzip, deflate, br")]);
        assert_eq!(gz.must("content-encoding"), "gzip", "{path}");
        assert_eq!(gunzip(&gz.body), page.body, "{path}");
        assert!(gz.body.len() < page.body.len(), "{path}");
        let h = head(&url, &[BROWSER]);
        assert_eq!(h.must("content-length"), page.body.len().to_string());
        assert!(h.body.is_empty());
        // JSON, as before, for everything that does not prefer HTML.
        for accept in [
            None,
            Some("*/*"),
            Some("application/json"),
            Some("text/html;q=0.5, */*"),
        ] {
            let headers: Vec<(&str, &str)> = accept.map(|a| ("Accept", a)).into_iter().collect();
            let r = get(&url, &headers);
            assert_eq!(r.must("vary"), "Accept", "{path} {accept:?}");
            assert!(r.header("content-security-policy").is_none());
            assert_eq!(r.status, 200, "{path} {accept:?}");
            assert_eq!(r.must("content-type"), "application/json");
            r.json();
        }
    }

    // The index: every package, the latest version linked, as `ccc ls`.
    let index = get(&server.url("/assets/"), &[]).json();
    assert_eq!(index, ws.json(&["ls", "--json"]));
    let page = get(&server.url("/assets/"), &[BROWSER]).text();
    for link in [
        "/assets/app/",
        "/assets/app/1.1.0/",
        "/assets/@scope/lib/",
        "/assets/@scope/lib/0.1.0/",
    ] {
        assert!(hrefs(&page).contains(&link.to_string()), "{link} in {page}");
    }
    // A package: its versions newest first, each with its dist-tags, as
    // the JSON has them.
    let json = get(&server.url("/assets/app/"), &[]).json();
    assert_eq!(json["versions"][0]["tags"], serde_json::json!(["latest"]));
    assert_eq!(json["versions"][1]["tags"], serde_json::json!(["stable"]));
    let page = get(&server.url("/assets/app/"), &[BROWSER]).text();
    let newer = page.find(">1.1.0</a>").expect("1.1.0 listed");
    let older = page.find(">1.0.0</a>").expect("1.0.0 listed");
    assert!(newer < older);
    let chip = |tag: &str| format!("<span class=\"tag\">{tag}</span>");
    assert!(page[newer..older].contains(&chip("latest")), "{page}");
    assert!(page[older..].contains(&chip("stable")), "{page}");
    assert!(!page[older..].contains(&chip("latest")), "{page}");
    // One page of the versions: the count is the package's, the page says
    // which rows it shows and links to the next ones.
    let page = get(&server.url("/assets/app/?limit=1"), &[BROWSER]).text();
    assert!(page.contains(">1.1.0</a>") && !page.contains(">1.0.0</a>"));
    assert!(page.contains("2 versions · 1–1 shown"), "{page}");
    assert!(hrefs(&page).contains(&"?limit=1&offset=1".to_string()));
    let page = get(&server.url("/assets/app/?limit=1&offset=1"), &[BROWSER]).text();
    assert!(page.contains(">1.0.0</a>") && !page.contains(">1.1.0</a>"));
    assert!(page.contains("2 versions · 2–2 shown"), "{page}");
    assert!(!page.contains(">next</a>"), "the last page: {page}");
    // A version's page names its tags beside the heading; they move.
    let h1 = |page: &str| {
        let start = page.find("<h1>").expect("a heading");
        page[start..start + page[start..].find("</h1>").expect("its end")].to_string()
    };
    let page = get(&server.url("/assets/app/1.0.0/"), &[BROWSER]).text();
    assert_eq!(h1(&page), format!("<h1>app@1.0.0 {}", chip("stable")));
    ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    let page = get(&server.url("/assets/app/1.0.0/"), &[BROWSER]).text();
    assert_eq!(
        h1(&page),
        format!("<h1>app@1.0.0 {}{}", chip("latest"), chip("stable"))
    );
    ws.ok(&["tag", "rm", "app", "latest"]);
    // A version: each file's integrity as a browser computes it.
    let page = get(&server.url("/assets/app/1.0.0/"), &[BROWSER]).text();
    for (name, bytes) in hostile_tree() {
        assert!(page.contains(&sri(&bytes)), "{name}'s integrity");
    }
    // Aliases redirect to the exact version's page.
    let r = get(&server.url("/assets/app/%5E1/"), &[BROWSER]);
    assert_eq!((r.status, r.must("location")), (302, "/assets/app/1.1.0/"));

    // A miss is a page for a browser, JSON for the rest.
    for (path, says) in [
        ("/assets/nope/", "package `nope` is not in the catalog"),
        ("/assets/app/9.9.9/", "app has no version 9.9.9"),
    ] {
        let r = get(&server.url(path), &[BROWSER]);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.must("content-type"), "text/html; charset=utf-8");
        assert!(r.text().contains(says), "{path}: {}", r.text());
        let r = get(&server.url(path), &[]);
        assert_eq!((r.status, r.json()["error"].as_str()), (404, Some(says)));
    }
}

#[test]
fn hostile_names_stay_text_and_link_to_their_files() {
    let ws = catalog();
    let server = Server::start(&ws, &[]);
    let page = get(&server.url("/assets/app/1.0.0/"), &[BROWSER]).text();
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(!page.contains("<img"), "{page}");
    let links = hrefs(&page);
    let client = agent();
    for (name, bytes) in hostile_tree() {
        let want = decode(&asset_path("app", "1.0.0", &name));
        let link = links
            .iter()
            .find(|l| decode(l) == want)
            .unwrap_or_else(|| panic!("no link to {name} in {links:?}"));
        let r = request_with(&client, "GET", &server.url(link), &[BROWSER]);
        assert_eq!(r.status, 200, "{name} at {link}");
        assert_eq!(r.body, bytes, "{name} at {link}");
        let shown = format!(">{}</a>", escape(&name));
        assert!(page.contains(&shown), "{shown}");
    }
    for link in &links {
        let r = request_with(&client, "GET", &server.url(link), &[BROWSER]);
        assert_eq!(r.status, 200, "{link}");
    }
}

/// Where the screenshots go: `target/browse-screenshots/`.
fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("browse-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Files of a big build: 10,000 paths in 50 folders.
fn big_tree() -> Vec<(String, Vec<u8>)> {
    (0..10_000)
        .map(|i| {
            (
                format!("static/chunks/{:02}/module-{i:05}.js", i % 50),
                format!("export default {i};\n").into_bytes(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs Debian's chromium at /usr/bin/chromium; .ci/run installs it and runs this alone"]
fn in_chromium() {
    let ws = catalog();
    ws.write_tree("big", &big_tree());
    let started = Instant::now();
    ws.publish("@acme/web@3.0.0", "big", &[]);
    eprintln!("published 10,000 files in {:?}", started.elapsed());
    let server = Server::start(&ws, &[]);
    let mut browser = Browser::launch();
    browser.grant_clipboard(&server.base);
    let dir = screenshot_dir();
    let client = agent();
    let pages = [
        ("index", "/assets/"),
        ("package", "/assets/app/"),
        ("version-hostile", "/assets/app/1.0.0/"),
        ("version-scoped", "/assets/@scope/lib/0.1.0/"),
        ("version-10000-files", "/assets/@acme/web/3.0.0/"),
    ];
    // The 10,000-file page's load time, from its first load.
    let mut big_load = None;
    for (name, path) in pages {
        for width in [1280, 400] {
            let started = Instant::now();
            browser.viewport(width, 900);
            let reports = browser.goto(&server.url(path));
            let errors: Vec<_> = reports
                .iter()
                .filter(|r| matches!(r.level.as_str(), "error" | "exception" | "warning"))
                .collect();
            assert!(errors.is_empty(), "{path} at {width}px: {errors:?}");
            if name == "version-10000-files" && big_load.is_none() {
                big_load = Some(browser.eval(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];
                              return [n.responseEnd - n.requestStart, n.loadEventEnd,
                                      n.encodedBodySize, n.decodedBodySize,
                                      document.querySelectorAll('tbody tr').length]; })()",
                ));
            }
            // The page is laid out for the width: nothing sticks out.
            let overflow = browser.eval("document.documentElement.scrollWidth");
            assert!(
                overflow.as_u64().expect("a width") <= width as u64,
                "{path} at {width}px is {overflow}px wide"
            );
            let png = browser.screenshot();
            assert!(png.starts_with(b"\x89PNG"), "{path}: not a PNG");
            let file = dir.join(format!("{name}-{width}.png"));
            std::fs::write(&file, png).expect("write screenshot");
            eprintln!("{} ({:?})", file.display(), started.elapsed());
        }
        // Every link resolves: 200, or 302 for an alias.
        let links = browser.eval("[...document.querySelectorAll('a')].map(a => a.href)");
        let links: Vec<&str> = links
            .as_array()
            .expect("links")
            .iter()
            .map(|l| l.as_str().expect("an href"))
            .collect();
        assert!(!links.is_empty(), "{path} has no link");
        let checked = Instant::now();
        for link in &links {
            let r = request_with(&client, "HEAD", link, &[BROWSER]);
            assert!(
                matches!(r.status, 200 | 302),
                "{path}: {link} answered {}",
                r.status
            );
        }
        eprintln!(
            "{path}: {} links resolve ({:?})",
            links.len(),
            checked.elapsed()
        );
    }

    let timing = big_load.expect("the 10,000-file page was loaded");
    eprintln!(
        "10,000 files in Chromium: response {} ms, load event at {} ms, {} bytes sent, {} bytes of HTML",
        timing[0], timing[1], timing[2], timing[3]
    );
    let loaded = timing[1].as_f64().expect("load time");
    assert!(
        loaded < 20_000.0,
        "the 10,000-file page loaded in {loaded} ms"
    );
    assert_eq!(timing[4], Value::from(10_000), "rows on the page");

    browser.viewport(1280, 900);
    // The copy button: a real click puts the row's integrity on the
    // clipboard and says so.
    browser.goto(&server.url("/assets/app/1.0.0/"));
    let target = browser.eval(
        "(() => { const b = document.querySelector('.sri button'); const r = b.getBoundingClientRect();
                  return [r.x + r.width / 2, r.y + r.height / 2, b.previousElementSibling.textContent]; })()",
    );
    let (x, y) = (
        target[0].as_f64().expect("x"),
        target[1].as_f64().expect("y"),
    );
    let integrity = target[2].as_str().expect("integrity").to_string();
    assert!(integrity.starts_with("sha256-"), "{integrity}");
    browser.click(x, y);
    let until = Instant::now() + chromium::WAIT;
    loop {
        let said = browser.eval("document.querySelector('.sri button').textContent");
        if said == "copied" {
            break;
        }
        assert!(Instant::now() < until, "the button says {said}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let copied = browser.eval("navigator.clipboard.readText()");
    assert_eq!(copied, Value::from(integrity.clone()));
    let files: Vec<(String, Vec<u8>)> = hostile_tree();
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        integrity,
        sri(&sorted[0].1),
        "the first row is {}",
        sorted[0].0
    );
    let errors: Vec<_> = browser
        .reports()
        .into_iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception" | "warning"))
        .collect();
    assert!(errors.is_empty(), "copying: {errors:?}");

    // A miss: the page says what is missing (its one error is the 404).
    let reports = browser.goto(&server.url("/assets/app/9.9.9/"));
    assert!(
        reports.iter().all(|r| r.text.contains("404")),
        "{reports:?}"
    );
    let text = browser.eval("document.body.innerText");
    assert!(
        text.as_str()
            .expect("text")
            .contains("app has no version 9.9.9")
    );
    std::fs::write(dir.join("not-found-1280.png"), browser.screenshot()).expect("screenshot");
}

//! Sites in a real browser: a single-page app built by Vite, served by
//! `ccc site set default app --spa` and loaded by headless Chromium across
//! a deploy, as its visitors load it.
//!
//! - A returning visitor downloads only what changed. Release 1.0.1
//!   changes one line of the app's entry module; on the visit after the
//!   deploy the only bodies on the wire are the page and the new entry
//!   chunk. `css/style.css` and `img/logo.svg` (from Vite's `public/`, so
//!   without a hash in their names) are revalidated with a 304, and the
//!   unchanged fingerprinted chunks (a vendor chunk, a lazy chunk) come
//!   from the browser's cache without a request, being `immutable`. When
//!   nginx is installed, the same two visits against nginx serving the two
//!   `dist/` folders the usual way (a `current` symlink, `try_files`,
//!   `no-cache` outside `/assets/`, gzip) show ccc sends no body nginx
//!   does not, and no more bytes of bodies. (nginx's ETag is the file's
//!   modification time and size, so the files a new build copies from
//!   `public/` unchanged come whole again; ccc's is the content's hash.)
//! - A page open during a deploy lazy-loads its own chunks: a page of
//!   release N imports its lazy chunk after the site moved to N+1, whose
//!   lazy chunk has another name, and gets N's module (skew protection);
//!   on a site with `--skew-versions 0` the same import fails.
//!
//! What a visit transferred is read from the DevTools network events, not
//! from the Resource Timing API in the page: for a response revalidated
//! with a 304, Resource Timing reports the status and body size of the
//! cached response it stands for (`responseStatus` 200, `encodedBodySize`
//! the cached body's) and a flat 300 B as `transferSize`, as it adds 300
//! B to every body fetched, so a 304 and a 200 are told apart only by
//! guessing from sizes, while the network events give the status on the
//! wire
//! (`Network.responseReceivedExtraInfo`), whether a response came from a
//! cache without a request (`fromDiskCache`, `requestServedFromCache`),
//! and the bytes received (`Network.loadingFinished`'s
//! `encodedDataLength`, headers included).
//!
//! Needs Debian's chromium and Vite in `CCC_TEST_BUNDLERS`, which .ci/run
//! provides (nginx too, optional); hence `#[ignore]`.

use crate::chromium::Browser;
use crate::serve_util::{Server, parse_raw, poll_until};
use crate::util::{Rng, Workspace};
use ccc::testing::is_fingerprinted;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a publish may take to move the site (the server checks for
/// catalog changes four times a second).
const MOVES_WITHIN: Duration = Duration::from_secs(5);

/// A built release: the files of its `dist/`, by path.
struct Build {
    dist: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
}

impl Build {
    /// The path of the one file under `assets/` whose name starts with
    /// `stem-`.
    fn chunk(&self, stem: &str) -> String {
        let found: Vec<_> = self
            .files
            .keys()
            .filter(|p| p.starts_with(&format!("assets/{stem}-")))
            .collect();
        assert_eq!(found.len(), 1, "one {stem} chunk: {:?}", self.files.keys());
        found[0].clone()
    }
}

/// Writes the app's source in `dir`: a page linking a stylesheet and a
/// logo from `public/`, an entry module that says `version` on `window`
/// (its only line that differs between releases), a vendor module Vite
/// puts in a chunk of its own, and a lazy module whose export is `lazy`.
fn app_source(ws: &Workspace, dir: &str, version: &str, lazy: &str) {
    let mut rng = Rng::new(7);
    ws.write(
        &format!("{dir}/index.html"),
        "<!doctype html><html><head><meta charset=utf-8><title>app</title>\n\
         <link rel=icon href=\"data:,\">\n\
         <link rel=stylesheet href=\"/css/style.css\">\n\
         </head><body><img src=\"/img/logo.svg\" alt=\"\" width=32 height=32>\n\
         <main id=app></main>\n\
         <script type=module src=\"/main.js\"></script></body></html>\n",
    );
    let mut css = String::new();
    for i in 0..120 {
        let n = rng.below(1000);
        css.push_str(&format!(
            ".row-{i} {{ padding: {}px; color: #{n:03x}; }}\n",
            n % 17
        ));
    }
    ws.write(&format!("{dir}/public/css/style.css"), css);
    let mut svg = String::from("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 32 32\">");
    for _ in 0..40 {
        svg.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#{:03x}\"/>",
            rng.below(32),
            rng.below(32),
            1 + rng.below(4),
            rng.below(4096)
        ));
    }
    svg.push_str("</svg>\n");
    ws.write(&format!("{dir}/public/img/logo.svg"), svg);
    let mut vendor = String::new();
    for i in 0..150 {
        let n = rng.below(1_000_000);
        vendor.push_str(&format!(
            "export function fmt{i}(x) {{ return x > {n} ? 'fmt {i} over {n}: ' + x : fmt{}(x * 7 + {i}); }}\n",
            (i + 1) % 150
        ));
    }
    ws.write(&format!("{dir}/vendor.js"), vendor);
    let mut main = String::from("import * as vendor from './vendor.js';\n");
    for i in 0..80 {
        let n = rng.below(1_000_000);
        main.push_str(&format!(
            "function view{i}(x) {{ return '<p class=row-{i}>' + vendor.fmt{}(x + {n}) + '</p>'; }}\n",
            i % 150
        ));
    }
    main.push_str("const views = [");
    for i in 0..80 {
        main.push_str(&format!("view{i}, "));
    }
    main.push_str("];\n");
    main.push_str(&format!("window.appVersion = '{version}';\n"));
    main.push_str(
        "document.getElementById('app').innerHTML = views.map((v, i) => v(i)).join('');\n\
         window.loadLazy = () => import('./lazy.js');\n",
    );
    ws.write(&format!("{dir}/main.js"), main);
    let mut lazy_js = format!("export const value = '{lazy}';\n");
    for i in 0..30 {
        lazy_js.push_str(&format!(
            "export function panel{i}() {{ return '{lazy} panel {i}'; }}\n"
        ));
    }
    ws.write(&format!("{dir}/lazy.js"), lazy_js);
    ws.write(
        &format!("{dir}/vite.config.mjs"),
        "export default { build: { rollupOptions: { output: { manualChunks(id) { \
         if (id.endsWith('/vendor.js')) return 'vendor'; } } } } };\n",
    );
}

/// Builds the app in `dir` with Vite (root paths, Vite's default, as a
/// site serves them at the root).
fn vite_build(ws: &Workspace, bundlers: &Path, dir: &str) -> Build {
    let root = ws.path().join(dir);
    let out = Command::new(bundlers.join("node_modules/.bin/vite"))
        .arg("build")
        .arg(&root)
        .args(["--logLevel", "error", "--emptyOutDir"])
        .current_dir(bundlers)
        .output()
        .expect("vite runs");
    assert!(
        out.status.success(),
        "vite build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dist = root.join("dist");
    let mut files = BTreeMap::new();
    let mut dirs = vec![dist.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("read dist") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(&dist).expect("under dist");
                let rel = rel.to_str().expect("UTF-8").to_string();
                files.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    Build { dist, files }
}

/// `/` on `host` at `addr`, read whole: the page's text.
fn page_on(addr: SocketAddr, host: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let head = format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("send");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read");
    let answer = parse_raw(&all).expect("an HTTP answer");
    String::from_utf8_lossy(&answer.body()).into_owned()
}

/// One response a visit used, as the network events tell it.
#[derive(Debug, Clone)]
struct Fetch {
    /// The URL's path.
    path: String,
    /// The status on the wire; None for a response taken from the
    /// browser's cache without a request.
    status: Option<u16>,
    /// Bytes received for it: headers and body.
    wire: u64,
    /// Of which the body (as its `Content-Length` or, without one, what
    /// came after the headers).
    body: u64,
}

impl Fetch {
    fn source(&self) -> String {
        match self.status {
            None => "cache".into(),
            Some(s) => s.to_string(),
        }
    }
}

/// The responses of a visit, by path, from the browser's network events.
fn fetches(events: &[Value]) -> BTreeMap<String, Fetch> {
    #[derive(Default)]
    struct Seen {
        url: String,
        status: Option<u16>,
        wire_status: Option<u16>,
        cached: bool,
        headers_text: Option<u64>,
        content_length: Option<u64>,
        wire: u64,
        finished: bool,
    }
    let mut by_id: HashMap<String, Seen> = HashMap::new();
    let mut order = Vec::new();
    for e in events {
        let p = &e["params"];
        let Some(id) = p["requestId"].as_str() else {
            continue;
        };
        if !by_id.contains_key(id) {
            order.push(id.to_string());
        }
        let seen = by_id.entry(id.to_string()).or_default();
        match e["method"].as_str().unwrap_or("") {
            "Network.requestWillBeSent" => {
                seen.url = p["request"]["url"].as_str().unwrap_or("").to_string();
            }
            "Network.responseReceivedExtraInfo" => {
                seen.wire_status = p["statusCode"].as_u64().map(|s| s as u16);
                seen.headers_text = p["headersText"].as_str().map(|t| t.len() as u64);
            }
            "Network.responseReceived" => {
                let r = &p["response"];
                seen.status = r["status"].as_u64().map(|s| s as u16);
                seen.cached |= r["fromDiskCache"].as_bool() == Some(true)
                    || r["fromPrefetchCache"].as_bool() == Some(true)
                    || r["fromServiceWorker"].as_bool() == Some(true);
                let headers = r["headers"].as_object();
                seen.content_length = headers.and_then(|h| {
                    h.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                        .and_then(|(_, v)| v.as_str()?.parse().ok())
                });
                if seen.url.is_empty() {
                    seen.url = r["url"].as_str().unwrap_or("").to_string();
                }
            }
            "Network.requestServedFromCache" => seen.cached = true,
            "Network.loadingFinished" => {
                seen.wire = p["encodedDataLength"].as_u64().unwrap_or(0);
                seen.finished = true;
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    for id in order {
        let seen = &by_id[&id];
        let Some(rest) = seen
            .url
            .strip_prefix("http://")
            .and_then(|r| r.find('/').map(|i| &r[i..]))
        else {
            continue;
        };
        assert!(seen.finished, "{} did not finish loading", seen.url);
        let path = rest.split(['?', '#']).next().unwrap_or(rest).to_string();
        let status = match seen.cached && seen.wire == 0 {
            true => None,
            false => seen.wire_status.or(seen.status),
        };
        let body = match status {
            None | Some(304) => 0,
            Some(_) => seen
                .content_length
                .unwrap_or_else(|| seen.wire.saturating_sub(seen.headers_text.unwrap_or(0))),
        };
        let fetch = Fetch {
            path: path.clone(),
            status,
            wire: seen.wire,
            body,
        };
        assert!(
            out.insert(path.clone(), fetch).is_none(),
            "{path} was fetched twice in one visit"
        );
    }
    out
}

/// One visit of `base`'s `/` as a returning visitor: a navigation from
/// another page, the app run, its lazy chunk imported. What the app says
/// its version and lazy module are, and what each response cost; no
/// console error allowed.
fn visit(browser: &mut Browser, base: &str) -> (String, String, BTreeMap<String, Fetch>) {
    browser.goto("about:blank");
    let mut reports = browser.goto(&format!("{base}/"));
    let version = browser.eval(APP_VERSION);
    let lazy = browser.eval("window.loadLazy().then(m => m.value)");
    // The lazy chunk's last network event may come after the import.
    browser.drain(Duration::from_millis(300));
    reports.extend(browser.reports());
    let bad: Vec<_> = reports
        .iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception"))
        .collect();
    assert!(bad.is_empty(), "{base}: {bad:?}");
    (
        version.as_str().expect("a version").to_string(),
        lazy.as_str().expect("the lazy export").to_string(),
        fetches(browser.events()),
    )
}

/// Waits (bounded) for the app's entry module to have run: its version.
const APP_VERSION: &str = "new Promise((done, fail) => { const t0 = Date.now(); \
     const t = () => window.appVersion ? done(window.appVersion) \
     : Date.now() - t0 > 10000 ? fail(new Error('the app did not run')) : setTimeout(t, 50); t(); })";

/// The paths whose bytes differ between two builds (or are new), as URL
/// paths: `index.html` is `/`.
fn changed(old: &Build, new: &Build) -> BTreeSet<String> {
    new.files
        .iter()
        .filter(|(path, bytes)| old.files.get(*path) != Some(*bytes))
        .map(|(path, _)| match path.as_str() {
            "index.html" => "/".to_string(),
            p => format!("/{p}"),
        })
        .collect()
}

/// The per-file table of a visit, for the record.
fn table(label: &str, visit: &BTreeMap<String, Fetch>) {
    println!("{label}");
    println!(
        "  {:<32} {:>6} {:>8} {:>8}",
        "path", "status", "wire B", "body B"
    );
    for f in visit.values() {
        println!(
            "  {:<32} {:>6} {:>8} {:>8}",
            f.path,
            f.source(),
            f.wire,
            f.body
        );
    }
    let bodies = visit.values().filter(|f| f.body > 0).count();
    let requests = visit.values().filter(|f| f.status.is_some()).count();
    println!(
        "  {requests} requests, {bodies} bodies: {} B on the wire, {} B of bodies",
        visit.values().map(|f| f.wire).sum::<u64>(),
        visit.values().map(|f| f.body).sum::<u64>()
    );
}

/// Checks ccc's returning visit: bodies exactly for the `changed` paths,
/// a 304 for every other file but a fingerprinted one, which comes from
/// the cache without a request.
fn check_returning(second: &BTreeMap<String, Fetch>, new: &Build, changed: &BTreeSet<String>) {
    let expected: BTreeSet<String> = new
        .files
        .keys()
        .map(|p| match p.as_str() {
            "index.html" => "/".to_string(),
            p => format!("/{p}"),
        })
        .collect();
    let used: BTreeSet<String> = second.keys().cloned().collect();
    assert_eq!(used, expected, "the visit uses every file of 1.0.1");
    let with_body: BTreeSet<String> = second
        .values()
        .filter(|f| f.body > 0)
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(&with_body, changed, "bodies only for what changed");
    for f in second.values() {
        if changed.contains(&f.path) {
            assert_eq!(f.status, Some(200), "{f:?}");
        } else if is_fingerprinted(&f.path) {
            assert_eq!(
                (f.status, f.wire),
                (None, 0),
                "unchanged and immutable, from the cache: {f:?}"
            );
        } else {
            assert_eq!(f.status, Some(304), "revalidated: {f:?}");
        }
    }
}

#[test]
#[ignore = "needs chromium and CCC_TEST_BUNDLERS; .ci/run provides them"]
fn a_new_release_transfers_only_what_changed() {
    let bundlers = std::env::var("CCC_TEST_BUNDLERS").expect("CCC_TEST_BUNDLERS");
    let bundlers = Path::new(&bundlers);
    let ws = Workspace::new();
    app_source(&ws, "app-1.0.0", "1.0.0", "lazy");
    app_source(&ws, "app-1.0.1", "1.0.1", "lazy");
    let old = vite_build(&ws, bundlers, "app-1.0.0");
    let new = vite_build(&ws, bundlers, "app-1.0.1");
    let changed = changed(&old, &new);
    let entry = format!("/{}", new.chunk("index"));
    assert_eq!(
        changed,
        BTreeSet::from(["/".to_string(), entry.clone()]),
        "one line of main.js changes the page and the entry chunk only"
    );
    assert_eq!(old.chunk("vendor"), new.chunk("vendor"));
    assert_eq!(old.chunk("lazy"), new.chunk("lazy"));

    ws.ok(&[
        "publish",
        "app@1.0.0",
        old.dist.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    ws.ok(&["site", "set", "default", "app", "--spa"]);
    let server = Server::start(&ws, &[]);
    let base = format!("http://localhost:{}", server.addr.port());
    let mut browser = Browser::launch();
    browser.enable_network();
    let (version, lazy, first) = visit(&mut browser, &base);
    assert_eq!((version.as_str(), lazy.as_str()), ("1.0.0", "lazy"));
    table("ccc, first visit (1.0.0)", &first);
    assert!(first.values().all(|f| f.status == Some(200) && f.body > 0));

    ws.ok(&[
        "publish",
        "app@1.0.1",
        new.dist.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    let new_page = String::from_utf8(new.files["index.html"].clone()).expect("UTF-8");
    poll_until(MOVES_WITHIN, || {
        page_on(server.addr, "localhost") == new_page
    })
    .expect("the site serves 1.0.1");
    let (version, lazy, second) = visit(&mut browser, &base);
    assert_eq!((version.as_str(), lazy.as_str()), ("1.0.1", "lazy"));
    table("ccc, returning visit (1.0.1)", &second);
    check_returning(&second, &new, &changed);
    drop(browser);
    drop(server);

    let Some(nginx) = nginx_path() else {
        println!("nginx is not installed: the comparison with nginx is skipped");
        return;
    };
    // nginx's ETag is the file's modification time (in seconds) and size:
    // two builds made within one second would give 1.0.1's page, of the
    // same size, 1.0.0's tag. Builds are made minutes apart.
    let now = std::time::SystemTime::now();
    set_mtimes(&old, now - Duration::from_secs(600));
    set_mtimes(&new, now - Duration::from_secs(60));
    let origin = Nginx::start(&nginx, ws.path(), &old.dist);
    let base = format!("http://localhost:{}", origin.port);
    let mut browser = Browser::launch();
    browser.enable_network();
    let (_, _, first) = visit(&mut browser, &base);
    table("nginx, first visit (1.0.0)", &first);
    origin.switch_to(&new.dist);
    let (version, _, nginx_second) = visit(&mut browser, &base);
    assert_eq!(version, "1.0.1");
    table("nginx, returning visit (1.0.1)", &nginx_second);
    // A build writes every file anew, so nginx's tags of the stylesheet
    // and the logo changed: they come whole again.
    for f in nginx_second.values() {
        if f.path.starts_with("/assets/") && !changed.contains(&f.path) {
            assert_eq!((f.status, f.wire), (None, 0), "nginx: {f:?}");
        } else {
            assert_eq!(f.status, Some(200), "nginx: {f:?}");
        }
    }
    let bodies = |v: &BTreeMap<String, Fetch>| -> BTreeSet<String> {
        v.values()
            .filter(|f| f.body > 0)
            .map(|f| f.path.clone())
            .collect()
    };
    let body_bytes = |v: &BTreeMap<String, Fetch>| v.values().map(|f| f.body).sum::<u64>();
    let requests = |v: &BTreeMap<String, Fetch>| v.values().filter(|f| f.status.is_some()).count();
    assert!(
        bodies(&second).is_subset(&bodies(&nginx_second)),
        "ccc sent {:?}, nginx {:?}",
        bodies(&second),
        bodies(&nginx_second)
    );
    assert!(
        body_bytes(&second) <= body_bytes(&nginx_second),
        "ccc sent {} B of bodies, nginx {}",
        body_bytes(&second),
        body_bytes(&nginx_second)
    );
    assert!(requests(&second) <= requests(&nginx_second));
}

#[test]
#[ignore = "needs chromium and CCC_TEST_BUNDLERS; .ci/run provides them"]
fn a_page_open_during_a_deploy_lazy_loads_its_own_chunks() {
    let bundlers = std::env::var("CCC_TEST_BUNDLERS").expect("CCC_TEST_BUNDLERS");
    let bundlers = Path::new(&bundlers);
    let ws = Workspace::new();
    app_source(&ws, "app-1.0.0", "1.0.0", "lazy 1.0.0");
    app_source(&ws, "app-1.0.1", "1.0.1", "lazy 1.0.1");
    let old = vite_build(&ws, bundlers, "app-1.0.0");
    let new = vite_build(&ws, bundlers, "app-1.0.1");
    let old_lazy = format!("/{}", old.chunk("lazy"));
    assert_ne!(old.chunk("lazy"), new.chunk("lazy"));
    assert_ne!(old.chunk("index"), new.chunk("index"));

    // `localhost` keeps 3 releases' chunks (the default); every other
    // host, 127.0.0.1 here, none.
    ws.ok(&[
        "publish",
        "app@1.0.0",
        old.dist.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    ws.ok(&["site", "set", "localhost", "app", "--spa"]);
    ws.ok(&[
        "site",
        "set",
        "default",
        "app",
        "--spa",
        "--skew-versions",
        "0",
    ]);
    let server = Server::start(&ws, &[]);
    let port = server.addr.port();
    let mut kept = Browser::launch();
    let mut strict = Browser::launch();
    for (browser, base) in [
        (&mut kept, format!("http://localhost:{port}/")),
        (&mut strict, format!("http://127.0.0.1:{port}/")),
    ] {
        let reports = browser.goto(&base);
        assert_eq!(browser.eval(APP_VERSION), "1.0.0", "{base}");
        assert!(
            !reports
                .iter()
                .any(|r| matches!(r.level.as_str(), "error" | "exception")),
            "{base}: {reports:?}"
        );
    }

    ws.ok(&[
        "publish",
        "app@1.0.1",
        new.dist.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    let new_page = String::from_utf8(new.files["index.html"].clone()).expect("UTF-8");
    poll_until(MOVES_WITHIN, || {
        page_on(server.addr, "localhost") == new_page
            && page_on(server.addr, "127.0.0.1") == new_page
    })
    .expect("both sites serve 1.0.1");

    // The open page of 1.0.0 imports its own lazy chunk, which 1.0.1
    // lacks: 1.0.0's module, with no error.
    let import = "window.loadLazy().then(m => ({value: m.value}), e => ({error: String(e)}))";
    let got = kept.eval(import);
    assert_eq!(got["value"], "lazy 1.0.0", "{got}");
    let loaded =
        kept.eval("performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)");
    assert!(
        loaded
            .as_array()
            .expect("entries")
            .iter()
            .any(|p| p == old_lazy.as_str()),
        "{old_lazy} from the server: {loaded}"
    );
    kept.drain(Duration::from_millis(300));
    let bad: Vec<_> = kept
        .reports()
        .into_iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception"))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
    println!("with skew protection: {old_lazy} imported after the deploy: {got}");

    // Without skew protection the same import fails: the chunk is a 404.
    let failed = strict.eval(import);
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("dynamically imported module")),
        "{failed}"
    );
    println!("with --skew-versions 0: {failed}");
}

/// Sets the modification time of every file of `build` to `when`, as if
/// it had been built then.
fn set_mtimes(build: &Build, when: std::time::SystemTime) {
    for path in build.files.keys() {
        std::fs::File::options()
            .write(true)
            .open(build.dist.join(path))
            .and_then(|f| f.set_modified(when))
            .expect("set the modification time");
    }
}

/// nginx, from PATH or where Debian puts it.
fn nginx_path() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("nginx"));
    on_path
        .chain([PathBuf::from("/usr/sbin/nginx")])
        .find(|p| p.is_file())
}

/// nginx serving a `dist/` folder as a single-page app's origin usually
/// does: `root` a symlink to the current release, `try_files` with the
/// page as fallback, `no-cache` outside `/assets/` and `immutable`
/// inside, ETags on, gzip on. Stopped on drop.
struct Nginx {
    child: Child,
    port: u16,
    current: PathBuf,
}

impl Nginx {
    fn start(nginx: &Path, dir: &Path, dist: &Path) -> Nginx {
        let prefix = dir.join("nginx");
        std::fs::create_dir_all(prefix.join("tmp")).expect("nginx dir");
        let current = prefix.join("current");
        std::os::unix::fs::symlink(dist, &current).expect("symlink");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let p = prefix.display();
        // As root, nginx's workers would drop to `nobody`, who cannot read
        // the test's private temporary folder.
        let user = match std::fs::metadata("/proc/self").map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid()
        }) {
            Ok(0) => "user root;",
            _ => "",
        };
        let conf = format!(
            "{user}\n\
             worker_processes 1;\n\
             pid {p}/nginx.pid;\n\
             error_log {p}/error.log warn;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n\
               types {{ text/html html; text/css css; text/javascript js; image/svg+xml svg; }}\n\
               default_type application/octet-stream;\n\
               access_log {p}/access.log;\n\
               client_body_temp_path {p}/tmp/body;\n\
               proxy_temp_path {p}/tmp/proxy;\n\
               fastcgi_temp_path {p}/tmp/fastcgi;\n\
               uwsgi_temp_path {p}/tmp/uwsgi;\n\
               scgi_temp_path {p}/tmp/scgi;\n\
               gzip on;\n\
               gzip_types text/css text/javascript image/svg+xml;\n\
               etag on;\n\
               server {{\n\
                 listen 127.0.0.1:{port};\n\
                 root {p}/current;\n\
                 location /assets/ {{\n\
                   add_header Cache-Control \"public, max-age=31536000, immutable\";\n\
                   try_files $uri =404;\n\
                 }}\n\
                 location / {{\n\
                   add_header Cache-Control no-cache;\n\
                   try_files $uri $uri/ /index.html;\n\
                 }}\n\
               }}\n\
             }}\n"
        );
        let conf_path = prefix.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("nginx.conf");
        let child = Command::new(nginx)
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&prefix)
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let origin = Nginx {
            child,
            port,
            current,
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        poll_until(Duration::from_secs(10), || TcpStream::connect(addr).is_ok()).unwrap_or_else(
            || {
                panic!(
                    "nginx listens within 10 s: {}",
                    std::fs::read_to_string(prefix.join("error.log")).unwrap_or_default()
                )
            },
        );
        origin
    }

    /// The deploy: `current` re-pointed at `dist` in one rename.
    fn switch_to(&self, dist: &Path) {
        let next = self.current.with_extension("next");
        std::os::unix::fs::symlink(dist, &next).expect("symlink");
        std::fs::rename(&next, &self.current).expect("rename");
    }
}

impl Drop for Nginx {
    /// SIGTERM, so that the master stops its worker too.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        if crate::serve_util::wait_timeout(&mut self.child, Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

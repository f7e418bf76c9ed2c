//! Sites: a package's dist-tag served at the root of a host (`ccc site`).
//! A deploy or a rollback moves the site with the tag; paths resolve as an
//! app host resolves them (directory indexes, SPA fallback, `404.html`,
//! clean URLs); pages revalidate while fingerprinted files stay
//! immutable; a page open during a deploy still loads its old chunks;
//! several hosts on one server; `/assets/` beside a site.

use crate::serve_util::{RawResp, Server, parse_raw, poll_until};
use crate::util::Workspace;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a moved tag may take to reach the server (its change check
/// runs four times a second).
const MOVES_WITHIN: Duration = Duration::from_secs(5);

/// `GET target` with `Host: host` and `headers`, read whole.
#[track_caller]
fn get_on(addr: SocketAddr, host: &str, target: &str, headers: &[&str]) -> RawResp {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut head = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("read");
    parse_raw(&all).unwrap_or_else(|| panic!("no answer to {target}"))
}

fn text(r: &RawResp) -> String {
    String::from_utf8_lossy(&r.body()).into_owned()
}

/// A built app: its page names `version`, one fingerprinted script,
/// a stylesheet and a logo whose names carry no hash, a docs folder and a
/// 404 page.
fn app(ws: &Workspace, version: &str, script: &str) -> String {
    let dir = format!("dist-{version}");
    ws.write(
        &format!("{dir}/index.html"),
        format!("<!doctype html><title>{version}</title><script type=module src=\"/assets/{script}\"></script>"),
    );
    ws.write(
        &format!("{dir}/assets/{script}"),
        format!("console.log('{version}')"),
    );
    ws.write(&format!("{dir}/css/style.css"), "body { color: black }");
    ws.write(&format!("{dir}/img/logo.svg"), "<svg/>");
    ws.write(&format!("{dir}/docs/index.html"), "docs");
    ws.write(&format!("{dir}/about.html"), "about");
    ws.write(&format!("{dir}/404.html"), "not here");
    dir
}

#[test]
fn a_site_serves_its_tag_at_the_root_and_moves_with_it() {
    let ws = Workspace::new();
    let v1 = app(&ws, "1.0.0", "index-B1x9aZq2.js");
    ws.publish("app@1.0.0", &v1, &[]);
    ws.write("lib/lib.js", "export default 1");
    ws.publish("lib@2.0.0", "lib", &[]);
    ws.ok(&["site", "set", "default", "app"]);
    let server = Server::start(&ws, &[]);
    let at = |target: &str| get_on(server.addr, "app.example", target, &[]);

    let page = at("/");
    assert_eq!(page.status, 200);
    assert!(text(&page).contains("<title>1.0.0</title>"));
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    assert!(page.header("etag").is_some());
    let script = at("/assets/index-B1x9aZq2.js");
    assert_eq!(script.status, 200);
    assert_eq!(
        script.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(
        at("/css/style.css").header("cache-control"),
        Some("no-cache")
    );
    // The catalog's own paths beside the site.
    let lib = at("/assets/lib/2.0.0/lib.js");
    assert_eq!((lib.status, text(&lib).as_str()), (200, "export default 1"));
    assert_eq!(at("/lib@2.0.0/lib.js").status, 200);

    // A deploy: the next release, as `latest` follows a newer release.
    let v2 = app(&ws, "1.0.1", "index-C2y8bYr3.js");
    ws.publish("app@1.0.1", &v2, &[]);
    poll_until(MOVES_WITHIN, || text(&at("/")).contains("1.0.1")).expect("the site moves to 1.0.1");
    // A rollback: the tag back to the release before.
    ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    poll_until(MOVES_WITHIN, || text(&at("/")).contains("<title>1.0.0"))
        .expect("the site rolls back to 1.0.0");
    assert!(stdout(&ws, &["site", "ls"]).contains("1.0.0"));
}

fn stdout(ws: &Workspace, args: &[&str]) -> String {
    String::from_utf8_lossy(&ws.ok(args).stdout).into_owned()
}

#[test]
fn paths_resolve_as_an_app_host_resolves_them() {
    let ws = Workspace::new();
    let v1 = app(&ws, "1.0.0", "index-B1x9aZq2.js");
    ws.write(&format!("{v1}/_headers"), "/*\n  X-Frame-Options: DENY\n");
    ws.publish("app@1.0.0", &v1, &[]);
    ws.ok(&["site", "set", "spa.example", "app", "--spa"]);
    ws.ok(&["site", "set", "docs.example", "app", "--clean-urls"]);
    let server = Server::start(&ws, &[]);
    let spa = |target: &str| get_on(server.addr, "spa.example", target, &[]);
    let docs = |target: &str| get_on(server.addr, "Docs.Example:8080", target, &[]);

    let dir = spa("/docs?tab=2");
    assert_eq!(dir.status, 301);
    assert_eq!(dir.header("location"), Some("/docs/?tab=2"));
    assert_eq!(text(&spa("/docs/")), "docs");
    // SPA fallback: a route with no file and no extension is the page.
    let route = spa("/settings/profile");
    assert_eq!(route.status, 200);
    assert!(text(&route).contains("<title>1.0.0"));
    assert_eq!(route.header("cache-control"), Some("no-cache"));
    // A missing file with an extension is the build's 404 page.
    let missing = spa("/assets/index-XXXXXXXX.js");
    assert_eq!((missing.status, text(&missing).as_str()), (404, "not here"));
    // The rules files are the server's to read, not the world's.
    assert_eq!(spa("/_headers").status, 404);
    // `_headers` applies to every answer of the site.
    assert_eq!(route.header("x-frame-options"), Some("DENY"));
    assert_eq!(missing.header("x-frame-options"), Some("DENY"));

    // Without SPA fallback a route is a 404; clean URLs find `about.html`.
    let no_route = docs("/settings/profile");
    assert_eq!(
        (no_route.status, text(&no_route).as_str()),
        (404, "not here")
    );
    assert_eq!(text(&docs("/about")), "about");
    assert_eq!(spa("/about").status, 200, "SPA fallback, not the file");
    assert!(text(&spa("/about")).contains("<title>"));
}

#[test]
fn a_returning_browser_revalidates_pages_and_keeps_what_did_not_change() {
    let ws = Workspace::new();
    let v1 = app(&ws, "1.0.0", "index-B1x9aZq2.js");
    ws.publish("app@1.0.0", &v1, &[]);
    ws.ok(&["site", "set", "default", "app"]);
    let server = Server::start(&ws, &[]);
    let at = |target: &str, headers: &[&str]| get_on(server.addr, "localhost", target, headers);
    let tag = |target: &str| at(target, &[]).header("etag").unwrap().to_string();
    let (page, style) = (tag("/"), tag("/css/style.css"));

    let v2 = app(&ws, "1.0.1", "index-C2y8bYr3.js");
    ws.publish("app@1.0.1", &v2, &[]);
    poll_until(MOVES_WITHIN, || text(&at("/", &[])).contains("1.0.1")).expect("deployed");
    // The page changed: its old tag gets the new page.
    let again = at("/", &[&format!("If-None-Match: {page}")]);
    assert_eq!(again.status, 200);
    // The stylesheet did not: a 304 under its old tag.
    let kept = at("/css/style.css", &[&format!("If-None-Match: {style}")]);
    assert_eq!(kept.status, 304);
    assert_eq!(kept.header("cache-control"), Some("no-cache"));
}

#[test]
fn a_page_open_during_a_deploy_still_loads_its_own_chunks() {
    let ws = Workspace::new();
    let v1 = app(&ws, "1.0.0", "index-B1x9aZq2.js");
    ws.write(
        &format!("{v1}/assets/lazy-D4k2LmQ9.js"),
        "export const v = 1",
    );
    ws.publish("app@1.0.0", &v1, &[]);
    ws.ok(&["site", "set", "default", "app"]);
    ws.ok(&[
        "site",
        "set",
        "strict.example",
        "app",
        "--skew-versions",
        "0",
    ]);
    let server = Server::start(&ws, &[]);
    let at = |host: &str, target: &str| get_on(server.addr, host, target, &[]);
    assert_eq!(at("localhost", "/assets/lazy-D4k2LmQ9.js").status, 200);

    let v2 = app(&ws, "1.0.1", "index-C2y8bYr3.js");
    ws.write(
        &format!("{v2}/assets/lazy-E5m3NpR0.js"),
        "export const v = 2",
    );
    ws.publish("app@1.0.1", &v2, &[]);
    poll_until(MOVES_WITHIN, || {
        text(&at("localhost", "/")).contains("1.0.1")
    })
    .expect("deployed");
    // Release 1.0.0's chunk, which 1.0.1 does not have, from 1.0.0.
    let old = at("localhost", "/assets/lazy-D4k2LmQ9.js");
    assert_eq!(
        (old.status, text(&old).as_str()),
        (200, "export const v = 1")
    );
    assert_eq!(
        old.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    // Without skew protection the old chunk is gone with its release.
    assert_eq!(at("strict.example", "/assets/lazy-D4k2LmQ9.js").status, 404);
    let listed = ws.json(&["site", "ls", "--json"]);
    let default = &listed[0];
    assert_eq!(default["current"]["version"], "1.0.1");
    assert_eq!(default["recent"][0]["version"], "1.0.0");
}

#[test]
fn each_host_has_its_own_site() {
    let ws = Workspace::new();
    ws.write("a/index.html", "site a");
    ws.write("b/index.html", "site b");
    ws.publish("site-a@1.0.0", "a", &[]);
    ws.publish("@acme/site-b@1.0.0", "b", &["--tag", "live"]);
    ws.ok(&["site", "set", "a.example", "site-a"]);
    ws.ok(&["site", "set", "b.example", "@acme/site-b@live"]);
    let server = Server::start(&ws, &[]);
    assert_eq!(text(&get_on(server.addr, "a.example", "/", &[])), "site a");
    assert_eq!(text(&get_on(server.addr, "B.EXAMPLE.", "/", &[])), "site b");
    // No site for the host and no default: the server's own 404.
    let other = get_on(server.addr, "c.example", "/", &[]);
    assert_eq!(other.status, 404);
    assert!(text(&other).contains("/assets/"));
    // /_stats stays the server's on a site's host.
    assert_eq!(
        get_on(server.addr, "a.example", "/healthz", &[]).status,
        200
    );

    // A site whose tag names nothing yet answers 503, saying so.
    ws.ok(&["site", "set", "c.example", "site-a@beta"]);
    poll_until(MOVES_WITHIN, || {
        get_on(server.addr, "c.example", "/", &[]).status == 503
    })
    .expect("the new site answers");
    let none = get_on(server.addr, "c.example", "/", &[]);
    assert!(text(&none).contains("site-a@beta"), "{}", text(&none));
    ws.ok(&["site", "rm", "c.example"]);
    let out = ws.fails(&["site", "rm", "c.example"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no site is set for c.example"));
}

/// `GET target` over TLS to `addr`, naming `host` in SNI and `Host`,
/// trusting `ca` alone.
fn tls_get_on(addr: SocketAddr, ca: &std::path::Path, host: &str, target: &str) -> RawResp {
    use tokio_rustls::rustls::{self, pki_types};
    let config = crate::serve_protocol::tls_client(ca);
    let name = pki_types::ServerName::try_from(host.to_string()).expect("a name");
    let tls = rustls::ClientConnection::new(config, name).expect("TLS");
    let tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut stream = rustls::StreamOwned::new(tls, tcp);
    let request = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("the request");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("the answer");
    parse_raw(&answer).unwrap_or_else(|| panic!("no answer to {target} on {host}"))
}

#[test]
fn an_https_front_door_redirects_plain_http_and_answers_acme() {
    let ws = Workspace::new();
    ws.write("a/index.html", "site a");
    ws.write("b/index.html", "site b");
    ws.publish("site-a@1.0.0", "a", &[]);
    ws.publish("site-b@1.0.0", "b", &[]);
    ws.ok(&["site", "set", "a.test", "site-a", "--hsts", "365days"]);
    ws.ok(&["site", "set", "b.test", "site-b"]);
    ws.write(
        "acme/.well-known/acme-challenge/Tok_en-1",
        "Tok_en-1.thumbprint",
    );
    // One certificate for both names.
    let (ca, cert, key) =
        crate::serve_protocol::certificates_for(ws.path(), "sites", &["a.test", "b.test"]);
    let acme = ws.path().join("acme");
    let server = Server::start(
        &ws,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--redirect-http",
            "0",
            "--acme-dir",
            acme.to_str().unwrap(),
        ],
    );
    let mut redirect = None;
    poll_until(MOVES_WITHIN, || {
        redirect = server.stdout().lines().find_map(|l| {
            l.strip_prefix("redirecting http://")?
                .strip_suffix(" to HTTPS")?
                .parse()
                .ok()
        });
        redirect.is_some()
    });
    let redirect: SocketAddr = redirect.expect("serve says where it redirects from");
    let https_port = server.addr.port();

    let moved = get_on(redirect, "a.test:80", "/docs/?q=1", &[]);
    assert_eq!(moved.status, 308);
    assert_eq!(
        moved.header("location"),
        Some(format!("https://a.test:{https_port}/docs/?q=1").as_str())
    );
    assert_eq!(moved.header("strict-transport-security"), None);
    let challenge = get_on(
        redirect,
        "a.test",
        "/.well-known/acme-challenge/Tok_en-1",
        &[],
    );
    assert_eq!(
        (challenge.status, text(&challenge).as_str()),
        (200, "Tok_en-1.thumbprint")
    );
    let escape = get_on(
        redirect,
        "a.test",
        "/.well-known/acme-challenge/..%2F..%2Fa",
        &[],
    );
    assert_eq!(escape.status, 404);

    let a = tls_get_on(server.addr, &ca, "a.test", "/");
    assert_eq!((a.status, text(&a).as_str()), (200, "site a"));
    assert_eq!(
        a.header("strict-transport-security"),
        Some("max-age=31536000")
    );
    let b = tls_get_on(server.addr, &ca, "b.test", "/");
    assert_eq!((b.status, text(&b).as_str()), (200, "site b"));
    assert_eq!(b.header("strict-transport-security"), None, "b has no HSTS");
}

#[test]
fn systemd_passes_the_redirecting_socket_by_name() {
    use crate::util::{ccc_path, hermetic};
    use std::process::{Command, Stdio};
    let ws = Workspace::new();
    ws.write("a/index.html", "site a");
    ws.publish("site-a@1.0.0", "a", &[]);
    ws.ok(&["site", "set", "default", "site-a"]);
    let (ca, cert, key) = crate::serve_protocol::certificates(ws.path(), "activated");
    let free = || {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        probe.local_addr().expect("addr")
    };
    let (https, http) = (free(), free());
    let mut cmd = Command::new("systemd-socket-activate");
    hermetic(&mut cmd);
    cmd.current_dir(ws.path())
        .args([
            "--listen",
            &https.to_string(),
            "--listen",
            &http.to_string(),
        ])
        .arg("--fdname=https:redirect")
        .arg(ccc_path())
        .args(["serve", "--db"])
        .arg(ws.db())
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut activator = cmd
        .spawn()
        .expect("systemd-socket-activate runs (Debian's systemd package)");
    let ready = poll_until(MOVES_WITHIN, || TcpStream::connect(http).is_ok());
    assert!(ready.is_some(), "systemd-socket-activate listens on {http}");
    let moved = get_on(http, "localhost", "/x", &[]);
    assert_eq!(moved.status, 308);
    let location = format!("https://localhost:{}/x", https.port());
    assert_eq!(moved.header("location"), Some(location.as_str()));
    let page = tls_get_on(https, &ca, "localhost", "/");
    assert_eq!((page.status, text(&page).as_str()), (200, "site a"));
    crate::serve_util::sigterm(activator.id());
    if crate::serve_util::wait_timeout(&mut activator, Duration::from_secs(20)).is_none() {
        let _ = activator.kill();
        let _ = activator.wait();
    }
}

#[test]
fn the_builds_redirects_and_headers_apply() {
    let ws = Workspace::new();
    let v1 = app(&ws, "1.0.0", "index-B1x9aZq2.js");
    ws.write(
        &format!("{v1}/_redirects"),
        "# moved pages\n\
         /old            /about.html       301\n\
         /blog/:year/:id /posts/:id?y=:year 302\n\
         /about.html     /docs/            301\n\
         /shop/*         /index.html       200\n\
         /gone           /404.html         410\n\
         /css/*          /about.html       200\n\
         /img/logo.svg   /about.html       200!\n",
    );
    ws.write(
        &format!("{v1}/_headers"),
        "/*\n  X-Frame-Options: DENY\n  Set-Cookie: a=1\n\
         /\n  Link: </css/style.css>; rel=preload; as=style\n  Set-Cookie: b=2\n\
         /assets/*\n  Cache-Control: public, max-age=60\n  ! X-Frame-Options\n",
    );
    ws.publish("app@1.0.0", &v1, &[]);
    ws.ok(&["site", "set", "default", "app"]);
    let server = Server::start(&ws, &[]);
    let at = |target: &str| get_on(server.addr, "localhost", target, &[]);

    let old = at("/old?ref=x");
    assert_eq!(old.status, 301);
    assert_eq!(old.header("location"), Some("/about.html?ref=x"));
    let blog = at("/blog/2026/hello");
    assert_eq!(blog.status, 302);
    assert_eq!(blog.header("location"), Some("/posts/hello?y=2026"));
    // A file at the path shadows a rule without `!`.
    assert_eq!(text(&at("/about.html")), "about");
    // A rewrite: the page's body, the URL unchanged.
    let shop = at("/shop/cart/42");
    assert_eq!(shop.status, 200);
    assert!(text(&shop).contains("<title>1.0.0"));
    let gone = at("/gone");
    assert_eq!((gone.status, text(&gone).as_str()), (410, "not here"));
    assert_eq!(text(&at("/css/style.css")), "body { color: black }");
    assert_eq!(
        text(&at("/img/logo.svg")),
        "about",
        "`!` applies over a file"
    );

    let page = at("/");
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(
        page.header("link"),
        Some("</css/style.css>; rel=preload; as=style")
    );
    let cookies: Vec<&str> = page
        .headers
        .iter()
        .filter(|(n, _)| n == "set-cookie")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(cookies, ["a=1", "b=2"]);
    let script = at("/assets/index-B1x9aZq2.js");
    assert_eq!(script.header("cache-control"), Some("public, max-age=60"));
    assert_eq!(
        script.header("x-frame-options"),
        None,
        "`! Name` detaches it"
    );
    // The catalog's own URL of the same file is not the site's.
    let asset = at("/assets/app/1.0.0/assets/index-B1x9aZq2.js");
    assert_eq!(
        asset.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
}

#[test]
fn a_site_offers_its_files_as_dictionaries_for_its_own_urls() {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let ws = Workspace::new();
    let one = crate::deltas::release(&ws, "v1", 1);
    ws.publish("app@1.0.0", "v1", &[]);
    let two = crate::deltas::release(&ws, "v2", 2);
    ws.publish("app@1.1.0", "v2", &[]);
    ws.ok(&["site", "set", "default", "app"]);
    let server = Server::start(&ws, &[]);
    let chromium = "Accept-Encoding: gzip, deflate, br, zstd, dcb, dcz";
    let new_bundle = format!("/{}", two.bundle.0);
    // Offered for the site's URLs of the family, not the catalog's.
    let offered = get_on(server.addr, "localhost", &new_bundle, &[chromium]);
    assert_eq!(offered.status, 200);
    let offer = offered.header("use-as-dictionary").expect("offered");
    assert!(
        offer.starts_with(r#"match="/assets/index-*.js""#),
        "{offer}"
    );
    // A browser that holds release 1.0.0's bundle gets 1.1.0's as a
    // delta against it, at the site's URL.
    let holds = format!(
        "Available-Dictionary: :{}:",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&one.bundle.1))
    );
    let delta = get_on(
        server.addr,
        "localhost",
        &new_bundle,
        &[
            chromium,
            &holds,
            "Sec-Fetch-Site: same-origin",
            "Sec-Fetch-Mode: cors",
        ],
    );
    assert_eq!(delta.status, 200);
    assert_eq!(delta.header("content-encoding"), Some("dcb"));
    assert!(
        delta.body().len() * 10 < two.bundle.1.len(),
        "a delta of {} bytes for {}",
        delta.body().len(),
        two.bundle.1.len()
    );
}

//! The server's moving names: `latest`, dist-tags and ranges redirect with
//! an ETag naming the version they resolve to, so a cache revalidates them
//! with 304s until a publish, rm or tag change moves them; a package's
//! versions and tags at `/assets/PKG/`; a version's bare URL leads to its
//! entry file.

use crate::serve_util::{Client, Server, get};
use crate::util::Workspace;

/// Publishes `PKG@VERSION` with one file saying the version.
#[track_caller]
fn publish(ws: &Workspace, target: &str, extra: &[&str]) {
    let dir = format!("t-{}", target.replace(['/', '@'], "_"));
    ws.write(&format!("{dir}/v.txt"), format!("{target}\n"));
    ws.publish(target, &dir, extra);
}

#[test]
fn a_cached_alias_follows_a_publish_on_its_next_revalidation() {
    let ws = Workspace::new();
    publish(&ws, "app@1.0.0", &[]);
    let server = Server::start(&ws, &["--alias-max-age", "2min"]);
    let client = Client::new();
    let url = server.url("/assets/app/latest/v.txt?x=1");

    let first = client.get(&url, &[]);
    assert_eq!(first.status, 302);
    assert_eq!(first.must("location"), "/assets/app/1.0.0/v.txt?x=1");
    assert_eq!(first.must("cache-control"), "public, max-age=120");
    let etag = first.must("etag").to_string();

    // A cache revalidating while nothing moved: 304, no body, no Location.
    let again = client.get(&url, &[("If-None-Match", &etag)]);
    assert_eq!(again.status, 304);
    assert_eq!(again.must("etag"), etag);
    assert_eq!(again.must("cache-control"), "public, max-age=120");
    assert_eq!(again.header("location"), None);
    assert!(again.body.is_empty());
    for r in [&first, &again] {
        assert_eq!(r.must("access-control-allow-origin"), "*");
    }

    // A publish moves `latest`: the next revalidation sees it at once.
    publish(&ws, "app@1.1.0", &[]);
    let moved = client.get(&url, &[("If-None-Match", &etag)]);
    assert_eq!(moved.status, 302);
    assert_eq!(moved.must("location"), "/assets/app/1.1.0/v.txt?x=1");
    let etag_11 = moved.must("etag").to_string();
    assert_ne!(etag_11, etag);
    assert_eq!(client.get(&url, &[("If-None-Match", &etag_11)]).status, 304);

    // So does a tag change, an rm and a forced republish (a new row).
    ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    let tagged = client.get(&url, &[("If-None-Match", &etag_11)]);
    assert_eq!(tagged.status, 302);
    assert_eq!(tagged.must("location"), "/assets/app/1.0.0/v.txt?x=1");
    let pinned = tagged.must("etag").to_string();
    ws.ok(&["rm", "app@1.0.0"]);
    let after_rm = client.get(&url, &[("If-None-Match", &pinned)]);
    assert_eq!(after_rm.status, 302);
    assert_eq!(after_rm.must("location"), "/assets/app/1.1.0/v.txt?x=1");
    assert_eq!(after_rm.must("etag"), etag_11);
    ws.ok(&["publish", "app@1.1.0", "t-app_1.1.0", "--force", "--quiet"]);
    let forced = client.get(&url, &[("If-None-Match", &etag_11)]);
    assert_eq!(forced.status, 302, "a republished version is a new target");
    assert_ne!(forced.must("etag"), etag_11);

    // Ranges and other tags carry their ETag the same way.
    ws.ok(&["tag", "add", "app@1.1.0", "next"]);
    for alias in ["next", "^1", "1.x"] {
        let r = client.get(&server.url(&format!("/assets/app/{alias}/")), &[]);
        assert_eq!(r.status, 302, "{alias}");
        assert_eq!(r.must("location"), "/assets/app/1.1.0/", "{alias}");
        let tag = r.must("etag").to_string();
        let url = server.url(&format!("/assets/app/{alias}/v.txt"));
        assert_eq!(client.get(&url, &[("If-None-Match", &tag)]).status, 304);
    }
    // An exact version's file is not an alias.
    let exact = client.get(&server.url("/assets/app/1.1.0/v.txt"), &[]);
    assert_eq!(exact.status, 200);
}

#[test]
fn alias_max_age_is_configurable_and_zero_always_revalidates() {
    let ws = Workspace::new();
    publish(&ws, "app@1.0.0", &[]);
    let server = Server::start(&ws, &["--alias-max-age", "0s"]);
    let r = get(&server.url("/assets/app/latest/v.txt"), &[]);
    assert_eq!(r.must("cache-control"), "public, max-age=0");
    let out = ws.fails(&["serve", "--port", "0", "--alias-max-age", "soon"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--alias-max-age"), "{err}");
}

#[test]
fn tags_missing_and_malformed_aliases() {
    let ws = Workspace::new();
    publish(&ws, "app@1.0.0", &[]);
    publish(&ws, "app@2.0.0-rc.1", &["--tag", "next"]);
    let server = Server::start(&ws, &[]);
    let r = get(&server.url("/assets/app/next/v.txt"), &[]);
    assert_eq!(r.status, 302);
    assert_eq!(r.must("location"), "/assets/app/2.0.0-rc.1/v.txt");
    let r = get(&server.url("/assets/app/beta/v.txt"), &[]);
    assert_eq!(r.status, 404);
    let body = r.json();
    assert_eq!(body["missing"], "tag");
    assert_eq!(body["tag"], "beta");
    assert_eq!(body["error"], "app has no dist-tag `beta`");
    let r = get(&server.url("/assets/app/a%20b/v.txt"), &[]);
    assert_eq!(r.status, 400, "{}", r.text());
}

/// A range in a URL is read in npm's grammar, as a `package.json` range:
/// alternatives, hyphen ranges, x ranges, and pre-releases only for a
/// range that names one.
#[test]
fn url_ranges_are_npm_ranges() {
    let ws = Workspace::new();
    for version in ["1.4.0", "1.9.0", "2.3.0", "3.0.0-rc.1"] {
        publish(&ws, &format!("app@{version}"), &[]);
    }
    let server = Server::start(&ws, &[]);
    for (range, to) in [
        ("%5E1.2%20%7C%7C%20%5E2", "2.3.0"),
        ("^1.2%20||%20~1.4", "1.9.0"),
        ("1.0%20-%201.5", "1.4.0"),
        ("1.x", "1.9.0"),
        ("%3E%3D2", "2.3.0"),
        ("%5E3.0.0-rc.0", "3.0.0-rc.1"),
    ] {
        let r = get(&server.url(&format!("/assets/app/{range}/v.txt")), &[]);
        assert_eq!(r.status, 302, "{range}: {}", r.text());
        assert_eq!(
            r.must("location"),
            format!("/assets/app/{to}/v.txt"),
            "{range}"
        );
    }
    let r = get(&server.url("/assets/app/4%20%7C%7C%205/v.txt"), &[]);
    assert_eq!(r.status, 404, "{}", r.text());
}

#[test]
fn a_package_lists_its_versions_tags_and_dates() {
    let ws = Workspace::new();
    publish(&ws, "@s/app@1.0.0", &[]);
    publish(&ws, "@s/app@2.0.0-rc.1", &["--tag", "next"]);
    let server = Server::start(&ws, &[]);
    let client = Client::new();
    let url = server.url("/assets/@s/app/");
    let r = client.get(&url, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.must("content-type"), "application/json");
    assert_eq!(r.must("cache-control"), "public, max-age=60");
    let doc = r.json();
    assert_eq!(doc["package"], "@s/app");
    assert_eq!(
        doc["tags"],
        serde_json::json!([
            {"tag": "latest", "version": "1.0.0", "explicit": false},
            {"tag": "next", "version": "2.0.0-rc.1", "explicit": true},
        ])
    );
    let versions = doc["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["version"], "2.0.0-rc.1");
    assert_eq!(versions[0]["tags"], serde_json::json!(["next"]));
    assert_eq!(versions[1]["tags"], serde_json::json!(["latest"]));
    assert_eq!(
        versions[1]["published_at"],
        ws.json(&["ls", "@s/app", "--json"])[1]["published_at"]
    );
    let etag = r.must("etag").to_string();
    assert_eq!(client.get(&url, &[("If-None-Match", &etag)]).status, 304);
    publish(&ws, "@s/app@1.1.0", &[]);
    let changed = client.get(&url, &[("If-None-Match", &etag)]);
    assert_eq!(changed.status, 200);
    assert_ne!(changed.must("etag"), etag);
    assert_eq!(changed.json()["tags"][0]["version"], "1.1.0");

    let missing = client.get(&server.url("/assets/nope/"), &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["missing"], "package");
}

#[test]
fn a_bare_version_leads_to_its_entry_file() {
    let ws = Workspace::new();
    ws.write(
        "lib/package.json",
        r#"{"name":"lib","version":"1.0.0","main":"dist/lib.cjs",
            "exports":{".":{"require":"./dist/lib.cjs","import":"./dist/lib.mjs"},"./x":"./x.js"}}"#,
    );
    ws.write("lib/dist/lib.cjs", "module.exports = 1;\n");
    ws.write("lib/dist/lib.mjs", "export default 1;\n");
    ws.write("lib/index.html", "<p>docs</p>\n");
    ws.ok(&["publish", "lib", "--quiet"]);
    ws.write("site/index.html", "<p>site</p>\n");
    ws.write("site/app.js", "1;\n");
    ws.publish("site@1.0.0", "site", &[]);
    ws.write("css/a.css", "a{}\n");
    ws.publish("css@1.0.0", "css", &[]);
    let server = Server::start(&ws, &[]);
    let client = Client::new();

    for (path, to) in [
        ("/assets/lib/1.0.0", "/assets/lib/1.0.0/dist/lib.mjs"),
        (
            "/assets/site/1.0.0?v=2",
            "/assets/site/1.0.0/index.html?v=2",
        ),
        ("/assets/css/1.0.0", "/assets/css/1.0.0/"),
    ] {
        let r = client.get(&server.url(path), &[]);
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.must("location"), to, "{path}");
        assert_eq!(
            r.must("cache-control"),
            "public, max-age=31536000, immutable",
            "{path}: an exact version's entry never changes"
        );
    }
    // The package and its aliases lead to `latest`'s entry, revalidated.
    for path in ["/assets/lib", "/assets/lib/latest", "/assets/lib/^1"] {
        let r = client.get(&server.url(path), &[]);
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.must("location"), "/assets/lib/1.0.0/dist/lib.mjs");
        assert_eq!(r.must("cache-control"), "public, max-age=60");
        let etag = r.must("etag").to_string();
        let again = client.get(&server.url(path), &[("If-None-Match", &etag)]);
        assert_eq!(again.status, 304, "{path}");
    }
    // The listing keeps its trailing slash.
    let listing = client.get(&server.url("/assets/lib/1.0.0/"), &[]);
    assert_eq!(listing.status, 200);
    assert_eq!(listing.json()["files"].as_array().map(Vec::len), Some(4));
    let missing = client.get(&server.url("/assets/lib/9.9.9"), &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["missing"], "version");
}

/// URLs copied from unpkg (`/react@18.3.1/umd/...`, `/PKG@RANGE/...`) and
/// the same shape under /assets/ answer as their /assets/PKG/VERSION/ form
/// does: the file (same bytes, same ETag), or the same redirect; a
/// package part that is no package gets a 400 naming the URL to use.
#[test]
fn unpkg_s_urls_answer_as_their_assets_form_does() {
    let ws = Workspace::new();
    ws.write("react/umd/react.production.min.js", "/* react */\n");
    ws.write(
        "react/package.json",
        r#"{"name": "react", "version": "18.3.1", "main": "umd/react.production.min.js"}"#,
    );
    ws.publish("react@18.3.1", "react", &[]);
    ws.write("scoped/index.js", "export {};\n");
    ws.publish("@s/app@1.0.0", "scoped", &[]);
    let server = Server::start(&ws, &[]);
    let client = Client::new();
    let same = |copied: &str, canonical: &str| {
        let a = client.get(&server.url(copied), &[("Accept-Encoding", "gzip")]);
        let b = client.get(&server.url(canonical), &[("Accept-Encoding", "gzip")]);
        assert_eq!(a.status, b.status, "{copied}");
        assert_eq!(a.body, b.body, "{copied}");
        for header in ["etag", "location", "cache-control", "content-type"] {
            assert_eq!(a.header(header), b.header(header), "{copied}: {header}");
        }
        a
    };
    let file = same(
        "/react@18.3.1/umd/react.production.min.js",
        "/assets/react/18.3.1/umd/react.production.min.js",
    );
    assert_eq!(file.status, 200);
    assert_eq!(file.text(), "/* react */\n");
    same(
        "/assets/react@18.3.1/umd/react.production.min.js",
        "/assets/react/18.3.1/umd/react.production.min.js",
    );
    // jsDelivr's shape.
    same(
        "/npm/react@18.3.1/umd/react.production.min.js",
        "/assets/react/18.3.1/umd/react.production.min.js",
    );
    same(
        "/npm/@s/app@1.0.0/index.js",
        "/assets/@s/app/1.0.0/index.js",
    );
    let moved = same(
        "/react@^18.2/umd/react.production.min.js?v=1",
        "/assets/react/^18.2/umd/react.production.min.js?v=1",
    );
    assert_eq!(moved.status, 302);
    assert_eq!(
        moved.must("location"),
        "/assets/react/18.3.1/umd/react.production.min.js?v=1"
    );
    let entry = same("/react@18", "/assets/react/18");
    assert_eq!(entry.status, 302);
    same("/@s/app@1.0.0/index.js", "/assets/@s/app/1.0.0/index.js");
    same("/@s/app@latest/", "/assets/@s/app/latest/");
    same("/react@19.0.0/x.js", "/assets/react/19.0.0/x.js");
    let bad = client.get(&server.url("/assets/react@/umd/x.js"), &[]);
    assert_eq!(bad.status, 400);
    assert!(
        bad.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("/assets/react/VERSION/umd/x.js")),
        "{}",
        bad.text()
    );
    assert_eq!(client.get(&server.url("/react/index.js"), &[]).status, 404);
}

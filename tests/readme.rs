//! README.md's "Using ccc as your CDN" snippet stays true: every
//! `<script>` in it names a file of the bundled example site, and its
//! `integrity` is what ccc computes for that file and what the server
//! sends, so a change to examples/site or to ccc that breaks the snippet
//! fails here.

use crate::serve_util::{Server, get};
use crate::util::{Workspace, repo_root};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The ```html block of the README section `heading`.
fn html_block(heading: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no `## {heading}`"))
        .1;
    let section = section.split("\n## ").next().unwrap_or_default();
    let block = section
        .split_once("```html\n")
        .unwrap_or_else(|| panic!("`## {heading}` has no html block"))
        .1;
    block.split("```").next().unwrap_or_default().to_string()
}

/// The value of `name="..."` in `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[start..].split('"').next()
}

fn sri(bytes: &[u8]) -> String {
    format!("sha256-{}", STANDARD.encode(Sha256::digest(bytes)))
}

#[test]
fn the_cdn_snippet_integrity_is_what_ccc_serves() {
    let html = html_block("Using ccc as your CDN");
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert!(!scripts.is_empty(), "no <script> in\n{html}");
    assert!(
        scripts.iter().any(|s| attr(s, "type") == Some("module")),
        "a module script: {html}"
    );

    let ws = Workspace::new();
    let mut published = None;
    let mut server = None;
    for tag in scripts {
        let src = attr(tag, "src").unwrap_or_else(|| panic!("no src in {tag}"));
        let integrity = attr(tag, "integrity").unwrap_or_else(|| panic!("no integrity in {tag}"));
        assert_eq!(attr(tag, "crossorigin"), Some("anonymous"), "{tag}");
        // https://HOST/assets/PKG/VERSION/PATH
        let url_path = src
            .find("/assets/")
            .map(|i| &src[i..])
            .unwrap_or_else(|| panic!("{src} is not a ccc asset URL"));
        let mut parts = url_path["/assets/".len()..].splitn(3, '/');
        let (package, version, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(p), Some(v), Some(path)) => (p, v, path),
            _ => panic!("{src}: want /assets/PKG/VERSION/PATH"),
        };
        assert!(
            semver::Version::parse(version).is_ok(),
            "{src}: integrity needs an exact version, not `{version}`"
        );
        let spec = format!("{package}@{version}");
        // The bundled example, published under the snippet's name.
        if published.as_ref() != Some(&spec) {
            assert!(published.is_none(), "one package in the snippet");
            let site = repo_root().join("examples/site");
            ws.ok(&[
                "publish",
                &spec,
                site.to_str().expect("UTF-8 path"),
                "--quiet",
            ]);
            published = Some(spec.clone());
            server = Some(Server::start(&ws, &[]));
        }

        let on_disk = std::fs::read(repo_root().join("examples/site").join(path))
            .unwrap_or_else(|e| panic!("examples/site/{path}: {e}"));
        assert_eq!(integrity, sri(&on_disk), "README's integrity for {path}");

        // What ccc computes, as the README says to get it, and as its
        // file list says.
        let file = ws.json(&["inspect", &format!("{spec}/{path}"), "--json"]);
        assert_eq!(file["integrity"], integrity, "ccc inspect {spec}/{path}");
        let listing = ws.json(&["ls", &spec, "--json"]);
        let listed = listing["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} not in ccc ls {spec}"));
        assert_eq!(listed["integrity"], integrity, "ccc ls {spec}");

        // What a browser gets (no gzip asked, the bytes it hashes).
        let server = server.as_ref().expect("started");
        let served = get(&server.url(url_path), &[("Origin", "https://app.example")]);
        assert_eq!(served.status, 200, "{url_path}");
        assert_eq!(integrity, sri(&served.body), "{url_path} as served");
        // SRI on a cross-origin script needs CORS.
        assert_eq!(
            served.header("access-control-allow-origin"),
            Some("*"),
            "{url_path}"
        );
        if attr(tag, "type") == Some("module") {
            assert!(
                served.must("content-type").starts_with("text/javascript"),
                "{url_path}"
            );
        }
    }
}

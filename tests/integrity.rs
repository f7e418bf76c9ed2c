//! SRI `integrity` in every file listing: `ccc ls PKG@VERSION --json`,
//! `ccc inspect --json` (a version and one file) and the server's
//! `/assets/PKG/VERSION/`, checked against digests computed here from the
//! original files, and against a value known from outside ccc.

use crate::serve_util::{Server, get};
use crate::util::{Rng, Workspace};
use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// `sha256-` and the base64 of the bytes' digest, computed here.
fn sri(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// `path -> integrity` of a listing's `files`.
fn integrities(listing: &serde_json::Value) -> BTreeMap<String, String> {
    listing["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().expect("path").to_string(),
                f["integrity"].as_str().expect("integrity").to_string(),
            )
        })
        .collect()
}

#[test]
fn every_listing_carries_the_sri_of_the_original_bytes() {
    let ws = Workspace::new();
    let mut rng = Rng::new(31);
    let tree: Vec<(String, Vec<u8>)> = vec![
        ("empty.txt".into(), Vec::new()),
        ("js/app.js".into(), rng.text(50_000)),
        ("js/copy.js".into(), rng.text(3_000)),
        ("img/noise.bin".into(), rng.bytes(20_000)),
    ];
    ws.write_tree("dist", &tree);
    ws.publish("app@1.0.0", "dist", &[]);
    let want: BTreeMap<String, String> = tree
        .iter()
        .map(|(path, bytes)| (path.clone(), sri(bytes)))
        .collect();
    // The SRI of no bytes, as every SRI tool prints it.
    assert_eq!(
        want["empty.txt"],
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    );

    let ls = ws.json(&["ls", "app@1.0.0", "--json"]);
    assert_eq!(integrities(&ls), want);
    let inspect = ws.json(&["inspect", "app@latest", "--json"]);
    assert_eq!(integrities(&inspect), want);
    for (path, integrity) in &want {
        let one = ws.json(&["inspect", &format!("app@1.0.0/{path}"), "--json"]);
        assert_eq!(one["integrity"], integrity.as_str(), "{path}");
    }
    let server = Server::start(&ws, &[]);
    let listing = get(&server.url("/assets/app/1.0.0/"), &[]);
    assert_eq!(listing.status, 200);
    assert_eq!(integrities(&listing.json()), want);
    // And it is the digest of what the server sends.
    for (path, integrity) in &want {
        let body = get(&server.url(&format!("/assets/app/1.0.0/{path}")), &[]).body;
        assert_eq!(&sri(&body), integrity, "{path}");
    }
}

//! `ccc serve` when the catalog goes wrong under it: a stored blob no
//! longer matches its sha256. The server keeps answering, and no body it
//! sends is one the test did not expect for that URL.

use crate::serve_util::{Server, get, raw_get};
use crate::util::{Rng, Workspace, gunzip};
use std::io::Write;

const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");

/// A tree whose files differ by `tag`: text stored gzip, and bytes stored
/// as they are.
fn tree(tag: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        ("v.txt".to_string(), format!("version {tag}\n").into_bytes()),
        (
            "app.js".to_string(),
            format!("console.log('{tag}');\n").repeat(300).into_bytes(),
        ),
        (
            "logo.bin".to_string(),
            Rng::new(tag.len() as u64).bytes(4096),
        ),
    ]
}

/// Publishes `app@VERSION` from `files` into the catalog `db` (a name in
/// the workspace).
fn publish_into(ws: &Workspace, db: &str, version: &str, files: &[(String, Vec<u8>)]) {
    let dir = format!("src-{db}-{version}");
    ws.write_tree(&dir, files);
    ws.ok(&[
        "publish",
        &format!("app@{version}"),
        &dir,
        "--quiet",
        "--db",
        db,
    ]);
}

/// The bytes a client gets for `path` of `app@1.0.0`, gzip undone.
fn fetch(server: &Server, version: &str, path: &str, accept: &[(&str, &str)]) -> (u16, Vec<u8>) {
    let r = get(
        &server.url(&format!("/assets/app/{version}/{path}")),
        accept,
    );
    let body = if r.header("content-encoding") == Some("gzip") {
        gunzip(&r.body)
    } else {
        r.body
    };
    (r.status, body)
}

/// Rewrites the stored body of `app@1.0.0/PATH`.
fn tamper(ws: &Workspace, path: &str, body: &[u8]) {
    let conn = ws.conn();
    let changed = conn
        .execute(
            "UPDATE blobs SET body = ?1 WHERE id = (SELECT blob_id FROM assets WHERE path = ?2)",
            rusqlite::params![body, path],
        )
        .expect("update");
    assert_eq!(changed, 1, "{path}");
}

#[test]
fn a_blob_that_fails_its_sha256_is_answered_500_and_never_sent() {
    let ws = Workspace::new();
    let files = tree("old");
    publish_into(&ws, "cdn.db", "1.0.0", &files);
    let listed = ws.json(&["ls", "app@1.0.0", "--json"]);
    let sha = |path: &str| -> String {
        let file = listed
            .as_array()
            .expect("array")
            .iter()
            .find(|f| f["path"] == path);
        file.expect(path)["sha256"]
            .as_str()
            .expect("sha")
            .to_string()
    };
    let encoding = |path: &str| -> String {
        let file = listed
            .as_array()
            .expect("array")
            .iter()
            .find(|f| f["path"] == path);
        file.expect(path)["encoding"]
            .as_str()
            .expect("encoding")
            .to_string()
    };
    assert_eq!(
        (encoding("app.js"), encoding("logo.bin")),
        ("gzip".into(), "identity".into())
    );

    // A gzip stream that decodes fine, to other bytes; and one flipped bit
    // in a body stored as it is.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tree("evil")[1].1).expect("gzip");
    tamper(&ws, "app.js", &gz.finish().expect("gzip"));
    let mut logo = files[2].1.clone();
    logo[1000] ^= 0x10;
    tamper(&ws, "logo.bin", &logo);

    let server = Server::start(&ws, &[]);
    for path in ["app.js", "logo.bin"] {
        let target = format!("/assets/app/1.0.0/{path}");
        for method in ["GET", "HEAD"] {
            for accept in [&["Accept-Encoding: gzip"][..], &[][..]] {
                let r = raw_get(server.addr, method, &target, accept);
                assert_eq!(r.status, 500, "{method} {target} {accept:?}: {r:?}");
                let body = r.body();
                if method == "GET" {
                    assert_eq!(r.json()["status"], 500);
                }
                assert!(
                    body.len() < 200,
                    "an error, not the asset: {} bytes",
                    body.len()
                );
                assert_eq!(r.header("cache-control"), Some("no-store"));
            }
        }
    }
    // The intact file is served, and served right.
    for accept in [&[][..], &[GZIP][..]] {
        assert_eq!(
            fetch(&server, "1.0.0", "v.txt", accept),
            (200, files[0].1.clone())
        );
    }
    let stats = server.stats();
    assert_eq!(stats["cache"]["corrupt"], 8, "{stats}");
    assert_eq!(
        stats["cache"]["entries"], 1,
        "only the intact file is cached: {stats}"
    );
    let stderr = server.stderr();
    for path in ["app.js", "logo.bin"] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("app@1.0.0/{path}")))
            .unwrap_or_else(|| panic!("no line names app@1.0.0/{path}: {stderr}"));
        assert!(line.starts_with("error: "), "{line}");
        assert!(line.contains(&sha(path)), "the recorded sha256: {line}");
        assert!(line.contains("not served"), "{line}");
    }
    assert!(stderr.contains("content hashes to"), "{stderr}");

    // A body checked when it was loaded stays right in memory, whatever
    // happens to the disk afterwards.
    tamper(&ws, "v.txt", b"tampered after caching\n");
    for _ in 0..3 {
        assert_eq!(fetch(&server, "1.0.0", "v.txt", &[]).1, files[0].1);
    }
}

//! `ccc serve` when the catalog goes wrong under it: the file is replaced,
//! replaced by junk, or deleted while serving; a stored blob no longer
//! matches its sha256. In every case the server keeps answering, and no
//! body it sends is one the test did not expect for that URL.

use crate::serve_util::{Server, get, poll_until, raw_get};
use crate::util::{Rng, Workspace, gunzip};
use serde_json::Value;
use std::io::Write;
use std::time::Duration;

const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");
/// How long a change of the catalog file may take to show. The server
/// checks every 250 ms; the rest is room for a loaded machine.
const NOTICED: Duration = Duration::from_secs(5);

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

fn health(base: &str) -> (u16, Value) {
    let r = get(&format!("{base}/healthz"), &[]);
    (r.status, r.json())
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The server's stderr once it holds `count` lines with `needle` (log lines
/// travel through the log's thread and a pipe); bounded by [`NOTICED`].
#[track_caller]
fn stderr_with(server: &Server, needle: &str, count: usize) -> String {
    let seen = poll_until(NOTICED, || server.stderr().matches(needle).count() >= count);
    let stderr = server.stderr();
    assert!(
        seen.is_some(),
        "no {count} x {needle:?} on stderr: {stderr}"
    );
    stderr
}

#[test]
fn a_catalog_renamed_over_the_served_one_is_served_instead() {
    let ws = Workspace::new();
    let (old, new) = (tree("old"), tree("new"));
    publish_into(&ws, "cdn.db", "1.0.0", &old);
    let server = Server::start(&ws, &[]);
    let body = |path: &str| fetch(&server, "1.0.0", path, &[GZIP]);
    assert_eq!(body("v.txt"), (200, old[0].1.clone()));
    assert_eq!(body("app.js"), (200, old[1].1.clone()));
    // Published while the server holds the file open: SQLite's write-ahead
    // log (cdn.db-wal) outlives this writer, and must not leak into the
    // file renamed over cdn.db below.
    publish_into(&ws, "cdn.db", "1.1.0", &old);
    publish_into(&ws, "new.db", "1.0.0", &new);
    ws.write_tree("src-only", &[("only.txt".to_string(), b"only".to_vec())]);
    ws.ok(&[
        "publish",
        "solo@1.0.0",
        "src-only",
        "--quiet",
        "--db",
        "new.db",
    ]);
    std::fs::rename(ws.path().join("new.db"), ws.db()).expect("mv new.db cdn.db");

    // Old bytes until the switch, new bytes after it; nothing else, and
    // never old after new.
    let mut switched = false;
    let took = poll_until(NOTICED, || {
        for (i, path) in ["v.txt", "app.js", "logo.bin"].iter().enumerate() {
            let (status, got) = body(path);
            assert_eq!(status, 200, "{path}");
            if got == new[i].1 {
                switched = true;
            } else {
                assert_eq!(got, old[i].1, "{path}: neither the old nor the new bytes");
                assert!(!switched, "{path}: old bytes after new ones");
            }
        }
        switched && body("v.txt").1 == new[0].1
    });
    assert!(
        took.is_some(),
        "the new catalog is not served after {NOTICED:?}"
    );
    for (i, path) in ["v.txt", "app.js", "logo.bin"].iter().enumerate() {
        assert_eq!(body(path), (200, new[i].1.clone()), "{path}");
        assert_eq!(fetch(&server, "1.0.0", path, &[]).1, new[i].1, "{path}");
    }
    assert_eq!(
        get(&server.url("/assets/solo/1.0.0/only.txt"), &[]).body,
        b"only"
    );
    // Nothing of the old file's write-ahead log: 1.1.0 was never in new.db.
    assert_eq!(body("v.txt").0, 200);
    assert_eq!(fetch(&server, "1.1.0", "v.txt", &[]).0, 404);
    let latest = get(&server.url("/assets/app/latest/v.txt"), &[]);
    assert_eq!(latest.header("location"), Some("/assets/app/1.0.0/v.txt"));
    assert_eq!(
        ws.versions("app"),
        ["1.0.0"],
        "the CLI sees the new file alone"
    );

    let (status, h) = health(&server.base);
    assert_eq!((status, &h["status"]), (200, &Value::from("ok")), "{h}");
    assert_eq!(h["catalog"]["reloads"], 1, "{h}");
    let stderr = stderr_with(&server, "was replaced by another file", 1);
    assert_eq!(
        count(&stderr, "was replaced by another file"),
        1,
        "{stderr}"
    );
}

#[test]
fn a_file_that_is_not_a_catalog_renamed_over_it_is_refused() {
    let ws = Workspace::new();
    let (old, new) = (tree("old"), tree("new"));
    publish_into(&ws, "cdn.db", "1.0.0", &old);
    let server = Server::start(&ws, &[]);
    assert_eq!(fetch(&server, "1.0.0", "v.txt", &[]).1, old[0].1);
    ws.write("junk", b"this is not a catalog\n".repeat(50));
    std::fs::rename(ws.path().join("junk"), ws.db()).expect("mv junk cdn.db");

    let degraded = poll_until(NOTICED, || health(&server.base).1["status"] == "degraded");
    assert!(degraded.is_some(), "{}", health(&server.base).1);
    let (status, h) = health(&server.base);
    assert_eq!(status, 200, "it still answers: {h}");
    assert_eq!(h["catalog"]["state"], "rejected", "{h}");
    let problem = h["catalog"]["problem"].as_str().expect("problem");
    assert!(problem.contains("is not a SQLite database"), "{problem}");
    // Every file, cached or not, still comes from the catalog held open.
    for (i, path) in ["v.txt", "app.js", "logo.bin"].iter().enumerate() {
        for accept in [&[][..], &[GZIP][..]] {
            assert_eq!(
                fetch(&server, "1.0.0", path, accept),
                (200, old[i].1.clone())
            );
        }
    }
    // One line for one bad file, however many checks saw it.
    stderr_with(&server, "cannot serve", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let stderr = server.stderr();
    assert_eq!(count(&stderr, "cannot serve"), 1, "{stderr}");

    publish_into(&ws, "good.db", "1.0.0", &new);
    std::fs::rename(ws.path().join("good.db"), ws.db()).expect("mv good.db cdn.db");
    let served = poll_until(NOTICED, || {
        fetch(&server, "1.0.0", "v.txt", &[]).1 == new[0].1
    });
    assert!(
        served.is_some(),
        "a good catalog at the path is served again"
    );
    assert_eq!(fetch(&server, "1.0.0", "app.js", &[GZIP]).1, new[1].1);
    assert_eq!(health(&server.base).1["status"], "ok");
}

#[test]
fn a_deleted_catalog_is_served_from_the_open_file_until_one_is_back() {
    let ws = Workspace::new();
    let (old, new) = (tree("old"), tree("new"));
    publish_into(&ws, "cdn.db", "1.0.0", &old);
    let server = Server::start(&ws, &[]);
    assert_eq!(fetch(&server, "1.0.0", "v.txt", &[]).1, old[0].1);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", ws.db().display()));
    }
    let degraded = poll_until(NOTICED, || health(&server.base).1["status"] == "degraded");
    assert!(degraded.is_some(), "{}", health(&server.base).1);
    let (status, h) = health(&server.base);
    assert_eq!(
        (status, &h["catalog"]["state"]),
        (200, &Value::from("deleted")),
        "{h}"
    );
    // Not cached yet: read from the file the server still holds open.
    assert_eq!(
        fetch(&server, "1.0.0", "app.js", &[]),
        (200, old[1].1.clone())
    );
    assert_eq!(
        fetch(&server, "1.0.0", "logo.bin", &[GZIP]),
        (200, old[2].1.clone())
    );
    assert!(!ws.db().exists(), "serving never creates a catalog");
    stderr_with(&server, "is gone", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let stderr = server.stderr();
    assert_eq!(count(&stderr, "is gone"), 1, "warned once: {stderr}");

    publish_into(&ws, "cdn.db", "1.0.0", &new);
    let served = poll_until(NOTICED, || {
        fetch(&server, "1.0.0", "v.txt", &[]).1 == new[0].1
    });
    assert!(
        served.is_some(),
        "a catalog published at the path is served"
    );
    assert_eq!(health(&server.base).1["status"], "ok");
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
        let file = listed["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path);
        file.expect(path)["sha256"]
            .as_str()
            .expect("sha")
            .to_string()
    };
    let encoding = |path: &str| -> String {
        let file = listed["files"]
            .as_array()
            .expect("files")
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
    let stderr = stderr_with(&server, "not served", 8);
    for path in ["app.js", "logo.bin"] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("app@1.0.0/{path}")))
            .unwrap_or_else(|| panic!("no line names app@1.0.0/{path}: {stderr}"));
        assert!(line.starts_with("error: "), "{line}");
        assert!(line.contains(&sha(path)), "the recorded sha256: {line}");
        assert!(line.contains("not served"), "{line}");
    }
    // Both caught by the digest of the stored bytes, without decoding.
    assert!(stderr.contains("stored bytes hash to"), "{stderr}");

    // A body checked when it was loaded stays right in memory, whatever
    // happens to the disk afterwards.
    tamper(&ws, "v.txt", b"tampered after caching\n");
    for _ in 0..3 {
        assert_eq!(fetch(&server, "1.0.0", "v.txt", &[]).1, files[0].1);
    }
}

/// A replica with `--max-lag` is in the pool while its follower keeps
/// touching its heartbeat (`DB.follow`), and out of it (503 `stale`) when
/// the follower never did or stopped doing so.
#[test]
fn a_replica_whose_follower_stopped_says_stale_with_503() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "1\n");
    ws.publish("app@1.0.0", "dist", &[]);
    let heartbeat = std::path::PathBuf::from(format!("{}.follow", ws.db().display()));
    let server = Server::start(&ws, &["--max-lag", "3s"]);
    let health = || {
        let r = get(&server.url("/healthz"), &[]);
        (r.status, r.json())
    };
    let (status, h) = health();
    assert_eq!((status, &h["status"]), (503, &"stale".into()), "{h}");
    assert_eq!(
        h["catalog"]["follower"]["seen_secs_ago"],
        serde_json::Value::Null
    );
    assert_eq!(h["catalog"]["follower"]["max_lag_secs"], 3);
    // Said at start: no follower, and what to run.
    let said = |needle: &str| {
        poll_until(Duration::from_secs(5), || server.stderr().contains(needle)).is_some()
    };
    assert!(
        said("warning: --max-lag 3s but no follower has confirmed catalog")
            && server.stderr().contains("ccc follow REPLICA"),
        "{}",
        server.stderr()
    );
    // Still answers: only the load balancer's probe is told.
    assert_eq!(get(&server.url("/assets/app/1.0.0/a.js"), &[]).status, 200);

    std::fs::write(&heartbeat, b"").expect("the follower's touch");
    let (status, h) = health();
    assert_eq!((status, &h["status"]), (200, &"ok".into()), "{h}");
    // The log says it turned current, within a staleness check.
    assert!(said("note: replica current again"), "{}", server.stderr());
    assert_eq!(h["catalog"]["follower"]["stale"], false);
    let metrics = get(&server.url("/metrics"), &[]).text();
    assert!(
        metrics.lines().any(|l| l == "ccc_catalog_stale 0"),
        "{metrics}"
    );

    // A follower that stopped ten seconds ago.
    let ten_ago = std::time::SystemTime::now() - Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(&heartbeat)
        .and_then(|f| f.set_modified(ten_ago))
        .expect("age the heartbeat");
    let (status, h) = health();
    assert_eq!((status, &h["status"]), (503, &"stale".into()), "{h}");
    assert!(
        h["catalog"]["follower"]["seen_secs_ago"].as_u64() >= Some(10),
        "{h}"
    );
    let metrics = get(&server.url("/metrics"), &[]).text();
    assert!(
        metrics.lines().any(|l| l == "ccc_catalog_stale 1"),
        "{metrics}"
    );
    // The log says it turned stale, once, and current again once.
    assert!(
        said("warning: replica stale: its follower last confirmed catalog"),
        "{}",
        server.stderr()
    );
    std::fs::write(&heartbeat, b"").expect("the follower's touch");
    assert!(
        poll_until(Duration::from_secs(5), || server
            .stderr()
            .matches("note: replica current again")
            .count()
            == 2)
        .is_some(),
        "{}",
        server.stderr()
    );
    assert_eq!(
        server.stderr().matches("warning: replica stale").count(),
        1,
        "{}",
        server.stderr()
    );

    // Without --max-lag there is no follower to judge.
    let plain = Server::start(&ws, &[]);
    let h = get(&plain.url("/healthz"), &[]).json();
    assert!(h["catalog"].get("follower").is_none(), "{h}");
}

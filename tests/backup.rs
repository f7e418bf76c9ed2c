//! One file to back up: after any command ends, and after `serve` stops,
//! the catalog is `cdn.db` alone, holding everything committed; its
//! `-wal` and `-shm` side files exist only while some process has it open,
//! and a reader that ends never disturbs another process's publish or serve.
//!
//! These tests open no read-only SQLite connection of their own (one would
//! leave the side files behind itself).

use crate::serve_util::{STARTUP, Server, get, sigterm};
use crate::util::{Rng, Workspace};
use std::path::Path;
use std::time::{Duration, Instant};

/// The names of the catalog's side files present in `dir`.
fn side_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the workspace")
        .map(|e| e.expect("a directory entry").file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cdn.db") && n != "cdn.db")
        .collect();
    names.sort();
    names
}

fn catalog_bytes(ws: &Workspace) -> Vec<u8> {
    std::fs::read(ws.db()).expect("read cdn.db")
}

/// Stops a server with SIGTERM and waits for its clean exit.
fn stop(mut server: Server) {
    sigterm(server.pid());
    let status = server
        .wait_exit(STARTUP)
        .expect("serve exits after SIGTERM");
    assert!(status.success(), "serve: {status}\n{}", server.stderr());
}

#[test]
fn every_command_leaves_only_cdn_db() {
    let ws = Workspace::new();
    ws.write("v1/index.html", "<p>1</p>\n");
    ws.write("v1/a.js", "let a = 1;\n");
    ws.write("v2/index.html", "<p>2</p>\n");
    ws.publish("app@1.0.0", "v1", &[]);
    assert_eq!(side_files(ws.path()), Vec::<String>::new(), "after publish");

    // Read-only commands: no side files afterwards, and not a byte of the
    // catalog changed.
    let before = catalog_bytes(&ws);
    for args in [
        &["ls"][..],
        &["ls", "--json"],
        &["ls", "app"],
        &["ls", "app@latest"],
        &["inspect", "app@1.0.0"],
        &["inspect", "app@1.0.0/a.js", "--json"],
        &["cat", "app@1.0.0/a.js"],
        &["cat", "app@^1/index.html", "--gzip"],
        &["verify", "--quiet"],
        &["export", "app", "out"],
    ] {
        ws.ok(args);
        assert_eq!(
            side_files(ws.path()),
            Vec::<String>::new(),
            "after {args:?}"
        );
        assert!(catalog_bytes(&ws) == before, "{args:?} changed cdn.db");
    }
    // A failing read-only command as well.
    ws.fails(&["cat", "app@1.0.0/missing.js"], 1);
    assert_eq!(
        side_files(ws.path()),
        Vec::<String>::new(),
        "after a failure"
    );

    // The server, stopped the way a service manager stops it.
    let server = Server::start(&ws, &[]);
    let r = get(&server.url("/assets/app/1.0.0/a.js"), &[]);
    assert_eq!(r.status, 200);
    stop(server);
    assert_eq!(side_files(ws.path()), Vec::<String>::new(), "after serve");
    assert!(catalog_bytes(&ws) == before, "serve changed cdn.db");

    // Writing commands, dry and real.
    for args in [
        &["publish", "app@2.0.0", "v2", "--quiet"][..],
        &["publish", "app@3.0.0", "v2", "--dry-run", "--quiet"],
        &["rm", "app@1.0.0", "--dry-run"],
        &["gc", "--keep", "1", "--dry-run"],
        &["gc", "--keep", "1"],
        &["rm", "app@2.0.0"],
        &["gc"],
    ] {
        ws.ok(args);
        assert_eq!(
            side_files(ws.path()),
            Vec::<String>::new(),
            "after {args:?}"
        );
    }
}

#[test]
fn side_files_last_while_serve_runs_and_the_file_alone_holds_everything_after() {
    let ws = Workspace::new();
    ws.write("v1/v.txt", "1.0.0");
    ws.write("v2/v.txt", "1.1.0");
    ws.publish("app@1.0.0", "v1", &[]);
    let server = Server::start(&ws, &[]);
    assert_eq!(
        side_files(ws.path()),
        ["cdn.db-shm", "cdn.db-wal"],
        "while serve has the catalog open"
    );

    // Commands that end while serve runs leave the side files to it, and
    // serve goes on serving, a version published meanwhile included.
    ws.ok(&["ls", "app"]);
    ws.publish("app@1.1.0", "v2", &[]);
    assert_eq!(side_files(ws.path()), ["cdn.db-shm", "cdn.db-wal"]);
    let r = get(&server.url("/assets/app/1.1.0/v.txt"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "1.1.0"));
    ws.ok(&["verify", "--quiet"]);
    let r = get(&server.url("/assets/app/1.0.0/v.txt"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "1.0.0"));

    // A live catalog is copied with SQLite's own snapshot, as README says
    // (`sqlite3 cdn.db "VACUUM INTO 'live-copy.db'"`): a read-write
    // connection, which closes without disturbing serve's side files.
    let live_copy = ws.path().join("live-copy.db");
    ws.conn()
        .execute(
            "VACUUM INTO ?1",
            [live_copy.to_str().expect("UTF-8 temp path")],
        )
        .expect("VACUUM INTO");
    assert_eq!(side_files(ws.path()), ["cdn.db-shm", "cdn.db-wal"]);
    assert_eq!(
        ws.ok(&["--db", "live-copy.db", "cat", "app@1.1.0/v.txt"])
            .stdout,
        b"1.1.0"
    );
    ws.ok(&["--db", "live-copy.db", "verify", "--quiet"]);

    stop(server);
    assert_eq!(side_files(ws.path()), Vec::<String>::new(), "after serve");

    // cdn.db alone, copied elsewhere, is the whole catalog.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let copy = elsewhere.path().join("copy.db");
    std::fs::copy(ws.db(), &copy).expect("copy cdn.db");
    let copy = copy.to_str().expect("UTF-8 temp path");
    let versions = ws.json(&["--db", copy, "ls", "app", "--json"]);
    let versions: Vec<&str> = versions
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v["version"].as_str().expect("version"))
        .collect();
    assert_eq!(versions, ["1.1.0", "1.0.0"]);
    ws.ok(&["--db", copy, "verify", "--quiet"]);
    assert_eq!(
        ws.ok(&["--db", copy, "cat", "app@1.1.0/v.txt"]).stdout,
        b"1.1.0"
    );
}

#[test]
fn readers_that_end_during_a_publish_leave_it_alone() {
    const FILES: usize = 8;
    let ws = Workspace::new();
    ws.write("small/a.js", "let a = 1;\n");
    ws.publish("app@1.0.0", "small", &[]);
    // Enough incompressible bytes that the publish spills into the WAL
    // (past SQLite's 2 MiB page cache) and then runs on for a while.
    let mut rng = Rng::new(11);
    for i in 0..FILES {
        ws.write(&format!("big/chunk-{i:02}.bin"), rng.bytes(1 << 20));
    }
    let wal = ws.path().join("cdn.db-wal");
    let wal_len = || std::fs::metadata(&wal).map_or(0, |m| m.len());

    let mut publish = ws
        .ccc_std()
        .args(["publish", "app@2.0.0", "big", "--quiet", "--level", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start publish");
    let started = Instant::now();
    while wal_len() < 256 << 10 {
        assert!(
            publish.try_wait().expect("try_wait").is_none(),
            "the publish ended before it wrote to the WAL; make the tree larger"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the publish wrote nothing to the WAL in 60s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Readers open and close the catalog while the publish holds it open
    // with uncommitted data in the WAL: they see the catalog as it was.
    let mut during = 0;
    for _ in 0..5 {
        assert_eq!(ws.versions("app"), ["1.0.0"]);
        if publish.try_wait().expect("try_wait").is_none() {
            during += 1;
        }
    }
    assert!(
        during > 0,
        "no reader ended while the publish ran; make the tree larger"
    );
    let out = publish.wait_with_output().expect("wait for publish");
    assert!(
        out.status.success(),
        "publish: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    assert_eq!(side_files(ws.path()), Vec::<String>::new());
    assert_eq!(ws.versions("app"), ["2.0.0", "1.0.0"]);
    ws.ok(&["verify", "--quiet"]);
    assert_eq!(ws.paths("app@2.0.0").len(), FILES);
}

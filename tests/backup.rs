//! One file to back up: after any command ends, and after `serve` stops,
//! the catalog is `cdn.db` alone, holding everything committed; its
//! `-wal` and `-shm` side files exist only while some process has it open,
//! and a reader that ends never disturbs another process's publish or serve.
//!
//! These tests open no read-only SQLite connection of their own (one would
//! leave the side files behind itself).

use crate::serve_util::{STARTUP, Server, get, sigterm};
use crate::util::{Rng, Workspace, ccc_path, hermetic};
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
        &["backup", "--quiet", "copy.db"],
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

/// The versions a catalog file holds, as `ccc ls PKG --json` lists them,
/// each checked to list as many files as it says it has.
fn versions_in(ws: &Workspace, db: &Path, package: &str) -> Vec<String> {
    let db = db.to_str().expect("UTF-8 path");
    let listed = ws.json(&["--db", db, "ls", package, "--json"]);
    let mut versions = Vec::new();
    for v in listed.as_array().expect("a list of versions") {
        let version = v["version"].as_str().expect("version").to_string();
        let files = ws.json(&["--db", db, "ls", &format!("{package}@{version}"), "--json"]);
        assert_eq!(
            files["files"].as_array().expect("files").len() as u64,
            v["file_count"].as_u64().expect("file_count"),
            "{package}@{version} in {db} is missing files"
        );
        versions.push(version);
    }
    versions
}

/// `ccc backup` while another process publishes version after version:
/// every copy opens, passes `ccc verify`, and holds exactly the versions
/// committed at some moment (a prefix of the publish order), each whole.
#[test]
fn backup_while_publishing_copies_one_commit() {
    let ws = Workspace::new();
    let mut rng = Rng::new(11);
    // Versions of a few MB each, so that a copy takes long enough to see
    // publishes commit in the middle of it.
    const VERSIONS: usize = 12;
    for v in 0..VERSIONS {
        for f in 0..8 {
            ws.write(&format!("v{v}/f{f}.bin"), rng.bytes(96 * 1024));
        }
    }
    ws.publish("app@0.0.0", "v0", &[]);
    let script = (1..VERSIONS)
        .map(|v| format!("\"$CCC\" publish -q app@0.0.{v} v{v} || exit 1"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut sh = std::process::Command::new("sh");
    hermetic(&mut sh);
    let mut publisher = sh
        .current_dir(ws.path())
        .env("CCC", ccc_path())
        .env("CCC_DB_PATH", ws.db())
        .args(["-c", &script])
        .spawn()
        .expect("start the publishing loop");
    let mut copies = 0;
    let mut seen = Vec::new();
    loop {
        let done = publisher.try_wait().expect("poll the publisher").is_some();
        let copy = ws.path().join(format!("copy{copies}.db"));
        ws.ok(&["backup", "-q", copy.to_str().expect("UTF-8 path")]);
        copies += 1;
        ws.ok(&["--db", copy.to_str().expect("UTF-8 path"), "verify", "-q"]);
        let mut versions = versions_in(&ws, &copy, "app");
        versions.reverse();
        let prefix: Vec<String> = (0..versions.len()).map(|v| format!("0.0.{v}")).collect();
        assert_eq!(versions, prefix, "copy {copies} holds no commit's state");
        seen.push(versions.len());
        if done {
            break;
        }
    }
    let status = publisher.wait().expect("wait for the publisher");
    assert!(status.success(), "the publishing loop failed: {status}");
    assert_eq!(*seen.last().expect("a copy"), VERSIONS, "{seen:?}");
    assert!(
        copies >= 2,
        "no copy was made during the publishes: {seen:?}"
    );
    // No temporary file or side file is left beside the copies.
    let leftovers: Vec<String> = std::fs::read_dir(ws.path())
        .expect("read the workspace")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || (n.starts_with("copy") && !n.ends_with(".db")))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn backup_refuses_to_overwrite_without_force() {
    let ws = Workspace::new();
    ws.write("v1/a.js", "let a = 1;\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.write("old.db", "keep me");
    let out = ws.fails(&["backup", "old.db"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("old.db: already exists; --force replaces it"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(ws.path().join("old.db")).expect("old.db"),
        b"keep me"
    );

    let report = ws.json(&["backup", "old.db", "--force", "--json"]);
    assert_eq!(report["replaced"], true, "{report}");
    assert_eq!(report["version_count"], 1, "{report}");
    assert_eq!(report["file_count"], 1, "{report}");
    assert_eq!(
        ws.json(&["--db", "old.db", "ls", "app", "--json"])[0]["version"],
        "1.0.0"
    );

    // Never the catalog itself, never a folder, and nothing left behind by
    // a backup that could not be written.
    let out = ws.fails(&["backup", "--force", "cdn.db"], 1);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is the catalog being backed up"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ws.fails(&["backup", "v1"], 1);
    ws.fails(&["backup", "no-such-dir/copy.db"], 1);
    let hidden: Vec<String> = std::fs::read_dir(ws.path())
        .expect("read the workspace")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

/// The entries of `dir` whose names start with `out` or `.out`: a copy, or
/// what a backup to `out` left behind.
fn left_of(dir: &Path, out: &str) -> Vec<String> {
    let hidden = format!(".{out}");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(out) || n.starts_with(&hidden))
        .collect();
    names.sort();
    names
}

#[test]
fn a_backup_that_cannot_be_written_names_its_destination_and_leaves_nothing() {
    let ws = Workspace::new();
    // 2 MB that do not compress, so the copy is that large too.
    ws.write("big/blob.bin", Rng::new(7).bytes(2_000_000));
    ws.publish("app@1.0.0", "big", &[]);
    let stderr_of = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();

    // The copy outgrows what the system lets the process write: a file
    // size limit (RLIMIT_FSIZE binds root as well), with SIGXFSZ ignored
    // so that the write fails instead of killing the process, as a full
    // disk makes it fail.
    let mut cmd = std::process::Command::new("sh");
    hermetic(&mut cmd);
    let out = cmd
        .current_dir(ws.path())
        .env("CCC_DB_PATH", ws.db())
        .args(["-c", r#"trap "" XFSZ; ulimit -f 512; exec "$0" "$@""#])
        .arg(ccc_path())
        .args(["backup", "--quiet", "copy.db"])
        .output()
        .expect("run ccc under a file size limit");
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: cannot write the backup copy.db: "),
        "names the destination: {stderr}"
    );
    assert!(!stderr.contains("cdn.db"), "not the catalog: {stderr}");
    assert!(
        !stderr.contains("partial"),
        "not the temporary file: {stderr}"
    );
    assert_eq!(left_of(ws.path(), "copy.db"), Vec::<String>::new());

    // A destination whose folder is missing.
    let out = ws.fails(&["backup", "no-such-dir/copy.db"], 1);
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains(
            "error: cannot write the backup no-such-dir/copy.db: folder no-such-dir does not exist"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("partial"), "{stderr}");
    assert_eq!(left_of(ws.path(), "copy.db"), Vec::<String>::new());

    // A file where the folder should be is named as such.
    ws.write("npm.db", "not a folder\n");
    for dest in ["npm.db/copy.db", "npm.db/sub/copy.db"] {
        let out = ws.fails(&["backup", dest], 1);
        let stderr = stderr_of(&out);
        assert!(
            stderr.contains(&format!(
                "error: cannot write the backup {dest}: npm.db is not a folder"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("os error"), "{stderr}");
    }
    // A folder that exists but takes no files is not said to be missing.
    let out = ws.fails(&["backup", "/proc/copy.db"], 1);
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains(
            "error: cannot write the backup /proc/copy.db: cannot create a file in /proc: \
             its file system takes no new files"
        ),
        "{stderr}"
    );

    // The catalog and the copy are still good once there is room.
    ws.ok(&["backup", "--quiet", "copy.db"]);
    ws.ok(&["--db", "copy.db", "verify", "--quiet"]);
}

//! `ccc publish`: what goes in comes out byte for byte, atomically.

use crate::util::{Rng, Workspace, gunzip, repo_root};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

#[test]
fn example_site_round_trips_through_cat() {
    let ws = Workspace::new();
    let site = repo_root().join("examples/site");
    ws.ccc()
        .args(["publish", "demo-site@1.0.0"])
        .arg(&site)
        .assert()
        .success();
    for entry in walkdir::WalkDir::new(&site) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(&site).unwrap().to_str().unwrap();
        let out = ws
            .ccc()
            .args(["cat", &format!("demo-site@1.0.0/{rel}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "cat {rel}");
        assert_eq!(out.stdout, std::fs::read(entry.path()).unwrap(), "{rel}");
    }
}

#[test]
fn an_existing_version_is_refused_without_force() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "console.log(1)\n");
    ws.ccc()
        .args(["publish", "app@1.0.0", "dist"])
        .assert()
        .success();
    ws.ccc()
        .args(["publish", "app@1.0.0", "dist"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("app@1.0.0 is already published"))
        // What --force costs, and the way that costs nothing.
        .stderr(predicates::str::contains(
            "hint: publish a new version (app@1.0.1): a published version is served \
             `immutable` for a year, so browsers and caches keep its old bytes, and pages \
             that pin its `integrity` stop loading once they change; --force replaces it \
             anyway, atomically",
        ));
}

#[test]
fn a_version_that_differs_only_in_build_metadata_is_refused() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "console.log(1)\n");
    ws.ok(&["publish", "app@1.0.0", "dist", "-q"]);
    let before = ws.snapshot();
    // Refused with or without --force, naming the published version; the
    // catalog and `latest` stay as they were.
    for extra in [&[][..], &["--force"]] {
        let mut args = vec!["publish", "app@1.0.0+build.5", "dist"];
        args.extend_from_slice(extra);
        ws.ccc()
            .args(&args)
            .assert()
            .code(1)
            .stderr(predicates::str::contains(
                "app@1.0.0+build.5 is the published app@1.0.0 again: \
                 they differ only in build metadata",
            ))
            .stderr(predicates::str::contains("ccc rm"));
        assert_eq!(ws.snapshot(), before, "{extra:?}");
    }
    assert_eq!(ws.versions("app"), ["1.0.0"]);
    let tags = ws.json(&["tag", "ls", "app", "--json"]);
    assert_eq!(tags[0]["version"], "1.0.0", "{tags}");

    // Build metadata is kept, and a twin of it is refused the same way,
    // the other way round too.
    ws.ok(&["publish", "app@2.0.0+build.1", "dist", "-q"]);
    for twin in ["app@2.0.0+build.2", "app@2.0.0"] {
        ws.ccc()
            .args(["publish", twin, "dist"])
            .assert()
            .code(1)
            .stderr(predicates::str::contains("the published app@2.0.0+build.1"));
    }
    assert_eq!(ws.versions("app"), ["2.0.0+build.1", "1.0.0"]);
    assert_eq!(ws.cat("app@latest/a.js"), b"console.log(1)\n");
    let latest = ws.json(&["ls", "app@latest", "--json"]);
    assert_eq!(latest["version"], "2.0.0+build.1", "{latest}");

    // Precedence leaves build metadata out, so `2.0.0` names the stored
    // `2.0.0+build.1`: on the command line, and in the server as an alias.
    assert_eq!(ws.cat("app@2.0.0/a.js"), b"console.log(1)\n");
    let exact = ws.json(&["ls", "app@2.0.0", "--json"]);
    assert_eq!(exact["version"], "2.0.0+build.1", "{exact}");
    let server = crate::serve_util::Server::start(&ws, &[]);
    let r = crate::serve_util::get(&server.url("/assets/app/2.0.0/a.js"), &[]);
    assert_eq!(r.status, 302);
    assert_eq!(r.must("location"), "/assets/app/2.0.0+build.1/a.js");
    let r = crate::serve_util::get(&server.url("/assets/app/2.0.0+build.1/a.js"), &[]);
    assert_eq!((r.status, r.body), (200, b"console.log(1)\n".to_vec()));
    let r = crate::serve_util::get(&server.url("/assets/app/2.0.0/nope.js"), &[]);
    assert_eq!(
        r.status, 302,
        "to the version, whose 404 says what is missing"
    );
    let r = crate::serve_util::get(&server.url("/assets/app/2.0.0+build.1/nope.js"), &[]);
    assert_eq!(r.status, 404);
    let r = crate::serve_util::get(&server.url("/assets/app/2.0.0/"), &[]);
    assert_eq!(r.status, 200, "the listing names the version it lists");
    assert_eq!(r.json()["version"], "2.0.0+build.1");
}

/// A tree with every kind of content and name the README promises to keep.
fn awkward_tree() -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(1);
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    let deep: String = (0..24).map(|i| format!("level{i}/")).collect();
    vec![
        ("index.html".into(), b"<!doctype html><p>hi</p>\n".to_vec()),
        ("js/app.js".into(), rng.text(300_000)),
        ("bin/all-bytes.bin".into(), all_bytes.clone()),
        ("bin/all-bytes-x64.bin".into(), all_bytes.repeat(64)),
        ("bin/noise.bin".into(), rng.bytes(100_000)),
        ("empty.txt".into(), Vec::new()),
        ("nested/empty".into(), Vec::new()),
        ("with space/a file name.txt".into(), b"spaces\n".to_vec()),
        (
            "ünï cødé/日本.txt".into(),
            "日本語のテキスト\n".as_bytes().to_vec(),
        ),
        ("100%.txt".into(), b"percent\n".to_vec()),
        ("%20literal.txt".into(), b"not decoded\n".to_vec()),
        ("a#b.txt".into(), b"hash\n".to_vec()),
        ("c++.js".into(), b"plus\n".to_vec()),
        ("user@host.txt".into(), b"at\n".to_vec()),
        ("@at-start.js".into(), b"at start\n".to_vec()),
        ("mix %#+@ ünï.css".into(), b"body{}\n".to_vec()),
        (format!("{deep}leaf.txt"), b"deep\n".to_vec()),
    ]
}

#[test]
fn every_file_cats_back_identical_and_gzip_streams_decode() {
    let ws = Workspace::new();
    let tree = awkward_tree();
    ws.write_tree("dist", &tree);
    assert!(tree.iter().any(|(p, _)| p.matches('/').count() >= 20));
    ws.publish("app@1.0.0", "dist", &[]);
    ws.publish("@acme/ui@2.0.0-rc.1", "dist", &[]);

    let want: BTreeSet<String> = tree.iter().map(|(p, _)| p.clone()).collect();
    for version in ["app@1.0.0", "@acme/ui@2.0.0-rc.1"] {
        let have: BTreeSet<String> = ws.paths(version).into_iter().collect();
        assert_eq!(have, want, "{version}: stored paths");
        for (path, bytes) in &tree {
            let target = format!("{version}/{path}");
            assert!(ws.cat(&target) == *bytes, "cat {target}: bytes differ");
            let gz = ws.ok(&["cat", "--gzip", &target]).stdout;
            assert_eq!(
                &gz[..2],
                &[0x1f, 0x8b],
                "cat --gzip {target}: no gzip magic"
            );
            assert!(gunzip(&gz) == *bytes, "cat --gzip {target}: bytes differ");
        }
    }
    // Both storage forms were exercised: noise is kept raw, text gzipped.
    let files = ws.files("app@1.0.0");
    let encoding =
        |path: &str| files.iter().find(|f| f["path"] == path).unwrap()["encoding"].clone();
    assert_eq!(encoding("bin/noise.bin"), "identity");
    assert_eq!(encoding("js/app.js"), "gzip");
}

#[test]
fn republishing_the_same_tree_stores_almost_nothing() {
    let ws = Workspace::new();
    let mut rng = Rng::new(2);
    let mut tree = Vec::new();
    for i in 0..30 {
        tree.push((format!("js/chunk-{i}.js"), rng.text(20_000 + i * 1000)));
    }
    for i in 0..5 {
        tree.push((format!("img/{i}.png"), rng.bytes(30_000)));
    }
    // The same content at two paths is stored once.
    tree.push(("js/copy-of-0.js".into(), tree[0].1.clone()));
    ws.write_tree("dist", &tree);

    let first = ws.publish_json("app@1.0.0", "dist", &[]);
    assert_eq!(first["file_count"], tree.len() as u64);
    // The copy repeats content of this version: not "already stored".
    let copy = tree.last().map_or(0, |(_, b)| b.len() as u64);
    assert_groups(&first, [tree.len() as u64 - 1, 0, 1]);
    assert_eq!(first["repeated_in_version"]["raw_bytes"], copy, "{first}");
    let (blobs_1, bytes_1) = ws.blob_totals();
    assert_eq!(first["new_content"]["stored_bytes"], bytes_1, "{first}");
    assert_eq!(
        blobs_1,
        tree.len() as i64 - 1,
        "duplicate content stored twice"
    );
    assert!(bytes_1 > 0);

    let second = ws.publish_json("app@1.1.0", "dist", &[]);
    let (blobs_2, bytes_2) = ws.blob_totals();
    assert_eq!(second["file_count"], tree.len() as u64);
    // Every file's content, the copy's too, was in the catalog already.
    assert_groups(&second, [0, tree.len() as u64, 0]);
    assert_eq!(second["new_content"]["stored_bytes"], 0, "{second}");
    assert_eq!(blobs_2, blobs_1);
    assert!(
        (bytes_2 - bytes_1) * 100 < bytes_1,
        "stored bytes grew from {bytes_1} to {bytes_2}"
    );
    assert_eq!(ws.versions("app"), ["1.1.0", "1.0.0"]);
}

#[test]
fn force_replaces_a_version_atomically() {
    let ws = Workspace::new();
    ws.write("v1/a.js", "old a\n");
    ws.write("v1/only-old.js", "only in the old tree\n");
    ws.write("v1/same.css", "body{}\n");
    ws.write("v2/a.js", "new a, different bytes\n");
    ws.write("v2/only-new.js", "only in the new tree\n");
    ws.write("v2/same.css", "body{}\n");
    ws.publish("app@1.0.0", "v1", &[]);

    // Without --force: refused, nothing changes.
    let stderr = ws.publish_fails(&["publish", "app@1.0.0", "v2"], &["app@1.0.0"]);
    assert!(
        stderr.contains("--force"),
        "no hint about --force: {stderr}"
    );
    assert_eq!(ws.cat("app@1.0.0/a.js"), b"old a\n");

    let report = ws.publish_json("app@1.0.0", "v2", &["--force"]);
    assert_eq!(report["replaced"], true, "{report}");
    assert_eq!(ws.cat("app@1.0.0/a.js"), b"new a, different bytes\n");
    assert_eq!(ws.cat("app@1.0.0/only-new.js"), b"only in the new tree\n");
    assert_eq!(ws.cat("app@1.0.0/same.css"), b"body{}\n");
    let out = ws.fails(&["cat", "app@1.0.0/only-old.js"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("only-old.js"));
    assert_eq!(ws.paths("app@1.0.0"), ["a.js", "only-new.js", "same.css"]);
    assert_eq!(ws.versions("app"), ["1.0.0"]);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages.as_array().unwrap().len(), 1);
    assert_eq!(packages[0]["version_count"], 1);
    ws.ok(&["verify", "--quiet"]);
}

#[test]
fn dry_run_reports_and_changes_nothing() {
    let ws = Workspace::new();
    ws.write("v1/a.js", "a\n");
    ws.write("v2/a.js", "a\n");
    ws.write("v2/b.js", "b\n");
    ws.publish("app@1.0.0", "v1", &[]);
    let before = ws.snapshot();
    let report = ws.publish_json("app@2.0.0", "v2", &["--dry-run"]);
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["file_count"], 2);
    assert_groups(&report, [1, 1, 0]);
    assert_eq!(ws.snapshot(), before);
    ws.fails(&["ls", "app@2.0.0"], 1);

    // Into a catalog that does not exist yet: none is created.
    let fresh = Workspace::new();
    fresh.write("dist/a.js", "a\n");
    fresh.publish_json("app@1.0.0", "dist", &["--dry-run"]);
    assert!(!fresh.db().exists(), "a dry run created cdn.db");
}

/// Many files of distinct, compressible text: gzip -9 of all of it takes
/// seconds in a debug build.
fn large_tree(ws: &Workspace, dir: &str) -> u64 {
    let mut rng = Rng::new(4);
    let pool = rng.text(4 << 20);
    let (files, size) = (320, 340_000);
    for i in 0..files {
        let start = rng.below(pool.len() - size);
        let mut body = format!("/* chunk {i} */\n").into_bytes();
        body.extend_from_slice(&pool[start..start + size]);
        ws.write(&format!("{dir}/js/chunk-{i:03}.js"), body);
    }
    (files * size) as u64
}

fn wal_size(ws: &Workspace) -> u64 {
    let wal = ws.path().join("cdn.db-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

#[test]
fn a_publish_killed_midway_leaves_the_catalog_as_it_was() {
    use std::os::unix::process::ExitStatusExt;

    let ws = Workspace::new();
    ws.write("small/index.html", "<p>v1</p>\n");
    ws.write("small/a.js", "let a = 1;\n");
    ws.publish("app@1.0.0", "small", &[]);
    let total = large_tree(&ws, "big");
    assert!(total > 100_000_000);

    let before = ws.snapshot();
    let ls_before = ws.ok(&["ls", "app", "--json"]).stdout;
    let wal_before = wal_size(&ws);

    let mut child = ws
        .ccc_std()
        .args(["publish", "app@2.0.0", "big", "--level", "9", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start publish");
    // Mid-way: uncommitted blobs have started to spill into the WAL.
    let started = Instant::now();
    while wal_size(&ws) < wal_before + (256 << 10) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the publish ended ({status}) before it could be killed; make the tree larger");
        }
        // Generous: hashing and gzip -9 come before the first spill, and a
        // shared 2-core CI box can be slow.
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the publish wrote nothing to the WAL in 90s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the publish ended before it could be killed"
    );
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
    assert!(wal_size(&ws) > 0, "no uncommitted data was left behind");

    assert_eq!(ws.ok(&["ls", "app", "--json"]).stdout, ls_before);
    assert_eq!(ws.snapshot(), before);
    ws.fails(&["ls", "app@2.0.0"], 1);
    ws.ok(&["verify", "--quiet"]);
    // The writer's lock died with it: the next publish just works.
    ws.write("small2/a.js", "let a = 2;\n");
    ws.publish("app@3.0.0", "small2", &[]);
    assert_eq!(ws.versions("app"), ["3.0.0", "1.0.0"]);
}

/// The `skipped` entries of a publish report, as `path -> reason`.
fn skipped(report: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    report["skipped"]
        .as_array()
        .expect("skipped is an array")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_string(),
                s["reason"].as_str().expect("reason").to_string(),
            )
        })
        .collect()
}

/// A connection that keeps the SQLite database at `path` open, as a
/// running `ccc serve` does: its `-wal` and `-shm` files exist until it
/// closes.
fn hold_open(path: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("open the database");
    let _: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .expect("read the database");
    for side in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(side);
        assert!(
            std::path::Path::new(&name).exists(),
            "{} does not exist while the database is open",
            std::path::Path::new(&name).display()
        );
    }
    conn
}

#[test]
fn publishing_the_folder_that_holds_the_catalog_leaves_the_catalog_out() {
    let ws = Workspace::new();
    ws.write("site/index.html", "<p>1.0.0</p>\n");
    ws.publish("s@1.0.0", "site", &[]);
    let _reader = hold_open(&ws.db());
    // A leftover rollback journal, empty so that SQLite ignores it.
    ws.write("cdn.db-journal", "");
    ws.write("index.html", "<p>1.0.1</p>\n");
    let catalog_files = ["cdn.db", "cdn.db-journal", "cdn.db-shm", "cdn.db-wal"];

    // As a user types it: `ccc publish s@1.0.1 .` with the default ./cdn.db.
    let publish = |extra: &[&str]| {
        let mut cmd = ws.ccc();
        cmd.env("CCC_DB_PATH", "cdn.db")
            .args(["publish", "s@1.0.1", "."])
            .args(extra);
        cmd.output().expect("run ccc")
    };
    let dry = publish(&["--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    let stderr = String::from_utf8_lossy(&dry.stderr);
    for name in catalog_files {
        let warning = format!("warning: skipped {name}: ");
        assert!(stderr.contains(&warning), "no {warning:?} in:\n{stderr}");
    }
    let summary = String::from_utf8_lossy(&dry.stdout);
    assert!(summary.contains("  4 paths skipped"), "{summary}");

    let out = publish(&["--json"]);
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let left_out = skipped(&report);
    assert_eq!(
        left_out.keys().map(String::as_str).collect::<Vec<_>>(),
        catalog_files,
        "{report}"
    );
    for (path, reason) in &left_out {
        assert!(
            reason.contains("catalog being published into"),
            "{path}: {reason}"
        );
    }
    assert!(left_out["cdn.db-wal"].starts_with("the write-ahead log of"));
    assert_eq!(ws.paths("s@1.0.1"), ["index.html", "site/index.html"]);
}

#[test]
fn the_catalog_under_another_name_or_a_hard_link_is_left_out() {
    let ws = Workspace::new();
    ws.write("site/index.html", "<p>1.0.0</p>\n");
    ws.publish("s@1.0.0", "site", &[]);
    let _reader = hold_open(&ws.db());
    ws.write("dist/app.js", "export {};\n");
    ws.write("dist/x/y.js", "export {};\n");
    let root = ws.path();
    // Hard links: the same files under names that say nothing.
    for (file, link) in [
        ("cdn.db", "dist/data.bin"),
        ("cdn.db-wal", "dist/log.txt"),
        ("cdn.db-shm", "dist/x/y.map"),
    ] {
        std::fs::hard_link(root.join(file), root.join(link)).expect("hard link");
    }
    // The catalog named through a symlink: SQLite keeps the side files
    // beside the real file.
    std::os::unix::fs::symlink(ws.db(), root.join("alias.db")).expect("symlink");

    let out = ws
        .ccc()
        .env("CCC_DB_PATH", root.join("alias.db"))
        .args(["publish", "s@1.0.1", "dist", "--json"])
        .output()
        .expect("run ccc");
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let left_out = skipped(&report);
    assert_eq!(
        left_out.keys().map(String::as_str).collect::<Vec<_>>(),
        ["data.bin", "log.txt", "x/y.map"],
        "{report}"
    );
    // Known by identity, not merely as some catalog.
    for (path, reason) in &left_out {
        assert!(
            reason.contains("catalog being published into"),
            "{path}: {reason}"
        );
    }
    assert!(left_out["log.txt"].contains("write-ahead log"), "{report}");
    assert!(
        left_out["x/y.map"].contains("shared-memory index"),
        "{report}"
    );
    assert_eq!(ws.paths("s@1.0.1"), ["app.js", "x/y.js"]);
}

#[test]
fn another_ccc_catalog_in_the_tree_is_left_out() {
    let ws = Workspace::new();
    ws.write("other/a.js", "let a;\n");
    let vendor = ws.path().join("dist/vendor");
    std::fs::create_dir_all(&vendor).expect("mkdir");
    let other = vendor.join("other.db");
    ws.ok(&[
        "--db",
        other.to_str().expect("UTF-8"),
        "publish",
        "o@1.0.0",
        "other",
        "--quiet",
    ]);
    let _reader = hold_open(&other);
    ws.write("dist/vendor/other.db-journal", "");
    // A copy under a name that says nothing.
    std::fs::copy(&other, ws.path().join("dist/copy.bin")).expect("copy");
    ws.write("dist/index.html", "<p>hi</p>\n");

    let report = ws.publish_json("s@1.0.0", "dist", &[]);
    let left_out = skipped(&report);
    let want = [
        ("copy.bin", "a ccc catalog"),
        ("vendor/other.db", "a ccc catalog"),
        (
            "vendor/other.db-journal",
            "the rollback journal of the ccc catalog other.db",
        ),
        (
            "vendor/other.db-shm",
            "the shared-memory index of the ccc catalog other.db",
        ),
        (
            "vendor/other.db-wal",
            "the write-ahead log of the ccc catalog other.db",
        ),
    ];
    assert_eq!(left_out.len(), want.len(), "{report}");
    for (path, reason) in want {
        assert!(
            left_out.get(path).is_some_and(|r| r.starts_with(reason)),
            "{path}: want {reason:?}: {report}"
        );
    }
    assert_eq!(ws.paths("s@1.0.0"), ["index.html"]);
}

#[test]
fn a_damaged_copy_of_a_catalog_stops_the_publish() {
    let ws = Workspace::new();
    ws.write("site/index.html", "<p>hi</p>\n");
    ws.publish("s@1.0.0", "site", &[]);
    // Not a whole number of pages, so not a database SQLite would open,
    // but every version's content is in it.
    let mut copy = std::fs::read(ws.db()).expect("read cdn.db");
    copy.extend_from_slice(b"!");
    ws.write("dist/backup.bin", &copy);
    ws.write("dist/index.html", "<p>hi</p>\n");
    ws.publish_fails(
        &["publish", "s@1.0.1", "dist"],
        &["backup.bin", "is a ccc catalog", "--exclude"],
    );
    ws.publish("s@1.0.1", "dist", &["--exclude", "backup.bin"]);
    assert_eq!(ws.paths("s@1.0.1"), ["index.html"]);
}

#[test]
fn a_sqlite_file_that_is_not_a_ccc_catalog_is_published() {
    let ws = Workspace::new();
    let dist = ws.path().join("dist");
    std::fs::create_dir_all(&dist).expect("mkdir");
    {
        let db = rusqlite::Connection::open(dist.join("app.sqlite")).expect("create");
        db.execute_batch(
            "PRAGMA application_id = 42;
             CREATE TABLE t (x TEXT);
             INSERT INTO t VALUES ('a row'), ('another');",
        )
        .expect("fill");
    }
    let bytes = std::fs::read(dist.join("app.sqlite")).expect("read");
    assert!(bytes.starts_with(b"SQLite format 3\0") && bytes.len() >= 512);
    // Named like side files, but no catalog beside them.
    ws.write("dist/app.sqlite-wal", "not a log\n");
    ws.write("dist/notes-journal", "a diary\n");

    let report = ws.publish_json("s@1.0.0", "dist", &[]);
    assert_eq!(report["skipped"], serde_json::json!([]), "{report}");
    assert_eq!(
        ws.paths("s@1.0.0"),
        ["app.sqlite", "app.sqlite-wal", "notes-journal"]
    );
    assert!(ws.cat("s@1.0.0/app.sqlite") == bytes);
}

/// Checks the file counts of a publish report's three groups (new content,
/// already stored, repeated within the version), and that the groups add
/// up to the version's totals.
#[track_caller]
fn assert_groups(report: &serde_json::Value, [new, stored, repeated]: [u64; 3]) {
    let groups = ["new_content", "already_stored", "repeated_in_version"];
    let counts: Vec<_> = groups.iter().map(|g| &report[g]["file_count"]).collect();
    assert_eq!(counts, [new, stored, repeated], "{report}");
    for field in ["file_count", "raw_bytes", "stored_bytes"] {
        let sum: u64 = groups
            .iter()
            .map(|g| report[g][field].as_u64().expect("an integer"))
            .sum();
        assert_eq!(report[field], sum, "{field} of the groups: {report}");
    }
}

#[test]
fn a_first_publish_says_it_created_the_catalog_and_no_create_refuses_to() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "1\n");
    let db = ws.db();
    let refused = format!(
        "no catalog at {}, and --no-create forbids creating one",
        db.display()
    );
    // --no-create, or CCC_NO_CREATE: refused before any work, nothing made;
    // an empty file is no catalog either.
    for (flag, env, empty) in [
        (Some("--no-create"), None, false),
        (None, Some("1"), false),
        (Some("--no-create"), None, true),
    ] {
        if empty {
            std::fs::write(&db, b"").expect("empty file");
        }
        let mut cmd = ws.ccc();
        cmd.args(["publish", "app@1.0.0", "dist"]);
        cmd.args(flag);
        if let Some(value) = env {
            cmd.env("CCC_NO_CREATE", value);
        }
        cmd.assert()
            .code(1)
            .stderr(predicates::str::contains(refused.as_str()));
        let size = std::fs::metadata(&db).map(|m| m.len()).ok();
        assert_eq!(size, empty.then_some(0), "{flag:?} {env:?}");
    }
    std::fs::remove_file(&db).expect("remove the empty file");

    // A first publish creates it and says so, naming the whole path; the
    // next one says nothing of the kind, and --no-create writes into an
    // existing catalog as usual.
    let created = format!("created the catalog {}", db.display());
    ws.ccc()
        .args(["publish", "app@1.0.0", "dist"])
        .env("CCC_NO_CREATE", "0")
        .assert()
        .success()
        .stderr(predicates::str::contains(created.as_str()));
    for (version, extra) in [("1.0.1", None), ("1.0.2", Some("--no-create"))] {
        let mut cmd = ws.ccc();
        cmd.args(["publish", &format!("app@{version}"), "dist"])
            .args(extra);
        cmd.assert()
            .success()
            .stderr(predicates::prelude::PredicateBooleanExt::not(
                predicates::str::contains("created"),
            ));
    }
    assert_eq!(ws.versions("app"), ["1.0.2", "1.0.1", "1.0.0"]);
}

/// The mistake of the operators' story: a served catalog deleted by hand,
/// then a scripted publish. With --no-create the publish refuses, and the
/// server goes on exactly as it was, serving the file it holds open.
#[test]
fn a_refused_write_leaves_the_server_of_a_deleted_catalog_as_it_was() {
    use crate::serve_util::{Server, get, poll_until};
    let ws = Workspace::new();
    ws.write("dist/a.js", "1\n");
    ws.publish("app@1.0.0", "dist", &[]);
    let server = Server::start(&ws, &[]);
    let asset = server.url("/assets/app/1.0.0/a.js");
    // All of it but the age, which grows by itself.
    let health = || {
        let mut health = get(&server.url("/healthz"), &[]).json();
        health["catalog"]["age_secs"].take();
        health
    };
    assert_eq!(get(&asset, &[]).body, b"1\n");
    for side in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{side}", ws.db().display()));
    }
    let noticed = poll_until(Duration::from_secs(5), || {
        health()["catalog"]["state"] == "deleted"
    });
    assert!(noticed.is_some(), "{}", health());
    let before = health();

    ws.ccc()
        .args(["publish", "app@2.0.0", "dist", "--no-create"])
        .assert()
        .code(1);
    assert!(!ws.db().exists(), "no new catalog");
    // Past the server's staleness bound: nothing moved.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(health(), before);
    let r = get(&asset, &[]);
    assert_eq!((r.status, r.body), (200, b"1\n".to_vec()));
    assert_eq!(get(&server.url("/assets/app/2.0.0/a.js"), &[]).status, 404);
}

/// Mistakes a publish goes through with, said on stderr (and in --json's
/// `warnings`), even with --quiet: the project folder published instead
/// of its build (most files under node_modules/, naming dist/ when it is
/// there), a new package whose name differs from one in the catalog only
/// in case, and a PKG@VERSION the folder's package.json disagrees with.
#[test]
fn likely_mistakes_are_published_with_a_warning() {
    let ws = Workspace::new();
    ws.write(
        "project/package.json",
        r#"{"name": "app", "version": "1.3.0"}"#,
    );
    ws.write("project/dist/index.js", "export {};\n");
    for i in 0..5 {
        ws.write(
            &format!("project/node_modules/dep{i}/index.js"),
            "module.exports = 1;\n",
        );
    }
    let out = ws.ok(&["publish", "app@1.4.0", "project", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "warning: 5 of 7 files published as app@1.4.0 are under node_modules/: was \
             `ccc publish app@1.4.0 project/dist` meant? (--exclude node_modules leaves them out)"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning: published as app@1.4.0, but the package.json in")
            && err.contains("says app@1.3.0"),
        "{err}"
    );
    // The build alone, named from package.json: nothing to say.
    ws.write(
        "project/dist/package.json",
        r#"{"name": "app", "version": "1.5.0"}"#,
    );
    let out = ws.ok(&["publish", "project/dist", "--quiet"]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    ws.write("json/index.js", "export {};\n");
    ws.ok(&["publish", "JSONStream@1.3.5", "json", "--quiet"]);
    let report = ws.publish_json("jsonstream@1.0.0", "json", &[]);
    assert_eq!(
        report["warnings"],
        serde_json::json!([{"kind": "case_clash", "existing": "JSONStream"}])
    );
    let out = ws.ok(&["publish", "jsonStream@1.0.0", "json", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: jsonStream is a new package beside the catalog's JSONStream, whose name differs only in case"),
        "{err}"
    );
    // Another version of the same package is no clash.
    let report = ws.publish_json("JSONStream@1.3.6", "json", &[]);
    assert_eq!(report["warnings"], serde_json::json!([]));
}

/// An npm tarball (`package/` and the files under it), gzipped.
fn npm_tarball(files: &[(&str, &str)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        header.set_size(text.len() as u64);
        tar.append_data(&mut header, format!("package/{path}"), text.as_bytes())
            .expect("tar into memory");
    }
    let tar = tar.into_inner().expect("tar into memory");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).expect("gzip into memory");
    gz.finish().expect("gzip into memory")
}

#[test]
fn a_sites_rules_files_are_checked_at_publish() {
    let ws = Workspace::new();
    ws.write("site/index.html", "<!doctype html><title>home</title>\n");
    ws.write("site/assets/index-B1x9aZq2.js", "export {};\n");
    ws.write(
        "site/_redirects",
        "# moved pages\n/old /new 301\n/docs/* https://docs.example.com/:splat 302\n\
         /* /index.html 200\n",
    );
    ws.write(
        "site/_headers",
        "/*\n  X-Frame-Options: DENY\n/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n",
    );
    ws.ok(&["publish", "site@1.0.0", "site", "-q"]);
    assert_eq!(
        ws.paths("site@1.0.0"),
        [
            "_headers",
            "_redirects",
            "assets/index-B1x9aZq2.js",
            "index.html"
        ]
    );

    // A condition ccc does not follow: refused naming the line, and the
    // catalog is left as it was (`ccc ls` has no 1.1.0).
    ws.write(
        "site/_redirects",
        "# moved pages\n/old /new 301\n/ /fr/ 302 Country=fr\n",
    );
    let stderr = ws.publish_fails(
        &["publish", "site@1.1.0", "site"],
        &[
            "error: site@1.1.0 was not published: _redirects line 3: `Country=fr`: \
             conditions are not supported",
            "hint: ccc follows _redirects at the root of a version served as a site",
        ],
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(ws.versions("site"), ["1.0.0"]);
    // A header the server owns, the same; --dry-run says so too.
    ws.write("site/_redirects", "/old /new 301\n");
    ws.write(
        "site/_headers",
        "/*\n  X-Frame-Options: DENY\n  Content-Encoding: br\n",
    );
    ws.publish_fails(
        &["publish", "site@1.1.0", "site", "--dry-run"],
        &["_headers line 3: Content-Encoding is ccc's to set"],
    );
    assert_eq!(ws.versions("site"), ["1.0.0"]);
}

#[test]
fn rules_files_below_the_root_of_a_tarball_are_ordinary_files() {
    let ws = Workspace::new();
    // A package shipping a Netlify template: its `_redirects` and
    // `_headers` sit in a folder, and are not the package's rules.
    let files = [
        ("package.json", r#"{"name":"site-kit","version":"2.0.0"}"#),
        ("index.js", "export {};\n"),
        ("templates/netlify/_redirects", "/ /fr 302 Country=fr\n"),
        ("templates/netlify/_headers", "not rules at all\n"),
    ];
    ws.write("site-kit-2.0.0.tgz", npm_tarball(&files));
    ws.ok(&["publish", "site-kit-2.0.0.tgz", "-q"]);
    assert_eq!(
        ws.paths("site-kit@2.0.0"),
        [
            "index.js",
            "package.json",
            "templates/netlify/_headers",
            "templates/netlify/_redirects",
        ]
    );
    // At the root of the tarball (`package/_redirects`), it is the
    // version's own and is read.
    let mut files = files.to_vec();
    files[0].1 = r#"{"name":"site-kit","version":"2.0.1"}"#;
    files.push(("_redirects", "/a /b 302\n/ /fr 302 Country=fr\n"));
    ws.write("site-kit-2.0.1.tgz", npm_tarball(&files));
    ws.publish_fails(
        &["publish", "site-kit-2.0.1.tgz"],
        &["not published: _redirects line 2: `Country=fr`"],
    );
    assert_eq!(ws.versions("site-kit"), ["2.0.0"]);
}

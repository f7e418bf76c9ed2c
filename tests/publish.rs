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
        .stderr(predicates::str::contains("app@1.0.0 is already published"));
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
    let files = ws.json(&["ls", "app@1.0.0", "--json"]);
    let encoding = |path: &str| {
        files
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap()["encoding"]
            .clone()
    };
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
    assert_eq!(first["files"], tree.len() as u64);
    let (blobs_1, bytes_1) = ws.blob_totals();
    assert_eq!(
        blobs_1,
        tree.len() as i64 - 1,
        "duplicate content stored twice"
    );
    assert!(bytes_1 > 0);

    let second = ws.publish_json("app@1.1.0", "dist", &[]);
    let (blobs_2, bytes_2) = ws.blob_totals();
    assert_eq!(second["files"], tree.len() as u64);
    assert_eq!(second["dedup_files"], tree.len() as u64, "{second}");
    assert_eq!(second["new_bytes"], 0, "{second}");
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
    assert_eq!(packages[0]["versions"], 1);
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
    assert_eq!(report["files"], 2);
    assert_eq!(report["dedup_files"], 1);
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

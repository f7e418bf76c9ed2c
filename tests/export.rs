//! `ccc export`: versions as plain files (original bytes, `.gz` siblings
//! holding the stored gzip stream), dated at their publish time.

use crate::util::{Rng, Workspace, gunzip};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// Files of every kind: compressible text (stored gzip), noise and tiny
/// files (stored raw), an empty file, awkward names, a deep path.
fn tree(seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(seed);
    let deep: Vec<String> = (0..21).map(|i| format!("l{i}")).collect();
    vec![
        ("index.html".into(), b"<p>hello</p>\n".repeat(100)),
        ("js/app.js".into(), rng.text(20_000)),
        ("img/logo.png".into(), rng.bytes(5_000)),
        (
            "bin/all-bytes.bin".into(),
            (0..=255u8).cycle().take(256 * 30).collect(),
        ),
        ("bin/each-byte-once.bin".into(), (0..=255u8).collect()),
        ("empty.txt".into(), Vec::new()),
        ("tiny.txt".into(), b"x".to_vec()),
        ("日本語 ünï 😀/a#b%c+d@e.css".into(), b"p{}\n".repeat(80)),
        (
            format!("{}/deep.js", deep.join("/")),
            b"export const deep = true;\n".repeat(20),
        ),
    ]
}

fn publish(ws: &Workspace, target: &str, files: &[(String, Vec<u8>)]) {
    let dir = format!("src-{}", target.replace(['@', '/'], "_"));
    ws.write_tree(&dir, files);
    ws.publish(target, &dir, &[]);
}

/// `(path, encoding)` of each file of a version.
fn encodings(ws: &Workspace, version: &str) -> BTreeMap<String, String> {
    ws.json(&["ls", version, "--json"])
        .as_array()
        .expect("array")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().expect("path").to_string(),
                f["encoding"].as_str().expect("encoding").to_string(),
            )
        })
        .collect()
}

fn published_at(ws: &Workspace, package: &str, version: &str) -> u64 {
    ws.json(&["ls", package, "--json"])
        .as_array()
        .expect("array")
        .iter()
        .find(|v| v["version"] == version)
        .and_then(|v| v["published_at"].as_u64())
        .expect("published_at")
}

/// Every file below `dir`, relative, `/`-separated.
fn files_below(dir: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .expect("below")
                .to_str()
                .expect("UTF-8")
                .to_string()
        })
        .collect()
}

/// Checks that `root` (DIR/PKG/VERSION) holds exactly `files`, each with
/// its original bytes, a `.gz` sibling for each gzip-stored one, and every
/// file dated `published`.
#[track_caller]
fn check_exported(
    ws: &Workspace,
    root: &Path,
    version: &str,
    files: &[(String, Vec<u8>)],
    published: u64,
) {
    let encodings = encodings(ws, version);
    assert!(encodings.values().any(|e| e == "gzip"), "{encodings:?}");
    assert!(encodings.values().any(|e| e == "identity"), "{encodings:?}");
    let mut want = BTreeSet::new();
    for (path, bytes) in files {
        let on_disk = root.join(path);
        let got = std::fs::read(&on_disk)
            .unwrap_or_else(|e| panic!("{version}: {} not exported: {e}", on_disk.display()));
        assert!(
            got == *bytes,
            "{version}/{path}: {} bytes exported, {} published",
            got.len(),
            bytes.len()
        );
        want.insert(path.clone());
        let gz = root.join(format!("{path}.gz"));
        if encodings[path] == "gzip" {
            let stored = std::fs::read(&gz)
                .unwrap_or_else(|e| panic!("{version}/{path}.gz not exported: {e}"));
            assert_eq!(gunzip(&stored), *bytes, "{version}/{path}.gz");
            let cat = ws
                .ok(&["cat", "--gzip", &format!("{version}/{path}")])
                .stdout;
            assert_eq!(stored, cat, "{version}/{path}.gz is the stored stream");
            want.insert(format!("{path}.gz"));
        } else {
            assert!(!gz.exists(), "{version}/{path} is stored raw: no .gz");
        }
    }
    assert_eq!(files_below(root), want, "{version}: exactly these files");
    let mtime = UNIX_EPOCH + Duration::from_secs(published);
    for rel in &want {
        let modified = std::fs::metadata(root.join(rel))
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(
            modified, mtime,
            "{version}/{rel}: mtime is the publish time"
        );
    }
}

#[test]
fn one_version_exports_with_gz_siblings_and_publish_times() {
    let ws = Workspace::new();
    let v1 = tree(1);
    publish(&ws, "app@1.0.0", &v1);
    publish(&ws, "app@2.0.0", &tree(2));
    publish(&ws, "other@0.1.0", &tree(3));
    let published = published_at(&ws, "app", "1.0.0");

    let out = ws.path().join("out");
    ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    check_exported(&ws, &out.join("app/1.0.0"), "app@1.0.0", &v1, published);
    assert_eq!(
        std::fs::read_dir(&out)
            .expect("out")
            .map(|e| e.expect("entry").file_name())
            .collect::<Vec<_>>(),
        vec!["app"],
        "only the asked-for package"
    );
    assert!(
        !out.join("app/2.0.0").exists(),
        "only the asked-for version"
    );

    // A range picks one version, like everywhere else.
    let ranged = ws.path().join("ranged");
    ws.ok(&["export", "app@^1", ranged.to_str().expect("UTF-8")]);
    check_exported(&ws, &ranged.join("app/1.0.0"), "app@1.0.0", &v1, published);
    assert!(!ranged.join("app/2.0.0").exists());
}

#[test]
fn everything_exports_without_a_target() {
    let ws = Workspace::new();
    let trees = [
        ("app", "1.0.0", tree(1)),
        ("app", "1.1.0-beta.1", tree(2)),
        ("other", "0.1.0", tree(3)),
        ("@scope/name", "3.0.0", tree(4)),
    ];
    for (package, version, files) in &trees {
        publish(&ws, &format!("{package}@{version}"), files);
    }
    let out = ws.path().join("everything");
    let report = ws.json(&["export", out.to_str().expect("UTF-8"), "--json"]);
    assert_eq!(report["versions"], 4, "{report}");
    let files: usize = trees.iter().map(|t| t.2.len()).sum();
    assert_eq!(report["files"], files, "{report}");
    for (package, version, files) in &trees {
        let published = published_at(&ws, package, version);
        check_exported(
            &ws,
            &out.join(package).join(version),
            &format!("{package}@{version}"),
            files,
            published,
        );
    }
    // Exactly those four version folders.
    let mut roots = BTreeSet::new();
    for f in files_below(&out) {
        let parts: Vec<&str> = f.split('/').collect();
        let n = if parts[0].starts_with('@') { 3 } else { 2 };
        roots.insert(parts[..n].join("/"));
    }
    let want: BTreeSet<String> = trees.iter().map(|(p, v, _)| format!("{p}/{v}")).collect();
    assert_eq!(roots, want);

    // `ccc export PKG` exports every version of that package.
    let app = ws.path().join("app-only");
    ws.ok(&["export", "app", app.to_str().expect("UTF-8")]);
    assert!(app.join("app/1.0.0/index.html").is_file());
    assert!(app.join("app/1.1.0-beta.1/index.html").is_file());
    assert!(!app.join("other").exists());
}

#[test]
fn a_real_file_named_like_a_gz_sibling_wins() {
    let ws = Workspace::new();
    let text = b"var x = 1;\n".repeat(200);
    let real_gz = b"I am a real file called app.js.gz\n".repeat(50);
    let files = vec![
        ("app.js".to_string(), text.clone()),
        ("app.js.gz".to_string(), real_gz.clone()),
    ];
    publish(&ws, "app@1.0.0", &files);
    let enc = encodings(&ws, "app@1.0.0");
    assert_eq!(enc["app.js"], "gzip");
    let out = ws.path().join("out");
    let run = ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    let root = out.join("app/1.0.0");
    assert_eq!(std::fs::read(root.join("app.js")).expect("read"), text);
    assert_eq!(
        std::fs::read(root.join("app.js.gz")).expect("read"),
        real_gz,
        "the published app.js.gz is not overwritten by app.js's sibling"
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("app.js.gz"), "a warning names it: {stderr}");
}

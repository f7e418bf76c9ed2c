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
    ws.files(version)
        .iter()
        .map(|f| {
            (
                f["path"].as_str().expect("path").to_string(),
                f["encoding"].as_str().expect("encoding").to_string(),
            )
        })
        .collect()
}

/// The paths of a version's files that have a brotli stream.
fn with_brotli(ws: &Workspace, version: &str) -> BTreeSet<String> {
    ws.files(version)
        .iter()
        .filter(|f| f["variants"].as_array().is_some_and(|v| !v.is_empty()))
        .map(|f| f["path"].as_str().expect("path").to_string())
        .collect()
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
/// its original bytes, a `.gz` sibling for each gzip-stored one, a `.br`
/// sibling for each with a brotli stream, and every file dated `published`.
#[track_caller]
fn check_exported(
    ws: &Workspace,
    root: &Path,
    version: &str,
    files: &[(String, Vec<u8>)],
    published: u64,
) {
    let encodings = encodings(ws, version);
    let brotli = with_brotli(ws, version);
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
        let br = root.join(format!("{path}.br"));
        if brotli.contains(path) {
            let stored = std::fs::read(&br)
                .unwrap_or_else(|e| panic!("{version}/{path}.br not exported: {e}"));
            let mut decoded = Vec::new();
            ::brotli::BrotliDecompress(&mut &stored[..], &mut decoded).expect("brotli");
            assert_eq!(decoded, *bytes, "{version}/{path}.br");
            want.insert(format!("{path}.br"));
        } else {
            assert!(
                !br.exists(),
                "{version}/{path} has no brotli stream: no .br"
            );
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
    let published = ws.published_at("app", "1.0.0") as u64;

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
    assert_eq!(report["version_count"], 4, "{report}");
    let files: usize = trees.iter().map(|t| t.2.len()).sum();
    assert_eq!(report["file_count"], files, "{report}");
    for (package, version, files) in &trees {
        let published = ws.published_at(package, version) as u64;
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

/// Everything below `dir` (hidden entries included): each folder as
/// `path/`, each file as `path` with its bytes.
fn state(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.expect("walk"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .expect("below")
                .to_string_lossy()
                .into_owned();
            if e.file_type().is_dir() {
                (format!("{rel}/"), Vec::new())
            } else {
                (rel, std::fs::read(e.path()).expect("read"))
            }
        })
        .collect()
}

#[test]
fn a_name_too_long_for_its_gz_sibling_exports_without_the_sibling() {
    let ws = Workspace::new();
    // 255 bytes: the longest name most file systems allow, so NAME.gz
    // cannot exist.
    let long = format!("{}.js", "a".repeat(252));
    assert_eq!(long.len(), 255);
    let text = b"export const answer = 42;\n".repeat(100);
    let files = vec![
        (format!("js/{long}"), text.clone()),
        ("index.html".to_string(), b"<p>hello</p>\n".repeat(100)),
    ];
    publish(&ws, "app@1.0.0", &files);
    assert_eq!(encodings(&ws, "app@1.0.0")[&format!("js/{long}")], "gzip");
    // Both files have a brotli stream too, whose `.br` is skipped alike.
    assert_eq!(with_brotli(&ws, "app@1.0.0").len(), 2);

    let out = ws.path().join("out");
    let run = ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    let root = out.join("app/1.0.0");
    assert!(std::fs::read(root.join("js").join(&long)).expect("exported") == text);
    assert!(!root.join("js").join(format!("{long}.gz")).exists());
    assert!(!root.join("js").join(format!("{long}.br")).exists());
    assert_eq!(
        gunzip(&std::fs::read(root.join("index.html.gz")).expect("index.html.gz")),
        files[1].1
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    let warning = format!(
        "warning: skipped {}: the name is too long for the file system (258 bytes); servers send the plain file instead",
        root.join("js").join(format!("{long}.gz")).display()
    );
    assert!(stderr.contains(&warning), "want {warning:?} in:\n{stderr}");
    assert!(
        stderr.contains(&format!("{long}.br: the name is too long")),
        "{stderr}"
    );
    let size = |name: &str| std::fs::metadata(root.join(name)).expect(name).len() as usize;
    let bytes = text.len() + files[1].1.len() + size("index.html.gz") + size("index.html.br");
    let summary = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        summary.trim_end(),
        format!(
            "Exported 1 version to {}: 2 files, 2 compressed siblings written, 2 skipped; {}",
            out.display(),
            ccc::testing::human_size(bytes as u64)
        )
    );

    let json_out = ws.path().join("json");
    let report = ws.json(&[
        "export",
        "app@1.0.0",
        json_out.to_str().expect("UTF-8"),
        "--json",
    ]);
    assert_eq!(report["version_count"], 1, "{report}");
    assert_eq!(report["replaced_version_count"], 0, "{report}");
    assert_eq!(report["file_count"], 2, "{report}");
    assert_eq!(report["sibling_count"], 2, "{report}");
    assert_eq!(report["written_bytes"], bytes, "{report}");
    assert_eq!(
        report["siblings_skipped"][0]["path"],
        format!("app/1.0.0/js/{long}.gz"),
        "{report}"
    );
    assert_eq!(
        report["siblings_skipped"][1]["path"],
        format!("app/1.0.0/js/{long}.br"),
        "{report}"
    );
    assert_eq!(report["siblings_skipped"].as_array().map(Vec::len), Some(2));
    assert_eq!(state(&json_out), state(&out));
}

/// Three versions, exported in this order: app@2.0.0, app@1.0.0, zed@1.0.0.
fn three_versions(ws: &Workspace) {
    publish(ws, "app@1.0.0", &tree(1));
    publish(ws, "app@2.0.0", &tree(2));
    let mut zed = tree(3);
    zed.push((
        "zed-only.js".into(),
        b"const zed = 'only here';\n".repeat(50),
    ));
    publish(ws, "zed@1.0.0", &zed);
}

/// Exports everything into `out`, requires exit 1 with an error naming
/// each of `needles`, and requires `out` to be exactly as it was.
#[track_caller]
fn export_fails_cleanly(ws: &Workspace, out: &Path, needles: &[&str]) {
    let before = out.exists().then(|| state(out));
    let run = ws.fails(&["export", out.to_str().expect("UTF-8")], 1);
    let stderr = String::from_utf8_lossy(&run.stderr);
    for needle in needles {
        assert!(stderr.contains(needle), "no {needle:?} in:\n{stderr}");
    }
    assert!(run.stdout.is_empty(), "no summary after a failure");
    match before {
        None => assert!(!out.exists(), "{} was created", out.display()),
        Some(before) => assert_eq!(state(out), before, "{} changed", out.display()),
    }
}

#[test]
fn a_failure_mid_export_leaves_nothing_behind() {
    let ws = Workspace::new();
    three_versions(&ws);
    // DIR already holds the user's files and an earlier export.
    let out = ws.path().join("site");
    ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    ws.write("site/README.txt", "the user's own file\n");
    ws.write("site/app/1.0.0/stray.txt", "left by hand\n");

    // The last version staged cannot be written: a name no file system
    // takes (the catalog was edited behind ccc's back).
    let long = "z".repeat(300);
    let changed = ws
        .conn()
        .execute(
            "UPDATE assets SET path = ?1 WHERE path = 'zed-only.js'",
            [&long],
        )
        .expect("rename the asset");
    assert_eq!(changed, 1);
    export_fails_cleanly(&ws, &out, &["zed/1.0.0", &long]);
    export_fails_cleanly(&ws, &ws.path().join("new/folder"), &["zed/1.0.0", &long]);
    assert!(!ws.path().join("new").exists());

    // The same with damaged content: its gzip stream does not decode.
    ws.conn()
        .execute(
            "UPDATE assets SET path = 'zed-only.js' WHERE path = ?1",
            [&long],
        )
        .expect("rename back");
    ws.ok(&["export", ws.path().join("check").to_str().expect("UTF-8")]);
    let set_body = |body: &[u8]| {
        ws.conn()
            .execute(
                "UPDATE blobs SET body = ?1
                  WHERE id = (SELECT blob_id FROM assets WHERE path = 'zed-only.js')",
                [body],
            )
            .expect("set the body")
    };
    let body: Vec<u8> = ws
        .conn()
        .query_row(
            "SELECT body, encoding FROM blobs
              WHERE id = (SELECT blob_id FROM assets WHERE path = 'zed-only.js')",
            [],
            |r| {
                assert_eq!(r.get::<_, String>(1)?, "gzip");
                r.get(0)
            },
        )
        .expect("the body");
    let mut damaged = body.clone();
    damaged[10..20].fill(0xff);
    set_body(&damaged);
    export_fails_cleanly(&ws, &out, &["zed@1.0.0/zed-only.js", "does not decode"]);

    // Something in the way of a version folder is found before anything is
    // written.
    set_body(&body);
    ws.write("site/zed", "a file where a folder goes\n");
    export_fails_cleanly(&ws, &out, &["site/zed", "in the way"]);
    std::fs::remove_file(out.join("zed")).expect("clear the way");
    ws.ok(&["export", out.to_str().expect("UTF-8")]);
}

#[test]
fn an_export_replaces_its_version_folders_and_nothing_else() {
    let ws = Workspace::new();
    let v1 = tree(1);
    publish(&ws, "app@1.0.0", &v1);
    let out = ws.path().join("site");
    ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    ws.write("site/README.txt", "the user's own file\n");
    ws.write(
        "site/app/0.9.0/old.js",
        "a version this catalog no longer has\n",
    );
    ws.write("site/app/1.0.0/stray.txt", "left by hand\n");

    let run = ws.ok(&["export", "app@1.0.0", out.to_str().expect("UTF-8")]);
    let summary = String::from_utf8_lossy(&run.stdout);
    assert!(
        summary.starts_with(&format!(
            "Exported 1 version to {} (1 replaced): ",
            out.display()
        )),
        "{summary}"
    );
    let published = ws.published_at("app", "1.0.0") as u64;
    check_exported(&ws, &out.join("app/1.0.0"), "app@1.0.0", &v1, published);
    assert_eq!(
        std::fs::read_to_string(out.join("README.txt")).expect("README"),
        "the user's own file\n"
    );
    assert!(out.join("app/0.9.0/old.js").is_file());
    let names: BTreeSet<String> = std::fs::read_dir(&out)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["README.txt".to_string(), "app".to_string()]),
        "no staging folder left behind"
    );
}

/// Exporting into a folder this user may not write names the folder and
/// says why in words, not the hidden staging folder's os error.
#[test]
fn a_folder_that_takes_no_files_is_named_with_the_reason() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    ws.write("v1/a.js", "let a = 1;\n");
    ws.publish("app@1.0.0", "v1", &[]);
    let ro = ws.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    for dir in ["ro", "ro/sub"] {
        let Some(mut cmd) = crate::util::ccc_as(crate::util::RunAs::BoundByPermissions) else {
            println!("note: skipped: running as root without setpriv");
            return;
        };
        let out = cmd
            .current_dir(ws.path())
            .env("CCC_DB_PATH", ws.db())
            .args(["export", "app", dir])
            .output()
            .expect("run ccc");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("error: cannot create files in ro: permission denied"),
            "{dir}: {stderr}"
        );
        assert!(!stderr.contains("os error"), "{dir}: {stderr}");
        assert!(!stderr.contains(".ccc-export-"), "{dir}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(&ro).expect("ls").count(), 0);
}

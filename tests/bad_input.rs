//! Bad publish input: a clear error naming the offending thing, exit 1 (2
//! for a malformed command line), and an untouched catalog. Also what the
//! walk leaves out (symlinks, `.git/`, `.DS_Store`, `--exclude`).

use crate::util::{RunAs, Workspace, ccc_as};
use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A workspace whose catalog already holds `app@1.0.0`.
fn with_catalog() -> Workspace {
    let ws = Workspace::new();
    ws.write("base/index.html", "<p>base</p>\n");
    ws.publish("app@1.0.0", "base", &[]);
    ws
}

#[test]
fn a_file_name_that_is_not_utf8_is_refused() {
    let ws = with_catalog();
    ws.write("dist/ok.js", "ok\n");
    ws.write_path(
        Path::new("dist").join(OsStr::from_bytes(b"caf\xe9.js")),
        "latin-1 name\n",
    );
    ws.publish_fails(
        &["publish", "app@2.0.0", "dist"],
        &[
            "caf",
            ".js",
            "not valid UTF-8",
            "--exclude GLOB leaves it out",
        ],
    );

    // A folder name counts too.
    ws.write_path(
        Path::new("dist2")
            .join(OsStr::from_bytes(b"dir\xff"))
            .join("x.js"),
        "x\n",
    );
    ws.publish_fails(
        &["publish", "app@2.0.0", "dist2"],
        &["dir", "not valid UTF-8"],
    );

    // --exclude leaves such a file or folder out, as any other.
    ws.ok(&["publish", "app@2.0.0", "dist", "--exclude", "caf*.js", "-q"]);
    assert_eq!(ws.paths("app@2.0.0"), ["ok.js"]);
    ws.write("dist2/y.js", "y\n");
    ws.ok(&["publish", "app@3.0.0", "dist2", "--exclude", "dir?", "-q"]);
    assert_eq!(ws.paths("app@3.0.0"), ["y.js"]);
}

/// `ccc ARGS`, run so that file permissions bind even for root. None when
/// that is impossible here.
fn ccc_bound_by_permissions(ws: &Workspace, args: &[&str]) -> Option<std::process::Output> {
    let mut cmd = ccc_as(RunAs::BoundByPermissions)?;
    cmd.current_dir(ws.path()).env("CCC_DB_PATH", ws.db());
    Some(cmd.args(args).output().expect("run ccc"))
}

#[test]
fn an_unreadable_file_or_folder_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let ws = with_catalog();
    ws.write("dist/ok.js", "ok\n");
    let secret = ws.write("dist/secret.js", "secret\n");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    ws.write("dist2/ok.js", "ok\n");
    ws.write("dist2/locked/inner.js", "inner\n");
    let locked = ws.path().join("dist2/locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();

    for (dir, needle) in [("dist", "secret.js"), ("dist2", "locked")] {
        let before = ws.snapshot();
        let Some(out) = ccc_bound_by_permissions(&ws, &["publish", "app@2.0.0", dir]) else {
            println!("note: skipped the unreadable-file case: running as root without setpriv");
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{dir}: {stderr}");
        assert!(stderr.contains("error:"), "{stderr}");
        assert!(
            stderr.contains(needle),
            "{dir}: should name {needle}: {stderr}"
        );
        assert!(stderr.contains("ermission denied"), "{stderr}");
        assert_eq!(ws.snapshot(), before, "{dir}: the catalog changed");
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn empty_missing_and_non_directories_are_refused() {
    let ws = with_catalog();
    std::fs::create_dir(ws.path().join("empty")).unwrap();
    ws.publish_fails(&["publish", "app@2.0.0", "empty"], &["empty", "no files"]);
    // Only what is always left out: still nothing to publish.
    ws.write("only-ignored/.DS_Store", "x");
    ws.write("only-ignored/.git/HEAD", "ref: refs/heads/main\n");
    ws.publish_fails(
        &["publish", "app@2.0.0", "only-ignored"],
        &["only-ignored", "no files"],
    );
    ws.publish_fails(
        &["publish", "app@2.0.0", "no-such-dir"],
        &["no-such-dir", "no such folder or archive"],
    );
    ws.write("plain-file", "x");
    ws.publish_fails(
        &["publish", "app@2.0.0", "plain-file"],
        &["plain-file", "neither a tar archive"],
    );
}

#[test]
fn a_file_over_max_file_size_is_refused() {
    let ws = with_catalog();
    ws.write("dist/fits.bin", vec![7u8; 1024]);
    ws.write("dist/sub/too-big.bin", vec![7u8; 1025]);
    ws.publish_fails(
        &["publish", "app@2.0.0", "dist", "--max-file-size", "1KiB"],
        &["too-big.bin", "--max-file-size"],
    );
    // Exactly the limit is fine.
    std::fs::remove_file(ws.path().join("dist/sub/too-big.bin")).unwrap();
    ws.publish("app@2.0.0", "dist", &["--max-file-size", "1KiB"]);
    assert_eq!(ws.paths("app@2.0.0"), ["fits.bin"]);
}

#[test]
fn invalid_package_names_and_versions_are_usage_errors() {
    let ws = with_catalog();
    ws.write("dist/a.js", "a\n");
    for (target, needles) in [
        ("@scope/React@1.0.0", &["@scope/React", "lowercase"][..]),
        ("a b@1.0.0", &["`a b`"][..]),
        ("@scope@1.0.0", &["@scope", "@scope/name"][..]),
        ("app@v1.0", &["v1.0", "hint: versions are semver"][..]),
        ("app@1.0", &["`1.0`", "exact"][..]),
        // Mistyped versions are told in semver's words, not as ranges.
        (
            "app@01.0.0",
            &["`01.0.0`", "major version `01` has a leading zero"][..],
        ),
        (
            "app@1.0.0.0",
            &["`1.0.0.0`", "three parts, MAJOR.MINOR.PATCH"][..],
        ),
        (
            "app@1.0.0-",
            &["`1.0.0-`", "empty pre-release identifier"][..],
        ),
        ("app@latest", &["`latest`", "exact"][..]),
        ("app", &["'app'", "PKG@VERSION"][..]),
        ("app@1.0.0/x.js", &["PKG@VERSION"][..]),
    ] {
        let stderr = ws.publish_fails_with(&["publish", target, "dist"], 2, needles);
        assert!(stderr.contains("try '--help'"), "{stderr}");
    }
    // Where a version is looked up, the same words, not "no dist-tag".
    for target in ["app@01.0.0", "app@1.0.0.0/a.js"] {
        let out = ws.fails(&["inspect", target], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("invalid version"), "{stderr}");
        assert!(!stderr.contains("dist-tag"), "{stderr}");
    }
    // A bad --exclude glob or --level is refused the same way.
    ws.publish_fails_with(
        &["publish", "app@2.0.0", "dist", "--exclude", "a[b"],
        2,
        &["a[b"],
    );
    ws.publish_fails_with(
        &["publish", "app@2.0.0", "dist", "--level", "10"],
        2,
        &["from 1 to 9"],
    );
}

#[test]
fn symlinks_are_reported_and_never_stored() {
    let ws = with_catalog();
    ws.write("outside/secret.txt", "outside the tree\n");
    ws.write("dist/index.html", "<p>in</p>\n");
    let dist = ws.path().join("dist");
    std::os::unix::fs::symlink(ws.path().join("outside/secret.txt"), dist.join("leak.txt"))
        .unwrap();
    std::os::unix::fs::symlink("../outside", dist.join("linked-dir")).unwrap();
    std::os::unix::fs::symlink("index.html", dist.join("inner-link.html")).unwrap();

    let out = ws.ok(&["publish", "app@2.0.0", "dist"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for name in ["leak.txt", "linked-dir", "inner-link.html"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(name) && l.contains("symlink")),
            "{name} not reported on stderr:\n{stderr}"
        );
    }
    assert_eq!(ws.paths("app@2.0.0"), ["index.html"]);
    ws.fails(&["cat", "app@2.0.0/leak.txt"], 1);
    ws.fails(&["cat", "app@2.0.0/linked-dir/secret.txt"], 1);
    // The outside file's content is nowhere in the catalog.
    let outside: Vec<u8> = Sha256::digest(b"outside the tree\n").to_vec();
    let hits: i64 = ws
        .conn()
        .query_row(
            "SELECT count(*) FROM blobs WHERE sha256 = ?1",
            [outside],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 0);
    let (blobs, _) = ws.blob_totals();
    assert_eq!(blobs, 2, "only base/index.html and dist/index.html");

    // --json carries the same report.
    let report = ws.publish_json("app@3.0.0", "dist", &[]);
    let skipped: Vec<&str> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["inner-link.html", "leak.txt", "linked-dir"]);
}

#[test]
fn git_and_ds_store_are_always_left_out() {
    let ws = with_catalog();
    for path in [
        "index.html",
        ".DS_Store",
        ".git/HEAD",
        ".git/objects/ab/cdef",
        "sub/.DS_Store",
        "sub/.git",
        "sub/deeper/.git/config",
        "sub/x.js",
        ".gitignore",
        ".github/workflows/ci.yml",
        "notes.DS_Store.txt",
    ] {
        ws.write(&format!("dist/{path}"), path);
    }
    ws.publish("app@2.0.0", "dist", &[]);
    assert_eq!(
        ws.paths("app@2.0.0"),
        [
            ".github/workflows/ci.yml",
            ".gitignore",
            "index.html",
            "notes.DS_Store.txt",
            "sub/x.js"
        ]
    );
}

#[test]
fn exclude_globs_leave_files_and_folders_out() {
    let ws = with_catalog();
    for path in [
        "a.js",
        "a.js.map",
        "sub/b.js.map",
        "sub/map.js",
        "docs/readme.md",
        "docs/deep/x.js",
    ] {
        ws.write(&format!("dist/{path}"), path);
    }
    ws.publish(
        "app@2.0.0",
        "dist",
        &["--exclude", "*.map", "--exclude", "docs"],
    );
    assert_eq!(ws.paths("app@2.0.0"), ["a.js", "sub/map.js"]);
}

#[test]
fn a_failed_publish_does_not_create_a_catalog() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.write("big/a.bin", vec![0u8; 2048]);
    std::fs::create_dir(ws.path().join("empty")).unwrap();
    for (args, code) in [
        (&["publish", "app@2.0.0", "no-such-dir"][..], 1),
        (&["publish", "app@2.0.0", "empty"], 1),
        (&["publish", "@App/app@2.0.0", "dist"], 2),
        (&["publish", "app@v2", "dist"], 2),
        (
            &["publish", "app@2.0.0", "big", "--max-file-size", "1KiB"],
            1,
        ),
    ] {
        ws.fails(args, code);
        assert!(!ws.db().exists(), "{args:?} created cdn.db");
    }
}

#[test]
fn an_unreadable_file_in_a_first_publish_does_not_create_a_catalog() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    let secret = ws.write("dist/secret.js", "secret\n");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let Some(out) = ccc_bound_by_permissions(&ws, &["publish", "app@1.0.0", "dist"]) else {
        println!("note: skipped: running as root without setpriv");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("secret.js"), "{stderr}");
    assert!(
        !ws.db().exists(),
        "the failed publish left an empty cdn.db behind ({stderr})"
    );
}

#[test]
fn a_file_just_over_the_limit_is_reported_with_sizes_that_differ() {
    let ws = with_catalog();
    ws.write("dist/too-big.bin", vec![7u8; 1025]);
    let stderr = ws.publish_fails(
        &["publish", "app@2.0.0", "dist", "--max-file-size", "1KiB"],
        &["too-big.bin"],
    );
    // 1025 bytes over a 1024-byte limit: the two sizes the message shows
    // must differ (never "file is 1.0 KiB, over --max-file-size 1.0 KiB").
    let line = stderr.lines().find(|l| l.contains("error:")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let sizes: Vec<String> = words
        .windows(2)
        .filter(|w| w[0].parse::<f64>().is_ok())
        .map(|w| format!("{} {}", w[0], w[1].trim_end_matches(',')))
        .collect();
    assert_eq!(sizes.len(), 2, "expected a file size and a limit: {line}");
    assert_ne!(sizes[0], sizes[1], "misleading: {line}");
}

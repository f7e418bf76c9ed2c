//! `ccc diff PKG@A PKG@B`: files added, removed and changed, by content,
//! from the catalog's rows alone.

use crate::util::{Rng, Workspace};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// app@1.0.0 and app@1.1.0: one file kept, one changed, one removed, one
/// added.
fn two_versions() -> Workspace {
    let ws = Workspace::new();
    let mut rng = Rng::new(11);
    let kept = rng.text(20_000);
    ws.write("v1/js/kept.js", &kept);
    ws.write("v1/js/app.js", rng.text(30_000));
    ws.write("v1/old.css", "body{color:red}\n");
    ws.write("v2/js/kept.js", &kept);
    ws.write("v2/js/app.js", rng.text(35_000));
    ws.write("v2/img/new.bin", rng.bytes(3000));
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@1.1.0", "v2", &[]);
    ws
}

fn paths(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn files_are_added_removed_changed_or_unchanged_by_content() {
    let ws = two_versions();
    let diff = ws.json(&["diff", "app@1.0.0", "app@1.1.0", "--json"]);
    assert_eq!(diff["from"]["version"], "1.0.0");
    assert_eq!(diff["to"]["version"], "1.1.0");
    assert_eq!(paths(&diff["added"]), ["img/new.bin"]);
    assert_eq!(paths(&diff["removed"]), ["old.css"]);
    assert_eq!(paths(&diff["changed"]), ["js/app.js"]);
    assert_eq!(diff["unchanged_count"], 1);

    // Sizes and digests agree with the files themselves.
    let old = std::fs::read(ws.path().join("v1/js/app.js")).unwrap();
    let new = std::fs::read(ws.path().join("v2/js/app.js")).unwrap();
    let changed = &diff["changed"][0];
    assert_eq!(changed["from"]["sha256"], sha256_hex(&old));
    assert_eq!(changed["to"]["sha256"], sha256_hex(&new));
    assert_eq!(changed["from"]["raw_bytes"], old.len());
    assert_eq!(changed["to"]["raw_bytes"], new.len());
    assert_eq!(
        changed["raw_bytes_delta"],
        new.len() as i64 - old.len() as i64
    );
    let gz = |version: &str| ws.ok(&["cat", "--gzip", version]).stdout.len() as i64;
    assert_eq!(changed["from"]["stored_bytes"], gz("app@1.0.0/js/app.js"));
    assert_eq!(changed["to"]["stored_bytes"], gz("app@1.1.0/js/app.js"));
    assert_eq!(
        changed["stored_bytes_delta"],
        gz("app@1.1.0/js/app.js") - gz("app@1.0.0/js/app.js")
    );
    let added = &diff["added"][0];
    assert_eq!(added["raw_bytes"], 3000);
    assert_eq!(added["encoding"], "identity");
    assert_eq!(
        added["sha256"],
        sha256_hex(&std::fs::read(ws.path().join("v2/img/new.bin")).unwrap())
    );
    assert_eq!(
        diff["raw_bytes_delta"],
        diff["to"]["raw_bytes"].as_i64().unwrap() - diff["from"]["raw_bytes"].as_i64().unwrap()
    );

    // The other way round, the sides swap.
    let back = ws.json(&["diff", "app@1.1.0", "app@1.0.0", "--json"]);
    assert_eq!(paths(&back["added"]), ["old.css"]);
    assert_eq!(paths(&back["removed"]), ["img/new.bin"]);
    assert_eq!(
        back["changed"][0]["raw_bytes_delta"],
        old.len() as i64 - new.len() as i64
    );
}

#[test]
fn no_body_is_read() {
    let ws = two_versions();
    let before = ws.ok(&["diff", "app@1.0.0", "app@1.1.0", "--json"]).stdout;
    // Every body replaced by zeros of the same length: any decoding would
    // fail, any hashing would disagree.
    ws.conn()
        .execute("UPDATE blobs SET body = zeroblob(length(body))", [])
        .unwrap();
    ws.ccc().args(["verify", "-q"]).assert().code(1);
    let after = ws.ok(&["diff", "app@1.0.0", "app@1.1.0", "--json"]).stdout;
    assert_eq!(
        String::from_utf8_lossy(&after),
        String::from_utf8_lossy(&before)
    );
}

#[test]
fn versions_resolve_and_the_second_may_be_a_bare_version() {
    let ws = two_versions();
    for to in ["latest", "1.1.0", "^1", "app@latest", "app@~1.1"] {
        let diff = ws.json(&["diff", "app@1.0.0", to, "--json"]);
        assert_eq!(diff["to"]["version"], "1.1.0", "{to}");
    }
    let out = ws.ok(&["diff", "app@1", "latest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("app@1.1.0 (resolved from 1) -> app@1.1.0 (resolved from latest)\n"),
        "{text}"
    );
    assert!(
        text.contains("same files, same content (3 files)"),
        "{text}"
    );
    // Another package.
    ws.write("other/js/kept.js", ws.cat("app@1.0.0/js/kept.js"));
    ws.publish("other@5.0.0", "other", &[]);
    let diff = ws.json(&["diff", "app@1.0.0", "other@5.0.0", "--json"]);
    assert_eq!(diff["to"]["package"], "other");
    assert_eq!(paths(&diff["removed"]), ["js/app.js", "old.css"]);
    assert_eq!(diff["unchanged_count"], 1);
    // A bare name is a dist-tag of the first package.
    let out = ws.fails(&["diff", "app@1.0.0", "other"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("app has no dist-tag `other`"), "{err}");
    // What is neither is a usage error.
    for bad in ["o ther", "app@", "app@1.0.0/index.html"] {
        ws.fails(&["diff", "app@1.0.0", bad], 2);
    }
    // Unknown versions are named.
    ws.ccc()
        .args(["diff", "app@1.0.0", "9.9.9"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("app has no version 9.9.9"));
    ws.ccc()
        .args(["diff", "nope@1.0.0", "app@1.0.0"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("nope"));
}

#[test]
fn the_table_lists_each_difference_and_a_summary_and_exits_zero() {
    let ws = two_versions();
    let out = ws.ok(&["diff", "app@1.0.0", "app@1.1.0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "app@1.0.0 -> app@1.1.0", "{text}");
    let row = |path: &str| {
        *lines
            .iter()
            .find(|l| l.contains(path))
            .unwrap_or_else(|| panic!("no row for {path}:\n{text}"))
    };
    assert!(
        row("img/new.bin").trim_start().starts_with("added"),
        "{text}"
    );
    assert!(row("old.css").trim_start().starts_with("removed"), "{text}");
    assert!(
        row("js/app.js").trim_start().starts_with("changed"),
        "{text}"
    );
    // A changed file: its size now and the change, both sides' sizes
    // and the stored ones.
    let new = std::fs::read(ws.path().join("v2/js/app.js")).unwrap().len();
    let old = std::fs::read(ws.path().join("v1/js/app.js")).unwrap().len();
    let cells: Vec<&str> = row("js/app.js").split_whitespace().collect();
    assert_eq!(cells.len(), 10, "{text}");
    assert_eq!(
        cells[2..4].join(" "),
        ccc::testing::human_size(new as u64),
        "{text}"
    );
    assert_eq!(
        cells[4..6].join(" "),
        format!("+{}", ccc::testing::human_size((new - old) as u64)),
        "{text}"
    );
    assert!(!text.contains("kept.js"), "{text}");
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("1 added, 1 removed, 1 changed, 1 unchanged; size +"),
        "{text}"
    );
}

/// A diff of thousands of files pages as `ls` does: 100 rows in a table
/// by default and a line saying how to see the next ones; `--limit` and
/// `--offset` pick the page; the summary counts every file; `--json`
/// lists every file unless `--limit` is given.
#[test]
fn a_long_diff_pages_like_ls() {
    let ws = crate::util::Workspace::new();
    let files = |version: &str| -> Vec<(String, Vec<u8>)> {
        (0..250)
            .map(|i| {
                (
                    format!("f{i:03}.txt"),
                    format!("{version} {i}\n").into_bytes(),
                )
            })
            .collect()
    };
    ws.write_tree("v1", &files("1"));
    ws.write_tree("v2", &files("2"));
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@2.0.0", "v2", &[]);
    let text = |args: &[&str]| {
        let mut all = vec!["diff", "app@1.0.0", "2.0.0"];
        all.extend_from_slice(args);
        String::from_utf8(ws.ok(&all).stdout).expect("UTF-8")
    };
    let first = text(&[]);
    let rows = first.lines().filter(|l| l.contains(" changed ")).count();
    assert_eq!(rows, 100, "{first}");
    assert!(
        first.contains("0 added, 0 removed, 250 changed, 0 unchanged")
            && first.trim_end().ends_with(
                "rows 1-100 of 250 differing files; next: --offset 100 (--limit 0 lists all)"
            ),
        "{first}"
    );
    let last = text(&["--offset", "200"]);
    assert!(
        last.contains(" f249.txt ") && !last.contains(" f199.txt "),
        "{last}"
    );
    assert!(
        last.trim_end()
            .ends_with("rows 201-250 of 250 differing files"),
        "{last}"
    );
    let all = text(&["--limit", "0"]);
    assert_eq!(all.lines().filter(|l| l.contains(" changed ")).count(), 250);
    let json = ws.json(&["diff", "app@1.0.0", "2.0.0", "--json"]);
    assert_eq!(json["changed"].as_array().map(Vec::len), Some(250));
    let json = ws.json(&[
        "diff",
        "app@1.0.0",
        "2.0.0",
        "--json",
        "--limit",
        "10",
        "--offset",
        "5",
    ]);
    let paths: Vec<&str> = json["changed"]
        .as_array()
        .expect("changed")
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert_eq!(paths.first(), Some(&"f005.txt"));
    assert_eq!(paths.len(), 10);
}

//! `ccc ls` and `ccc inspect`: exact integers, semver order, `latest` and
//! ranges reported as the version they resolved to, and the "same
//! content" list.

use crate::util::{Rng, Workspace, sha256_hex, unix_time};
use serde_json::Value;

#[track_caller]
fn int(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an exact integer, got {v}"))
}

#[test]
fn sizes_are_exact_integers_that_add_up() {
    let ws = Workspace::new();
    let mut rng = Rng::new(21);
    let tree: Vec<(String, Vec<u8>)> = vec![
        ("empty.txt".into(), Vec::new()),
        ("one.txt".into(), b"1".to_vec()),
        ("js/app.js".into(), rng.text(123_457)),
        ("img/noise.bin".into(), rng.bytes(65_537)),
        ("css/site.css".into(), rng.text(1_000)),
    ];
    ws.write_tree("dist", &tree);
    ws.publish("app@1.0.0", "dist", &[]);
    let on_disk: u64 = tree
        .iter()
        .map(|(p, _)| {
            std::fs::metadata(ws.path().join("dist").join(p))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(on_disk, 123_457 + 65_537 + 1_000 + 1);

    let versions = ws.json(&["ls", "app", "--json"]);
    let v = &versions[0];
    assert_eq!(int(&v["raw_bytes"]), on_disk);
    assert_eq!(int(&v["file_count"]), tree.len() as u64);
    let (_, stored) = ws.blob_totals();
    assert_eq!(int(&v["stored_bytes"]), stored as u64);

    let detail = ws.json(&["inspect", "app@1.0.0", "--json"]);
    assert_eq!(int(&detail["raw_bytes"]), on_disk);
    assert_eq!(int(&detail["file_count"]), tree.len() as u64);
    assert_eq!(int(&detail["stored_bytes"]), stored as u64);
    assert_eq!(int(&detail["shared_bytes"]), 0);
    let assets = detail["files"].as_array().unwrap();
    let stored_sum: u64 = assets.iter().map(|a| int(&a["stored_bytes"])).sum();
    assert_eq!(stored_sum, stored as u64);

    let files = ws.files("app@1.0.0");
    assert_eq!(files.len(), tree.len());
    for (path, bytes) in &tree {
        let f = files
            .iter()
            .find(|f| f["path"] == path.as_str())
            .unwrap_or_else(|| panic!("{path} not listed"));
        assert_eq!(int(&f["raw_bytes"]), bytes.len() as u64, "{path}");
        assert_eq!(f["sha256"], sha256_hex(bytes), "{path}");
    }

    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages[0]["package"], "app");
    assert_eq!(int(&packages[0]["version_count"]), 1);
    assert_eq!(int(&packages[0]["latest_file_count"]), tree.len() as u64);
    assert_eq!(int(&packages[0]["stored_bytes"]), stored as u64);

    // A second version sharing the noise: shared_bytes is its stored size.
    ws.write("dist2/img/noise.bin", &tree[3].1);
    ws.write("dist2/new.txt", "new\n");
    ws.publish("app@1.1.0", "dist2", &[]);
    let detail = ws.json(&["inspect", "app@1.1.0", "--json"]);
    let noise = detail["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "img/noise.bin")
        .unwrap();
    assert_eq!(int(&detail["shared_bytes"]), int(&noise["stored_bytes"]));
    assert_eq!(int(&detail["raw_bytes"]), 65_537 + 4);
}

/// Publishes one tiny version per entry of `versions`, each with `v.txt`
/// holding its own version.
fn publish_versions(ws: &Workspace, package: &str, versions: &[&str]) {
    for version in versions {
        let dir = format!("src-{package}-{version}");
        ws.write(&format!("{dir}/v.txt"), version);
        ws.publish(&format!("{package}@{version}"), &dir, &[]);
    }
}

#[test]
fn the_package_table_says_its_stored_size_counts_each_content_once() {
    let ws = Workspace::new();
    let body = "x".repeat(3000);
    ws.write("dist/a.txt", &body);
    ws.write("dist/copy-of-a.txt", &body);
    ws.publish("app@1.0.0", "dist", &[]);
    let version = ws.json(&["ls", "app", "--json"])[0]["stored_bytes"]
        .as_u64()
        .unwrap();
    let package = ws.json(&["ls", "--json"])[0]["stored_bytes"]
        .as_u64()
        .unwrap();
    assert_eq!(
        version,
        2 * package,
        "the version counts the copy, the package not"
    );
    let table = String::from_utf8(ws.ok(&["ls"]).stdout).unwrap();
    assert!(table.contains("unique stored"), "{table}");
}

#[test]
fn versions_are_listed_newest_first_by_semver() {
    let ws = Workspace::new();
    publish_versions(&ws, "order", &["1.10.0", "1.2.0", "1.9.0-rc.1"]);
    assert_eq!(ws.versions("order"), ["1.10.0", "1.9.0-rc.1", "1.2.0"]);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages[0]["latest"], "1.10.0");
    assert_eq!(int(&packages[0]["version_count"]), 3);
}

#[test]
fn latest_prefers_a_release_over_a_newer_prerelease() {
    let ws = Workspace::new();
    publish_versions(&ws, "pre", &["1.0.0", "1.1.0-beta.1", "0.9.0"]);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages[0]["latest"], "1.0.0");
    assert_eq!(ws.cat("pre@latest/v.txt"), b"1.0.0");
    let detail = ws.json(&["inspect", "pre@latest", "--json"]);
    assert_eq!(detail["version"], "1.0.0");
    // Only pre-releases: the newest of them.
    publish_versions(&ws, "beta-only", &["2.0.0-beta.1", "2.0.0-beta.2"]);
    assert_eq!(ws.cat("beta-only@latest/v.txt"), b"2.0.0-beta.2");
}

#[test]
fn ranges_resolve_to_the_newest_match() {
    let ws = Workspace::new();
    publish_versions(&ws, "r", &["1.4.0", "1.3.9", "1.5.0", "1.4.7", "2.0.0"]);
    let detail = ws.json(&["inspect", "r@1.4/v.txt", "--json"]);
    assert_eq!(detail["version"], "1.4.7");
    assert_eq!(detail["path"], "v.txt");
    assert_eq!(int(&detail["raw_bytes"]), 5);
    for (selector, want) in [
        ("1.4", "1.4.7"),
        ("~1.3", "1.3.9"),
        ("^1.3", "1.5.0"),
        ("1", "1.5.0"),
        ("latest", "2.0.0"),
        ("1.4.0", "1.4.0"),
    ] {
        assert_eq!(
            ws.cat(&format!("r@{selector}/v.txt")),
            want.as_bytes(),
            "r@{selector}"
        );
    }
    let detail = ws.json(&["inspect", "r@^1.3", "--json"]);
    assert_eq!(detail["version"], "1.5.0");
}

#[test]
fn an_unknown_package_suggests_the_close_names() {
    let ws = Workspace::new();
    publish_versions(&ws, "react", &["18.3.1"]);
    publish_versions(&ws, "vue", &["3.4.0"]);
    for args in [
        &["ls", "reakt"][..],
        &["cat", "reakt@18.3.1/v.txt"],
        &["tag", "ls", "Reakt"],
    ] {
        let out = ws.fails(args, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not in the catalog"),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("hint: did you mean `react`?"),
            "{args:?}: {stderr}"
        );
    }
    // A name nothing resembles gets the plain hint.
    let out = ws.fails(&["ls", "angular"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("did you mean"), "{stderr}");
    assert!(
        stderr.contains("`ccc ls` lists what the catalog holds"),
        "{stderr}"
    );
}

#[test]
fn a_folder_is_called_a_folder() {
    let ws = Workspace::new();
    ws.write("site/dist/app.js", "app()");
    ws.write("site/dist/app.css", "a{}");
    ws.write("site/distant.txt", "far");
    ws.publish("app@1.0.0", "site", &[]);
    for args in [
        &["inspect", "app@1.0.0/dist"][..],
        &["inspect", "app@1.0.0/dist/"],
        &["cat", "app@1.0.0/dist"],
    ] {
        let out = ws.fails(args, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error: dist is a folder of app@1.0.0 (2 files), not a file"),
            "{args:?}: {stderr}"
        );
        // The example is a file the folder holds.
        assert!(
            stderr.contains(
                "`ccc ls app@1.0.0` lists its files; name one, like `app@1.0.0/dist/app.css`"
            ),
            "{stderr}"
        );
    }
    // A path that is neither is still no file.
    let out = ws.fails(&["inspect", "app@1.0.0/dis"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("dis is not a file of app@1.0.0"),
        "{stderr}"
    );
}

#[test]
fn an_unmatched_range_is_reported_as_typed() {
    let ws = Workspace::new();
    publish_versions(&ws, "r", &["1.4.0"]);
    for (target, want) in [
        ("r@^3/v.txt", "no version of r matches ^3"),
        ("r@3/v.txt", "no version of r matches 3"),
        ("r@1.5/v.txt", "no version of r matches 1.5"),
        ("r@1.5.0/v.txt", "r has no version 1.5.0"),
    ] {
        let out = ws.fails(&["cat", target], 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The words of the server's 404, and where to look instead.
        assert!(
            stderr.contains(&format!("error: {want}\n")),
            "cat {target}: {stderr}"
        );
        assert!(stderr.contains("`ccc ls r` lists its versions"), "{stderr}");
    }
}

#[test]
fn a_range_or_tag_lists_the_exact_version_it_resolved_to() {
    let ws = Workspace::new();
    publish_versions(&ws, "r", &["1.3.9", "1.5.0", "2.0.0-rc.1"]);
    for (asked, want) in [("latest", "1.5.0"), ("^1.3", "1.5.0"), ("~1.3", "1.3.9")] {
        let target = format!("r@{asked}");
        let listing = ws.json(&["ls", &target, "--json"]);
        assert!(listing.is_object(), "ls {target} --json: {listing}");
        assert_eq!(listing["package"], "r", "{listing}");
        assert_eq!(listing["version"], want, "ls {target}: {listing}");
        let files = listing["files"].as_array().expect("files");
        assert_eq!(files.len(), 1, "{listing}");
        assert_eq!(files[0]["path"], "v.txt");
        assert_eq!(int(&listing["file_count"]), 1);

        let table = String::from_utf8(ws.ok(&["ls", &target]).stdout).unwrap();
        let title = format!("r@{want} (resolved from {asked}): 1 file,");
        assert!(table.starts_with(&title), "ls {target}:\n{table}");
        let inspect = String::from_utf8(ws.ok(&["inspect", &target]).stdout).unwrap();
        let title = format!("r@{want} (resolved from {asked})\n");
        assert!(inspect.starts_with(&title), "inspect {target}:\n{inspect}");
        let file = String::from_utf8(ws.ok(&["inspect", &format!("{target}/v.txt")]).stdout);
        let title = format!("r@{want}/v.txt (resolved from {asked})\n");
        assert!(file.unwrap().starts_with(&title), "inspect {target}/v.txt");
    }
    // An exact version needs no explanation.
    let table = String::from_utf8(ws.ok(&["ls", "r@1.5.0"]).stdout).unwrap();
    assert!(table.starts_with("r@1.5.0: 1 file,"), "{table}");
}

#[test]
fn same_content_lists_only_the_other_files() {
    let ws = Workspace::new();
    ws.write("v1/a.css", "body{}\n");
    ws.write("v1/copy.css", "body{}\n");
    ws.write("v1/other.css", "p{}\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.write("v2/a.css", "body{}\n");
    ws.publish("app@2.0.0", "v2", &[]);

    let detail = ws.json(&["inspect", "app@1.0.0/a.css", "--json"]);
    assert_eq!(
        detail["same_content"],
        serde_json::json!(["app@1.0.0/copy.css", "app@2.0.0/a.css"]),
        "{detail}"
    );
    let text = String::from_utf8(ws.ok(&["inspect", "app@1.0.0/a.css"]).stdout).unwrap();
    // Named once: in the title, not in its own "same content" list.
    assert!(text.starts_with("app@1.0.0/a.css\n"), "{text}");
    assert_eq!(text.matches("app@1.0.0/a.css").count(), 1, "{text}");
    assert!(text.contains("app@1.0.0/copy.css") && text.contains("app@2.0.0/a.css"));

    // Versions in semver order, as everywhere else: 1.9 before 1.10.
    ws.publish("app@1.10.0", "v2", &[]);
    ws.publish("app@1.9.0", "v2", &[]);
    let detail = ws.json(&["inspect", "app@2.0.0/a.css", "--json"]);
    assert_eq!(
        detail["same_content"],
        serde_json::json!([
            "app@1.0.0/a.css",
            "app@1.0.0/copy.css",
            "app@1.9.0/a.css",
            "app@1.10.0/a.css"
        ]),
        "{detail}"
    );

    let alone = ws.json(&["inspect", "app@1.0.0/other.css", "--json"]);
    assert_eq!(alone["same_content"], serde_json::json!([]), "{alone}");
    let text = String::from_utf8(ws.ok(&["inspect", "app@1.0.0/other.css"]).stdout).unwrap();
    assert!(text.contains("no other file"), "{text}");
}

#[test]
fn every_command_speaks_of_a_version_in_the_same_words() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "let a = 1;\n".repeat(100));
    ws.write("dist/b.bin", Rng::new(5).bytes(3000));
    let published = ws.publish_json("app@1.0.0", "dist", &[]);

    // One version as every command describes it.
    let in_ls = ws.json(&["ls", "app", "--json"])[0].clone();
    let listing = ws.json(&["ls", "app@1.0.0", "--json"]);
    let inspect = ws.json(&["inspect", "app@1.0.0", "--json"]);
    let removed = ws.json(&["rm", "app@1.0.0", "--dry-run", "--json"])["versions"][0].clone();
    for (what, v) in [
        ("ls app@1.0.0", &listing),
        ("inspect", &inspect),
        ("rm", &removed),
    ] {
        for key in [
            "package",
            "version",
            "published_at",
            "file_count",
            "raw_bytes",
            "stored_bytes",
        ] {
            assert_eq!(v[key], in_ls[key], "{what} {key}: {v}");
        }
    }
    for key in [
        "package",
        "version",
        "file_count",
        "raw_bytes",
        "stored_bytes",
    ] {
        assert_eq!(published[key], in_ls[key], "publish {key}: {published}");
    }
    // Times are RFC 3339 in UTC, never epoch integers.
    let time = in_ls["published_at"].as_str().expect("a string");
    assert!(time.ends_with('Z') && time.contains('T'), "{time}");
    let secs = unix_time(&in_ls["published_at"]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - secs).abs() < 600, "{time} is not about now");
    let package = &ws.json(&["ls", "--json"])[0];
    assert_eq!(package["created_at"], in_ls["published_at"], "{package}");

    // A file is the same object in ls and inspect.
    let file = &listing["files"][0];
    let one = ws.json(&["inspect", "app@1.0.0/a.js", "--json"]);
    for key in [
        "path",
        "content_type",
        "encoding",
        "raw_bytes",
        "stored_bytes",
        "sha256",
    ] {
        assert_eq!(one[key], file[key], "{key}: {one}");
    }
    assert_eq!(inspect["files"], listing["files"]);
    // The table shows the SRI value a page pins the file with.
    let integrity = one["integrity"].as_str().expect("integrity").to_string();
    assert!(integrity.starts_with("sha256-"), "{one}");
    let text = String::from_utf8(ws.ok(&["inspect", "app@1.0.0/a.js"]).stdout).expect("UTF-8");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("integrity") && l.contains(&integrity)),
        "{text}"
    );
}

/// A catalog with 150 packages (`p000`..`p149`), the first with 130
/// versions and a version of 250 files: every listing is longer than a
/// table's default page.
fn long_listings() -> Workspace {
    let ws = Workspace::new();
    let files: Vec<(String, Vec<u8>)> = (0..250)
        .map(|i| (format!("f{i:03}.txt"), format!("{i}\n").into_bytes()))
        .collect();
    ws.write_tree("big", &files);
    ws.write("one/a.txt", "a\n");
    ws.publish("p000@1.0.0", "big", &[]);
    let conn = ws.conn();
    // Rows made directly: 150 publishes would take longer than the test
    // is worth, and listings read nothing else.
    conn.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 149)
         INSERT INTO packages (name, created_at) SELECT printf('p%03d', i), 0 FROM n;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 129)
         INSERT INTO versions (package_id, version, published_at, file_count, raw_bytes, stored_bytes)
         SELECT (SELECT id FROM packages WHERE name = 'p000'), printf('0.%d.0', i), 0, 0, 0, 0 FROM n;",
    )
    .expect("add packages and versions");
    ws
}

#[test]
fn listings_are_paged() {
    let ws = long_listings();
    let names = |v: Value, key: &str| -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|r| r[key].as_str().expect(key).to_string())
            .collect()
    };
    // JSON: everything unless asked, then exactly the window asked for.
    assert_eq!(names(ws.json(&["ls", "--json"]), "package").len(), 150);
    assert_eq!(
        names(
            ws.json(&["ls", "--json", "--limit", "2", "--offset", "10"]),
            "package"
        ),
        ["p010", "p011"]
    );
    assert_eq!(
        names(ws.json(&["ls", "p000", "--json"]), "version").len(),
        130
    );
    let versions = names(
        ws.json(&["ls", "p000", "--json", "--limit", "3"]),
        "version",
    );
    assert_eq!(versions, ["1.0.0", "0.129.0", "0.128.0"], "newest first");
    let files = ws.json(&["ls", "p000@1.0.0", "--json", "--offset", "248"]);
    assert_eq!(
        int(&files["file_count"]),
        250,
        "the total, whatever the page"
    );
    assert_eq!(
        names(files["files"].clone(), "path"),
        ["f248.txt", "f249.txt"]
    );
    assert_eq!(
        ws.json(&["ls", "--json", "--offset", "1000"]),
        Value::Array(vec![])
    );

    // Tables: 100 rows, then a line with what was left out and how to see it.
    let table = |args: &[&str]| String::from_utf8(ws.ok(args).stdout).expect("UTF-8");
    let out = table(&["ls"]);
    assert!(out.contains(" p099 ") && !out.contains(" p100 "), "{out}");
    assert!(
        out.trim_end()
            .ends_with("rows 1-100 of 150 packages; next: --offset 100 (--limit 0 lists all)"),
        "{out}"
    );
    let out = table(&["ls", "--offset", "100"]);
    assert!(out.contains(" p149 ") && !out.contains(" p099 "), "{out}");
    assert!(
        out.trim_end().ends_with("rows 101-150 of 150 packages"),
        "{out}"
    );
    let out = table(&["ls", "--limit", "0"]);
    assert!(out.contains(" p149 ") && !out.contains("rows "), "{out}");
    let out = table(&["ls", "p000", "--limit", "5", "--offset", "125"]);
    assert!(out.contains(" 0.5.0 ") && !out.contains(" 0.6.0 "), "{out}");
    assert!(
        out.trim_end().ends_with("rows 126-130 of 130 versions"),
        "{out}"
    );
    let out = table(&["ls", "p000@1.0.0"]);
    assert!(
        out.contains("f099.txt") && !out.contains("f100.txt"),
        "{out}"
    );
    assert!(
        out.contains("rows 1-100 of 250 files; next: --offset 100"),
        "{out}"
    );
    let out = table(&["ls", "p000@1.0.0", "--offset", "300"]);
    assert!(
        out.trim_end()
            .ends_with("no rows past --offset 300: there are 250 files"),
        "{out}"
    );
    // A short listing has no such line.
    ws.publish("short@1.0.0", "one", &[]);
    let out = table(&["ls", "short"]);
    assert!(!out.contains("rows "), "{out}");
}

//! `ccc ls` and `ccc inspect` JSON: exact integers, semver order, `latest`
//! and ranges.

use crate::util::{Rng, Workspace, sha256_hex};
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
    assert_eq!(int(&detail["files"]), tree.len() as u64);
    assert_eq!(int(&detail["stored_bytes"]), stored as u64);
    assert_eq!(int(&detail["shared_bytes"]), 0);
    let assets = detail["assets"].as_array().unwrap();
    let stored_sum: u64 = assets.iter().map(|a| int(&a["stored_size"])).sum();
    assert_eq!(stored_sum, stored as u64);

    let files = ws.json(&["ls", "app@1.0.0", "--json"]);
    assert_eq!(files.as_array().unwrap().len(), tree.len());
    for (path, bytes) in &tree {
        let f = files
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path.as_str())
            .unwrap_or_else(|| panic!("{path} not listed"));
        assert_eq!(int(&f["raw_size"]), bytes.len() as u64, "{path}");
        assert_eq!(f["sha256"], sha256_hex(bytes), "{path}");
    }

    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages[0]["name"], "app");
    assert_eq!(int(&packages[0]["versions"]), 1);
    assert_eq!(int(&packages[0]["latest_files"]), tree.len() as u64);
    assert_eq!(int(&packages[0]["stored_bytes"]), stored as u64);

    // A second version sharing the noise: shared_bytes is its stored size.
    ws.write("dist2/img/noise.bin", &tree[3].1);
    ws.write("dist2/new.txt", "new\n");
    ws.publish("app@1.1.0", "dist2", &[]);
    let detail = ws.json(&["inspect", "app@1.1.0", "--json"]);
    let noise = detail["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == "img/noise.bin")
        .unwrap();
    assert_eq!(int(&detail["shared_bytes"]), int(&noise["stored_size"]));
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
fn versions_are_listed_newest_first_by_semver() {
    let ws = Workspace::new();
    publish_versions(&ws, "order", &["1.10.0", "1.2.0", "1.9.0-rc.1"]);
    assert_eq!(ws.versions("order"), ["1.10.0", "1.9.0-rc.1", "1.2.0"]);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages[0]["latest"], "1.10.0");
    assert_eq!(int(&packages[0]["versions"]), 3);
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
    assert_eq!(int(&detail["raw_size"]), 5);
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
fn an_unmatched_range_is_reported_as_typed() {
    let ws = Workspace::new();
    publish_versions(&ws, "r", &["1.4.0"]);
    for (target, want) in [
        ("r@^3/v.txt", "r@^3 is not in the catalog"),
        ("r@3/v.txt", "r@3 is not in the catalog"),
        ("r@1.5/v.txt", "r@1.5 is not in the catalog"),
    ] {
        let out = ws.fails(&["cat", target], 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(want), "cat {target}: {stderr}");
    }
}

//! `ccc gc` and `ccc rm`: what is reported is exactly what goes, a dry run
//! changes nothing, and content nothing uses is dropped.

use crate::util::{Rng, Workspace};
use serde_json::Value;
use std::collections::BTreeSet;

const WEB: &[&str] = &["2.0.0", "1.0.0", "1.2.0", "1.1.0"];
const API: &[&str] = &["0.1.0", "0.3.0", "0.2.0"];

/// Two packages whose versions share some content:
/// `shared.js` is in every version of both; `vendor.js` is in web@1.0.0
/// and api@0.3.0 only; `common.js` in web@1.0.0 and web@1.1.0 only; every
/// `app.js` is unique. Versions are published out of semver order.
fn two_packages() -> Workspace {
    let ws = Workspace::new();
    let mut rng = Rng::new(7);
    let shared = rng.text(40_000);
    let vendor = rng.text(50_000);
    let common = rng.text(30_000);
    for (package, versions) in [("web", WEB), ("api", API)] {
        for version in versions {
            let id = format!("{package}@{version}");
            let dir = format!("src-{package}-{version}");
            ws.write(&format!("{dir}/shared.js"), &shared);
            let mut app = format!("/* {id} */\n").into_bytes();
            app.extend(rng.text(20_000));
            ws.write(&format!("{dir}/app.js"), app);
            if id == "web@1.0.0" || id == "api@0.3.0" {
                ws.write(&format!("{dir}/vendor.js"), &vendor);
            }
            if id == "web@1.0.0" || id == "web@1.1.0" {
                ws.write(&format!("{dir}/common.js"), &common);
            }
            ws.publish(&id, &dir, &[]);
        }
    }
    ws
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// `pkg@version` of every version a gc report lists.
fn reported(report: &Value) -> BTreeSet<String> {
    report["versions"]
        .as_array()
        .expect("versions is an array")
        .iter()
        .map(|v| {
            format!(
                "{}@{}",
                v["package"].as_str().expect("package"),
                v["version"].as_str().expect("version")
            )
        })
        .collect()
}

/// Runs gc with `args` and checks that it removed exactly what it
/// reported: the versions that left `ls`, the blobs and the blob bytes.
#[track_caller]
fn gc_checked(ws: &Workspace, args: &[&str]) -> Value {
    let versions_before: BTreeSet<String> = ws.all_versions().into_iter().collect();
    let (blobs_before, bytes_before) = ws.blob_totals();
    let mut full = vec!["gc", "--json"];
    full.extend_from_slice(args);
    let report = ws.json(&full);
    let versions_after: BTreeSet<String> = ws.all_versions().into_iter().collect();
    let (blobs_after, bytes_after) = ws.blob_totals();
    assert!(versions_after.is_subset(&versions_before));
    let gone: BTreeSet<String> = versions_before
        .difference(&versions_after)
        .cloned()
        .collect();
    assert_eq!(reported(&report), gone, "gc {args:?}: {report}");
    assert_eq!(
        report["blobs_removed"],
        blobs_before - blobs_after,
        "gc {args:?}: {report}"
    );
    assert_eq!(
        report["blob_bytes_removed"],
        bytes_before - bytes_after,
        "gc {args:?}: {report}"
    );
    assert_eq!(report["dry_run"], false);
    ws.ok(&["verify", "--quiet"]);
    report
}

/// Every file of every remaining version still reads back.
#[track_caller]
fn all_files_readable(ws: &Workspace) {
    for version in ws.all_versions() {
        for path in ws.paths(&version) {
            ws.cat(&format!("{version}/{path}"));
        }
    }
}

#[test]
fn keep_removes_exactly_what_it_reports() {
    let ws = two_packages();
    let report = gc_checked(&ws, &["--keep", "2"]);
    // Semver order, not publish order, decides what is kept.
    assert_eq!(
        reported(&report),
        set(&["web@1.0.0", "web@1.1.0", "api@0.1.0"])
    );
    // Three unique app.js and common.js; vendor.js lives on in api@0.3.0.
    assert_eq!(report["blobs_removed"], 4, "{report}");
    assert_eq!(report["packages_removed"], serde_json::json!([]));
    assert_eq!(ws.versions("web"), ["2.0.0", "1.2.0"]);
    assert_eq!(ws.versions("api"), ["0.3.0", "0.2.0"]);
    all_files_readable(&ws);

    // Nothing left to do.
    let again = gc_checked(&ws, &["--keep", "2"]);
    assert_eq!(again["versions"], serde_json::json!([]));
    assert_eq!(again["blobs_removed"], 0);
}

#[test]
fn dry_run_reports_what_a_real_run_removes_and_changes_nothing() {
    let ws = two_packages();
    let before = ws.snapshot();
    let dry = ws.json(&["gc", "--keep", "1", "--dry-run", "--json"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(ws.snapshot(), before, "gc --dry-run changed the catalog");
    let real = gc_checked(&ws, &["--keep", "1"]);
    assert_eq!(reported(&real).len(), 5, "{real}");
    for key in [
        "versions",
        "packages_removed",
        "blobs_removed",
        "blob_bytes_removed",
    ] {
        assert_eq!(dry[key], real[key], "{key}");
    }
    all_files_readable(&ws);
}

#[test]
fn older_than_removes_old_versions_and_respects_keep() {
    let ws = two_packages();
    let forty_days = 40 * 86_400;
    let aged = ws
        .conn()
        .execute(
            "UPDATE versions SET published_at = published_at - ?1
              WHERE id IN (SELECT v.id FROM versions v JOIN packages p ON p.id = v.package_id
                            WHERE p.name = 'api' OR (p.name = 'web' AND v.version = '1.0.0'))",
            [forty_days],
        )
        .unwrap();
    assert_eq!(aged, 4);

    // Nothing is 90 days old.
    let none = gc_checked(&ws, &["--older-than", "90days"]);
    assert_eq!(none["versions"], serde_json::json!([]));

    let before = ws.snapshot();
    let dry = ws.json(&["gc", "--older-than", "30days", "--dry-run", "--json"]);
    assert_eq!(
        reported(&dry),
        set(&["web@1.0.0", "api@0.1.0", "api@0.2.0", "api@0.3.0"])
    );
    assert_eq!(dry["packages_removed"], serde_json::json!(["api"]));
    assert_eq!(ws.snapshot(), before);

    // With --keep too, a version goes only when both rules allow it.
    let both = gc_checked(&ws, &["--keep", "1", "--older-than", "30days"]);
    assert_eq!(
        reported(&both),
        set(&["web@1.0.0", "api@0.1.0", "api@0.2.0"])
    );

    let rest = gc_checked(&ws, &["--older-than", "4weeks"]);
    assert_eq!(reported(&rest), set(&["api@0.3.0"]));
    assert_eq!(rest["packages_removed"], serde_json::json!(["api"]));
    ws.fails(&["ls", "api"], 1);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages.as_array().unwrap().len(), 1);
    all_files_readable(&ws);
}

#[test]
fn an_older_than_without_a_unit_names_the_expected_form() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.publish("app@1.0.0", "dist", &[]);
    let before = ws.snapshot();
    for bad in ["30", "soon", "30 fortnights"] {
        let out = ws.fails(&["gc", "--older-than", bad], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--older-than"), "{bad}: {stderr}");
        assert!(stderr.contains("30days"), "{bad}: {stderr}");
    }
    assert_eq!(ws.snapshot(), before);
}

#[test]
fn rm_keeps_blobs_until_gc_drops_the_orphans() {
    let ws = Workspace::new();
    let mut rng = Rng::new(9);
    let shared = rng.text(10_000);
    ws.write("v1/shared.js", &shared);
    ws.write("v1/only-v1.js", rng.text(12_000));
    ws.write("v2/shared.js", &shared);
    ws.write("v2/only-v2.js", rng.text(14_000));
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@2.0.0", "v2", &[]);
    assert_eq!(ws.blob_totals().0, 3);

    let removed = ws.json(&["rm", "app@1.0.0", "--json"]);
    assert_eq!(removed["versions"], serde_json::json!(["app@1.0.0"]));
    assert_eq!(ws.versions("app"), ["2.0.0"]);
    assert_eq!(ws.blob_totals().0, 3, "rm removed blobs; that is gc's job");

    let report = gc_checked(&ws, &[]);
    assert_eq!(report["versions"], serde_json::json!([]));
    assert_eq!(report["blobs_removed"], 1, "{report}");
    assert_eq!(ws.cat("app@2.0.0/shared.js"), shared);

    // A --force publish orphans the replaced content the same way.
    ws.write("v2b/shared.js", &shared);
    ws.write("v2b/other.js", "other\n");
    ws.publish("app@2.0.0", "v2b", &["--force"]);
    assert_eq!(ws.blob_totals().0, 3);
    let report = gc_checked(&ws, &[]);
    assert_eq!(report["blobs_removed"], 1, "{report}");
    assert_eq!(ws.blob_totals().0, 2);
    all_files_readable(&ws);

    // rm --all of the last version removes the package; gc then empties
    // the catalog.
    ws.ok(&["rm", "--all", "app"]);
    let report = gc_checked(&ws, &[]);
    assert_eq!(report["blobs_removed"], 2);
    assert_eq!(ws.blob_totals(), (0, 0));
    assert_eq!(ws.json(&["ls", "--json"]), serde_json::json!([]));
}

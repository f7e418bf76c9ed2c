//! `ccc gc` and `ccc rm`: what is reported is exactly what goes, a dry run
//! changes nothing, content nothing uses is dropped, and gc never removes
//! what `latest` serves: `--keep` counts releases, not prereleases.

use crate::serve_util::{Server, get};
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
        report["removed_blob_count"],
        blobs_before - blobs_after,
        "gc {args:?}: {report}"
    );
    assert_eq!(
        report["removed_stored_bytes"],
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
    assert_eq!(report["removed_blob_count"], 4, "{report}");
    assert_eq!(report["packages_removed"], serde_json::json!([]));
    assert_eq!(ws.versions("web"), ["2.0.0", "1.2.0"]);
    assert_eq!(ws.versions("api"), ["0.3.0", "0.2.0"]);
    all_files_readable(&ws);

    // Nothing left to do.
    let again = gc_checked(&ws, &["--keep", "2"]);
    assert_eq!(again["versions"], serde_json::json!([]));
    assert_eq!(again["removed_blob_count"], 0);
}

/// `ccc gc PKG-GLOB... --keep N` judges only the packages named: the
/// app's rule leaves a vendored library's versions alone; globs name
/// several (quoted from the shell); a name or glob that matches nothing
/// is an error before anything is removed.
#[test]
fn packages_named_are_the_only_ones_judged() {
    let ws = two_packages();
    let report = gc_checked(&ws, &["web", "--keep", "2"]);
    assert_eq!(reported(&report), set(&["web@1.0.0", "web@1.1.0"]));
    assert_eq!(
        ws.versions("api"),
        ["0.3.0", "0.2.0", "0.1.0"],
        "api is not judged"
    );
    // `kept` lists only what was judged.
    let kept: BTreeSet<String> = report["kept"]
        .as_array()
        .expect("kept")
        .iter()
        .map(|v| {
            format!(
                "{}@{}",
                v["package"].as_str().unwrap_or(""),
                v["version"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(kept, set(&["web@2.0.0", "web@1.2.0"]));
    // A glob, as the shell hands it over quoted; two arguments add up.
    let report = gc_checked(&ws, &["a*", "w?b", "--keep", "1"]);
    assert_eq!(
        reported(&report),
        set(&["api@0.1.0", "api@0.2.0", "web@1.2.0"])
    );
    all_files_readable(&ws);

    let snapshot = ws.snapshot();
    let out = ws.fails(&["gc", "web", "wbe", "--keep", "1"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("package wbe is not in the catalog") && err.contains("did you mean `web`?"),
        "{err}"
    );
    let out = ws.fails(&["gc", "@acme/*", "--keep", "1"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no package in the catalog matches `@acme/*`"),
        "{err}"
    );
    assert_eq!(ws.snapshot(), snapshot, "nothing removed");
    // A version is rm's to remove; a package without a rule judges nothing.
    let out = ws.fails(&["gc", "web@1.0.0", "--keep", "1"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gc judges whole packages: give `web`"),
        "{err}"
    );
    let out = ws.fails(&["gc", "web"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("limits --keep and --older-than"), "{err}");
    let out = ws.fails(&["gc", "[web", "--keep", "1"], 2);
    assert!(!out.stderr.is_empty());
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
        "kept",
        "packages_removed",
        "removed_blob_count",
        "removed_stored_bytes",
    ] {
        assert_eq!(dry[key], real[key], "{key}");
    }
    all_files_readable(&ws);
}

#[test]
fn judged_versions_are_described_as_ls_describes_them() {
    let ws = two_packages();
    let dry = ws.json(&["gc", "--keep", "1", "--dry-run", "--json"]);
    let mut listed = Vec::new();
    for package in ["web", "api"] {
        let versions = ws.json(&["ls", package, "--json"]);
        // `ls PKG` adds the dist-tags to the six fields of a version.
        listed.extend(
            versions
                .as_array()
                .expect("ls PKG --json is an array")
                .iter()
                .map(|v| {
                    let mut v = v.clone();
                    v.as_object_mut().and_then(|o| o.remove("tags"));
                    v
                }),
        );
    }
    let mut judged: Vec<Value> = Vec::new();
    for key in ["versions", "kept"] {
        for choice in dry[key].as_array().expect("a list of versions") {
            let mut version = choice.clone();
            let object = version.as_object_mut().expect("an object");
            assert!(object.remove("why").is_some(), "{choice}");
            judged.push(version);
        }
    }
    let key = |v: &Value| format!("{}@{}", v["package"], v["version"]);
    listed.sort_by_key(key);
    judged.sort_by_key(key);
    assert_eq!(judged, listed);
}

#[test]
fn older_than_removes_old_versions_but_not_latest_and_respects_keep() {
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

    // Every version of api is old, but api@0.3.0 is what `latest` serves.
    let before = ws.snapshot();
    let dry = ws.json(&["gc", "--older-than", "30days", "--dry-run", "--json"]);
    assert_eq!(
        reported(&dry),
        set(&["web@1.0.0", "api@0.1.0", "api@0.2.0"])
    );
    assert_eq!(why(&dry, "kept", "api@0.3.0"), ["latest"]);
    assert_eq!(why(&dry, "kept", "web@1.1.0"), ["recent"]);
    assert_eq!(why(&dry, "versions", "web@1.0.0"), ["old"]);
    assert_eq!(dry["packages_removed"], serde_json::json!([]));
    assert_eq!(ws.snapshot(), before);

    // With --keep too, a version goes only when both rules allow it.
    let both = gc_checked(&ws, &["--keep", "1", "--older-than", "30days"]);
    assert_eq!(
        reported(&both),
        set(&["web@1.0.0", "api@0.1.0", "api@0.2.0"])
    );
    assert_eq!(
        why(&both, "versions", "api@0.1.0"),
        ["older_release", "old"]
    );
    assert_eq!(why(&both, "kept", "web@1.1.0"), ["recent"]);

    let pinned = gc_checked(&ws, &["--older-than", "4weeks"]);
    assert_eq!(pinned["versions"], serde_json::json!([]));
    assert_eq!(ws.versions("api"), ["0.3.0"]);

    // Only --keep 0 --delete-all-versions lets `latest` go.
    let rest = gc_checked(
        &ws,
        &[
            "--keep",
            "0",
            "--delete-all-versions",
            "--older-than",
            "4weeks",
        ],
    );
    assert_eq!(reported(&rest), set(&["api@0.3.0"]));
    assert_eq!(why(&rest, "versions", "api@0.3.0"), ["all_versions", "old"]);
    assert_eq!(rest["packages_removed"], serde_json::json!(["api"]));
    ws.fails(&["ls", "api"], 1);
    let packages = ws.json(&["ls", "--json"]);
    assert_eq!(packages.as_array().unwrap().len(), 1);
    all_files_readable(&ws);
}

/// The reasons a gc report gives for `pkg@version` in its `list`
/// (`versions` for the removed, `kept` for the kept).
#[track_caller]
fn why(report: &Value, list: &str, id: &str) -> Vec<String> {
    let (package, version) = id.rsplit_once('@').expect("pkg@version");
    let choice = report[list]
        .as_array()
        .unwrap_or_else(|| panic!("{list} is an array: {report}"))
        .iter()
        .find(|c| c["package"] == package && c["version"] == version)
        .unwrap_or_else(|| panic!("{id} is not in {list}: {report}"));
    choice["why"]
        .as_array()
        .expect("why is an array")
        .iter()
        .map(|r| r.as_str().expect("a reason is a string").to_string())
        .collect()
}

/// Publishes `package` at each of `versions`, in the order given, each
/// with a `v.txt` holding its version.
fn publish_history(ws: &Workspace, package: &str, versions: &[&str]) {
    for version in versions {
        let dir = format!("src-{package}-{version}");
        ws.write(&format!("{dir}/v.txt"), version);
        ws.write(
            &format!("{dir}/app.js"),
            format!("/* {package}@{version} */\n"),
        );
        ws.publish(&format!("{package}@{version}"), &dir, &[]);
    }
}

#[test]
fn keep_counts_releases_so_latest_still_serves_the_newest_release() {
    let ws = Workspace::new();
    publish_history(&ws, "a", &["1.0.0", "1.0.1", "2.0.0-rc.1"]);
    assert_eq!(ws.cat("a@latest/v.txt"), b"1.0.1");

    let report = gc_checked(&ws, &["--keep", "1"]);
    assert_eq!(reported(&report), set(&["a@1.0.0"]));
    assert_eq!(why(&report, "versions", "a@1.0.0"), ["older_release"]);
    assert_eq!(
        why(&report, "kept", "a@1.0.1"),
        ["latest", "newest_release"]
    );
    assert_eq!(why(&report, "kept", "a@2.0.0-rc.1"), ["newer_prerelease"]);
    assert_eq!(ws.versions("a"), ["2.0.0-rc.1", "1.0.1"]);

    assert_eq!(ws.cat("a@latest/v.txt"), b"1.0.1");
    assert_eq!(ws.json(&["ls", "--json"])[0]["latest"], "1.0.1");
    let server = Server::start(&ws, &[]);
    let r = get(&server.url("/assets/a/latest/v.txt"), &[]);
    assert_eq!(r.status, 302, "{}", r.text());
    assert_eq!(r.must("location"), "/assets/a/1.0.1/v.txt");
}

/// rxjs's history in miniature: a superseded major, betas and release
/// candidates of 7.0.0 before it shipped, two 7.8 releases, and alphas of
/// the next major. Published in that (chronological) order.
const RXJS: &[&str] = &[
    "6.6.7",
    "7.0.0-beta.15",
    "7.0.0-rc.3",
    "7.0.0",
    "7.8.0",
    "7.8.1",
    "8.0.0-alpha.13",
    "8.0.0-alpha.14",
];

#[test]
fn keep_3_keeps_three_releases_of_an_rxjs_like_history() {
    let ws = Workspace::new();
    publish_history(&ws, "rxjs", RXJS);
    let before = ws.snapshot();

    // --keep-prereleases counts the prereleases a release superseded.
    let dry = ws.json(&[
        "gc",
        "--keep",
        "3",
        "--keep-prereleases",
        "1",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(reported(&dry), set(&["rxjs@6.6.7", "rxjs@7.0.0-beta.15"]));
    assert_eq!(
        why(&dry, "kept", "rxjs@7.0.0-rc.3"),
        ["newest_older_prerelease"]
    );
    assert_eq!(
        why(&dry, "versions", "rxjs@7.0.0-beta.15"),
        ["older_prerelease"]
    );

    // The table shows every choice with its reason, newest first; in 80
    // columns too, where the reasons wrap but versions are never cut.
    let narrow = ws
        .ccc()
        .env("COLUMNS", "80")
        .args(["gc", "--keep", "3", "--dry-run"])
        .output()
        .expect("run ccc");
    let narrow = String::from_utf8(narrow.stdout).unwrap();
    assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
    let table = String::from_utf8(ws.ok(&["gc", "--keep", "3", "--dry-run"]).stdout).unwrap();
    for table in [&table, &narrow] {
        let choices: Vec<(&str, &str)> = table
            .lines()
            .filter(|l| l.trim_start().starts_with("rxjs@"))
            .map(|l| {
                let mut words = l.split_whitespace();
                let version = words.next().expect("a version");
                let action = words.find(|w| ["keep", "remove"].contains(w));
                (version, action.unwrap_or_else(|| panic!("no action: {l}")))
            })
            .collect();
        assert_eq!(
            choices,
            [
                ("rxjs@8.0.0-alpha.14", "keep"),
                ("rxjs@8.0.0-alpha.13", "keep"),
                ("rxjs@7.8.1", "keep"),
                ("rxjs@7.8.0", "keep"),
                ("rxjs@7.0.0", "keep"),
                ("rxjs@7.0.0-rc.3", "remove"),
                ("rxjs@7.0.0-beta.15", "remove"),
                ("rxjs@6.6.7", "remove"),
            ],
            "{table}"
        );
    }
    for (version, reason) in [
        (
            "rxjs@8.0.0-alpha.14 ",
            "prerelease newer than every release",
        ),
        (
            "rxjs@7.8.1 ",
            "`latest` resolves to it; one of the 3 newest releases",
        ),
        ("rxjs@7.0.0 ", "one of the 3 newest releases"),
        (
            "rxjs@7.0.0-rc.3 ",
            "prerelease older than the newest release",
        ),
        ("rxjs@6.6.7 ", "release older than the 3 newest (--keep)"),
    ] {
        let line = table
            .lines()
            .find(|l| l.contains(version))
            .unwrap_or_else(|| panic!("no row for {version}: {table}"));
        assert!(
            line.contains(reason),
            "{version} should say {reason:?}: {line}"
        );
    }
    assert!(
        table.contains("Would remove 3 versions") && table.contains("kept 5 versions"),
        "{table}"
    );
    assert_eq!(ws.snapshot(), before, "a dry run changed the catalog");

    let report = gc_checked(&ws, &["--keep", "3"]);
    assert_eq!(
        reported(&report),
        set(&["rxjs@6.6.7", "rxjs@7.0.0-beta.15", "rxjs@7.0.0-rc.3"])
    );
    assert_eq!(
        ws.versions("rxjs"),
        [
            "8.0.0-alpha.14",
            "8.0.0-alpha.13",
            "7.8.1",
            "7.8.0",
            "7.0.0"
        ]
    );
    assert_eq!(ws.cat("rxjs@latest/v.txt"), b"7.8.1");
    all_files_readable(&ws);
}

#[test]
fn keep_0_is_refused_unless_delete_all_versions_says_so() {
    let ws = two_packages();
    let before = ws.snapshot();
    let out = ws.fails(&["gc", "--keep", "0"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--keep 0"), "{stderr}");
    assert!(stderr.contains("latest"), "{stderr}");
    assert!(stderr.contains("add --delete-all-versions"), "{stderr}");
    // gc's own usage, as for clap's own errors, not the top-level one.
    assert!(stderr.contains("Usage: ccc gc [OPTIONS]"), "{stderr}");
    assert!(!stderr.contains("<COMMAND>"), "{stderr}");
    for (args, needle) in [
        (
            &["gc", "--keep", "0", "--dry-run"][..],
            "--delete-all-versions",
        ),
        (&["gc", "--delete-all-versions"], "only with --keep 0"),
        (
            &["gc", "--keep", "2", "--delete-all-versions"],
            "only with --keep 0",
        ),
        (&["gc", "--keep-prereleases", "1"], "--keep <N>"),
        (
            &[
                "gc",
                "--keep",
                "0",
                "--delete-all-versions",
                "--keep-prereleases",
                "1",
            ],
            "--keep-prereleases",
        ),
    ] {
        let out = ws.fails(args, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    assert_eq!(ws.snapshot(), before);

    let everything: BTreeSet<String> = ws.all_versions().into_iter().collect();
    let dry = ws.json(&[
        "gc",
        "--keep",
        "0",
        "--delete-all-versions",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(reported(&dry), everything);
    assert_eq!(dry["kept"], serde_json::json!([]));
    assert_eq!(ws.snapshot(), before);
    let report = gc_checked(&ws, &["--keep", "0", "--delete-all-versions"]);
    let packages: BTreeSet<&str> = report["packages_removed"]
        .as_array()
        .expect("packages_removed is an array")
        .iter()
        .map(|p| p.as_str().expect("a package name"))
        .collect();
    assert_eq!(packages, BTreeSet::from(["api", "web"]));
    assert_eq!(ws.blob_totals(), (0, 0));
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
    let removed: Vec<_> = removed["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| {
            let field = |k: &str| v[k].as_str().expect("a string").to_string();
            format!("{}@{}", field("package"), field("version"))
        })
        .collect();
    assert_eq!(removed, ["app@1.0.0"]);
    assert_eq!(ws.versions("app"), ["2.0.0"]);
    assert_eq!(ws.blob_totals().0, 3, "rm removed blobs; that is gc's job");

    let report = gc_checked(&ws, &[]);
    assert_eq!(report["versions"], serde_json::json!([]));
    assert_eq!(report["removed_blob_count"], 1, "{report}");
    assert_eq!(ws.cat("app@2.0.0/shared.js"), shared);

    // A --force publish orphans the replaced content the same way.
    ws.write("v2b/shared.js", &shared);
    ws.write("v2b/other.js", "other\n");
    ws.publish("app@2.0.0", "v2b", &["--force"]);
    assert_eq!(ws.blob_totals().0, 3);
    let report = gc_checked(&ws, &[]);
    assert_eq!(report["removed_blob_count"], 1, "{report}");
    assert_eq!(ws.blob_totals().0, 2);
    all_files_readable(&ws);

    // rm --all of the last version removes the package; gc then empties
    // the catalog.
    ws.ok(&["rm", "--all", "app"]);
    let report = gc_checked(&ws, &[]);
    assert_eq!(report["removed_blob_count"], 2);
    assert_eq!(ws.blob_totals(), (0, 0));
    assert_eq!(ws.json(&["ls", "--json"]), serde_json::json!([]));
}

/// A catalog of `packages` packages `p0`, `p1`... of `versions` versions
/// each, `1.0.0` to `1.0.<versions - 1>`, every one with the same two
/// files: one is published, the others are copied in SQL (publishing
/// hundreds of versions one process at a time would take minutes).
fn many_versions(packages: usize, versions: usize) -> Workspace {
    let ws = Workspace::new();
    ws.write("dist/index.js", Rng::new(3).text(2_000));
    ws.write("dist/a b.css", "body { margin: 0 }\n");
    for p in 0..packages {
        ws.publish(&format!("p{p}@1.0.0"), "dist", &[]);
    }
    let conn = ws.conn();
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE n AS
           WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {})
           SELECT i FROM n;
         INSERT INTO versions (package_id, version, published_at, file_count, raw_bytes, stored_bytes)
           SELECT v.package_id, '1.0.' || n.i, v.published_at - n.i, v.file_count, v.raw_bytes, v.stored_bytes
             FROM versions v, n WHERE v.version = '1.0.0';
         INSERT INTO assets (version_id, path, blob_id, content_type)
           SELECT c.id, a.path, a.blob_id, a.content_type
             FROM versions c JOIN versions v ON v.package_id = c.package_id AND v.version = '1.0.0'
             JOIN assets a ON a.version_id = v.id
            WHERE c.version <> '1.0.0';",
        versions - 1
    ))
    .expect("copy versions");
    ws
}

/// What `ccc ARGS` printed, which must succeed.
#[track_caller]
fn stdout(ws: &Workspace, args: &[&str]) -> String {
    String::from_utf8(ws.ok(args).stdout).expect("UTF-8")
}

/// Lines of a table-printing gc that are rows of its table.
fn table_rows(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.trim_start().starts_with('p') && l.contains('@'))
        .collect()
}

/// The JSON lists every version judged, however many, in one valid
/// document; the table shows a page of them and says how to see them all.
#[test]
fn many_versions_are_all_in_the_json_and_a_page_in_the_table() {
    let ws = many_versions(3, 120);
    let report = ws.json(&["gc", "--keep", "2", "--dry-run", "--json"]);
    let listed = |list: &str| -> BTreeSet<String> {
        let rows = report[list].as_array().expect("a list");
        let ids: BTreeSet<String> = rows
            .iter()
            .map(|v| {
                format!(
                    "{}@{}",
                    v["package"].as_str().unwrap(),
                    v["version"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(ids.len(), rows.len(), "each version once in {list}");
        ids
    };
    let (removed, kept) = (listed("versions"), listed("kept"));
    assert_eq!((removed.len(), kept.len()), (3 * 118, 3 * 2));
    assert!(kept.contains("p1@1.0.119") && removed.contains("p2@1.0.0"));
    assert_eq!(
        report["versions"][0]["why"],
        serde_json::json!(["older_release"])
    );

    // A dry run's table: every choice, paged.
    let out = stdout(&ws, &["gc", "--keep", "2", "--dry-run"]);
    let rows = table_rows(&out);
    assert_eq!(rows.len(), 100, "{out}");
    assert!(
        rows[0].trim_start().starts_with("p0@1.0.119 "),
        "newest first: {out}"
    );
    assert!(
        out.contains("rows 1-100 of 360 versions; --json lists every one"),
        "{out}"
    );
    assert!(out.contains("Would remove 354 versions"), "{out}");

    // A real run's table: what it removed, paged.
    let out = stdout(&ws, &["gc", "--keep", "2"]);
    assert_eq!(table_rows(&out).len(), 100, "{out}");
    assert!(
        out.contains("rows 1-100 of 354 versions; --json lists every one"),
        "{out}"
    );
    let left = ws.json(&["gc", "--keep", "2", "--dry-run", "--json"]);
    assert_eq!(left["kept"].as_array().map(Vec::len), Some(6));
    assert_eq!(left["versions"], serde_json::json!([]));
}

/// A table that fits shows every row and no paging line.
#[test]
fn a_small_gc_table_shows_every_row() {
    let ws = many_versions(2, 3);
    let out = stdout(&ws, &["gc", "--keep", "1", "--dry-run"]);
    assert_eq!(table_rows(&out).len(), 6, "{out}");
    assert!(!out.contains("rows 1-"), "{out}");
}

/// Litestream holds a read transaction on the log and checkpoints the
/// catalog itself: gc neither waits for it to empty the log (which it never
/// would) nor reports the log's copy of the rewritten file as the catalog.
#[test]
fn gc_of_a_catalog_litestream_replicates_leaves_it_the_log_and_reports_true_sizes() {
    let ws = Workspace::new();
    let mut rng = Rng::new(9);
    for version in ["1.0.0", "2.0.0"] {
        ws.write(&format!("{version}/big.bin"), rng.bytes(200_000));
        ws.publish(&format!("app@{version}"), version, &[]);
    }
    let conn = ws.conn();
    conn.execute_batch("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER);")
        .expect("Litestream's table");
    // Litestream's read transaction.
    conn.execute_batch("BEGIN; SELECT count(*) FROM meta;")
        .expect("a read transaction");
    let started = std::time::Instant::now();
    let report = ws.json(&["gc", "--keep", "1", "--json"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "gc waited {:?} for the replicator's read transaction",
        started.elapsed()
    );
    assert_eq!(report["removed_blob_count"], 1, "{report}");
    let (before, after) = (
        report["file_bytes_before"].as_u64().expect("before"),
        report["file_bytes_after"].as_u64().expect("after"),
    );
    assert!(after + 150_000 < before, "{before} -> {after}");
    conn.execute_batch("COMMIT;").expect("end the read");
    assert_eq!(ws.versions("app"), ["2.0.0"]);
}

/// A bare `gc` judges no version: its summary says what it removed (blobs
/// no version uses) and that every version stays, never "kept 0 versions".
#[test]
fn a_bare_gc_says_it_only_drops_unused_blobs() {
    let ws = Workspace::new();
    for version in ["1.0.0", "1.1.0", "2.0.0"] {
        ws.write(&format!("v{version}/v.txt"), format!("{version}\n"));
        ws.publish(&format!("app@{version}"), &format!("v{version}"), &[]);
    }
    ws.ok(&["rm", "app@1.1.0"]);
    let out = ws.ok(&["gc"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "Removed 1 blob no version uses (6 B stored); every version stays: \
             without --keep or --older-than gc removes no version"
        ),
        "{text}"
    );
    assert!(!text.contains("kept 0"), "{text}");
    assert_eq!(ws.versions("app"), ["2.0.0", "1.0.0"]);
    let out = ws.ok(&["gc", "--keep", "1", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Would remove 1 version, 0 packages"),
        "{text}"
    );
    assert!(text.contains("kept 1 version"), "{text}");
}

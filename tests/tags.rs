//! Dist-tags: `ccc tag add|rm|ls`, `publish --tag` and how `latest` moves,
//! tag names refused like npm refuses them, tags through `rm`, `gc` and a
//! forced republish, and a catalog older than tags.

use crate::util::Workspace;

/// `tag=version` for every tag of `package`, `*` marking the ones a tag row
/// sets, from `ccc tag ls --json`.
#[track_caller]
fn tags(ws: &Workspace, package: &str) -> Vec<String> {
    ws.json(&["tag", "ls", package, "--json"])
        .as_array()
        .expect("tag ls --json is an array")
        .iter()
        .map(|t| {
            let star = if t["explicit"] == true { "*" } else { "" };
            format!(
                "{}{star}={}",
                t["tag"].as_str().expect("tag"),
                t["version"].as_str().expect("version")
            )
        })
        .collect()
}

/// The version `PKG@SELECTOR` resolves to, as `ccc ls` reports it.
#[track_caller]
fn resolves(ws: &Workspace, target: &str) -> String {
    ws.json(&["ls", target, "--json"])["version"]
        .as_str()
        .expect("version")
        .to_string()
}

/// Publishes `app@VERSION` (one file saying the version) with `extra` flags.
#[track_caller]
fn publish(ws: &Workspace, version: &str, extra: &[&str]) -> serde_json::Value {
    let dir = format!("v{version}");
    ws.write(&format!("{dir}/v.txt"), format!("{version}\n"));
    ws.publish_json(&format!("app@{version}"), &dir, extra)
}

#[test]
fn latest_moves_only_to_the_newest_release_unless_a_tag_says_otherwise() {
    let ws = Workspace::new();
    let report = publish(&ws, "1.0.0", &[]);
    assert_eq!(report["tags"], serde_json::json!(["latest"]));
    assert_eq!(tags(&ws, "app"), ["latest=1.0.0"]);

    // A pre-release without --tag leaves `latest` alone.
    let report = publish(&ws, "2.0.0-rc.1", &[]);
    assert_eq!(report["tags"], serde_json::json!([]));
    assert_eq!(resolves(&ws, "app@latest"), "1.0.0");

    // A release with another tag leaves `latest` where it was, though it
    // is now the newest release: `latest` is pinned.
    let report = publish(&ws, "2.0.0", &["--tag", "next"]);
    assert_eq!(report["tags"], serde_json::json!(["next"]));
    assert_eq!(tags(&ws, "app"), ["latest*=1.0.0", "next*=2.0.0"]);
    assert_eq!(resolves(&ws, "app@next"), "2.0.0");
    assert_eq!(resolves(&ws, "app@latest"), "1.0.0");
    let listed = ws.json(&["ls", "--json"]);
    assert_eq!(listed[0]["latest"], "1.0.0");

    // A backport is not the newest release: `latest` stays.
    publish(&ws, "1.1.0", &[]);
    assert_eq!(resolves(&ws, "app@latest"), "1.0.0");

    // The newest release without --tag takes `latest`, and the pin goes.
    let report = publish(&ws, "2.1.0", &[]);
    assert_eq!(report["tags"], serde_json::json!(["latest"]));
    assert_eq!(tags(&ws, "app"), ["latest=2.1.0", "next*=2.0.0"]);

    // --tag latest points it anywhere, a lower version included.
    let out = ws.ok(&["publish", "app@1.2.0", "v1.1.0", "--tag", "latest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("dist-tags that name it: latest"), "{text}");
    assert_eq!(resolves(&ws, "app@latest"), "1.2.0");
    assert_eq!(resolves(&ws, "app@^2"), "2.1.0", "ranges ignore tags");

    // Removing the `latest` tag makes it the newest release again.
    let out = ws.ok(&["tag", "rm", "app", "latest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Removed app@latest (was 1.2.0)"), "{text}");
    assert!(text.contains("2.1.0"), "{text}");
    assert_eq!(tags(&ws, "app"), ["latest=2.1.0", "next*=2.0.0"]);
    let out = ws.fails(&["tag", "rm", "app", "latest"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("newest release"), "{err}");

    // The table says which `latest` is a tag's.
    let table = String::from_utf8_lossy(&ws.ok(&["tag", "ls", "app"]).stdout).into_owned();
    assert!(table.contains("newest release (no tag)"), "{table}");
    let versions = String::from_utf8_lossy(&ws.ok(&["ls", "app"]).stdout).into_owned();
    assert!(
        versions
            .lines()
            .any(|l| l.contains("2.0.0 ") && l.contains("next")),
        "{versions}"
    );
    let json = ws.json(&["ls", "app", "--json"]);
    assert_eq!(json[0]["version"], "2.1.0");
    assert_eq!(json[0]["tags"], serde_json::json!(["latest"]));
}

#[test]
fn tag_add_moves_tags_and_refuses_what_npm_refuses() {
    let ws = Workspace::new();
    publish(&ws, "1.0.0", &[]);
    publish(&ws, "1.1.0", &[]);
    let out = ws.ok(&["tag", "add", "app@1.0.0", "beta"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("app@beta: 1.0.0 (new tag)"), "{text}");
    let out = ws.ok(&["tag", "add", "app@1.1.0", "beta"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("app@beta: 1.0.0 -> 1.1.0"), "{text}");
    assert_eq!(resolves(&ws, "app@beta"), "1.1.0");
    assert_eq!(ws.cat("app@beta/v.txt"), b"1.1.0\n");
    // Pointing `latest` at an older release rolls it back and pins it
    // there, and says what moves it again, as npm's `dist-tag add` does.
    let out = ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "app@latest is pinned at 1.0.0: prereleases, older releases and `publish --tag` \
             leave it there; a release newer than every other moves it, as npm publish does"
        ),
        "{text}"
    );
    assert_eq!(tags(&ws, "app"), ["latest*=1.0.0", "beta*=1.1.0"]);
    // Another tag gets no such line.
    let out = ws.ok(&["tag", "add", "app@1.0.0", "beta"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("stays at"));
    ws.ok(&["tag", "add", "app@1.1.0", "beta"]);

    for (tag, why) in [
        ("1.x", "parses as a semver version or range"),
        ("v2", "parses as a semver version or range"),
        ("~1.2", "parses as a semver version or range"),
        ("2.0.0", "parses as a semver version or range"),
        ("a/b", "cannot contain `/`"),
        ("..", "URL path"),
    ] {
        let out = ws.fails(&["tag", "add", "app@1.0.0", tag], 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{tag}: {err}");
        assert!(err.contains(tag), "{tag}: {err}");
        let out = ws.fails(&["publish", "app@3.0.0", "v1.0.0", "--tag", tag], 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "publish --tag {tag}: {err}");
    }
    let out = ws.fails(&["tag", "add", "app@9.9.9", "beta"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("app has no version 9.9.9"));
    let out = ws.fails(&["tag", "add", "app@latest", "beta"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a version to tag is exact"), "{err}");
    assert!(!err.contains("publish"), "{err}");
    let out = ws.fails(&["tag", "rm", "app", "nope"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("app has no dist-tag `nope`"), "{err}");
    assert!(err.contains("ccc tag ls app"), "{err}");
    let out = ws.fails(&["ls", "app@nope"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("app has no dist-tag `nope`"), "{err}");
    let out = ws.fails(&["tag", "ls", "other"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("package other is not in the catalog"));
}

/// npm's unpublish drops the tags of the version it removes; so does rm,
/// and says so. A forced republish keeps them.
#[test]
fn rm_removes_the_tags_of_the_versions_it_removes() {
    let ws = Workspace::new();
    publish(&ws, "1.0.0", &[]);
    publish(&ws, "1.1.0", &[]);
    publish(&ws, "2.0.0-beta.1", &["--tag", "beta"]);
    ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    ws.ok(&["tag", "add", "app@1.0.0", "stable"]);

    // --force keeps the version's tags on its new row.
    ws.write("v2.0.0-beta.1/more.txt", "more\n");
    ws.ok(&[
        "publish",
        "app@2.0.0-beta.1",
        "v2.0.0-beta.1",
        "--force",
        "--quiet",
    ]);
    assert_eq!(resolves(&ws, "app@beta"), "2.0.0-beta.1");
    assert_eq!(ws.cat("app@beta/more.txt"), b"more\n");

    let dry = ws.json(&["rm", "app@1.0.0", "--dry-run", "--json"]);
    assert_eq!(
        dry["tags_removed"],
        serde_json::json!([
            {"package": "app", "tag": "latest", "version": "1.0.0"},
            {"package": "app", "tag": "stable", "version": "1.0.0"},
        ])
    );
    assert_eq!(
        resolves(&ws, "app@latest"),
        "1.0.0",
        "a dry run changes nothing"
    );
    let out = ws.ok(&["rm", "app@1.0.0", "app@2.0.0-beta.1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Removed dist-tag app@stable (named 1.0.0)"),
        "{text}"
    );
    assert!(
        text.contains("Removed dist-tag app@beta (named 2.0.0-beta.1)"),
        "{text}"
    );
    // Without its tag, `latest` is the newest release left.
    assert_eq!(tags(&ws, "app"), ["latest=1.1.0"]);
    let out = ws.fails(&["ls", "app@stable"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no dist-tag `stable`"));
}

#[test]
fn gc_keeps_every_tagged_version() {
    let ws = Workspace::new();
    for v in ["1.0.0", "1.1.0", "1.2.0", "2.0.0"] {
        publish(&ws, v, &[]);
    }
    ws.ok(&["tag", "add", "app@1.0.0", "lts"]);
    ws.ok(&["tag", "add", "app@1.1.0", "latest"]);
    let report = ws.json(&["gc", "--keep", "1", "--json"]);
    let why = |list: &str| -> Vec<String> {
        report[list]
            .as_array()
            .expect("a list")
            .iter()
            .map(|c| format!("{}: {}", c["version"], c["why"]))
            .collect()
    };
    assert_eq!(
        why("kept"),
        [
            r#""2.0.0": ["newest_release"]"#,
            r#""1.1.0": ["latest"]"#,
            r#""1.0.0": ["tagged"]"#
        ]
    );
    assert_eq!(why("versions"), [r#""1.2.0": ["older_release"]"#]);
    assert_eq!(tags(&ws, "app"), ["latest*=1.1.0", "lts*=1.0.0"]);
    let table = ws.ok(&["gc", "--keep", "1", "--dry-run"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("a dist-tag names it"), "{text}");
}

/// A catalog from before tags is read, listed and resolved as it is
/// (`latest` the newest release); the first writing command adds tags.
#[test]
fn a_catalog_without_tags_works_until_a_writer_upgrades_it() {
    let ws = Workspace::new();
    publish(&ws, "1.0.0", &[]);
    publish(&ws, "1.1.0", &[]);
    ws.downgrade_to_before_check_digests();
    ws.conn()
        .execute_batch(
            "DROP TABLE dist_tags;
             DROP TABLE brotli;
             UPDATE meta SET value = '2' WHERE key = 'schema_version';
             PRAGMA user_version = 2;",
        )
        .expect("downgrade");
    assert_eq!(tags(&ws, "app"), ["latest=1.1.0"]);
    assert_eq!(resolves(&ws, "app@latest"), "1.1.0");
    let out = ws.fails(&["ls", "app@beta"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no dist-tag `beta`"));
    {
        let server = crate::serve_util::Server::start(&ws, &[]);
        let r = crate::serve_util::get(&server.url("/assets/app/latest/v.txt"), &[]);
        assert_eq!(r.status, 302);
        assert_eq!(r.must("location"), "/assets/app/1.1.0/v.txt");
        let r = crate::serve_util::get(&server.url("/assets/app/"), &[]);
        assert_eq!(r.json()["tags"][0]["version"], "1.1.0");
    }
    let version = |ws: &Workspace| -> i64 {
        ws.conn()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .expect("user_version")
    };
    assert_eq!(version(&ws), 2, "read-only commands never migrate");
    ws.ok(&["tag", "add", "app@1.0.0", "old"]);
    assert_eq!(version(&ws), ccc::testing::catalog::SCHEMA_VERSION);
    assert_eq!(tags(&ws, "app"), ["latest=1.1.0", "old*=1.0.0"]);
}

#[test]
fn tag_add_latest_is_moved_by_a_newer_release_as_its_message_says() {
    let ws = Workspace::new();
    publish(&ws, "1.0.0", &[]);
    publish(&ws, "2.0.0", &[]);
    let out = ws.ok(&["tag", "add", "app@1.0.0", "latest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a release newer than every other moves it"),
        "{text}"
    );
    publish(&ws, "2.1.0-rc.1", &[]);
    publish(&ws, "1.1.0", &[]);
    assert_eq!(resolves(&ws, "app@latest"), "1.0.0");
    let report = publish(&ws, "3.0.0", &[]);
    assert_eq!(report["tags"], serde_json::json!(["latest"]));
    assert_eq!(resolves(&ws, "app@latest"), "3.0.0");
}

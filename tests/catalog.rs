//! Opening catalog files: anything that is not a ccc catalog of this
//! schema is refused with an error naming the file, and never rewritten;
//! read-only commands never create a catalog.

use crate::serve_util::{Server, get};
use crate::util::{Rng, Workspace, gunzip};
use ccc::catalog::{BROTLI_INDEX_SCHEMA, BROTLI_SCHEMA, SCHEMA_VERSION};

/// The schema just before the brotli table.
const BEFORE_BROTLI: i64 = BROTLI_SCHEMA - 1;
use sha2::{Digest, Sha256};
use std::io::Write;

/// Every command that opens a catalog, with arguments that would succeed on
/// a catalog holding `app@1.0.0` with `a.js`.
const COMMANDS: &[&[&str]] = &[
    &["ls"],
    &["ls", "app"],
    &["inspect", "app@1.0.0"],
    &["cat", "app@1.0.0/a.js"],
    &["verify"],
    &["gc"],
    &["rm", "app@1.0.0"],
    &["publish", "app@2.0.0", "dist"],
];

/// Runs every command against `--db FILE` and checks that each fails with
/// exit 1 and an `error:` naming the file and containing `needle`, and
/// that FILE's bytes are unchanged.
#[track_caller]
fn all_refuse(ws: &Workspace, file: &str, needle: &str) {
    let path = ws.path().join(file);
    let before = std::fs::read(&path).expect("read the catalog file");
    for command in COMMANDS {
        let mut args = vec!["--db", file];
        args.extend_from_slice(command);
        let out = ws.fails(&args, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let error = stderr
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or_else(|| panic!("{command:?}: no error line: {stderr}"));
        assert!(error.contains(file), "{command:?}: {error}");
        assert!(error.contains(needle), "{command:?}: {error}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            std::fs::read(&path).expect("read the catalog file") == before,
            "{command:?} changed {file}"
        );
    }
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.write("notes.txt", "these are my notes, not a database at all\n");
    all_refuse(&ws, "notes.txt", "not a SQLite database");
    ws.write("short.bin", "hi");
    all_refuse(&ws, "short.bin", "not a SQLite database");
}

#[test]
fn a_sqlite_file_that_is_not_a_catalog_is_refused() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    let other = ws.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO users (name) VALUES ('ada');",
        )
        .unwrap();
    }
    all_refuse(&ws, "other.db", "not a ccc catalog");
    let conn = rusqlite::Connection::open(&other).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(tables, ["users"]);
}

#[test]
fn a_catalog_from_a_newer_ccc_is_refused() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.publish("app@1.0.0", "dist", &[]);
    ws.conn()
        .pragma_update(None, "user_version", 999)
        .expect("set user_version");
    all_refuse(&ws, "cdn.db", "newer ccc");
    let out = ws.fails(&["ls"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("upgrade ccc"));
    let version: i64 = ws
        .conn()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 999);
}

/// A serve that stops at once, refusing the catalog: exit 1 and an error
/// naming the file with `needle`.
#[track_caller]
fn serve_refuses(ws: &Workspace, needle: &str) {
    let out = ws.fails(&["serve", "--port", "0"], 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cdn.db"), "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
}

#[test]
fn serve_refuses_a_catalog_from_a_newer_ccc() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.publish("app@1.0.0", "dist", &[]);
    ws.conn()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .expect("set user_version");
    serve_refuses(&ws, "newer ccc");
}

/// `(user_version, whether blobs has stored_sha256)`.
fn schema(ws: &Workspace) -> (i64, bool) {
    let conn = ws.conn();
    let version = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("user_version");
    let column = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('blobs') WHERE name = 'stored_sha256'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("table_info");
    (version, column == 1)
}

/// Whether the catalog has the `brotli` table.
fn has_brotli_table(ws: &Workspace) -> bool {
    ws.conn()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'brotli'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("sqlite_master")
        == 1
}

/// Makes the catalog what ccc wrote just before brotli: the same tables
/// without `brotli`.
fn downgrade_to_before_brotli(ws: &Workspace) {
    ws.conn()
        .execute_batch(&format!(
            "DROP TABLE brotli;
             UPDATE meta SET value = '{BEFORE_BROTLI}' WHERE key = 'schema_version';
             PRAGMA user_version = {BEFORE_BROTLI};"
        ))
        .expect("downgrade");
    assert_eq!(schema(ws), (BEFORE_BROTLI, true));
    assert!(!has_brotli_table(ws));
}

/// Makes the catalog what the first ccc wrote: schema 1, the tables
/// without `brotli`, `blobs.stored_sha256` and `dist_tags`.
fn downgrade_to_schema_1(ws: &Workspace) {
    downgrade_to_before_brotli(ws);
    ws.conn()
        .execute_batch(
            "ALTER TABLE blobs DROP COLUMN stored_sha256;
             DROP TABLE dist_tags;
             UPDATE meta SET value = '1' WHERE key = 'schema_version';
             PRAGMA user_version = 1;",
        )
        .expect("downgrade");
    assert_eq!(schema(ws), (1, false));
}

/// `stored_sha256` of the blob holding `content`, or `None` when NULL.
fn stored_digest(ws: &Workspace, content: &[u8]) -> Option<Vec<u8>> {
    ws.conn()
        .query_row(
            "SELECT stored_sha256 FROM blobs WHERE sha256 = ?1",
            [Sha256::digest(content).to_vec()],
            |r| r.get(0),
        )
        .expect("the blob is stored")
}

/// A catalog written before stored digests existed is served and read as
/// it is, its blobs checked by decoding; the first writing command upgrades
/// it without touching the old blobs, and new blobs get their digest.
#[test]
fn a_catalog_of_the_previous_schema_is_served_as_it_is_until_a_writer_upgrades_it() {
    let ws = Workspace::new();
    let text = Rng::new(3).text(40_000);
    let noise = Rng::new(4).bytes(5_000);
    ws.write("v1/app.js", &text);
    ws.write("v1/logo.bin", &noise);
    ws.write("v1/v.txt", "one\n");
    ws.publish("app@1.0.0", "v1", &[]);
    downgrade_to_schema_1(&ws);
    // A gzip stream that decodes, to other bytes: with no stored digest,
    // only decoding finds it.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&Rng::new(5).text(40_000)).expect("gzip");
    let changed = ws
        .conn()
        .execute(
            "UPDATE blobs SET body = ?1 WHERE sha256 = ?2",
            rusqlite::params![gz.finish().expect("gzip"), Sha256::digest(&text).to_vec()],
        )
        .expect("tamper");
    assert_eq!(changed, 1);

    // Read-only commands read it as it is.
    assert_eq!(ws.cat("app@1.0.0/logo.bin"), noise);
    assert_eq!(ws.paths("app@1.0.0"), ["app.js", "logo.bin", "v.txt"]);
    let out = ws.fails(&["verify", "--json"], 1);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // (The version's stored total no longer matches either.)
    let problems: Vec<&serde_json::Value> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter(|p| p["kind"] == "blob")
        .collect();
    assert_eq!(problems.len(), 1, "{report}");
    assert_eq!(problems[0]["affects"][0], "app@1.0.0/app.js", "{report}");
    assert!(
        problems[0]["detail"]
            .as_str()
            .expect("detail")
            .contains("content hashes to"),
        "{report}"
    );

    // So does the server, checking by decoding.
    {
        let server = Server::start(&ws, &[]);
        let url = |path: &str| server.url(&format!("/assets/app/1.0.0/{path}"));
        for accept in [&[][..], &[("Accept-Encoding", "gzip")][..]] {
            let r = get(&url("v.txt"), accept);
            assert_eq!(r.status, 200);
            let body = match r.header("content-encoding") {
                Some("gzip") => gunzip(&r.body),
                _ => r.body,
            };
            assert_eq!(body, b"one\n");
            let r = get(&url("logo.bin"), accept);
            assert_eq!((r.status, r.body), (200, noise.clone()));
            assert_eq!(get(&url("app.js"), accept).status, 500);
        }
        let stderr = server.stderr();
        assert!(stderr.contains("app@1.0.0/app.js"), "{stderr}");
        assert!(stderr.contains("content hashes to"), "{stderr}");
    }
    assert_eq!(schema(&ws), (1, false), "nothing read-only migrated it");

    // A writing command upgrades it; the old blobs keep no digest (nothing
    // rewritten), and are still checked by decoding.
    ws.ok(&["gc", "--dry-run"]);
    assert_eq!(schema(&ws), (SCHEMA_VERSION, true));
    assert_eq!(stored_digest(&ws, &noise), None);
    ws.write("v2/app.js", Rng::new(6).text(40_000));
    ws.write("v2/logo.bin", Rng::new(7).bytes(5_000));
    ws.publish("app@2.0.0", "v2", &[]);
    for (content, encoding) in [
        (Rng::new(6).text(40_000), "gzip"),
        (Rng::new(7).bytes(5_000), "identity"),
    ] {
        let (body, stored_encoding): (Vec<u8>, String) = ws
            .conn()
            .query_row(
                "SELECT body, encoding FROM blobs WHERE sha256 = ?1",
                [Sha256::digest(&content).to_vec()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("the new blob");
        assert_eq!(stored_encoding, encoding);
        assert_eq!(
            stored_digest(&ws, &content),
            Some(Sha256::digest(&body).to_vec()),
            "{encoding}: the digest of the bytes as stored"
        );
    }
    let server = Server::start(&ws, &[]);
    let url = |version: &str, path: &str| server.url(&format!("/assets/app/{version}/{path}"));
    assert_eq!(get(&url("2.0.0", "logo.bin"), &[]).status, 200);
    assert_eq!(
        gunzip(&get(&url("2.0.0", "app.js"), &[("Accept-Encoding", "gzip")]).body),
        Rng::new(6).text(40_000)
    );
    assert_eq!(get(&url("1.0.0", "app.js"), &[]).status, 500);
}

/// A catalog written before brotli is served and read as it is:
/// gzip to clients that would take br, listings without variants; the
/// first writing command adds the (empty) brotli table without touching a
/// blob, and from then on new content gets brotli streams while the old
/// is served as before.
#[test]
fn a_catalog_from_before_brotli_is_served_as_it_is_until_a_writer_upgrades_it() {
    let ws = Workspace::new();
    let old = Rng::new(11).script(60_000);
    ws.write("v1/app.js", &old);
    ws.write("v1/logo.bin", Rng::new(12).bytes(5_000));
    ws.publish("app@1.0.0", "v1", &[]);
    downgrade_to_before_brotli(&ws);
    let blobs_before: Vec<(Vec<u8>, Vec<u8>)> = {
        let conn = ws.conn();
        let mut stmt = conn
            .prepare("SELECT sha256, body FROM blobs ORDER BY id")
            .expect("blobs");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("blobs")
            .collect::<rusqlite::Result<_>>()
            .expect("blobs")
    };

    // Read-only commands and the server read it as it is.
    assert_eq!(ws.cat("app@1.0.0/app.js"), old);
    for file in ws.files("app@1.0.0") {
        assert_eq!(file["variants"], serde_json::json!([]), "{file}");
    }
    let detail = ws.json(&["inspect", "app@1.0.0/app.js", "--json"]);
    assert_eq!(detail["variants"], serde_json::json!([]));
    let report = ws.json(&["verify", "--json"]);
    assert_eq!(
        (report["ok"].clone(), report["brotli_count"].clone()),
        (true.into(), 0.into())
    );
    let serve_old = |ws: &Workspace| {
        let server = Server::start(ws, &[]);
        let url = server.url("/assets/app/1.0.0/app.js");
        let r = get(&url, &[("Accept-Encoding", "br, gzip")]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-encoding"), Some("gzip"));
        assert_eq!(gunzip(&r.body), old);
        let r = get(&url, &[("Accept-Encoding", "br")]);
        assert_eq!((r.header("content-encoding"), &r.body), (None, &old));
        let listing = get(&server.url("/assets/app/1.0.0/"), &[]).json();
        assert_eq!(listing["files"][0]["variants"], serde_json::json!([]));
    };
    serve_old(&ws);
    assert_eq!(
        schema(&ws),
        (BEFORE_BROTLI, true),
        "nothing read-only migrated it"
    );
    assert!(!has_brotli_table(&ws));

    // A writing command upgrades it, rewriting no blob.
    ws.ok(&["gc", "--dry-run"]);
    assert_eq!(schema(&ws), (SCHEMA_VERSION, true));
    assert!(has_brotli_table(&ws));
    let blobs_after: Vec<(Vec<u8>, Vec<u8>)> = {
        let conn = ws.conn();
        let mut stmt = conn
            .prepare("SELECT sha256, body FROM blobs ORDER BY id")
            .expect("blobs");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("blobs")
            .collect::<rusqlite::Result<_>>()
            .expect("blobs")
    };
    assert_eq!(blobs_after, blobs_before);
    serve_old(&ws);

    // New content gets its brotli stream; the old is served as before.
    let new = Rng::new(13).script(60_000);
    ws.write("v2/app.js", &new);
    ws.publish("app@2.0.0", "v2", &[]);
    let server = Server::start(&ws, &[]);
    let r = get(
        &server.url("/assets/app/2.0.0/app.js"),
        &[("Accept-Encoding", "br, gzip")],
    );
    assert_eq!(r.header("content-encoding"), Some("br"));
    let mut decoded = Vec::new();
    ::brotli::BrotliDecompress(&mut &r.body[..], &mut decoded).expect("brotli");
    assert_eq!(decoded, new);
    let r = get(
        &server.url("/assets/app/1.0.0/app.js"),
        &[("Accept-Encoding", "br, gzip")],
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(ws.json(&["verify", "--json"])["brotli_count"], 1);
}

/// Whether the catalog has the index gc finds unused brotli streams by.
fn has_brotli_index(ws: &Workspace) -> bool {
    ws.conn()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'brotli_by_blob'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("sqlite_master")
        == 1
}

/// A catalog from before gc's brotli index gets it from the first writer,
/// and that gc drops the brotli streams no version uses any more.
#[test]
fn a_catalog_without_the_brotli_index_gets_it_from_gc() {
    let ws = Workspace::new();
    for (version, seed) in [("1.0.0", 21), ("2.0.0", 22)] {
        ws.write(&format!("{version}/app.js"), Rng::new(seed).script(60_000));
        ws.publish(&format!("app@{version}"), version, &[]);
    }
    let before = BROTLI_INDEX_SCHEMA - 1;
    ws.conn()
        .execute_batch(&format!(
            "DROP INDEX brotli_by_blob;
             UPDATE meta SET value = '{before}' WHERE key = 'schema_version';
             PRAGMA user_version = {before};"
        ))
        .expect("downgrade");
    assert!(!has_brotli_index(&ws));
    assert_eq!(ws.json(&["verify", "--json"])["brotli_count"], 2);

    let report = ws.json(&["gc", "--keep", "1", "--json"]);
    assert_eq!(schema(&ws), (SCHEMA_VERSION, true));
    assert!(has_brotli_index(&ws));
    assert_eq!(report["removed_brotli_count"], 1, "{report}");
    assert_eq!(ws.json(&["verify", "--json"])["brotli_count"], 1);
}

#[test]
fn commands_on_a_missing_catalog_fail_with_a_hint_and_create_nothing() {
    let ws = Workspace::new();
    for command in [
        &["ls"][..],
        &["ls", "app"],
        &["ls", "--json"],
        &["inspect", "app@1.0.0"],
        &["cat", "app@1.0.0/a.js"],
        &["verify"],
        &["verify", "--json"],
        &["gc"],
        &["gc", "--dry-run"],
        &["rm", "app@1.0.0"],
    ] {
        let out = ws.fails(command, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error: no catalog at"),
            "{command:?}: {stderr}"
        );
        assert!(stderr.contains("cdn.db"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("ccc publish"),
            "{command:?}: no hint: {stderr}"
        );
        let left: Vec<_> = std::fs::read_dir(ws.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{command:?} left {left:?}");
    }
}

#[test]
fn writers_leave_the_write_ahead_log_empty_while_a_reader_holds_the_file() {
    // A reader open all along (as `ccc serve` is) keeps cdn.db-wal alive
    // past every writer; what it holds must not outlive the writer, or a
    // file renamed over cdn.db would be read through it.
    let ws = Workspace::new();
    ws.write("dist/a.js", "one");
    ws.publish("app@1.0.0", "dist", &[]);
    let reader =
        rusqlite::Connection::open_with_flags(ws.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let versions = |c: &rusqlite::Connection| -> Vec<String> {
        let mut stmt = c
            .prepare("SELECT version FROM versions ORDER BY id")
            .expect("sql");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.collect::<rusqlite::Result<_>>().expect("rows")
    };
    assert_eq!(versions(&reader), ["1.0.0"]);
    let wal = ws.path().join("cdn.db-wal");
    for (i, args) in [
        &["publish", "app@1.1.0", "dist", "--quiet"][..],
        &["rm", "app@1.0.0"][..],
        &["gc"][..],
    ]
    .iter()
    .enumerate()
    {
        ws.ok(args);
        assert!(wal.exists(), "the reader keeps the log file");
        let size = std::fs::metadata(&wal).expect("wal").len();
        assert_eq!(size, 0, "after `ccc {}` (step {i})", args.join(" "));
    }
    assert_eq!(versions(&reader), ["1.1.0"], "the reader sees every commit");
}

//! Opening catalog files: anything that is not a ccc catalog of this
//! schema is refused with an error naming the file, and never rewritten;
//! read-only commands never create a catalog. A catalog this user may only
//! read serves every read-only command and `serve`, and no reader leaves
//! side files of its own beside another user's catalog.

use crate::serve_util::{STARTUP, Server, get, poll_until, sigterm};
use crate::util::{Rng, RunAs, Workspace, ccc_as, gunzip};
use ccc::testing::catalog::{
    BROTLI_INDEX_SCHEMA, BROTLI_SCHEMA, CHECK_DIGEST_SCHEMA, SCHEMA_VERSION,
};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

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
    &["deltas"],
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
fn an_empty_file_is_no_catalog_yet_for_every_command() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "a\n");
    ws.write("empty.db", "");
    // Every command but publish says what it is, and leaves it alone.
    for command in COMMANDS.iter().filter(|c| c[0] != "publish") {
        let mut args = vec!["--db", "empty.db"];
        args.extend_from_slice(command);
        let out = ws.fails(&args, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error: empty.db is empty (0 bytes), not a catalog"),
            "{command:?}: {stderr}"
        );
        assert!(
            stderr.contains("`ccc publish <pkg>@<version> <DIR>` creates the catalog in it"),
            "{command:?}: {stderr}"
        );
        assert_eq!(
            std::fs::metadata(ws.path().join("empty.db")).unwrap().len(),
            0
        );
    }
    // A dry run writes nothing; publish makes the catalog, as where there
    // is no file.
    ws.ok(&[
        "--db",
        "empty.db",
        "publish",
        "app@1.0.0",
        "dist",
        "--dry-run",
    ]);
    assert_eq!(
        std::fs::metadata(ws.path().join("empty.db")).unwrap().len(),
        0
    );
    ws.ok(&["--db", "empty.db", "publish", "app@1.0.0", "dist"]);
    ws.ok(&["--db", "empty.db", "cat", "app@1.0.0/a.js"]);
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
    ws.downgrade_to_before_check_digests();
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

/// The stored-bytes digest `column` (`stored_sha256`, `stored_xxh3`) of
/// the blob holding `content`, or `None` when NULL.
fn stored(ws: &Workspace, column: &str, content: &[u8]) -> Option<Vec<u8>> {
    ws.conn()
        .query_row(
            &format!("SELECT {column} FROM blobs WHERE sha256 = ?1"),
            [Sha256::digest(content).to_vec()],
            |r| r.get(0),
        )
        .expect("the blob is stored")
}

/// Replaces the stored body of the blob holding `content` with a valid
/// gzip stream of other text (seeded with `seed`), behind ccc's back.
fn replace_with_other_gzip(ws: &Workspace, content: &[u8], seed: u64) {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&Rng::new(seed).text(40_000)).expect("gzip");
    let changed = ws
        .conn()
        .execute(
            "UPDATE blobs SET body = ?1 WHERE sha256 = ?2",
            rusqlite::params![gz.finish().expect("gzip"), Sha256::digest(content).to_vec()],
        )
        .expect("tamper");
    assert_eq!(changed, 1);
}

fn stored_digest(ws: &Workspace, content: &[u8]) -> Option<Vec<u8>> {
    stored(ws, "stored_sha256", content)
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
    replace_with_other_gzip(&ws, &text, 5);

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

/// A catalog from before XXH3 digests is served as it is, each body checked
/// against its sha256; the first writer upgrades it without rewriting a
/// blob, and new blobs get the digest the server checks.
#[test]
fn a_catalog_from_before_xxh3_digests_is_checked_by_sha256_until_a_writer_upgrades_it() {
    let ws = Workspace::new();
    let text = Rng::new(31).text(40_000);
    ws.write("v1/app.js", &text);
    ws.write("v1/v.txt", "one\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.downgrade_to_before_check_digests();
    let before = CHECK_DIGEST_SCHEMA - 1;
    assert_eq!(schema(&ws), (before, true));
    replace_with_other_gzip(&ws, &text, 32);
    {
        let server = Server::start(&ws, &[]);
        let url = |path: &str| server.url(&format!("/assets/app/1.0.0/{path}"));
        assert_eq!(get(&url("v.txt"), &[]).body, b"one\n");
        assert_eq!(
            get(&url("app.js"), &[("Accept-Encoding", "gzip")]).status,
            500
        );
        // The log line is written beside the answer, not before it.
        poll_until(STARTUP, || server.stderr().contains("app@1.0.0/app.js"));
        let stderr = server.stderr();
        assert!(stderr.contains("app@1.0.0/app.js"), "{stderr}");
        assert!(stderr.contains("stored bytes hash to "), "{stderr}");
        assert!(
            !stderr.contains("xxh3"),
            "no XXH3 digest to check: {stderr}"
        );
    }
    assert_eq!(schema(&ws), (before, true), "nothing read-only migrated it");

    ws.ok(&["gc", "--dry-run"]);
    assert_eq!(schema(&ws), (SCHEMA_VERSION, true));
    assert_eq!(
        stored(&ws, "stored_xxh3", b"one\n"),
        None,
        "no blob rewritten"
    );
    let new = Rng::new(33).text(40_000);
    ws.write("v2/app.js", &new);
    ws.publish("app@2.0.0", "v2", &[]);
    let body: Vec<u8> = ws
        .conn()
        .query_row(
            "SELECT body FROM blobs WHERE sha256 = ?1",
            [Sha256::digest(&new).to_vec()],
            |r| r.get(0),
        )
        .expect("the blob is stored");
    let xxh3 = xxhash_rust::xxh3::xxh3_128(&body).to_be_bytes().to_vec();
    assert_eq!(stored(&ws, "stored_xxh3", &new), Some(xxh3));
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
    ws.downgrade_to_before_check_digests();
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

/// Sets the mode of `path`.
fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The catalog's side files in `dir`, with their owners.
fn side_files(dir: &Path) -> Vec<(String, u32)> {
    let mut found: Vec<(String, u32)> = std::fs::read_dir(dir)
        .expect("read the folder")
        .map(|e| e.expect("a directory entry"))
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("cdn.db-")
        })
        .map(|e| {
            let uid = e.metadata().expect("stat").uid();
            (e.file_name().to_string_lossy().into_owned(), uid)
        })
        .collect();
    found.sort();
    found
}

/// A workspace whose `ro/cdn.db` holds `app@1.0.0` and `app@1.1.0`, and the
/// catalog's folder.
fn catalog_in_a_folder_of_its_own() -> (Workspace, std::path::PathBuf) {
    let ws = Workspace::new();
    ws.write("v1/a.js", "let a = 1;\n");
    ws.write("v2/a.js", "let a = 2;\n");
    ws.publish("app@1.0.0", "v1", &[]);
    ws.publish("app@1.1.0", "v2", &[]);
    let folder = ws.path().join("ro");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::rename(ws.db(), folder.join("cdn.db")).expect("move the catalog");
    (ws, folder)
}

/// Every read-only command, with arguments that succeed on
/// [`catalog_in_a_folder_of_its_own`]'s catalog; OUT names a path to write.
const READ_ONLY_COMMANDS: &[&[&str]] = &[
    &["ls"],
    &["ls", "app", "--json"],
    &["inspect", "app@1.1.0"],
    &["inspect", "app@1.1.0/a.js"],
    &["cat", "app@1.0.0/a.js"],
    &["diff", "app@1.0.0", "app@1.1.0"],
    &["tag", "ls", "app"],
    &["verify"],
    &["export", "app", "OUT"],
    &["backup", "OUT"],
];

#[test]
fn a_read_only_catalog_in_a_read_only_folder_serves_every_read_only_command() {
    // A 444 catalog in a 555 folder: what a read-only image or mount gives.
    let (ws, folder) = catalog_in_a_folder_of_its_own();
    let db = folder.join("cdn.db");
    chmod(&db, 0o444);
    chmod(&folder, 0o555);
    let run = |args: &[&str], code: i32| {
        let mut cmd = ccc_as(RunAs::BoundByPermissions)?;
        let out = cmd
            .current_dir(ws.path())
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("run ccc");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        Some((String::from_utf8_lossy(&out.stdout).into_owned(), stderr))
    };
    for (i, command) in READ_ONLY_COMMANDS.iter().enumerate() {
        let out = format!("out-{i}");
        let args: Vec<&str> = command
            .iter()
            .map(|a| if *a == "OUT" { out.as_str() } else { a })
            .collect();
        if run(&args, 0).is_none() {
            println!("note: skipped: running as root without setpriv");
            return;
        }
        assert_eq!(side_files(&folder), [], "after {args:?}");
    }

    // A backup into the read-only folder names its destination.
    let (_, stderr) = run(&["backup", "ro/copy.db"], 1).expect("as above");
    assert!(
        stderr.contains("cannot write the backup ro/copy.db: cannot create a file in ro: "),
        "{stderr}"
    );
    assert!(
        stderr.to_lowercase().contains("permission denied"),
        "{stderr}"
    );
    assert_eq!(side_files(&folder), [], "after a failed backup");
    assert_eq!(
        std::fs::read_dir(&folder).expect("ls").count(),
        1,
        "cdn.db alone"
    );

    // serve, and what it serves.
    let mut cmd = ccc_as(RunAs::BoundByPermissions).expect("setpriv, as above");
    cmd.current_dir(ws.path())
        .arg("--db")
        .arg(&db)
        .args(["serve", "--port", "0"]);
    let mut server = Server::start_with(&mut cmd);
    let r = get(&server.url("/assets/app/1.1.0/a.js"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "let a = 2;\n"));
    sigterm(server.pid());
    let status = server.wait_exit(STARTUP).expect("serve stops");
    assert!(status.success(), "{}", server.stderr());
    assert_eq!(side_files(&folder), [], "after serve");

    // A log left with commits and no -shm to read it through (a writer
    // that died as it closed) cannot be read here: the error says so.
    chmod(&folder, 0o755);
    chmod(&db, 0o644);
    let wal = folder.join("cdn.db-wal");
    std::fs::write(&wal, vec![1u8; 4096]).expect("write a log");
    chmod(&folder, 0o555);
    let (_, stderr) = run(&["ls"], 1).expect("as above");
    assert!(stderr.contains("error:"), "{stderr}");
    assert!(stderr.contains("cdn.db-wal"), "names the log: {stderr}");
    assert!(stderr.contains("-shm"), "says what is missing: {stderr}");
    assert!(stderr.contains("owner"), "says what to do: {stderr}");
    chmod(&folder, 0o755);
    std::fs::remove_file(&wal).expect("rm the log");
}

#[test]
fn a_read_only_folder_reads_a_writers_log_through_its_side_files() {
    // The owner has the catalog open and a commit still in its log; the
    // folder is read-only to the reader, which creates nothing and still
    // sees that commit.
    let (ws, folder) = catalog_in_a_folder_of_its_own();
    let db = folder.join("cdn.db");
    let writer = rusqlite::Connection::open(&db).expect("open");
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0;
             INSERT INTO dist_tags (package_id, tag, version_id)
                 SELECT package_id, 'beta', id FROM versions WHERE version = '1.0.0';",
        )
        .expect("tag in the log");
    let before = side_files(&folder);
    assert_eq!(before.len(), 2, "{before:?}");
    // Every file read-only to the reader too, the index included: SQLite
    // then reads the log without writing to the index (the writer, which
    // opened them before, is not affected).
    for name in ["cdn.db", "cdn.db-wal", "cdn.db-shm"] {
        chmod(&folder.join(name), 0o444);
    }
    chmod(&folder, 0o555);
    let Some(mut cmd) = ccc_as(RunAs::BoundByPermissions) else {
        println!("note: skipped: running as root without setpriv");
        chmod(&folder, 0o755);
        return;
    };
    let out = cmd
        .current_dir(ws.path())
        .arg("--db")
        .arg(&db)
        .args(["tag", "ls", "app"])
        .output()
        .expect("run ccc");
    chmod(&folder, 0o755);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("beta"),
        "the log's commit is read: {stdout}"
    );
    assert_eq!(side_files(&folder), before, "nothing new beside the file");
    drop(writer);
}

/// `nobody` on most systems; any user without a password entry would do.
const OWNER: u32 = 65534;
/// Another user, who may read the owner's catalog.
const OTHER: u32 = 65533;

#[test]
fn readers_leave_no_side_files_of_their_own_beside_another_users_catalog() {
    // The catalog belongs to OWNER, in a folder everyone may write. Another
    // user's reads, and root's, must leave nothing that stops OWNER's next
    // publish (a -shm OWNER cannot write would).
    let (ws, folder) = catalog_in_a_folder_of_its_own();
    let db = folder.join("cdn.db");
    ws.write("v3/a.js", "let a = 3;\n");
    ws.write("v4/a.js", "let a = 4;\n");
    chmod(ws.path(), 0o755);
    for dir in ["v3", "v3/a.js", "v4", "v4/a.js"] {
        let path = ws.path().join(dir);
        chmod(&path, if path.is_dir() { 0o755 } else { 0o644 });
    }
    rustix::fs::chown(&folder, Some(uid(OWNER)), Some(gid(OWNER))).expect("chown");
    rustix::fs::chown(&db, Some(uid(OWNER)), Some(gid(OWNER))).expect("chown");
    chmod(&folder, 0o777);
    if ccc_as(RunAs::User(OTHER)).is_none() {
        println!("note: skipped: needs root and setpriv to run as other users");
        return;
    }
    let run = |who: RunAs, args: &[&str]| {
        let mut cmd = ccc_as(who).expect("as above");
        let out = cmd
            .current_dir(&folder)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("run ccc");
        assert!(
            out.status.success(),
            "{who:?} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for args in [&["ls"][..], &["cat", "app@1.0.0/a.js"], &["verify"]] {
        run(RunAs::User(OTHER), args);
        assert_eq!(side_files(&folder), [], "{args:?} as {OTHER}");
        let mut as_root = vec!["--db", db.to_str().expect("UTF-8")];
        as_root.extend_from_slice(args);
        ws.ok(&as_root);
        assert_eq!(side_files(&folder), [], "{args:?} as root");
    }
    let v3 = ws.path().join("v3");
    run(
        RunAs::User(OWNER),
        &["publish", "app@1.2.0", v3.to_str().expect("UTF-8"), "-q"],
    );

    // Servers of both, while the owner publishes: root's side files are
    // the owner's, and the other user's server, which read the file alone
    // (it may not create side files), sees the new version too.
    let mut cmd = ws.ccc_std();
    cmd.arg("--db").arg(&db).args(["serve", "--port", "0"]);
    let mut root_server = Server::start_with(&mut cmd);
    for (name, owner) in side_files(&folder) {
        assert_eq!(owner, OWNER, "{name} while root serves");
    }
    let mut cmd = ccc_as(RunAs::User(OTHER)).expect("as above");
    cmd.current_dir(&folder)
        .arg("--db")
        .arg(&db)
        .args(["serve", "--port", "0"]);
    sigterm(root_server.pid());
    root_server.wait_exit(STARTUP).expect("serve stops");
    assert_eq!(side_files(&folder), [], "root's server folded the log in");
    let other_server = Server::start_with(&mut cmd);
    let r = get(&other_server.url("/assets/app/1.2.0/a.js"), &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "let a = 3;\n"));
    let v4 = ws.path().join("v4");
    run(
        RunAs::User(OWNER),
        &["publish", "app@1.3.0", v4.to_str().expect("UTF-8"), "-q"],
    );
    let url = other_server.url("/assets/app/1.3.0/a.js");
    let seen = poll_until(STARTUP, || get(&url, &[]).status == 200);
    assert!(seen.is_some(), "{}", other_server.stderr());
    assert_eq!(get(&url, &[]).text(), "let a = 4;\n");
    drop(other_server);
    for (name, owner) in side_files(&folder) {
        assert_eq!(owner, OWNER, "{name} after the other user's server");
    }
    run(RunAs::User(OWNER), &["verify"]);
}

fn uid(raw: u32) -> rustix::fs::Uid {
    rustix::fs::Uid::from_raw(raw)
}

fn gid(raw: u32) -> rustix::fs::Gid {
    rustix::fs::Gid::from_raw(raw)
}

/// A catalog another user owns, mode 444, in a folder this user may write:
/// every writing command says the catalog is read-only for this user and
/// names it, instead of SQLite's "attempt to write a readonly database".
#[test]
fn writing_to_another_users_read_only_catalog_names_it() {
    let (ws, folder) = catalog_in_a_folder_of_its_own();
    let db = folder.join("cdn.db");
    chmod(&db, 0o444);
    chmod(&folder, 0o777);
    let v3 = ws.path().join("v3");
    ws.write("v3/a.js", "let a = 3;\n");
    chmod(&v3, 0o755);
    let Some(mut cmd) = ccc_as(RunAs::User(65534)) else {
        println!("note: skipped: needs root and setpriv to run as another user");
        return;
    };
    let before = std::fs::read(&db).expect("read the catalog");
    let publish = ["publish", "app@2.0.0", v3.to_str().expect("UTF-8")];
    for args in [
        &publish[..],
        &["tag", "add", "app@1.0.0", "beta"],
        &["gc"],
        &["rm", "app@1.0.0"],
    ] {
        let out = cmd
            .current_dir(&folder)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("run ccc");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "error: catalog {} is read-only for this user: it cannot be changed",
                db.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("database error"), "{args:?}: {stderr}");
        cmd = ccc_as(RunAs::User(65534)).expect("as above");
    }
    assert_eq!(std::fs::read(&db).expect("read the catalog"), before);
}

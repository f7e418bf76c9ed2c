//! Opening catalog files: anything that is not a ccc catalog of this
//! schema is refused with an error naming the file, and never rewritten;
//! read-only commands never create a catalog.

use crate::util::Workspace;

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

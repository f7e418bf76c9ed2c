//! Shared helpers: a hermetic `ccc` command, temporary workspaces, catalog
//! snapshots read straight from `cdn.db`, and deterministic test data.

#![allow(dead_code)]

use assert_cmd::Command;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A temporary directory holding a catalog (`cdn.db`) and source trees.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.path().join("cdn.db")
    }

    /// `ccc` with `--db` pointing into this workspace and no environment
    /// leaking in from the developer's shell.
    pub fn ccc(&self) -> Command {
        let mut cmd = ccc();
        cmd.current_dir(self.path()).env("CCC_DB_PATH", self.db());
        cmd
    }

    /// The same as [`Workspace::ccc`], as a `std::process::Command` (for a
    /// child that the test starts, watches and kills).
    pub fn ccc_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(ccc_path());
        hermetic(&mut cmd);
        cmd.current_dir(self.path()).env("CCC_DB_PATH", self.db());
        cmd
    }

    /// Writes `contents` at `rel` below the workspace, creating folders.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        self.write_path(rel, contents)
    }

    /// [`Workspace::write`] for names that are not UTF-8.
    pub fn write_path(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write");
        path
    }

    /// Writes every `(path, bytes)` of `files` below `dir`.
    pub fn write_tree(&self, dir: &str, files: &[(String, Vec<u8>)]) {
        for (rel, bytes) in files {
            self.write(&format!("{dir}/{rel}"), bytes);
        }
    }

    /// Runs `ccc ARGS`, requires success and returns its output.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> Output {
        let out = self.ccc().args(args).output().expect("run ccc");
        assert!(
            out.status.success(),
            "ccc {args:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs `ccc ARGS`, requires exit code `code` and returns its output.
    #[track_caller]
    pub fn fails(&self, args: &[&str], code: i32) -> Output {
        let out = self.ccc().args(args).output().expect("run ccc");
        assert_eq!(
            out.status.code(),
            Some(code),
            "ccc {args:?}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs `ccc ARGS` (which must include `--json`), requires success and
    /// parses stdout.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.ok(args);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "ccc {args:?} printed invalid JSON ({e}):\n{}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// `ccc publish TARGET DIR --quiet` (plus `extra`), required to succeed.
    #[track_caller]
    pub fn publish(&self, target: &str, dir: &str, extra: &[&str]) -> Output {
        let mut args = vec!["publish", target, dir, "--quiet"];
        args.extend_from_slice(extra);
        self.ok(&args)
    }

    /// `ccc publish --json`, parsed.
    #[track_caller]
    pub fn publish_json(&self, target: &str, dir: &str, extra: &[&str]) -> Value {
        let mut args = vec!["publish", target, dir, "--json"];
        args.extend_from_slice(extra);
        self.json(&args)
    }

    /// `ccc cat TARGET`'s stdout.
    #[track_caller]
    pub fn cat(&self, target: &str) -> Vec<u8> {
        self.ok(&["cat", target]).stdout
    }

    /// The files of a version, from `ccc ls PKG@VERSION --json`.
    #[track_caller]
    pub fn files(&self, version: &str) -> Vec<Value> {
        let listing = self.json(&["ls", version, "--json"]);
        listing["files"]
            .as_array()
            .unwrap_or_else(|| panic!("ls {version} --json has no files list: {listing}"))
            .clone()
    }

    /// The paths of a version, from `ccc ls PKG@VERSION --json`.
    #[track_caller]
    pub fn paths(&self, version: &str) -> Vec<String> {
        self.files(version)
            .iter()
            .map(|f| f["path"].as_str().expect("path is a string").to_string())
            .collect()
    }

    /// The versions of a package, newest first, from `ccc ls PKG --json`.
    #[track_caller]
    pub fn versions(&self, package: &str) -> Vec<String> {
        self.json(&["ls", package, "--json"])
            .as_array()
            .expect("ls PKG --json is an array")
            .iter()
            .map(|v| v["version"].as_str().expect("version").to_string())
            .collect()
    }

    /// When `package@version` was published, in Unix seconds, from
    /// `ccc ls PKG --json`.
    #[track_caller]
    pub fn published_at(&self, package: &str, version: &str) -> i64 {
        let versions = self.json(&["ls", package, "--json"]);
        let v = versions
            .as_array()
            .expect("ls PKG --json is an array")
            .iter()
            .find(|v| v["version"] == version)
            .unwrap_or_else(|| panic!("{package}@{version} not listed: {versions}"));
        unix_time(&v["published_at"])
    }

    /// Every `pkg@version` in the catalog, sorted, read through `ccc ls`.
    #[track_caller]
    pub fn all_versions(&self) -> Vec<String> {
        let packages = self.json(&["ls", "--json"]);
        let mut out = Vec::new();
        for p in packages.as_array().expect("ls --json is an array") {
            let name = p["package"].as_str().expect("package");
            for v in self.versions(name) {
                out.push(format!("{name}@{v}"));
            }
        }
        out.sort();
        out
    }

    /// A read-write connection to the catalog, for inspecting or damaging
    /// it behind ccc's back.
    pub fn conn(&self) -> Connection {
        Connection::open_with_flags(self.db(), OpenFlags::SQLITE_OPEN_READ_WRITE)
            .expect("open cdn.db")
    }

    /// Makes the catalog what ccc wrote before XXH3 digests (and chunks):
    /// the schema before `CHECK_DIGEST_SCHEMA`, whose rows keep their
    /// bodies as they are. The start of every test that downgrades further.
    pub fn downgrade_to_before_check_digests(&self) {
        let before = ccc::testing::catalog::CHECK_DIGEST_SCHEMA - 1;
        self.conn()
            .execute_batch(&format!(
                "DROP TABLE site_versions;
                 DROP TABLE sites;
                 DROP TABLE brotli_made;
                 DROP TABLE tokens;
                 DROP TABLE audit;
                 DROP TABLE recoded;
                 DROP TABLE deltas;
                 DROP TABLE pieces;
                 DROP TABLE refs;
                 DROP TABLE chunks;
                 ALTER TABLE blobs DROP COLUMN stored_xxh3;
                 ALTER TABLE brotli DROP COLUMN stored_xxh3;
                 UPDATE meta SET value = '{before}' WHERE key = 'schema_version';
                 PRAGMA user_version = {before};"
            ))
            .expect("downgrade");
    }

    /// `(count(*), sum(length(body)))` over the blobs table.
    pub fn blob_totals(&self) -> (i64, i64) {
        self.conn()
            .query_row(
                "SELECT count(*), coalesce(sum(length(body)), 0) FROM blobs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("blob totals")
    }

    /// Everything the catalog holds, one line per row, in a stable order:
    /// two equal snapshots mean an unchanged catalog. Also includes what
    /// `ccc ls --json` prints.
    #[track_caller]
    pub fn snapshot(&self) -> Vec<String> {
        let conn = Connection::open_with_flags(self.db(), OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open cdn.db read-only");
        let mut lines = Vec::new();
        let mut dump = |label: &str, sql: &str| {
            let mut stmt = conn.prepare(sql).expect("prepare snapshot query");
            let n = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    let cells: Vec<String> = (0..n)
                        .map(|i| {
                            let v: rusqlite::types::Value = r.get(i).expect("cell");
                            match v {
                                rusqlite::types::Value::Blob(b) => {
                                    format!("blob:{}", hex::encode(Sha256::digest(&b)))
                                }
                                other => format!("{other:?}"),
                            }
                        })
                        .collect();
                    Ok(cells.join(" | "))
                })
                .expect("snapshot query");
            for row in rows {
                lines.push(format!("{label}: {}", row.expect("row")));
            }
        };
        dump("user_version", "PRAGMA user_version");
        dump("meta", "SELECT key, value FROM meta ORDER BY key");
        dump(
            "package",
            "SELECT id, name, created_at FROM packages ORDER BY id",
        );
        dump(
            "version",
            "SELECT id, package_id, version, published_at, file_count, raw_bytes, stored_bytes
               FROM versions ORDER BY id",
        );
        dump(
            "blob",
            "SELECT id, sha256, raw_size, encoding, body FROM blobs ORDER BY id",
        );
        dump(
            "asset",
            "SELECT version_id, path, blob_id, content_type FROM assets ORDER BY version_id, path",
        );
        let ls = self.ok(&["ls", "--json"]).stdout;
        lines.push(format!("ls --json: {}", String::from_utf8_lossy(&ls)));
        lines
    }

    /// Runs a publish that must fail with exit 1, an `error:` line that
    /// contains every one of `needles`, and no change to the catalog.
    #[track_caller]
    pub fn publish_fails(&self, args: &[&str], needles: &[&str]) -> String {
        self.publish_fails_with(args, 1, needles)
    }

    /// [`Workspace::publish_fails`] with exit code `code` (2 for a command
    /// line clap refuses).
    #[track_caller]
    pub fn publish_fails_with(&self, args: &[&str], code: i32, needles: &[&str]) -> String {
        let before = self.snapshot();
        let out = self.fails(args, code);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(stderr.contains("error:"), "ccc {args:?}: {stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "ccc {args:?}: stderr should mention {needle:?}:\n{stderr}"
            );
        }
        assert_eq!(
            self.snapshot(),
            before,
            "ccc {args:?} failed but changed the catalog"
        );
        stderr
    }
}

/// The `ccc` binary under test.
pub fn ccc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ccc"))
}

/// Clears every `CCC_*`, `NO_COLOR` and `COLUMNS` variable.
pub fn hermetic(cmd: &mut std::process::Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if key.starts_with("CCC_")
            || key.starts_with("npm_config_")
            || key == "NO_COLOR"
            || key == "COLUMNS"
        {
            cmd.env_remove(key);
        }
    }
    // `ccc importmap` asks the npm registry what a lacking package needs;
    // a test that wants that names its registry and removes this.
    cmd.env("CCC_OFFLINE", "1");
}

/// Who runs a `ccc` started by [`ccc_as`].
#[derive(Debug, Clone, Copy)]
pub enum RunAs {
    /// This process's user, with file permissions binding: under root,
    /// without the capabilities that bypass them.
    BoundByPermissions,
    /// Another user and group, both `uid` (root only).
    User(u32),
}

/// The `ccc` binary, hermetic, run as `who` (through `setpriv` where
/// needed). None when that is impossible here: root without setpriv, or
/// another user asked for by a process that is not root.
pub fn ccc_as(who: RunAs) -> Option<std::process::Command> {
    let root = rustix::process::geteuid().is_root();
    let setpriv = || {
        ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|p| Path::new(p).exists())
    };
    let mut cmd = match who {
        RunAs::BoundByPermissions if !root => std::process::Command::new(ccc_path()),
        RunAs::BoundByPermissions => {
            let mut cmd = std::process::Command::new(setpriv()?);
            cmd.args([
                "--inh-caps=-all",
                "--bounding-set=-dac_override,-dac_read_search",
            ]);
            cmd.arg(ccc_path());
            cmd
        }
        RunAs::User(_) if !root => return None,
        RunAs::User(uid) => {
            let mut cmd = std::process::Command::new(setpriv()?);
            cmd.args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                "--clear-groups".into(),
            ]);
            cmd.arg(ccc_path());
            cmd
        }
    };
    hermetic(&mut cmd);
    Some(cmd)
}

/// The `ccc` binary with every `CCC_*`, `NO_COLOR` and `COLUMNS` variable
/// cleared.
pub fn ccc() -> Command {
    let mut cmd = std::process::Command::new(ccc_path());
    hermetic(&mut cmd);
    Command::from_std(cmd)
}

/// The repository root (where Cargo.toml is).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// ccc's seeded generator ([`ccc::testing::SplitMix64`]) with the test data
/// made from it, the same on every run.
pub struct Rng(ccc::testing::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(ccc::testing::SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    /// `len` bytes of noise: gzip cannot shrink them.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(len);
        out
    }

    /// About `len` bytes of script whose lines share their structure, as a
    /// bundle's do: brotli beats gzip on it by well over the 5% that keeps
    /// a brotli stream (on [`Rng::text`]'s random words it does not).
    pub fn script(&mut self, len: usize) -> Vec<u8> {
        const WORDS: &[&str] = &["render", "state", "props", "effect", "memo", "ref"];
        let mut out = Vec::with_capacity(len + 64);
        let mut i = 0usize;
        while out.len() < len {
            let word = WORDS[self.below(WORDS.len())];
            out.extend_from_slice(
                format!(
                    "function {word}{}(a,b){{return a.{word}+b*{}}}\n",
                    i % 97,
                    i * 31
                )
                .as_bytes(),
            );
            i += 1;
        }
        out
    }

    /// `len` bytes of JavaScript-looking text: compressible, but every run
    /// of it different.
    pub fn text(&mut self, len: usize) -> Vec<u8> {
        const WORDS: &[&str] = &[
            "function",
            "return",
            "const",
            "let",
            "var",
            "if",
            "else",
            "for",
            "while",
            "this",
            "null",
            "undefined",
            "true",
            "false",
            "=>",
            "{",
            "}",
            "(",
            ")",
            ";",
            "import",
            "export",
            "default",
            "class",
            "extends",
            "new",
            "await",
            "async",
            "document",
            "window",
            "console.log",
            "props",
            "state",
            "render",
            "useEffect",
            "useState",
            "module",
            "require",
            "map",
            "filter",
            "reduce",
            "length",
            "push",
            "Object.keys",
            "JSON.stringify",
            "Promise",
            "then",
            "catch",
            "throw",
            "Error",
            "switch",
            "case",
            "break",
            "typeof",
            "instanceof",
            "===",
            "!==",
            "&&",
            "||",
            "+",
            "-",
            "*",
            "/",
        ];
        let mut out = Vec::with_capacity(len + 32);
        while out.len() < len {
            let r = self.next_u64();
            out.extend_from_slice(WORDS[(r % WORDS.len() as u64) as usize].as_bytes());
            match (r >> 32) % 16 {
                0 => out.extend_from_slice(format!("{}", (r >> 40) % 10_000).as_bytes()),
                1 => out.push(b'\n'),
                _ => {}
            }
            out.push(b' ');
        }
        out.truncate(len);
        out
    }
}

/// A JSON time (RFC 3339, as every `ccc --json` prints times) in Unix
/// seconds.
#[track_caller]
pub fn unix_time(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("a time is an RFC 3339 string, got {value}"));
    let t = humantime::parse_rfc3339(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    t.duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}

/// The sha256 of `bytes`, as lowercase hex (as `ccc --json` prints it).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Decompresses a gzip stream.
#[track_caller]
pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a valid gzip stream");
    out
}

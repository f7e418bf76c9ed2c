//! The catalog: one SQLite file (`cdn.db`) holding packages, versions,
//! content-addressed blobs and the assets that tie paths to blobs.
//!
//! # Schema
//!
//! ```text
//! packages (id, name UNIQUE, created_at)
//! versions (id, package_id -> packages, version, published_at,
//!           file_count, raw_bytes, stored_bytes, UNIQUE(package_id, version))
//! blobs    (id, sha256 UNIQUE (32 bytes), raw_size, encoding 'gzip'|'identity', body,
//!           stored_sha256 (32 bytes or NULL), stored_xxh3 (16 bytes or NULL))
//! brotli   (blob_id -> blobs PRIMARY KEY, body, stored_sha256 (32 bytes),
//!           stored_xxh3 (16 bytes or NULL))
//! assets   (version_id -> versions, path, blob_id -> blobs, content_type,
//!           PRIMARY KEY(version_id, path)) WITHOUT ROWID
//! meta     (key PRIMARY KEY, value)       -- created_by, schema_version
//! dist_tags (package_id -> packages, tag, version_id -> versions,
//!           PRIMARY KEY(package_id, tag)) WITHOUT ROWID
//! chunks   (blob_id -> blobs, seq, body, stored_xxh3 (16 bytes),
//!           PRIMARY KEY(blob_id, seq))   -- big files: see [`chunks`]
//! pieces   (blob_id -> blobs, coding 0 body | 1 brotli, digests (16 bytes
//!           per 64 KiB piece), PRIMARY KEY(blob_id, coding)) WITHOUT ROWID
//!                                        -- streams over 64 KiB: [`pieces`]
//! deltas   (id, blob_id -> blobs, dictionary_id -> blobs, coding 'dcb'|'dcz',
//!           stored_xxh3 (16 bytes), body, UNIQUE(blob_id, dictionary_id, coding))
//! recoded  (blob_id -> blobs PRIMARY KEY, generation)
//!                                        -- deltas between releases: [`deltas`]
//! brotli_made (blob_id -> blobs PRIMARY KEY, quality)
//!                                        -- brotli upgraded later: [`recompress`]
//! refs     (version_id -> versions, path, line, col, kind, written, class,
//!           target)                      -- what files reference: `crate::refs`
//! tokens   (id, name, kind, selector UNIQUE, hash (32 bytes), scopes (JSON),
//!           created_at, expires_at, last_used_at, revoked_at, created_by,
//!           claims (JSON))               -- who may write over HTTP: [`tokens`]
//! audit    (id, at, token, client, action, target, status, detail)
//!                                        -- what they did: [`audit`]
//! ```
//!
//! A blob is stored once however many versions use it; deleting a version
//! leaves its blobs until `gc` drops the ones no asset references.
//! A dist-tag names one version of its package and goes with it; [`tags`]
//! has the rules, `latest`'s included.
//!
//! `assets.content_type` records the type a file was published with;
//! readers compute it from the path instead ([`content_type`] says why).
//!
//! `sha256` is the digest of the original file; `stored_sha256` that of
//! `body` as stored (the gzip stream, or the file itself when stored
//! `identity`, where the two are equal), and `stored_xxh3` the XXH3-128 of
//! the same bytes (big-endian). The server checks every body it loads
//! against `stored_xxh3`, one pass at memory speed, instead of inflating it
//! or hashing it with sha256, which was the largest single cost of a miss
//! (bench/RPS.md). The check guards against damage, not against an
//! attacker: whoever can rewrite a body can rewrite its digests too, so a
//! fast non-cryptographic hash with 128 bits loses nothing there. `ccc
//! verify` checks every digest and that the body decodes to the file's
//! `sha256`. Blobs written before a digest existed have it NULL and are
//! checked with the next one they have (`stored_sha256` before schema 6,
//! decoding before schema 2): a migration does not fill a digest, since
//! that would rewrite every blob of the catalog (each row holds its body)
//! in the first writing command after an upgrade.
//!
//! `brotli` holds a second coding of a gzip blob's content, the brotli
//! stream publish keeps when it is at least 5% smaller than the gzip one;
//! `sha256` of the blob names the content of both. It is a table of its
//! own rather than a column of `blobs` because:
//!
//! - `blobs.encoding` has a CHECK that allows only `gzip` and `identity`,
//!   and SQLite cannot change a CHECK without copying the table, which
//!   would rewrite every body of the catalog on upgrade;
//! - in one record, a column after `body` is reached only by walking the
//!   gzip body's overflow pages, so serving brotli would read the gzip
//!   stream from disk too; in its own table each stream is its own record,
//!   found by the blob's id (an integer primary key, the rowid);
//! - `length(body)` over `blobs` stays the size of what every client can
//!   be sent, and a catalog without the table (schema 3) is read by the
//!   same queries minus one join.
//!
//! Deleting a blob deletes its brotli stream (`ON DELETE CASCADE`), and gc
//! also drops streams whose blob is gone (a catalog changed with foreign
//! keys off).
//!
//! A stored stream (a blob's body or its brotli stream) longer than one
//! piece (64 KiB) also has the XXH3-128 of each of its pieces in `pieces`,
//! so that a reader checks a range by the pieces it covers instead of
//! hashing the whole stream first; [`pieces`] says why and how. Unlike the
//! digests above, the upgrade to schema 9 fills them for every stream
//! already stored: they are rows of their own, so filling them reads each
//! body once and rewrites none.
//!
//! # Compatibility
//!
//! The file is marked with `PRAGMA application_id` so that ccc can tell its
//! own catalogs from other SQLite files, and the schema is versioned by
//! `PRAGMA user_version`. `MIGRATIONS` is append-only: migration `i` takes
//! the schema from version `i` to `i + 1`, applied in one exclusive
//! transaction by any command that writes. Read-only commands and `serve`
//! never migrate: they read any schema from [`OLDEST_READABLE_SCHEMA`] on
//! as it is (queries that need a newer column ask for it only when
//! [`Catalog::schema`] has it). A catalog from a newer ccc, a SQLite file
//! that is not a catalog and a file that is not SQLite at all are refused
//! with an error naming the file; nothing is ever rewritten silently.
//!
//! # Concurrency and durability
//!
//! The journal is WAL, so readers (ls, serve) never block the single writer.
//! Writers take the write lock up front (`BEGIN IMMEDIATE`) and commit with
//! `synchronous = FULL`, so a committed publish survives power loss and an
//! interrupted one leaves the catalog exactly as it was. Read-only commands
//! never create the file and never change what it holds (see [`Access`]).
//!
//! # One file at rest
//!
//! While any process has the catalog open, SQLite keeps two side files next
//! to it: `cdn.db-wal` (committed transactions not yet copied into `cdn.db`)
//! and `cdn.db-shm` (the index of that log). When the last connection to the
//! file closes, SQLite copies the log into `cdn.db` and deletes both, but
//! only if that connection may write: a connection opened read-only leaves
//! them behind. So every ccc connection of the catalog's owner, the
//! read-only commands' and the server's included, opens the file read-write
//! (never creating it), and read-only ones then switch on `PRAGMA
//! query_only`, which refuses every change to the content while still
//! letting the close fold the log in. After any command ends, and after
//! `serve` stops on SIGINT/SIGTERM, only `cdn.db` remains unless another
//! process still has it open; that process's own close removes the side
//! files then. SQLite decides who is last with a lock, so a reader that ends
//! during another process's publish leaves the log alone.
//!
//! A reader that may not write the catalog or its folder, or is another
//! user than its owner, creates no side file at all: it reads through the
//! owner's side files when they exist, and opens the file `immutable`
//! when they do not. [`read_only`] says when each way applies.
//!
//! A writer that is not the last (`ccc serve` has the file open) leaves the
//! log behind, so writers also empty it as they close (a `PASSIVE`
//! checkpoint, which lets another writer in meanwhile, then a `TRUNCATE`
//! one). Writers turn SQLite's automatic checkpoints off
//! (`wal_autocheckpoint = 0`): SQLite runs one inside the commit that
//! grows the log past 1000 pages, so a big publish's commit would copy the
//! whole log into the file before returning, seconds during which Ctrl-C
//! cannot stop it. The closing checkpoint is where that copy happens
//! instead, after the commit, and Ctrl-C abandons it within milliseconds
//! (the log keeps what was committed; the next writer's close folds it
//! in). So does a writer that gave up waiting for another's lock: it leaves
//! at once. SQLite ties `cdn.db-wal` to the file by name only: a file
//! renamed over `cdn.db` while the server runs would otherwise be read
//! through the old file's leftover log, a mix of two catalogs. An empty log
//! is harmless. See `store` for how the server follows a replaced file.
//!
//! A catalog that Litestream replicates is the exception: Litestream holds
//! a read transaction on the log so that no checkpoint passes what it has
//! copied, and checkpoints itself. A `TRUNCATE` checkpoint would wait that
//! transaction out for nothing (a second per command) and race Litestream's
//! own, so a writer that finds Litestream's tables (`_litestream_seq`) does
//! no closing checkpoint (and, like every writer, no automatic one), as
//! Litestream's documentation asks, and leaves the log to it.
//!
//! A command waits up to [`LOCK_PATIENCE`] for another one's lock (`publish`
//! as long as it takes, or `--wait`, one deadline for all its waits:
//! [`wait_for_locks`]), and stops
//! waiting at once on Ctrl-C (see `interrupt`); [`Catalog::stop_on_interrupt`]
//! also cuts a long statement short (gc's `VACUUM`, verify's integrity
//! check). Either way the error is [`Error::Interrupted`] and SQLite rolls the
//! open transaction back.

pub(crate) mod archive;
pub(crate) mod audit;
pub(crate) mod backup;
pub(crate) mod chunks;
pub(crate) mod compression;
pub(crate) mod content_type;
pub(crate) mod deltas;
pub(crate) mod diff;
pub(crate) mod digest;
pub(crate) mod export;
pub(crate) mod gc;
pub(crate) mod generation;
mod held;
pub(crate) mod lookup;
pub(crate) mod make_deltas;
pub(crate) mod manifest;
pub(crate) mod pieces;
pub(crate) mod publish;
pub(crate) mod query;
pub(crate) mod read_only;
pub(crate) mod recompress;
pub(crate) mod rows;
pub(crate) mod side_files;
pub(crate) mod sites;
pub(crate) mod tags;
pub(crate) mod tokens;
pub(crate) mod verify;

pub(crate) use crate::encoding::Encoding;
use crate::error::{Error, Result};
use read_only::ReadWay;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a command waits for another command's lock on the catalog,
/// unless it says otherwise ([`wait_for_locks`]).
pub(crate) const LOCK_PATIENCE: Duration = Duration::from_secs(10);
/// How long this process waits for a lock, in ms (`u64::MAX`: no bound).
static LOCK_WAIT_MS: AtomicU64 = AtomicU64::new(LOCK_PATIENCE.as_millis() as u64);
/// Whether the bound covers every wait of this process together, from
/// the first ([`wait_for_locks`]), rather than each wait on its own.
static ONE_WAIT: AtomicBool = AtomicBool::new(false);
/// When the current wait began (for [`ONE_WAIT`], the first one).
static WAIT_STARTED: Mutex<Option<Instant>> = Mutex::new(None);
/// Set once a wait ran out: the lock is someone else's, and this process
/// is giving up.
static GAVE_UP: AtomicBool = AtomicBool::new(false);
/// A command still waiting for a lock after this long (or half its bound,
/// when that is shorter) says so, once.
const ANNOUNCE_WAIT_AFTER: Duration = Duration::from_secs(1);
static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Sets how long this process's commands wait for another command's lock
/// on the catalog: `None` for as long as it takes (`publish`, whose work
/// would otherwise be lost), else at most `bound` (`publish --wait`). One
/// clock then governs every wait of the process, from the first: however
/// many steps find the catalog locked (opening it, its write lock), the
/// waits add up to `bound` at most.
pub(crate) fn wait_for_locks(bound: Option<Duration>) {
    let ms = bound.map_or(u64::MAX, |b| {
        u64::try_from(b.as_millis()).unwrap_or(u64::MAX)
    });
    LOCK_WAIT_MS.store(ms, Ordering::Relaxed);
    ONE_WAIT.store(true, Ordering::Relaxed);
}

/// Starts the next lock wait afresh: for a long-lived process (`serve`'s
/// write API) whose earlier wait ran out, so that the next writer waits
/// its whole bound again and empties the log as it closes.
pub(crate) fn forget_lock_wait() {
    GAVE_UP.store(false, Ordering::Relaxed);
    *WAIT_STARTED.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// What every change of the catalog records inside its own transaction,
/// just before it commits: what each site serves from now on
/// ([`sites::record_moves`]), and the catalog's next generation.
pub(crate) fn changed(tx: &rusqlite::Connection) -> rusqlite::Result<()> {
    sites::record_moves(tx)?;
    generation::stamp(tx)
}

/// `ccc1` as a big-endian u32: marks a SQLite file as a ccc catalog.
pub(crate) const APPLICATION_ID: i32 = 0x6363_6331;

/// SQLite's file header: the magic string, then fields at fixed offsets.
/// <https://www.sqlite.org/fileformat.html#the_database_header>
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Bytes of the header needed to read `application_id` (at offset 68, a
/// big-endian u32).
pub(crate) const CATALOG_HEADER_LEN: usize = 72;

/// Whether `header`, the first bytes of a file, marks a ccc catalog: a
/// SQLite database whose `application_id` is ccc's.
pub(crate) fn is_catalog_header(header: &[u8]) -> bool {
    match header.get(..CATALOG_HEADER_LEN) {
        Some(h) if h.starts_with(SQLITE_MAGIC) => {
            i32::from_be_bytes([h[68], h[69], h[70], h[71]]) == APPLICATION_ID
        }
        _ => false,
    }
}

/// Migration `i` takes a catalog from schema version `i` to `i + 1`.
/// Append only: never edit a migration that has shipped.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE packages (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

-- AUTOINCREMENT: a version id is never reused, so a server that cached a
-- version's files can tell a forced republish (new id) from the original.
CREATE TABLE versions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    package_id   INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
    version      TEXT NOT NULL,
    published_at INTEGER NOT NULL,
    file_count   INTEGER NOT NULL,
    raw_bytes    INTEGER NOT NULL,
    stored_bytes INTEGER NOT NULL,
    UNIQUE (package_id, version)
);

CREATE TABLE blobs (
    id       INTEGER PRIMARY KEY,
    sha256   BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),
    raw_size INTEGER NOT NULL,
    encoding TEXT NOT NULL CHECK (encoding IN ('gzip', 'identity')),
    body     BLOB NOT NULL
);

CREATE TABLE assets (
    version_id   INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    blob_id      INTEGER NOT NULL REFERENCES blobs(id),
    content_type TEXT NOT NULL,
    PRIMARY KEY (version_id, path)
) WITHOUT ROWID;

-- gc finds orphan blobs through this index.
CREATE INDEX assets_by_blob ON assets(blob_id);
"#,
    // 1 -> 2: the digest of each blob's stored bytes. Existing blobs keep
    // NULL (adding a column rewrites nothing; filling it would rewrite every
    // row, bodies included).
    r#"
ALTER TABLE blobs ADD COLUMN stored_sha256 BLOB
    CHECK (stored_sha256 IS NULL OR length(stored_sha256) = 32);
"#,
    // 2 -> 3: dist-tags. A tag names one version of its package; deleting
    // the version deletes its tags (rm and gc report them first).
    r#"
CREATE TABLE dist_tags (
    package_id INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
    tag        TEXT NOT NULL,
    version_id INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
    PRIMARY KEY (package_id, tag)
) WITHOUT ROWID;

CREATE INDEX dist_tags_by_version ON dist_tags(version_id);
"#,
    // 3 -> 4: brotli streams beside gzip blobs (why a table: module doc).
    // Existing blobs get none; they are served as before.
    r#"
CREATE TABLE brotli (
    blob_id       INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
    body          BLOB NOT NULL,
    stored_sha256 BLOB NOT NULL CHECK (length(stored_sha256) = 32)
);
"#,
    // 4 -> 5: gc finds brotli streams no asset uses through this index of
    // their keys alone; the table's own rows hold the bodies, so walking
    // it read every stream (src/catalog/gc.rs, `UNUSED_BROTLI`).
    r#"
CREATE INDEX brotli_by_blob ON brotli(blob_id);
"#,
    // 5 -> 6: the XXH3-128 of each stored body, the digest the server
    // checks (module doc). Existing rows keep NULL.
    r#"
ALTER TABLE blobs ADD COLUMN stored_xxh3 BLOB
    CHECK (stored_xxh3 IS NULL OR length(stored_xxh3) = 16);
ALTER TABLE brotli ADD COLUMN stored_xxh3 BLOB
    CHECK (stored_xxh3 IS NULL OR length(stored_xxh3) = 16);
"#,
    // 6 -> 7: big files in chunks (see `chunks`). A chunked blob's row
    // has an empty body; its bytes are here, a checked piece per row.
    r#"
CREATE TABLE chunks (
    blob_id     INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    body        BLOB NOT NULL,
    stored_xxh3 BLOB NOT NULL CHECK (length(stored_xxh3) = 16),
    PRIMARY KEY (blob_id, seq)
);
"#,
    // 7 -> 8: what each file of a version references, resolved at publish
    // (`refs`): `inspect` lists a file's references and what references
    // it. Versions published before keep none.
    r#"
CREATE TABLE refs (
    version_id INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    line       INTEGER NOT NULL,
    col        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    written    TEXT NOT NULL,
    class      TEXT NOT NULL,
    target     TEXT
);
CREATE INDEX refs_by_file ON refs(version_id, path);
CREATE INDEX refs_by_target ON refs(version_id, target);
"#,
    // 8 -> 9: the XXH3-128 of every 64 KiB piece of each stored stream
    // longer than one piece (see `pieces`). Existing streams get theirs in
    // the same transaction (`pieces::fill`, run by `migrate` after this),
    // each read once; no blob is rewritten.
    r#"
CREATE TABLE pieces (
    blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    coding  INTEGER NOT NULL CHECK (coding IN (0, 1)),
    digests BLOB NOT NULL CHECK (length(digests) > 0 AND length(digests) % 16 = 0),
    PRIMARY KEY (blob_id, coding)
) WITHOUT ROWID;
"#,
    // 9 -> 10: tokens that may write over HTTP, and the audit log of what
    // they did (see `tokens` and `audit`). In the catalog, so that
    // replicas have them and a backup keeps them.
    r#"
CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    selector     TEXT UNIQUE,
    hash         BLOB CHECK (hash IS NULL OR length(hash) = 32),
    scopes       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER,
    created_by   TEXT NOT NULL,
    claims       TEXT
);
CREATE UNIQUE INDEX tokens_by_name ON tokens(name) WHERE revoked_at IS NULL;
CREATE TABLE audit (
    id       INTEGER PRIMARY KEY,
    at       INTEGER NOT NULL,
    token    TEXT,
    client   TEXT NOT NULL,
    action   TEXT NOT NULL,
    target   TEXT NOT NULL,
    status   INTEGER NOT NULL,
    detail   TEXT NOT NULL
);
"#,
    // 10 -> 11: deltas (RFC 9842's dcb and dcz) of a blob against an
    // earlier blob as dictionary (see `deltas`), and the blobs whose
    // streams changed after their publish, which a server drops from its
    // cache. The digest comes before the body, so that reading it never
    // walks a long body's pages. Existing blobs get none; `ccc deltas`
    // makes them.
    r#"
CREATE TABLE deltas (
    id            INTEGER PRIMARY KEY,
    blob_id       INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    dictionary_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
    coding        TEXT NOT NULL CHECK (coding IN ('dcb', 'dcz')),
    stored_xxh3   BLOB NOT NULL CHECK (length(stored_xxh3) = 16),
    body          BLOB NOT NULL,
    UNIQUE (blob_id, dictionary_id, coding)
);
CREATE INDEX deltas_by_dictionary ON deltas(dictionary_id);

CREATE TABLE recoded (
    blob_id    INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL
);
CREATE INDEX recoded_by_generation ON recoded(generation);
"#,
    // 11 -> 12: the brotli quality each gzip-stored blob was last tried
    // at, whether or not a stream was kept (see `recompress`). Existing
    // blobs get NULL, a quality unknown, so each is upgraded once.
    r#"
CREATE TABLE brotli_made (
    blob_id INTEGER PRIMARY KEY REFERENCES blobs(id) ON DELETE CASCADE,
    quality INTEGER CHECK (quality IS NULL OR quality BETWEEN 0 AND 11)
);
INSERT INTO brotli_made (blob_id, quality) SELECT id, NULL FROM blobs WHERE encoding = 'gzip';
"#,
    // 12 -> 13: sites, a host (or '' for the default) served from a
    // package's dist-tag at the root (see `sites`), and the versions each
    // site began serving when, for skew protection. A site names its
    // package by name, so it outlives the package's versions and may be
    // set before the first publish.
    r#"
CREATE TABLE sites (
    host          TEXT PRIMARY KEY,
    package       TEXT NOT NULL,
    tag           TEXT NOT NULL,
    spa           INTEGER NOT NULL DEFAULT 0,
    clean_urls    INTEGER NOT NULL DEFAULT 0,
    hsts_max_age  INTEGER,
    skew_versions INTEGER NOT NULL DEFAULT 3,
    skew_seconds  INTEGER NOT NULL DEFAULT 86400
) WITHOUT ROWID;

CREATE TABLE site_versions (
    host       TEXT NOT NULL REFERENCES sites(host) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
    since      INTEGER NOT NULL,
    PRIMARY KEY (host, seq)
) WITHOUT ROWID;
"#,
];

/// The schema version this ccc writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The oldest schema read-only commands and `serve` read without a writing
/// command upgrading it first.
pub(crate) const OLDEST_READABLE_SCHEMA: i64 = 1;

/// The first schema with `blobs.stored_sha256`.
pub(crate) const STORED_DIGEST_SCHEMA: i64 = 2;

/// The first schema with the `dist_tags` table.
pub(crate) const TAGS_SCHEMA: i64 = 3;

/// The first schema with the `brotli` table.
pub const BROTLI_SCHEMA: i64 = 4;

/// The first schema with the `brotli_by_blob` index gc searches.
pub const BROTLI_INDEX_SCHEMA: i64 = 5;

/// The first schema with `stored_xxh3` in `blobs` and `brotli`.
pub const CHECK_DIGEST_SCHEMA: i64 = 6;

/// The first schema with `refs`.
pub(crate) const REFS_SCHEMA: i64 = 8;

/// The first schema with `pieces`, filled for every stream (`pieces`).
pub(crate) const PIECES_SCHEMA: i64 = 9;

/// The first schema with `tokens` and `audit`.
pub(crate) const TOKENS_SCHEMA: i64 = 10;
/// The first schema with `deltas` and `recoded` (`deltas`).
pub const DELTAS_SCHEMA: i64 = 11;

/// The first schema with `brotli_made` (`recompress`).
pub const BROTLI_MADE_SCHEMA: i64 = 12;

/// The first schema with `sites` and `site_versions` (`sites`).
pub(crate) const SITES_SCHEMA: i64 = 13;

/// How a command means to use the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Never creates the file or changes its content. For the catalog's
    /// owner the connection is still read-write underneath (with
    /// `query_only` on) so that, when it is the last one to close, SQLite
    /// may fold the write-ahead log into the file and delete the side files
    /// (see the module doc). Anyone else, and a catalog in a folder nobody
    /// here may write, is opened read-only in a way that creates no side
    /// file ([`read_only`]).
    ReadOnly,
    /// Changes an existing catalog; a missing file is an error.
    ReadWrite,
    /// Creates the catalog when the file does not exist.
    Create,
}

/// An open catalog.
pub struct Catalog {
    conn: Connection,
    path: PathBuf,
    /// Whether this connection may write, and so must empty the write-ahead
    /// log when it closes.
    writer: bool,
    /// The schema version as opened (after migrating, for a writer).
    schema: i64,
    /// For a catalog read `immutable` ([`read_only`]): its side files, and
    /// how the file and its log looked when it was opened.
    immutable: Option<(read_only::SideFiles, read_only::Stamp)>,
    /// Versions this connection found, for its next lookups (`lookup`).
    known_versions: lookup::KnownVersions,
    /// A writer of a catalog Litestream replicates: checkpoints are left
    /// to it (module doc).
    replicated: bool,
    /// This connection's claim on its file ([`held`]); after `conn`, so
    /// it is let go once the connection has closed.
    _held: Option<held::Held>,
}

/// How long a closing writer waits for readers to leave the write-ahead log
/// before it gives up emptying it.
const CLOSING_CHECKPOINT_WAIT: Duration = Duration::from_secs(1);

impl Drop for Catalog {
    fn drop(&mut self) {
        // A writer that gave up waiting for another's lock leaves at once:
        // the other writer's close empties the log.
        if !self.writer
            || self.replicated
            || !self.is_file()
            || GAVE_UP.load(Ordering::Relaxed)
            || crate::interrupt::requested().is_some()
        {
            return;
        }
        // Best effort: a reader in the middle of a long read (`ccc verify`)
        // makes it give up after the wait, and the next writer tries again.
        // The log is copied first without the write lock (`PASSIVE`), so
        // that another writer waiting for it goes ahead meanwhile, then
        // emptied (`TRUNCATE`). Ctrl-C abandons the copy within
        // milliseconds: what was committed is in the log already.
        let _ = self.conn.busy_handler(Some(wait_to_close));
        let interrupt = self.conn.get_interrupt_handle();
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    if crate::interrupt::requested().is_some() {
                        interrupt.interrupt();
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            for mode in ["PASSIVE", "TRUNCATE"] {
                let sql = format!("PRAGMA wal_checkpoint({mode})");
                if self.conn.query_row(&sql, [], |_| Ok(())).is_err()
                    || crate::interrupt::requested().is_some()
                {
                    break;
                }
            }
            done.store(true, Ordering::Relaxed);
        });
    }
}

impl Catalog {
    /// Opens the catalog at `path`, checking that it is one, and migrates it
    /// when `access` allows writing.
    pub fn open(path: &Path, access: Access) -> Result<Catalog> {
        let exists = path.exists();
        if !exists && access != Access::Create {
            return Err(Error::NoCatalog(path.to_path_buf()));
        }
        let held = match exists {
            true => held::claim(path, || check_sqlite_header(path))?,
            false => None,
        };
        if exists && access != Access::ReadOnly && side_files::heartbeat_path(path).exists() {
            return Err(Error::ReplicaCopy(path.to_path_buf()));
        }
        // An empty file is no catalog yet: the commands that read one say
        // so, and publish (`Access::Create`) makes one in it, as where there
        // is no file at all.
        if exists && access != Access::Create && is_empty_file(path) {
            return Err(Error::EmptyCatalog(path.to_path_buf()));
        }
        let way = match access {
            Access::ReadOnly => Some(read_only::way_for(path)?),
            Access::ReadWrite | Access::Create => None,
        };
        // Without CREATE, SQLite refuses a file that vanished since the
        // check above instead of making an empty one.
        let flags = match (access, way) {
            (Access::ReadOnly, Some(ReadWay::ThroughLog | ReadWay::Immutable)) => {
                OpenFlags::SQLITE_OPEN_READ_ONLY
            }
            (Access::ReadOnly | Access::ReadWrite, _) => OpenFlags::SQLITE_OPEN_READ_WRITE,
            (Access::Create, _) => {
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
            }
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = match way {
            Some(ReadWay::Immutable) => Connection::open_with_flags(immutable_uri(path), flags),
            _ => Connection::open_with_flags(path, flags),
        }
        .at(path)?;
        if access == Access::ReadOnly {
            // Before anything else runs on the connection.
            conn.pragma_update(None, "query_only", true).at(path)?;
        }
        let immutable = (way == Some(ReadWay::Immutable))
            .then(|| read_only::SideFiles::of(path))
            .map(|side| {
                let stamp = read_only::Stamp::of(&side);
                (side, stamp)
            });
        let mut catalog = Catalog {
            conn,
            path: path.to_path_buf(),
            writer: access != Access::ReadOnly,
            schema: 0,
            immutable,
            known_versions: Default::default(),
            replicated: false,
            _held: held,
        };
        catalog.prepare(access)?;
        Ok(catalog)
    }

    /// Checks that the file at `path` is a catalog this ccc can serve, the
    /// way [`Catalog::open`] read-only would, but without touching anything
    /// beside the file itself: SQLite opens it `immutable`, so it takes no
    /// lock and never opens `-wal` or `-shm`. A server holding another
    /// catalog open under the same name uses this before it lets go of the
    /// old one (closing a second handle on the shared `-shm` would drop this
    /// process's locks on it).
    pub(crate) fn check_file(path: &Path) -> Result<()> {
        held::check_unless_held(path, || check_sqlite_header(path))?;
        let uri = immutable_uri(path);
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(uri, flags).at(path)?;
        let mut catalog = Catalog {
            conn,
            path: path.to_path_buf(),
            writer: false,
            schema: 0,
            immutable: None,
            known_versions: Default::default(),
            replicated: false,
            _held: None,
        };
        catalog.prepare(Access::ReadOnly)
    }

    /// An empty catalog in memory: what a `--dry-run` publishes into when
    /// there is no catalog file yet.
    pub(crate) fn in_memory() -> Result<Catalog> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().at(&path)?;
        let mut catalog = Catalog {
            conn,
            path,
            writer: true,
            schema: 0,
            immutable: None,
            known_versions: Default::default(),
            replicated: false,
            _held: None,
        };
        catalog.prepare(Access::Create)?;
        Ok(catalog)
    }

    /// The catalog's file (`:memory:` for an in-memory one).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the catalog was opened `immutable`, the way a read-only
    /// command reads a catalog it may not write when no log exists
    /// ([`read_only`]).
    pub(crate) fn is_immutable(&self) -> bool {
        self.immutable.is_some()
    }

    /// For a catalog opened `immutable`: whether a writer may have changed
    /// it since (a log appeared, or the file's length or modification time
    /// moved). Such a connection does not see changes, so a long-lived
    /// reader (`serve`) opens the catalog again when this says so. Always
    /// false for other connections, which SQLite keeps current.
    pub(crate) fn changed_since_open(&self) -> bool {
        self.immutable
            .as_ref()
            .is_some_and(|(side, stamp)| read_only::Stamp::of(side) != *stamp)
    }

    /// Whether the catalog lives in a file other connections can open.
    pub(crate) fn is_file(&self) -> bool {
        self.path != Path::new(":memory:")
    }

    /// The catalog's schema version: [`SCHEMA_VERSION`] once a writer has
    /// opened it, possibly older for a read-only one.
    pub fn schema(&self) -> i64 {
        self.schema
    }

    /// Whether blobs have `stored_sha256` (NULL for the ones written
    /// before it existed).
    pub(crate) fn has_stored_digests(&self) -> bool {
        self.schema >= STORED_DIGEST_SCHEMA
    }

    /// Whether the catalog has dist-tags (an older one read as it is has
    /// none: `latest` is then always the newest release).
    pub(crate) fn has_tags(&self) -> bool {
        self.schema >= TAGS_SCHEMA
    }

    /// Whether blobs and brotli streams have `stored_xxh3` (NULL for the
    /// ones written before it existed).
    pub(crate) fn has_check_digests(&self) -> bool {
        self.schema >= CHECK_DIGEST_SCHEMA
    }

    /// Whether the catalog stores references (schema 8).
    pub(crate) fn has_refs(&self) -> bool {
        self.schema >= REFS_SCHEMA
    }

    /// Whether the catalog has the `brotli` table (empty or not).
    pub(crate) fn has_brotli(&self) -> bool {
        self.schema >= BROTLI_SCHEMA
    }

    /// Whether every stored stream longer than one piece has its piece
    /// digests (schema 9; older catalogs, read as they are, have none).
    pub(crate) fn has_pieces(&self) -> bool {
        self.schema >= PIECES_SCHEMA
    }

    /// Whether the catalog has `tokens` and `audit` (schema 10); an older
    /// one, read as it is, knows no token.
    pub(crate) fn has_tokens(&self) -> bool {
        self.schema >= TOKENS_SCHEMA
    }

    /// Whether the catalog has the `deltas` and `recoded` tables.
    pub(crate) fn has_deltas(&self) -> bool {
        self.schema >= DELTAS_SCHEMA
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Begins a write transaction with the write lock taken up front
    /// (`BEGIN IMMEDIATE`): a writer waits for another one at its start,
    /// through the busy handler, instead of failing at its first write on
    /// a snapshot the other moved. What publish, gc, rm and tag write in.
    /// It borrows the catalog shared, so that the writer can still call
    /// the catalog's own reads on the same connection (gc judges versions
    /// inside its transaction); one connection runs one transaction at a
    /// time, which SQLite enforces (a nested BEGIN fails).
    pub(crate) fn write_transaction(&self) -> Result<rusqlite::Transaction<'_>> {
        rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)
            .at(&self.path)
    }

    /// Makes every statement of this connection stop with
    /// [`Error::Interrupted`] soon after Ctrl-C, for commands that may run
    /// long statements. Not for the server, which finishes what is in flight.
    pub(crate) fn stop_on_interrupt(&mut self) -> Result<()> {
        // About every 10 000 virtual machine steps: a few microseconds.
        self.conn
            .progress_handler(10_000, Some(|| crate::interrupt::requested().is_some()))
            .at(&self.path)
    }

    fn prepare(&mut self, access: Access) -> Result<()> {
        let path = self.path.clone();
        self.conn.busy_handler(Some(wait_for_lock)).at(&path)?;
        self.conn
            .pragma_update(None, "foreign_keys", true)
            .at(&path)?;
        // The query planner stability guarantee: without it SQLite re-plans
        // a cached statement whenever new values are bound to parameters it
        // could have planned around, and the server's asset lookup was
        // re-prepared on every call (its cost: bench/CAUSAL.md).
        self.conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                true,
            )
            .at(&path)?;
        // Reading the header is the first real I/O: a file that is not a
        // database fails here with SQLITE_NOTADB.
        let app_id: i32 = self
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .at(&path)?;
        let user_version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .at(&path)?;
        let has_tables: bool = self
            .conn
            .query_row("SELECT count(*) > 0 FROM sqlite_master", [], |r| r.get(0))
            .at(&path)?;

        let fresh = app_id == 0 && user_version == 0 && !has_tables;
        if !fresh && app_id != APPLICATION_ID {
            return Err(Error::NotCatalog(path));
        }
        if user_version > SCHEMA_VERSION {
            return Err(Error::SchemaTooNew {
                path,
                found: user_version,
                known: SCHEMA_VERSION,
            });
        }
        if access == Access::ReadOnly {
            if fresh {
                return Err(Error::NotCatalog(path));
            }
            if user_version < OLDEST_READABLE_SCHEMA {
                return Err(Error::Corrupt {
                    path,
                    what: format!(
                        "catalog schema {user_version} is older than this ccc reads ({OLDEST_READABLE_SCHEMA}); any writing command (such as `ccc gc --dry-run`) upgrades it"
                    ),
                });
            }
            self.schema = user_version;
            return Ok(());
        }
        if fresh && access != Access::Create {
            return Err(Error::NotCatalog(path));
        }
        if self.is_file() {
            let mode: String = self
                .conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
                .at(&path)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(Error::Corrupt {
                    path,
                    what: format!("cannot switch the journal to WAL (it is {mode})"),
                });
            }
        }
        // Every commit of a writer is durable: WAL's default NORMAL would
        // skip the fsync at commit.
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .at(&path)?;
        self.replicated = self
            .conn
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE name = '_litestream_seq'",
                [],
                |r| r.get(0),
            )
            .at(&path)?;
        // No automatic checkpoint: SQLite would run one inside the commit
        // that grows the log past 1000 pages, copying all of a big
        // publish into the file before the commit returns, with Ctrl-C
        // held off. A writer empties the log as it closes instead (`Drop`),
        // where Ctrl-C may cut it short; with Litestream, the replicator
        // checkpoints (module doc).
        self.conn
            .pragma_update(None, "wal_autocheckpoint", 0)
            .at(&path)?;
        self.migrate(user_version)?;
        self.schema = SCHEMA_VERSION;
        Ok(())
    }

    fn migrate(&mut self, from: i64) -> Result<()> {
        if from == SCHEMA_VERSION {
            return Ok(());
        }
        // An upgrade may read every body (`pieces::fill`): Ctrl-C stops
        // its statements too, as `stop_on_interrupt` stops a command's,
        // and the transaction rolls back. The command sets its own
        // handler, if any, once the catalog is open.
        self.conn
            .progress_handler(10_000, Some(|| crate::interrupt::requested().is_some()))
            .at(&self.path)?;
        let migrated = self.migrate_in_transaction();
        let unset = self.conn.progress_handler(0, None::<fn() -> bool>);
        migrated?;
        unset.at(&self.path)
    }

    /// The migrations from the catalog's schema on, in one exclusive
    /// transaction.
    fn migrate_in_transaction(&mut self) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
            .at(&path)?;
        // Another process may have migrated while we waited for the lock.
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .at(&path)?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            tx.execute_batch(sql).at(&path)?;
            // The rows of a new table for what is stored already.
            if i as i64 + 1 == PIECES_SCHEMA {
                pieces::fill(&tx, &path, crate::interrupt::check)?;
            }
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .at(&path)?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .at(&path)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('created_by', ?1) ON CONFLICT(key) DO NOTHING",
            [concat!("ccc ", env!("CARGO_PKG_VERSION"))],
        )
        .at(&path)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [SCHEMA_VERSION.to_string()],
        )
        .at(&path)?;
        tx.commit().at(&path)
    }

    /// The catalog's size: its pages, what the file holds once the log is
    /// folded in. The files on disk say less while a replicator has not
    /// folded a change in yet (a `VACUUM` sits whole in the log until then),
    /// and more while a reader's snapshot keeps old pages in the log.
    pub(crate) fn size(&self) -> Result<u64> {
        let read = |pragma| {
            self.conn
                .pragma_query_value(None, pragma, |r| r.get::<_, i64>(0))
                .at(self)
        };
        Ok((read("page_count")? * read("page_size")?).max(0) as u64)
    }

    /// Whether Litestream replicates the catalog (module doc).
    pub(crate) fn is_replicated(&self) -> bool {
        self.replicated
    }
}

/// SQLite's busy handler: retry every 10 ms until this process has waited
/// its bound ([`wait_for_locks`], [`LOCK_PATIENCE`] unless set), measured
/// on the clock, not in attempts (each attempt also costs SQLite's own
/// work), saying so on stderr once it has waited a second (half the bound
/// when that is shorter), as cargo does for its locks; give up at once
/// when the user asks ccc to stop.
fn wait_for_lock(attempt: i32) -> bool {
    const STEP: Duration = Duration::from_millis(10);
    if crate::interrupt::requested().is_some() {
        return false;
    }
    let now = Instant::now();
    let started = {
        let mut started = WAIT_STARTED.lock().unwrap_or_else(|e| e.into_inner());
        match *started {
            Some(at) if attempt > 0 || ONE_WAIT.load(Ordering::Relaxed) => at,
            _ => *started.insert(now),
        }
    };
    let waited = now.saturating_duration_since(started);
    let bound = Duration::from_millis(LOCK_WAIT_MS.load(Ordering::Relaxed));
    if waited >= bound {
        GAVE_UP.store(true, Ordering::Relaxed);
        return false;
    }
    if waited >= ANNOUNCE_WAIT_AFTER.min(bound / 2) && !ANNOUNCED.swap(true, Ordering::Relaxed) {
        let until = match LOCK_WAIT_MS.load(Ordering::Relaxed) {
            u64::MAX => String::new(),
            _ => format!(" for up to {}", humantime::format_duration(bound)),
        };
        crate::log::err(format_args!(
            "Blocking: waiting{until} for another ccc to release its lock on the catalog (Ctrl-C stops)"
        ));
    }
    std::thread::sleep(STEP.min(bound - waited));
    true
}

/// The busy handler of a writer's closing checkpoint: wait up to
/// [`CLOSING_CHECKPOINT_WAIT`] for readers to leave the log, unless the
/// user asks ccc to stop.
fn wait_to_close(attempt: i32) -> bool {
    const STEP: Duration = Duration::from_millis(10);
    let waited = STEP * u32::try_from(attempt).unwrap_or(u32::MAX);
    if crate::interrupt::requested().is_some() || waited >= CLOSING_CHECKPOINT_WAIT {
        return false;
    }
    std::thread::sleep(STEP);
    true
}

/// The `file:` URI that opens `path` with `immutable=1`: SQLite takes no
/// lock and never opens `-wal` or `-shm`.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    format!(
        "file:{}?immutable=1",
        percent_encoding::percent_encode(path.as_os_str().as_bytes(), URI_PATH)
    )
}

/// What a path must escape to be part of a SQLite `file:` URI (bytes
/// outside ASCII are escaped too).
const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'?')
    .add(b'#');

/// Whether `path` is a file of 0 bytes.
pub(crate) fn is_empty_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0)
}

/// Whether `path` holds no catalog yet: nothing there, or an empty file,
/// where a first publish creates one.
pub(crate) fn is_missing_or_empty(path: &Path) -> bool {
    !path.exists() || is_empty_file(path)
}

/// Refuses a file that is not SQLite before SQLite gets to misread it.
fn check_sqlite_header(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut header = [0u8; 16];
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if file.metadata().map_err(|e| Error::io(path, e))?.is_dir() {
        return Err(Error::bad_input(path, "is a directory, not a catalog file"));
    }
    let n = file.read(&mut header).map_err(|e| Error::io(path, e))?;
    // An empty file is an empty database to SQLite.
    if n > 0 && (n < 16 || &header != SQLITE_MAGIC) {
        return Err(Error::NotSqlite(path.to_path_buf()));
    }
    Ok(())
}

/// A SQLite result as ccc's, its error naming the catalog file: how
/// catalog code maps every rusqlite error (`.at(&catalog)?`, `.at(path)?`).
pub trait SqliteResult<T> {
    fn at(self, catalog: impl AsRef<Path>) -> Result<T>;
}

impl<T> SqliteResult<T> for rusqlite::Result<T> {
    fn at(self, catalog: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| sqlite_err(catalog.as_ref(), e))
    }
}

impl AsRef<Path> for Catalog {
    /// The catalog's file, which errors name.
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Maps a rusqlite error to the crate error, telling apart the cases a user
/// can act on (busy, not a database, damaged).
pub(crate) fn sqlite_err(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        // A statement cut short or a lock wait given up because of Ctrl-C.
        let stopped = matches!(
            f.code,
            ErrorCode::OperationInterrupted | ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked
        );
        if let (true, Some(signal)) = (stopped, crate::interrupt::requested()) {
            return Error::Interrupted(signal);
        }
        match f.code {
            ErrorCode::NotADatabase => return Error::NotSqlite(path.to_path_buf()),
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return Error::Busy(path.to_path_buf());
            }
            // The file, or the folder its log goes in, is not this user's
            // to write.
            ErrorCode::ReadOnly => return Error::ReadOnlyCatalog(path.to_path_buf()),
            ErrorCode::DatabaseCorrupt => {
                return Error::Corrupt {
                    path: path.to_path_buf(),
                    what: e.to_string(),
                };
            }
            _ => {}
        }
    }
    Error::Sqlite {
        path: path.to_path_buf(),
        source: e,
    }
}

/// The steps of SQLite's plan for `sql` (the `detail` column of `EXPLAIN
/// QUERY PLAN`), with as many of `params` bound as the statement takes:
/// for the tests that check which indexes a statement searches.
#[cfg(test)]
pub(crate) fn query_plan(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let bound = &params[..stmt.parameter_count()];
    stmt.query_map(bound, |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens the catalog at `db` to write, commits a change and closes it:
    /// how long the whole took.
    fn one_change(db: &Path) -> Duration {
        let started = std::time::Instant::now();
        let catalog = Catalog::open(db, Access::ReadWrite).unwrap();
        let tx = catalog.write_transaction().unwrap();
        generation::stamp(&tx).unwrap();
        tx.commit().unwrap();
        drop(catalog);
        started.elapsed()
    }

    #[test]
    fn a_replicated_catalog_leaves_checkpoints_to_the_replicator() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        drop(Catalog::open(&db, Access::Create).unwrap());
        // A reader holding a read transaction on the log, as Litestream does.
        let reader = Connection::open(&db).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM meta;")
            .unwrap();
        // Without a replicator the closing checkpoint waits for it, then
        // gives up.
        assert!(one_change(&db) >= CLOSING_CHECKPOINT_WAIT.mul_f32(0.9));
        // With Litestream's tables: no wait, and no checkpoint at all.
        let other = Connection::open(&db).unwrap();
        other
            .execute_batch("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER);")
            .unwrap();
        drop(other);
        assert!(one_change(&db) < CLOSING_CHECKPOINT_WAIT / 2);
        let catalog = Catalog::open(&db, Access::ReadWrite).unwrap();
        let autocheckpoint: i64 = catalog
            .conn()
            .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .unwrap();
        assert_eq!(autocheckpoint, 0);
        drop(reader);
    }

    /// A writer's commit never copies the log into the file on its own
    /// (SQLite's automatic checkpoint would, inside a big publish's commit,
    /// with Ctrl-C held off): the closing checkpoint does, where Ctrl-C may
    /// end it.
    #[test]
    fn writers_leave_the_log_to_their_closing_checkpoint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("cdn.db");
        let catalog = Catalog::open(&db, Access::Create).expect("create");
        let autocheckpoint: i64 = catalog
            .conn()
            .pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .expect("wal_autocheckpoint");
        assert_eq!(autocheckpoint, 0);
        // More than the 1000 pages of SQLite's default: all still in the log.
        let tx = catalog.write_transaction().expect("begin");
        tx.execute(
            "CREATE TABLE filler AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT randomblob(4000) AS b FROM n",
            [],
        )
        .expect("fill");
        tx.commit().expect("commit");
        let wal = side_files::side(&db, "-wal");
        let logged = std::fs::metadata(&wal).expect("the log").len();
        assert!(logged > 4 << 20, "{logged} bytes in the log");
        let file = std::fs::metadata(&db).expect("the catalog").len();
        assert!(
            file < 1 << 20,
            "the commit copied {file} bytes into the file"
        );
        drop(catalog);
        assert!(!Path::new(&wal).exists(), "the close empties the log");
    }

    /// A read-only catalog's connection can write to the file (so that its
    /// close may fold the log in), but `query_only` refuses every change.
    #[test]
    fn read_only_access_refuses_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        drop(Catalog::open(&db, Access::Create).unwrap());
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        for sql in [
            "INSERT INTO packages (name, created_at) VALUES ('x', 0)",
            "DELETE FROM meta",
            "CREATE TABLE notes (body TEXT)",
            "PRAGMA user_version = 7",
            "VACUUM",
        ] {
            let err = catalog.conn().execute_batch(sql).unwrap_err();
            assert_eq!(
                err.sqlite_error_code(),
                Some(rusqlite::ErrorCode::ReadOnly),
                "{sql}: {err}"
            );
        }
        let user_version: i64 = catalog
            .conn()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(user_version, SCHEMA_VERSION);
    }

    #[test]
    fn catalog_headers_are_told_from_other_files() {
        let mut header = [0u8; 100];
        header[..16].copy_from_slice(SQLITE_MAGIC);
        header[68..72].copy_from_slice(&APPLICATION_ID.to_be_bytes());
        assert!(is_catalog_header(&header));
        assert!(is_catalog_header(&header[..CATALOG_HEADER_LEN]));
        assert!(!is_catalog_header(&header[..CATALOG_HEADER_LEN - 1]));
        let mut other_app = header;
        other_app[71] ^= 1;
        assert!(
            !is_catalog_header(&other_app),
            "another application's SQLite file"
        );
        let mut not_sqlite = header;
        not_sqlite[0] = b's';
        assert!(!is_catalog_header(&not_sqlite));
        assert!(!is_catalog_header(b""));
    }
}

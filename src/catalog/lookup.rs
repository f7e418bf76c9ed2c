//! The server's hot path: one asset of an exact version, body included,
//! by package, version and path.
//!
//! # Bodies longer than a piece stay in the catalog
//!
//! The lookup loads a stored stream (the blob's body, its brotli stream)
//! only when it is at most [`PIECE_SIZE`] bytes, and the length of each
//! always: `length()` of a blob reads its record's header, not its bytes.
//! A longer stream is read where it is needed, in checked pieces
//! ([`Catalog::read_piece`]) or whole ([`Catalog::load_stream`]), so that a
//! range or a HEAD costs what it sends. Its recorded digests are left too:
//! in a record they come after the body, and reading them walks the body's
//! overflow pages, a read of every page the body spans.
//!
//! # Versions a connection knows
//!
//! A lookup by name searches three B-trees before it reaches the asset: the
//! package by name, the version by (package, version), and the version's
//! row. Requests come many to a version, so each connection remembers the
//! row of every version it found (`KnownVersions`), and its next lookup
//! in that version searches the asset by (version id, path) alone.
//!
//! That is safe because a version row's id, package, name and publish time
//! never change, and an id is never reused (`AUTOINCREMENT`), and deleting a
//! version deletes its assets in the same commit (`ON DELETE CASCADE`). So
//! an asset found under a remembered id is the asset of that version in the
//! snapshot read. An id whose version was removed since (`rm`, `gc`, a
//! `--force` republish) finds no asset, and then the lookup asks whether
//! the row is still there: when it is, the file is missing; when not, the
//! id is forgotten and the lookup searches by name again.
//!
//! A connection remembers at most [`KNOWN_VERSIONS`] versions and starts
//! over when it has that many.

use super::SqliteResult;
use super::chunks::{ChunkedBlob, is_chunked};
use super::digest::{StoredDigests, column as digest};
use super::pieces::{Coding, PIECE_SIZE};
use super::{Catalog, Encoding, content_type};
use crate::error::Result;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use rusqlite::OptionalExtension;
use std::cell::RefCell;
use std::hash::BuildHasher;

/// One file of a version as the catalog stores it, body included when it
/// is one piece or less: what [`Catalog::lookup`] returns for the server to
/// check ([`AssetRecord::check`]) and serve.
#[derive(Debug)]
pub struct AssetRecord {
    pub version_id: i64,
    /// The blob's id: the rowid of its `blobs` row, and of its `brotli`
    /// row, where [`Catalog::read_stream`] reads them.
    pub blob_id: i64,
    /// The body as stored, when it is at most [`PIECE_SIZE`] bytes; None
    /// when longer, read in checked pieces ([`Catalog::read_piece`]) or
    /// whole ([`Catalog::load_bodies`]). Empty for a big file in chunks.
    pub body: Option<std::sync::Arc<[u8]>>,
    /// The length of the body as stored, loaded or not (0 for a big file in
    /// chunks, whose size is `raw_size`).
    pub stored_len: u64,
    /// How the body is coded: gzip, or identity (the raw bytes).
    pub encoding: Encoding,
    /// The original file's digest.
    pub sha256: [u8; 32],
    /// The digests of the body as stored (module doc of `catalog`), read
    /// with it: both None when the body is longer than a piece.
    pub stored: StoredDigests,
    /// The brotli stream of a gzip body, when the catalog holds one.
    pub brotli: Option<BrotliBody>,
    pub content_type: content_type::ContentType,
    pub raw_size: u64,
    pub published_at: i64,
    /// Where the bytes are when they are in chunks (a big file, whose
    /// `body` is empty): read and checked a chunk at a time as they are
    /// sent, never loaded whole.
    pub chunks: Option<ChunkedBlob>,
}

/// A brotli stream beside a gzip body, with its recorded digests.
#[derive(Debug)]
pub struct BrotliBody {
    /// The stream, when it is at most [`PIECE_SIZE`] bytes (as
    /// [`AssetRecord::body`]).
    pub body: Option<std::sync::Arc<[u8]>>,
    /// Its length, loaded or not.
    pub stored_len: u64,
    /// Its digests, read with it: both None when it is not loaded.
    pub stored: StoredDigests,
}

/// A column of a stream's record that is read only when the stream is at
/// most a piece (`?1`, bound to [`PIECE_SIZE`]): `length()` of the stream
/// reads no content, and the column's value is not read when the stream
/// is longer (module doc).
macro_rules! upto_piece {
    ($stream:literal, $column:literal) => {
        concat!(
            "CASE WHEN length(",
            $stream,
            ") <= ?1 THEN ",
            $column,
            " END"
        )
    };
}

/// The two statements of a lookup, as text: one by name and one by a known
/// version id, each step an index search (packages by name, versions by
/// (package, version), assets by primary key, blobs by rowid);
/// `tests::lookup_uses_only_index_searches` checks the plans. `?1` is
/// [`PIECE_SIZE`] in both. `$stored` is the stored-bytes digest columns
/// (sha256, XXH3-128), NULL for a catalog whose schema predates one;
/// `$brotli` the brotli stream's length, the stream and its digests and the
/// join that finds them (the stream's row by the blob's id, a rowid), or
/// NULLs for a catalog without the table. The columns the two share come
/// first ([`record`]).
macro_rules! lookup_sql {
    ($stored:expr, $brotli:expr, $join:literal) => {
        [
            concat!(
                "SELECT b.id, b.encoding, b.sha256, b.raw_size, length(b.body), ",
                upto_piece!("b.body", "b.body"),
                ", ",
                $stored,
                ", ",
                $brotli,
                ", v.id, v.published_at
   FROM packages p
   JOIN versions v ON v.package_id = p.id AND v.version = ?3
   JOIN assets a ON a.version_id = v.id AND a.path = ?4
   JOIN blobs b ON b.id = a.blob_id",
                $join,
                "
  WHERE p.name = ?2"
            ),
            concat!(
                "SELECT b.id, b.encoding, b.sha256, b.raw_size, length(b.body), ",
                upto_piece!("b.body", "b.body"),
                ", ",
                $stored,
                ", ",
                $brotli,
                "
   FROM assets a
   JOIN blobs b ON b.id = a.blob_id",
                $join,
                "
  WHERE a.version_id = ?2 AND a.path = ?3"
            ),
        ]
    };
}

/// A lookup by name (`[0]`) and by version id (`[1]`).
type Statements = [&'static str; 2];

pub(crate) const LOOKUP_SQL: Statements = lookup_sql!(
    concat!(
        upto_piece!("b.body", "b.stored_sha256"),
        ", ",
        upto_piece!("b.body", "b.stored_xxh3")
    ),
    concat!(
        "length(r.body), ",
        upto_piece!("r.body", "r.body"),
        ", ",
        upto_piece!("r.body", "r.stored_sha256"),
        ", ",
        upto_piece!("r.body", "r.stored_xxh3")
    ),
    "\n   LEFT JOIN brotli r ON r.blob_id = b.id"
);
/// [`LOOKUP_SQL`] for a schema 4 or 5 catalog, without XXH3 digests
/// (served as it is, never migrated by the server).
pub(crate) const LOOKUP_SQL_SCHEMA_4: Statements = lookup_sql!(
    concat!(upto_piece!("b.body", "b.stored_sha256"), ", NULL"),
    concat!(
        "length(r.body), ",
        upto_piece!("r.body", "r.body"),
        ", ",
        upto_piece!("r.body", "r.stored_sha256"),
        ", NULL"
    ),
    "\n   LEFT JOIN brotli r ON r.blob_id = b.id"
);
/// [`LOOKUP_SQL`] for a schema 2 or 3 catalog, without the brotli table.
pub(crate) const LOOKUP_SQL_SCHEMA_2: Statements = lookup_sql!(
    concat!(upto_piece!("b.body", "b.stored_sha256"), ", NULL"),
    "NULL, NULL, NULL, NULL",
    ""
);
/// [`LOOKUP_SQL`] for a schema 1 catalog.
pub(crate) const LOOKUP_SQL_SCHEMA_1: Statements =
    lookup_sql!("NULL, NULL", "NULL, NULL, NULL, NULL", "");

/// [`Catalog::stored_streams`]: the blob by rowid, its brotli stream by
/// its rowid (the blob's id).
const STORED_STREAMS_SQL: &str = "SELECT b.body, r.body
   FROM blobs b
   LEFT JOIN brotli r ON r.blob_id = b.id
  WHERE b.id = ?1";

/// A blob's stored body and its brotli stream, if any.
pub(crate) type StoredStreams = (std::sync::Arc<[u8]>, Option<std::sync::Arc<[u8]>>);

/// The most versions a connection remembers.
pub(crate) const KNOWN_VERSIONS: usize = 4096;

/// Where a version's row is, once found by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VersionRow {
    id: i64,
    published_at: i64,
}

struct Known {
    package: Box<str>,
    version: Box<str>,
    hash: u64,
    row: VersionRow,
}

/// The versions one connection found by name, by (package, version): see
/// the module doc.
#[derive(Default)]
pub(super) struct KnownVersions {
    table: RefCell<HashTable<Known>>,
    hasher: RandomState,
}

impl KnownVersions {
    fn hash(&self, package: &str, version: &str) -> u64 {
        self.hasher.hash_one((package, version))
    }

    fn get(&self, package: &str, version: &str) -> Option<VersionRow> {
        let hash = self.hash(package, version);
        let table = self.table.borrow();
        let known = table.find(hash, |k| &*k.package == package && &*k.version == version)?;
        Some(known.row)
    }

    fn remember(&self, package: &str, version: &str, row: VersionRow) {
        let hash = self.hash(package, version);
        let mut table = self.table.borrow_mut();
        if table.len() >= KNOWN_VERSIONS {
            table.clear();
        }
        let matches = |k: &Known| &*k.package == package && &*k.version == version;
        match table.find_mut(hash, matches) {
            Some(known) => known.row = row,
            None => {
                table.insert_unique(
                    hash,
                    Known {
                        package: package.into(),
                        version: version.into(),
                        hash,
                        row,
                    },
                    |k| k.hash,
                );
            }
        }
    }

    fn forget(&self, package: &str, version: &str) {
        let hash = self.hash(package, version);
        let mut table = self.table.borrow_mut();
        if let Ok(known) =
            table.find_entry(hash, |k| &*k.package == package && &*k.version == version)
        {
            known.remove();
        }
    }

    /// How many versions are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.borrow().len()
    }
}

/// A stream column read only when the stream is one piece or less:
/// `None` when it was not read (NULL).
fn upto_piece_body(
    value: rusqlite::types::ValueRef<'_>,
) -> rusqlite::Result<Option<std::sync::Arc<[u8]>>> {
    Ok(match value {
        rusqlite::types::ValueRef::Null => None,
        // One copy, from SQLite's page buffer into the shared body.
        body => Some(std::sync::Arc::from(body.as_blob()?)),
    })
}

/// The number of the first column after the ones both statements share.
const SHARED_COLUMNS: usize = 12;

/// The record in the columns both statements share, of the version at `row`.
fn record(r: &rusqlite::Row<'_>, path: &str, row: VersionRow) -> rusqlite::Result<AssetRecord> {
    Ok(AssetRecord {
        version_id: row.id,
        blob_id: r.get(0)?,
        encoding: r.get(1)?,
        sha256: digest(r.get_ref(2)?)?.unwrap_or_default(),
        raw_size: r.get::<_, i64>(3)? as u64,
        stored_len: r.get::<_, i64>(4)? as u64,
        body: upto_piece_body(r.get_ref(5)?)?,
        stored: StoredDigests {
            sha256: digest(r.get_ref(6)?)?,
            xxh3: digest(r.get_ref(7)?)?,
        },
        brotli: match r.get_ref(8)? {
            rusqlite::types::ValueRef::Null => None,
            len => {
                let body = upto_piece_body(r.get_ref(9)?)?;
                // The sha256 column is NOT NULL with 32 bytes; a catalog
                // changed behind ccc's back fails the check on load.
                let stored = match body {
                    Some(_) => StoredDigests {
                        sha256: Some(digest(r.get_ref(10)?)?.unwrap_or_default()),
                        xxh3: digest(r.get_ref(11)?)?,
                    },
                    None => StoredDigests::default(),
                };
                Some(BrotliBody {
                    body,
                    stored_len: len.as_i64()? as u64,
                    stored,
                })
            }
        },
        // Not the stored column: catalogs published by an older
        // ccc are served with today's table.
        content_type: content_type::for_path(path),
        published_at: row.published_at,
        chunks: None,
    })
}

impl Catalog {
    /// Looks up one asset of an exact version, body included when it is
    /// one piece or less (module doc; for a big file, where its chunks
    /// are): by the version's row when this connection knows it, else by
    /// name.
    pub fn lookup(&self, package: &str, version: &str, path: &str) -> Result<Option<AssetRecord>> {
        let Some(mut found) = self.lookup_row(package, version, path)? else {
            return Ok(None);
        };
        if is_chunked(found.stored_len as usize, found.raw_size) {
            found.chunks = self.chunked_asset(found.version_id, path)?;
        }
        Ok(Some(found))
    }

    /// Reads every stream of `record` its lookup left in the catalog
    /// (longer than a piece) whole, each checked as it is read
    /// ([`Catalog::load_stream`]), so that `body` and the brotli stream's
    /// are both loaded: for a reader that needs them whole (`ccc cat`, the
    /// server's miss). A stream that fails its check is [`Error::Corrupt`].
    ///
    /// [`Error::Corrupt`]: crate::error::Error::Corrupt
    pub(crate) fn load_bodies(&self, record: &mut AssetRecord) -> Result<()> {
        if record.body.is_none() {
            let body = self.load_stream(record.blob_id, Coding::Stored, record.stored_len)?;
            record.body = Some(body);
        }
        if let Some(br) = &mut record.brotli
            && br.body.is_none()
        {
            br.body = Some(self.load_stream(record.blob_id, Coding::Brotli, br.stored_len)?);
        }
        Ok(())
    }

    fn lookup_row(&self, package: &str, version: &str, path: &str) -> Result<Option<AssetRecord>> {
        let known = &self.known_versions;
        if let Some(row) = known.get(package, version) {
            if let Some(found) = self.lookup_in(row, path)? {
                return Ok(Some(found));
            }
            if self.version_exists(row.id)? {
                return Ok(None);
            }
            known.forget(package, version);
        }
        let found = self.lookup_by_name(package, version, path)?;
        if let Some(found) = &found {
            let row = VersionRow {
                id: found.version_id,
                published_at: found.published_at,
            };
            known.remember(package, version, row);
        }
        Ok(found)
    }

    /// The statements of this catalog's schema.
    fn lookup_statements(&self) -> Statements {
        if self.has_check_digests() {
            LOOKUP_SQL
        } else if self.has_brotli() {
            LOOKUP_SQL_SCHEMA_4
        } else if self.has_stored_digests() {
            LOOKUP_SQL_SCHEMA_2
        } else {
            LOOKUP_SQL_SCHEMA_1
        }
    }

    /// The stored body of blob `blob_id` and, with `brotli`, its brotli
    /// stream if it has one, read whole and unchecked by the blob's id: one
    /// search of each table read by rowid. For a reader that knows the
    /// blob and what its streams must hash to (the server's file index);
    /// None when there is no such blob.
    pub(crate) fn stored_streams(
        &self,
        blob_id: i64,
        brotli: bool,
    ) -> Result<Option<StoredStreams>> {
        let sql = match brotli && self.has_brotli() {
            true => STORED_STREAMS_SQL,
            false => "SELECT body, NULL FROM blobs WHERE id = ?1",
        };
        let mut stmt = self.conn().prepare_cached(sql).at(self)?;
        stmt.query_row([blob_id], |r| {
            let body = std::sync::Arc::from(r.get_ref(0)?.as_blob()?);
            let brotli = match r.get_ref(1)? {
                rusqlite::types::ValueRef::Null => None,
                bytes => Some(std::sync::Arc::from(bytes.as_blob()?)),
            };
            Ok((body, brotli))
        })
        .optional()
        .at(self)
    }

    fn lookup_by_name(
        &self,
        package: &str,
        version: &str,
        path: &str,
    ) -> Result<Option<AssetRecord>> {
        let mut stmt = self
            .conn()
            .prepare_cached(self.lookup_statements()[0])
            .at(self)?;
        let piece = PIECE_SIZE as i64;
        stmt.query_row(rusqlite::params![piece, package, version, path], |r| {
            let row = VersionRow {
                id: r.get(SHARED_COLUMNS)?,
                published_at: r.get(SHARED_COLUMNS + 1)?,
            };
            record(r, path, row)
        })
        .optional()
        .at(self)
    }

    fn lookup_in(&self, row: VersionRow, path: &str) -> Result<Option<AssetRecord>> {
        let mut stmt = self
            .conn()
            .prepare_cached(self.lookup_statements()[1])
            .at(self)?;
        let piece = PIECE_SIZE as i64;
        stmt.query_row(rusqlite::params![piece, row.id, path], |r| {
            record(r, path, row)
        })
        .optional()
        .at(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;
    use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
    use std::path::Path;

    /// Publishes `app@version` with `files` (path, body) into the catalog at
    /// `db`, replacing the version when `force`.
    fn publish_app(db: &Path, version: &str, files: &[(&str, &[u8])], force: bool) {
        let mut writer = Catalog::open(db, Access::Create).unwrap();
        let files = files
            .iter()
            .map(|(path, body)| FileEntry {
                path: path.to_string(),
                size: body.len() as u64,
                source: Source::Memory(std::sync::Arc::from(*body)),
            })
            .collect();
        let options = Options {
            force,
            ..Options::default()
        };
        let version = semver::Version::parse(version).unwrap();
        publish::publish(
            &mut writer,
            "app",
            &version,
            files,
            vec![],
            &options,
            &NoProgress,
        )
        .unwrap();
    }

    fn body(catalog: &Catalog, version: &str, path: &str) -> Option<Vec<u8>> {
        let mut found = catalog.lookup("app", version, path).unwrap()?;
        found.check().unwrap();
        catalog.load_bodies(&mut found).unwrap();
        let body = found.body.unwrap();
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut found.encoding.decoder(&body[..]), &mut raw).unwrap();
        Some(raw)
    }

    #[test]
    fn repeated_lookups_reuse_their_plans() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let files: Vec<(String, &[u8])> =
            (0..3).map(|i| (format!("f{i}.js"), &b"x=1;"[..])).collect();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
        publish_app(&db, "1.0.0", &files, false);
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        for i in 0..20 {
            let path = format!("f{}.js", i % 3);
            assert!(catalog.lookup("app", "1.0.0", &path).unwrap().is_some());
            assert!(catalog.lookup("app", "9.9.9", &path).unwrap().is_none());
        }
        for sql in LOOKUP_SQL {
            let stmt = catalog.conn().prepare_cached(sql).unwrap();
            assert_eq!(
                stmt.get_status(rusqlite::StatementStatus::RePrepare),
                0,
                "the cached lookup was re-planned: {sql}"
            );
        }
    }

    #[test]
    fn lookup_uses_only_index_searches() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        for ([by_name, by_id], joins) in [
            (LOOKUP_SQL, 5),
            (LOOKUP_SQL_SCHEMA_4, 5),
            (LOOKUP_SQL_SCHEMA_2, 4),
            (LOOKUP_SQL_SCHEMA_1, 4),
        ] {
            // By id: the three searches that find the version are gone.
            for (sql, steps) in [(by_name, joins), (by_id, joins - 2)] {
                let params: [&dyn rusqlite::ToSql; 4] =
                    [&(PIECE_SIZE as i64), &"a", &"1.0.0", &"x"];
                let plan = crate::catalog::query_plan(catalog.conn(), sql, &params);
                assert_eq!(plan.len(), steps, "{plan:?}");
                for step in &plan {
                    assert!(step.starts_with("SEARCH"), "a step scans: {plan:?}");
                    assert!(
                        step.contains("INDEX") || step.contains("PRIMARY KEY"),
                        "a step does not use an index: {plan:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_known_version_is_found_by_id_and_a_replaced_one_by_name_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        publish_app(
            &db,
            "1.0.0",
            &[("a.js", b"old a"), ("b.js", b"old b")],
            false,
        );
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        assert_eq!(
            body(&catalog, "1.0.0", "a.js").as_deref(),
            Some(&b"old a"[..])
        );
        let first = catalog
            .known_versions
            .get("app", "1.0.0")
            .expect("remembered");
        assert_eq!(
            body(&catalog, "1.0.0", "b.js").as_deref(),
            Some(&b"old b"[..])
        );
        assert_eq!(body(&catalog, "1.0.0", "nope.js"), None, "a missing file");
        assert_eq!(
            catalog.known_versions.get("app", "1.0.0"),
            Some(first),
            "a missing file keeps the version known"
        );

        // Replaced: a new row, other files. The old id finds nothing, is
        // forgotten, and the lookup by name finds the new row.
        publish_app(&db, "1.0.0", &[("a.js", b"new a")], true);
        assert_eq!(
            body(&catalog, "1.0.0", "a.js").as_deref(),
            Some(&b"new a"[..])
        );
        let second = catalog.known_versions.get("app", "1.0.0").unwrap();
        assert_ne!(second.id, first.id);
        assert_eq!(
            body(&catalog, "1.0.0", "b.js"),
            None,
            "gone with the old row"
        );

        // Removed: nothing is served from the remembered id.
        let mut writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        writer.remove_versions(&[second.id], false).unwrap();
        drop(writer);
        assert_eq!(body(&catalog, "1.0.0", "a.js"), None);
        assert_eq!(
            catalog.known_versions.get("app", "1.0.0"),
            None,
            "forgotten"
        );
    }

    #[test]
    fn a_stream_longer_than_a_piece_is_left_in_the_catalog() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let script = crate::catalog::publish::script_like(50_000);
        let small = crate::catalog::publish::script_like(200);
        publish_app(
            &db,
            "1.0.0",
            &[("big.js", &script), ("small.js", &small)],
            false,
        );
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        let lengths = |path: &str| -> (i64, i64, i64) {
            catalog
                .conn()
                .query_row(
                    "SELECT b.id, length(b.body), length(r.body) FROM assets a
                       JOIN blobs b ON b.id = a.blob_id JOIN brotli r ON r.blob_id = b.id
                      WHERE a.path = ?1",
                    [path],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap()
        };
        for by_id in [false, true] {
            // The first lookup is by name, the next by the known version.
            assert_eq!(catalog.known_versions.get("app", "1.0.0").is_some(), by_id);
            let mut big = catalog.lookup("app", "1.0.0", "big.js").unwrap().unwrap();
            let (id, gzip_len, brotli_len) = lengths("big.js");
            assert!(gzip_len > PIECE_SIZE as i64 && brotli_len > PIECE_SIZE as i64);
            assert_eq!(big.blob_id, id);
            assert!(big.body.is_none(), "the body is not loaded");
            assert_eq!(big.stored_len, gzip_len as u64);
            assert_eq!((big.stored.sha256, big.stored.xxh3), (None, None));
            let brotli = big.brotli.as_ref().unwrap();
            assert!(brotli.body.is_none(), "nor is the brotli stream");
            assert_eq!(brotli.stored_len, brotli_len as u64);
            big.check().unwrap();
            // Read whole, each checked: the bytes the catalog holds.
            catalog.load_bodies(&mut big).unwrap();
            assert_eq!(big.body.as_deref().unwrap(), catalog.blob_body(id).unwrap());
            assert_eq!(
                big.brotli.unwrap().body.as_deref(),
                catalog.brotli_body(id).unwrap().as_deref()
            );

            let small = catalog.lookup("app", "1.0.0", "small.js").unwrap().unwrap();
            let (id, gzip_len, brotli_len) = lengths("small.js");
            assert_eq!(small.blob_id, id);
            assert_eq!(small.body.as_deref().unwrap().len() as i64, gzip_len);
            assert_eq!(small.stored_len, gzip_len as u64);
            assert!(small.stored.xxh3.is_some());
            let brotli = small.brotli.as_ref().unwrap();
            assert_eq!(brotli.body.as_deref().unwrap().len() as i64, brotli_len);
            assert!(brotli.stored.xxh3.is_some());
            small.check().unwrap();
        }
    }

    #[test]
    fn a_connection_remembers_a_bounded_number_of_versions() {
        let known = KnownVersions::default();
        for i in 0..KNOWN_VERSIONS + 10 {
            let row = VersionRow {
                id: i as i64,
                published_at: 0,
            };
            known.remember("app", &format!("1.0.{i}"), row);
            assert!(known.len() <= KNOWN_VERSIONS);
        }
        assert_eq!(known.get("app", "1.0.5"), None, "started over when full");
        assert_eq!(
            known
                .get("app", &format!("1.0.{}", KNOWN_VERSIONS + 9))
                .unwrap()
                .id,
            (KNOWN_VERSIONS + 9) as i64
        );
        known.forget("app", &format!("1.0.{}", KNOWN_VERSIONS + 9));
        assert_eq!(known.len(), 9);
    }
}

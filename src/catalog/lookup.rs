//! The server's hot path: one asset of an exact version, body included,
//! by package, version and path.
//!
//! # Versions a connection knows
//!
//! A lookup by name searches three B-trees before it reaches the asset: the
//! package by name, the version by (package, version), and the version's
//! row. Requests come many to a version, so each connection remembers the
//! row of every version it found ([`KnownVersions`]), and its next lookup
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
use super::{Catalog, Encoding, content_type};
use crate::error::Result;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use rusqlite::OptionalExtension;
use std::cell::RefCell;
use std::hash::BuildHasher;

/// One file of a version as the catalog stores it, body included: what
/// [`Catalog::lookup`] returns for the server to check
/// ([`AssetRecord::check`]) and serve.
#[derive(Debug)]
pub struct AssetRecord {
    pub version_id: i64,
    pub body: std::sync::Arc<[u8]>,
    /// How `body` is coded: gzip, or identity (the raw bytes).
    pub encoding: Encoding,
    /// The original file's digest.
    pub sha256: [u8; 32],
    /// The digests of `body` as stored (module doc of `catalog`).
    pub stored: StoredDigests,
    /// The brotli stream of a gzip body, when the catalog holds one.
    pub brotli: Option<BrotliBody>,
    pub content_type: String,
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
    pub body: std::sync::Arc<[u8]>,
    pub stored: StoredDigests,
}

/// What a body as stored was recorded to hash to: its sha256 (`None` for a
/// blob written before schema 2, checked by decoding) and its XXH3-128
/// (`None` before schema 6), the cheap one the server checks.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoredDigests {
    pub sha256: Option<[u8; 32]>,
    pub xxh3: Option<[u8; 16]>,
}

/// The two statements of a lookup, as text: one by name and one by a known
/// version id, each step an index search (packages by name, versions by
/// (package, version), assets by primary key, blobs by rowid);
/// `tests::lookup_uses_only_index_searches` checks the plans. `$stored` is
/// the stored-bytes digest columns (sha256, XXH3-128), NULL for a catalog
/// whose schema predates one; `$brotli` the brotli stream and its digests
/// and the join that finds them (the stream's row by the blob's id, a
/// rowid), or NULLs for a catalog without the table. The columns the two share come first
/// ([`record`]).
macro_rules! lookup_sql {
    ($stored:literal, $brotli:literal, $join:literal) => {
        [
            concat!(
                "SELECT b.body, b.encoding, b.sha256, b.raw_size, ",
                $stored,
                ", ",
                $brotli,
                ", v.id, v.published_at
   FROM packages p
   JOIN versions v ON v.package_id = p.id AND v.version = ?2
   JOIN assets a ON a.version_id = v.id AND a.path = ?3
   JOIN blobs b ON b.id = a.blob_id",
                $join,
                "
  WHERE p.name = ?1"
            ),
            concat!(
                "SELECT b.body, b.encoding, b.sha256, b.raw_size, ",
                $stored,
                ", ",
                $brotli,
                "
   FROM assets a
   JOIN blobs b ON b.id = a.blob_id",
                $join,
                "
  WHERE a.version_id = ?1 AND a.path = ?2"
            ),
        ]
    };
}

/// A lookup by name (`[0]`) and by version id (`[1]`).
type Statements = [&'static str; 2];

pub(crate) const LOOKUP_SQL: Statements = lookup_sql!(
    "b.stored_sha256, b.stored_xxh3",
    "r.body, r.stored_sha256, r.stored_xxh3",
    "\n   LEFT JOIN brotli r ON r.blob_id = b.id"
);
/// [`LOOKUP_SQL`] for a schema 4 or 5 catalog, without XXH3 digests
/// (served as it is, never migrated by the server).
pub(crate) const LOOKUP_SQL_SCHEMA_4: Statements = lookup_sql!(
    "b.stored_sha256, NULL",
    "r.body, r.stored_sha256, NULL",
    "\n   LEFT JOIN brotli r ON r.blob_id = b.id"
);
/// [`LOOKUP_SQL`] for a schema 2 or 3 catalog, without the brotli table.
pub(crate) const LOOKUP_SQL_SCHEMA_2: Statements =
    lookup_sql!("b.stored_sha256, NULL", "NULL, NULL, NULL", "");
/// [`LOOKUP_SQL`] for a schema 1 catalog.
pub(crate) const LOOKUP_SQL_SCHEMA_1: Statements =
    lookup_sql!("NULL, NULL", "NULL, NULL, NULL", "");

/// The most versions a connection remembers.
pub const KNOWN_VERSIONS: usize = 4096;

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

/// A digest column of `N` bytes: `None` for NULL or (never written by ccc)
/// any other length.
pub(super) fn digest<const N: usize>(
    value: rusqlite::types::ValueRef<'_>,
) -> rusqlite::Result<Option<[u8; N]>> {
    Ok(match value {
        rusqlite::types::ValueRef::Null => None,
        other => other.as_blob()?.try_into().ok(),
    })
}

/// The record in the columns both statements share, of the version at `row`.
fn record(r: &rusqlite::Row<'_>, path: &str, row: VersionRow) -> rusqlite::Result<AssetRecord> {
    Ok(AssetRecord {
        version_id: row.id,
        // One copy, from SQLite's page buffer into the shared body.
        body: std::sync::Arc::from(r.get_ref(0)?.as_blob()?),
        encoding: r.get(1)?,
        sha256: digest(r.get_ref(2)?)?.unwrap_or_default(),
        raw_size: r.get::<_, i64>(3)? as u64,
        stored: StoredDigests {
            sha256: digest(r.get_ref(4)?)?,
            xxh3: digest(r.get_ref(5)?)?,
        },
        brotli: match r.get_ref(6)? {
            rusqlite::types::ValueRef::Null => None,
            body => Some(BrotliBody {
                body: std::sync::Arc::from(body.as_blob()?),
                // The sha256 column is NOT NULL with 32 bytes; a catalog
                // changed behind ccc's back fails the check on load.
                stored: StoredDigests {
                    sha256: Some(digest(r.get_ref(7)?)?.unwrap_or_default()),
                    xxh3: digest(r.get_ref(8)?)?,
                },
            }),
        },
        // Not the stored column: catalogs published by an older
        // ccc are served with today's table.
        content_type: content_type::for_path(path),
        published_at: row.published_at,
        chunks: None,
    })
}

impl Catalog {
    /// Looks up one asset of an exact version, body included (or, for a
    /// big file, where its chunks are): by the version's row when this
    /// connection knows it, else by name.
    pub fn lookup(&self, package: &str, version: &str, path: &str) -> Result<Option<AssetRecord>> {
        let Some(mut found) = self.lookup_row(package, version, path)? else {
            return Ok(None);
        };
        if is_chunked(found.body.len(), found.raw_size) {
            found.chunks = self.chunked_asset(found.version_id, path)?;
        }
        Ok(Some(found))
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
        stmt.query_row(rusqlite::params![package, version, path], |r| {
            let row = VersionRow {
                id: r.get(9)?,
                published_at: r.get(10)?,
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
        stmt.query_row(rusqlite::params![row.id, path], |r| record(r, path, row))
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
        let found = catalog.lookup("app", version, path).unwrap()?;
        found.check().unwrap();
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut found.encoding.decoder(&found.body[..]), &mut raw).unwrap();
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
                let plan: Vec<String> = catalog
                    .conn()
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .unwrap()
                    .query_map(
                        rusqlite::params_from_iter(
                            ["a", "1.0.0", "x"].iter().take(sql.matches('?').count()),
                        ),
                        |r| r.get::<_, String>(3),
                    )
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
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

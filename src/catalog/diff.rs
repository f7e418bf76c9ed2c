//! What changed between two versions: files added, removed and changed,
//! and how many stayed the same.
//!
//! Everything comes from the catalog's rows: a file is unchanged when both
//! versions point at the same blob (blobs are unique by sha256), and sizes
//! are the blobs' `raw_size` and `length(body)`, which SQLite reads from the
//! record header without loading the body. No body is read, let alone
//! decompressed, so a diff of two 10,000-file versions costs two index
//! walks. `tests::diff_uses_only_index_searches` checks the plan.

use super::SqliteResult;
use super::rows::{VersionRow, as_hex};
use super::{Catalog, Encoding, content_type};
use crate::error::Result;
use serde::Serialize;

/// One side of a file: how it is stored in one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Side {
    pub encoding: Encoding,
    pub raw_bytes: u64,
    pub stored_bytes: u64,
    #[serde(serialize_with = "as_hex")]
    pub sha256: [u8; 32],
}

/// A file only one of the versions has.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct OneSided {
    pub path: String,
    pub content_type: &'static str,
    #[serde(flatten)]
    pub side: Side,
}

/// A file both versions have, with different content.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Changed {
    pub path: String,
    pub content_type: &'static str,
    pub from: Side,
    pub to: Side,
    /// `to` minus `from`.
    pub raw_bytes_delta: i64,
    pub stored_bytes_delta: i64,
}

/// The difference from one version to another, files by path.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Diff {
    pub from: VersionRow,
    pub to: VersionRow,
    pub added: Vec<OneSided>,
    pub removed: Vec<OneSided>,
    pub changed: Vec<Changed>,
    pub unchanged_count: u64,
    /// The versions' totals, `to` minus `from`.
    pub raw_bytes_delta: i64,
    pub stored_bytes_delta: i64,
}

impl Diff {
    /// Whether the versions hold the same files with the same content.
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Every file whose blob differs between version ?1 and version ?2 (or
/// that only one has), by path: the files of ?1 against their namesakes in
/// ?2, then the files only ?2 has. Each step is a search of a primary key.
pub(crate) const DIFF_SQL: &str = concat!(
    "
SELECT a.path,
       ba.encoding, ba.raw_size, ",
    crate::stored_len!("ba"),
    ", ba.sha256,
       bb.encoding, bb.raw_size, ",
    crate::stored_len!("bb"),
    ", bb.sha256
  FROM assets a
  JOIN blobs ba ON ba.id = a.blob_id
  LEFT JOIN assets b ON b.version_id = ?2 AND b.path = a.path
  LEFT JOIN blobs bb ON bb.id = b.blob_id
 WHERE a.version_id = ?1 AND b.blob_id IS NOT a.blob_id
UNION ALL
SELECT b.path,
       NULL, NULL, NULL, NULL,
       bb.encoding, bb.raw_size, ",
    crate::stored_len!("bb"),
    ", bb.sha256
  FROM assets b
  JOIN blobs bb ON bb.id = b.blob_id
 WHERE b.version_id = ?2
   AND NOT EXISTS (SELECT 1 FROM assets a WHERE a.version_id = ?1 AND a.path = b.path)
 ORDER BY 1"
);

/// Files with the same path and blob in version ?1 and version ?2.
pub(crate) const UNCHANGED_SQL: &str = "
SELECT count(*) FROM assets a
  JOIN assets b ON b.version_id = ?2 AND b.path = a.path AND b.blob_id = a.blob_id
 WHERE a.version_id = ?1";

impl Catalog {
    /// What changed from version `from` to version `to`.
    pub(crate) fn diff(&self, from: VersionRow, to: VersionRow) -> Result<Diff> {
        let mut stmt = self.conn().prepare(DIFF_SQL).at(self)?;
        let rows = stmt
            .query_map([from.id, to.id], |r| {
                let path = r.get::<_, String>(0)?;
                let content_type = content_type::for_path(&path).as_str();
                Ok((path, content_type, side(r, 1)?, side(r, 5)?))
            })
            .at(self)?;
        let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        for row in rows {
            match row.at(self)? {
                (path, content_type, Some(from), Some(to)) => changed.push(Changed {
                    raw_bytes_delta: delta(from.raw_bytes, to.raw_bytes),
                    stored_bytes_delta: delta(from.stored_bytes, to.stored_bytes),
                    path,
                    content_type,
                    from,
                    to,
                }),
                (path, content_type, Some(side), None) => removed.push(OneSided {
                    path,
                    content_type,
                    side,
                }),
                (path, content_type, None, Some(side)) => added.push(OneSided {
                    path,
                    content_type,
                    side,
                }),
                (_, _, None, None) => {}
            }
        }
        let unchanged: i64 = self
            .conn()
            .query_row(UNCHANGED_SQL, [from.id, to.id], |r| r.get(0))
            .at(self)?;
        Ok(Diff {
            raw_bytes_delta: delta(from.raw_bytes, to.raw_bytes),
            stored_bytes_delta: delta(from.stored_bytes, to.stored_bytes),
            from,
            to,
            added,
            removed,
            changed,
            unchanged_count: unchanged as u64,
        })
    }
}

/// The blob columns starting at `at`, NULL on the side that lacks the file.
fn side(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Option<Side>> {
    let Some(encoding) = r.get::<_, Option<Encoding>>(at)? else {
        return Ok(None);
    };
    let sha: Vec<u8> = r.get(at + 3)?;
    let mut sha256 = [0u8; 32];
    if sha.len() == 32 {
        sha256.copy_from_slice(&sha);
    }
    Ok(Some(Side {
        encoding,
        raw_bytes: r.get::<_, i64>(at + 1)? as u64,
        stored_bytes: r.get::<_, i64>(at + 2)? as u64,
        sha256,
    }))
}

/// `to - from` as a signed count.
fn delta(from: u64, to: u64) -> i64 {
    (to as i128 - from as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;

    #[test]
    fn diff_uses_only_index_searches() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        for sql in [DIFF_SQL, UNCHANGED_SQL] {
            let plan = crate::catalog::query_plan(catalog.conn(), sql, &[&1, &2]);
            let tables: Vec<&String> = plan
                .iter()
                .filter(|s| s.starts_with("SEARCH") || s.starts_with("SCAN"))
                .collect();
            assert!(!tables.is_empty(), "{plan:?}");
            assert!(
                !plan.iter().any(|s| s.contains("TEMP B-TREE")),
                "the rows are sorted apart from the indexes: {plan:?}"
            );
            for step in tables {
                assert!(step.starts_with("SEARCH"), "a step scans: {plan:?}");
                assert!(
                    step.contains("PRIMARY KEY") || step.contains("INDEX"),
                    "a step does not use an index: {plan:?}"
                );
            }
        }
    }
}

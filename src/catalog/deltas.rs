//! Deltas in the catalog: a blob coded against an earlier blob as its
//! dictionary (RFC 9842's `dcb` and `dcz`, [`crate::delta`]), stored once
//! per (content, dictionary, coding), and the record of blobs whose
//! streams changed after their publish.
//!
//! # Schema
//!
//! ```text
//! deltas  (id, blob_id -> blobs, dictionary_id -> blobs, coding 'dcb'|'dcz',
//!          stored_xxh3 (16 bytes), body, UNIQUE(blob_id, dictionary_id, coding))
//! recoded (blob_id -> blobs PRIMARY KEY, generation)
//! ```
//!
//! `body` is the whole response body, header included (the dictionary's
//! SHA-256 is in it): a delta is sent as it is stored, like a gzip or
//! brotli stream. The dictionary is named by its blob, whose `sha256` is
//! the hash a client sends in `Available-Dictionary`; a delta thus serves
//! every URL whose file has the blob's content, in any version, for any
//! client holding the dictionary's bytes from any URL. A table of its own,
//! as `brotli` is (the `catalog` module doc says why); the digest comes
//! before the body, so that reading it never walks a long body's pages,
//! and the unique index holds every key, so gc finds unused deltas
//! without reading one.
//!
//! # Who writes, who reads
//!
//! - Publish makes the deltas of each new version's files against their
//!   predecessors in the same transaction as the version
//!   (`publish`); `ccc deltas` makes those an older catalog lacks
//!   (`make_deltas::catch_up`).
//! - The server reads a blob's dictionaries with the asset
//!   ([`Catalog::delta_dictionaries`]: their hashes alone), and the
//!   bodies of one dictionary when a request names it
//!   ([`Catalog::delta_bodies`]), each checked against its XXH3-128.
//! - `rm` and `gc` drop the deltas whose file or dictionary no version
//!   holds any more (`drop_unused`); deleting a blob deletes its deltas
//!   both ways (`ON DELETE CASCADE`).
//! - `verify` decodes every delta against its dictionary and checks the
//!   result against the file's sha256.
//!
//! # Streams that change after publish
//!
//! A blob's streams are written with it, except deltas made later (a
//! file unchanged in a new release gets a delta against its own earlier
//! bytes, and `ccc deltas` codes versions published without them) and
//! brotli streams recompressed at a better quality (`recompress`).
//! `recoded` names each such blob with the catalog generation of the
//! change ([`super::generation`]), so a running server drops what it
//! cached of those blobs ([`Catalog::recoded_since`]) and offers the new
//! deltas.

use super::{Catalog, Encoding, SqliteResult};
use crate::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::io::Read;

/// A delta with what `inspect` shows of it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Listed {
    pub encoding: Encoding,
    /// The dictionary's sha256 (hex): what `Available-Dictionary` names.
    pub dictionary_sha256: String,
    /// Bytes sent, header included.
    pub stored_bytes: u64,
    /// The files that hold the dictionary's bytes, `PKG@VERSION/PATH`,
    /// the package's own first, newest first (at most 5).
    pub against: Vec<String>,
}

/// The dictionaries one blob has deltas against: the unique index alone
/// (it holds blob, dictionary and coding, in that order, so the codings of
/// one dictionary are neighbours), then each dictionary's hash by its
/// rowid, once a dictionary.
const DICTIONARIES: &str = "SELECT (SELECT sha256 FROM blobs WHERE id = d.dictionary_id)
   FROM deltas d
  WHERE d.blob_id = ?1
  GROUP BY d.dictionary_id";

/// The bodies of one blob's deltas against the dictionary of `?2`.
const BODIES: &str = "SELECT d.coding, d.stored_xxh3, d.body
   FROM deltas d
  WHERE d.blob_id = ?1 AND d.dictionary_id = (SELECT id FROM blobs WHERE sha256 = ?2)
  ORDER BY d.coding";

/// Deltas whose file or dictionary no asset uses: found in the unique
/// index (blob, dictionary) and the assets' index by blob.
const UNUSED: &str = "SELECT id FROM deltas
  WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = deltas.blob_id)
     OR NOT EXISTS (SELECT 1 FROM assets a WHERE a.blob_id = deltas.dictionary_id)";

/// Stores one delta; nothing when the catalog has it already.
pub(crate) const INSERT: &str =
    "INSERT INTO deltas (blob_id, dictionary_id, coding, stored_xxh3, body)
     VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (blob_id, dictionary_id, coding) DO NOTHING";

impl Catalog {
    /// The sha256 of each dictionary blob `blob_id` has a delta against,
    /// sorted: what the server needs to know whether a request's
    /// `Available-Dictionary` is one of them (none on a catalog older than
    /// deltas).
    pub(crate) fn delta_dictionaries(&self, blob_id: i64) -> Result<Vec<[u8; 32]>> {
        if !self.has_deltas() {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn().prepare_cached(DICTIONARIES).at(self)?;
        let rows = stmt
            .query_map([blob_id], |r| {
                Ok(super::digest::column(r.get_ref(0)?)?.unwrap_or_default())
            })
            .at(self)?;
        let mut hashes = rows.collect::<rusqlite::Result<Vec<_>>>().at(self)?;
        hashes.sort_unstable();
        Ok(hashes)
    }

    /// The bodies of blob `blob_id`'s deltas against the dictionary whose
    /// sha256 is `dictionary`, each checked against its XXH3-128 (a body
    /// that fails is [`Error::Corrupt`], never returned).
    pub(crate) fn delta_bodies(
        &self,
        blob_id: i64,
        dictionary: &[u8; 32],
    ) -> Result<Vec<(Encoding, Vec<u8>)>> {
        if !self.has_deltas() {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn().prepare_cached(BODIES).at(self)?;
        let rows = stmt
            .query_map(params![blob_id, &dictionary[..]], |r| {
                Ok((
                    r.get::<_, Encoding>(0)?,
                    r.get::<_, Vec<u8>>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .at(self)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(self)?;
        rows.into_iter()
            .map(|(coding, xxh3, body)| {
                let digest = super::digest::xxh3_digest(&body);
                if digest[..] != xxh3[..] {
                    return Err(Error::Corrupt {
                        path: self.path().to_path_buf(),
                        what: format!(
                            "{coding} delta against {}: stored bytes hash to xxh3 {}, recorded {}",
                            hex::encode(dictionary),
                            hex::encode(digest),
                            hex::encode(&xxh3)
                        ),
                    });
                }
                Ok((coding, body))
            })
            .collect()
    }

    /// The deltas of blob `blob_id` for `inspect`, with the files that
    /// hold each dictionary (those of `package` first).
    pub(crate) fn delta_listing(&self, blob_id: i64, package: &str) -> Result<Vec<Listed>> {
        if !self.has_deltas() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT d.coding, k.sha256, length(d.body), d.dictionary_id
                   FROM deltas d JOIN blobs k ON k.id = d.dictionary_id
                  WHERE d.blob_id = ?1",
            )
            .at(self)?;
        let rows: Vec<(Encoding, Vec<u8>, i64, i64)> = stmt
            .query_map([blob_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .at(self)?
            .collect::<rusqlite::Result<_>>()
            .at(self)?;
        let mut holders = self
            .conn()
            .prepare_cached(
                "SELECT p.name, v.version, a.path FROM assets a
                   JOIN versions v ON v.id = a.version_id
                   JOIN packages p ON p.id = v.package_id
                  WHERE a.blob_id = ?1
                  ORDER BY p.name <> ?2, v.published_at DESC, v.id DESC, a.path
                  LIMIT 5",
            )
            .at(self)?;
        let mut out = Vec::with_capacity(rows.len());
        for (encoding, sha, len, dictionary_id) in rows {
            let against = holders
                .query_map(params![dictionary_id, package], |r| {
                    Ok(format!(
                        "{}@{}/{}",
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?
                    ))
                })
                .at(self)?
                .collect::<rusqlite::Result<_>>()
                .at(self)?;
            out.push(Listed {
                encoding,
                dictionary_sha256: hex::encode(sha),
                stored_bytes: len as u64,
                against,
            });
        }
        // Smallest first, as a client is sent the smaller.
        out.sort_by(|a, b| {
            (&a.against, a.stored_bytes, a.encoding).cmp(&(&b.against, b.stored_bytes, b.encoding))
        });
        Ok(out)
    }

    /// How many deltas the catalog holds, and their bytes.
    pub(crate) fn delta_totals(&self) -> Result<(u64, u64)> {
        if !self.has_deltas() {
            return Ok((0, 0));
        }
        self.conn()
            .query_row(
                "SELECT count(*), coalesce(sum(length(body)), 0) FROM deltas",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .at(self)
    }

    /// The blobs whose streams changed in a generation after `generation`
    /// (module doc), and the newest such generation (`generation` when
    /// none did).
    pub(crate) fn recoded_since(&self, generation: i64) -> Result<(Vec<i64>, i64)> {
        if !self.has_deltas() {
            return Ok((Vec::new(), generation));
        }
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT blob_id, generation FROM recoded WHERE generation > ?1")
            .at(self)?;
        let mut newest = generation;
        let mut ids = Vec::new();
        let rows = stmt
            .query_map([generation], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .at(self)?;
        for row in rows {
            let (id, g) = row.at(self)?;
            ids.push(id);
            newest = newest.max(g);
        }
        Ok((ids, newest))
    }

    /// Blob `blob_id` as stored, for a worker to decode
    /// ([`Stored::decode`]); None when there is no such blob, or it is a
    /// big file stored in chunks (never a dictionary), or its file is
    /// longer than `limit`.
    pub(crate) fn blob_stored(&self, blob_id: i64, limit: u64) -> Result<Option<Stored>> {
        let row: Option<(Encoding, Vec<u8>, i64, Vec<u8>)> = self
            .conn()
            .prepare_cached("SELECT encoding, sha256, raw_size, body FROM blobs WHERE id = ?1")
            .at(self)?
            .query_row([blob_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()
            .at(self)?;
        let Some((encoding, sha, raw_size, body)) = row else {
            return Ok(None);
        };
        if raw_size as u64 > limit || super::chunks::is_chunked(body.len(), raw_size as u64) {
            return Ok(None);
        }
        Ok(Some(Stored {
            encoding,
            sha256: sha.try_into().unwrap_or_default(),
            raw_size: raw_size as u64,
            body,
        }))
    }
}

/// A blob's body as stored, with what it must decode to.
#[derive(Debug)]
pub(crate) struct Stored {
    pub encoding: Encoding,
    pub sha256: [u8; 32],
    pub raw_size: u64,
    pub body: Vec<u8>,
}

impl Stored {
    /// The file: the body decoded, checked against its recorded size and,
    /// for gzip, the stream's own CRC-32 (what is wrong otherwise).
    /// Cheaper than hashing the file again, and enough to catch damage:
    /// `verify` checks the sha256.
    pub(crate) fn decode(&self) -> std::result::Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(self.raw_size as usize);
        self.encoding
            .decoder(&self.body)
            .take(self.raw_size + 1)
            .read_to_end(&mut out)
            .map_err(|e| {
                format!(
                    "blob {}: its {} body does not decode: {e}",
                    hex::encode(self.sha256),
                    self.encoding
                )
            })?;
        if out.len() as u64 != self.raw_size {
            return Err(format!(
                "blob {}: its body decodes to {} bytes, recorded {}",
                hex::encode(self.sha256),
                out.len(),
                self.raw_size
            ));
        }
        Ok(out)
    }
}

/// Drops the deltas whose file or dictionary no asset uses any more:
/// their count and bytes.
pub(crate) fn drop_unused(tx: &Connection) -> rusqlite::Result<(u64, u64)> {
    let (count, bytes): (i64, i64) = tx.query_row(
        &format!(
            "SELECT count(*), coalesce(sum(length(body)), 0) FROM deltas WHERE id IN ({UNUSED})"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if count > 0 {
        tx.execute(&format!("DELETE FROM deltas WHERE id IN ({UNUSED})"), [])?;
    }
    Ok((count as u64, bytes as u64))
}

/// Records that blob `blob_id` gained streams in the transaction `tx`
/// commits (module doc).
pub(crate) fn mark_recoded(tx: &Connection, blob_id: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO recoded (blob_id, generation)
         VALUES (?1, coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'), 0) + 1)
         ON CONFLICT (blob_id) DO UPDATE SET generation = excluded.generation",
    )?
    .execute([blob_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;

    /// A miss reads its asset's dictionaries: the unique index alone, one
    /// search of `blobs` by rowid a dictionary, nothing sorted.
    #[test]
    fn a_blobs_dictionaries_are_read_from_the_index_without_a_sort() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("cdn.db"), Access::Create).unwrap();
        let plan = crate::catalog::query_plan(catalog.conn(), DICTIONARIES, &[&1]);
        assert!(plan.iter().all(|s| !s.contains("TEMP B-TREE")), "{plan:?}");
        assert!(
            plan[0].starts_with("SEARCH d USING COVERING INDEX"),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .filter(|s| s.contains("blobs"))
                .all(|s| s.contains("INTEGER PRIMARY KEY")),
            "{plan:?}"
        );
    }
}

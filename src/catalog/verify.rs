//! Verification: is every byte of the catalog what it claims to be?
//!
//! In order: SQLite's own `integrity_check` and `foreign_key_check`; every
//! blob decodes (gzip or identity) to exactly its recorded size and sha256,
//! and its stored bytes hash to its recorded `stored_sha256` and
//! `stored_xxh3` where it has them; every brotli stream hashes to its
//! recorded digests and decodes to its blob's size and sha256; every
//! stream longer than one piece (schema 9) matches the digest of each of
//! its pieces, and has them (`pieces`); every delta (`deltas`) hashes to
//! its recorded XXH3-128, names its dictionary, and decodes against it to
//! its blob's size and sha256; every version's recorded totals
//! match its assets. Blobs are read one
//! at a time, so memory stays at the largest blob whatever the catalog's
//! size. Ctrl-C is noticed every 64 KiB of content (see `interrupt`).
//!
//! The server checks less, and more cheaply: [`AssetRecord::check`] hashes
//! each body it loads once, as stored, against `stored_xxh3` (or
//! `stored_sha256` for a blob older than that digest), and a stream longer
//! than one piece piece by piece as it is read (`pieces`). Those bytes are what
//! it sends; that they decode to the original file is what this full check
//! and publish (which made them from it) answer for. A blob from before the
//! catalog recorded stored digests has none, and the server decodes it as
//! verify does.

use super::SqliteResult;
use super::chunks::{ChunkCursor, is_chunked};
use super::digest::{check_blob, check_stored, check_whole, check_xxh3};
use super::lookup::AssetRecord;
use super::pieces::{self, Coding};
use super::{Catalog, Encoding};
use crate::error::{Error, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// One thing found wrong.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Problem {
    /// `database`, `blob` or `version`.
    pub kind: &'static str,
    /// What is wrong: a blob's sha256, `pkg@version`, or the check's name.
    pub object: String,
    pub detail: String,
    /// Files affected (`pkg@version/path`): every file of a bad blob;
    /// empty for the other kinds.
    pub affects: Vec<String>,
}

/// The result of a verify run: what was checked, and every problem found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// No problems (the command exits 0).
    pub ok: bool,
    pub blob_count: u64,
    /// Stored bytes of the blobs, every one of them read and decoded.
    pub stored_bytes: u64,
    /// Brotli streams, every one of them read and decoded.
    pub brotli_count: u64,
    pub brotli_bytes: u64,
    /// Deltas, every one of them decoded against its dictionary.
    pub delta_count: u64,
    pub delta_bytes: u64,
    pub version_count: u64,
    pub problems: Vec<Problem>,
}

/// What one pass of [`Catalog::check_bodies`] read.
#[derive(Default)]
struct Bodies {
    count: u64,
    bytes: u64,
}

impl Catalog {
    /// Checks the catalog; `progress(bytes)` is called after each blob with
    /// its stored size, out of `blob_totals().1`.
    pub(crate) fn verify(&self, progress: &dyn Fn(u64)) -> Result<Report> {
        let mut problems = self.database_problems()?;
        let sha256 = if self.has_stored_digests() {
            "stored_sha256"
        } else {
            "NULL"
        };
        let (xxh3, brotli_xxh3) = if self.has_check_digests() {
            ("stored_xxh3", "r.stored_xxh3")
        } else {
            ("NULL", "NULL")
        };
        let mut bad = Vec::new();
        let blobs = self.check_bodies(
            &format!(
                "SELECT id, sha256, raw_size, encoding, body, {sha256}, {xxh3}
                   FROM blobs ORDER BY id"
            ),
            Coding::Stored,
            &mut bad,
            progress,
        )?;
        // A stream whose blob is gone is foreign_key_check's to report
        // (and gc's to drop).
        let brotli = match self.has_brotli() {
            true => self.check_bodies(
                &format!(
                    "SELECT b.id, b.sha256, b.raw_size, 'br', r.body, r.stored_sha256, {brotli_xxh3}
                       FROM brotli r JOIN blobs b ON b.id = r.blob_id ORDER BY r.blob_id"
                ),
                Coding::Brotli,
                &mut bad,
                progress,
            )?,
            false => Bodies::default(),
        };
        let deltas = match self.has_deltas() {
            true => self.check_deltas(&mut bad, progress)?,
            false => Bodies::default(),
        };
        for (id, sha, detail) in bad {
            problems.push(Problem {
                kind: "blob",
                object: sha,
                detail,
                affects: self.blob_users(id)?,
            });
        }
        let version_count = self.check_version_totals(&mut problems)?;
        Ok(Report {
            ok: problems.is_empty(),
            blob_count: blobs.count,
            stored_bytes: blobs.bytes,
            brotli_count: brotli.count,
            brotli_bytes: brotli.bytes,
            delta_count: deltas.count,
            delta_bytes: deltas.bytes,
            version_count,
            problems,
        })
    }

    /// What SQLite's own `integrity_check` and `foreign_key_check` find.
    fn database_problems(&self) -> Result<Vec<Problem>> {
        let mut problems = Vec::new();
        for check in ["integrity_check", "foreign_key_check"] {
            let mut stmt = self.conn().prepare(&format!("PRAGMA {check}")).at(self)?;
            let columns = stmt.column_count();
            let rows: Vec<String> = stmt
                .query_map([], |r| {
                    let cells: Vec<String> = (0..columns)
                        .map(|i| {
                            r.get::<_, rusqlite::types::Value>(i)
                                .map(|v| format!("{v:?}"))
                                .unwrap_or_default()
                        })
                        .collect();
                    Ok(cells.join(" "))
                })
                .at(self)?
                .collect::<rusqlite::Result<_>>()
                .at(self)?;
            for row in rows {
                if check == "integrity_check" && row == "Text(\"ok\")" {
                    continue;
                }
                problems.push(Problem {
                    kind: "database",
                    object: check.to_string(),
                    detail: row,
                    affects: Vec::new(),
                });
            }
        }
        Ok(problems)
    }

    /// Checks a chunked blob: every chunk against its XXH3-128 and its
    /// length, and all of them together against the file's sha256.
    fn check_chunks(&self, id: i64, sha: &[u8], raw_size: u64) -> Result<Option<String>> {
        let blob = match self.chunked_blob(id, raw_size) {
            Ok(blob) => blob,
            Err(Error::Corrupt { what, .. }) => return Ok(Some(what)),
            Err(e) => return Err(e),
        };
        let mut digest = Sha256::new();
        let read = ChunkCursor::new(blob, 0..raw_size).for_each(self, |piece| {
            crate::interrupt::check()?;
            digest.update(piece);
            Ok(())
        });
        match read {
            Ok(()) => {}
            Err(Error::Corrupt { what, .. }) => return Ok(Some(what)),
            Err(e) => return Err(e),
        }
        let digest: [u8; 32] = digest.finalize().into();
        Ok((digest[..] != *sha).then(|| {
            format!(
                "its chunks hash to sha256 {}, recorded {}",
                hex::encode(digest),
                hex::encode(sha)
            )
        }))
    }

    /// Reads the bodies `sql` selects, one row at a time, as `(blob id,
    /// sha256, raw size, encoding, body, stored sha256, stored XXH3)`, and
    /// checks each every way it can be wrong: it must decode to the raw
    /// size and sha256, hash to each digest recorded and, longer than one
    /// piece, have the digest of each piece and match them. Adds the blob
    /// id, sha256 and what is wrong (each detail after the prefix of
    /// `coding`, the stream the rows are) to `bad`.
    fn check_bodies(
        &self,
        sql: &str,
        coding: Coding,
        bad: &mut Vec<(i64, String, String)>,
        progress: &dyn Fn(u64),
    ) -> Result<Bodies> {
        let poll = crate::interrupt::check;
        let prefix = coding.prefix();
        let mut stmt = self.conn().prepare(sql).at(self)?;
        let mut rows = stmt.query([]).at(self)?;
        let mut read = Bodies::default();
        while let Some(row) = rows.next().at(self)? {
            let id: i64 = row.get(0).at(self)?;
            let sha: Vec<u8> = row.get(1).at(self)?;
            let raw_size: i64 = row.get(2).at(self)?;
            // A damaged row is a problem of that blob, not the end of the
            // check.
            let encoding: std::result::Result<Encoding, String> = row
                .get::<_, Encoding>(3)
                .map_err(|_| format!("unknown encoding {:?}", row.get_ref(3).ok()));
            let body = row.get_ref(4).at(self)?;
            let body = body.as_blob().unwrap_or_default();
            let stored_sha: Option<Vec<u8>> = row.get(5).at(self)?;
            let stored_xxh3: Option<Vec<u8>> = row.get(6).at(self)?;
            if is_chunked(body.len(), raw_size as u64) {
                if let Some(detail) = self.check_chunks(id, &sha, raw_size as u64)? {
                    bad.push((id, hex::encode(&sha), format!("{prefix}{detail}")));
                }
                read.count += 1;
                read.bytes += raw_size as u64;
                progress(raw_size as u64);
                continue;
            }
            let details: Vec<String> = [
                match encoding {
                    Ok(encoding) => check_blob(&sha, raw_size, encoding, body, poll)?,
                    Err(unknown) => Some(unknown),
                },
                match &stored_sha {
                    Some(stored_sha) => check_stored(stored_sha, body, poll)?,
                    None => None,
                },
                stored_xxh3.and_then(|xxh3| check_xxh3(&xxh3, body)),
                self.check_pieces(id, coding, body)?,
            ]
            .into_iter()
            .flatten()
            .map(|detail| format!("{prefix}{detail}"))
            .collect();
            if !details.is_empty() {
                bad.push((id, hex::encode(&sha), details.join("; ")));
            }
            read.count += 1;
            read.bytes += body.len() as u64;
            progress(body.len() as u64);
        }
        Ok(read)
    }

    /// Checks every delta (module doc), its dictionary read once for all
    /// the deltas against it; adds what is wrong to `bad` as a problem of
    /// the delta's blob.
    fn check_deltas(
        &self,
        bad: &mut Vec<(i64, String, String)>,
        progress: &dyn Fn(u64),
    ) -> Result<Bodies> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT d.blob_id, b.sha256, b.raw_size, d.dictionary_id, k.sha256, d.coding,
                        d.stored_xxh3, d.body
                   FROM deltas d JOIN blobs b ON b.id = d.blob_id
                   JOIN blobs k ON k.id = d.dictionary_id
                  ORDER BY d.dictionary_id, d.blob_id",
            )
            .at(self)?;
        let mut rows = stmt.query([]).at(self)?;
        let mut read = Bodies::default();
        // The dictionary of the rows being read: its id and its bytes (or
        // why they cannot be had).
        let mut dictionary: Option<(i64, std::result::Result<Vec<u8>, String>)> = None;
        while let Some(row) = rows.next().at(self)? {
            crate::interrupt::check()?;
            let id: i64 = row.get(0).at(self)?;
            let sha: Vec<u8> = row.get(1).at(self)?;
            let raw_size: i64 = row.get(2).at(self)?;
            let dictionary_id: i64 = row.get(3).at(self)?;
            let dictionary_sha: Vec<u8> = row.get(4).at(self)?;
            let coding: std::result::Result<Encoding, _> = row.get(5);
            let xxh3: Vec<u8> = row.get(6).at(self)?;
            let body = row.get_ref(7).at(self)?.as_blob().unwrap_or_default();
            if dictionary.as_ref().is_none_or(|(d, _)| *d != dictionary_id) {
                let bytes = match self.blob_stored(dictionary_id, u64::MAX)? {
                    Some(stored) => stored.decode().and_then(|bytes| {
                        use sha2::Digest;
                        match Sha256::digest(&bytes)[..] == dictionary_sha[..] {
                            true => Ok(bytes),
                            false => Err("its content hashes to another sha256".into()),
                        }
                    }),
                    None => Err("it is stored in chunks".into()),
                };
                dictionary = Some((dictionary_id, bytes));
            }
            let detail = match (coding, &dictionary) {
                (Err(_), _) => Some(format!(
                    "a delta of unknown coding {:?}",
                    row.get_ref(5).ok()
                )),
                (Ok(coding), Some((_, dict))) => {
                    let against =
                        format!("{coding} delta against {}: ", hex::encode(&dictionary_sha));
                    let wrong = match (check_xxh3(&xxh3, body), dict) {
                        (Some(wrong), _) => Some(wrong),
                        (None, Err(why)) => Some(format!("its dictionary cannot be read: {why}")),
                        (None, Ok(dict)) => {
                            let named: [u8; 32] =
                                dictionary_sha.clone().try_into().unwrap_or_default();
                            match crate::delta::decode(coding, body, dict, &named, raw_size as u64)
                            {
                                Err(why) => Some(why),
                                Ok(file) if file.len() as i64 != raw_size => Some(format!(
                                    "decodes to {}, recorded {raw_size}",
                                    crate::output::count(file.len() as u64, "byte")
                                )),
                                Ok(file) if Sha256::digest(&file)[..] != sha[..] => Some(format!(
                                    "decodes to content that hashes to {}",
                                    hex::encode(Sha256::digest(&file))
                                )),
                                Ok(_) => None,
                            }
                        }
                    };
                    wrong.map(|w| format!("{against}{w}"))
                }
                (Ok(_), None) => None,
            };
            if let Some(detail) = detail {
                bad.push((id, hex::encode(&sha), detail));
            }
            read.count += 1;
            read.bytes += body.len() as u64;
            progress(body.len() as u64);
        }
        Ok(read)
    }

    /// What is wrong with the piece digests of stream `coding` of blob
    /// `id`, whose bytes are `body`: on a catalog that records them, a
    /// stream longer than one piece must have them, one per piece, each
    /// matching its piece.
    fn check_pieces(&self, id: i64, coding: Coding, body: &[u8]) -> Result<Option<String>> {
        if !self.has_pieces() || !pieces::is_pieced(body.len() as u64) {
            return Ok(None);
        }
        Ok(match self.piece_digests(id, coding) {
            Ok(Some(digests)) => pieces::pieces_problem(body, &digests),
            Ok(None) => Some(format!(
                "no piece digests recorded for its stream of {}",
                crate::output::count(body.len() as u64, "byte")
            )),
            Err(Error::Corrupt { what, .. }) => Some(what),
            Err(e) => return Err(e),
        })
    }

    /// Whether every version's recorded totals are its assets' and it has
    /// some; the number of versions checked.
    fn check_version_totals(&self, problems: &mut Vec<Problem>) -> Result<u64> {
        let mut stmt = self
            .conn()
            .prepare(concat!(
                "SELECT p.name, v.version, v.file_count, v.raw_bytes, v.stored_bytes,
                        count(a.path), coalesce(sum(b.raw_size), 0), coalesce(sum(",
                crate::stored_len!("b"),
                "), 0)
                   FROM versions v JOIN packages p ON p.id = v.package_id
                   LEFT JOIN assets a ON a.version_id = v.id
                   LEFT JOIN blobs b ON b.id = a.blob_id
                  GROUP BY v.id ORDER BY p.name, v.id"
            ))
            .at(self)?;
        // Row by row: a catalog's versions are checked without holding
        // them all (peak memory stays flat at a million assets).
        let mut rows = stmt.query([]).at(self)?;
        let mut version_count = 0u64;
        while let Some(r) = rows.next().at(self)? {
            let read = |i: usize| r.get::<_, i64>(i).at(self);
            let package: String = r.get(0).at(self)?;
            let version: String = r.get(1).at(self)?;
            let [files, raw, stored, real_files, real_raw, real_stored] =
                [read(2)?, read(3)?, read(4)?, read(5)?, read(6)?, read(7)?];
            version_count += 1;
            let object = format!("{package}@{version}");
            let mut mismatch = |what: &str, recorded: i64, actual: i64| {
                if recorded != actual {
                    problems.push(Problem {
                        kind: "version",
                        object: object.clone(),
                        detail: format!("records {recorded} {what}, its assets have {actual}"),
                        affects: Vec::new(),
                    });
                }
            };
            mismatch("files", files, real_files);
            mismatch("raw bytes", raw, real_raw);
            mismatch("stored bytes", stored, real_stored);
            if real_files == 0 {
                problems.push(Problem {
                    kind: "version",
                    object,
                    detail: "has no files".into(),
                    affects: Vec::new(),
                });
            }
        }
        Ok(version_count)
    }
}

impl AssetRecord {
    /// Whether the bodies the lookup loaded are what their record says;
    /// what the server checks before it caches or sends a body it loaded.
    /// With a stored digest, the body as stored must hash to it (one pass,
    /// no decoding); without one (a blob older than the digest), the body
    /// must decode to the recorded size and sha256. A stream longer than
    /// one piece is not loaded by the lookup, and is checked as it is read
    /// instead ([`Catalog::read_piece`], [`Catalog::load_stream`]); so are
    /// a big file's chunks. `Err` says what is wrong.
    pub fn check(&self) -> std::result::Result<(), String> {
        // Chunks are checked one by one as they are read.
        if self.chunks.is_some() {
            return Ok(());
        }
        // Never interrupted: a server finishing its requests after SIGTERM
        // still checks what it sends.
        let never = || Ok(());
        let content = (&self.sha256[..], self.raw_size as i64, self.encoding);
        let body = match self.body.as_deref() {
            Some(body) if !pieces::is_pieced(self.stored_len) => {
                Some(check_whole(body, self.stored, Some(content), never))
            }
            _ => None,
        };
        let brotli = self
            .brotli
            .as_ref()
            .and_then(|br| match br.body.as_deref() {
                Some(body) if !pieces::is_pieced(br.stored_len) => Some(
                    check_whole(body, br.stored, None, never)
                        .map(|wrong| wrong.map(|w| format!("{}{w}", Coding::Brotli.prefix()))),
                ),
                _ => None,
            });
        for checked in [body, brotli].into_iter().flatten() {
            match checked {
                Ok(None) => {}
                Ok(Some(wrong)) => return Err(wrong),
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }
}

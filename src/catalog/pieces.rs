//! Piece digests: every stored stream longer than one piece carries the
//! XXH3-128 of each [`PIECE_SIZE`] piece of it (64 KiB), so that a reader
//! checks what it sends a piece at a time, reading only the pieces it
//! sends.
//!
//! A stored stream is what a client is sent for one coding of a blob
//! ([`Coding`]): the blob's own body (`blobs.body`, gzip or identity) or its
//! brotli stream (`brotli.body`). Its whole-stream digest (`stored_xxh3`)
//! can only be checked once every byte was read, so a reader that checks
//! before it sends must first read, hash and hold the whole stream: a
//! 1-byte range of a 5 MB file would cost 5 MB, and a client that stops
//! reading would pin a whole copy. With a digest per piece, a range reads
//! and checks the pieces it covers, through SQLite's incremental blob I/O
//! ([`Catalog::read_stream`]), and a response holds one piece at a time.
//!
//! # Schema
//!
//! ```text
//! pieces (blob_id -> blobs, coding 0|1, digests, PRIMARY KEY(blob_id, coding)) WITHOUT ROWID
//! ```
//!
//! `coding` is 0 for the blob's body and 1 for its brotli stream;
//! `digests` the XXH3-128 (16 bytes, big-endian, as `stored_xxh3`) of each
//! consecutive [`PIECE_SIZE`] piece of that stream, in order, concatenated;
//! the last piece may be shorter. [`PIECE_SIZE`] is part of the schema:
//! every row was cut with it, so changing it takes a migration that
//! rewrites every row.
//!
//! Rows exist only for streams longer than one piece: a stream of one
//! piece is checked whole by its `stored_xxh3`, which costs no more. A big
//! file stored in chunks has none: each chunk has its own digest
//! ([`super::chunks`]).
//!
//! Why not chunks, as for big files: bodies stay where they are, so the
//! upgrade rewrites no blob, every query that reads `body` or
//! `length(body)` is unchanged, and catalogs from before (schema 8 and
//! older, read as they are) are served as before. SQLite's blob I/O reads
//! any byte range of a body by walking its overflow pages, without reading
//! the bytes before it; only streams longer than SQLite's blob limit need
//! chunks. Why one row per stream rather than a row per piece: a reader
//! needs all of a stream's digests at once, one short record (1.25 KB for a
//! 5 MB stream), read by key.
//!
//! # Reading
//!
//! Each read ([`Catalog::read_stream`], [`Catalog::read_piece`]) is its own
//! short read: the blob handle is closed before it returns, so a slow
//! client never holds a snapshot, and never keeps the write-ahead log from
//! being checkpointed. Between two reads a writer may commit: a blob never
//! changes while it exists, but gc may remove it, and a later publish may
//! reuse its id (`blobs.id` is a rowid without `AUTOINCREMENT`). A piece
//! read after that fails its length or its digest and is reported as
//! damage ([`Error::Corrupt`]), never sent.
//!
//! # Writing
//!
//! Publish computes the digests in its workers, where each stream is made,
//! and inserts them with the blob in the version's one transaction. gc
//! drops rows whose blob is gone; `verify` checks every digest against the
//! stored bytes and reports a stream longer than a piece without them.
//!
//! The upgrade to schema 9 fills rows for the streams already stored, in
//! the migration's exclusive transaction (`fill`): it reads each stream
//! once, checks it whole against its recorded digest (or, for a blob older
//! than any stored digest, decodes it to the file's sha256) and records
//! its pieces' digests; it rewrites no blob. A stream that fails that
//! check gets no row, so its damage is never recorded as correct: it stays
//! checked whole, and refused, as before, and a `warning:` names it.
//! Ctrl-C stops the upgrade between pieces and leaves the catalog as it
//! was.

use super::digest::{StoredDigests, check_whole, column as digest, xxh3_digest};
use super::{Catalog, Encoding, SqliteResult, sqlite_err};
use crate::error::{Error, Result};
use rusqlite::blob::Blob;
use rusqlite::{Connection, OptionalExtension, params};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The size of every piece of a stored stream but its last: what a reader
/// reads and checks at a time, the same as a big file's chunks
/// ([`super::chunks::CHUNK_SIZE`]). Per piece the catalog spends a 16-byte
/// digest, 0.02%. Part of the schema (module doc).
pub const PIECE_SIZE: usize = 64 << 10;

/// The bytes of one piece's digest.
const DIGEST_LEN: usize = 16;

/// One stored stream of a blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coding {
    /// The blob's own body (`blobs.body`): gzip, or identity.
    Stored,
    /// Its brotli stream (`brotli.body`).
    Brotli,
}

impl Coding {
    /// Its value in `pieces.coding`.
    pub(crate) const fn code(self) -> i64 {
        match self {
            Coding::Stored => 0,
            Coding::Brotli => 1,
        }
    }

    /// The table whose `body` holds the stream; in both, the row's rowid
    /// is the blob's id (`brotli.blob_id` is its integer primary key).
    fn table(self) -> &'static std::ffi::CStr {
        match self {
            Coding::Stored => c"blobs",
            Coding::Brotli => c"brotli",
        }
    }

    /// What a problem with this stream starts with, as `verify` and the
    /// server word it: nothing for the blob's body, `brotli stream: ` for
    /// the other.
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            Coding::Stored => "",
            Coding::Brotli => "brotli stream: ",
        }
    }

    /// The stream's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Coding::Stored => "stored stream",
            Coding::Brotli => "brotli stream",
        }
    }
}

/// How many pieces a stream of `stream_len` bytes has (0 for an empty one).
pub fn piece_count(stream_len: u64) -> usize {
    usize::try_from(stream_len.div_ceil(PIECE_SIZE as u64)).unwrap_or(usize::MAX)
}

/// The bytes of the stream that piece `index` covers: empty past the end.
pub(crate) fn piece_range(index: usize, stream_len: u64) -> Range<u64> {
    let start = (index as u64)
        .saturating_mul(PIECE_SIZE as u64)
        .min(stream_len);
    start..start.saturating_add(PIECE_SIZE as u64).min(stream_len)
}

/// The piece that byte `offset` of a stream lies in.
pub(crate) fn piece_of(offset: u64) -> usize {
    usize::try_from(offset / PIECE_SIZE as u64).unwrap_or(usize::MAX)
}

/// Whether a stream of `stream_len` bytes has piece digests: whether it is
/// longer than one piece.
pub(crate) fn is_pieced(stream_len: u64) -> bool {
    stream_len > PIECE_SIZE as u64
}

/// The `digests` of `stream`: the XXH3-128 of each of its pieces,
/// concatenated; None for a stream of one piece or less, which gets no
/// row.
pub(super) fn digests_of(stream: &[u8]) -> Option<Vec<u8>> {
    if !is_pieced(stream.len() as u64) {
        return None;
    }
    let mut digests = Vec::with_capacity(piece_count(stream.len() as u64) * DIGEST_LEN);
    for piece in stream.chunks(PIECE_SIZE) {
        digests.extend_from_slice(&xxh3_digest(piece));
    }
    Some(digests)
}

/// What a blob's body decodes to: the original file's sha256 and size, and
/// the body's encoding. What a body older than any stored digest is
/// checked against.
struct Decodes {
    sha256: [u8; 32],
    raw_size: i64,
    encoding: Encoding,
}

/// The statement that records a stream's digests.
pub(super) const INSERT: &str = "INSERT INTO pieces (blob_id, coding, digests) VALUES (?1, ?2, ?3)";

/// How a piece is named in messages: `piece 40 of 80 (bytes
/// 2621440..2686976) of blob 7`, after the stream's prefix.
fn piece_name(blob_id: i64, coding: Coding, index: usize, stream_len: u64) -> String {
    let range = piece_range(index, stream_len);
    format!(
        "{}piece {index} of {} (bytes {}..{}) of blob {blob_id}",
        coding.prefix(),
        piece_count(stream_len),
        range.start,
        range.end
    )
}

/// What is wrong with bytes whose XXH3-128 is `digest`, recorded
/// `recorded`, in the words of the whole-stream check.
fn mismatch(digest: &[u8; DIGEST_LEN], recorded: &[u8; DIGEST_LEN]) -> String {
    format!(
        "stored bytes hash to xxh3 {}, recorded {}",
        hex::encode(digest),
        hex::encode(recorded)
    )
}

/// What is wrong with `stream` against its piece `digests`: the first
/// piece that differs and how many do, or a number of digests that is not
/// its number of pieces; None when every piece matches.
pub(super) fn pieces_problem(stream: &[u8], digests: &[[u8; DIGEST_LEN]]) -> Option<String> {
    let len = stream.len() as u64;
    let pieces = piece_count(len);
    if digests.len() != pieces {
        return Some(format!(
            "{} recorded for a stream of {} ({len} bytes)",
            crate::output::count(digests.len() as u64, "piece digest"),
            crate::output::count(pieces as u64, "piece"),
        ));
    }
    let mut differ = stream
        .chunks(PIECE_SIZE)
        .zip(digests)
        .enumerate()
        .map(|(index, (piece, recorded))| (index, xxh3_digest(piece), recorded))
        .filter(|(_, digest, recorded)| digest != *recorded);
    let (index, digest, recorded) = differ.next()?;
    let more = match differ.count() {
        0 => String::new(),
        n => format!(
            " ({} of {pieces} differ)",
            crate::output::count(n as u64 + 1, "piece")
        ),
    };
    let range = piece_range(index, len);
    Some(format!(
        "piece {index} of {pieces} (bytes {}..{}) hashes to xxh3 {}, recorded {}{more}",
        range.start,
        range.end,
        hex::encode(digest),
        hex::encode(recorded)
    ))
}

/// The digests in a `pieces.digests` value, or what is wrong with it.
fn parse_digests(
    value: rusqlite::types::ValueRef<'_>,
) -> std::result::Result<Vec<[u8; 16]>, String> {
    let Ok(bytes) = value.as_blob() else {
        return Err("not stored as bytes".into());
    };
    let (digests, rest) = bytes.as_chunks::<DIGEST_LEN>();
    if digests.is_empty() || !rest.is_empty() {
        return Err(format!(
            "{} bytes, not a whole number of {DIGEST_LEN}-byte digests",
            bytes.len()
        ));
    }
    Ok(digests.to_vec())
}

impl Catalog {
    /// The digest of each [`PIECE_SIZE`] piece of stream `coding` of blob
    /// `blob_id`, in order. None when the catalog records none: the stream
    /// is one piece or less (checked whole by its `stored_xxh3`), its blob
    /// is chunked, or the catalog's schema predates piece digests (8 and
    /// older, read as they are), where the stream is checked whole as
    /// before ([`Catalog::load_stream`]).
    pub fn piece_digests(&self, blob_id: i64, coding: Coding) -> Result<Option<Vec<[u8; 16]>>> {
        if !self.has_pieces() {
            return Ok(None);
        }
        let row = self
            .conn()
            .prepare_cached("SELECT digests FROM pieces WHERE blob_id = ?1 AND coding = ?2")
            .and_then(|mut s| {
                s.query_row(params![blob_id, coding.code()], |r| {
                    Ok(parse_digests(r.get_ref(0)?))
                })
                .optional()
            })
            .at(self)?;
        match row {
            None => Ok(None),
            Some(Ok(digests)) => Ok(Some(digests)),
            Some(Err(what)) => Err(self.damaged(format!(
                "{}the piece digests of blob {blob_id}: {what}",
                coding.prefix()
            ))),
        }
    }

    /// Reads exactly `buf.len()` bytes of stream `coding` of blob `blob_id`
    /// from byte `offset`, as stored, unchecked (a reader checks whole
    /// pieces: [`Catalog::read_piece`]). Its own short read: the blob handle
    /// is closed before this returns. A read past the stream's end, or of a
    /// stream that is not there, is [`Error::Corrupt`].
    pub fn read_stream(
        &self,
        blob_id: i64,
        coding: Coding,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        let stream = self.open_stream(blob_id, coding)?;
        let len = stream.len() as u64;
        let fits = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|end| end <= len);
        if !fits {
            return Err(self.damaged(format!(
                "{}blob {blob_id}'s {} is {len} bytes: {} bytes at {offset} pass its end",
                coding.prefix(),
                coding.name(),
                buf.len()
            )));
        }
        self.read_into(&stream, offset, buf)?;
        stream.close().at(self)
    }

    /// Reads piece `index` of stream `coding` of blob `blob_id` into `buf`
    /// (resized to the piece's length, reusing its allocation) and checks it
    /// against `digests[index]`. `digests` are the stream's
    /// ([`Catalog::piece_digests`]) and `stream_len` its length as the
    /// lookup found it. A piece that differs, a stream of another length
    /// (damaged, or removed and its id reused since the lookup) and
    /// digests that do not cover the stream are [`Error::Corrupt`], naming
    /// the blob and the piece; `buf` then holds bytes that must not be
    /// sent.
    pub fn read_piece(
        &self,
        blob_id: i64,
        coding: Coding,
        index: usize,
        digests: &[[u8; 16]],
        stream_len: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.expect_count(blob_id, coding, digests, stream_len)?;
        let pieces = digests.len();
        let Some(recorded) = digests.get(index) else {
            return Err(Error::Internal(format!(
                "piece {index} asked of blob {blob_id}'s {}, which has {pieces}",
                coding.name()
            )));
        };
        let range = piece_range(index, stream_len);
        buf.resize((range.end - range.start) as usize, 0);
        let stream = self.open_stream(blob_id, coding)?;
        self.expect_len(&stream, blob_id, coding, stream_len)?;
        self.read_into(&stream, range.start, buf)?;
        stream.close().at(self)?;
        let digest = xxh3_digest(buf);
        if digest != *recorded {
            return Err(self.damaged(format!(
                "{}: {}",
                piece_name(blob_id, coding, index, stream_len),
                mismatch(&digest, recorded)
            )));
        }
        Ok(())
    }

    /// Reads stream `coding` of blob `blob_id`, `len` bytes as the lookup
    /// found it, whole, checked: piece by piece against its piece digests
    /// when it has them, else whole against its recorded digest as a body
    /// the lookup loads is ([`AssetRecord::check`]). Everything is read
    /// through one blob handle, so from one snapshot. What a reader that
    /// needs the whole stream uses (the server's miss, `ccc cat`). A
    /// stream that fails is [`Error::Corrupt`], its `what` in the words
    /// of [`AssetRecord::check`].
    ///
    /// [`AssetRecord::check`]: super::lookup::AssetRecord::check
    pub fn load_stream(&self, blob_id: i64, coding: Coding, len: u64) -> Result<Arc<[u8]>> {
        let stream = self.open_stream(blob_id, coding)?;
        // From here every statement reads the snapshot the open handle holds.
        self.expect_len(&stream, blob_id, coding, len)?;
        let size = usize::try_from(len)
            .map_err(|_| Error::Internal(format!("a stream of {len} bytes")))?;
        // Allocated once, in place: the zeroes are overwritten by the read.
        let mut body: Arc<[u8]> = std::iter::repeat_n(0u8, size).collect();
        let bytes = Arc::get_mut(&mut body)
            .ok_or_else(|| Error::Internal("a new body is shared".into()))?;
        match self.piece_digests(blob_id, coding)? {
            Some(digests) => {
                self.expect_count(blob_id, coding, &digests, len)?;
                for (index, (piece, recorded)) in
                    bytes.chunks_mut(PIECE_SIZE).zip(&digests).enumerate()
                {
                    let offset = (index * PIECE_SIZE) as u64;
                    self.read_into(&stream, offset, piece)?;
                    let digest = xxh3_digest(piece);
                    if digest != *recorded {
                        return Err(self.damaged(format!(
                            "{}: {}",
                            piece_name(blob_id, coding, index, len),
                            mismatch(&digest, recorded)
                        )));
                    }
                }
            }
            None => {
                self.read_into(&stream, 0, bytes)?;
                let (stored, decodes) = self.recorded(blob_id, coding)?;
                let content = decodes
                    .as_ref()
                    .map(|d| (&d.sha256[..], d.raw_size, d.encoding));
                // Never interrupted: a server finishing its requests after
                // SIGTERM still checks what it sends.
                if let Some(wrong) = check_whole(bytes, stored, content, || Ok(()))? {
                    return Err(self.damaged(format!("{}{wrong}", coding.prefix())));
                }
            }
        }
        stream.close().at(self)?;
        Ok(body)
    }

    /// What stream `coding` of blob `blob_id` was recorded to hash to, and
    /// for a blob's body what it decodes to, as this catalog's schema has
    /// them.
    fn recorded(&self, blob_id: i64, coding: Coding) -> Result<(StoredDigests, Option<Decodes>)> {
        let xxh3 = match self.has_check_digests() {
            true => "stored_xxh3",
            false => "NULL",
        };
        let sql = match (coding, self.has_stored_digests()) {
            (Coding::Stored, true) => format!(
                "SELECT stored_sha256, {xxh3}, sha256, raw_size, encoding FROM blobs WHERE id = ?1"
            ),
            (Coding::Stored, false) => {
                "SELECT NULL, NULL, sha256, raw_size, encoding FROM blobs WHERE id = ?1".into()
            }
            // The brotli table has always had its sha256 (NOT NULL).
            (Coding::Brotli, _) => format!(
                "SELECT stored_sha256, {xxh3}, NULL, NULL, NULL FROM brotli WHERE blob_id = ?1"
            ),
        };
        self.conn()
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_row([blob_id], |r| {
                    let stored = StoredDigests {
                        sha256: digest(r.get_ref(0)?)?,
                        xxh3: digest(r.get_ref(1)?)?,
                    };
                    let decodes = match coding {
                        Coding::Stored => Some(Decodes {
                            sha256: digest(r.get_ref(2)?)?.unwrap_or_default(),
                            raw_size: r.get(3)?,
                            encoding: r.get(4)?,
                        }),
                        Coding::Brotli => None,
                    };
                    Ok((stored, decodes))
                })
            })
            .at(self)
    }

    /// A read-only handle on stream `coding` of blob `blob_id`. A stream
    /// that is not there (its row gone, or not a value blob I/O reads) is
    /// [`Error::Corrupt`].
    fn open_stream(&self, blob_id: i64, coding: Coding) -> Result<Blob<'_>> {
        self.conn()
            .blob_open(rusqlite::MAIN_DB, coding.table(), c"body", blob_id, true)
            .map_err(|e| match e {
                // SQLITE_ERROR: "no such rowid", or a value of another type.
                rusqlite::Error::SqliteFailure(f, Some(why))
                    if f.code == rusqlite::ErrorCode::Unknown =>
                {
                    self.damaged(format!(
                        "{}blob {blob_id}'s {} cannot be read: {why}",
                        coding.prefix(),
                        coding.name()
                    ))
                }
                e => sqlite_err(self.path(), e),
            })
    }

    /// Checks that `stream` is `len` bytes, as the lookup found it.
    fn expect_len(&self, stream: &Blob<'_>, blob_id: i64, coding: Coding, len: u64) -> Result<()> {
        let actual = stream.len() as u64;
        if actual != len {
            return Err(self.damaged(format!(
                "{}blob {blob_id}'s {} is {actual} bytes, not the {len} its lookup found",
                coding.prefix(),
                coding.name()
            )));
        }
        Ok(())
    }

    /// Checks that `digests` has one digest per piece of a stream of `len`
    /// bytes.
    fn expect_count(
        &self,
        blob_id: i64,
        coding: Coding,
        digests: &[[u8; DIGEST_LEN]],
        len: u64,
    ) -> Result<()> {
        let pieces = piece_count(len);
        if digests.len() != pieces {
            return Err(self.damaged(format!(
                "{}blob {blob_id}: {} recorded for a {} of {} ({len} bytes)",
                coding.prefix(),
                crate::output::count(digests.len() as u64, "piece digest"),
                coding.name(),
                crate::output::count(pieces as u64, "piece"),
            )));
        }
        Ok(())
    }

    /// Fills `buf` from `stream` at `offset`, which the caller checked
    /// lies within it.
    fn read_into(&self, stream: &Blob<'_>, offset: u64, buf: &mut [u8]) -> Result<()> {
        let offset = usize::try_from(offset)
            .map_err(|_| Error::Internal(format!("offset {offset} of a stream")))?;
        stream.read_at_exact(buf, offset).at(self)
    }

    /// Damage to this catalog, described by `what`.
    fn damaged(&self, what: String) -> Error {
        Error::Corrupt {
            path: self.path().to_path_buf(),
            what,
        }
    }
}

/// The streams longer than one piece, with what each was recorded to be
/// (schema 8 has every column): `(blob id, body, sha256, raw size,
/// encoding, stored sha256, stored XXH3)`.
const FILL_BLOBS: &str = "SELECT id, body, sha256, raw_size, encoding, stored_sha256, stored_xxh3
   FROM blobs WHERE length(body) > ?1 ORDER BY id";
const FILL_BROTLI: &str = "SELECT blob_id, body, NULL, NULL, NULL, stored_sha256, stored_xxh3
   FROM brotli WHERE length(body) > ?1 ORDER BY blob_id";

/// How long the upgrade runs before it says what it is doing.
const ANNOUNCE_AFTER: Duration = Duration::from_secs(1);

/// Records the piece digests of every stream the catalog stores that is
/// longer than one piece, each checked whole first (module doc): the step
/// of the upgrade to schema 9, inside its exclusive transaction `tx`, on
/// the catalog at `path`. `poll` runs before each stream and every 64 KiB
/// of a check that hashes or decodes; its error (Ctrl-C:
/// [`crate::interrupt::check`]) stops the upgrade, and the caller's
/// transaction then rolls back.
pub(super) fn fill(tx: &Connection, path: &Path, poll: impl Fn() -> Result<()>) -> Result<()> {
    let started = Instant::now();
    let mut announced = false;
    let mut insert = tx.prepare(INSERT).at(path)?;
    for (coding, sql) in [(Coding::Stored, FILL_BLOBS), (Coding::Brotli, FILL_BROTLI)] {
        let mut stmt = tx.prepare(sql).at(path)?;
        let mut rows = stmt.query([PIECE_SIZE as i64]).at(path)?;
        while let Some(row) = rows.next().at(path)? {
            poll()?;
            if !announced && started.elapsed() >= ANNOUNCE_AFTER {
                announced = true;
                crate::log::err(format_args!(
                    "Upgrading: recording a digest of every {} piece of the bodies in {}, once (Ctrl-C stops and changes nothing)",
                    crate::units::human_size(PIECE_SIZE as u64),
                    path.display()
                ));
            }
            let id: i64 = row.get(0).at(path)?;
            let body = row.get_ref(1).at(path)?.as_blob().ok();
            let wrong = match body {
                None => Some("not stored as bytes".to_string()),
                Some(body) => {
                    let stored = StoredDigests {
                        sha256: digest(row.get_ref(5).at(path)?).at(path)?,
                        xxh3: digest(row.get_ref(6).at(path)?).at(path)?,
                    };
                    let content = match coding {
                        Coding::Stored => row.get::<_, Encoding>(4).ok().map(|encoding| {
                            let sha = row.get_ref(2).ok().and_then(|v| v.as_blob().ok());
                            let raw = row.get::<_, i64>(3).unwrap_or(-1);
                            (sha.unwrap_or_default(), raw, encoding)
                        }),
                        Coding::Brotli => None,
                    };
                    check_whole(body, stored, content, &poll)?
                }
            };
            match (body, wrong) {
                (Some(body), None) => {
                    if let Some(digests) = digests_of(body) {
                        insert
                            .execute(params![id, coding.code(), digests])
                            .at(path)?;
                    }
                }
                (_, wrong) => crate::log::err(format_args!(
                    "warning: catalog {} is damaged: {}blob {id}: {}; it gets no piece digests and is still refused as before (`ccc verify` names the files using it)",
                    path.display(),
                    coding.prefix(),
                    wrong.unwrap_or_default()
                )),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Access;
    use crate::catalog::SCHEMA_VERSION;
    use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};

    /// Publishes `app@VERSION` with `files` into the catalog at `db`.
    fn publish_at(db: &Path, version: &str, files: &[(&str, &[u8])], options: &Options) {
        let mut catalog = Catalog::open(db, Access::Create).unwrap();
        let files = files
            .iter()
            .map(|(path, body)| FileEntry {
                path: path.to_string(),
                size: body.len() as u64,
                source: Source::Memory(Arc::from(*body)),
            })
            .collect();
        let version = semver::Version::parse(version).unwrap();
        publish::publish(
            &mut catalog,
            "app",
            &version,
            files,
            vec![],
            options,
            &NoProgress,
        )
        .unwrap();
    }

    /// `len` bytes gzip cannot shrink, different for each `seed`.
    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = crate::rng::SplitMix64::new(seed);
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        out.truncate(len);
        out
    }

    /// Publish's options for big test files: the fastest gzip, which does
    /// not shrink noise, and no brotli, so that a debug build stores
    /// megabytes quickly (identity).
    fn stored_as_is() -> Options {
        Options {
            level: crate::catalog::compression::GzipLevel::FASTEST,
            brotli_quality: crate::catalog::compression::BrotliQuality::NONE,
            check: false,
            ..Options::default()
        }
    }

    /// Every stored stream of the catalog at `db`: `(blob id, coding, bytes)`.
    fn streams(db: &Path) -> Vec<(i64, i64, Vec<u8>)> {
        let conn = Connection::open(db).unwrap();
        let mut streams = Vec::new();
        for (coding, sql) in [
            (0, "SELECT id, body FROM blobs ORDER BY id"),
            (1, "SELECT blob_id, body FROM brotli ORDER BY blob_id"),
        ] {
            let mut stmt = conn.prepare(sql).unwrap();
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, coding, r.get(1)?)))
                .unwrap();
            streams.extend(rows.map(Result::unwrap));
        }
        streams
    }

    /// The rows of `pieces` in the catalog at `db`, in key order.
    fn rows(db: &Path) -> Vec<(i64, i64, Vec<u8>)> {
        let conn = Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare("SELECT blob_id, coding, digests FROM pieces ORDER BY blob_id, coding")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// The rows `pieces` must have for `streams`: one for each longer than
    /// a piece, the XXH3-128 of each piece computed here.
    fn expected(streams: &[(i64, i64, Vec<u8>)]) -> Vec<(i64, i64, Vec<u8>)> {
        let mut rows: Vec<(i64, i64, Vec<u8>)> = streams
            .iter()
            .filter(|(_, _, body)| body.len() > PIECE_SIZE)
            .map(|(id, coding, body)| {
                let digests = body
                    .chunks(PIECE_SIZE)
                    .flat_map(|p| xxhash_rust::xxh3::xxh3_128(p).to_be_bytes())
                    .collect();
                (*id, *coding, digests)
            })
            .collect();
        rows.sort();
        rows
    }

    /// Takes the catalog at `db` back to schema 8: as it was before piece
    /// digests, every other row as it is.
    fn downgrade_to_schema_8(db: &Path) {
        Connection::open(db)
            .unwrap()
            .execute_batch(
                "DROP TABLE pieces;
                 DROP TABLE tokens;
                 DROP TABLE audit;
                 DROP TABLE IF EXISTS deltas;
                 DROP TABLE IF EXISTS recoded;
                 DROP TABLE IF EXISTS brotli_made;
                 DROP TABLE IF EXISTS site_versions;
                 DROP TABLE IF EXISTS sites;
                 UPDATE meta SET value = '8' WHERE key = 'schema_version';
                 PRAGMA user_version = 8;",
            )
            .unwrap();
    }

    /// Flips one bit of the byte at `offset` of stream `coding` of blob
    /// `blob_id` in place, behind ccc's back.
    fn flip(db: &Path, blob_id: i64, coding: Coding, offset: usize) {
        let conn = Connection::open(db).unwrap();
        let mut stream = conn
            .blob_open(rusqlite::MAIN_DB, coding.table(), c"body", blob_id, false)
            .unwrap();
        let mut byte = [0u8];
        stream.read_at_exact(&mut byte, offset).unwrap();
        byte[0] ^= 0x10;
        stream.write_all_at(&byte, offset).unwrap();
    }

    /// The blob id of `app@1.0.0/PATH` and the length of its body.
    fn blob_of(catalog: &Catalog, path: &str) -> (i64, u64) {
        let found = catalog.lookup("app", "1.0.0", path).unwrap().unwrap();
        (found.blob_id, found.stored_len)
    }

    #[test]
    fn pieces_cover_a_stream_to_its_end() {
        let p = PIECE_SIZE as u64;
        assert_eq!(piece_count(0), 0);
        assert_eq!(piece_count(1), 1);
        assert_eq!(piece_count(p), 1);
        assert_eq!(piece_count(p + 1), 2);
        assert_eq!(piece_range(0, p + 1), 0..p);
        assert_eq!(piece_range(1, p + 1), p..p + 1);
        assert_eq!(piece_range(2, p + 1), p + 1..p + 1, "past the end: empty");
        assert_eq!(piece_of(p - 1), 0);
        assert_eq!(piece_of(p), 1);
        assert!(!is_pieced(p) && is_pieced(p + 1));
        assert_eq!(digests_of(&vec![7; PIECE_SIZE]), None, "one piece: no row");
        let two = digests_of(&vec![7; PIECE_SIZE + 1]).unwrap();
        assert_eq!(two.len(), 2 * DIGEST_LEN);
        assert_eq!(two[16..], xxh3_digest(&[7])[..], "the last piece is short");
    }

    #[test]
    fn publish_records_the_pieces_of_every_stream_longer_than_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        // Script stored gzip with a brotli stream, both over a piece;
        // noise stored as it is; and streams of one piece or less.
        let script = publish::script_like(50_000);
        let big_noise = noise(200_000, 1);
        let one_piece = noise(PIECE_SIZE, 2);
        let just_over = noise(PIECE_SIZE + 1, 3);
        let small = publish::script_like(100);
        let options = Options {
            check: false,
            ..Options::default()
        };
        let files: [(&str, &[u8]); 5] = [
            ("app.js", &script),
            ("big.bin", &big_noise),
            ("one.bin", &one_piece),
            ("over.bin", &just_over),
            ("small.js", &small),
        ];
        publish_at(&db, "1.0.0", &files, &options);
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        let app = catalog.lookup("app", "1.0.0", "app.js").unwrap().unwrap();
        assert_eq!(app.encoding, Encoding::Gzip);
        let brotli_len = app.brotli.as_ref().expect("a brotli stream").stored_len;
        assert!(app.stored_len > PIECE_SIZE as u64, "{}", app.stored_len);
        assert!(brotli_len > PIECE_SIZE as u64, "{brotli_len}");
        let all = streams(&db);
        let want = expected(&all);
        // gzip and brotli of app.js, big.bin, over.bin.
        assert_eq!(
            want.len(),
            4,
            "{:?}",
            want.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>()
        );
        assert_eq!(rows(&db), want);
        // Every row is what the read API gives.
        for (id, coding, digests) in &want {
            let coding = if *coding == 0 {
                Coding::Stored
            } else {
                Coding::Brotli
            };
            let read = catalog.piece_digests(*id, coding).unwrap().unwrap();
            assert_eq!(read.concat(), *digests);
        }
        let (one, _) = blob_of(&catalog, "one.bin");
        assert_eq!(catalog.piece_digests(one, Coding::Stored).unwrap(), None);
        drop(catalog);

        // A forced republish and a version sharing the content store no
        // blob again, and so no digests again.
        let forced = Options {
            force: true,
            ..options.clone()
        };
        publish_at(&db, "1.0.0", &files, &forced);
        publish_at(&db, "2.0.0", &files[..2], &options);
        assert_eq!(rows(&db), want);
        // New content beside shared content gets its own.
        let more = noise(3 * PIECE_SIZE, 4);
        publish_at(
            &db,
            "3.0.0",
            &[("big.bin", &big_noise), ("more.bin", &more)],
            &options,
        );
        assert_eq!(rows(&db), expected(&streams(&db)));
        assert_eq!(rows(&db).len(), 5);
    }

    #[test]
    fn the_upgrade_fills_the_rows_of_a_schema_8_catalog() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let script = publish::script_like(50_000);
        let (a, b) = (noise(300_000, 5), noise(150_000, 6));
        let files: [(&str, &[u8]); 4] = [
            ("app.js", &script),
            ("a.bin", &a),
            ("b.bin", &b),
            ("small.bin", b"small"),
        ];
        publish_at(&db, "1.0.0", &files, &Options::default());
        let want = expected(&streams(&db));
        assert_eq!(want.len(), 4);
        let (damaged, _) = blob_of(&Catalog::open(&db, Access::ReadOnly).unwrap(), "b.bin");
        downgrade_to_schema_8(&db);
        // Damage that predates the upgrade must not be recorded as correct.
        flip(&db, damaged, Coding::Stored, 100_000);
        let before = streams(&db);

        // Read as it is: no digests, streams checked whole.
        let reader = Catalog::open(&db, Access::ReadOnly).unwrap();
        assert_eq!(reader.schema(), 8);
        for (id, coding, _) in &want {
            let coding = if *coding == 0 {
                Coding::Stored
            } else {
                Coding::Brotli
            };
            assert_eq!(reader.piece_digests(*id, coding).unwrap(), None);
        }
        drop(reader);

        let writer = Catalog::open(&db, Access::ReadWrite).unwrap();
        assert_eq!(writer.schema(), SCHEMA_VERSION);
        drop(writer);
        let filled = rows(&db);
        let undamaged: Vec<_> = want.iter().filter(|r| r.0 != damaged).cloned().collect();
        assert_eq!(
            filled, undamaged,
            "every sound stream, and not the damaged one"
        );
        assert_eq!(streams(&db), before, "no stream rewritten");
    }

    #[test]
    fn the_upgrade_stops_on_ctrl_c_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let a = noise(300_000, 7);
        publish_at(&db, "1.0.0", &[("a.bin", &a)], &stored_as_is());
        downgrade_to_schema_8(&db);
        let conn = Connection::open(&db).unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        tx.execute_batch(super::super::MIGRATIONS[8]).unwrap();
        // Ctrl-C, as `migrate` polls it: `fill` stops at the first stream.
        let stopped = fill(&tx, &db, || Err(Error::Interrupted(libc::SIGINT)));
        assert!(matches!(stopped, Err(Error::Interrupted(_))), "{stopped:?}");
        drop(tx);
        drop(conn);
        let reader = Catalog::open(&db, Access::ReadOnly).unwrap();
        assert_eq!(reader.schema(), 8, "rolled back");
        assert!(!reader.has_pieces());
        drop(reader);
        // Polled between pieces too: the check of a blob older than its
        // stored digests decodes, and polls as it goes.
        let polls = std::cell::Cell::new(0);
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("UPDATE blobs SET stored_xxh3 = NULL")
            .unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        tx.execute_batch(super::super::MIGRATIONS[8]).unwrap();
        fill(&tx, &db, || {
            polls.set(polls.get() + 1);
            Ok(())
        })
        .unwrap();
        assert!(polls.get() >= 300_000 / PIECE_SIZE, "{} polls", polls.get());
    }

    #[test]
    fn a_flipped_byte_fails_its_piece_alone_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let big = noise(5_000_000, 8);
        publish_at(&db, "1.0.0", &[("big.bin", &big)], &stored_as_is());
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        let (id, len) = blob_of(&catalog, "big.bin");
        assert_eq!(len, 5_000_000);
        let digests = catalog.piece_digests(id, Coding::Stored).unwrap().unwrap();
        assert_eq!(digests.len(), piece_count(len));
        let middle = piece_of(len / 2);
        let mut buf = Vec::new();
        catalog
            .read_piece(id, Coding::Stored, middle, &digests, len, &mut buf)
            .unwrap();
        let range = piece_range(middle, len);
        assert_eq!(buf[..], big[range.start as usize..range.end as usize]);
        let capacity = buf.capacity();

        flip(&db, id, Coding::Stored, (len / 2) as usize);
        let err = catalog
            .read_piece(id, Coding::Stored, middle, &digests, len, &mut buf)
            .unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, Error::Corrupt { .. }), "{message}");
        for needle in [
            db.to_str().unwrap(),
            &format!("piece {middle} of {} ", digests.len()),
            &format!("(bytes {}..{})", range.start, range.end),
            &format!("of blob {id}"),
            "stored bytes hash to xxh3 ",
            &hex::encode(digests[middle]),
        ] {
            assert!(message.contains(needle), "{needle:?} in {message}");
        }
        // Every other piece still reads, into the same allocation; the
        // last is short.
        for index in [0, middle - 1, middle + 1, digests.len() - 1] {
            catalog
                .read_piece(id, Coding::Stored, index, &digests, len, &mut buf)
                .unwrap();
            let range = piece_range(index, len);
            assert_eq!(buf[..], big[range.start as usize..range.end as usize]);
        }
        assert_eq!(buf.len(), (len % PIECE_SIZE as u64) as usize);
        assert_eq!(buf.capacity(), capacity);
        // Read whole, it fails at the same piece.
        let whole = catalog.load_stream(id, Coding::Stored, len).unwrap_err();
        let whole = whole.to_string();
        assert!(whole.contains(&format!("piece {middle} of ")), "{whole}");
        // Digests of another stream, or of another length, are refused.
        assert!(
            catalog
                .read_piece(id, Coding::Stored, 0, &digests[1..], len, &mut buf)
                .is_err()
        );
        let shorter = catalog
            .read_piece(
                id,
                Coding::Stored,
                0,
                &digests,
                len - PIECE_SIZE as u64,
                &mut buf,
            )
            .unwrap_err()
            .to_string();
        assert!(shorter.contains("piece digests recorded"), "{shorter}");
    }

    #[test]
    fn read_stream_reads_any_byte_and_nothing_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let big = noise(3_000_001, 9);
        publish_at(&db, "1.0.0", &[("big.bin", &big)], &stored_as_is());
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        let (id, len) = blob_of(&catalog, "big.bin");
        let mut last = [0u8];
        catalog
            .read_stream(id, Coding::Stored, len - 1, &mut last)
            .unwrap();
        assert_eq!(last[0], big[big.len() - 1]);
        let mut span = vec![0u8; 100_000];
        catalog
            .read_stream(id, Coding::Stored, 1_234_567, &mut span)
            .unwrap();
        assert_eq!(span[..], big[1_234_567..1_334_567]);
        let mut none = [];
        catalog
            .read_stream(id, Coding::Stored, len, &mut none)
            .unwrap();
        let mut two = [0u8; 2];
        let past = catalog
            .read_stream(id, Coding::Stored, len - 1, &mut two)
            .unwrap_err()
            .to_string();
        assert!(past.contains("pass its end"), "{past}");
        assert!(past.contains(db.to_str().unwrap()), "{past}");
        let missing = catalog
            .read_stream(id + 1, Coding::Stored, 0, &mut last)
            .unwrap_err()
            .to_string();
        assert!(missing.contains(&format!("blob {}", id + 1)), "{missing}");
        let no_brotli = catalog
            .read_stream(id, Coding::Brotli, 0, &mut last)
            .unwrap_err()
            .to_string();
        assert!(no_brotli.contains("brotli stream"), "{no_brotli}");
        // Each read is its own: no snapshot is held after it, so a
        // writer's log can be emptied; while a handle is open, it cannot.
        let writer = Connection::open(&db).unwrap();
        // Report a reader at once rather than wait for it.
        writer.busy_timeout(Duration::ZERO).unwrap();
        let write_and_empty_the_log = || -> i64 {
            writer
                .execute(
                    "INSERT OR REPLACE INTO meta VALUES ('test', hex(randomblob(8)))",
                    [],
                )
                .unwrap();
            writer
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
                .unwrap()
        };
        catalog
            .read_stream(id, Coding::Stored, len - 1, &mut last)
            .unwrap();
        assert_eq!(write_and_empty_the_log(), 0, "not busy: no reader left");
        let held = catalog.open_stream(id, Coding::Stored).unwrap();
        assert_eq!(write_and_empty_the_log(), 1, "busy: a reader's snapshot");
        drop(held);
        assert_eq!(write_and_empty_the_log(), 0);
    }

    #[test]
    fn a_catalog_without_pieces_is_read_whole_and_checked_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let big = noise(300_000, 10);
        publish_at(&db, "1.0.0", &[("big.bin", &big)], &stored_as_is());
        downgrade_to_schema_8(&db);
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        let (id, len) = blob_of(&catalog, "big.bin");
        assert_eq!(catalog.piece_digests(id, Coding::Stored).unwrap(), None);
        assert_eq!(
            catalog.load_stream(id, Coding::Stored, len).unwrap()[..],
            big[..]
        );
        flip(&db, id, Coding::Stored, 299_999);
        let err = catalog
            .load_stream(id, Coding::Stored, len)
            .unwrap_err()
            .to_string();
        assert!(err.contains("stored bytes hash to xxh3"), "{err}");
        assert!(!err.contains("piece"), "{err}");
    }

    #[test]
    fn verify_checks_every_piece_and_that_each_stream_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let (a, b) = (noise(5_000_000, 11), noise(200_000, 12));
        publish_at(
            &db,
            "1.0.0",
            &[("a.bin", &a), ("b.bin", &b)],
            &stored_as_is(),
        );
        let catalog = Catalog::open(&db, Access::ReadOnly).unwrap();
        assert!(catalog.verify(&|_| {}).unwrap().ok);
        let (id_a, len_a) = blob_of(&catalog, "a.bin");
        let (id_b, _) = blob_of(&catalog, "b.bin");

        // A byte of a's body changed, its whole-stream digests made to
        // match (as a careless repair would): only the piece tells.
        flip(&db, id_a, Coding::Stored, 2_500_000);
        let changed = catalog.load_stream(id_a, Coding::Stored, len_a);
        assert!(changed.is_err());
        {
            let conn = Connection::open(&db).unwrap();
            let mut body = a.clone();
            body[2_500_000] ^= 0x10;
            conn.execute(
                "UPDATE blobs SET stored_xxh3 = ?1 WHERE id = ?2",
                params![&xxh3_digest(&body)[..], id_a],
            )
            .unwrap();
            conn.execute("DELETE FROM pieces WHERE blob_id = ?1", [id_b])
                .unwrap();
        }
        let report = catalog.verify(&|_| {}).unwrap();
        assert!(!report.ok);
        let piece = piece_of(2_500_000);
        let detail = |id: i64| {
            let sha = Connection::open(&db)
                .unwrap()
                .query_row("SELECT sha256 FROM blobs WHERE id = ?1", [id], |r| {
                    r.get::<_, Vec<u8>>(0)
                })
                .unwrap();
            report
                .problems
                .iter()
                .find(|p| p.object == hex::encode(&sha))
                .unwrap_or_else(|| panic!("blob {id}: {:?}", report.problems))
                .clone()
        };
        let bad = detail(id_a);
        assert_eq!(bad.affects, ["app@1.0.0/a.bin"]);
        assert!(
            bad.detail.contains(&format!(
                "piece {piece} of {} (bytes {}..{}) hashes to xxh3",
                piece_count(len_a),
                piece_range(piece, len_a).start,
                piece_range(piece, len_a).end
            )),
            "{}",
            bad.detail
        );
        let missing = detail(id_b);
        assert_eq!(missing.affects, ["app@1.0.0/b.bin"]);
        assert!(
            missing
                .detail
                .contains("no piece digests recorded for its stream of 200000 bytes"),
            "{}",
            missing.detail
        );
    }

    #[test]
    fn gc_drops_the_pieces_of_removed_blobs_and_orphans() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cdn.db");
        let (a, b) = (noise(200_000, 13), noise(200_000, 14));
        publish_at(&db, "1.0.0", &[("a.bin", &a)], &stored_as_is());
        publish_at(&db, "2.0.0", &[("b.bin", &b)], &stored_as_is());
        assert_eq!(rows(&db).len(), 2);
        // Orphans, as a catalog changed with foreign keys off has them: the
        // digests of a blob that is gone, and of a brotli stream that is.
        {
            let conn = Connection::open(&db).unwrap();
            let (id_b,): (i64,) = conn
                .query_row("SELECT blob_id FROM assets WHERE path = 'b.bin'", [], |r| {
                    Ok((r.get(0)?,))
                })
                .unwrap();
            conn.execute_batch(&format!(
                "PRAGMA foreign_keys = OFF;
                 INSERT INTO pieces VALUES (999, 0, zeroblob(32));
                 INSERT INTO pieces VALUES ({id_b}, 1, zeroblob(32));"
            ))
            .unwrap();
        }
        assert_eq!(rows(&db).len(), 4);
        let mut catalog = Catalog::open(&db, Access::ReadWrite).unwrap();
        let version = catalog
            .conn()
            .query_row("SELECT id FROM versions WHERE version = '1.0.0'", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap();
        catalog.remove_versions(&[version], false).unwrap();
        struct Quiet;
        impl crate::catalog::gc::Reporter for Quiet {
            fn version(&mut self, _: &crate::catalog::gc::Choice) -> Result<()> {
                Ok(())
            }
        }
        catalog
            .gc(&crate::catalog::gc::Options::default(), &mut Quiet)
            .unwrap();
        drop(catalog);
        assert_eq!(rows(&db), expected(&streams(&db)), "b's own row alone");
        assert_eq!(rows(&db).len(), 1);
    }
}

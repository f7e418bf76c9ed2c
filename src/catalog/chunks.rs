//! Big files, stored in chunks so that no command and no request ever
//! holds one whole in memory.
//!
//! A file of [`CHUNKED_FROM`] bytes or more is stored as it is (identity),
//! cut into [`CHUNK_SIZE`] pieces (64 KiB), one row of `chunks` each, keyed by its
//! blob and its place. Its `blobs` row has an empty body, which no other
//! blob of a non-empty file has (a gzip stream is never empty), so
//! [`is_chunked`] tells one by its row alone, and an older query that
//! reads `length(body)` gets 0 rather than a wrong size; queries that
//! report stored bytes use [`stored_len!`](crate::stored_len) instead.
//!
//! Why chunks, not SQLite's incremental blob I/O on one big blob:
//!
//! - one blob is limited to SQLite's length limit (about 10^9 bytes), so
//!   a 1 GiB file cannot be one blob at all;
//! - each chunk carries its own XXH3-128, so a reader checks every piece
//!   it sends before sending it (as a miss checks a whole body), without
//!   reading the file to its end first;
//! - a range request reads the chunks it covers by key, and each read is
//!   its own short transaction: a slow client never holds a snapshot, so
//!   it never keeps the write-ahead log from being checkpointed.
//!
//! Why stored as is: ranges are ranges of the stored bytes, files this big
//! are mostly compressed already (video, archives, images), and gzip at
//! level 9 would make publishing one the slowest part of any publish. A
//! file under [`CHUNKED_FROM`] is compressed as before.
//!
//! A publish writes the chunks inside its transaction, so a chunked file
//! appears with its version or not at all. Deleting the blob deletes its
//! chunks (`ON DELETE CASCADE`); gc also drops chunks whose blob is gone.

use super::digest::xxh3_digest;
use super::{Catalog, SqliteResult};
use crate::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Files of this size or more are stored in chunks.
pub(crate) const CHUNKED_FROM: u64 = 64 << 20;

/// The size of every chunk but a blob's last: what a response holds in
/// memory at a time, so a client that stops reading pins 64 KiB (about
/// nginx's output buffers), and the most a small range reads beyond itself.
/// Per chunk the catalog spends a key and a digest, 0.05%.
pub(crate) const CHUNK_SIZE: usize = 64 << 10;

/// The stored size of blob `$b` (an alias in the query): its body's
/// length, or its raw size when its bytes are in chunks.
#[macro_export]
macro_rules! stored_len {
    ($b:literal) => {
        concat!(
            "iif(length(",
            $b,
            ".body) = 0, ",
            $b,
            ".raw_size, length(",
            $b,
            ".body))"
        )
    };
}

/// Whether a blob whose body is `body_len` bytes has its bytes in chunks.
pub(crate) fn is_chunked(body_len: usize, raw_size: u64) -> bool {
    body_len == 0 && raw_size > 0
}

/// Where a chunked blob's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkedBlob {
    pub blob_id: i64,
    pub raw_size: u64,
    /// The size of every chunk but the last, read from the first.
    pub chunk_size: u64,
}

/// Reads `source` to its end into chunks of blob `blob_id`, and returns
/// the sha256 and length of what it read. With `store` false only hashes
/// (a dry run). Ctrl-C is noticed between chunks.
pub(super) fn write(
    tx: &Connection,
    db: &Path,
    blob_id: i64,
    source: &mut dyn Read,
    store: bool,
) -> Result<([u8; 32], u64)> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO chunks (blob_id, seq, body, stored_xxh3) VALUES (?1, ?2, ?3, ?4)",
        )
        .at(db)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0; CHUNK_SIZE];
    let mut total = 0u64;
    for seq in 0.. {
        crate::interrupt::check()?;
        let n = read_full(source, &mut buf).map_err(|e| Error::io(db, e))?;
        if n == 0 {
            break;
        }
        let piece = &buf[..n];
        sha.update(piece);
        total += n as u64;
        if store {
            insert
                .execute(params![blob_id, seq, piece, &xxh3_digest(piece)[..]])
                .at(db)?;
        }
        if n < CHUNK_SIZE {
            break;
        }
    }
    Ok((sha.finalize().into(), total))
}

/// Reads until `buf` is full or the source ends; the bytes read.
pub(super) fn read_full(source: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Catalog {
    /// The chunks of blob `blob_id` of `raw_size` bytes; an error when the
    /// first is missing (a catalog changed behind ccc's back).
    pub(crate) fn chunked_blob(&self, blob_id: i64, raw_size: u64) -> Result<ChunkedBlob> {
        let first: Option<i64> = self
            .conn()
            .prepare_cached("SELECT length(body) FROM chunks WHERE blob_id = ?1 AND seq = 0")
            .and_then(|mut s| s.query_row([blob_id], |r| r.get(0)).optional())
            .at(self)?;
        match first {
            Some(size) if size > 0 => Ok(ChunkedBlob {
                blob_id,
                raw_size,
                chunk_size: size as u64,
            }),
            _ => Err(Error::Corrupt {
                path: self.path().to_path_buf(),
                what: format!("blob {blob_id} of {raw_size} bytes has no first chunk"),
            }),
        }
    }

    /// The blob of asset `path` of version `version_id`, when its bytes
    /// are in chunks.
    pub(crate) fn chunked_asset(&self, version_id: i64, path: &str) -> Result<Option<ChunkedBlob>> {
        let row: Option<(i64, i64, i64)> = self
            .conn()
            .prepare_cached(
                "SELECT b.id, b.raw_size, length(b.body) FROM assets a
                   JOIN blobs b ON b.id = a.blob_id
                  WHERE a.version_id = ?1 AND a.path = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![version_id, path], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()
            })
            .at(self)?;
        match row {
            Some((id, raw, body)) if is_chunked(body as usize, raw as u64) => {
                self.chunked_blob(id, raw as u64).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Writes the stored bytes of blob `blob_id` to `out`: its body, or
    /// its chunks one at a time, each checked. `write_error` names what
    /// `out` is when writing fails.
    pub(crate) fn copy_blob(
        &self,
        blob_id: i64,
        out: &mut dyn std::io::Write,
        write_error: &dyn Fn(std::io::Error) -> Error,
    ) -> Result<()> {
        let (body_len, raw_size): (i64, i64) = self
            .conn()
            .prepare_cached("SELECT length(body), raw_size FROM blobs WHERE id = ?1")
            .and_then(|mut s| s.query_row([blob_id], |r| Ok((r.get(0)?, r.get(1)?))))
            .at(self)?;
        if !is_chunked(body_len as usize, raw_size as u64) {
            let body = self.blob_body(blob_id)?;
            return out.write_all(&body).map_err(write_error);
        }
        let blob = self.chunked_blob(blob_id, raw_size as u64)?;
        ChunkCursor::new(blob, 0..blob.raw_size).for_each(self, |piece| {
            crate::interrupt::check()?;
            out.write_all(piece).map_err(write_error)
        })
    }

    /// Chunk `seq` of `blob`, checked against its XXH3-128 and its
    /// expected length before it is returned.
    pub(crate) fn read_chunk(&self, blob: &ChunkedBlob, seq: u64) -> Result<Vec<u8>> {
        // Read as they are: a value of another type is damage to report,
        // not a database error.
        type Bytes = Option<Vec<u8>>;
        let row: Option<(Bytes, Bytes)> = self
            .conn()
            .prepare_cached("SELECT body, stored_xxh3 FROM chunks WHERE blob_id = ?1 AND seq = ?2")
            .and_then(|mut s| {
                s.query_row(params![blob.blob_id, seq as i64], |r| {
                    let blob = |i: usize| -> rusqlite::Result<Option<Vec<u8>>> {
                        Ok(r.get_ref(i)?.as_blob().ok().map(<[u8]>::to_vec))
                    };
                    Ok((blob(0)?, blob(1)?))
                })
                .optional()
            })
            .at(self)?;
        let start = seq * blob.chunk_size;
        let expected = blob.raw_size.saturating_sub(start).min(blob.chunk_size);
        let corrupt = |what: String| Error::Corrupt {
            path: self.path().to_path_buf(),
            what: format!("chunk {seq} of blob {}: {what}", blob.blob_id),
        };
        let Some((body, xxh3)) = row else {
            return Err(corrupt("missing".into()));
        };
        let (Some(body), Some(xxh3)) = (body, xxh3) else {
            return Err(corrupt("not stored as bytes".into()));
        };
        if body.len() as u64 != expected {
            return Err(corrupt(format!(
                "{} bytes, expected {expected}",
                body.len()
            )));
        }
        if xxh3_digest(&body)[..] != xxh3[..] {
            return Err(corrupt(
                "stored bytes do not hash to the recorded xxh3".into(),
            ));
        }
        Ok(body)
    }
}

/// Reads a range of a chunked blob a chunk at a time, each checked.
#[derive(Debug, Clone)]
pub(crate) struct ChunkCursor {
    pub blob: ChunkedBlob,
    /// What is left to read.
    pub range: std::ops::Range<u64>,
}

impl ChunkCursor {
    pub(crate) fn new(blob: ChunkedBlob, range: std::ops::Range<u64>) -> ChunkCursor {
        ChunkCursor { blob, range }
    }

    /// The chunk the next piece lies in, or None at the range's end.
    pub(crate) fn next_seq(&self) -> Option<u64> {
        (!self.range.is_empty()).then(|| self.range.start / self.blob.chunk_size)
    }

    /// The part of `chunk` (the one [`next_seq`](Self::next_seq) named,
    /// as [`Catalog::read_chunk`] returned it) the range covers; the range
    /// moves past it.
    pub(crate) fn take(&mut self, chunk: bytes::Bytes) -> bytes::Bytes {
        let start = self.range.start - self.range.start % self.blob.chunk_size;
        let from = ((self.range.start - start) as usize).min(chunk.len());
        let to = ((self.range.end - start) as usize).min(chunk.len());
        self.range.start += (to - from) as u64;
        chunk.slice(from..to)
    }

    /// Hands every piece of the range, read through `catalog`, to `use_piece`.
    pub(crate) fn for_each(
        &mut self,
        catalog: &Catalog,
        mut use_piece: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        while let Some(seq) = self.next_seq() {
            let piece = self.take(catalog.read_chunk(&self.blob, seq)?.into());
            use_piece(&piece)?;
        }
        Ok(())
    }
}

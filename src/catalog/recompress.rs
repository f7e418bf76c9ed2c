//! Brotli at its best quality, after publish.
//!
//! Publish compresses with brotli at a fast quality (5 by default), so a
//! release is committed in seconds. Quality 11 makes smaller streams of
//! real JavaScript at many times the CPU; bench/PUBLISH.md, "Brotli after
//! publish", measures both. This pass brings the brotli stream of each
//! gzip-stored blob up to a quality afterwards, as a new representation of
//! the same immutable content: `ccc recompress` runs it on every core, and
//! `ccc serve` on one idle-priority thread whenever the catalog changes
//! (`serve::recompress`).
//!
//! - **Which blobs.** `brotli_made` holds a row for every gzip-stored blob
//!   (the compressible ones; a file stored in chunks is never gzip): the
//!   quality its brotli stream was last tried at, whether or not a stream
//!   was kept, or NULL for a blob stored before the table. A blob is
//!   pending when that quality is unknown or from 1 to below the target.
//!   0 means published with `--brotli-quality 0`, which asked for no
//!   brotli, and is left alone. Newest first: the release just published
//!   is the one about to be asked for.
//! - **Checked before use.** Each blob is decoded and checked against its
//!   sha256 before it is compressed, and the new stream is decoded and
//!   checked again, so a damaged body or an encoder fault is reported and
//!   never stored.
//! - **What is kept.** The new stream replaces the old one only when it is
//!   smaller, and is stored at all only when it is at least
//!   `MIN_BROTLI_SAVING` smaller than gzip, as at publish. Either way
//!   the quality is recorded, so each blob is tried once per quality.
//! - **Short writes.** Compressing holds no lock. Each batch is written in
//!   one short transaction that skips blobs deleted (or whose id was
//!   reused) meanwhile, raises the generation and names each changed blob
//!   in `recoded`, so a running server and its replicas drop what they
//!   cached of it and serve the new stream.
//! - **A new representation.** A replaced stream has new bytes under the
//!   same URL: the ETag of a brotli response carries the stream's digest
//!   (`serve::prepared`), so a client never gets a range of the new bytes
//!   for a copy of the old, nor a 304 for bytes the server no longer has.

use super::compression::{BrotliQuality, MIN_BROTLI_SAVING, RECORD_QUALITY};
use super::deltas::{self, Stored};
use super::digest::xxh3_digest;
use super::pieces::{self, Coding};
use super::{Catalog, Encoding, SqliteResult};
use crate::error::{Error, Result};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::sync::mpsc;

/// The rows of blobs below quality `?1` (module doc: unknown, or from 1
/// to below it).
macro_rules! below {
    () => {
        "FROM brotli_made WHERE quality IS NULL OR (quality > 0 AND quality < ?1)"
    };
}

/// The blobs below a quality, newest first (`?2`: how many).
const PENDING: &str = concat!(
    "SELECT blob_id ",
    below!(),
    " ORDER BY blob_id DESC LIMIT ?2"
);

/// How a pass runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// The quality streams are brought up to.
    pub quality: BrotliQuality,
    /// Compressing threads, at least 1.
    pub jobs: usize,
    /// Blobs read, compressed and written together: one transaction each.
    pub batch: usize,
}

impl Options {
    /// The best quality, on `jobs` threads.
    pub(crate) fn best(jobs: usize) -> Options {
        Options {
            quality: BrotliQuality::BEST,
            jobs: jobs.max(1),
            batch: 32,
        }
    }
}

/// What a pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Recompressed {
    /// Blobs tried.
    pub blobs: u64,
    /// Of them, the ones that got a new brotli stream.
    pub streams: u64,
    /// Their files' size.
    pub raw_bytes: u64,
    /// What a brotli client was sent for the blobs tried before (their
    /// brotli stream, or gzip where none was kept).
    pub bytes_before: u64,
    /// And after.
    pub bytes_after: u64,
}

impl Recompressed {
    fn add(&mut self, other: Recompressed) {
        self.blobs += other.blobs;
        self.streams += other.streams;
        self.raw_bytes += other.raw_bytes;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
    }
}

/// How many blobs are below `quality`.
pub(crate) fn pending_count(catalog: &Catalog, quality: BrotliQuality) -> Result<u64> {
    catalog
        .conn()
        .query_row(
            concat!("SELECT count(*) ", below!()),
            [quality.get()],
            |r| r.get::<_, i64>(0),
        )
        .at(catalog)
        .map(|n| n as u64)
}

/// Brings every pending blob up to `options.quality`, a batch at a time,
/// while `go_on` says so (asked between batches); `progress` gets the
/// blobs done and the total at the start. Errors name the blob: a body
/// that does not decode to its digest stops the pass before anything of
/// its batch is written.
pub(crate) fn run(
    catalog: &Catalog,
    options: Options,
    go_on: &dyn Fn() -> bool,
    progress: &dyn Fn(u64, u64),
) -> Result<Recompressed> {
    let total = pending_count(catalog, options.quality)?;
    let mut done = Recompressed::default();
    progress(0, total);
    while go_on() {
        crate::interrupt::check()?;
        let ids = pending(catalog, options.quality, options.batch)?;
        if ids.is_empty() {
            break;
        }
        let batch = read_batch(catalog, &ids)?;
        let made = compress_batch(catalog, batch, options)?;
        done.add(write_batch(catalog, options.quality, &made)?);
        progress(done.blobs, total);
    }
    Ok(done)
}

/// Up to `limit` pending blobs, newest first.
fn pending(catalog: &Catalog, quality: BrotliQuality, limit: usize) -> Result<Vec<i64>> {
    let mut stmt = catalog.conn().prepare_cached(PENDING).at(catalog)?;
    let ids = stmt
        .query_map(params![quality.get(), limit as i64], |r| r.get(0))
        .at(catalog)?
        .collect::<rusqlite::Result<Vec<i64>>>()
        .at(catalog)?;
    Ok(ids)
}

/// A blob to compress: as stored (None: gone, or not gzip, so its row is
/// dropped), with the length of the brotli stream it has (None: gzip is
/// what a brotli client gets).
struct Pending {
    id: i64,
    stored: Option<Stored>,
    brotli_len: Option<u64>,
}

/// What compressing one blob gave: the new stream when it is kept.
struct Made {
    id: i64,
    /// None: the blob is gone or not gzip.
    blob: Option<Blob>,
    stream: Option<Vec<u8>>,
}

/// A blob's identity and sizes, as it was read.
struct Blob {
    sha256: [u8; 32],
    raw_size: u64,
    gzip_len: u64,
    brotli_len: Option<u64>,
}

/// The blobs `ids` as stored, read in one transaction.
fn read_batch(catalog: &Catalog, ids: &[i64]) -> Result<Vec<Pending>> {
    let tx = catalog.conn().unchecked_transaction().at(catalog)?;
    let mut brotli_len = tx
        .prepare_cached("SELECT length(body) FROM brotli WHERE blob_id = ?1")
        .at(catalog)?;
    let mut batch = Vec::with_capacity(ids.len());
    for &id in ids {
        let stored = catalog
            .blob_stored(id, u64::MAX)?
            .filter(|s| s.encoding == Encoding::Gzip);
        let brotli_len: Option<i64> = brotli_len
            .query_row([id], |r| r.get(0))
            .optional()
            .at(catalog)?;
        batch.push(Pending {
            id,
            stored,
            brotli_len: brotli_len.map(|n| n as u64),
        });
    }
    Ok(batch)
}

/// Compresses a batch on `options.jobs` threads.
fn compress_batch(catalog: &Catalog, batch: Vec<Pending>, options: Options) -> Result<Vec<Made>> {
    let jobs = options.jobs.min(batch.len()).max(1);
    let (to_workers, from_main) = mpsc::sync_channel::<Pending>(batch.len());
    for pending in batch {
        // The channel holds the whole batch: this cannot block or fail.
        let _ = to_workers.send(pending);
    }
    drop(to_workers);
    let from_main = std::sync::Mutex::new(from_main);
    let quality = options.quality;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut made = Vec::new();
                    loop {
                        let next = match from_main.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => break,
                        };
                        let Ok(pending) = next else { break };
                        made.push(compress_one(pending, quality)?);
                    }
                    Ok::<_, String>(made)
                })
            })
            .collect();
        let mut all = Vec::new();
        for worker in workers {
            let made = worker
                .join()
                .map_err(|_| Error::Internal("a recompressing thread failed".into()))?
                .map_err(|what| Error::Corrupt {
                    path: catalog.path().to_path_buf(),
                    what,
                })?;
            all.extend(made);
        }
        Ok(all)
    })
}

/// One blob: decoded and checked, compressed at `quality`, the stream
/// decoded and checked again, kept when it pays (module doc). An error
/// says what is wrong with the blob.
fn compress_one(pending: Pending, quality: BrotliQuality) -> std::result::Result<Made, String> {
    let Pending {
        id,
        stored,
        brotli_len,
    } = pending;
    let Some(stored) = stored else {
        return Ok(Made {
            id,
            blob: None,
            stream: None,
        });
    };
    let raw = stored.decode()?;
    if <[u8; 32]>::from(Sha256::digest(&raw)) != stored.sha256 {
        return Err(format!(
            "blob {}: its gzip body does not decode to its sha256",
            hex::encode(stored.sha256)
        ));
    }
    let blob = Blob {
        sha256: stored.sha256,
        raw_size: stored.raw_size,
        gzip_len: stored.body.len() as u64,
        brotli_len,
    };
    let gzip_limit = blob.gzip_len as f64 * (1.0 - MIN_BROTLI_SAVING);
    let stream = brotli(&raw, quality).filter(|stream| {
        let len = stream.len() as u64;
        len as f64 <= gzip_limit && brotli_len.is_none_or(|old| len < old)
    });
    Ok(Made {
        id,
        blob: Some(blob),
        stream,
    })
}

/// `raw` as a brotli stream at `quality`, when the encoder makes one that
/// decodes back to `raw` (an encoder fault leaves the blob as it was).
fn brotli(raw: &[u8], quality: BrotliQuality) -> Option<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: quality.get() as i32,
        // The smallest window that holds the file, up to publish's 4 MiB:
        // the same stream, with less memory for a small file.
        lgwin: window_bits(raw.len()),
        size_hint: raw.len(),
        ..Default::default()
    };
    let mut stream = Vec::with_capacity(raw.len() / 3);
    let encoded = std::panic::catch_unwind(move || {
        brotli::BrotliCompress(&mut &raw[..], &mut stream, &params).map(|_| stream)
    });
    let stream = encoded.ok()?.ok()?;
    let mut back = Vec::with_capacity(raw.len());
    brotli::Decompressor::new(&stream[..], 64 << 10)
        .read_to_end(&mut back)
        .ok()?;
    (back == raw).then_some(stream)
}

/// The brotli window for a file of `len` bytes: the smallest that holds
/// it, from brotli's least (10 bits) to publish's 22.
fn window_bits(len: usize) -> i32 {
    let bits = usize::BITS - len.saturating_sub(1).leading_zeros();
    bits.clamp(10, 22) as i32
}

/// Writes a batch in one transaction (module doc): what it changed.
fn write_batch(catalog: &Catalog, quality: BrotliQuality, made: &[Made]) -> Result<Recompressed> {
    let tx = catalog.write_transaction()?;
    let mut done = Recompressed::default();
    {
        let mut still_there = tx
            .prepare_cached("SELECT 1 FROM blobs WHERE id = ?1 AND sha256 = ?2")
            .at(catalog)?;
        let mut record = tx.prepare_cached(RECORD_QUALITY).at(catalog)?;
        let mut forget = tx
            .prepare_cached("DELETE FROM brotli_made WHERE blob_id = ?1")
            .at(catalog)?;
        let mut store = tx
            .prepare_cached(
                "INSERT INTO brotli (blob_id, body, stored_sha256, stored_xxh3)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (blob_id) DO UPDATE SET body = excluded.body,
                     stored_sha256 = excluded.stored_sha256, stored_xxh3 = excluded.stored_xxh3",
            )
            .at(catalog)?;
        let mut drop_pieces = tx
            .prepare_cached("DELETE FROM pieces WHERE blob_id = ?1 AND coding = ?2")
            .at(catalog)?;
        let mut add_pieces = tx.prepare_cached(pieces::INSERT).at(catalog)?;
        for m in made {
            let blob = match &m.blob {
                Some(blob) => blob,
                None => {
                    forget.execute([m.id]).at(catalog)?;
                    continue;
                }
            };
            // Gone since it was read, its id perhaps another blob's now.
            if !still_there
                .exists(params![m.id, &blob.sha256[..]])
                .at(catalog)?
            {
                continue;
            }
            record.execute(params![m.id, quality.get()]).at(catalog)?;
            let before = blob.brotli_len.unwrap_or(blob.gzip_len);
            done.blobs += 1;
            done.raw_bytes += blob.raw_size;
            done.bytes_before += before;
            let Some(stream) = &m.stream else {
                done.bytes_after += before;
                continue;
            };
            store
                .execute(params![
                    m.id,
                    stream,
                    &<[u8; 32]>::from(Sha256::digest(stream))[..],
                    &xxh3_digest(stream)[..]
                ])
                .at(catalog)?;
            drop_pieces
                .execute(params![m.id, Coding::Brotli.code()])
                .at(catalog)?;
            if let Some(digests) = pieces::digests_of(stream) {
                add_pieces
                    .execute(params![m.id, Coding::Brotli.code(), digests])
                    .at(catalog)?;
            }
            deltas::mark_recoded(&tx, m.id).at(catalog)?;
            done.streams += 1;
            done.bytes_after += stream.len() as u64;
        }
    }
    if done.streams > 0 {
        super::changed(&tx).at(catalog)?;
    }
    crate::interrupt::commit(|| tx.commit()).at(catalog)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_smallest_that_holds_the_file() {
        assert_eq!(window_bits(0), 10);
        assert_eq!(window_bits(1024), 10);
        assert_eq!(window_bits(1025), 11);
        assert_eq!(window_bits(129_000), 17);
        assert_eq!(window_bits(100 << 20), 22);
    }
}

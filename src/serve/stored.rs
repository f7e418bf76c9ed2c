//! An asset as the store loads it from the catalog: each coding of its
//! body as stored (in memory, or left in the catalog to be read a checked
//! piece at a time), how the body is coded, the original file's digest,
//! the content type, the raw size and when it was published.
//!
//! The store makes one from the catalog's row once what it loaded passed
//! its check, and [`Prepared`](crate::serve::prepared::Prepared) is built
//! from it, so that the response side never names the catalog. Only an
//! asset whose codings are all in memory is ever cached.
//!
//! An asset also knows the deltas the catalog holds of its content
//! ([`StoredAsset::deltas`]: the dictionaries' hashes, no bodies), so a
//! request naming a dictionary it has none for costs nothing more. A
//! request naming one it has gets the asset's entry for that dictionary
//! ([`StoredAsset::with_delta`]): the same codings, shared, and the
//! deltas' bodies, always in memory (each at most 80% of the brotli
//! stream).

use crate::catalog::chunks::ChunkedBlob;
use crate::catalog::lookup::AssetRecord;
use crate::catalog::pieces::Coding;
use crate::encoding::Encoding;
use crate::error::Error;
use crate::serve::cache::allocation;
use bytes::Bytes;
use http::HeaderValue;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Everything the server needs to answer for one asset: the store's own
/// type, so the response side never names the catalog.
#[derive(Debug)]
pub struct StoredAsset {
    pub version_id: i64,
    /// The blob's id, where its codings left in the catalog are read.
    pub blob_id: i64,
    /// The body as stored (empty in memory for a big file in chunks).
    pub body: Stream,
    /// How `body` is coded: gzip, or identity (the raw bytes).
    pub encoding: Encoding,
    /// The original file's digest.
    pub sha256: [u8; 32],
    /// The brotli stream of a gzip body, when the catalog holds one.
    pub brotli: Option<Stream>,
    /// `Content-Type`, checked once ([`line_value`]) and shared by every
    /// copy of the asset; None when the catalog's may not be sent.
    pub content_type: Option<HeaderValue>,
    pub raw_size: u64,
    pub published_at: i64,
    /// A big file's chunks, sent as they are read (`body` is empty).
    pub chunks: Option<ChunkedBlob>,
    /// The dictionaries the catalog holds deltas of this content against:
    /// no bodies, what negotiation needs to know whether a request's
    /// dictionary is one of them.
    pub deltas: Dictionaries,
    /// The bodies of the deltas against the dictionary a request named,
    /// in the asset's entry for that dictionary; None in its own entry.
    pub delta: Option<Box<DeltaBodies>>,
    /// `Use-As-Dictionary` of its responses, when it is offered as a
    /// dictionary (`http::dictionary`), checked as the content type is.
    pub use_as_dictionary: Option<HeaderValue>,
}

/// The sha256 of each dictionary the catalog holds deltas of an asset's
/// content against, sorted, shared by every copy of the asset. Most files
/// have none, which holds no allocation and no reference count.
#[derive(Debug, Clone, Default)]
pub struct Dictionaries(Option<Arc<[[u8; 32]]>>);

impl Dictionaries {
    /// The list of `sorted` hashes, as `Catalog::delta_dictionaries`
    /// gives them.
    pub(crate) fn new(sorted: Vec<[u8; 32]>) -> Dictionaries {
        debug_assert!(sorted.is_sorted());
        Dictionaries((!sorted.is_empty()).then(|| sorted.into()))
    }

    pub(crate) fn contains(&self, sha256: &[u8; 32]) -> bool {
        self.0
            .as_ref()
            .is_some_and(|hashes| hashes.binary_search(sha256).is_ok())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The heap the list holds: its hashes and the `Arc`'s counts.
    pub(crate) fn heap_bytes(&self) -> u64 {
        self.0
            .as_ref()
            .map_or(0, |hashes| allocation(size_of_val(&hashes[..]) + 16))
    }
}

/// `text` as the value of a header line, when it may be sent as is
/// (visible ASCII and tabs; anything else, a bug in ccc or the catalog,
/// is left out rather than sent): its bytes taken, not copied, and shared
/// by every head that sends it, none of which checks it again.
pub fn line_value(text: String) -> Option<HeaderValue> {
    if !text.bytes().all(|b| matches!(b, b' '..=b'~' | b'\t')) {
        return None;
    }
    // At its exact size (a no-op when it is): `bytes` would keep the
    // whole capacity, which the weight does not count.
    HeaderValue::from_maybe_shared(Bytes::from(text.into_boxed_str().into_boxed_bytes())).ok()
}

/// The heap a value made by [`line_value`] holds: its bytes, and the
/// record `bytes` adds once it is shared (buffer, capacity and count).
pub(crate) fn line_value_bytes(value: &HeaderValue) -> u64 {
    allocation(value.len()) + allocation(3 * size_of::<usize>())
}

/// The deltas of an asset against one dictionary.
#[derive(Debug, Clone)]
pub struct DeltaBodies {
    pub dictionary: [u8; 32],
    pub(crate) dcb: Option<DeltaBody>,
    pub(crate) dcz: Option<DeltaBody>,
}

/// One delta's body, in memory, and its XXH3-128 (which its ETag names).
#[derive(Debug, Clone)]
pub(crate) struct DeltaBody {
    pub stream: Stream,
    pub xxh3: [u8; 16],
}

impl DeltaBodies {
    /// The body of `coding`, dcb or dcz, if held.
    pub(crate) fn get(&self, coding: Encoding) -> Option<&DeltaBody> {
        match coding {
            Encoding::Dcb => self.dcb.as_ref(),
            Encoding::Dcz => self.dcz.as_ref(),
            _ => None,
        }
    }
}

/// One coding's stored bytes: in memory (checked when loaded), or in the
/// catalog with the digest of each of its pieces, each piece checked as
/// it is read.
#[derive(Debug, Clone)]
pub enum Stream {
    Memory(Arc<[u8]>),
    Catalog {
        len: u64,
        digests: Arc<[[u8; 16]]>,
        /// The pieces this server has read and checked already.
        verified: Arc<Verified>,
    },
}

/// Which pieces of a stream left in the catalog this server has read and
/// found to match their digests (a verified-once mark, one bit a piece).
/// A piece checked once is read again as far as a range needs, without
/// its digest, as a cached body is sent again without its digest: the
/// check guards against damage at rest, and the mark lives only as long
/// as the asset in memory.
#[derive(Debug)]
pub struct Verified(Box<[AtomicU64]>);

impl Verified {
    pub(crate) fn new(pieces: usize) -> Verified {
        Verified(
            (0..pieces.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        )
    }

    pub(crate) fn is(&self, piece: usize) -> bool {
        self.0
            .get(piece / 64)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (piece % 64)) != 0)
    }

    pub(crate) fn mark(&self, piece: usize) {
        if let Some(w) = self.0.get(piece / 64) {
            w.fetch_or(1 << (piece % 64), Ordering::Relaxed);
        }
    }

    /// The heap it holds, for the cache's budget.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.len() * 8
    }
}

impl Stream {
    /// Its length in bytes.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Stream::Memory(bytes) => bytes.len() as u64,
            Stream::Catalog { len, .. } => *len,
        }
    }

    /// The bytes, when they are in memory.
    pub(crate) fn bytes(&self) -> Option<&Arc<[u8]>> {
        match self {
            Stream::Memory(bytes) => Some(bytes),
            Stream::Catalog { .. } => None,
        }
    }
}

impl StoredAsset {
    /// Makes the asset of a checked row: each coding from its loaded body,
    /// or, when the lookup left it in the catalog, from the piece digests
    /// `digests` gives for it (an error when there are none: a row whose
    /// long body was neither loaded nor given its digests is a bug).
    pub(crate) fn from_row(
        row: AssetRecord,
        mut digests: impl FnMut(Coding) -> Option<Vec<[u8; 16]>>,
    ) -> Result<StoredAsset, Error> {
        let mut stream = |loaded: Option<Arc<[u8]>>, len: u64, coding: Coding| match loaded {
            Some(bytes) => Ok(Stream::Memory(bytes)),
            None => match digests(coding) {
                Some(d) => Ok(Stream::Catalog {
                    len,
                    verified: Arc::new(Verified::new(d.len())),
                    digests: d.into(),
                }),
                None => Err(Error::Internal(format!(
                    "the {} of blob {} was neither loaded nor given its piece digests",
                    coding.name(),
                    row.blob_id
                ))),
            },
        };
        let body = stream(row.body.clone(), row.stored_len, Coding::Stored)?;
        let brotli = match &row.brotli {
            Some(br) => Some(stream(br.body.clone(), br.stored_len, Coding::Brotli)?),
            None => None,
        };
        Ok(StoredAsset {
            version_id: row.version_id,
            blob_id: row.blob_id,
            body,
            encoding: row.encoding,
            sha256: row.sha256,
            brotli,
            content_type: Some(row.content_type.header_value().clone()),
            raw_size: row.raw_size,
            published_at: row.published_at,
            chunks: row.chunks,
            deltas: Dictionaries::default(),
            delta: None,
            use_as_dictionary: None,
        })
    }

    /// The asset with `bodies`, its deltas against one dictionary: its
    /// codings shared with this one (each an `Arc`), for the entry a
    /// request naming that dictionary is answered from.
    pub(crate) fn with_delta(&self, bodies: DeltaBodies) -> StoredAsset {
        StoredAsset {
            version_id: self.version_id,
            blob_id: self.blob_id,
            body: self.body.clone(),
            encoding: self.encoding,
            sha256: self.sha256,
            brotli: self.brotli.clone(),
            content_type: self.content_type.clone(),
            raw_size: self.raw_size,
            published_at: self.published_at,
            chunks: self.chunks,
            deltas: self.deltas.clone(),
            delta: Some(Box::new(bodies)),
            use_as_dictionary: self.use_as_dictionary.clone(),
        }
    }

    /// Whether the catalog holds a delta of this content against the
    /// dictionary `sha256`.
    pub(crate) fn has_delta_against(&self, sha256: &[u8; 32]) -> bool {
        self.deltas.contains(sha256)
    }

    /// The stored bytes of one coding of the asset, if held, and which of
    /// the blob's streams they are.
    pub(crate) fn body(&self, encoding: Encoding) -> Option<(&Stream, Coding)> {
        match encoding {
            Encoding::Brotli => self.brotli.as_ref().map(|s| (s, Coding::Brotli)),
            // Always in memory: the coding names no stream of the catalog.
            Encoding::Dcb | Encoding::Dcz => self
                .delta
                .as_ref()
                .and_then(|d| d.get(encoding))
                .map(|d| (&d.stream, Coding::Stored)),
            stored if stored == self.encoding => Some((&self.body, Coding::Stored)),
            _ => None,
        }
    }

    /// The bytes of its stored codings together.
    pub(crate) fn stored_bytes(&self) -> u64 {
        let deltas = self.delta.as_ref().map_or(0, |d| {
            [&d.dcb, &d.dcz]
                .into_iter()
                .flatten()
                .map(|b| b.stream.len())
                .sum()
        });
        self.body.len() + self.brotli.as_ref().map_or(0, Stream::len) + deltas
    }

    /// Whether every coding is in memory.
    pub(crate) fn in_memory(&self) -> bool {
        self.body.bytes().is_some() && self.brotli.as_ref().is_none_or(|b| b.bytes().is_some())
    }
}

#[cfg(test)]
impl StoredAsset {
    /// The stored body's bytes, in memory (a test's view).
    pub fn body_bytes(&self) -> &Arc<[u8]> {
        self.body.bytes().expect("the body is in memory")
    }
}

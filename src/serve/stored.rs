//! An asset as the store loads it from the catalog: its body as stored,
//! how that is coded, the original file's digest, the brotli stream beside
//! a gzip body, the content type, the raw size and when it was published.
//!
//! The store makes one from the catalog's row once the body passed its
//! check, and [`Prepared`](crate::serve::prepared::Prepared) is built from
//! it, so that the response side needs neither the catalog nor the store.

use crate::catalog::chunks::ChunkedBlob;
use crate::catalog::lookup::AssetRecord;
use crate::encoding::Encoding;
use crate::error::Error;
use std::sync::Arc;

/// Everything the server needs to answer for one asset, body included:
/// the store's own type, made from the catalog's row once the body passed
/// its check, so the response side never names the catalog.
#[derive(Debug)]
pub struct StoredAsset {
    pub version_id: i64,
    pub body: Arc<[u8]>,
    /// How `body` is coded: gzip, or identity (the raw bytes).
    pub encoding: Encoding,
    /// The original file's digest.
    pub sha256: [u8; 32],
    /// The brotli stream of a gzip body, when the catalog holds one.
    pub brotli: Option<Arc<[u8]>>,
    pub content_type: String,
    pub raw_size: u64,
    pub published_at: i64,
    /// A big file's chunks, sent as they are read (`body` is empty).
    pub chunks: Option<ChunkedBlob>,
}

/// A row whose bodies are all loaded (`Catalog::load_bodies`); one the
/// lookup left in the catalog is a bug, never an empty body.
impl TryFrom<AssetRecord> for StoredAsset {
    type Error = Error;

    fn try_from(row: AssetRecord) -> Result<StoredAsset, Error> {
        let unloaded = |what: &str| {
            Error::Internal(format!(
                "the {what} of blob {} was not loaded before it was stored",
                row.blob_id
            ))
        };
        let body = row.body.clone().ok_or_else(|| unloaded("body"))?;
        let brotli = match &row.brotli {
            Some(br) => Some(br.body.clone().ok_or_else(|| unloaded("brotli stream"))?),
            None => None,
        };
        Ok(StoredAsset {
            version_id: row.version_id,
            body,
            encoding: row.encoding,
            sha256: row.sha256,
            brotli,
            content_type: row.content_type,
            raw_size: row.raw_size,
            published_at: row.published_at,
            chunks: row.chunks,
        })
    }
}

impl StoredAsset {
    /// The stored bytes of one coding of the asset, if held.
    pub fn body(&self, encoding: Encoding) -> Option<&Arc<[u8]>> {
        match encoding {
            Encoding::Brotli => self.brotli.as_ref(),
            stored if stored == self.encoding => Some(&self.body),
            _ => None,
        }
    }
}

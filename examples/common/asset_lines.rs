//! The header lines `ccc serve` sends with a gzip asset, built by ccc's own
//! code (`serve::prepared`), for the ceiling servers: they put the same
//! bytes on the wire as ccc does for a cache hit, whatever ccc's lines are.

use ccc::testing::serve::{Dictionaries, Encoding, Prepared, StoredAsset, Stream, line_value};
use std::sync::Arc;

/// The head of a 200 for a gzip asset of `size` stored bytes,
/// `Content-Length` included.
pub fn gzip_asset_lines(size: usize) -> http::HeaderMap {
    let published = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let asset = Prepared::new(StoredAsset {
        version_id: 1,
        blob_id: 1,
        body: Stream::Memory(Arc::from(vec![0; size])),
        encoding: Encoding::Gzip,
        sha256: [0; 32],
        brotli: None,
        content_type: line_value("text/javascript; charset=utf-8".into()),
        raw_size: 4 * size as u64,
        published_at: published,
        chunks: None,
        deltas: Dictionaries::default(),
        delta: None,
        use_as_dictionary: None,
    });
    asset.head(Encoding::Gzip, true)
}

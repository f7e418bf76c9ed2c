//! The digests the catalog records for stored bytes, and the checks of
//! bytes against them: a leaf that publish, chunks, pieces, lookup and
//! verify all hash and check with, so none of them reaches into another
//! for it.
//!
//! A stored stream has its XXH3-128 (schema 6 on, the one the server
//! checks, at memory speed) and its sha256 (schema 2 on); a blob older than
//! both is checked by decoding it to its file's recorded size and sha256.

use crate::encoding::Encoding;
use crate::error::Result;
use sha2::{Digest, Sha256};
use std::io::Read;

/// What a body as stored was recorded to hash to: its sha256 (`None` for a
/// blob written before schema 2, checked by decoding) and its XXH3-128
/// (`None` before schema 6), the cheap one the server checks.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoredDigests {
    pub sha256: Option<[u8; 32]>,
    pub xxh3: Option<[u8; 16]>,
}

/// A digest column of `N` bytes: `None` for NULL or (never written by ccc)
/// any other length.
pub(super) fn column<const N: usize>(
    value: rusqlite::types::ValueRef<'_>,
) -> rusqlite::Result<Option<[u8; N]>> {
    Ok(match value {
        rusqlite::types::ValueRef::Null => None,
        other => other.as_blob()?.try_into().ok(),
    })
}

/// Checks a stored stream whole against the strongest digest recorded for
/// it: its XXH3-128, else its sha256, else (a blob's body older than both)
/// that it decodes to `content`, the file's sha256 and size as the body's
/// encoding. `Ok(None)` when it matches, `Ok(Some(problem))` when not or
/// when nothing was recorded to check it against; `poll` runs every 64 KiB
/// of hashing or decoding, and its error stops the check.
pub(super) fn check_whole(
    stream: &[u8],
    stored: StoredDigests,
    content: Option<(&[u8], i64, Encoding)>,
    poll: impl Fn() -> Result<()>,
) -> Result<Option<String>> {
    match (stored, content) {
        (
            StoredDigests {
                xxh3: Some(xxh3), ..
            },
            _,
        ) => Ok(check_xxh3(&xxh3, stream)),
        (
            StoredDigests {
                sha256: Some(sha), ..
            },
            _,
        ) => check_stored(&sha, stream, poll),
        (_, Some((sha, raw_size, encoding))) => check_blob(sha, raw_size, encoding, stream, poll),
        (_, None) => Ok(Some("no digest is recorded to check it against".into())),
    }
}

/// The XXH3-128 of `body` as the catalog records it (big-endian).
pub fn xxh3_digest(body: &[u8]) -> [u8; 16] {
    twox_hash::XxHash3_128::oneshot(body).to_be_bytes()
}

/// Compares stored bytes with their recorded XXH3-128: `None` when they
/// match, `Some(problem)` when not. One pass at memory speed, so it needs
/// no polling: a blob of SQLite's largest size takes a tenth of a second.
pub(super) fn check_xxh3(recorded: &[u8], body: &[u8]) -> Option<String> {
    let digest = xxh3_digest(body);
    (digest[..] != *recorded).then(|| {
        format!(
            "stored bytes hash to xxh3 {}, recorded {}",
            hex::encode(digest),
            hex::encode(recorded)
        )
    })
}

/// The size of the pieces a check hashes or decodes between two `poll`s.
const CHUNK: usize = 64 * 1024;

/// Compares a blob's stored bytes with their recorded digest: `Ok(None)`
/// when they match, `Ok(Some(problem))` when not. `poll` runs every 64 KiB;
/// its error stops the check.
pub(super) fn check_stored(
    stored_sha: &[u8],
    body: &[u8],
    poll: impl Fn() -> Result<()>,
) -> Result<Option<String>> {
    let mut hasher = Sha256::new();
    for chunk in body.chunks(CHUNK) {
        poll()?;
        hasher.update(chunk);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Ok((digest[..] != *stored_sha).then(|| {
        format!(
            "stored bytes hash to {}, recorded {}",
            hex::encode(digest),
            hex::encode(stored_sha)
        )
    }))
}

/// Decodes one blob and compares it with its record: `Ok(None)` when it
/// matches, `Ok(Some(problem))` when not. `poll` runs every 64 KiB of
/// content; its error stops the check.
pub(super) fn check_blob(
    sha: &[u8],
    raw_size: i64,
    encoding: Encoding,
    body: &[u8],
    poll: impl Fn() -> Result<()>,
) -> Result<Option<String>> {
    let mut hasher = Sha256::new();
    let mut decoder = encoding.decoder(body);
    // A small body may decode to a lot: the check is per chunk out.
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        poll()?;
        match decoder.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                size += n as u64;
            }
            Err(e) => return Ok(Some(format!("{encoding} stream does not decode: {e}"))),
        }
    }
    if size != raw_size as u64 {
        return Ok(Some(format!(
            "decodes to {}, recorded {raw_size}",
            crate::units::count(size, "byte")
        )));
    }
    let digest: [u8; 32] = hasher.finalize().into();
    if digest[..] != *sha {
        return Ok(Some(format!("content hashes to {}", hex::encode(digest))));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digests that catalogs already hold were written by another
    /// XXH3 implementation: this one must agree with it on every length
    /// class (short, mid, the stripes and blocks of long inputs, and the
    /// AVX2 and SSE2 loops alike), or every older body would fail its
    /// check.
    #[test]
    fn the_check_agrees_with_the_digests_catalogs_hold() {
        let bytes: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let lengths = (0..=300).chain([1_023, 1_024, 3_000, 4_096, 65_535, 65_536, 70_000]);
        for len in lengths {
            let body = &bytes[..len];
            let recorded = xxhash_rust::xxh3::xxh3_128(body).to_be_bytes();
            assert_eq!(xxh3_digest(body), recorded, "{len} bytes");
            assert_eq!(check_xxh3(&recorded, body), None, "{len} bytes");
        }
        // XXH3-128 of nothing, as its reference implementation gives it.
        assert_eq!(
            u128::from_be_bytes(xxh3_digest(b"")),
            0x99aa_06d3_0147_98d8_6001_c324_468d_497f
        );
    }
}

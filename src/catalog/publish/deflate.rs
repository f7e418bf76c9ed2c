//! The encoders a publish compresses with: a reusable deflate state for
//! gzip, and a brotli stream for what gzip was kept for.

use super::*;

/// A reusable compressor: the deflate state is allocated once and reset
/// between files; a brotli stream is made for what gzip was kept for.
pub(super) struct Deflater {
    pub(super) encoder: DeflateEncoder<Vec<u8>>,
    pub(super) header: [u8; 10],
    /// 0: no brotli.
    pub(super) brotli_quality: u32,
}

impl Deflater {
    pub(super) fn new(level: Compression, brotli_quality: u32) -> Deflater {
        // The header GzEncoder writes: no name, no mtime, XFL from the
        // level, OS unknown.
        let xfl = if level.level() >= 9 {
            2
        } else if level.level() <= 1 {
            4
        } else {
            0
        };
        Deflater {
            encoder: DeflateEncoder::new(Vec::new(), level),
            header: [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255],
            brotli_quality,
        }
    }

    /// Gzips `bytes`, whose digest is `sha256`, keeping the raw bytes when
    /// gzip saves too little.
    pub(super) fn compress(&mut self, bytes: &[u8], sha256: [u8; 32]) -> NewBlob {
        let gz = self.gzip(bytes).unwrap_or_default();
        let worth_it =
            !gz.is_empty() && (gz.len() as f64) <= bytes.len() as f64 * (1.0 - MIN_GZIP_SAVING);
        if worth_it {
            // A fraction of what compressing at level 9 took.
            let stored_sha256 = Sha256::digest(&gz).into();
            let brotli = self.brotli(bytes, gz.len());
            NewBlob {
                encoding: Encoding::Gzip,
                stored_xxh3: xxh3_digest(&gz),
                pieces: pieces::digests_of(&gz),
                body: gz,
                stored_sha256,
                brotli,
            }
        } else {
            let mut body = gz;
            body.clear();
            body.extend_from_slice(bytes);
            NewBlob {
                encoding: Encoding::Identity,
                stored_xxh3: xxh3_digest(&body),
                pieces: pieces::digests_of(&body),
                body,
                // Stored as it is: the same bytes, the same digest.
                stored_sha256: sha256,
                brotli: None,
            }
        }
    }

    /// A brotli stream of `bytes` when one at least [`MIN_BROTLI_SAVING`]
    /// smaller than the `gzip_len` bytes of gzip.
    pub(super) fn brotli(&self, bytes: &[u8], gzip_len: usize) -> Option<BrotliStream> {
        if self.brotli_quality == 0 {
            return None;
        }
        let params = brotli::enc::BrotliEncoderParams {
            quality: self.brotli_quality as i32,
            // The window the brotli tool and nginx use by default (4 MiB);
            // the stream says so, and every decoder takes it.
            lgwin: 22,
            size_hint: bytes.len(),
            ..Default::default()
        };
        let mut body = Vec::with_capacity(gzip_len);
        // Reading a slice and writing a Vec cannot fail.
        brotli::BrotliCompress(&mut &bytes[..], &mut body, &params).ok()?;
        let worth_it = (body.len() as f64) <= gzip_len as f64 * (1.0 - MIN_BROTLI_SAVING);
        worth_it.then(|| BrotliStream {
            stored_sha256: Sha256::digest(&body).into(),
            stored_xxh3: xxh3_digest(&body),
            pieces: pieces::digests_of(&body),
            body,
        })
    }

    pub(super) fn gzip(&mut self, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(bytes.len() / 3 + 64);
        out.extend_from_slice(&self.header);
        // Writing into a Vec cannot fail.
        self.encoder.reset(out)?;
        self.encoder.write_all(bytes)?;
        let mut gz = self.encoder.reset(Vec::new())?;
        let mut crc = Crc::new();
        crc.update(bytes);
        gz.extend_from_slice(&crc.sum().to_le_bytes());
        gz.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        Ok(gz)
    }
}

//! How publish compresses: the gzip level and the brotli quality, each a
//! type that holds only values publish accepts, with its range and its
//! default defined here once. The command line parses into them, and
//! publish uses them as they are, so no layer clamps or checks again.
//!
//! The rules for keeping a stream are here too, with the statement that
//! records the quality a blob's brotli stream was tried at: publish and
//! `recompress` both apply them, so a stream kept by one would be kept by
//! the other.

use std::fmt;
use std::ops::RangeInclusive;

/// Gzip is kept only when it saves at least this share of the raw size;
/// below that (fonts, images, archives) the raw bytes are cheaper to serve.
pub(crate) const MIN_GZIP_SAVING: f64 = 0.05;

/// A brotli stream is kept only when it is at least this share smaller
/// than the gzip stream: below that, the second copy costs disk and cache
/// for too little.
pub(crate) const MIN_BROTLI_SAVING: f64 = 0.05;

/// Records the quality a blob's brotli stream was tried at (`?1` the
/// blob, `?2` the quality), whether or not a stream was kept.
pub(crate) const RECORD_QUALITY: &str = "INSERT INTO brotli_made (blob_id, quality) VALUES (?1, ?2)
     ON CONFLICT (blob_id) DO UPDATE SET quality = excluded.quality";

/// A gzip (deflate) level, 1 (fastest) to 9 (smallest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GzipLevel(u32);

impl GzipLevel {
    /// The levels publish accepts.
    pub(crate) const RANGE: RangeInclusive<u32> = 1..=9;
    /// `--level`'s default: the smallest output. Publishing is done once
    /// and serving many times.
    pub const DEFAULT: GzipLevel = GzipLevel(9);
    /// The fastest level.
    #[cfg(test)]
    pub(crate) const FASTEST: GzipLevel = GzipLevel(1);

    /// The level `n`, or what the accepted range is.
    pub(crate) fn new(n: u32) -> Result<GzipLevel, String> {
        within(n, &Self::RANGE, "the gzip level").map(GzipLevel)
    }

    pub(crate) fn get(self) -> u32 {
        self.0
    }
}

/// A brotli quality, 1 (fastest) to 11 (smallest), or 0 for no brotli
/// streams at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrotliQuality(u32);

impl BrotliQuality {
    /// The qualities publish accepts, 0 meaning none.
    pub(crate) const RANGE: RangeInclusive<u32> = 0..=11;
    /// `--brotli-quality`'s default: the lowest quality at which brotli
    /// beats `gzip -9` on real JavaScript by the share that keeps a stream,
    /// so the cheapest that stores anything; higher ones save more at many
    /// times the CPU (bench/PUBLISH.md, "Brotli").
    pub(crate) const DEFAULT: BrotliQuality = BrotliQuality(5);
    /// No brotli streams.
    #[cfg(test)]
    pub(crate) const NONE: BrotliQuality = BrotliQuality(0);
    /// The smallest streams: what `recompress` brings publish's up to.
    pub(crate) const BEST: BrotliQuality = BrotliQuality(11);

    /// The quality `n`, or what the accepted range is.
    pub(crate) fn new(n: u32) -> Result<BrotliQuality, String> {
        within(n, &Self::RANGE, "the brotli quality")
            .map(BrotliQuality)
            .map_err(|e| format!("{e} (0: no brotli)"))
    }

    pub(crate) fn get(self) -> u32 {
        self.0
    }
}

impl std::str::FromStr for GzipLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<GzipLevel, String> {
        GzipLevel::new(whole_number(s))
    }
}

impl std::str::FromStr for BrotliQuality {
    type Err = String;

    fn from_str(s: &str) -> Result<BrotliQuality, String> {
        BrotliQuality::new(whole_number(s))
    }
}

/// `s` as a whole number, or one out of every range (`u32::MAX`) so that
/// the error names the range either way.
fn whole_number(s: &str) -> u32 {
    s.trim().parse().unwrap_or(u32::MAX)
}

/// `n` if `range` holds it, else an error naming `what` and the range.
fn within(n: u32, range: &RangeInclusive<u32>, what: &str) -> Result<u32, String> {
    match range.contains(&n) {
        true => Ok(n),
        false => Err(format!(
            "{what} is a whole number from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

impl fmt::Display for GzipLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for BrotliQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_accepted_values_are_made() {
        assert_eq!(GzipLevel::new(9), Ok(GzipLevel::DEFAULT));
        assert_eq!(GzipLevel::new(1), Ok(GzipLevel::FASTEST));
        for wrong in [0, 10] {
            assert_eq!(
                GzipLevel::new(wrong),
                Err("the gzip level is a whole number from 1 to 9".into())
            );
        }
        assert_eq!(" 3 ".parse::<GzipLevel>().map(GzipLevel::get), Ok(3));
        assert_eq!(
            "fast".parse::<GzipLevel>(),
            Err("the gzip level is a whole number from 1 to 9".into())
        );
        assert_eq!(BrotliQuality::new(0), Ok(BrotliQuality::NONE));
        assert_eq!(BrotliQuality::new(11).map(BrotliQuality::get), Ok(11));
        assert_eq!(
            BrotliQuality::new(12),
            Err("the brotli quality is a whole number from 0 to 11 (0: no brotli)".into())
        );
    }
}

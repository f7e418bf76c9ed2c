//! Deltas: a file of a new release coded against the same file of a
//! release a browser already holds, as RFC 9842 (Compression Dictionary
//! Transport) defines them. A delta is another representation of a blob,
//! like its gzip and brotli streams: made at publish, stored in the
//! catalog (`catalog::deltas`), served when a request names its
//! dictionary, never made on request.
//!
//! Two codings, both with the dictionary as a raw prefix (RFC 9842 4):
//!
//! - `dcb` (RFC 9842 4.1): the 4 bytes `FF 44 43 42`, the dictionary's
//!   SHA-256, then a brotli stream whose window starts with the
//!   dictionary. The window is always the largest RFC 9842 allows, 16
//!   MiB (`lgwin` 24): the `brotli` crate's encoder keeps only the last
//!   `2^lgwin - 16` bytes of a dictionary, and with a dictionary it runs
//!   much slower with a window sized to the pair;
//! - `dcz` (RFC 9842 4.2): a zstd skippable frame of 32 bytes (the
//!   8-byte frame header `5E 2A 4D 18 20 00 00 00`) holding the
//!   dictionary's SHA-256, then a zstd frame with the dictionary as a
//!   reference prefix (`with_ref_prefix`: a trained dictionary would read
//!   a binary file's bytes as its own format). The window is set
//!   explicitly ([`dcz_window_log`]), within what RFC 9842 and Chromium
//!   decode.
//!
//! Both bodies name their dictionary, so a body decodes only against the
//! bytes it was made from: [`decode`] refuses any other, and `ccc verify`
//! decodes every stored delta against its dictionary and checks the
//! result against the file's sha256.
//!
//! Which files take part is [`kind`]'s and [`DictionarySize`]'s to say;
//! which earlier file a new one is coded against, [`family`]'s.

pub(crate) mod family;

use crate::encoding::Encoding;
use std::io::{Read, Write};

/// The header of a `dcb` body: its magic number (RFC 9842 4.1), then the
/// dictionary's SHA-256.
pub(crate) const DCB_MAGIC: [u8; 4] = [0xff, 0x44, 0x43, 0x42];

/// The header of a `dcz` body: a zstd skippable frame's magic and its
/// length, 32 (RFC 9842 4.2), then the dictionary's SHA-256.
pub(crate) const DCZ_MAGIC: [u8; 8] = [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00];

/// The largest window a `dcb` stream may use: 16 MiB (RFC 9842 4.1).
pub(crate) const DCB_MAX_WINDOW_BITS: i32 = 24;

/// The window every `dcz` decoder takes, whatever the dictionary: 8 MiB
/// (RFC 9842 4.2, and Chromium's floor).
const DCZ_BASE_WINDOW_LOG: u32 = 23;

/// The largest `dcz` window RFC 9842 allows: 128 MiB.
const DCZ_MAX_WINDOW_LOG: u32 = 27;

/// The codings a delta may have, in the order they are made.
pub(crate) const CODINGS: [Encoding; 2] = [Encoding::Dcb, Encoding::Dcz];

/// How hard each coding works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Levels {
    /// Brotli quality of `dcb`, 1-11.
    pub dcb_quality: u32,
    /// Zstd level of `dcz`, 1-19.
    pub dcz_level: i32,
}

/// What publish makes deltas of changed files at: the qualities past
/// which each coding costs more time than it saves bytes on real releases
/// (bench/DELTAS.md, "Levels"). A delta's bytes never change once stored:
/// its ETag names it.
pub(crate) const PUBLISH_LEVELS: Levels = Levels {
    dcb_quality: 5,
    dcz_level: 6,
};

/// What a file is coded at against its own bytes (unchanged since the
/// predecessor): every level says "all of the dictionary" in a few
/// dozen bytes, these at a third of the cost of [`PUBLISH_LEVELS`]
/// (bench/DELTAS.md).
pub(crate) const UNCHANGED_LEVELS: Levels = Levels {
    dcb_quality: 4,
    dcz_level: 3,
};

/// The kind of file that is offered as a dictionary and coded as a delta:
/// what browsers fetch again, release after release, under a new URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `.js`, `.mjs`, `.cjs`: classic and module scripts, workers.
    Script,
    /// `.css`.
    Style,
    /// `.json` (source maps, which only developer tools fetch, are left
    /// out).
    Json,
    /// `.wasm`.
    Wasm,
}

impl Kind {
    /// The request destinations (Fetch's `destination`) a dictionary of
    /// this kind is used for: `match-dest` of `Use-As-Dictionary`.
    pub(crate) fn destinations(self) -> &'static [&'static str] {
        match self {
            Kind::Script => &["script"],
            Kind::Style => &["style"],
            // `fetch()` and `WebAssembly.instantiateStreaming(fetch())`.
            Kind::Json | Kind::Wasm => &["empty"],
        }
    }
}

/// The kind of the file at `path`, by its extension (any case); None for
/// everything else.
pub(crate) fn kind(path: &str) -> Option<Kind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    let is = |e: &str| ext.eq_ignore_ascii_case(e);
    if is("js") || is("mjs") || is("cjs") {
        Some(Kind::Script)
    } else if is("css") {
        Some(Kind::Style)
    } else if is("json") {
        Some(Kind::Json)
    } else if is("wasm") {
        Some(Kind::Wasm)
    } else {
        None
    }
}

/// The sizes of file that take part, as dictionaries and as deltas.
///
/// - At least [`DictionarySize::MIN_STORED`] bytes compressed: a
///   response that offers itself as a dictionary spends about 120 bytes
///   on `Use-As-Dictionary`, on every load, and a delta saves at most the
///   file's compressed size less its 36- or 40-byte header, on the next
///   release's load only. Below half a KiB the header eats what a delta
///   could save.
/// - At most [`DictionarySize::MAX_RAW`] bytes: a delta holds the file,
///   its dictionary and the coder's window at once (zstd's window spans
///   both), on every publish worker; 32 MiB keeps that near 150 MiB per
///   worker. Chromium keeps dictionaries up to 100 MiB, and `dcb` reaches
///   back 16 MiB at most.
pub(crate) struct DictionarySize;

impl DictionarySize {
    pub(crate) const MIN_STORED: u64 = 512;
    pub(crate) const MAX_RAW: u64 = 32 << 20;

    /// Whether a file of `raw` bytes, `stored` once compressed, takes part.
    pub(crate) fn fits(raw: u64, stored: u64) -> bool {
        stored >= Self::MIN_STORED && raw <= Self::MAX_RAW
    }
}

/// The zstd window log of a `dcz` frame of `data_len` bytes against a
/// dictionary of `dictionary_len`: what reaches from the end of the file
/// to the start of the dictionary, within what every decoder must take.
/// RFC 9842 4.2 allows the larger of 8 MiB and 1.25 times the dictionary,
/// at most 128 MiB; Chromium decodes the larger of 8 MiB and the power of
/// two at or above the dictionary's size. The window is a power of two
/// within both.
pub(crate) fn dcz_window_log(dictionary_len: usize, data_len: usize) -> u32 {
    let span = dictionary_len as u64 + data_len as u64;
    let wanted = 64 - (span.max(2) - 1).leading_zeros();
    let dictionary = dictionary_len as u64;
    // The largest power of two within 1.25 times the dictionary and
    // within the power of two at or above it.
    let rfc = (dictionary + dictionary / 4).max(1);
    let rfc_log = 63 - rfc.leading_zeros();
    let chromium_log = 64 - (dictionary.max(2) - 1).leading_zeros();
    let allowed = rfc_log
        .min(chromium_log)
        .clamp(DCZ_BASE_WINDOW_LOG, DCZ_MAX_WINDOW_LOG);
    wanted.clamp(10, allowed)
}

/// The length of a delta body's header in `coding` (0 for other codings).
pub(crate) fn header_len(coding: Encoding) -> usize {
    match coding {
        Encoding::Dcb => DCB_MAGIC.len() + 32,
        Encoding::Dcz => DCZ_MAGIC.len() + 32,
        _ => 0,
    }
}

/// The SHA-256 of the dictionary a `coding` body names in its header;
/// None when it has no such header.
pub(crate) fn dictionary_of(coding: Encoding, body: &[u8]) -> Option<[u8; 32]> {
    let magic: &[u8] = match coding {
        Encoding::Dcb => &DCB_MAGIC,
        Encoding::Dcz => &DCZ_MAGIC,
        _ => return None,
    };
    let rest = body.strip_prefix(magic)?;
    rest.get(..32)?.try_into().ok()
}

/// Codes `data` against `dictionary` (whose SHA-256 is `dictionary_sha`)
/// in `coding`, `dcb` or `dcz`: the whole body, header included.
pub(crate) fn encode(
    coding: Encoding,
    data: &[u8],
    dictionary: &[u8],
    dictionary_sha: &[u8; 32],
    levels: Levels,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 16 + 64);
    match coding {
        Encoding::Dcb => {
            out.extend_from_slice(&DCB_MAGIC);
            out.extend_from_slice(dictionary_sha);
            let params = brotli::enc::BrotliEncoderParams {
                quality: levels.dcb_quality.clamp(1, 11) as i32,
                lgwin: DCB_MAX_WINDOW_BITS,
                size_hint: data.len(),
                ..Default::default()
            };
            let mut input_buffer = vec![0u8; 1 << 16];
            let mut output_buffer = vec![0u8; 1 << 16];
            brotli::enc::BrotliCompressCustomIoCustomDict(
                &mut brotli::IoReaderWrapper(&mut &data[..]),
                &mut brotli::IoWriterWrapper(&mut out),
                &mut input_buffer[..],
                &mut output_buffer[..],
                &params,
                brotli::enc::StandardAlloc::default(),
                &mut |_, _, _, _| (),
                dictionary,
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )?;
        }
        Encoding::Dcz => {
            use zstd::zstd_safe::CParameter;
            out.extend_from_slice(&DCZ_MAGIC);
            out.extend_from_slice(dictionary_sha);
            let mut encoder = zstd::stream::write::Encoder::with_ref_prefix(
                out,
                levels.dcz_level.clamp(1, 19),
                dictionary,
            )?;
            encoder.set_parameter(CParameter::WindowLog(dcz_window_log(
                dictionary.len(),
                data.len(),
            )))?;
            // The frame says how long the file is, so a decoder sizes its
            // output once.
            encoder.set_pledged_src_size(Some(data.len() as u64))?;
            encoder.include_contentsize(true)?;
            encoder.write_all(data)?;
            out = encoder.finish()?;
        }
        other => {
            return Err(std::io::Error::other(format!(
                "{other} is not a dictionary coding"
            )));
        }
    }
    Ok(out)
}

/// Decodes a `dcb` or `dcz` body against `dictionary`, reading at most
/// `limit` bytes of output: the file, or what is wrong with the body (its
/// header names another dictionary, it does not decode, it is longer
/// than `limit`).
pub(crate) fn decode(
    coding: Encoding,
    body: &[u8],
    dictionary: &[u8],
    dictionary_sha: &[u8; 32],
    limit: u64,
) -> Result<Vec<u8>, String> {
    let Some(named) = dictionary_of(coding, body) else {
        return Err(format!("does not start with a {coding} header"));
    };
    if named != *dictionary_sha {
        return Err(format!(
            "names dictionary {}, not {}",
            hex::encode(named),
            hex::encode(dictionary_sha)
        ));
    }
    let stream = &body[header_len(coding)..];
    let mut out = Vec::new();
    let read = match coding {
        Encoding::Dcb => {
            let dict = dictionary.to_vec().into();
            let reader = brotli::Decompressor::new_with_custom_dict(stream, 1 << 16, dict);
            reader.take(limit + 1).read_to_end(&mut out)
        }
        _ => {
            use zstd::zstd_safe::DParameter;
            match zstd::stream::read::Decoder::with_ref_prefix(stream, dictionary) {
                Ok(mut decoder) => {
                    match decoder.set_parameter(DParameter::WindowLogMax(DCZ_MAX_WINDOW_LOG)) {
                        Ok(()) => decoder.take(limit + 1).read_to_end(&mut out),
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e),
            }
        }
    };
    match read {
        Ok(n) if n as u64 > limit => Err(format!("decodes to more than {limit} bytes")),
        Ok(_) => Ok(out),
        Err(e) => Err(format!("does not decode: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn sha(bytes: &[u8]) -> [u8; 32] {
        Sha256::digest(bytes).into()
    }

    /// Two releases of a seeded stylesheet on which brotli 9.1.1's
    /// encoder, given the older one as its dictionary, indexed past a
    /// table and panicked, failing the whole publish.
    #[test]
    fn the_pair_that_broke_the_brotli_encoder_codes_and_decodes() {
        let old = include_bytes!("../../tests/fixtures/delta/styles-prev.css");
        let new = include_bytes!("../../tests/fixtures/delta/styles-next.css");
        let dict_sha = sha(old);
        for coding in CODINGS {
            let body = encode(coding, new, old, &dict_sha, PUBLISH_LEVELS).unwrap();
            let back = decode(coding, &body, old, &dict_sha, new.len() as u64).unwrap();
            assert_eq!(back, new, "{coding}");
        }
    }

    #[test]
    fn a_small_change_codes_to_a_few_bytes_and_back() {
        let old = crate::catalog::publish::script_like(4000);
        let mut new = old.clone();
        new.splice(1000..1000, b"console.log('three more lines');\n".repeat(3));
        let dict_sha = sha(&old);
        let mut plain = Vec::new();
        brotli::BrotliCompress(&mut &new[..], &mut plain, &Default::default()).unwrap();
        for coding in CODINGS {
            let body = encode(coding, &new, &old, &dict_sha, PUBLISH_LEVELS).unwrap();
            assert_eq!(dictionary_of(coding, &body), Some(dict_sha));
            assert!(
                body.len() * 20 < plain.len(),
                "{coding}: {} bytes against brotli's {}",
                body.len(),
                plain.len()
            );
            let back = decode(coding, &body, &old, &dict_sha, new.len() as u64).unwrap();
            assert_eq!(back, new);
            // Only against its own dictionary.
            let other = sha(b"another");
            let err = decode(coding, &body, b"another", &other, 1 << 20).unwrap_err();
            assert!(err.contains("names dictionary"), "{err}");
            // Not past its limit.
            let err = decode(coding, &body, &old, &dict_sha, 100).unwrap_err();
            assert!(err.contains("more than 100 bytes"), "{err}");
            // A damaged stream is refused, never read as something else.
            let mut damaged = body.clone();
            let at = header_len(coding) + 2;
            damaged.truncate(at + 3);
            assert!(decode(coding, &damaged, &old, &dict_sha, 1 << 20).is_err());
        }
    }

    #[test]
    fn headers_are_rfc_9842s() {
        let dict = b"a dictionary of some length, long enough".repeat(10);
        let d = sha(&dict);
        let dcb = encode(Encoding::Dcb, b"data", &dict, &d, PUBLISH_LEVELS).unwrap();
        assert_eq!(dcb[..4], [0xff, 0x44, 0x43, 0x42]);
        assert_eq!(dcb[4..36], d);
        let dcz = encode(Encoding::Dcz, b"data", &dict, &d, PUBLISH_LEVELS).unwrap();
        assert_eq!(dcz[..8], [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0]);
        assert_eq!(dcz[8..40], d);
        // The zstd frame follows: its magic number.
        assert_eq!(dcz[40..44], [0x28, 0xb5, 0x2f, 0xfd]);
        assert_eq!(dictionary_of(Encoding::Gzip, &dcb), None);
        assert_eq!(dictionary_of(Encoding::Dcz, &dcb), None);
    }

    #[test]
    fn dcz_windows_stay_within_rfc_9842_and_chromium() {
        const MIB: usize = 1 << 20;
        // Small files: a small window that still spans both.
        assert_eq!(dcz_window_log(100_000, 100_000), 18);
        // 8 MiB is always allowed.
        assert_eq!(dcz_window_log(MIB, 7 * MIB), 23);
        // Past 8 MiB: within 1.25 times the dictionary and the power of
        // two above it.
        assert_eq!(dcz_window_log(12 * MIB, 12 * MIB), 23);
        assert_eq!(dcz_window_log(30 * MIB, 30 * MIB), 25);
        assert_eq!(dcz_window_log(200 * MIB, 200 * MIB), 27);
    }

    #[test]
    fn kinds_by_extension() {
        assert_eq!(kind("js/app.3f9a2c.js"), Some(Kind::Script));
        assert_eq!(kind("x.MJS"), Some(Kind::Script));
        assert_eq!(kind("a/b.css"), Some(Kind::Style));
        assert_eq!(kind("data.json"), Some(Kind::Json));
        assert_eq!(kind("app.wasm"), Some(Kind::Wasm));
        assert_eq!(kind("app.js.map"), None);
        assert_eq!(kind("index.html"), None);
        assert_eq!(kind("LICENSE"), None);
        assert!(DictionarySize::fits(10_000, 512));
        assert!(!DictionarySize::fits(10_000, 511));
        assert!(!DictionarySize::fits(DictionarySize::MAX_RAW + 1, 1 << 20));
    }
}

//! Reading Litestream's transaction files (LTX, format 3, what Litestream
//! 0.5 writes to a replica).
//!
//! An LTX file holds the pages that a range of the writer's transactions
//! changed, each as a whole page image, and the database's size in pages
//! after them. Layout (big-endian): a 100-byte header; page frames in
//! ascending page order, each a page number, flags and, with the size flag,
//! the length of an LZ4 block that decompresses to one page; a zero frame
//! header; an index of the frames; and a 16-byte trailer whose second half
//! is a CRC-64 (ISO) over the header, the frame headers with the
//! *decompressed* pages, the end marker, the index and the first half.
//!
//! [`read`] streams the pages to a callback and checks that CRC last, so a
//! caller applies pages inside a transaction and rolls it back when the
//! file turns out torn or damaged. Frames in the older layout without a
//! size (an LZ4 frame per page) are refused by name rather than guessed at.

use std::io::{BufReader, Read};
use std::path::Path;

const MAGIC: &[u8; 4] = b"LTX1";
const HEADER_LEN: usize = 100;
const FRAME_HEADER_LEN: usize = 6;
const TRAILER_LEN: usize = 16;
/// Header flag: the database checksums are not tracked (zero).
const FLAG_NO_CHECKSUM: u32 = 1 << 1;
/// Frame flag: a four-byte compressed size follows the frame header.
const FRAME_FLAG_SIZE: u16 = 1 << 0;
/// Set in every stored file checksum, so that it is never zero.
const CHECKSUM_FLAG: u64 = 1 << 63;
const CRC: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_GO_ISO);

/// What an LTX file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub page_size: u32,
    /// The database's size in pages once the file is applied.
    pub commit: u32,
    pub min_txid: u64,
    pub max_txid: u64,
    /// When Litestream took the newest transaction from the writer, in ms
    /// since the epoch.
    pub timestamp_ms: u64,
}

/// Why a file cannot be applied.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LtxError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not an LTX file: {0}")]
    Format(String),
    #[error("damaged: its checksum does not match its contents")]
    Checksum,
}

impl Header {
    fn parse(bytes: &[u8; HEADER_LEN]) -> Result<Header, LtxError> {
        if &bytes[0..4] != MAGIC {
            return Err(LtxError::Format("it does not start with LTX1".into()));
        }
        let flags = be_u32(&bytes[4..8]);
        if flags & !FLAG_NO_CHECKSUM != 0 {
            return Err(LtxError::Format(format!("unknown header flags {flags:#x}")));
        }
        let header = Header {
            page_size: be_u32(&bytes[8..12]),
            commit: be_u32(&bytes[12..16]),
            min_txid: be_u64(&bytes[16..24]),
            max_txid: be_u64(&bytes[24..32]),
            timestamp_ms: be_u64(&bytes[32..40]),
        };
        let size_ok =
            header.page_size.is_power_of_two() && (512..=65536).contains(&header.page_size);
        if !size_ok {
            return Err(LtxError::Format(format!("page size {}", header.page_size)));
        }
        if header.min_txid == 0 || header.min_txid > header.max_txid {
            return Err(LtxError::Format(format!(
                "transactions {} to {}",
                header.min_txid, header.max_txid
            )));
        }
        Ok(header)
    }
}

/// Why [`read`] stopped: the file, or the caller's handling of a page.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    File(LtxError),
    Page(E),
}

impl<E> From<LtxError> for Stop<E> {
    fn from(e: LtxError) -> Stop<E> {
        Stop::File(e)
    }
}

impl<E> From<std::io::Error> for Stop<E> {
    fn from(e: std::io::Error) -> Stop<E> {
        Stop::File(LtxError::Io(e))
    }
}

/// The header of the LTX file at `path`, unchecked beyond itself.
pub(crate) fn header(path: &Path) -> Result<Header, LtxError> {
    let mut head = [0u8; HEADER_LEN];
    std::fs::File::open(path)?.read_exact(&mut head)?;
    Header::parse(&head)
}

/// Reads the LTX file at `path`, giving each page (number, image) to
/// `page` in ascending order, and returns its header once the whole file
/// checked out. An error from `page` stops the read and is returned.
pub(crate) fn read<E>(
    path: &Path,
    mut page: impl FnMut(u32, &[u8]) -> Result<(), E>,
) -> Result<Header, Stop<E>> {
    let file = std::fs::File::open(path)?;
    let mut input = BufReader::with_capacity(256 * 1024, file);
    let mut digest = CRC.digest();

    let mut head = [0u8; HEADER_LEN];
    input.read_exact(&mut head)?;
    let header = Header::parse(&head)?;
    digest.update(&head);

    let page_size = header.page_size as usize;
    let mut image = vec![0u8; page_size];
    let mut compressed = Vec::new();
    let mut last = 0u32;
    loop {
        let mut frame = [0u8; FRAME_HEADER_LEN];
        input.read_exact(&mut frame)?;
        digest.update(&frame);
        let pgno = be_u32(&frame[0..4]);
        if pgno == 0 {
            break;
        }
        let flags = u16::from_be_bytes([frame[4], frame[5]]);
        if flags != FRAME_FLAG_SIZE {
            return Err(LtxError::Format(format!(
                "page {pgno} is stored without its size (flags {flags:#x}), a layout this reader does not take"
            ))
            .into());
        }
        if pgno <= last || pgno > header.commit {
            return Err(
                LtxError::Format(format!("page {pgno} out of order or past the end")).into(),
            );
        }
        last = pgno;
        let mut size = [0u8; 4];
        input.read_exact(&mut size)?;
        digest.update(&size);
        let size = be_u32(&size) as usize;
        if size > 2 * page_size + 64 {
            return Err(
                LtxError::Format(format!("page {pgno} claims {size} compressed bytes")).into(),
            );
        }
        compressed.resize(size, 0);
        input.read_exact(&mut compressed)?;
        let written = lz4_flex::block::decompress_into(&compressed, &mut image)
            .map_err(|e| LtxError::Format(format!("page {pgno}: {e}")))?;
        if written != page_size {
            return Err(LtxError::Format(format!(
                "page {pgno} decompresses to {written} bytes, not {page_size}"
            ))
            .into());
        }
        digest.update(&image);
        page(pgno, &image).map_err(Stop::Page)?;
    }

    // The index and the trailer: what is left, a few bytes a page.
    let mut rest = Vec::new();
    input.read_to_end(&mut rest)?;
    if rest.len() < TRAILER_LEN + 8 {
        return Err(LtxError::Format("it ends before its trailer".into()).into());
    }
    let (checked, stored) = rest.split_at(rest.len() - 8);
    digest.update(checked);
    if digest.finalize() | CHECKSUM_FLAG != be_u64(stored) {
        return Err(LtxError::Checksum.into());
    }
    Ok(header)
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().expect("four bytes"))
}

fn be_u64(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes.try_into().expect("eight bytes"))
}

#[cfg(test)]
/// An LTX file as Litestream lays it out, made here so that the reader
/// is checked against the format's description byte by byte.
pub(crate) fn encode(header: &Header, pages: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut digest = CRC.digest();
    let mut head = [0u8; HEADER_LEN];
    head[0..4].copy_from_slice(MAGIC);
    head[4..8].copy_from_slice(&FLAG_NO_CHECKSUM.to_be_bytes());
    head[8..12].copy_from_slice(&header.page_size.to_be_bytes());
    head[12..16].copy_from_slice(&header.commit.to_be_bytes());
    head[16..24].copy_from_slice(&header.min_txid.to_be_bytes());
    head[24..32].copy_from_slice(&header.max_txid.to_be_bytes());
    head[32..40].copy_from_slice(&header.timestamp_ms.to_be_bytes());
    out.extend_from_slice(&head);
    digest.update(&head);
    for (pgno, image) in pages {
        let block = lz4_flex::block::compress(image);
        let mut frame = Vec::new();
        frame.extend_from_slice(&pgno.to_be_bytes());
        frame.extend_from_slice(&FRAME_FLAG_SIZE.to_be_bytes());
        frame.extend_from_slice(&(block.len() as u32).to_be_bytes());
        out.extend_from_slice(&frame);
        out.extend_from_slice(&block);
        digest.update(&frame);
        digest.update(image);
    }
    let end = [0u8; FRAME_HEADER_LEN];
    out.extend_from_slice(&end);
    digest.update(&end);
    // An index of one terminator, its size, and a zero post-apply checksum.
    let index = [0u8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&index);
    digest.update(&index);
    let sum = digest.finalize() | CHECKSUM_FLAG;
    out.extend_from_slice(&sum.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            page_size: 4096,
            commit: 3,
            min_txid: 7,
            max_txid: 9,
            timestamp_ms: 1_700_000_000_000,
        }
    }

    type Pages = Vec<(u32, Vec<u8>)>;

    fn pages_of(path: &Path) -> Result<(Header, Pages), LtxError> {
        let mut pages = Vec::new();
        let header = read(path, |pgno, image| {
            pages.push((pgno, image.to_vec()));
            Ok::<(), ()>(())
        })
        .map_err(|stop| match stop {
            Stop::File(e) => e,
            Stop::Page(()) => unreachable!("the callback does not fail"),
        })?;
        Ok((header, pages))
    }

    #[test]
    fn pages_and_header_come_back_as_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.ltx");
        let pages = vec![
            (1, vec![1u8; 4096]),
            (3, (0..4096).map(|i| i as u8).collect()),
        ];
        std::fs::write(&path, encode(&header(), &pages)).expect("write");
        let (read_header, read_pages) = pages_of(&path).expect("reads");
        assert_eq!(read_header, header());
        assert_eq!(read_pages, pages);
    }

    #[test]
    fn a_flipped_byte_or_a_cut_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.ltx");
        let good = encode(&header(), &[(2, vec![5u8; 4096])]);
        // The last byte of the page block's compressed data: decompresses
        // to something else, or not at all.
        let mut flipped = good.clone();
        let at = good.len() - 6 - 17 - 8 - 1;
        flipped[at] ^= 0x55;
        std::fs::write(&path, &flipped).expect("write");
        assert!(pages_of(&path).is_err());
        std::fs::write(&path, &good[..good.len() - 3]).expect("write");
        assert!(pages_of(&path).is_err());
        let mut bad_sum = good.clone();
        let last = bad_sum.len() - 1;
        bad_sum[last] ^= 1;
        std::fs::write(&path, &bad_sum).expect("write");
        assert!(matches!(pages_of(&path), Err(LtxError::Checksum)));
        std::fs::write(&path, &good).expect("write");
        assert!(pages_of(&path).is_ok());
    }

    #[test]
    fn other_files_are_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.ltx");
        std::fs::write(&path, vec![b'x'; 200]).expect("write");
        let err = pages_of(&path).expect_err("not LTX");
        assert!(err.to_string().contains("LTX1"), "{err}");
    }
}

//! Bodies sent a piece at a time ([`transport::Pieces`]): each piece is
//! made only when the connection can send it, its memory is reserved of
//! the in-flight budget ([`InFlight`]) and given back once the connection
//! has written it, and every byte is checked before it leaves.
//!
//! - [`CatalogPieces`]: a stored stream left in the catalog (a file longer
//!   than a piece that the cache does not hold), read a 64 KiB piece at a
//!   time and checked against the piece's digest (`catalog::pieces`). A
//!   range reads the pieces it covers and no others.
//! - [`ChunkPieces`]: a big file's chunks (`catalog::chunks`), the same way.
//! - [`DecodedPieces`]: the decoded bytes of a gzip stream, for a client
//!   that takes neither gzip nor brotli, decoded as they are sent from the
//!   stream in memory or from the catalog's checked pieces. A range is
//!   decoded from the start and what lies before it dropped.
//!
//! Each read is its own short read of the catalog on the thread that
//! sends, as a miss is read, so a slow client never holds a snapshot.

use crate::catalog::chunks::ChunkCursor;
use crate::catalog::pieces::{PIECE_SIZE, piece_of, piece_range};
use crate::log;
use crate::serve::in_flight::{InFlight, Place, Reservation, owned_bytes};
use crate::serve::store::{self, PieceAt};
use crate::transport;
use bytes::Bytes;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

/// What a decoder holds beside its output: zlib's state and window, and
/// one piece of its input.
const DECODER_BYTES: u64 = (48 << 10) + PIECE_SIZE as u64;

/// A stored stream left in the catalog, sent from `range`.
pub(crate) struct CatalogPieces {
    pub(super) store: store::Handle,
    pub(super) at: PieceAt,
    pub(super) range: Range<u64>,
    /// `package@version/path`, for the log when a piece fails.
    pub(super) name: String,
    /// Its place in the queue for in-flight memory, while it waits.
    pub(super) place: Place,
}

impl transport::Pieces for CatalogPieces {
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.range.is_empty() {
            return Poll::Ready(None);
        }
        self.at.index = piece_of(self.range.start);
        let piece = piece_range(self.at.index, self.at.stream_len);
        let end = self.range.end.min(piece.end);
        // A piece read for the first time is read whole, to be checked.
        let held = if self.at.verified.is(self.at.index) {
            end - self.range.start
        } else {
            piece.end - piece.start
        };
        let budget = self.store.in_flight().clone();
        let reserved = ready!(budget.poll_reserve(held, &mut self.place, cx));
        let read = self.store.piece(&self.at, self.range.start..end);
        Poll::Ready(Some(
            read.map(|(bytes, from)| {
                let to = from + (end - self.range.start) as usize;
                self.range.start = end;
                owned_bytes(bytes, Some(reserved)).slice(from..to)
            })
            .map_err(|e| cut_short(&self.name, &mut self.range, e)),
        ))
    }

    fn remaining(&self) -> u64 {
        self.range.end - self.range.start
    }
}

/// A big file's range, read from the catalog a checked chunk at a time.
pub(crate) struct ChunkPieces {
    pub(super) store: store::Handle,
    pub(super) cursor: ChunkCursor,
    /// `package@version/path`, for the log when a chunk fails.
    pub(super) name: String,
    pub(super) place: Place,
}

impl transport::Pieces for ChunkPieces {
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.cursor.range.is_empty() {
            return Poll::Ready(None);
        }
        let chunk = self.cursor.blob.chunk_size;
        let budget = self.store.in_flight().clone();
        let reserved = ready!(budget.poll_reserve(chunk, &mut self.place, cx));
        Poll::Ready(match self.store.next_piece(&mut self.cursor, reserved) {
            Ok(piece) => piece.map(Ok),
            Err(e) => Some(Err(cut_short(&self.name, &mut self.cursor.range, e))),
        })
    }

    fn remaining(&self) -> u64 {
        self.cursor.range.end - self.cursor.range.start
    }
}

/// The decoded bytes `range` of a gzip stream.
pub(crate) struct DecodedPieces {
    decoder: flate2::read::MultiGzDecoder<Source>,
    budget: Arc<InFlight>,
    /// The decoder's memory, reserved with its first piece.
    state: Option<Reservation>,
    range: Range<u64>,
    /// Decoded bytes before the range not yet dropped.
    skip: u64,
    name: String,
    place: Place,
}

/// Where a decoder reads the stored gzip stream.
pub(crate) enum Source {
    /// In memory: the cache's copy, or one read for this response.
    Memory(io::Cursor<Bytes>),
    /// In the catalog, a checked piece at a time.
    Catalog {
        store: store::Handle,
        at: PieceAt,
        /// The current piece and how much of it was read.
        piece: Vec<u8>,
        used: usize,
    },
}

impl DecodedPieces {
    pub(crate) fn new(
        source: Source,
        budget: Arc<InFlight>,
        range: Range<u64>,
        name: String,
    ) -> Self {
        DecodedPieces {
            decoder: flate2::read::MultiGzDecoder::new(source),
            budget,
            state: None,
            skip: range.start,
            range,
            name,
            place: None,
        }
    }

    /// Decodes the next `len` bytes of the range into `out`, dropping
    /// what lies before the range first.
    fn decode(&mut self, out: &mut [u8]) -> io::Result<()> {
        while self.skip > 0 {
            let n = (self.skip as usize).min(out.len());
            self.decoder.read_exact(&mut out[..n])?;
            self.skip -= n as u64;
        }
        self.decoder.read_exact(out)
    }
}

impl transport::Pieces for DecodedPieces {
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.range.is_empty() {
            self.state = None;
            return Poll::Ready(None);
        }
        if self.state.is_none() {
            let state = self.budget.poll_reserve(DECODER_BYTES, &mut self.place, cx);
            self.state = Some(ready!(state));
        }
        let len = (self.range.end - self.range.start).min(PIECE_SIZE as u64);
        let reserved = ready!(self.budget.poll_reserve(len, &mut self.place, cx));
        let mut out = vec![0; len as usize];
        Poll::Ready(Some(match self.decode(&mut out) {
            Ok(()) => {
                self.range.start += len;
                if self.range.is_empty() {
                    self.state = None;
                }
                Ok(owned_bytes(out, Some(reserved)))
            }
            Err(e) => {
                self.state = None;
                Err(cut_short(&self.name, &mut self.range, e))
            }
        }))
    }

    fn remaining(&self) -> u64 {
        self.range.end - self.range.start
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Memory(cursor) => cursor.read(buf),
            Source::Catalog {
                store,
                at,
                piece,
                used,
            } => {
                if *used == piece.len() {
                    let next = piece_range(at.index, at.stream_len);
                    if piece.is_empty() {
                        at.index = 0;
                    } else if next.end >= at.stream_len {
                        return Ok(0);
                    } else {
                        at.index += 1;
                    }
                    let whole = piece_range(at.index, at.stream_len);
                    let (bytes, from) = store.piece(at, whole).map_err(io::Error::other)?;
                    *piece = bytes;
                    *used = from;
                }
                let n = buf.len().min(piece.len() - *used);
                buf[..n].copy_from_slice(&piece[*used..*used + n]);
                *used += n;
                Ok(n)
            }
        }
    }
}

/// A piece that could not be made: logged with the file it belongs to,
/// and the rest of the range given up (the response ends short).
fn cut_short(name: &str, range: &mut Range<u64>, e: impl std::fmt::Display) -> io::Error {
    log::err(format_args!("{name}: {e}; the response was cut short"));
    range.start = range.end;
    io::Error::other(e.to_string())
}

//! Writes gathered over one turn of an HTTP/2 connection, sent in one go.
//!
//! h2 writes its frames out whenever its own buffer cannot take the next
//! one: after every HEADERS frame that the driver lets it flush, and after
//! every DATA frame longer than a few hundred bytes, which it keeps aside
//! rather than copying. Ten small responses on one connection would become
//! twenty writes, and over TLS twenty records and twenty system calls.
//!
//! [`Corked`] sits between h2 and the socket. While its [`Cork`] holds,
//! writes are gathered in a buffer (up to [`GATHER_MAX`]) and a flush is a
//! no-op; the driver releases the cork when its turn is over, and the next
//! flush writes everything at once. Large writes, such as the frames of a
//! big file, go straight through once what was gathered before them is out.

use super::watched::poll_write_out;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// At most this much is gathered before it is written out.
const GATHER_MAX: usize = 64 * 1024;
/// A write at least this long is not copied: it goes straight through.
const PASS_THROUGH: usize = 8 * 1024;

/// The driver's side: hold writes back during a turn, let them out after.
#[derive(Debug, Default)]
pub(super) struct Cork {
    holding: AtomicBool,
    gathered: AtomicUsize,
}

impl Cork {
    /// Writes are gathered and flushes wait from now on.
    pub(super) fn hold(&self) {
        self.holding.store(true, Ordering::Relaxed);
    }

    /// The next flush writes what was gathered.
    pub(super) fn release(&self) {
        self.holding.store(false, Ordering::Relaxed);
    }

    pub(super) fn is_held(&self) -> bool {
        self.holding.load(Ordering::Relaxed)
    }

    /// Bytes gathered and not yet written.
    pub(super) fn gathered(&self) -> usize {
        self.gathered.load(Ordering::Relaxed)
    }
}

/// An I/O whose writes gather while its [`Cork`] holds.
pub(super) struct Corked<IO> {
    io: IO,
    buf: Vec<u8>,
    /// How much of `buf` has been written.
    written: usize,
    cork: Arc<Cork>,
}

impl<IO> Corked<IO> {
    /// Starts released: writes pass until the driver holds the cork.
    pub(super) fn new(io: IO) -> (Corked<IO>, Arc<Cork>) {
        let cork = Arc::new(Cork::default());
        let corked = Corked {
            io,
            buf: Vec::new(),
            written: 0,
            cork: Arc::clone(&cork),
        };
        (corked, cork)
    }
}

impl<IO: AsyncWrite + Unpin> Corked<IO> {
    /// Writes out everything gathered; Ready once it all went. The buffer
    /// is freed then, so an idle connection holds none.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let before = self.written;
        let drained = poll_write_out(&mut self.io, cx, &self.buf, &mut self.written);
        self.cork
            .gathered
            .fetch_sub(self.written - before, Ordering::Relaxed);
        ready!(drained)?;
        self.buf = Vec::new();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    fn gather(&mut self, bufs: &[IoSlice<'_>], len: usize) -> usize {
        self.buf.reserve(len);
        for b in bufs {
            self.buf.extend_from_slice(b);
        }
        self.cork.gathered.fetch_add(len, Ordering::Relaxed);
        len
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Corked<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Corked<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len = bufs.iter().map(|b| b.len()).sum::<usize>();
        let this = &mut *self;
        if len < PASS_THROUGH && this.buf.len() - this.written + len <= GATHER_MAX {
            return Poll::Ready(Ok(this.gather(bufs, len)));
        }
        ready!(this.poll_drain(cx))?;
        if len < PASS_THROUGH {
            return Poll::Ready(Ok(this.gather(bufs, len)));
        }
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.cork.holding.load(Ordering::Relaxed) {
            return Poll::Ready(Ok(()));
        }
        ready!(self.poll_drain(cx))?;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_drain(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use tokio::io::AsyncWriteExt;

    /// Counts the writes that reach it.
    #[derive(Default)]
    struct Sink {
        writes: usize,
        bytes: Vec<u8>,
    }

    impl AsyncWrite for Sink {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn held_writes_and_flushes_go_out_as_one_write_once_released() {
        let (mut corked, cork) = Corked::new(Sink::default());
        cork.hold();
        for frame in [&b"headers"[..], b"data", b"headers", b"data"] {
            corked.write_all(frame).await.unwrap();
            corked.flush().await.unwrap();
        }
        assert_eq!(corked.io.writes, 0);
        assert_eq!(cork.gathered(), 22);
        cork.release();
        poll_fn(|cx| Pin::new(&mut corked).poll_flush(cx))
            .await
            .unwrap();
        assert_eq!(corked.io.writes, 1);
        assert_eq!(corked.io.bytes, b"headersdataheadersdata");
        assert_eq!(cork.gathered(), 0);
        assert_eq!(corked.buf.capacity(), 0, "an empty cork holds no buffer");
    }

    #[tokio::test]
    async fn released_writes_pass_at_each_flush_and_large_ones_go_straight() {
        let (mut corked, cork) = Corked::new(Sink::default());
        corked.write_all(b"settings").await.unwrap();
        corked.flush().await.unwrap();
        assert_eq!(corked.io.writes, 1);
        cork.hold();
        corked.write_all(b"small").await.unwrap();
        let big = vec![7u8; PASS_THROUGH];
        corked.write_all(&big).await.unwrap();
        // What was gathered goes first, then the large write itself.
        assert_eq!(corked.io.writes, 3);
        assert_eq!(&corked.io.bytes[8..13], b"small");
        assert_eq!(corked.io.bytes.len(), 13 + PASS_THROUGH);
    }

    #[tokio::test]
    async fn gathering_stops_at_its_limit() {
        let (mut corked, cork) = Corked::new(Sink::default());
        cork.hold();
        let frame = vec![1u8; PASS_THROUGH - 1];
        for _ in 0..(GATHER_MAX / frame.len() + 1) {
            corked.write_all(&frame).await.unwrap();
        }
        assert_eq!(corked.io.writes, 1);
        assert!(cork.gathered() <= GATHER_MAX);
    }
}

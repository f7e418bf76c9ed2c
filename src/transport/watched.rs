//! The socket as the protocols see it, and how a connection ends: the
//! [`Watched`] stream whose reads and writes move the connection's
//! [`Watch`] (and tell HTTP/1's [`Wire`] what reached the client),
//! [`until_due`] for work that must finish within the watch's deadline,
//! [`poll_write_out`] for the buffers in front of a socket, and [`End`].
//! Shared by the connection's task (`conn`) and both protocols (`h1`,
//! `h2`), which `conn` starts.

use super::watch::{KEEP, Reason, Watch, instant_of, now_ms};
use crate::causal;
use bytes::{Buf, Bytes};
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How a connection's task, or one hyper connection on it, ended.
pub(super) enum End {
    /// The protocol finished the connection; with an error for a head
    /// hyper refused, or a protocol error.
    Done(Result<(), BoxError>),
    /// hyper let an idle HTTP/1 connection go without closing the socket.
    Parked,
    TimedOut(Reason),
    /// Closed on request: shutdown's patience ran out, or reclaimed at the
    /// cap.
    Aborted,
}

/// Sleeps until the deadline `due` names (from [`Watch::due`]); forever
/// when there is none.
pub(super) async fn sleep_until_due(due: Option<(u64, Reason)>) {
    match due {
        Some((at, _)) => tokio::time::sleep_until(instant_of(at)).await,
        None => std::future::pending().await,
    }
}

/// What the deadline `due` names is for, once it has passed.
pub(super) fn passed(due: Option<(u64, Reason)>) -> Option<Reason> {
    due.filter(|(at, _)| now_ms() >= *at)
        .map(|(_, reason)| reason)
}

/// Writes `buf[*written..]` to `io` until the socket has taken all of
/// it, moving `written` on as it goes (so that a Pending resumes where it
/// stopped). Shared by the buffers that stand in front of a socket: the
/// HTTP/2 cork and the TLS record stream.
pub(super) fn poll_write_out<IO: AsyncWrite + Unpin>(
    io: &mut IO,
    cx: &mut Context<'_>,
    buf: &[u8],
    written: &mut usize,
) -> Poll<io::Result<()>> {
    while *written < buf.len() {
        let n = std::task::ready!(Pin::new(&mut *io).poll_write(cx, &buf[*written..]))?;
        if n == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        *written += n;
    }
    Poll::Ready(Ok(()))
}

/// Runs `work` (a handshake, a preface read) within the watch's deadline
/// and close requests: Err once the deadline passes or a close is asked.
pub(super) async fn until_due<F: Future>(watch: &Watch, work: F) -> Result<F::Output, End> {
    let mut work = pin!(work);
    let mut asked = pin!(watch.notify.notified());
    loop {
        let due = watch.due(false);
        tokio::select! {
            biased;
            done = &mut work => return Ok(done),
            () = sleep_until_due(due) => {
                if let Some(reason) = passed(due) {
                    return Err(End::TimedOut(reason));
                }
            }
            () = &mut asked => {
                asked.set(watch.notify.notified());
                if watch.close.load(Ordering::Relaxed) != KEEP {
                    return Err(End::Aborted);
                }
            }
        }
    }
}

/// What is told of every byte an HTTP/1 connection writes, to learn how
/// much of each response's body reached the client ([`super::h1::Ledger`]).
pub(super) trait Wire: Send + Sync {
    /// `bufs` were offered to the socket and it took `written` bytes.
    fn wrote(&self, bufs: &[io::IoSlice<'_>], written: usize);
}

/// The socket as the protocol sees it: reads and writes move the watch,
/// and HTTP/1's writes are told to its [`Wire`].
pub(super) struct Watched<IO> {
    pub(super) inner: IO,
    watch: Arc<Watch>,
    /// Bytes read before the protocol started (the start of the preface
    /// check) or that a parked connection's hyper had read and not used:
    /// read first.
    pub(super) unread: Bytes,
    pub(super) wire: Option<Arc<dyn Wire>>,
}

impl<IO> Watched<IO> {
    pub(super) fn new(inner: IO, watch: Arc<Watch>) -> Watched<IO> {
        Watched {
            inner,
            watch,
            unread: Bytes::new(),
            wire: None,
        }
    }

    fn wrote(&self, bufs: &[io::IoSlice<'_>], result: &Poll<io::Result<usize>>) {
        self.watch.wrote(result);
        if let (Some(wire), Poll::Ready(Ok(n))) = (&self.wire, result)
            && *n > 0
        {
            wire.wrote(bufs, *n);
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.unread.is_empty() {
            let n = self.unread.len().min(buf.remaining());
            buf.put_slice(&self.unread[..n]);
            self.unread.advance(n);
            self.watch.bytes_read();
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.watch.bytes_read();
        }
        read
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Watched<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let wrote = {
            let _s = causal::site!(HTTP_RESPOND);
            Pin::new(&mut self.inner).poll_write(cx, buf)
        };
        self.wrote(&[io::IoSlice::new(buf)], &wrote);
        wrote
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let wrote = {
            let _s = causal::site!(HTTP_RESPOND);
            Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
        };
        self.wrote(bufs, &wrote);
        wrote
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch.wrote(&flushed);
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

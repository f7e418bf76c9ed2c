//! HTTP/1 by hyper, for every head [`super::h1_get`] does not take (other
//! methods, bodies, HTTP/1.0, what must be refused): one hyper connection
//! while requests come, parked while the client is idle
//! ([`super::conn`]), under the [`Watch`]'s deadlines; and the [`Ledger`]
//! that learns, from the bytes the socket takes, how much of each
//! response's body reached the client.
//!
//! hyper writes a response's head and then its body, in request order,
//! and adds lines of its own (`date`, sometimes `connection`), so a
//! head's length is read off the wire: it ends at its blank line. What
//! follows it, up to the body's length, is body; a connection that ends
//! before that has delivered only part of the body, and the handler is
//! told so ([`Delivery`]).

use super::watch::{
    ABORT, CLOSING_GRACE, DRAIN, DRAIN_LINGER, KEEP, RECLAIM, Reason, Waits, Watch,
};
use super::watched::{BoxError, End, Watched, Wire};
use super::{Delivery, Handler, Payload, Peer, RequestBody, Shared};
use bytes::Bytes;
use http::Response;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

/// One hyper HTTP/1 connection on `io`; an idle one lets go of `io`,
/// handed back to wait for the next request.
pub(super) async fn run<H, IO>(
    io: Watched<IO>,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
    ledger: &Arc<Ledger<H>>,
) -> (End, Option<Watched<IO>>)
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut conn = shared
        .http1
        .serve_connection(TokioIo::new(io), service(shared, watch, peer, ledger));
    let end = drive(Pin::new(&mut conn), watch).await;
    match end {
        End::Parked => {}
        // hyper has finished the connection (the client's `Connection:
        // close`, a drain, a head it refused, an idle close): the socket
        // is closed as the protocol asks, over TLS with close_notify.
        End::Done(_) | End::TimedOut(Reason::Idle) => {
            let mut io = conn.into_parts().io.into_inner();
            let _ = tokio::time::timeout(CLOSING_GRACE, io.shutdown()).await;
            return (end, None);
        }
        End::TimedOut(_) | End::Aborted => return (end, None),
    }
    let parts = conn.into_parts();
    let mut io = parts.io.into_inner();
    // A copy: hyper's bytes are a view of its whole read buffer.
    io.unread = Bytes::copy_from_slice(&parts.read_buf);
    (End::Parked, Some(io))
}

/// A response: made before hyper asks for it for nearly every request
/// (nothing to wait for, and nothing boxed), or later for a deferred one
/// (an upload), whose future the connection polls.
pub(super) enum Responding {
    Ready(Option<Response<Sent>>),
    Later(Pin<Box<dyn Future<Output = Response<Sent>> + Send>>),
}

impl Future for Responding {
    type Output = Result<Response<Sent>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Responding::Ready(response) => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                // Polled again after it was ready: hyper does not.
                None => Poll::Pending,
            },
            Responding::Later(future) => future.as_mut().poll(cx).map(Ok),
        }
    }
}

/// The service hyper calls on a connection: the handler's response, with
/// `Connection: close` while the connection drains, entered in the ledger
/// (which tells the watch and the handler when it has been written).
fn service<H: Handler>(
    shared: &Shared<H>,
    watch: &Arc<Watch>,
    peer: Peer,
    ledger: &Arc<Ledger<H>>,
) -> impl hyper::service::Service<
    http::Request<Incoming>,
    Response = Response<Sent>,
    Error = Infallible,
    Future = Responding,
> + Unpin
+ use<H> {
    let handler = shared.handler.clone();
    let watch = watch.clone();
    let ledger = ledger.clone();
    let body_timeout = shared.limits.body_timeout;
    hyper::service::service_fn(move |request: http::Request<Incoming>| {
        watch.request_began();
        let (head, body) = request.into_parts();
        let last = asks_to_close(&head);
        if super::may_defer(&*handler, &head) {
            let later = handler.handle_later(head, RequestBody::h1(body, body_timeout), peer);
            let (watch, ledger) = (watch.clone(), ledger.clone());
            return Responding::Later(Box::pin(async move {
                let (response, ticket) = later.await;
                // Whether the connection drains is known once answered.
                hand_over(response, ticket, last, &watch, &ledger)
            }));
        }
        // The body is never read: dropping it lets hyper discard or refuse it.
        drop(body);
        let (response, ticket) = handler.handle(head, peer);
        Responding::Ready(Some(hand_over(response, ticket, last, &watch, &ledger)))
    })
}

/// A response on its way to hyper: `Connection: close` when it is the
/// connection's last (the client asked, or the connection drains), and
/// entered in the ledger.
fn hand_over<H: Handler>(
    mut response: Response<Payload>,
    ticket: H::Ticket,
    last: bool,
    watch: &Watch,
    ledger: &Ledger<H>,
) -> Response<Sent> {
    if last || watch.close.load(Ordering::Relaxed) != KEEP {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    ledger.expect(ticket, response.body().len());
    response.map(|body| Sent {
        data: (!body.is_empty()).then_some(body),
    })
}

/// Whether the client wants the connection closed after this answer:
/// `Connection: close`, or HTTP/1.0 without `keep-alive`. hyper closes it
/// then; the answer says so too (RFC 9112 9.6), or a client that reuses
/// connections finds out only when its next request fails.
fn asks_to_close(head: &http::request::Parts) -> bool {
    let has = |option: &[u8]| {
        head.headers
            .get_all(http::header::CONNECTION)
            .iter()
            .any(|v| super::has_token(v.as_bytes(), option))
    };
    has(b"close") || (head.version == http::Version::HTTP_10 && !has(b"keep-alive"))
}

/// Runs a hyper connection under the watch's deadlines and close requests:
/// parked once idle for [`super::watch::PARK_AFTER`].
async fn drive<I, S>(
    mut conn: Pin<&mut hyper::server::conn::http1::Connection<I, S>>,
    watch: &Watch,
) -> End
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S: hyper::service::HttpService<Incoming> + Unpin,
    S::Future: Unpin,
    S::Error: Into<BoxError>,
    S::ResBody: 'static,
    <S::ResBody as Body>::Error: Into<BoxError>,
{
    let sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    let asked = pin!(watch.notify.notified());
    let mut waits = Waits::new(watch, sleep, asked);
    // hyper was asked to finish; to park, or for being idle too long.
    let mut finishing = false;
    let mut parking = false;
    let mut idle_closed = false;
    poll_fn(|cx| {
        loop {
            if let Poll::Ready(result) = conn.as_mut().poll_without_shutdown(cx) {
                let keep = watch.close.load(Ordering::Relaxed) == KEEP;
                return Poll::Ready(match result {
                    Ok(()) if parking && keep => End::Parked,
                    Ok(()) if idle_closed => End::TimedOut(Reason::Idle),
                    result => End::Done(result.map_err(Into::into)),
                });
            }
            if let Poll::Ready(how) = waits.poll_asked(cx) {
                parking = false;
                match how {
                    ABORT => return Poll::Ready(End::Aborted),
                    // Reclaimed at the cap while it has no request: closed
                    // now (one that has just begun one finishes it).
                    RECLAIM if !watch.answering() => return Poll::Ready(End::Aborted),
                    DRAIN => watch.closing(DRAIN_LINGER),
                    _ if !finishing => {
                        finishing = true;
                        watch.closing(CLOSING_GRACE);
                        conn.as_mut().graceful_shutdown();
                    }
                    _ => {}
                }
                continue;
            }
            let Some((due, reason)) = watch.due(!finishing) else {
                return Poll::Pending;
            };
            ready!(waits.poll_until(cx, due));
            match reason {
                Reason::Park if !finishing => {
                    finishing = true;
                    parking = true;
                    conn.as_mut().graceful_shutdown();
                }
                Reason::Idle | Reason::Closing if !finishing => {
                    idle_closed = reason == Reason::Idle;
                    finishing = true;
                    watch.closing(CLOSING_GRACE);
                    conn.as_mut().graceful_shutdown();
                }
                _ => return Poll::Ready(End::TimedOut(reason)),
            }
        }
    })
    .await
}

/// A response body: the handler's bytes, handed over whole (shared with
/// the cache, never copied) or piece by piece as hyper takes them.
pub(super) struct Sent {
    data: Option<Payload>,
}

impl Body for Sent {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let next = match self.data.take() {
            None => None,
            Some(Payload::Whole(data)) => Some(Ok(data)),
            Some(Payload::Pieces(mut pieces)) => {
                let next = pieces.poll_piece(cx);
                let more = pieces.remaining() > 0;
                if next.is_pending() || more {
                    self.data = Some(Payload::Pieces(pieces));
                }
                match next {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(next) => next,
                }
            }
        };
        Poll::Ready(next.map(|piece| piece.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, Payload::len))
    }
}

/// The responses of one HTTP/1 connection whose bodies have not all been
/// written yet, in order, and where the socket is in the first of them.
pub(super) struct Ledger<H: Handler> {
    handler: Arc<H>,
    /// Told when a response has been written: the request is no longer
    /// in flight.
    watch: Arc<Watch>,
    pending: Mutex<VecDeque<Expected<H::Ticket>>>,
}

/// A response the connection is to write.
struct Expected<T> {
    ticket: T,
    /// How many bytes of its head's end (`\r\n\r\n`) were seen; 4 once the
    /// head is written.
    head_end: u8,
    body: u64,
    written: u64,
}

impl<H: Handler> Ledger<H> {
    pub(super) fn new(handler: Arc<H>, watch: Arc<Watch>) -> Ledger<H> {
        Ledger {
            handler,
            watch,
            pending: Mutex::new(VecDeque::new()),
        }
    }

    /// A response was handed to hyper, its body `body` bytes long.
    fn expect(&self, ticket: H::Ticket, body: u64) {
        self.lock().push_back(Expected {
            ticket,
            head_end: 0,
            body,
            written: 0,
        });
    }

    /// The connection ended: what was not written in full never will be.
    pub(super) fn close(&self) {
        let left = std::mem::take(&mut *self.lock());
        for expected in left {
            self.watch.request_ended();
            let delivery = Delivery {
                body_bytes: expected.written,
                complete: false,
            };
            self.handler.finished(expected.ticket, delivery);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Expected<H::Ticket>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<H: Handler> Wire for Ledger<H> {
    fn wrote(&self, bufs: &[io::IoSlice<'_>], written: usize) {
        let mut done: smallvec::SmallVec<[(H::Ticket, u64); 2]> = smallvec::SmallVec::new();
        {
            let mut pending = self.lock();
            if pending.len() == 1
                && let Some(front) = pending.front_mut()
                && front.ends_in(bufs, written)
            {
                let front = pending.pop_front().expect("the front was just seen");
                done.push((front.ticket, front.written));
            } else {
                take_each(&mut pending, bufs, written, &mut done);
            }
        }
        for (ticket, body_bytes) in done {
            self.watch.request_ended();
            let delivery = Delivery {
                body_bytes,
                complete: true,
            };
            self.handler.finished(ticket, delivery);
        }
    }
}

/// Hands the `written` bytes of `bufs` to the pending responses in
/// order; those written in full go to `done`.
fn take_each<T>(
    pending: &mut VecDeque<Expected<T>>,
    bufs: &[io::IoSlice<'_>],
    written: usize,
    done: &mut smallvec::SmallVec<[(T, u64); 2]>,
) {
    let mut left = written;
    for buf in bufs {
        if left == 0 {
            break;
        }
        let mut bytes = &buf[..buf.len().min(left)];
        left -= bytes.len();
        while !bytes.is_empty() {
            // Bytes of no response: hyper's own answers to a head it
            // refused.
            let Some(front) = pending.front_mut() else {
                break;
            };
            bytes = front.take(bytes);
            if front.finished() {
                let front = pending.pop_front().expect("the front was just seen");
                done.push((front.ticket, front.written));
            }
        }
    }
}

impl<T> Expected<T> {
    /// Takes what of `bytes` is this response's; returns the rest.
    fn take<'a>(&mut self, mut bytes: &'a [u8]) -> &'a [u8] {
        const BLANK_LINE: &[u8; 4] = b"\r\n\r\n";
        while self.head_end < 4 {
            if self.head_end == 0 {
                let Some(at) = memchr::memmem::find(bytes, BLANK_LINE) else {
                    // The longest end of `bytes` that begins a blank line.
                    let begun = (1..4).rev().find(|&k| bytes.ends_with(&BLANK_LINE[..k]));
                    self.head_end = begun.unwrap_or(0) as u8;
                    return &[];
                };
                bytes = &bytes[at + 4..];
                self.head_end = 4;
                break;
            }
            // A blank line begun in an earlier write: the next byte goes
            // on with it, or it was not one (and is searched again).
            let Some((&byte, rest)) = bytes.split_first() else {
                return bytes;
            };
            if byte == BLANK_LINE[usize::from(self.head_end)] {
                self.head_end += 1;
                bytes = rest;
            } else {
                self.head_end = 0;
            }
        }
        let body = usize::try_from(self.body - self.written)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        self.written += body as u64;
        &bytes[body..]
    }

    /// Whether the `written` bytes of `bufs` are the rest of this
    /// response, head and body, ending where its body does: so when the
    /// head has not begun to end before and the four bytes before the
    /// body are the head's blank line (a head holds no blank line but its
    /// last). A small response written whole at once is taken so, without
    /// a search; then it is finished.
    fn ends_in(&mut self, bufs: &[io::IoSlice<'_>], written: usize) -> bool {
        let body = self.body - self.written;
        let Some(head) = (written as u64)
            .checked_sub(body)
            .and_then(|h| usize::try_from(h).ok())
        else {
            return false;
        };
        if self.head_end != 0 || head < 4 {
            return false;
        }
        // The four bytes before the body, wherever the slices cut them.
        let mut blank = [0u8; 4];
        let mut got = 0;
        let mut start = 0;
        for buf in bufs {
            let end = start + buf.len();
            let from = (head - 4).max(start);
            let to = head.min(end);
            if from < to {
                blank[from - (head - 4)..to - (head - 4)]
                    .copy_from_slice(&buf[from - start..to - start]);
                got += to - from;
            }
            if end >= head {
                break;
            }
            start = end;
        }
        if got == 4 && blank == *b"\r\n\r\n" {
            self.head_end = 4;
            self.written = self.body;
            return true;
        }
        false
    }

    fn finished(&self) -> bool {
        self.head_end == 4 && self.written == self.body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expected(body: u64) -> Expected<()> {
        Expected {
            ticket: (),
            head_end: 0,
            body,
            written: 0,
        }
    }

    #[test]
    fn the_head_ends_at_its_blank_line_wherever_the_writes_cut_it() {
        let wire = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 304";
        let first = wire.len() - b"HTTP/1.1 304".len();
        for cut in 0..first {
            let mut e = expected(5);
            let rest = e.take(&wire[..cut]);
            assert!(rest.is_empty());
            let rest = e.take(&wire[cut..]);
            assert!(e.finished(), "cut at {cut}");
            assert_eq!(e.written, 5);
            assert_eq!(rest, b"HTTP/1.1 304");
        }
    }

    #[test]
    fn a_blank_line_split_across_writes_is_found() {
        let wire = b"HTTP/1.1 200 OK\r\n\r\r\n\r\nabc";
        for a in 0..wire.len() {
            for b in a..wire.len() {
                let mut e = expected(3);
                let mut rest = Vec::new();
                for part in [&wire[..a], &wire[a..b], &wire[b..]] {
                    rest.extend_from_slice(e.take(part));
                }
                assert!(e.finished() && rest.is_empty(), "cut at {a} and {b}");
            }
        }
    }

    #[test]
    fn a_whole_response_written_at_once_is_taken_without_a_search() {
        let io = |parts: &[&'static [u8]]| -> Vec<io::IoSlice<'static>> {
            parts.iter().map(|p| io::IoSlice::new(p)).collect()
        };
        let head: &[u8] = b"HTTP/1.1 200 OK\r\nx: y\r\n\r\n";
        let mut e = expected(5);
        assert!(e.ends_in(&io(&[head, b"hello"]), head.len() + 5));
        assert!(e.finished());
        // Written in part: not taken so (searched as before).
        let mut e = expected(5);
        assert!(!e.ends_in(&io(&[head, b"hello"]), head.len() + 3));
        // The blank line across two slices, and a body ending like one.
        let mut e = expected(6);
        assert!(e.ends_in(&io(&[b"HTTP/1.1 200 OK\r\n", b"\r\nab\r\n\r\n"]), 25));
        assert!(e.finished());
        // Four bytes before the body that are not a blank line: searched.
        let wire: &[u8] = b"HTTP/1.1 200 OK\r\nx\r\n\r\nyz";
        let mut e = expected(3);
        assert!(!e.ends_in(&io(&[wire]), wire.len()));
        let mut e = expected(2);
        assert!(e.ends_in(&io(&[wire]), wire.len()));
    }

    #[test]
    fn a_body_cut_short_counts_what_was_written() {
        let mut e = expected(10);
        let rest = e.take(b"HTTP/1.1 200 OK\r\n\r\nabc");
        assert!(rest.is_empty() && !e.finished());
        assert_eq!(e.written, 3);
        // A CR inside the head that does not end it.
        let mut e = expected(0);
        assert!(
            e.take(b"HTTP/1.1 204 No\r\r\nx: y\r\n\r\nnext")
                .starts_with(b"next")
        );
        assert!(e.finished());
    }
}

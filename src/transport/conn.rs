//! One connection's life: an optional TLS handshake, the protocol (ALPN,
//! or the HTTP/2 preface in cleartext), hyper's HTTP/1 or HTTP/2
//! connection, and the deadlines and parking the [`Watch`] decides.
//!
//! A cleartext connection gets hyper's state and buffers only once it has
//! sent something, and an idle HTTP/1 connection gives them back after
//! [`super::watch::PARK_AFTER`] (hyper lets it go without closing the socket; the next
//! request starts a new one), so ten thousand idle connections cost their
//! sockets and a small task each.
//!
//! The connection's task sleeps until the earliest deadline. A deadline
//! that moves later (every request moves it) costs no timer change: the
//! sleep wakes at the old one, sees the new one and sleeps again. Only a
//! deadline that moves earlier re-arms the timer.

use super::watch::{
    ABORT, CLOSING_GRACE, DRAIN, DRAIN_LINGER, KEEP, Reason, Watch, instant_of, now_ms,
};
use super::{ConnStats, Handler, Payload, Peer, Shared};
use crate::causal;
use bytes::{Buf, Bytes};
use http::Response;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The cleartext HTTP/2 preface (RFC 9113 3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How a connection's task, or one hyper connection on it, ended.
enum End {
    /// hyper finished the connection; with an error for a head it refused.
    Done(Result<(), BoxError>),
    /// hyper let an idle HTTP/1 connection go without closing the socket.
    Parked,
    TimedOut(Reason),
    Aborted,
}

/// Serves one accepted connection until it ends.
pub(super) async fn serve<H: Handler>(
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    match &shared.tls {
        None => serve_cleartext(stream, peer, watch, shared).await,
        // Boxed: the handshake's state is not carried by cleartext tasks.
        Some(acceptor) => Box::pin(serve_tls(acceptor, stream, peer, watch, shared)).await,
    }
}

/// A TLS connection: the handshake (within the header timeout), then the
/// protocol ALPN chose.
async fn serve_tls<H: Handler>(
    acceptor: &super::tls::Acceptor,
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    let handshake = acceptor.accept(stream);
    let Ok(Ok(tls)) = tokio::time::timeout(shared.limits.header_timeout, handshake).await else {
        ConnStats::count(&shared.stats.tls_failures);
        return;
    };
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    let io = Watched::new(tls, watch.clone());
    let end = if h2 {
        watch.h2.store(true, Ordering::Relaxed);
        Box::pin(run_h2(io, peer, watch, shared)).await
    } else {
        Box::pin(run_h1(io, peer, watch, shared, false)).await.0
    };
    count(end, &peer, shared);
}

/// A cleartext connection: nothing is allocated for it before it sends,
/// and while it is parked.
async fn serve_cleartext<H: Handler>(
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    if let Err(end) = wait_for_bytes(&stream, watch).await {
        return count(end, &peer, shared);
    }
    let h2 = match sniff_preface(&stream, watch).await {
        Ok(h2) => h2,
        Err(end) => return count(end, &peer, shared),
    };
    let mut io = Watched::new(stream, watch.clone());
    if h2 {
        watch.h2.store(true, Ordering::Relaxed);
        return count(
            Box::pin(run_h2(io, peer, watch, shared)).await,
            &peer,
            shared,
        );
    }
    loop {
        // Boxed: hyper's state lives only while it serves, not in the
        // connection's task for as long as the connection is open.
        let (end, parked) = Box::pin(run_h1(io, peer, watch, shared, true)).await;
        let Some(parked) = parked else {
            return count(end, &peer, shared);
        };
        // Bytes hyper read ahead (a pipelined request) are served at once.
        if parked.unread.is_empty()
            && let Err(end) = wait_for_bytes(&parked.inner, watch).await
        {
            return count(end, &peer, shared);
        }
        io = parked;
    }
}

/// Counts how the connection ended.
fn count<H: Handler>(end: End, peer: &Peer, shared: &Shared<H>) {
    match end {
        End::Done(Err(e)) => {
            if let Some(status) = refused_status(&*e) {
                shared.handler.record_refused(status, peer);
            }
        }
        End::TimedOut(Reason::Header) => ConnStats::count(&shared.stats.header_timeouts),
        End::TimedOut(Reason::Idle) => ConnStats::count(&shared.stats.idle_closed),
        End::TimedOut(Reason::Send) => ConnStats::count(&shared.stats.send_timeouts),
        End::Done(Ok(())) | End::Parked | End::TimedOut(_) | End::Aborted => {}
    }
}

/// Waits until the client sends (or closes), within the watch's deadline
/// and its close requests; nothing of hyper's exists meanwhile.
async fn wait_for_bytes(stream: &TcpStream, watch: &Watch) -> Result<(), End> {
    let mut asked = pin!(watch.notify.notified());
    let mut byte = [0u8; 1];
    loop {
        let Some((due, reason)) = watch.due(false) else {
            return Ok(());
        };
        // Bytes first: a request that arrived while this thread was busy
        // is served even when its deadline or a drain is also due by now.
        tokio::select! {
            biased;
            peeked = stream.peek(&mut byte) => {
                return match peeked {
                    Ok(0) => Err(End::Done(Ok(()))),
                    Ok(_) => Ok(()),
                    Err(e) => Err(End::Done(Err(e.into()))),
                };
            }
            () = tokio::time::sleep_until(instant_of(due)) => {
                if now_ms() >= due {
                    return Err(End::TimedOut(reason));
                }
            }
            () = &mut asked => {
                asked.set(watch.notify.notified());
                match watch.close.load(Ordering::Relaxed) {
                    // Nothing in flight: a drain lingers for a request.
                    DRAIN => watch.closing(DRAIN_LINGER),
                    _ => return Err(End::Aborted),
                }
            }
        }
    }
}

/// Whether the client opens with the HTTP/2 preface (prior knowledge).
async fn sniff_preface(stream: &TcpStream, watch: &Watch) -> Result<bool, End> {
    let mut start = [0u8; PREFACE.len()];
    loop {
        let n = stream
            .peek(&mut start)
            .await
            .map_err(|e| End::Done(Err(e.into())))?;
        if n == 0 || start[..n] != PREFACE[..n] {
            return Ok(false);
        }
        if n == PREFACE.len() {
            return Ok(true);
        }
        // Part of the preface: the rest is on its way.
        if let Some((due, reason)) = watch.due(false)
            && now_ms() >= due
        {
            return Err(End::TimedOut(reason));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One hyper HTTP/1 connection on `io`; with `park`, an idle one lets go
/// of `io`, handed back to wait for the next request.
async fn run_h1<H, IO>(
    io: Watched<IO>,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
    park: bool,
) -> (End, Option<Watched<IO>>)
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut conn = shared
        .http1
        .serve_connection(TokioIo::new(io), service(shared, watch, peer));
    let end = drive(Pin::new(&mut conn), watch, park).await;
    if !matches!(end, End::Parked) {
        return (end, None);
    }
    let parts = conn.into_parts();
    let mut io = parts.io.into_inner();
    // A copy: hyper's bytes are a view of its whole read buffer.
    io.unread = Bytes::copy_from_slice(&parts.read_buf);
    (End::Parked, Some(io))
}

/// One hyper HTTP/2 connection on `io`.
async fn run_h2<H, IO>(io: Watched<IO>, peer: Peer, watch: &Arc<Watch>, shared: &Shared<H>) -> End
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = shared
        .http2
        .serve_connection(TokioIo::new(io), service(shared, watch, peer));
    drive(pin!(conn), watch, false).await
}

/// A response, made before hyper asks for it: the handler answers on the
/// spot, so there is nothing to wait for (and nothing to box).
type Responding<H> = std::future::Ready<Result<Response<Sent<Finished<H>>>, Infallible>>;

/// The service hyper calls on a connection: the handler's response, with
/// `Connection: close` on HTTP/1 while the connection drains, and a body
/// that tells the watch when the response has left.
fn service<H: Handler>(
    shared: &Shared<H>,
    watch: &Arc<Watch>,
    peer: Peer,
) -> impl hyper::service::Service<
    http::Request<Incoming>,
    Response = Response<Sent<Finished<H>>>,
    Error = Infallible,
    Future = Responding<H>,
> + Unpin
+ use<H> {
    let handler = shared.handler.clone();
    let watch = watch.clone();
    hyper::service::service_fn(move |request: http::Request<Incoming>| {
        watch.request_began();
        let http1 = request.version() < http::Version::HTTP_2;
        let mut response = handler.handle(request, peer);
        if http1 && watch.close.load(Ordering::Relaxed) != KEEP {
            response.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
        }
        let finished = Finished {
            watch: watch.clone(),
            handler: handler.clone(),
            peer,
        };
        std::future::ready(Ok(response.map(|body| Sent {
            data: (!body.is_empty()).then_some(body),
            _finished: finished,
        })))
    })
}

/// What `drive` needs of a hyper connection.
trait Served {
    /// Serves; ready when the connection is done (an HTTP/1 one without
    /// closing its socket).
    fn poll_served(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>>;
    /// Asks it to finish: HTTP/1 closes once idle, HTTP/2 sends GOAWAY.
    fn finish(self: Pin<&mut Self>);
}

impl<I, S> Served for hyper::server::conn::http1::Connection<I, S>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S: hyper::service::HttpService<Incoming> + Unpin,
    S::Future: Unpin,
    S::Error: Into<BoxError>,
    S::ResBody: 'static,
    <S::ResBody as Body>::Error: Into<BoxError>,
{
    fn poll_served(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.get_mut().poll_without_shutdown(cx).map_err(Into::into)
    }

    fn finish(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S, E> Served for hyper::server::conn::http2::Connection<I, S, E>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S: hyper::service::HttpService<Incoming>,
    S::Error: Into<BoxError>,
    S::ResBody: 'static,
    <S::ResBody as Body>::Error: Into<BoxError>,
    E: hyper::rt::bounds::Http2ServerConnExec<S::Future, S::ResBody>,
{
    fn poll_served(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Future::poll(self, cx).map_err(Into::into)
    }

    fn finish(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// Runs a hyper connection under the watch's deadlines and close requests.
async fn drive<C: Served + ?Sized>(mut conn: Pin<&mut C>, watch: &Watch, park: bool) -> End {
    let mut armed = u64::MAX;
    let mut sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    let mut asked = pin!(watch.notify.notified());
    // hyper was asked to finish; to park, or for being idle too long.
    let mut finishing = false;
    let mut parking = false;
    let mut idle_closed = false;
    poll_fn(|cx| {
        loop {
            if let Poll::Ready(result) = conn.as_mut().poll_served(cx) {
                let keep = watch.close.load(Ordering::Relaxed) == KEEP;
                return Poll::Ready(match result {
                    Ok(()) if parking && keep => End::Parked,
                    Ok(()) if idle_closed => End::TimedOut(Reason::Idle),
                    result => End::Done(result),
                });
            }
            if asked.as_mut().poll(cx).is_ready() {
                asked.set(watch.notify.notified());
                parking = false;
                match watch.close.load(Ordering::Relaxed) {
                    ABORT => return Poll::Ready(End::Aborted),
                    DRAIN if !watch.h2.load(Ordering::Relaxed) => watch.closing(DRAIN_LINGER),
                    _ if !finishing => {
                        finishing = true;
                        watch.closing(CLOSING_GRACE);
                        conn.as_mut().finish();
                    }
                    _ => {}
                }
                continue;
            }
            let Some((due, reason)) = watch.due(park && !finishing) else {
                return Poll::Pending;
            };
            if due < armed || sleep.is_elapsed() {
                armed = due;
                sleep.as_mut().reset(instant_of(due));
            }
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if now_ms() < due {
                continue;
            }
            match reason {
                Reason::Park if !finishing => {
                    finishing = true;
                    parking = true;
                    conn.as_mut().finish();
                }
                Reason::Idle | Reason::Closing if !finishing => {
                    // Closed as a drain closes it: HTTP/2 gets GOAWAY.
                    idle_closed = reason == Reason::Idle;
                    finishing = true;
                    watch.closing(CLOSING_GRACE);
                    conn.as_mut().finish();
                }
                _ => return Poll::Ready(End::TimedOut(reason)),
            }
        }
    })
    .await
}

/// The status hyper answered a refused head with, if it answered one
/// (its rule: a head past the buffer is 431, any other malformed head 400;
/// a target long enough for 414 cannot fit the buffer).
fn refused_status(e: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let e = e.downcast_ref::<hyper::Error>()?;
    if e.is_parse_too_large() {
        Some(431)
    } else if e.is_parse() && !e.is_parse_version_h2() {
        Some(400)
    } else {
        None
    }
}

/// The bytes that refuse a connection past the cap: the handler's answer
/// (503 with `Retry-After`) as an HTTP/1.1 response that closes, made
/// once. It is written without reading the request, so a refused
/// connection costs no task and holds its descriptor for no time.
pub(super) fn refusal(response: &Response<Bytes>) -> Bytes {
    use std::fmt::Write;
    let status = response.status();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in response.headers() {
        if name != http::header::CONNECTION
            && name != http::header::CONTENT_LENGTH
            && let Ok(value) = value.to_str()
        {
            let _ = write!(head, "{name}: {value}\r\n");
        }
    }
    let _ = write!(
        head,
        "content-length: {}\r\nconnection: close\r\n\r\n",
        response.body().len()
    );
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(response.body());
    Bytes::from(bytes)
}

/// Refuses a connection at once: takes what the client already sent (so
/// that closing does not reset the connection before the answer is
/// read), writes the refusal if the socket takes it, and closes.
pub(super) fn refuse(stream: TcpStream, refusal: &[u8]) {
    let mut scratch = [0u8; 4096];
    let _ = stream.try_read(&mut scratch);
    let _ = stream.try_write(refusal);
    let _ = socket2::SockRef::from(&stream).shutdown(std::net::Shutdown::Write);
}

/// The socket as hyper sees it: reads and writes move the watch.
struct Watched<IO> {
    inner: IO,
    watch: Arc<Watch>,
    /// Bytes a parked connection's hyper had read and not used: read first.
    unread: Bytes,
}

impl<IO> Watched<IO> {
    fn new(inner: IO, watch: Arc<Watch>) -> Watched<IO> {
        Watched {
            inner,
            watch,
            unread: Bytes::new(),
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
        self.watch.wrote(&wrote);
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
        self.watch.wrote(&wrote);
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

/// A response body: the handler's bytes, handed over whole (shared with
/// the cache, never copied) or piece by piece, and what to do once it has
/// left.
struct Sent<F> {
    data: Option<Payload>,
    _finished: F,
}

impl<F: Unpin> Body for Sent<F> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let next = match self.data.take() {
            None => None,
            Some(Payload::Whole(data)) => Some(Ok(data)),
            Some(Payload::Pieces(mut pieces)) => {
                let next = pieces.next_piece();
                if pieces.remaining() > 0 {
                    self.data = Some(Payload::Pieces(pieces));
                }
                next
            }
        };
        Poll::Ready(next.map(|piece| piece.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(match &self.data {
            None => 0,
            Some(Payload::Whole(data)) => data.len() as u64,
            Some(Payload::Pieces(pieces)) => pieces.remaining(),
        })
    }
}

/// Dropped with the response body, once hyper has taken all of it (or the
/// connection ended): the request is no longer in flight.
struct Finished<H: Handler> {
    watch: Arc<Watch>,
    handler: Arc<H>,
    peer: Peer,
}

impl<H: Handler> Drop for Finished<H> {
    fn drop(&mut self) {
        self.watch.request_ended();
        self.handler.responded(&self.peer);
    }
}

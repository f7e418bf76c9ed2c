//! One connection's life: an optional TLS handshake, hyper's HTTP/1 or
//! HTTP/2 connection, and the deadlines hyper leaves to the server.
//!
//! A [`Watch`] follows what the connection is doing. The socket's reads
//! and writes ([`Watched`]) and the requests' starts and ends move it:
//!
//! ```text
//!   accept --> HEAD --head complete--> ANSWERING --last response left--> IDLE
//!               ^   (header timeout)     (no deadline)   (keep-alive timeout)
//!               '-----------------------first byte of the next request----'
//! ```
//!
//! A write the client does not take starts the send timeout, whatever the
//! phase. Deadlines are nginx's: a whole head within `--header-timeout`
//! of its first byte (so a head or a body sent a byte at a time is cut
//! off), an idle keep-alive connection for `--keepalive-timeout`, a
//! response that the client stops reading for `--send-timeout`.
//!
//! Closing is asked from outside: shutdown drains (a request in flight
//! finishes; an HTTP/1 connection answers what comes within
//! [`DRAIN_LINGER`] with `Connection: close`, so a client that sends just
//! as the server stops still gets its answer; HTTP/2 gets GOAWAY), and the
//! accept loop reclaims idle connections at the cap (closed at once).
//!
//! The connection's task sleeps until the earliest deadline. A deadline
//! that moves later (every request moves it) costs no timer change: the
//! sleep wakes at the old one, sees the new one and sleeps again. Only a
//! deadline that moves earlier re-arms the timer.

use super::{ConnStats, Handler, Peer, Shared, limits::Limits};
use crate::causal;
use bytes::Bytes;
use http::Response;
use http_body::{Body, Frame, SizeHint};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// How long a connection asked to close (reclaimed, idle, or past the
/// drain's linger) with no request in flight may take to finish writing
/// before it is cut off.
const CLOSING_GRACE: Duration = Duration::from_secs(1);
/// How long a draining HTTP/1 connection with nothing in flight waits for
/// one more request (answered with `Connection: close`) before it is
/// closed: a client that sends as the server closes would otherwise see
/// its request go unanswered.
const DRAIN_LINGER: Duration = Duration::from_secs(1);
/// Idle connections closed at once when the cap is reached.
const RECLAIM_BATCH: usize = 16;

const HEAD: u8 = 0;
const ANSWERING: u8 = 1;
const IDLE: u8 = 2;
const CLOSING: u8 = 3;

const KEEP: u8 = 0;
/// Shutdown: finish what is in flight; HTTP/1 answers requests until its
/// linger with `Connection: close`, HTTP/2 gets GOAWAY.
pub(super) const DRAIN: u8 = 1;
/// Make room at the cap: an idle connection closes now (HTTP/2: GOAWAY).
const RECLAIM: u8 = 2;
/// Close now.
pub(super) const ABORT: u8 = 3;

/// Why a deadline ended a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Header,
    Idle,
    Send,
    Closing,
}

/// Milliseconds since the first call (0 is never returned: it means
/// "none" in the watch's fields).
fn now_ms() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    base.elapsed().as_millis() as u64 + 1
}

fn instant_of(ms: u64) -> tokio::time::Instant {
    static BASE: OnceLock<(u64, tokio::time::Instant)> = OnceLock::new();
    let (at, base) = *BASE.get_or_init(|| (now_ms(), tokio::time::Instant::now()));
    if ms >= at {
        base + Duration::from_millis(ms - at)
    } else {
        base - Duration::from_millis(at - ms)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 4)
}

/// What a connection is doing, and when it must have done it.
pub(super) struct Watch {
    limits: Limits,
    phase: AtomicU8,
    in_flight: AtomicU32,
    /// The phase's deadline (ms, see [`now_ms`]).
    due: AtomicU64,
    /// When a write found the socket full (ms), 0 while writes go through.
    blocked_since: AtomicU64,
    /// KEEP, DRAIN, RECLAIM or ABORT: asked by the accept loop or shutdown.
    close: AtomicU8,
    /// The connection speaks HTTP/2 (it has had an HTTP/2 request).
    h2: AtomicBool,
    notify: Notify,
}

impl Watch {
    pub(super) fn new(limits: Limits) -> Watch {
        Watch {
            limits,
            phase: AtomicU8::new(HEAD),
            in_flight: AtomicU32::new(0),
            due: AtomicU64::new(now_ms() + ms(limits.header_timeout)),
            blocked_since: AtomicU64::new(0),
            close: AtomicU8::new(KEEP),
            h2: AtomicBool::new(false),
            notify: Notify::new(),
        }
    }

    /// Bytes arrived: an idle connection starts its next head's clock.
    fn bytes_read(&self) {
        if self.phase.load(Ordering::Relaxed) == IDLE {
            self.due
                .store(now_ms() + ms(self.limits.header_timeout), Ordering::Relaxed);
            let _ = self
                .phase
                .compare_exchange(IDLE, HEAD, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn request_began(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let _ = self
            .phase
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                (p != CLOSING).then_some(ANSWERING)
            });
    }

    fn request_ended(&self) {
        if self.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            let wait = if self.phase.load(Ordering::Relaxed) == CLOSING {
                CLOSING_GRACE
            } else {
                self.limits.keepalive_timeout
            };
            self.due.store(now_ms() + ms(wait), Ordering::Relaxed);
            let _ =
                self.phase
                    .compare_exchange(ANSWERING, IDLE, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn wrote<T>(&self, result: &Poll<io::Result<T>>) {
        let blocked = self.blocked_since.load(Ordering::Relaxed);
        match result {
            Poll::Pending if blocked == 0 => self.blocked_since.store(now_ms(), Ordering::Relaxed),
            Poll::Ready(_) if blocked != 0 => self.blocked_since.store(0, Ordering::Relaxed),
            _ => {}
        }
    }

    /// The earliest deadline and what it is for; None while a request is
    /// being answered and the client takes what is sent.
    fn due(&self) -> Option<(u64, Reason)> {
        let blocked = self.blocked_since.load(Ordering::Relaxed);
        if blocked != 0 {
            return Some((blocked + ms(self.limits.send_timeout), Reason::Send));
        }
        let reason = match self.phase.load(Ordering::Relaxed) {
            HEAD => Reason::Header,
            IDLE => Reason::Idle,
            // A response still being made or sent is bounded by the
            // send timeout and by shutdown's patience, not by this grace.
            CLOSING if self.in_flight.load(Ordering::Relaxed) == 0 => Reason::Closing,
            _ => return None,
        };
        Some((self.due.load(Ordering::Relaxed), reason))
    }

    /// Idle: no request in flight, waiting for the next head.
    fn idle_since(&self) -> Option<u64> {
        (self.phase.load(Ordering::Relaxed) == IDLE && self.close.load(Ordering::Relaxed) == KEEP)
            .then(|| {
                self.due
                    .load(Ordering::Relaxed)
                    .saturating_sub(ms(self.limits.keepalive_timeout))
            })
    }

    fn ask(&self, how: u8) {
        if self.close.fetch_max(how, Ordering::Relaxed) < how {
            self.notify.notify_one();
        }
    }

    /// Enters the closing phase: what is in flight may finish, within
    /// `grace` when nothing is in flight.
    fn closing(&self, grace: Duration) {
        self.due.store(now_ms() + ms(grace), Ordering::Relaxed);
        self.phase.store(CLOSING, Ordering::Relaxed);
    }
}

/// Every open connection's watch, for reclaiming idle ones at the cap and
/// for shutdown.
#[derive(Default)]
pub(super) struct Registry {
    watches: Mutex<Slots>,
    emptied: Notify,
}

#[derive(Default)]
struct Slots {
    next: u64,
    open: HashMap<u64, Arc<Watch>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.watches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn insert(&self, watch: Arc<Watch>) -> u64 {
        let mut slots = self.lock();
        slots.next += 1;
        let key = slots.next;
        slots.open.insert(key, watch);
        key
    }

    pub(super) fn remove(&self, key: u64) {
        let mut slots = self.lock();
        slots.open.remove(&key);
        if slots.open.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    /// Asks the `wanted` (at least one, at most a batch) longest idle
    /// connections to close; returns how many were asked.
    pub(super) fn reclaim_idle(&self, wanted: usize) -> usize {
        let slots = self.lock();
        let mut idle: Vec<(u64, &Arc<Watch>)> = slots
            .open
            .values()
            .filter_map(|w| w.idle_since().map(|since| (since, w)))
            .collect();
        let take = wanted.clamp(1, RECLAIM_BATCH).min(idle.len());
        if take == 0 {
            return 0;
        }
        idle.select_nth_unstable_by_key(take - 1, |(since, _)| *since);
        for (_, watch) in &idle[..take] {
            watch.ask(RECLAIM);
        }
        take
    }

    /// Asks every connection to finish what it is doing and close.
    pub(super) fn close_all(&self, how: u8) {
        for watch in self.lock().open.values() {
            watch.ask(how);
        }
    }

    pub(super) fn open(&self) -> usize {
        self.lock().open.len()
    }

    /// Waits until no connection is open, or `deadline`; true if none is.
    pub(super) async fn wait_empty(&self, deadline: tokio::time::Instant) -> bool {
        loop {
            let emptied = self.emptied.notified();
            if self.open() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, emptied).await.is_err() {
                return self.open() == 0;
            }
        }
    }
}

/// Serves one accepted connection until it ends.
pub(super) async fn serve<H: Handler>(
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    match &shared.tls {
        None => drive(stream, peer, watch, shared).await,
        Some(acceptor) => {
            let handshake = acceptor.accept(stream);
            match tokio::time::timeout(shared.limits.header_timeout, handshake).await {
                Ok(Ok(tls)) => drive(tls, peer, watch, shared).await,
                _ => ConnStats::count(&shared.stats.tls_failures),
            }
        }
    }
}

/// How a connection's task ended.
enum End {
    /// hyper finished the connection; with an error for a head it refused.
    Done(Result<(), Box<dyn std::error::Error + Send + Sync>>),
    TimedOut(Reason),
    Aborted,
}

/// Runs hyper's connection on `io` under the watch's deadlines.
async fn drive<H, IO>(io: IO, peer: Peer, watch: &Arc<Watch>, shared: &Shared<H>)
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(Watched {
        inner: io,
        watch: watch.clone(),
    });
    let service = {
        let handler = shared.handler.clone();
        let watch = watch.clone();
        hyper::service::service_fn(move |request: http::Request<_>| {
            watch.request_began();
            let http1 = request.version() < http::Version::HTTP_2;
            if !http1 {
                watch.h2.store(true, Ordering::Relaxed);
            }
            let finished = Finished {
                watch: watch.clone(),
                handler: handler.clone(),
                peer,
            };
            let response = handler.clone().handle(request, peer);
            async move {
                let mut response = response.await;
                if http1 && finished.watch.close.load(Ordering::Relaxed) != KEEP {
                    response.headers_mut().insert(
                        http::header::CONNECTION,
                        http::HeaderValue::from_static("close"),
                    );
                }
                Ok::<_, Infallible>(response.map(|body| Sent {
                    data: (!body.is_empty()).then_some(body),
                    _finished: finished,
                }))
            }
        })
    };
    let mut conn = pin!(shared.http.serve_connection(io, service));
    let mut armed = u64::MAX;
    let mut sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    let mut asked = pin!(watch.notify.notified());
    // hyper was asked to finish: HTTP/1 closes once idle, HTTP/2 sends
    // GOAWAY and closes once its streams are done.
    let mut finishing = false;
    let end = poll_fn(|cx| {
        loop {
            if let Poll::Ready(result) = conn.as_mut().poll(cx) {
                return Poll::Ready(End::Done(result));
            }
            if asked.as_mut().poll(cx).is_ready() {
                asked.set(watch.notify.notified());
                match watch.close.load(Ordering::Relaxed) {
                    ABORT => return Poll::Ready(End::Aborted),
                    DRAIN if !watch.h2.load(Ordering::Relaxed) => watch.closing(DRAIN_LINGER),
                    _ if !finishing => {
                        finishing = true;
                        watch.closing(CLOSING_GRACE);
                        conn.as_mut().graceful_shutdown();
                    }
                    _ => {}
                }
                continue;
            }
            let Some((due, reason)) = watch.due() else {
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
            if matches!(reason, Reason::Idle | Reason::Closing) && !finishing {
                if reason == Reason::Idle {
                    ConnStats::count(&shared.stats.idle_closed);
                }
                finishing = true;
                watch.closing(CLOSING_GRACE);
                conn.as_mut().graceful_shutdown();
                continue;
            }
            return Poll::Ready(End::TimedOut(reason));
        }
    })
    .await;
    match end {
        End::Done(Err(e)) => {
            if let Some(status) = refused_status(&*e) {
                shared.handler.record_refused(status);
            }
        }
        End::TimedOut(Reason::Header) => ConnStats::count(&shared.stats.header_timeouts),
        End::TimedOut(Reason::Send) => ConnStats::count(&shared.stats.send_timeouts),
        End::Done(Ok(())) | End::TimedOut(_) | End::Aborted => {}
    }
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
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
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
/// the cache, never copied), and what to do once it has left.
struct Sent<F> {
    data: Option<Bytes>,
    _finished: F,
}

impl<F: Unpin> Body for Sent<F> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.data.take().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
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

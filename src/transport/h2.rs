//! HTTP/2 on the h2 crate, with ccc driving every stream itself.
//!
//! h2 reads and writes the frames, HPACK, flow control and the protocol's
//! limits. What a server adds on top is here, in one task per connection
//! that owns all of its streams (no task per stream):
//!
//! - each request is answered on the spot by the [`Handler`], and its body
//!   is sent as the client's flow-control window allows: a whole body as
//!   views of the same bytes, a body in pieces one piece at a time, only
//!   once the window has room for it;
//! - a stream that makes no progress for `--send-timeout` (the client
//!   gives it no window) is reset, and a connection whose streams all
//!   stalled is sent away with GOAWAY, as nginx's `send_timeout` does;
//!   a socket that takes nothing is the [`Watch`]'s send timeout;
//! - the handler learns how much of each body was sent ([`Delivery`]);
//! - a connection without a stream is idle: closed after
//!   `--keepalive-timeout`, reclaimable at the cap, sent away by a drain.
//!
//! A stream's progress is data the window let through. While a body's
//! next piece cannot be made (memory for it is not free) the stream makes
//! no progress either, so that wait is bounded by the same timeout.

use super::cork::{Cork, Corked};
use super::limits;
use super::watch::{ABORT, CLOSING_GRACE, Reason, Waits, Watch, now_ms};
use super::watched::{End, Watched, until_due};
use super::{ConnStats, Delivery, Handler, Later, Payload, Peer, RequestBody, Shared};
use bytes::Bytes;
use h2::server::{Connection, SendResponse};
use h2::{Reason as H2Reason, SendStream};
use http::{HeaderMap, HeaderValue, Response, header};
use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite};

/// The h2 server settings: ccc's stream and header limits, and the
/// attack defences of [`limits`].
pub(super) fn builder() -> h2::server::Builder {
    let mut builder = h2::server::Builder::new();
    builder
        .max_concurrent_streams(limits::H2_MAX_STREAMS)
        .max_header_list_size(limits::H2_MAX_HEADER_LIST)
        .max_pending_accept_reset_streams(limits::H2_MAX_PENDING_RESETS)
        .max_local_error_reset_streams(Some(limits::H2_MAX_LOCAL_RESETS))
        .max_send_buffer_size(limits::H2_MAX_SEND_BUF);
    builder
}

/// Serves HTTP/2 on `io` until the connection ends.
pub(super) async fn serve<H, IO>(
    io: Watched<IO>,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) -> End
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (io, cork) = Corked::new(io);
    // The preface and SETTINGS, within the header timeout.
    let conn = match until_due(watch, shared.http2.handshake::<_, Bytes>(io)).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return End::Done(Err(e.into())),
        Err(end) => return end,
    };
    let mut driver = Driver {
        conn,
        cork,
        streams: Vec::new(),
        later: Vec::new(),
        peer,
        watch,
        shared,
        last_progress: now_ms(),
        going_away: false,
        idle_closed: false,
    };
    let sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    let asked = pin!(watch.notify.notified());
    let mut waits = Waits::new(watch, sleep, asked);
    poll_fn(|cx| {
        loop {
            while let Poll::Ready(how) = waits.poll_asked(cx) {
                if how == ABORT {
                    return Poll::Ready(driver.abort());
                }
                // A drain, or reclaimed at the cap: GOAWAY, and streams in
                // flight finish.
                driver.go_away();
            }
            if let Poll::Ready(end) = driver.poll(cx) {
                return Poll::Ready(end);
            }
            let Some((due, reason)) = driver.due() else {
                return Poll::Pending;
            };
            ready!(waits.poll_until(cx, due));
            if let Some(end) = driver.deadline(reason) {
                return Poll::Ready(end);
            }
        }
    })
    .await
}

/// What is due next on a connection besides the [`Watch`]'s own deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    Watch(Reason),
    /// The stream that has waited longest for the window gets reset.
    Stall,
}

/// One connection: h2's state and the streams being answered.
struct Driver<'a, H: Handler, IO> {
    conn: Connection<Corked<Watched<IO>>, Bytes>,
    /// Held while a turn answers and sends, released at its end, so the
    /// turn's frames leave in one write.
    cork: Arc<Cork>,
    streams: Vec<Stream<H::Ticket>>,
    /// Deferred requests (uploads) whose answers are being made; empty
    /// on every connection that sends none.
    later: Vec<(Later<H::Ticket>, SendResponse<Bytes>)>,
    peer: Peer,
    watch: &'a Arc<Watch>,
    shared: &'a Shared<H>,
    /// When a stream last sent data, or a request last came.
    last_progress: u64,
    /// GOAWAY was sent: streams in flight finish, then the connection
    /// closes.
    going_away: bool,
    /// Sent away for being idle past `--keepalive-timeout`.
    idle_closed: bool,
}

/// A response being sent.
struct Stream<T> {
    send: SendStream<Bytes>,
    /// What of the body is not yet in `chunk`.
    body: Option<Payload>,
    /// Taken from the body, not yet sent.
    chunk: Bytes,
    /// Bytes still to send, `chunk` included.
    remaining: u64,
    sent: u64,
    /// When it last sent data (or began).
    progress: u64,
    ticket: T,
}

/// What one turn of a stream did.
enum Step {
    /// Sent data, and has more.
    Sent,
    /// Waits for the window, or for its next piece.
    Waiting,
    /// Finished, whole or cut short.
    Done { complete: bool },
}

impl<H, IO> Driver<'_, H, IO>
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// Takes new requests and sends what the windows allow, until nothing
    /// moves, then writes the turn's frames at once; Ready once the
    /// connection has ended.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        self.cork.hold();
        loop {
            // One reading of the clock for what this pass starts and sends:
            // marks of progress, which only the send timeout reads.
            let now = now_ms();
            // Reads the connection's frames; writes them once released.
            if let Poll::Ready(next) = self.conn.poll_accept(cx) {
                self.cork.hold();
                match next {
                    Some(Ok((request, respond))) => self.start(request, respond, now),
                    Some(Err(e)) => {
                        self.cut_short_all();
                        return Poll::Ready(End::Done(Err(e.into())));
                    }
                    None => {
                        self.cut_short_all();
                        return Poll::Ready(if self.idle_closed {
                            End::TimedOut(Reason::Idle)
                        } else {
                            End::Done(Ok(()))
                        });
                    }
                }
                continue;
            }
            let answered = !self.later.is_empty() && self.answer_later(cx, now);
            if self.send(cx, now) || answered {
                self.cork.hold();
                continue;
            }
            if self.cork.gathered() == 0 || !self.cork.is_held() {
                return Poll::Pending;
            }
            // Nothing moves: the next poll writes what the turn gathered,
            // or waits for the socket to take it.
            self.cork.release();
        }
    }

    /// Answers a request and starts sending its response; a deferred one
    /// (an upload) gets its body, and is answered once its future is done.
    fn start(
        &mut self,
        request: http::Request<h2::RecvStream>,
        respond: SendResponse<Bytes>,
        now: u64,
    ) {
        self.watch.request_began();
        self.last_progress = now;
        let (head, body) = request.into_parts();
        let handler = &self.shared.handler;
        if super::may_defer(&**handler, &head) {
            let body = RequestBody::h2(body, self.shared.limits.body_timeout);
            self.later
                .push((handler.handle_later(head, body, self.peer), respond));
            return;
        }
        // The body is never read: dropping it gives its window back.
        drop(body);
        let answered = handler.handle(head, self.peer);
        self.respond(answered, respond, now);
    }

    /// Polls the deferred answers; true if any was sent.
    fn answer_later(&mut self, cx: &mut Context<'_>, now: u64) -> bool {
        let mut answered = false;
        let mut i = 0;
        while i < self.later.len() {
            let (future, _) = &mut self.later[i];
            let Poll::Ready(response) = future.as_mut().poll(cx) else {
                i += 1;
                continue;
            };
            let (_, respond) = self.later.swap_remove(i);
            self.last_progress = now;
            self.respond(response, respond, now);
            answered = true;
        }
        answered
    }

    /// Sends a response's head and starts sending its body.
    fn respond(
        &mut self,
        (response, ticket): (Response<Payload>, H::Ticket),
        mut respond: SendResponse<Bytes>,
        now: u64,
    ) {
        let (mut parts, body) = response.into_parts();
        finish_head(&mut parts.headers, &body);
        let remaining = body.len();
        let head = Response::from_parts(parts, ());
        match respond.send_response(head, remaining == 0) {
            Ok(send) if remaining > 0 => self.streams.push(Stream {
                send,
                body: Some(body),
                chunk: Bytes::new(),
                remaining,
                sent: 0,
                progress: now,
                ticket,
            }),
            sent => self.finished(ticket, 0, sent.is_ok()),
        }
    }

    /// Gives every stream a turn, marking the progress of those that send
    /// at `now`; true if any sent data (which the connection then writes).
    fn send(&mut self, cx: &mut Context<'_>, now: u64) -> bool {
        let mut sent = false;
        let mut i = 0;
        while i < self.streams.len() {
            match self.streams[i].step(cx, now) {
                Step::Sent => {
                    sent = true;
                    self.last_progress = now;
                    i += 1;
                }
                Step::Waiting => i += 1,
                Step::Done { complete } => {
                    sent = true;
                    self.last_progress = now;
                    let stream = self.streams.swap_remove(i);
                    self.finished(stream.ticket, stream.sent, complete);
                }
            }
        }
        sent
    }

    fn finished(&self, ticket: H::Ticket, body_bytes: u64, complete: bool) {
        self.watch.request_ended();
        let delivery = Delivery {
            body_bytes,
            complete,
        };
        self.shared.handler.finished(ticket, delivery);
    }

    /// The next deadline: the watch's (head, idle, a socket that takes
    /// nothing, the grace after GOAWAY), or a stalled stream's.
    fn due(&self) -> Option<(u64, Due)> {
        let watch = self.watch.due(false).map(|(at, r)| (at, Due::Watch(r)));
        let send_timeout = ms(self.shared.limits.send_timeout);
        let stall = self
            .streams
            .iter()
            .map(|s| s.progress)
            .min()
            .map(|since| (since.saturating_add(send_timeout), Due::Stall));
        match (watch, stall) {
            (Some(w), Some(s)) => Some(if s.0 < w.0 { s } else { w }),
            (w, s) => w.or(s),
        }
    }

    /// Acts on a deadline that has passed; Some when the connection ends.
    fn deadline(&mut self, due: Due) -> Option<End> {
        match due {
            Due::Stall => {
                self.reset_stalled();
                None
            }
            Due::Watch(reason @ (Reason::Idle | Reason::Closing)) if !self.going_away => {
                self.idle_closed = reason == Reason::Idle;
                self.go_away();
                None
            }
            Due::Watch(reason) => {
                self.cut_short_all();
                Some(End::TimedOut(reason))
            }
        }
    }

    /// Resets the streams that have made no progress for the send
    /// timeout; when the whole connection made none, sends it away.
    fn reset_stalled(&mut self) {
        let now = now_ms();
        let timeout = ms(self.shared.limits.send_timeout);
        let mut i = 0;
        while i < self.streams.len() {
            if now.saturating_sub(self.streams[i].progress) < timeout {
                i += 1;
                continue;
            }
            let mut stream = self.streams.swap_remove(i);
            stream.send.send_reset(H2Reason::CANCEL);
            ConnStats::count(&self.shared.stats.stalled_streams);
            self.finished(stream.ticket, stream.sent, false);
        }
        if now.saturating_sub(self.last_progress) >= timeout {
            self.go_away();
        }
    }

    /// GOAWAY: no new streams; the connection closes once the streams in
    /// flight are done, or after [`CLOSING_GRACE`] when none is.
    fn go_away(&mut self) {
        if !self.going_away {
            self.going_away = true;
            self.conn.graceful_shutdown();
            self.watch.closing(CLOSING_GRACE);
        }
    }

    fn abort(&mut self) -> End {
        self.cut_short_all();
        End::Aborted
    }

    /// The connection ends: every response not sent whole was cut short.
    fn cut_short_all(&mut self) {
        for stream in std::mem::take(&mut self.streams) {
            self.finished(stream.ticket, stream.sent, false);
        }
    }
}

impl<T> Stream<T> {
    /// Sends what the window allows of the next chunk, marking progress at
    /// `now`. The next piece of a body is made only once the window has
    /// room for some of it, so a stream the client gives no window holds
    /// no piece.
    fn step(&mut self, cx: &mut Context<'_>, now: u64) -> Step {
        let wanted = if self.chunk.is_empty() {
            self.remaining.min(limits::H2_MAX_SEND_BUF as u64) as usize
        } else {
            self.chunk.len()
        };
        self.send.reserve_capacity(wanted);
        let mut window = self.send.capacity();
        if window == 0 {
            match self.send.poll_capacity(cx) {
                Poll::Ready(Some(Ok(n))) => window = n,
                // Reset by the client, or the connection failed.
                Poll::Ready(Some(Err(_)) | None) => return Step::Done { complete: false },
                Poll::Pending => return Step::Waiting,
            }
        }
        if self.chunk.is_empty() {
            match self.next_chunk(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(())) => {
                    self.send.send_reset(H2Reason::INTERNAL_ERROR);
                    return Step::Done { complete: false };
                }
                Poll::Pending => {
                    // Waiting for the piece: a reset meanwhile ends it.
                    return match self.send.poll_reset(cx) {
                        Poll::Pending => Step::Waiting,
                        Poll::Ready(_) => Step::Done { complete: false },
                    };
                }
            }
        }
        let data = self.chunk.split_to(window.min(self.chunk.len()));
        let n = data.len() as u64;
        self.remaining -= n;
        let last = self.remaining == 0;
        if self.send.send_data(data, last).is_err() {
            return Step::Done { complete: false };
        }
        self.sent += n;
        self.progress = now;
        if last {
            Step::Done { complete: true }
        } else {
            Step::Sent
        }
    }

    /// Takes the next chunk of the body; Err for a body that failed or
    /// ended before its length.
    fn next_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
        let next = match self.body.take() {
            Some(Payload::Whole(bytes)) => Some(Ok(bytes)),
            Some(Payload::Pieces(mut pieces)) => {
                let next = pieces.poll_piece(cx);
                self.body = Some(Payload::Pieces(pieces));
                match next {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(next) => next,
                }
            }
            None => None,
        };
        match next {
            Some(Ok(bytes)) if !bytes.is_empty() && bytes.len() as u64 <= self.remaining => {
                self.chunk = bytes;
                Poll::Ready(Ok(()))
            }
            _ => Poll::Ready(Err(())),
        }
    }
}

/// Makes a response head fit for HTTP/2: without `Connection` (RFC 9113
/// 8.2.2; the only connection-specific line ccc's answers carry, on
/// refusals that close an HTTP/1 connection), with `date` (an asset's
/// head is made with it, `Answer::into_response_over`) and with
/// `content-length` (which a HEAD's or a 304's answer already carries).
fn finish_head(headers: &mut HeaderMap, body: &Payload) {
    headers.remove(header::CONNECTION);
    headers.entry(header::DATE).or_insert_with(now_date);
    if !headers.contains_key(header::CONTENT_LENGTH) {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    }
}

/// The `Date` of a response sent now, formatted once a second per thread.
pub(crate) fn now_date() -> HeaderValue {
    thread_local! {
        static DATE: RefCell<(u64, HeaderValue)> =
            const { RefCell::new((u64::MAX, HeaderValue::from_static(""))) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with(|date| {
        let mut date = date.borrow_mut();
        if date.0 != second {
            let text = httpdate::fmt_http_date(now);
            *date = (
                second,
                HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("")),
            );
        }
        date.1.clone()
    })
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 4)
}

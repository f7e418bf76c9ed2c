//! HTTP/1.1 GET and HEAD requests that carry no body, read and answered
//! by ccc itself; every other request is hyper's ([`super::h1`]).
//!
//! Nearly every request a CDN origin gets is such a GET: a head, no
//! body, answered from memory. For it hyper's dispatcher, its body
//! machinery and its header encoder are most of what the transport
//! spends above the kernel, and the delivery ledger must find each
//! response's end in the bytes hyper writes. Here a connection reads a
//! head, hands it to the handler, writes the response's head and body
//! with one `writev`, and knows what it wrote.
//!
//! What is taken here is narrow on purpose, so that framing is never
//! decided twice: a head httparse reads whole, `GET` or `HEAD`, HTTP/1.1,
//! an origin-form target, and none of `Content-Length`,
//! `Transfer-Encoding`, `Expect` or `Upgrade`. A head that is anything
//! else (malformed, too large, with a body, HTTP/1.0) is left unread and
//! the connection goes to hyper, which answers it as it answers every
//! request it refuses (400, 431). A request without a body framing line
//! has no body (RFC 9112 6.3), so the next request starts where its head
//! ends.
//!
//! The connection keeps the transport's rules ([`Watch`]): the header
//! timeout while a head arrives, the send timeout while the client takes
//! nothing, the keep-alive timeout between requests; it answers with
//! `Connection: close` and closes when the client asks or the server
//! drains; it is parked (its buffers freed) after
//! [`super::watch::PARK_AFTER`] idle.

use super::limits::{MAX_HEAD, MAX_HEADERS};
use super::watch::{
    ABORT, CLOSING_GRACE, DRAIN, DRAIN_LINGER, KEEP, RECLAIM, Reason, Waits, Watch,
};
use super::watched::{End, Watched};
use super::{
    Delivery, H1Response, Handler, Payload, Peer, Shared, WrittenLines, has_token, write_line,
};
use bytes::{Buf, Bytes};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Uri, Version};
use std::future::poll_fn;
use std::io::{self, IoSlice, Write};
use std::mem::MaybeUninit;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

/// How much of a head is read at once at first; grown up to [`MAX_HEAD`]
/// for a longer head.
const FIRST_READ: usize = 4096;

/// The head at the start of `buf`, if it is one this module answers.
pub(super) fn first(buf: &[u8]) -> Option<Get> {
    match parse(buf) {
        Parsed::Get(get) => Some(get),
        Parsed::Partial | Parsed::Other => None,
    }
}

/// Answers `first`, the head at the start of `io.unread`, then serves
/// GETs on `io` while they come; hands the connection back parked (idle,
/// or at a head hyper must answer, left in `io.unread`) or ends it.
pub(super) async fn run<H, IO>(
    mut io: Watched<IO>,
    first: Get,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) -> (End, Option<Watched<IO>>)
where
    H: Handler,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let wire = io.wire.take();
    let sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    let asked = pin!(watch.notify.notified());
    let mut guard = Guard {
        watch,
        waits: Waits::new(watch, sleep, asked),
    };
    let mut conn = Conn {
        input: Input::from(std::mem::take(&mut io.unread)),
        status: Vec::new(),
        lines: Vec::new(),
    };
    let mut next = Some(Parsed::Get(first));
    let end = loop {
        match next.take().unwrap_or_else(|| parse(conn.input.filled())) {
            Parsed::Get(get) => {
                if let Err(end) = conn.answer(&mut io, get, peer, &mut guard, shared).await {
                    break end;
                }
            }
            Parsed::Partial if conn.input.filled.len() < MAX_HEAD => {
                match conn.input.read_more(&mut io, &mut guard).await {
                    Ok(true) => {}
                    Ok(false) => break End::Done(Ok(())),
                    Err(end) => break end,
                }
            }
            Parsed::Partial | Parsed::Other => break End::Parked,
        }
    };
    match end {
        End::Parked => {
            io.unread = conn.input.into_unread();
            io.wire = wire;
            (End::Parked, Some(io))
        }
        End::Done(Ok(())) | End::TimedOut(Reason::Idle) => {
            let _ = tokio::time::timeout(CLOSING_GRACE, io.shutdown()).await;
            (end, None)
        }
        end => (end, None),
    }
}

/// A connection's buffers: what was read and not yet answered, and the
/// head of the response being written.
struct Conn {
    input: Input,
    /// A status line other than the common ones.
    status: Vec<u8>,
    /// The header lines.
    lines: Vec<u8>,
}

impl Conn {
    /// Answers `get`, whose head is at the start of the input: Err when
    /// the connection ends with it.
    async fn answer<H, IO>(
        &mut self,
        io: &mut Watched<IO>,
        get: Get,
        peer: Peer,
        guard: &mut Guard<'_, '_>,
        shared: &Shared<H>,
    ) -> Result<(), End>
    where
        H: Handler,
        IO: AsyncRead + AsyncWrite + Unpin,
    {
        let Get {
            parts,
            head_len,
            close,
        } = get;
        self.input.consume(head_len);
        let watch = guard.watch;
        watch.request_began();
        let bodiless_method = parts.method == Method::HEAD;
        self.lines.clear();
        let (response, ticket) = shared.handler.handle_h1(parts, peer, &mut self.lines);
        let H1Response {
            status,
            body,
            wrote,
        } = response;
        let last = close || wrote.close || watch.close.load(Ordering::Relaxed) != KEEP;
        end_head(
            &mut self.lines,
            status,
            &wrote,
            body.len(),
            bodiless_method,
            last,
        );
        let body = (!bodiless_method && may_have_body(status)).then_some(body);
        let Conn {
            input,
            status: status_buf,
            lines,
        } = self;
        let mut out = Out::new([status_line(status, status_buf), lines], body);
        // While the response waits (for the socket, or for memory to make
        // a piece of its body), a client that closes or resets is seen at
        // once, and what it pipelines is kept.
        let sent = guard
            .run(
                |cx| match out.poll_send(io, cx) {
                    Poll::Ready(sent) => Poll::Ready(sent.map_err(|e| End::Done(Err(e.into())))),
                    Poll::Pending => input.poll_gone(io, cx).map(Err),
                },
                false,
            )
            .await
            .and_then(|sent| sent);
        let delivery = Delivery {
            body_bytes: out.body_sent,
            complete: sent.is_ok(),
        };
        watch.request_ended();
        if !input.filled().is_empty() {
            // The next head began in the same read: its clock runs.
            watch.bytes_read();
        }
        shared.handler.finished(ticket, delivery);
        // Reclaimed or cut off while it was written: the connection ends
        // with this response.
        let last = last || watch.close.load(Ordering::Relaxed) >= RECLAIM;
        match sent {
            Ok(()) if last => Err(End::Done(Ok(()))),
            sent => sent,
        }
    }
}

/// The bytes read from the client and not yet answered.
struct Input {
    buf: Vec<u8>,
    filled: std::ops::Range<usize>,
}

impl Input {
    fn from(unread: Bytes) -> Input {
        let mut buf = vec![0; FIRST_READ.max(unread.len())];
        buf[..unread.len()].copy_from_slice(&unread);
        Input {
            buf,
            filled: 0..unread.len(),
        }
    }

    fn filled(&self) -> &[u8] {
        &self.buf[self.filled.clone()]
    }

    fn consume(&mut self, n: usize) {
        self.filled.start += n;
        if self.filled.is_empty() {
            self.filled = 0..0;
        }
    }

    fn into_unread(self) -> Bytes {
        Bytes::copy_from_slice(&self.buf[self.filled])
    }

    /// Reads what the client sends while a response is on its way, as
    /// far as the buffer has room: Ready with how the connection ends
    /// once the client has closed or reset it.
    fn poll_gone<IO: AsyncRead + Unpin>(
        &mut self,
        io: &mut Watched<IO>,
        cx: &mut Context<'_>,
    ) -> Poll<End> {
        while self.filled.end < self.buf.len() {
            let mut room = ReadBuf::new(&mut self.buf[self.filled.end..]);
            match ready!(Pin::new(&mut *io).poll_read(cx, &mut room)) {
                Err(e) => return Poll::Ready(End::Done(Err(e.into()))),
                Ok(()) if room.filled().is_empty() => return Poll::Ready(End::Done(Ok(()))),
                Ok(()) => self.filled.end += room.filled().len(),
            }
        }
        Poll::Pending
    }

    /// Reads what the client sends next, within the watch's deadlines
    /// (parked when idle): false at the end of the stream.
    async fn read_more<IO: AsyncRead + Unpin>(
        &mut self,
        io: &mut Watched<IO>,
        guard: &mut Guard<'_, '_>,
    ) -> Result<bool, End> {
        if self.filled.start > 0 {
            self.buf.copy_within(self.filled.clone(), 0);
            self.filled = 0..self.filled.len();
        }
        if self.filled.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_HEAD);
            self.buf.resize(grown, 0);
        }
        let idle = self.filled.is_empty();
        let read = guard
            .run(
                |cx| {
                    let mut room = ReadBuf::new(&mut self.buf[self.filled.end..]);
                    ready!(Pin::new(&mut *io).poll_read(cx, &mut room))?;
                    Poll::Ready(io::Result::Ok(room.filled().len()))
                },
                idle,
            )
            .await?;
        match read {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.filled.end += n;
                Ok(true)
            }
            Err(e) => Err(End::Done(Err(e.into()))),
        }
    }
}

/// A response on its way: the rest of its head (status line, header
/// lines), then its body.
struct Out<'a> {
    head: [&'a [u8]; 2],
    body: Option<Payload>,
    /// The piece of the body being written.
    piece: Bytes,
    body_sent: u64,
}

impl<'a> Out<'a> {
    fn new(head: [&'a [u8]; 2], body: Option<Payload>) -> Out<'a> {
        Out {
            head,
            body,
            piece: Bytes::new(),
            body_sent: 0,
        }
    }

    /// Writes head and body, a piece at a time, then flushes.
    fn poll_send<IO: AsyncWrite + Unpin>(
        &mut self,
        io: &mut IO,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if self.piece.is_empty() {
                match self.body.take() {
                    Some(Payload::Whole(bytes)) => self.piece = bytes,
                    Some(Payload::Pieces(mut pieces)) => {
                        let next = pieces.poll_piece(cx);
                        if pieces.remaining() > 0 || next.is_pending() {
                            self.body = Some(Payload::Pieces(pieces));
                        }
                        if let Some(piece) = ready!(next) {
                            self.piece = piece?;
                        }
                    }
                    None => {}
                }
            }
            let [status, lines] = self.head;
            if status.is_empty() && lines.is_empty() && self.piece.is_empty() {
                if self.body.is_some() {
                    continue;
                }
                return Pin::new(io).poll_flush(cx);
            }
            let slices = [
                IoSlice::new(status),
                IoSlice::new(lines),
                IoSlice::new(&self.piece),
            ];
            let n = ready!(Pin::new(&mut *io).poll_write_vectored(cx, &slices))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            let mut left = n;
            for part in &mut self.head {
                let taken = left.min(part.len());
                *part = &part[taken..];
                left -= taken;
            }
            self.piece.advance(left);
            self.body_sent += left as u64;
            if self.piece.is_empty() {
                // Written: its memory (reserved of the in-flight budget
                // while a piece is held) goes back before the next is made.
                self.piece = Bytes::new();
            }
        }
    }
}

/// The watch's deadlines and close requests, around one piece of work at
/// a time.
struct Guard<'a, 'w> {
    watch: &'w Watch,
    waits: Waits<'a, 'w>,
}

impl Guard<'_, '_> {
    /// Runs `work` until it is done, a deadline passes or a close cuts
    /// it short. With `park`, an idle connection is parked after
    /// [`super::watch::PARK_AFTER`].
    async fn run<T>(
        &mut self,
        mut work: impl FnMut(&mut Context<'_>) -> Poll<T>,
        park: bool,
    ) -> Result<T, End> {
        poll_fn(|cx| {
            if let Poll::Ready(done) = work(cx) {
                return Poll::Ready(Ok(done));
            }
            self.poll_due(cx, park).map(Err)
        })
        .await
    }

    fn poll_due(&mut self, cx: &mut Context<'_>, park: bool) -> Poll<End> {
        let watch = self.watch;
        while let Poll::Ready(how) = self.waits.poll_asked(cx) {
            match how {
                ABORT => return Poll::Ready(End::Aborted),
                // Reclaimed at the cap: closed now, or once the response
                // being written has left.
                RECLAIM if !watch.answering() => return Poll::Ready(End::Aborted),
                RECLAIM => watch.closing(CLOSING_GRACE),
                // Draining: a request that comes within the linger is
                // answered, with `Connection: close`.
                DRAIN => watch.closing(DRAIN_LINGER),
                _ => {}
            }
        }
        let Some((due, reason)) = watch.due(park) else {
            return Poll::Pending;
        };
        ready!(self.waits.poll_until(cx, due));
        Poll::Ready(match reason {
            Reason::Park => End::Parked,
            // Asked to close, with nothing in flight: closed as the
            // protocol asks.
            Reason::Closing => End::Done(Ok(())),
            reason => End::TimedOut(reason),
        })
    }
}

/// A GET or HEAD this module answers.
pub(super) struct Get {
    parts: http::request::Parts,
    /// Where its head ends in the input.
    head_len: usize,
    /// The client asked to close after it (`Connection: close`).
    close: bool,
}

#[expect(
    clippy::large_enum_variant,
    reason = "made and matched once a request, on the stack; a box would cost an allocation"
)]
enum Parsed {
    Get(Get),
    /// The start of a head, or nothing yet.
    Partial,
    /// A head hyper answers.
    Other,
}

/// Reads the head at the start of `buf`.
fn parse(buf: &[u8]) -> Parsed {
    let mut lines = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let head_len = match request.parse_with_uninit_headers(buf, &mut lines) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Other,
    };
    let method = match request.method {
        Some("GET") => Method::GET,
        Some("HEAD") => Method::HEAD,
        _ => return Parsed::Other,
    };
    let (Some(1), Some(target)) = (request.version, request.path) else {
        return Parsed::Other;
    };
    if !target.starts_with('/') {
        return Parsed::Other;
    }
    // One copy of the head, which the target and the values share.
    let head = Bytes::copy_from_slice(&buf[..head_len]);
    let shared = |part: &[u8]| head.slice(offset_in(buf, part)..offset_in(buf, part) + part.len());
    let Ok(uri) = Uri::from_maybe_shared(shared(target.as_bytes())) else {
        return Parsed::Other;
    };
    let mut headers = HeaderMap::with_capacity(request.headers.len());
    let mut close = false;
    for line in request.headers.iter() {
        let Ok(name) = HeaderName::from_bytes(line.name.as_bytes()) else {
            return Parsed::Other;
        };
        match name {
            header::CONTENT_LENGTH
            | header::TRANSFER_ENCODING
            | header::EXPECT
            | header::UPGRADE => {
                return Parsed::Other;
            }
            header::CONNECTION => close |= has_token(line.value, b"close"),
            _ => {}
        }
        let Ok(value) = HeaderValue::from_maybe_shared(shared(line.value)) else {
            return Parsed::Other;
        };
        headers.append(name, value);
    }
    let mut parts = http::Request::new(()).into_parts().0;
    parts.method = method;
    parts.uri = uri;
    parts.version = Version::HTTP_11;
    parts.headers = headers;
    Parsed::Get(Get {
        parts,
        head_len,
        close,
    })
}

/// Where `part`, a slice of `buf`, starts in it.
fn offset_in(buf: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - buf.as_ptr() as usize
}

/// Whether a response with `status` sends a body (RFC 9110 6.4.1).
fn may_have_body(status: StatusCode) -> bool {
    !matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED)
}

/// The status line of a response with `status`: a constant for the
/// common ones, else written into `buf`.
fn status_line(status: StatusCode, buf: &mut Vec<u8>) -> &[u8] {
    match status {
        StatusCode::OK => b"HTTP/1.1 200 OK\r\n",
        StatusCode::NOT_MODIFIED => b"HTTP/1.1 304 Not Modified\r\n",
        StatusCode::NOT_FOUND => b"HTTP/1.1 404 Not Found\r\n",
        _ => {
            buf.clear();
            let reason = status.canonical_reason().unwrap_or("Unknown");
            let _ = write!(buf, "HTTP/1.1 {} {reason}\r\n", status.as_str());
            buf
        }
    }
}

/// Ends the header `lines` of a response with what the transport adds,
/// as hyper does: `Content-Length` when the handler wrote none,
/// `Connection: close` when `last`, `Date`, and the blank line.
fn end_head(
    lines: &mut Vec<u8>,
    status: StatusCode,
    wrote: &WrittenLines,
    body_len: u64,
    bodiless_method: bool,
    last: bool,
) {
    // A HEAD's empty body says nothing of the length.
    if !wrote.content_length && may_have_body(status) && (body_len > 0 || !bodiless_method) {
        let _ = write!(lines, "content-length: {body_len}\r\n");
    }
    if last && !wrote.connection {
        lines.extend_from_slice(b"connection: close\r\n");
    }
    if !wrote.date {
        write_line(lines, "date", super::now_date().as_bytes());
    }
    lines.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(head: &[u8]) -> Get {
        match parse(head) {
            Parsed::Get(get) => get,
            Parsed::Partial => panic!("partial: {:?}", String::from_utf8_lossy(head)),
            Parsed::Other => panic!("other: {:?}", String::from_utf8_lossy(head)),
        }
    }

    fn is_other(head: &[u8]) -> bool {
        matches!(parse(head), Parsed::Other)
    }

    #[test]
    fn a_plain_get_is_read_whole_and_where_it_ends_is_known() {
        let wire =
            b"GET /a/b?c=d HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip\r\n\r\nGET /next";
        let get = plain(wire);
        assert_eq!(get.head_len, wire.len() - b"GET /next".len());
        assert_eq!(get.parts.method, Method::GET);
        assert_eq!(get.parts.uri, "/a/b?c=d");
        assert_eq!(get.parts.version, Version::HTTP_11);
        assert_eq!(get.parts.headers["host"], "x");
        assert_eq!(get.parts.headers["accept-encoding"], "br, gzip");
        assert!(!get.close);
        let head = plain(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(head.parts.method, Method::HEAD);
    }

    #[test]
    fn repeated_lines_and_bytes_that_are_not_utf8_are_kept() {
        let get = plain(b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\nX-B: caf\xe9\r\n\r\n");
        let values: Vec<_> = get.parts.headers.get_all("x-a").iter().collect();
        assert_eq!(values, ["1", "2"]);
        assert_eq!(get.parts.headers["x-b"].as_bytes(), b"caf\xe9");
    }

    #[test]
    fn connection_close_is_heard_in_any_case_and_list() {
        assert!(plain(b"GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n").close);
        assert!(plain(b"GET / HTTP/1.1\r\nConnection: x\r\nConnection: close\r\n\r\n").close);
        assert!(!plain(b"GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n").close);
        assert!(!plain(b"GET / HTTP/1.1\r\nConnection: closed\r\n\r\n").close);
    }

    #[test]
    fn what_hyper_must_decide_is_left_to_it() {
        // A body, or a line that frames one, or asks for more than an
        // answer.
        assert!(is_other(b"POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"));
        assert!(is_other(b"PUT / HTTP/1.1\r\n\r\n"));
        assert!(is_other(b"GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"));
        assert!(is_other(
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        ));
        assert!(is_other(b"GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n"));
        assert!(is_other(b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"));
        // Another version, or a target not in origin form.
        assert!(is_other(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(is_other(b"GET http://x/ HTTP/1.1\r\n\r\n"));
        assert!(is_other(b"GET * HTTP/1.1\r\n\r\n"));
        // Malformed: hyper answers 400.
        assert!(is_other(b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"));
        assert!(is_other(b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n"));
        assert!(is_other(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"));
        assert!(is_other(b"GET / HTTP/1.1\r\n folded: x\r\n\r\n"));
        // Too many lines: hyper answers 431.
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("x-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert!(is_other(&many));
    }

    #[test]
    fn a_head_on_its_way_is_partial() {
        for wire in [
            &b""[..],
            b"GE",
            b"GET / HTTP/1.1\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n",
        ] {
            assert!(matches!(parse(wire), Parsed::Partial), "{wire:?}");
        }
    }

    fn ended(status: StatusCode, wrote: WrittenLines, body: u64, head: bool, last: bool) -> String {
        let mut lines = b"server: ccc\r\n".to_vec();
        end_head(&mut lines, status, &wrote, body, head, last);
        let text = String::from_utf8(lines).unwrap();
        // The date changes: only its presence is compared.
        let date = text.find("date: ").expect("a date line");
        let end = date + text[date..].find("\r\n").unwrap();
        format!("{}date: D{}", &text[..date], &text[end..])
    }

    #[test]
    fn the_transport_adds_what_the_handler_left_out_as_hyper_does() {
        let none = WrittenLines::default();
        let ok = StatusCode::OK;
        assert_eq!(
            ended(ok, none, 5, false, false),
            "server: ccc\r\ncontent-length: 5\r\ndate: D\r\n\r\n"
        );
        assert_eq!(
            ended(ok, none, 0, false, true),
            "server: ccc\r\ncontent-length: 0\r\nconnection: close\r\ndate: D\r\n\r\n"
        );
        // A HEAD's empty body says nothing of the length; a 304 or a 204
        // has none.
        assert_eq!(
            ended(ok, none, 0, true, false),
            "server: ccc\r\ndate: D\r\n\r\n"
        );
        assert_eq!(
            ended(ok, none, 7, true, false),
            "server: ccc\r\ncontent-length: 7\r\ndate: D\r\n\r\n"
        );
        assert_eq!(
            ended(StatusCode::NOT_MODIFIED, none, 0, false, false),
            "server: ccc\r\ndate: D\r\n\r\n"
        );
        assert_eq!(
            ended(StatusCode::NO_CONTENT, none, 0, false, false),
            "server: ccc\r\ndate: D\r\n\r\n"
        );
        // What the handler wrote is not written twice.
        let wrote = WrittenLines {
            content_length: true,
            connection: true,
            ..Default::default()
        };
        assert_eq!(
            ended(ok, wrote, 5, false, true),
            "server: ccc\r\ndate: D\r\n\r\n"
        );
    }

    #[test]
    fn status_lines_name_their_reason() {
        let mut buf = Vec::new();
        assert_eq!(
            status_line(StatusCode::OK, &mut buf),
            b"HTTP/1.1 200 OK\r\n"
        );
        assert_eq!(
            status_line(StatusCode::RANGE_NOT_SATISFIABLE, &mut buf),
            b"HTTP/1.1 416 Range Not Satisfiable\r\n"
        );
        assert_eq!(
            status_line(StatusCode::from_u16(599).unwrap(), &mut buf),
            b"HTTP/1.1 599 Unknown\r\n"
        );
    }

    /// A socket that takes at most `step` bytes a write, and every other
    /// write not at all (it wakes the writer at once).
    struct Narrow {
        taken: Vec<u8>,
        step: usize,
        calls: usize,
    }

    impl AsyncWrite for Narrow {
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
            self.calls += 1;
            if self.calls.is_multiple_of(2) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let mut n = 0;
            for buf in bufs {
                let take = buf.len().min(self.step - n);
                self.taken.extend_from_slice(&buf[..take]);
                n += take;
            }
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// A body in pieces of three bytes, the first not ready at once, each
    /// made only once the one before it has been let go (as the in-flight
    /// budget's pieces are).
    struct Threes {
        left: Bytes,
        waited: bool,
        held: Arc<()>,
    }

    /// A piece's bytes, counted while held.
    struct Held(
        Bytes,
        #[expect(dead_code, reason = "counted, never read")] Arc<()>,
    );

    impl AsRef<[u8]> for Held {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    impl super::super::Pieces for Threes {
        fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
            if !self.waited {
                self.waited = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            assert_eq!(
                Arc::strong_count(&self.held),
                1,
                "a written piece is still held"
            );
            if self.left.is_empty() {
                return Poll::Ready(None);
            }
            let n = self.left.len().min(3);
            let piece = Held(self.left.split_to(n), self.held.clone());
            Poll::Ready(Some(Ok(Bytes::from_owner(piece))))
        }

        fn remaining(&self) -> u64 {
            self.left.len() as u64
        }
    }

    #[tokio::test]
    async fn a_response_is_written_whole_however_the_socket_takes_it() {
        let body = &b"0123456789abcdef"[..];
        for step in 1..40 {
            for whole in [true, false] {
                let payload = if whole {
                    Payload::Whole(Bytes::from_static(body))
                } else {
                    Payload::Pieces(Box::new(Threes {
                        left: Bytes::from_static(body),
                        waited: false,
                        held: Arc::new(()),
                    }))
                };
                let mut socket = Narrow {
                    taken: Vec::new(),
                    step,
                    calls: 0,
                };
                let mut out = Out::new([b"HTTP/1.1 200 OK\r\n", b"a: b\r\n\r\n"], Some(payload));
                poll_fn(|cx| out.poll_send(&mut socket, cx)).await.unwrap();
                let mut wire = b"HTTP/1.1 200 OK\r\na: b\r\n\r\n".to_vec();
                wire.extend_from_slice(body);
                assert_eq!(socket.taken, wire, "step {step}, whole {whole}");
                assert_eq!(out.body_sent, body.len() as u64);
            }
        }
    }
}

//! One connection's life: an optional TLS handshake, the protocol (ALPN,
//! or the HTTP/2 preface in cleartext), then HTTP/1 (plain GETs by
//! [`super::h1_get`], the rest by hyper, [`super::h1`]) or HTTP/2 on the
//! h2 crate ([`super::h2`]), under the deadlines and close requests of its
//! [`Watch`].
//!
//! Nothing here polls: the task sleeps until the socket is readable, a
//! deadline is due or the accept loop or shutdown asks it to close. A
//! client that closes is noticed at once, whatever it had sent (part of a
//! head, of the HTTP/2 preface or of a TLS handshake).
//!
//! An HTTP/1 connection (cleartext or TLS) gets its reader's state and
//! buffers (hyper's, or `h1_get`'s for a plain GET) only once it has sent
//! a whole request head, and gives them back after
//! [`super::watch::PARK_AFTER`] idle (hyper lets it go without closing the
//! socket; the next request starts a new one), so an idle connection costs
//! its socket, its TLS state and a small task.

use super::h1::Ledger;
use super::limits::{MAX_HEAD, MAX_HEADERS};
use super::watch::{DRAIN, DRAIN_LINGER, Reason, Watch, instant_of, now_ms};
use super::watched::{End, Watched, passed, sleep_until_due, until_due};
use super::{ConnStats, Handler, Peer, Shared};
use bytes::Bytes;
use http::Response;
use std::future::poll_fn;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The cleartext HTTP/2 preface (RFC 9113 3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Serves one accepted connection until it ends.
pub(super) async fn serve<H: Handler>(
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    // Boxed, either way: the task holds a pointer, and each kind of
    // connection only the state it uses.
    match &shared.tls {
        None => Box::pin(serve_cleartext(stream, peer, watch, shared)).await,
        Some(acceptor) => Box::pin(serve_tls(acceptor, stream, peer, watch, shared)).await,
    }
}

/// A TLS connection: the handshake (within the header timeout, and
/// reclaimable at the cap while it lasts), then the protocol ALPN chose.
async fn serve_tls<H: Handler>(
    acceptor: &super::tls::Acceptor,
    stream: TcpStream,
    peer: Peer,
    watch: &Arc<Watch>,
    shared: &Shared<H>,
) {
    // Boxed, as the stream after it: the handshake's state is freed once
    // it is done, and an idle connection's task holds pointers only.
    let handshake = Box::pin(until_due(watch, acceptor.accept(stream)));
    let tls = match handshake.await {
        Ok(Ok(tls)) => Box::new(tls),
        Ok(Err(_)) | Err(End::TimedOut(_)) => {
            return ConnStats::count(&shared.stats.tls_failures);
        }
        Err(end) => return count(end, &peer, shared),
    };
    let h2 = tls.is_h2();
    let io = Watched::new(tls, watch.clone());
    if h2 {
        watch.h2.store(true, Ordering::Relaxed);
        let end = Box::pin(super::h2::serve(io, peer, watch, shared)).await;
        return count(end, &peer, shared);
    }
    serve_h1(io, peer, watch, shared).await;
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
    let (h2, start) = match sniff_preface(&stream, watch).await {
        Ok(sniffed) => sniffed,
        Err(end) => return count(end, &peer, shared),
    };
    let mut io = Watched::new(stream, watch.clone());
    io.unread = start;
    if h2 {
        watch.h2.store(true, Ordering::Relaxed);
        let end = Box::pin(super::h2::serve(io, peer, watch, shared)).await;
        return count(end, &peer, shared);
    }
    serve_h1(io, peer, watch, shared).await;
}

/// HTTP/1 on `io` until the connection ends: `h1_get` while plain GETs
/// come, hyper for any other head, parked (their state dropped) while the
/// client is idle.
async fn serve_h1<H, IO>(mut io: Watched<IO>, peer: Peer, watch: &Arc<Watch>, shared: &Shared<H>)
where
    H: Handler,
    IO: Socket + AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let ledger = Arc::new(Ledger::new(shared.handler.clone(), watch.clone()));
    io.wire = Some(ledger.clone());
    let end = loop {
        if let Err(end) = gather_head(&mut io, watch).await {
            break end;
        }
        // Boxed: a protocol's state lives only while it serves, not in
        // the connection's task for as long as the connection is open.
        let (end, parked) = if let Some(first) = super::h1_get::first(&io.unread) {
            Box::pin(super::h1_get::run(io, first, peer, watch, shared)).await
        } else {
            Box::pin(super::h1::run(io, peer, watch, shared, &ledger)).await
        };
        let Some(parked) = parked else {
            break end;
        };
        // Bytes hyper read ahead (a pipelined request) are served at once.
        if parked.unread.is_empty()
            && !parked.inner.holds_unread()
            && let Err(end) = wait_for_bytes(parked.inner.tcp(), watch).await
        {
            break end;
        }
        io = parked;
    };
    ledger.close();
    count(end, &peer, shared);
}

/// The socket under a connection's stream, which a parked connection
/// waits on, and whether the stream holds bytes already read from it.
trait Socket {
    fn tcp(&self) -> &TcpStream;
    fn holds_unread(&self) -> bool;
}

impl Socket for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
    fn holds_unread(&self) -> bool {
        false
    }
}

impl Socket for Box<super::tls::Stream> {
    fn tcp(&self) -> &TcpStream {
        super::tls::Stream::tcp(self)
    }
    fn holds_unread(&self) -> bool {
        super::tls::Stream::holds_unread(self)
    }
}

/// Counts how the connection ended.
pub(super) fn count<H: Handler>(end: End, peer: &Peer, shared: &Shared<H>) {
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

/// Reads until `io.unread` holds a whole request head, or one hyper must
/// refuse (malformed, or past [`MAX_HEAD`]): hyper's buffers (8 KiB to
/// read, 8 KiB to write, more as a head trickles in) then exist only once
/// there is a request to answer, and a client that sends its head a line
/// at a time holds no more than it has sent (nginx reads a head into a
/// 1 KiB buffer first). Within the watch's deadline and close requests,
/// as [`wait_for_bytes`].
async fn gather_head<IO: AsyncRead + Unpin>(
    io: &mut Watched<IO>,
    watch: &Watch,
) -> Result<(), End> {
    let mut head = Vec::from(std::mem::take(&mut io.unread));
    let mut asked = pin!(watch.notify.notified());
    let gathered = loop {
        if !head_is_partial(&head) {
            break Ok(());
        }
        let due = watch.due(false);
        tokio::select! {
            biased;
            read = poll_fn(|cx| read_more(io, &mut head, cx)) => match read {
                Ok(0) => break Err(End::Done(Ok(()))),
                Ok(_) => {}
                Err(e) => break Err(End::Done(Err(e.into()))),
            },
            () = sleep_until_due(due) => {
                if let Some(reason) = passed(due) {
                    break Err(End::TimedOut(reason));
                }
            }
            () = &mut asked => {
                asked.set(watch.notify.notified());
                match watch.close.load(Ordering::Relaxed) {
                    // A head on its way has the linger to arrive.
                    DRAIN => watch.closing(DRAIN_LINGER),
                    _ => break Err(End::Aborted),
                }
            }
        }
    };
    io.unread = Bytes::from(head);
    gathered
}

/// Whether `head` is the start of a request head that may still be
/// completed: hyper's own parser (httparse) says so, and it is within
/// [`MAX_HEAD`].
fn head_is_partial(head: &[u8]) -> bool {
    if head.is_empty() {
        return true;
    }
    if head.len() >= MAX_HEAD {
        return false;
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let parsed = httparse::Request::new(&mut headers).parse(head);
    matches!(parsed, Ok(httparse::Status::Partial))
}

/// One read from `io`, appended to `head`: how many bytes came (0 at the
/// end of the stream). The read's buffer lives on the stack only while the
/// read is polled, not in the waiting task.
fn read_more<IO: AsyncRead + Unpin>(
    io: &mut Watched<IO>,
    head: &mut Vec<u8>,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    let mut chunk = [0u8; 4096];
    let mut buf = ReadBuf::new(&mut chunk);
    ready!(Pin::new(io).poll_read(cx, &mut buf))?;
    head.extend_from_slice(buf.filled());
    Poll::Ready(Ok(buf.filled().len()))
}

/// Whether the client opens with the HTTP/2 preface (prior knowledge),
/// and the bytes read to tell, which the protocol then reads first. The
/// bytes are read, not peeked, so that a client that sends part of the
/// preface and closes is seen closing at once.
async fn sniff_preface(stream: &TcpStream, watch: &Watch) -> Result<(bool, Bytes), End> {
    let mut start = [0u8; PREFACE.len()];
    let mut have = 0;
    loop {
        match stream.try_read(&mut start[have..]) {
            Ok(0) => return Err(End::Done(Ok(()))),
            Ok(n) => {
                have += n;
                if start[..have] != PREFACE[..have] || have == PREFACE.len() {
                    let h2 = start[..] == PREFACE[..];
                    return Ok((h2, Bytes::copy_from_slice(&start[..have])));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Part of the preface: the rest is on its way, or not.
                until_due(watch, stream.readable())
                    .await?
                    .map_err(|e| End::Done(Err(e.into())))?;
            }
            Err(e) => return Err(End::Done(Err(e.into()))),
        }
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

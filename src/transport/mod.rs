//! `ccc serve`'s transport: HTTP/1.1 and HTTP/2 (cleartext or over TLS)
//! by hyper, on a tokio runtime. What is ccc's own here is the policy
//! around hyper's connections, nginx's model:
//!
//! ```text
//! listeners (bound, --reuse-port,      accept loop: cap, reclaim idle,
//!  or passed by systemd) ------------> EMFILE backoff, 503 past the cap
//!                                         |
//!                     one task per connection ([`conn`]): TLS handshake
//!                     ([`tls`]), HTTP/1 or HTTP/2 by ALPN or preface;
//!                     HTTP/1: plain GETs read here ([`h1_get`]), the rest
//!                     by hyper; parked while idle
//!                                         |      ^ deadlines, close requests
//!                                         |      | ([`watch`]: head, keep-alive,
//!                                         v      | send; drain, reclaim)
//!                     the [`Handler`] (serve/): a request in, a response out
//! ```
//!
//! A request is answered on the spot, on the runtime thread that read it,
//! and its body is never read; except a request the handler
//! [defers](Handler::defers) (an upload), which gets its body as a stream
//! (`body`) and is answered by a future once its work, done off the
//! runtime's threads, is over. Only requests other than GET and HEAD are
//! asked whether they are deferred, so the common path pays nothing.
//!
//! - **hyper** reads and writes HTTP: framing on raw bytes (a header that
//!   is not UTF-8 never hides a `Content-Length`), head size limits
//!   answered 431/400, HTTP/2 with its stream and reset limits.
//! - **[`h1_get`]** answers the one request a CDN gets nearly always, an
//!   HTTP/1.1 GET or HEAD with no body, without hyper's dispatcher and
//!   header map: the handler writes the head's lines as text
//!   ([`Handler::handle_h1`]). Any head that is anything else goes to
//!   hyper, which alone decides framing and refusals.
//! - **tokio** multiplexes every connection onto a few threads, so an idle
//!   or slow connection costs a few KiB and no thread.
//! - **rustls** terminates TLS (1.2 and 1.3, ALPN `h2` and `http/1.1`),
//!   through its unbuffered API: `tls::Stream` holds the record buffers
//!   and frees them while they are empty.
//!
//! What hyper leaves to a server is here: how many connections, how long
//! each may take to send a head or to take a response, which idle ones go
//! first when the cap is reached (nginx "reusing connections"), what an
//! idle connection keeps, and a shutdown that stops accepting, lets every
//! request in flight finish (HTTP/2 gets GOAWAY) and closes idle
//! connections.

mod body;
mod conn;
mod cork;
mod h1;
mod h1_get;
mod h2;
pub(crate) mod holder;
pub(crate) mod limits;
pub(crate) mod listen;
pub(crate) mod tls;
mod watch;
mod watched;

pub(crate) use body::{BodyError, RequestBody};
pub(crate) use h2::now_date;
pub use limits::Limits;
pub(crate) use limits::OpenFiles;

use bytes::Bytes;
use http::Response;
use hyper::server::conn::http1;
use serde::Serialize;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch as signal;
use watch::{Registry, Watch};

/// The `Server` header of every response.
pub(crate) const SERVER: &str = concat!("ccc/", env!("CARGO_PKG_VERSION"));

/// Largest request head (request line and header lines together), read
/// into one buffer; past it hyper answers 431. A header line alone past
/// [`limits::MAX_HEADER_LINE`] is answered 431 by the handler.
const MAX_HEAD: usize = limits::MAX_HEAD;

/// A response body as the handler hands it over.
pub enum Payload {
    /// Bytes in memory, sent as they are (shared, never copied by the
    /// transport).
    Whole(Bytes),
    /// Pieces made one at a time as the connection takes them, so that
    /// memory holds about one piece per response however big the body,
    /// and none while the client takes nothing.
    Pieces(Box<dyn Pieces>),
}

/// A body made piece by piece (a file read from the catalog, a stream
/// decoded as it is sent). A piece is asked for only when the connection
/// can send it. An error ends the response short, which closes the
/// connection (HTTP/1) or resets the stream (HTTP/2), so a client never
/// takes a partial body for a whole.
pub trait Pieces: Send + 'static {
    /// The next piece, None once `remaining` is 0; Pending while the piece
    /// cannot be made yet (memory for it is not free), with `cx` woken
    /// when it can.
    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>>;
    /// The bytes still to come.
    fn remaining(&self) -> u64;
}

impl Payload {
    /// The bytes of a whole body (a test's view of what is sent).
    #[cfg(test)]
    pub fn into_whole(self) -> Bytes {
        match self {
            Payload::Whole(bytes) => bytes,
            Payload::Pieces(_) => panic!("a body sent in pieces"),
        }
    }

    /// The bytes still to send.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Payload::Whole(bytes) => bytes.len() as u64,
            Payload::Pieces(pieces) => pieces.remaining(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An answer made later: for a request the handler [defers](Handler::defers).
pub(crate) type Later<T> = std::pin::Pin<Box<dyn Future<Output = (Response<Payload>, T)> + Send>>;

/// Whether `head` may be deferred: asked of the handler only for methods
/// other than GET and HEAD, which are always answered on the spot.
fn may_defer<H: Handler>(handler: &H, head: &http::request::Parts) -> bool {
    head.method != http::Method::GET && head.method != http::Method::HEAD && handler.defers(head)
}

/// What answers requests: serve's routing, cache and store.
pub trait Handler: Send + Sync + 'static {
    /// What the handler keeps of a request until its response has left:
    /// what the access log and the counters record then.
    type Ticket: Send + 'static;

    /// The response to the request `head` (its body is never read), made
    /// on the runtime thread that read it, and the ticket that
    /// [`Handler::finished`] gets back.
    fn handle(&self, head: http::request::Parts, peer: Peer) -> (Response<Payload>, Self::Ticket);

    /// [`Handler::handle`] for an HTTP/1.1 GET or HEAD: the response's
    /// header lines are written into `lines` as HTTP/1.1 text, without a
    /// header map. By default the response is made by `handle` and its
    /// map written out.
    fn handle_h1(
        &self,
        head: http::request::Parts,
        peer: Peer,
        lines: &mut Vec<u8>,
    ) -> (H1Response, Self::Ticket) {
        let (response, ticket) = self.handle(head, peer);
        (H1Response::written(response, lines), ticket)
    }

    /// Whether the request `head` (never a GET or a HEAD) is answered by
    /// [`Handler::handle_later`], with its body; false by default.
    fn defers(&self, _head: &http::request::Parts) -> bool {
        false
    }

    /// The answer to a deferred request, made by a future that may read
    /// `body` and wait for work done elsewhere (it must not block the
    /// runtime thread that polls it). The connection waits for it: over
    /// HTTP/1 the next request is read once it is sent, over HTTP/2 other
    /// streams go on meanwhile.
    fn handle_later(
        &self,
        head: http::request::Parts,
        body: RequestBody,
        peer: Peer,
    ) -> Later<Self::Ticket> {
        drop(body);
        let answered = self.handle(head, peer);
        Box::pin(std::future::ready(answered))
    }

    /// Called once per handled request, when its response has left or
    /// can no longer leave: `delivery` says how much of the body the
    /// connection wrote.
    fn finished(&self, ticket: Self::Ticket, delivery: Delivery);

    /// The answer to a connection past the cap: 503 with `Retry-After`.
    fn over_capacity(&self) -> Response<Bytes>;

    /// Counts (and logs) a response the transport gave itself to `peer`:
    /// 503 past the cap, or hyper's answer to a head it refused (431, 400).
    fn record_refused(&self, status: u16, peer: &Peer);
}

/// A response whose header lines are already HTTP/1.1 text
/// ([`Handler::handle_h1`]); the transport writes its status line before
/// them and, after them, what they lack of `Content-Length`, `Date` and
/// `Connection`.
pub struct H1Response {
    pub status: http::StatusCode,
    pub body: Payload,
    /// What the lines hold of the ones the transport would add.
    pub wrote: WrittenLines,
}

/// Which of the lines the transport adds a handler wrote itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrittenLines {
    pub content_length: bool,
    pub date: bool,
    pub connection: bool,
    /// A `Connection` line says `close`: the connection ends after it.
    pub close: bool,
}

impl H1Response {
    /// `response`, its header map written into `lines`.
    pub fn written(response: Response<Payload>, lines: &mut Vec<u8>) -> H1Response {
        let (head, body) = response.into_parts();
        let mut wrote = WrittenLines::default();
        for (name, value) in &head.headers {
            match *name {
                http::header::CONTENT_LENGTH => wrote.content_length = true,
                http::header::DATE => wrote.date = true,
                http::header::CONNECTION => {
                    wrote.connection = true;
                    wrote.close |= has_token(value.as_bytes(), b"close");
                }
                _ => {}
            }
            write_line(lines, name.as_str(), value.as_bytes());
        }
        H1Response {
            status: head.status,
            body,
            wrote,
        }
    }
}

/// Whether the comma-separated header `value` holds `token` (any case),
/// as a `Connection` line names its options.
pub(crate) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// Appends the header line `name: value` to `lines`.
pub(crate) fn write_line(lines: &mut Vec<u8>, name: &str, value: &[u8]) {
    lines.extend_from_slice(name.as_bytes());
    lines.extend_from_slice(b": ");
    lines.extend_from_slice(value);
    lines.extend_from_slice(b"\r\n");
}

/// How much of a response's body reached the connection: over HTTP/1 the
/// bytes written to the socket (or, with TLS, to the TLS layer), over
/// HTTP/2 the bytes sent within the window the client gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// Body bytes written (nginx's `$body_bytes_sent`).
    pub body_bytes: u64,
    /// Whether the whole body was written; false for a response cut short
    /// (the client reset the stream or closed, a timeout, a read error).
    pub complete: bool,
}

/// The client end of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    pub addr: SocketAddr,
    pub tls: bool,
}

/// Connection counters, shared with `/_stats`.
#[derive(Debug, Default)]
pub struct ConnStats {
    open: AtomicUsize,
    accepted: AtomicU64,
    refused: AtomicU64,
    reclaimed: AtomicU64,
    header_timeouts: AtomicU64,
    idle_closed: AtomicU64,
    send_timeouts: AtomicU64,
    stalled_streams: AtomicU64,
    accept_errors: AtomicU64,
    tls_failures: AtomicU64,
}

/// A snapshot of [`ConnStats`].
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ConnReport {
    /// Connections open now.
    pub open: usize,
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections refused with 503 at `--max-connections`.
    pub refused: u64,
    /// Connections closed at the cap to make room for new ones: idle
    /// keep-alive ones, and ones that had not sent a whole request
    /// (silent, a partial head, preface or TLS handshake), oldest first.
    pub reclaimed: u64,
    /// Connections closed because a head (or a body) did not arrive in time.
    pub header_timeouts: u64,
    /// Keep-alive connections closed after `--keepalive-timeout` idle.
    pub idle_closed: u64,
    /// Connections dropped because the client took nothing for
    /// `--send-timeout`.
    pub send_timeouts: u64,
    /// HTTP/2 streams reset because the client gave them no flow-control
    /// credit for `--send-timeout`.
    pub stalled_streams: u64,
    /// Failed `accept` calls (out of descriptors, memory or buffers).
    pub accept_errors: u64,
    /// TLS handshakes that failed or did not finish in time.
    pub tls_failures: u64,
}

impl ConnStats {
    pub(crate) fn report(&self) -> ConnReport {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ConnReport {
            open: self.open.load(Ordering::Relaxed),
            accepted: get(&self.accepted),
            refused: get(&self.refused),
            reclaimed: get(&self.reclaimed),
            header_timeouts: get(&self.header_timeouts),
            idle_closed: get(&self.idle_closed),
            send_timeouts: get(&self.send_timeouts),
            stalled_streams: get(&self.stalled_streams),
            accept_errors: get(&self.accept_errors),
            tls_failures: get(&self.tls_failures),
        }
    }

    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Everything a connection task shares with the accept loop.
struct Shared<H> {
    limits: Limits,
    stats: Arc<ConnStats>,
    handler: Arc<H>,
    http1: http1::Builder,
    http2: ::h2::server::Builder,
    tls: Option<tls::Acceptor>,
    registry: Arc<Registry>,
    /// The answer past the cap, as bytes ([`conn::refusal`]).
    refusal: Bytes,
}

/// A running transport: its listeners are accepting.
pub struct Transport {
    addrs: Vec<SocketAddr>,
    stop: signal::Sender<bool>,
    accepting: tokio::task::JoinSet<()>,
    /// The listening sockets, when no other process accepts on them: shut
    /// at stop by the thread that stops the server.
    sole: Vec<socket2::Socket>,
    registry: Arc<Registry>,
}

impl Transport {
    /// Starts accepting on `listeners` (from [`listen`]); call it within
    /// the tokio runtime that is to serve them. `sole`: no other process
    /// accepts on them (they were not passed by systemd, nor bound with
    /// `SO_REUSEPORT`), so a stop shuts them at once ([`Transport::shutdown`]).
    pub fn start<H: Handler>(
        listeners: Vec<std::net::TcpListener>,
        sole: bool,
        limits: Limits,
        tls: Option<tls::Acceptor>,
        stats: Arc<ConnStats>,
        handler: Arc<H>,
    ) -> io::Result<Transport> {
        let mut addrs = Vec::new();
        let mut bound = Vec::new();
        let mut own = Vec::new();
        for listener in listeners {
            listener.set_nonblocking(true)?;
            addrs.push(listener.local_addr()?);
            if sole {
                own.push(socket2::Socket::from(listener.try_clone()?));
            }
            bound.push(TcpListener::from_std(listener)?);
        }
        let registry = Arc::new(Registry::default());
        let refusal = conn::refusal(&handler.over_capacity());
        let shared = Arc::new(Shared {
            limits,
            stats,
            handler,
            http1: http1_builder(),
            http2: h2::builder(),
            tls,
            registry: registry.clone(),
            refusal,
        });
        let (stop, stopping) = signal::channel(false);
        let mut accepting = tokio::task::JoinSet::new();
        for listener in bound {
            accepting.spawn(accept_loop(listener, shared.clone(), stopping.clone()));
        }
        Ok(Transport {
            addrs,
            stop,
            accepting,
            sole: own,
            registry,
        })
    }

    /// The bound addresses (real ports when 0 was asked for).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Stops accepting (the listeners close), lets requests in flight and
    /// heads being received finish, and closes idle connections (HTTP/2
    /// gets GOAWAY). Waits up to `patience` for every connection to end,
    /// then cuts off the rest; returns how many were cut off.
    pub(crate) async fn shutdown(mut self, patience: Duration) -> usize {
        let _ = self.stop.send(true);
        // Refused from now on, however long the accept loops wait for a
        // thread busy with a slow answer; a socket other processes accept
        // on closes when its loop lets go of it.
        for socket in self.sole.drain(..) {
            let _ = socket.shutdown(std::net::Shutdown::Read);
        }
        while self.accepting.join_next().await.is_some() {}
        self.registry.close_all(watch::DRAIN);
        let deadline = tokio::time::Instant::now() + patience;
        if self.registry.wait_empty(deadline).await {
            return 0;
        }
        let left = self.registry.open();
        self.registry.close_all(watch::ABORT);
        let soon = tokio::time::Instant::now() + Duration::from_secs(1);
        self.registry.wait_empty(soon).await;
        left
    }
}

/// hyper's HTTP/1 settings: ccc's head limits; deadlines are ccc's own
/// ([`watch`]), so hyper's header read timeout is off. The limit on header
/// lines is hyper's default ([`limits::MAX_HEADERS`]) and is not set: a
/// limit set by hand makes hyper build its header array anew per request.
fn http1_builder() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .header_read_timeout(None)
        .max_buf_size(MAX_HEAD)
        .writev(true)
        .half_close(false)
        .keep_alive(true);
    builder
}

/// Accepts on one listener until told to stop.
async fn accept_loop<H: Handler>(
    listener: TcpListener,
    shared: Arc<Shared<H>>,
    mut stopping: signal::Receiver<bool>,
) {
    let mut trouble = listen::Trouble::default();
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stopping.changed() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, addr)) => {
                trouble.over();
                admit(stream, addr, &shared);
            }
            Err(e) if listen::passing(&e) => {}
            Err(e) => {
                ConnStats::count(&shared.stats.accept_errors);
                trouble.report("accepting connections failed", &e);
                tokio::select! {
                    _ = stopping.changed() => break,
                    _ = tokio::time::sleep(trouble.backoff()) => {}
                }
            }
        }
    }
}

/// Serves a new connection, or refuses it: past the cap, the connections
/// that have gone longest without a request to answer are closed to make
/// room ([`Registry::reclaim`]), and only when every connection is
/// answering a request is the new one answered 503.
fn admit<H: Handler>(stream: tokio::net::TcpStream, addr: SocketAddr, shared: &Arc<Shared<H>>) {
    let open = shared.stats.open.load(Ordering::Relaxed);
    if open >= shared.limits.max_connections {
        let freed = shared
            .registry
            .reclaim(open + 1 - shared.limits.max_connections);
        shared
            .stats
            .reclaimed
            .fetch_add(freed as u64, Ordering::Relaxed);
        if freed == 0 {
            ConnStats::count(&shared.stats.refused);
            let peer = Peer {
                addr,
                tls: shared.tls.is_some(),
            };
            shared.handler.record_refused(503, &peer);
            // A TLS client could not read a plain answer: it is closed.
            let refusal = if shared.tls.is_some() {
                &[][..]
            } else {
                &shared.refusal[..]
            };
            conn::refuse(stream, refusal);
            return;
        }
    }
    let _ = stream.set_nodelay(true);
    ConnStats::count(&shared.stats.accepted);
    shared.stats.open.fetch_add(1, Ordering::Relaxed);
    let peer = Peer {
        addr,
        tls: shared.tls.is_some(),
    };
    let watch = Arc::new(Watch::new(shared.limits));
    let key = shared.registry.insert(watch.clone());
    let shared = shared.clone();
    tokio::spawn(async move {
        conn::serve(stream, peer, &watch, &shared).await;
        shared.registry.remove(key);
        shared.stats.open.fetch_sub(1, Ordering::Relaxed);
    });
}

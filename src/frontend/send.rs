//! Requests as the workers see them, and how their responses leave.
//!
//! `respond` prints the head around the response's prepared header lines
//! ([`super::response_head`]) into a buffer its thread keeps, then sends
//! head and body with one non-blocking vectored write: the body is never
//! copied, and the head is copied out of the buffer only when the socket
//! does not take it all at once. That rest goes to a send thread (the
//! module doc of [`super`] says why), which finishes it with blocking
//! writes; the socket's `SO_SNDTIMEO` (`--send-timeout`) ends a client
//! that takes nothing for that long.

use super::conn::Conn;
use super::head::Head;
use super::response_head::{HeaderLines, print_head, print_head_into};
use super::{ConnStats, Shared, lock};
use crate::http::cors;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The `Server` header of every response.
pub const SERVER: &str = concat!("ccc/", env!("CARGO_PKG_VERSION"));
/// A send thread with nothing to send for this long leaves.
const SENDER_IDLE: Duration = Duration::from_secs(10);
const SENDER_STACK: usize = 128 * 1024;
/// A thread keeps its head buffer up to this size; a larger head (rare:
/// an asset's head is about 500 bytes) gives its room back once sent.
const HEAD_BUFFER_KEPT: usize = 8 * 1024;

thread_local! {
    /// The head of the response this thread is sending, printed anew for
    /// each response into the same room.
    static HEAD: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A response: status, header lines (`Server` first; the frontend adds
/// the status line, `Date`, `Content-Length` and `Connection`), the
/// Content-Length to announce, and the body bytes to send after the head
/// (none for HEAD, 1xx, 204 and 304).
pub struct Reply<L, B> {
    pub status: u16,
    pub lines: L,
    pub length: usize,
    pub body: B,
}

/// A request taken by a worker. Answer it with [`Request::respond`];
/// dropped unanswered, it closes its connection.
pub struct Request {
    /// Until answered: the connection, marked as having a response due.
    flight: Option<Flight>,
    head: Head,
    /// The connection ends after this response.
    close: bool,
    /// When its head was complete (the monotonic clock: it times the
    /// request; the access log derives the wall-clock time from it).
    received: Instant,
}

/// A response due on a connection; dropping it marks the response written,
/// which lets the connection's thread go on.
struct Flight(Arc<Conn>);

impl Drop for Flight {
    fn drop(&mut self) {
        self.0.response_done();
    }
}

impl Request {
    pub(super) fn new(conn: Arc<Conn>, head: Head, close: bool, received: Instant) -> Request {
        Request {
            flight: Some(Flight(conn)),
            head,
            close,
            received,
        }
    }

    /// When the request's head was complete (before it waited for a worker).
    pub fn received(&self) -> Instant {
        self.received
    }

    /// The protocol of the request line, `HTTP/1.1` or `HTTP/1.0`.
    pub fn protocol(&self) -> &'static str {
        if self.head.minor == 0 {
            "HTTP/1.0"
        } else {
            "HTTP/1.1"
        }
    }

    pub fn method(&self) -> &str {
        self.head.method()
    }

    /// The request target as sent (path and query, or absolute form).
    pub fn url(&self) -> &str {
        self.head.target()
    }

    /// The values of every header named `name` (any case).
    pub fn header<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.head.values(name)
    }

    /// The first header named `name` (any case) as sent, UTF-8 or not.
    pub fn header_bytes(&self, name: &str) -> Option<&[u8]> {
        self.head.raw_value(name)
    }

    pub fn remote_addr(&self) -> Option<&SocketAddr> {
        self.flight.as_ref().map(|f| &f.0.peer)
    }

    /// Sends the response. Returns once it is written, or handed to a send
    /// thread; an error is one of the server's (a client that went away is
    /// not an error).
    pub fn respond<L, B>(mut self, reply: Reply<L, B>) -> io::Result<()>
    where
        L: AsRef<[u8]>,
        B: AsRef<[u8]> + Send + 'static,
    {
        let Some(flight) = self.flight.take() else {
            return Ok(());
        };
        let connection = if self.close {
            Some("close")
        } else {
            (self.head.minor == 0).then_some("keep-alive")
        };
        let status = reply.status;
        let bodyless = self.method() == "HEAD" || matches!(status, 100..=199 | 204 | 304);
        HEAD.with_borrow_mut(|head| {
            head.clear();
            print_head_into(
                head,
                status,
                self.head.minor,
                reply.lines.as_ref(),
                reply.length,
                connection,
            );
            let sent = send(flight, head, (!bodyless).then_some(reply.body));
            if head.capacity() > HEAD_BUFFER_KEPT {
                *head = Vec::new();
            }
            sent
        })
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if let Some(flight) = self.flight.take() {
            flight.0.abort();
        }
    }
}

/// The JSON body of an error answer: `{"status":404,"error":"not found"}`.
pub fn error_body(status: u16, detail: &str) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorBody<'a> {
        status: u16,
        error: &'a str,
    }
    serde_json::to_vec(&ErrorBody {
        status,
        error: detail,
    })
    .unwrap_or_default()
}

/// A complete error answer that closes the connection, for the answers
/// the frontend gives itself (a refused head, a refused connection).
pub(super) fn early_response(
    status: u16,
    detail: &str,
    minor: u8,
    extra: &[(&str, &str)],
) -> Vec<u8> {
    let body = error_body(status, detail);
    let fixed = [
        ("Server", SERVER),
        ("Content-Type", "application/json"),
        ("Cache-Control", "no-store"),
    ];
    let lines = HeaderLines::of(
        fixed
            .iter()
            .chain(&cors::EVERY_RESPONSE)
            .chain(extra)
            .copied(),
    );
    let mut bytes = print_head(status, minor, lines.as_ref(), body.len(), Some("close"));
    bytes.extend_from_slice(&body);
    bytes
}

/// Writes what the socket takes now; hands the rest to a send thread,
/// with a copy of the head (`head` is the calling thread's buffer).
fn send<B: AsRef<[u8]> + Send + 'static>(
    flight: Flight,
    head: &[u8],
    body: Option<B>,
) -> io::Result<()> {
    let mut sent = 0;
    let bytes = body.as_ref().map_or(&[][..], AsRef::as_ref);
    match write_from(&flight.0.stream, head, bytes, &mut sent, libc::MSG_DONTWAIT) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            let shared = flight.0.shared.clone();
            let body = body.map(|b| Box::new(b) as Box<dyn AsRef<[u8]> + Send>);
            Pool::hand_off(
                &shared,
                Pending {
                    flight,
                    head: head.to_vec(),
                    body,
                    sent,
                },
            );
            Ok(())
        }
        Err(e) => {
            flight.0.abort();
            if client_gone(&e) { Ok(()) } else { Err(e) }
        }
    }
}

/// Sends `head` then `body` from byte `sent` on, advancing `sent`, until
/// all is sent or the socket refuses (with `MSG_DONTWAIT`: would block;
/// without: the send timeout passed with nothing taken).
fn write_from(
    stream: &TcpStream,
    head: &[u8],
    body: &[u8],
    sent: &mut usize,
    flags: libc::c_int,
) -> io::Result<()> {
    let socket = socket2::SockRef::from(stream);
    let total = head.len() + body.len();
    while *sent < total {
        let slices = if *sent < head.len() {
            [IoSlice::new(&head[*sent..]), IoSlice::new(body)]
        } else {
            [IoSlice::new(&[]), IoSlice::new(&body[*sent - head.len()..])]
        };
        match socket.send_vectored_with_flags(&slices, flags | libc::MSG_NOSIGNAL) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn client_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    )
}

/// The unsent rest of a response.
struct Pending {
    flight: Flight,
    head: Vec<u8>,
    body: Option<Box<dyn AsRef<[u8]> + Send>>,
    sent: usize,
}

/// Send threads, started on demand: one per unfinished response.
#[derive(Default)]
pub(super) struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
    finished: Condvar,
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Pending>,
    /// Send threads waiting for work.
    idle: usize,
    /// Responses handed off and not yet finished.
    unfinished: usize,
}

impl Pool {
    fn hand_off(shared: &Arc<Shared>, pending: Pending) {
        let pool = &shared.sends;
        let mut state = lock(&pool.state);
        state.unfinished += 1;
        state.queue.push_back(pending);
        if state.queue.len() <= state.idle {
            pool.work.notify_one();
            return;
        }
        drop(state);
        let for_thread = shared.clone();
        let started = std::thread::Builder::new()
            .name("http-send".into())
            .stack_size(SENDER_STACK)
            .spawn(move || {
                crate::causal::thread_started();
                while Pool::send_next(&for_thread, SENDER_IDLE) {}
            });
        if started.is_err() {
            // No thread to spare: this one sends it.
            Pool::send_next(shared, Duration::ZERO);
        }
    }

    /// Sends the next queued response, waiting up to `idle` for one;
    /// false when none came.
    fn send_next(shared: &Shared, idle: Duration) -> bool {
        let pool = &shared.sends;
        let mut state = lock(&pool.state);
        let pending = loop {
            if let Some(pending) = state.queue.pop_front() {
                break pending;
            }
            if idle.is_zero() {
                return false;
            }
            state.idle += 1;
            let (guard, waited) = pool
                .work
                .wait_timeout(state, idle)
                .unwrap_or_else(PoisonError::into_inner);
            state = guard;
            state.idle -= 1;
            if waited.timed_out() && state.queue.is_empty() {
                return false;
            }
        };
        drop(state);
        finish(shared, pending);
        let mut state = lock(&pool.state);
        state.unfinished -= 1;
        if state.unfinished == 0 {
            pool.finished.notify_all();
        }
        true
    }

    /// Waits until every handed-off response is finished, or `deadline`.
    pub(super) fn wait_idle(&self, deadline: Instant) {
        let mut state = lock(&self.state);
        while state.unfinished > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self
                .finished
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Blocking writes of the rest; a client that takes nothing for the send
/// timeout loses its connection.
fn finish(shared: &Shared, pending: Pending) {
    let Pending {
        flight,
        head,
        body,
        mut sent,
    } = pending;
    let bytes = body.as_ref().map_or(&[][..], |b| (**b).as_ref());
    if let Err(e) = write_from(&flight.0.stream, &head, bytes, &mut sent, 0) {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            ConnStats::count(&shared.stats.send_timeouts);
        }
        flight.0.abort();
    }
}

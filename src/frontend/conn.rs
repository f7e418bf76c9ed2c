//! One client connection, on its own thread: read a head (within the size
//! limits and the header deadline), throw away a body, queue the request,
//! and do it again while the connection is kept alive. Responses go out in
//! request order: the next request is queued only once the previous
//! response is written (pipelined requests wait their turn here).
//!
//! Closing: after an error answer or a response that ends the connection,
//! the write side is shut down and what the client still sends is read and
//! dropped for a moment (a "lingering close", as nginx does), so that the
//! client reads the answer instead of a reset.

use super::head::{self, Framing, Head, Parse, Reject};
use super::limits::{MAX_DISCARDED_BODY, MAX_HEAD};
use super::send::{self, Request};
use super::turn::Turn;
use super::{ConnStats, Shared};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// First size of a connection's input buffer; it grows to [`MAX_HEAD`]
/// only for heads that need it.
const FIRST_BUFFER: usize = 2048;
/// A lingering close reads for at most this long, and this much.
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 1024 * 1024;
/// A deadline is re-armed on the socket only when the socket's timeout
/// would overshoot it by more than this (saves a syscall per read).
const SLACK: Duration = Duration::from_millis(50);

/// A connection, shared by its thread and the worker or send thread
/// writing its response.
pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) peer: SocketAddr,
    /// Whether a response is being written, and who waits for it.
    turn: Turn,
    pub(super) shared: Arc<Shared>,
}

impl Conn {
    /// Counts the connection open until it is dropped.
    pub(super) fn new(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) -> Arc<Conn> {
        shared.stats.open.fetch_add(1, Ordering::Relaxed);
        Arc::new(Conn {
            stream,
            peer,
            turn: Turn::new(),
            shared,
        })
    }

    /// Waits for the previous response to be written, then marks the next
    /// one as being written.
    fn begin_response(&self) {
        self.turn.begin();
    }

    /// Waits until no response is being written.
    fn wait_written(&self) {
        self.turn.wait();
    }

    /// The response is written (or given up on). Costs no lock and no
    /// syscall unless the connection's thread waits for it (see
    /// [`super::turn`]).
    pub(super) fn response_done(&self) {
        self.turn.done();
    }

    /// Ends the connection now: its thread's read returns, its writes fail.
    pub(super) fn abort(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.shared.stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connection thread.
pub(super) fn serve(conn: Arc<Conn>) {
    let limits = conn.shared.limits;
    let mut input = Input::default();
    // The listener's timeout, inherited: the first head's clock.
    let mut armed = limits.header_timeout;
    let mut first = Some(Instant::now() + limits.header_timeout);
    loop {
        let head = match read_head(&conn, &mut input, &mut armed, first.take()) {
            Ok(head) => head,
            Err(End::Reject(reject)) => return refuse(&conn, reject),
            Err(End::Closed) => return,
        };
        let received = Instant::now();
        let framing = match head.framing() {
            Ok(framing) => framing,
            Err(reject) => return refuse(&conn, reject),
        };
        let expects_continue = head.has_token("Expect", "100-continue");
        // A body whose end cannot be found cheaply, or that the client
        // will not send before a `100 Continue`, stays unread: the
        // request is answered and the connection closed.
        let mut close = !head.keep_alive();
        match framing {
            Framing::None => {}
            Framing::Length(n) if n > MAX_DISCARDED_BODY => {
                return refuse(&conn, Reject::ContentTooLarge);
            }
            Framing::Length(_) if expects_continue => close = true,
            Framing::Length(n) => {
                if discard(&conn.stream, &mut input, n).is_err() {
                    return;
                }
            }
            Framing::Encoded => close = true,
        }
        conn.begin_response();
        conn.shared
            .push(Request::new(conn.clone(), head, close, received));
        if close {
            conn.wait_written();
            return linger(&conn.stream);
        }
    }
}

/// Why the connection ends without a request.
enum End {
    /// Closed by the client, timed out, or broken.
    Closed,
    Reject(Reject),
}

/// Reads until `input` starts with a complete head.
///
/// `first` is the deadline of a new connection's first head; later heads
/// get `--header-timeout` from their first byte, after at most
/// `--keepalive-timeout` of idle wait.
fn read_head(
    conn: &Conn,
    input: &mut Input,
    armed: &mut Duration,
    first: Option<Instant>,
) -> Result<Head, End> {
    let limits = conn.shared.limits;
    let stats = &conn.shared.stats;
    let mut deadline =
        first.or_else(|| (!input.is_empty()).then(|| Instant::now() + limits.header_timeout));
    loop {
        if !input.is_empty() {
            match head::parse(input.data()) {
                Parse::Complete(head, n) => {
                    input.consume(n);
                    return Ok(head);
                }
                Parse::Reject(reject) => return Err(End::Reject(reject)),
                Parse::Incomplete => {}
            }
        }
        let wait = match deadline {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => limits.keepalive_timeout,
        };
        if wait.is_zero() {
            ConnStats::count(&stats.header_timeouts);
            return Err(End::Closed);
        }
        if wait > *armed || *armed - wait > SLACK {
            conn.stream
                .set_read_timeout(Some(wait))
                .map_err(|_| End::Closed)?;
            *armed = wait;
        }
        match input.fill(&conn.stream) {
            Ok(0) => return Err(End::Closed),
            Ok(_) => {
                deadline.get_or_insert_with(|| Instant::now() + limits.header_timeout);
            }
            Err(e) if timed_out(&e) => {
                let counter = if deadline.is_some() {
                    &stats.header_timeouts
                } else {
                    &stats.idle_closed
                };
                ConnStats::count(counter);
                return Err(End::Closed);
            }
            Err(_) => return Err(End::Closed),
        }
    }
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads `n` body bytes and drops them, through a small buffer.
fn discard(mut stream: &TcpStream, input: &mut Input, n: u64) -> io::Result<()> {
    let buffered = input
        .data()
        .len()
        .min(usize::try_from(n).unwrap_or(usize::MAX));
    input.consume(buffered);
    let mut left = n - buffered as u64;
    let mut scratch = [0u8; 8192];
    while left > 0 {
        let want = scratch
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        match stream.read(&mut scratch[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(got) => left -= got as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Answers a refused head with its status, then closes.
fn refuse(conn: &Conn, reject: Reject) {
    // Responses leave in order: wait for the one being written, if any.
    conn.wait_written();
    let answer = send::early_response(reject.status(), reject.detail(), 1, &[]);
    let _ = (&conn.stream).write_all(&answer);
    (conn.shared.record)(reject.status());
    linger(&conn.stream);
}

/// Shuts down the write side, then reads and drops what the client still
/// sends, briefly, so the client reads our last answer instead of a reset.
fn linger(mut stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    if stream.set_read_timeout(Some(LINGER_TIME)).is_err() {
        return;
    }
    let until = Instant::now() + LINGER_TIME;
    let mut scratch = [0u8; 8192];
    let mut read = 0;
    while read < LINGER_BYTES && Instant::now() < until {
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => read += n,
        }
    }
}

/// Bytes received and not yet used: the start of the next head (and,
/// with pipelining, of the requests after it).
#[derive(Default)]
struct Input {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Input {
    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// One read from `stream`, into room made by moving the data to the
    /// front or growing the buffer (never past [`MAX_HEAD`]: the head
    /// parser refuses a head that fills it).
    fn fill(&mut self, mut stream: &TcpStream) -> io::Result<usize> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let grown = (self.buf.len() * 2).clamp(FIRST_BUFFER, MAX_HEAD);
                self.buf.resize(grown, 0);
            }
        }
        loop {
            match stream.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

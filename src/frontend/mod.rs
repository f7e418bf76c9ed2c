//! `ccc serve`'s HTTP/1.1 transport: it accepts connections, reads request
//! heads within limits and timeouts, queues requests for the workers, and
//! writes their responses without letting a slow client hold a worker.
//!
//! ```text
//! accept thread --> one thread per connection --queue--> N workers (serve/)
//!  (cap, 503,         (head limits, timeouts,              | respond: one non-blocking
//!   EMFILE backoff)    body discard, keep-alive)            v sendmsg of head + body
//!                                            send threads <-- the rest, when the socket
//!                                            (send timeout)   buffer is full
//! ```
//!
//! # Why not `tiny_http::Server`
//!
//! ccc used tiny_http 0.12's server, and keeps of tiny_http only its
//! reason phrases. Response heads are printed here
//! ([`response_head`]): tiny_http validated, allocated and copied every
//! header line of every response, where ccc builds an asset's lines once.
//! Its connection handling had to go, because no configuration reaches
//! these:
//!
//! - a request with `Content-Length: 1000000000000` aborted the process:
//!   dropping an unread body allocates a buffer of the declared size;
//! - its accept thread leaves on the first `accept` error (EMFILE) and drops
//!   the listener, so the server stops answering for good;
//! - it buffers a request head of any size (a 1 MiB header line, 100,000
//!   header lines), has no header, idle or send timeout, and no
//!   connection count to cap;
//! - the worker that calls `respond` writes the whole body, so four clients
//!   that stop reading block four workers.
//!
//! # Slow readers
//!
//! A worker writes each response with one non-blocking `sendmsg` of the
//! head and the body (shared with the cache, never copied). Almost every
//! response fits the socket buffer and is done there, with no extra
//! syscall or thread hop. When it does not fit (a large asset, or a client
//! that stopped reading), the rest goes to a send thread that finishes it
//! with blocking writes under `--send-timeout`, and the worker moves on.
//! Send threads are started on demand, one per unfinished response, and
//! leave after a few idle seconds, so they are bounded by the connection
//! cap. An elastic worker pool was the other design: it needs a watchdog
//! to notice stuck workers, lets every stuck client delay others until
//! the watchdog acts, and grows the threads that contend for the store;
//! handing off the rest of a response costs nothing on the fast path.
//!
//! # Bounds
//!
//! Every queue is bounded by the connection cap: a connection has at most
//! one request queued or being answered (the next one waits on its own
//! thread), and at most one response with a send thread. Per connection
//! the server holds a thread, an input buffer of 2 to 32 KiB, and the
//! shared body of the response being sent.
//!
//! # Timeouts
//!
//! They ride on `SO_RCVTIMEO`/`SO_SNDTIMEO`. The listener carries the
//! header and send timeouts, and Linux copies both to every accepted
//! socket, so a new connection needs no `setsockopt`. A keep-alive
//! connection is re-armed once, to the keep-alive timeout, after its first
//! request; a head that arrives in pieces is re-armed to what is left of
//! its deadline, so a client that sends one byte a second still has its
//! head cut off at `--header-timeout`.

mod conn;
pub mod head;
pub mod limits;
mod listener;
pub mod response_head;
mod send;
mod turn;

pub use limits::{Limits, OpenFiles};
pub use listener::bind;
pub use response_head::HeaderLines;
pub use send::{Reply, Request, SERVER, error_body};

use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Connection counters, shared with `/_stats`.
#[derive(Debug, Default)]
pub struct ConnStats {
    open: AtomicUsize,
    accepted: AtomicU64,
    refused: AtomicU64,
    header_timeouts: AtomicU64,
    idle_closed: AtomicU64,
    send_timeouts: AtomicU64,
    accept_errors: AtomicU64,
}

/// A snapshot of [`ConnStats`].
#[derive(Debug, Clone, Serialize)]
pub struct ConnReport {
    /// Connections open now.
    pub open: usize,
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections refused with 503 at `--max-connections`.
    pub refused: u64,
    /// Connections closed because a head was not complete in time.
    pub header_timeouts: u64,
    /// Keep-alive connections closed after `--keepalive-timeout` idle.
    pub idle_closed: u64,
    /// Connections dropped because the client took nothing for
    /// `--send-timeout`.
    pub send_timeouts: u64,
    /// Failed `accept` calls (out of descriptors, memory or buffers).
    pub accept_errors: u64,
}

impl ConnStats {
    pub fn report(&self) -> ConnReport {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ConnReport {
            open: self.open.load(Ordering::Relaxed),
            accepted: get(&self.accepted),
            refused: get(&self.refused),
            header_timeouts: get(&self.header_timeouts),
            idle_closed: get(&self.idle_closed),
            send_timeouts: get(&self.send_timeouts),
            accept_errors: get(&self.accept_errors),
        }
    }

    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Called with the status of every response the frontend gives itself
/// (a refused connection or a refused head), for the request counters.
pub type Record = Box<dyn Fn(u16) + Send + Sync>;

/// State shared by the accept thread, connection threads, send threads and
/// workers.
struct Shared {
    limits: Limits,
    queue: Mutex<VecDeque<Request>>,
    ready: Condvar,
    stats: Arc<ConnStats>,
    sends: send::Pool,
    record: Record,
    stopping: AtomicBool,
}

impl Shared {
    fn push(&self, request: Request) {
        lock(&self.queue).push_back(request);
        self.ready.notify_one();
    }
}

/// A running frontend: the port is bound and connections are accepted.
pub struct Frontend {
    shared: Arc<Shared>,
    listener: TcpListener,
    accept: Option<JoinHandle<()>>,
    addr: SocketAddr,
}

impl Frontend {
    /// Starts accepting on `listener` (from [`bind`]).
    pub fn start(
        listener: TcpListener,
        limits: Limits,
        stats: Arc<ConnStats>,
        record: Record,
    ) -> io::Result<Frontend> {
        let addr = listener.local_addr()?;
        // Copied by Linux to every accepted socket: the first head's clock
        // and the send timeout cost no syscall per connection.
        let socket = socket2::SockRef::from(&listener);
        socket.set_read_timeout(Some(limits.header_timeout))?;
        socket.set_write_timeout(Some(limits.send_timeout))?;
        let shared = Arc::new(Shared {
            limits,
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            stats,
            sends: send::Pool::default(),
            record,
            stopping: AtomicBool::new(false),
        });
        let accepting = listener.try_clone()?;
        let for_thread = shared.clone();
        let accept = std::thread::Builder::new()
            .name("http-accept".into())
            .spawn(move || {
                crate::causal::thread_started();
                listener::accept_loop(&accepting, &for_thread)
            })?;
        Ok(Frontend {
            shared,
            listener,
            accept: Some(accept),
            addr,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next queued request, if any, without waiting.
    pub fn try_recv(&self) -> Option<Request> {
        lock(&self.shared.queue).pop_front()
    }

    /// The next request, waiting at most `timeout` for one.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Request> {
        let queue = lock(&self.shared.queue);
        let (mut queue, _) = self
            .shared
            .ready
            .wait_timeout_while(queue, timeout, |q| q.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        queue.pop_front()
    }

    /// Stops accepting, closes the connections whose requests were not
    /// taken, and waits (up to the send timeout, at most 10 s) for
    /// responses still being sent.
    pub fn shutdown(mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        // Wakes the accept thread out of `accept` (EINVAL) for good.
        let _ = socket2::SockRef::from(&self.listener).shutdown(std::net::Shutdown::Both);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        lock(&self.shared.queue).clear();
        let patience = self.shared.limits.send_timeout.min(Duration::from_secs(10));
        self.shared.sends.wait_idle(Instant::now() + patience);
    }
}

/// Locks a mutex; a panic elsewhere never poisons the frontend for others
/// (the data behind these locks stays consistent at every step).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

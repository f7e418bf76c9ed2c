//! The listening socket and the accept loop that never gives it up.
//!
//! Out of descriptors (EMFILE, ENFILE), buffers (ENOBUFS) or memory
//! (ENOMEM), `accept` fails while the connection waits in the kernel's
//! backlog. The loop then backs off (10 ms, doubling to 250 ms) and tries
//! again, and serves as soon as a descriptor is free; it logs one line per
//! burst of failures, not one per failure. Nothing but shutdown ends it.
//!
//! Past `--max-connections` a new connection is answered 503 with
//! `Retry-After: 1` at once, by this thread, and closed: it is never queued.

use super::send::early_response;
use super::{ConnStats, Shared, conn};
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Pending connections the kernel holds while all are busy (also capped
/// by `net.core.somaxconn`).
const BACKLOG: i32 = 1024;
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const LAST_BACKOFF: Duration = Duration::from_millis(250);
/// Stack of a connection thread: it holds a head parser and an 8 KiB
/// scratch buffer, far below this.
const CONNECTION_STACK: usize = 256 * 1024;

/// Binds with `TCP_NODELAY` set on the listening socket; Linux copies it to
/// every accepted socket (Nagle's algorithm with delayed ACKs caps a
/// keep-alive server at about a thousand requests per second). Public for
/// the benchmark ceiling server, which must listen exactly as `ccc serve`
/// does.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// Accepts until shutdown.
pub(super) fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut trouble = Trouble::default();
    while !shared.stopping.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => match admit(stream, peer, shared) {
                Ok(()) => trouble.over(),
                Err(e) => {
                    trouble.report("starting a connection thread failed", &e);
                    std::thread::sleep(trouble.backoff());
                }
            },
            Err(_) if shared.stopping.load(Ordering::Relaxed) => break,
            // The listener's receive timeout (it carries the header timeout
            // for accepted sockets) also ends a quiet `accept`; and a client
            // may reset before it is accepted.
            Err(e) if passing(&e) => {}
            Err(e) => {
                ConnStats::count(&shared.stats.accept_errors);
                trouble.report("accepting connections failed", &e);
                std::thread::sleep(trouble.backoff());
            }
        }
    }
}

/// Errors that say nothing about the server's health.
fn passing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) || e.raw_os_error() == Some(libc::EPROTO)
}

/// A burst of failures: logged once, backed off exponentially.
#[derive(Default)]
struct Trouble {
    /// In a burst: its line is written.
    failing: bool,
    backoff: Duration,
}

impl Trouble {
    fn report(&mut self, what: &str, e: &io::Error) {
        if !self.failing {
            self.failing = true;
            self.backoff = FIRST_BACKOFF;
            crate::log::err(format_args!(
                "warning: {what}: {e}; still listening, retrying until it works (logged once per burst)"
            ));
        }
    }

    fn backoff(&mut self) -> Duration {
        let now = self.backoff;
        self.backoff = (self.backoff * 2).min(LAST_BACKOFF);
        now
    }

    fn over(&mut self) {
        self.failing = false;
    }
}

/// Serves a new connection on its own thread, or refuses it at the cap.
/// When no thread can be started, the connection is closed.
fn admit(stream: TcpStream, peer: SocketAddr, shared: &Arc<Shared>) -> io::Result<()> {
    if shared.stats.open.load(Ordering::Relaxed) >= shared.limits.max_connections {
        refuse(&stream);
        ConnStats::count(&shared.stats.refused);
        (shared.record)(503);
        return Ok(());
    }
    ConnStats::count(&shared.stats.accepted);
    let conn = conn::Conn::new(stream, peer, shared.clone());
    let spawned = std::thread::Builder::new()
        .name("http-conn".into())
        .stack_size(CONNECTION_STACK)
        .spawn(move || {
            crate::causal::thread_started();
            conn::serve(conn)
        });
    // On failure the connection went down with the closure: closed, and
    // no longer counted.
    spawned.map(drop)
}

/// Answers 503 and closes, without blocking the accept loop.
fn refuse(stream: &TcpStream) {
    let socket = socket2::SockRef::from(stream);
    // Take what the client already sent, so that closing does not reset
    // the connection before the client reads the answer.
    let mut scratch = [MaybeUninit::<u8>::uninit(); 4096];
    let _ = socket.recv_with_flags(&mut scratch, libc::MSG_DONTWAIT);
    let answer = early_response(
        503,
        "too many connections; retry later",
        1,
        &[("Retry-After", "1")],
    );
    let _ = socket.send_vectored_with_flags(
        &[IoSlice::new(&answer)],
        libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
    );
    let _ = stream.shutdown(Shutdown::Write);
}

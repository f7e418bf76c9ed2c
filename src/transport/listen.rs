//! Listening sockets: bound here (with `SO_REUSEPORT` on request, so a new
//! `ccc serve` can start beside the old one before it drains) or passed by
//! systemd's socket activation (`LISTEN_FDS`), so that the socket outlives
//! every restart and no connection is refused while the server is down.
//!
//! The accept loop never gives a listener up: out of descriptors (EMFILE,
//! ENFILE), buffers (ENOBUFS) or memory (ENOMEM), `accept` fails while the
//! connection waits in the kernel's backlog. The loop then backs off
//! (10 ms, doubling to 250 ms) and tries again, and serves as soon as a
//! descriptor is free; it logs one line per burst of failures.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

/// Pending connections the kernel holds while all are busy (also capped
/// by `net.core.somaxconn`).
const BACKLOG: i32 = 4096;
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const LAST_BACKOFF: Duration = Duration::from_millis(250);

/// Binds `addr` with `TCP_NODELAY` on the listening socket (Linux copies
/// it to every accepted socket; Nagle's algorithm with delayed ACKs caps a
/// keep-alive server at about a thousand requests per second). With
/// `reuse_port`, several processes may listen on the same port and the
/// kernel spreads new connections among them.
pub fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// The TCP listeners systemd passed (`LISTEN_FDS` for this process), if
/// any, each with the name its socket unit gives it (`FileDescriptorName=`,
/// in `LISTEN_FDNAMES`). A passed descriptor that is not a listening TCP
/// socket is an error that names it.
pub(crate) fn inherited() -> io::Result<Vec<(TcpListener, String)>> {
    let names = std::env::var("LISTEN_FDNAMES").unwrap_or_default();
    let mut names = names.split(':');
    let mut passed = listenfd::ListenFd::from_env();
    let mut listeners = Vec::new();
    for index in 0..passed.len() {
        match passed.take_tcp_listener(index)? {
            Some(listener) => {
                socket2::SockRef::from(&listener).set_tcp_nodelay(true)?;
                listeners.push((listener, names.next().unwrap_or_default().to_string()));
            }
            None => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "socket activation passed descriptor {} that is not a TCP listener",
                        3 + index
                    ),
                ));
            }
        }
    }
    Ok(listeners)
}

/// Whether Linux resets the connections queued on a listener that closes
/// instead of handing them to another listener of the same port
/// (`net.ipv4.tcp_migrate_req` is 0): with `--reuse-port`, a handover then
/// resets the few connections that arrive as the old process stops.
pub(crate) fn queued_connections_reset_on_close() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_migrate_req").is_ok_and(|v| v.trim() == "0")
}

/// Errors that say nothing about the server's health.
pub(super) fn passing(e: &io::Error) -> bool {
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
pub(super) struct Trouble {
    /// In a burst: its line is written.
    failing: bool,
    backoff: Duration,
}

impl Trouble {
    pub(super) fn report(&mut self, what: &str, e: &io::Error) {
        if !self.failing {
            self.failing = true;
            self.backoff = FIRST_BACKOFF;
            crate::log::err(format_args!(
                "warning: {what}: {e}; still listening, retrying until it works (logged once per burst)"
            ));
        }
    }

    pub(super) fn backoff(&mut self) -> Duration {
        let now = self.backoff;
        self.backoff = (self.backoff * 2).min(LAST_BACKOFF);
        now
    }

    pub(super) fn over(&mut self) {
        self.failing = false;
    }
}

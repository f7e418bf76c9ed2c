//! The limits every client is held to, with nginx's defaults as the model,
//! and the open-files limit raised at start (nginx's `worker_rlimit_nofile`).
//!
//! | ccc                       | nginx                         | default |
//! |---------------------------|-------------------------------|---------|
//! | `--max-connections`       | `worker_connections`          | 16384   |
//! | `--header-timeout`        | `client_header_timeout`       | 60 s    |
//! | `--keepalive-timeout`     | `keepalive_timeout`           | 75 s    |
//! | `--send-timeout`          | `send_timeout`                | 60 s    |
//! | `--body-timeout`          | `client_body_timeout`         | 60 s    |
//! | request target 414        | `large_client_header_buffers` | 8 KiB (the router's) |
//! | [`MAX_HEADER_LINE`] 431   | `large_client_header_buffers` | 8 KiB   |
//! | [`MAX_HEAD`] 431          | `large_client_header_buffers` | 4x8 KiB |
//!
//! The size limits are constants: they bound memory per connection, and a
//! CDN's requests are small (a long asset URL and a few headers fit in
//! 2 KiB). A connection costs a task and hyper's buffers, no thread, so
//! the default cap is set by memory and descriptors, not by threads.
//! Request bodies are never read, but an upload's (`--publish-api`): ccc
//! answers GET, HEAD and OPTIONS, and hyper closes a connection whose
//! unread body does not end at once. An upload's body is bounded by
//! `--body-timeout` between two reads and by the server's size limit.

use std::io;
use std::time::Duration;

/// Longest header line (name and value); a longer one is answered 431.
pub(crate) const MAX_HEADER_LINE: usize = 8 * 1024;
/// Largest request head, request line and header lines together; a larger
/// one is answered 431 by hyper.
pub(crate) const MAX_HEAD: usize = 4 * 8 * 1024;
/// Most header lines in one request (Apache's `LimitRequestFields`); more
/// is answered 431 by hyper. It is hyper's own default, which the
/// transport leaves in place.
pub(crate) const MAX_HEADERS: usize = 100;
/// Connections when `--max-connections` is not given, fewer when the
/// open-files limit does not allow them.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 16 * 1024;
/// `--header-timeout` when not given.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(60);
/// `--keepalive-timeout` when not given.
pub(crate) const DEFAULT_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(75);
/// `--send-timeout` when not given.
pub(crate) const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(60);
/// `--body-timeout` when not given.
pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// Descriptors kept out of the connection budget: the catalog and its WAL
/// files, stdio, the listener, a refused connection's short life.
pub(crate) const RESERVED_FILES: u64 = 32;
/// HTTP/2: streams a client may have open at once on one connection
/// (nginx's `http2_max_concurrent_streams`).
pub(crate) const H2_MAX_STREAMS: u32 = 128;
/// HTTP/2: largest decoded header list of one request, the HTTP/1 head's
/// limit (hyper answers past it with 431, and a CONTINUATION flood is cut
/// off there).
pub(crate) const H2_MAX_HEADER_LIST: u32 = MAX_HEAD as u32;
/// HTTP/2: streams a client opened and reset before they were answered
/// that are held at once; past it the connection is closed (the "rapid
/// reset" attack, CVE-2023-44487).
pub(crate) const H2_MAX_PENDING_RESETS: usize = 20;
/// HTTP/2: streams the server may reset for a client's errors on one
/// connection before it closes it (a client provoking resets).
pub(crate) const H2_MAX_LOCAL_RESETS: usize = 256;
/// HTTP/2: bytes buffered per stream for a client that reads slowly.
pub(crate) const H2_MAX_SEND_BUF: usize = 256 * 1024;

/// Connection limits and timeouts (see the module doc for the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most connections open at once; past it a new connection is answered
    /// 503 with `Retry-After` and closed.
    pub max_connections: usize,
    /// Time to send a complete request head: from connecting for the first
    /// request, from its first byte for later ones (a request body that
    /// trickles in counts as the next head). Past it the connection is
    /// closed.
    pub header_timeout: Duration,
    /// Time an idle keep-alive connection is kept open.
    pub keepalive_timeout: Duration,
    /// Time a client may go without taking any response bytes; then the
    /// connection is closed.
    pub send_timeout: Duration,
    /// Time a client may go without sending a byte of a body the server
    /// reads (an upload); then the request fails and the connection is
    /// closed.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            keepalive_timeout: DEFAULT_KEEPALIVE_TIMEOUT,
            send_timeout: DEFAULT_SEND_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

/// The soft open-files limit before and after [`raise_open_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    pub before: u64,
    pub now: u64,
}

impl OpenFiles {
    /// Connections the limit leaves room for (one descriptor each).
    pub(crate) fn connection_budget(&self) -> usize {
        usize::try_from(self.now.saturating_sub(RESERVED_FILES).max(1)).unwrap_or(usize::MAX)
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit: the soft default
/// (often 1024) would cap the server near a thousand connections while the
/// system allows far more.
pub fn raise_open_files() -> io::Result<OpenFiles> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    // None is "unlimited".
    let before = limit.current.unwrap_or(u64::MAX);
    if limit.current == limit.maximum {
        return Ok(OpenFiles {
            before,
            now: before,
        });
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    )?;
    Ok(OpenFiles {
        before,
        now: limit.maximum.unwrap_or(u64::MAX),
    })
}

/// The effective connection cap: the one asked for, or the default within
/// what the open-files limit allows.
pub(crate) fn max_connections(asked: Option<usize>, files: OpenFiles) -> usize {
    asked.unwrap_or_else(|| DEFAULT_MAX_CONNECTIONS.min(files.connection_budget()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_fits_the_open_files_limit() {
        let roomy = OpenFiles {
            before: 1024,
            now: 1 << 20,
        };
        assert_eq!(max_connections(None, roomy), DEFAULT_MAX_CONNECTIONS);
        let tight = OpenFiles {
            before: 256,
            now: 256,
        };
        assert_eq!(max_connections(None, tight), 256 - RESERVED_FILES as usize);
        let tiny = OpenFiles { before: 8, now: 8 };
        assert_eq!(max_connections(None, tiny), 1);
        // What is asked for is kept, even past the budget (the accept loop
        // rides out the descriptor shortage).
        assert_eq!(max_connections(Some(5000), tight), 5000);
    }

    #[test]
    fn raising_never_lowers() {
        let files = raise_open_files().expect("getrlimit works on Linux");
        assert!(files.now >= files.before, "{files:?}");
    }
}

//! The limits every client is held to, with nginx's defaults as the model,
//! and the open-files limit raised at start (nginx's `worker_rlimit_nofile`).
//!
//! | ccc                       | nginx                         | default |
//! |---------------------------|-------------------------------|---------|
//! | `--max-connections`       | `worker_connections`          | 1024    |
//! | `--header-timeout`        | `client_header_timeout`       | 60 s    |
//! | `--keepalive-timeout`     | `keepalive_timeout`           | 75 s    |
//! | `--send-timeout`          | `send_timeout`                | 60 s    |
//! | [`MAX_REQUEST_LINE`] 414  | `large_client_header_buffers` | 8 KiB + 64 B |
//! | [`MAX_HEADER_LINE`] 431   | `large_client_header_buffers` | 8 KiB   |
//! | [`MAX_HEAD`] 431          | `large_client_header_buffers` | 4x8 KiB |
//! | [`MAX_DISCARDED_BODY`] 413| `client_max_body_size`        | 1 MiB   |
//!
//! The size limits are constants: they bound memory per connection, and a
//! CDN's requests are small (a long asset URL and a few headers fit in
//! 2 KiB). The head limits answer the status RFC 6585 and RFC 9110 name,
//! then close the connection.

use std::io;
use std::time::Duration;

/// Longest request line: an 8 KiB request target (the router's limit,
/// also 414) with room for the method and the version; a longer line is
/// answered 414 as soon as it is seen, before it is complete.
pub const MAX_REQUEST_LINE: usize = 8 * 1024 + 64;
/// Longest header line; a longer one is answered 431.
pub const MAX_HEADER_LINE: usize = 8 * 1024;
/// Largest request head, request line and header lines together; a larger
/// one is answered 431.
pub const MAX_HEAD: usize = 4 * 8 * 1024;
/// Most header lines in one request (Apache's `LimitRequestFields`); more
/// is answered 431.
pub const MAX_HEADERS: usize = 100;
/// Largest request body read (in small pieces) and thrown away; a larger
/// one is answered 413 and the connection closed. ccc answers only GET and
/// HEAD, whose bodies mean nothing, so no body is ever kept in memory.
pub const MAX_DISCARDED_BODY: u64 = 1024 * 1024;
/// Connections when `--max-connections` is not given, fewer when the
/// open-files limit does not allow them.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Descriptors kept out of the connection budget: the catalog and its WAL
/// files, stdio, the listener, a refused connection's short life.
pub const RESERVED_FILES: u64 = 32;

/// Connection limits and timeouts (see the module doc for the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most connections open at once; past it a new connection is answered
    /// 503 with `Retry-After` and closed.
    pub max_connections: usize,
    /// Time to send a complete request head: from connecting for the first
    /// request, from its first byte for later ones. Past it the connection
    /// is closed.
    pub header_timeout: Duration,
    /// Time an idle keep-alive connection is kept open.
    pub keepalive_timeout: Duration,
    /// Time a client may go without taking any response bytes; then the
    /// connection is closed.
    pub send_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: Duration::from_secs(60),
            keepalive_timeout: Duration::from_secs(75),
            send_timeout: Duration::from_secs(60),
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
    pub fn connection_budget(&self) -> usize {
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
pub fn max_connections(asked: Option<usize>, files: OpenFiles) -> usize {
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

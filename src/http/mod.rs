//! HTTP semantics for `ccc serve`, as pure functions over strings and
//! catalog rows, unit-tested without sockets:
//!
//! - [`route`]: request target -> what is asked for (asset, listing, stats,
//!   metrics, health), percent-decoding once and refusing unsafe paths; the URLs of
//!   redirects, query string kept;
//! - [`negotiate`]: `Accept-Encoding` -> dcb, dcz, br, gzip or identity;
//! - [`conditional`]: validators (`ETag`, `Last-Modified`) and the
//!   `If-None-Match` / `If-Modified-Since` evaluation of RFC 9110 13.2.2;
//! - [`range`]: `Range` and `If-Range` -> whole, one part (206) or 416;
//! - [`cors`]: the cross-origin and security headers of every response,
//!   and the answer to `OPTIONS`;
//! - [`dictionary`]: Compression Dictionary Transport's headers
//!   (`Use-As-Dictionary`, `Available-Dictionary`) and which requests may
//!   get a delta;
//! - [`not_found`]: which of package, version or file a 404 names;
//! - [`host`]: whether a request's `Host` (and HTTP/2 `:authority`) is a
//!   host;
//! - [`access_log`]: the line `--access-log` prints per request (nginx's
//!   `combined`, or JSON); [`log_skip`]: the paths `--log-exclude` leaves
//!   out of it.
//!
//! # Validators
//!
//! Each representation has a strong ETag derived from the content's sha256:
//! `"<sha256>"` for the decoded bytes, `"<sha256>-gz"` for the stored gzip
//! stream, `"<sha256>-br.<length>"` for the brotli stream (different byte
//! sequences, so they need different strong tags; the length tells a
//! stream from the shorter one `recompress` may replace it with). `If-None-Match` uses the weak
//! comparison (RFC 9110 8.8.3.2) against the tag of the representation
//! the request selects, only (RFC 9110 13.1.2): a shared cache that holds
//! the gzip copy revalidates it with the gzip tag, and a 304 always
//! matches a copy the cache holds. `Last-Modified` is
//! the version's publish time; versions are immutable, so it never moves.

pub(crate) mod access_log;
pub(crate) mod conditional;
pub(crate) mod cors;
pub(crate) mod dictionary;
pub(crate) mod forwarded;
pub(crate) mod header_lines;
pub(crate) mod host;
pub(crate) mod log_skip;
pub(crate) mod negotiate;
pub(crate) mod not_found;
pub(crate) mod range;
pub(crate) mod route;

//! Sites: a host (or the default root) that serves one package at a
//! dist-tag, `/` and every path under it answered from that version's
//! files.
//!
//! - [`rules`]: the `_redirects` and `_headers` files a build carries at
//!   its root, parsed once into rules that a request is matched against
//!   without I/O; publish parses them too, so a version whose rules ccc
//!   cannot follow is refused before anything is written;
//! - [`fingerprint`]: whether a file name carries a content hash, so that
//!   it may be served `immutable` while the site's other files are
//!   revalidated.

pub(crate) mod fingerprint;
pub(crate) mod rules;

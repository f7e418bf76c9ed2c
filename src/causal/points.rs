//! ccc's instrumented sites, progress point and latency point.
//!
//! Sites are listed in [`SITES`] with `id == index` (a unit test checks
//! it). Names match `[a-z0-9][a-z0-9._:-]*`, safe in both of Coz's profile
//! formats. A site marks one call site, not a shared helper: a site means
//! "this call".

use super::{Latency, Progress, Site};

/// HTTP worker: looking a key up in the shared asset cache (a hit then
/// needs no call on the store actor).
pub static CACHE_LOOKUP: Site = Site::new(0, "cache-lookup");
/// A miss, on the thread that reads it: asking the cache whether it would
/// keep the asset (a miss the file index answers, for a whole body),
/// preparing the read asset's responses, then offering it to the cache
/// (the admission contest, and evicting). Two visits a miss, three when
/// it asks first.
pub static CACHE_INSERT: Site = Site::new(1, "cache-insert");
/// A miss, on the thread that reads it: the catalog read, body copied out
/// of SQLite.
pub static SQLITE_QUERY: Site = Site::new(2, "sqlite-query");
/// HTTP worker: decoding a stored gzip body for a client without gzip.
pub static GZIP_DECODE: Site = Site::new(3, "gzip-decode");
/// HTTP worker: writing the response (headers and body) to the socket.
pub static HTTP_RESPOND: Site = Site::new(4, "http-respond");
/// HTTP worker: routing and header work before the store is asked.
pub static HTTP_PARSE: Site = Site::new(5, "http-parse");

/// Every site, indexed by id.
pub static SITES: [&Site; 6] = [
    &CACHE_LOOKUP,
    &CACHE_INSERT,
    &SQLITE_QUERY,
    &GZIP_DECODE,
    &HTTP_RESPOND,
    &HTTP_PARSE,
];

/// One successful asset response (200 or 304).
pub static ASSET_SERVED: Progress = Progress::new(names::ASSET_SERVED);

/// Progress points' names as constants, so that real Coz's points (the
/// `coz` feature) carry the same names as ccc's.
pub mod names {
    pub const ASSET_SERVED: &str = "asset-served";
}

/// HTTP worker: one request, from its head taken off the queue to its
/// response written (whatever its status).
pub static REQUEST: Latency = Latency::new("request");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_indexes_and_names_are_safe() {
        for (i, site) in SITES.iter().enumerate() {
            assert_eq!(site.id as usize, i, "{}", site.name);
            let mut chars = site.name.chars();
            assert!(
                chars
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            );
            assert!(
                chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._:-".contains(c))
            );
        }
    }
}

//! An asset with its responses prepared: everything about a response that
//! does not depend on the request is computed once, when the store loads
//! the asset, and shared by every response that sends it.
//!
//! Per representation (the stored gzip stream, and the decoded bytes), the
//! header lines of the 200 and of the 304 are built as tiny_http headers,
//! so a response clones a ready list instead of formatting ETags from the
//! sha256, formatting `Last-Modified` and validating fifteen header lines.
//! The store builds the validators and the list almost every response
//! uses (the 200 of the gzip stream) when it loads the asset; each other
//! list is built by the first response that needs it and kept, so a miss
//! that is never asked again pays for one list, not four.
//! Both ETags are kept for `If-None-Match`: either one validates, since
//! both name the same content (see [`crate::http`]).

use crate::frontend::SERVER;
use crate::http::conditional::{etag, http_date};
use crate::http::cors;
use crate::serve::store::StoredAsset;
use std::sync::OnceLock;
use tiny_http::Header;

/// `Cache-Control` of an exact version's files: they never change.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A stored asset and its prepared responses.
#[derive(Debug)]
pub struct Prepared {
    pub stored: StoredAsset,
    /// `[decoded, gzip]` ETags; both exist for every asset.
    tags: [String; 2],
    last_modified: String,
    identity: Representation,
    /// Only for a gzip-stored asset.
    gzip: Option<Representation>,
}

/// What answers for one representation of the asset.
#[derive(Debug)]
struct Representation {
    gzip: bool,
    length: usize,
    ok: OnceLock<Vec<Header>>,
    not_modified: OnceLock<Vec<Header>>,
}

impl Prepared {
    /// Computes the validators. The store builds the 200 header lines of
    /// the representation nearly every client gets (gzip when stored so)
    /// when the asset enters the cache; the other lists are built by the
    /// first response that needs them, once.
    pub fn new(stored: StoredAsset) -> Prepared {
        let sha = hex::encode(stored.sha256);
        let representation = |gzip: bool, length: usize| Representation {
            gzip,
            length,
            ok: OnceLock::new(),
            not_modified: OnceLock::new(),
        };
        Prepared {
            tags: [etag(&sha, false), etag(&sha, true)],
            last_modified: http_date(stored.published_at),
            identity: representation(false, stored.raw_size as usize),
            gzip: stored.gzip.then(|| representation(true, stored.body.len())),
            stored,
        }
    }

    /// The representation to send: the stored gzip stream when the client
    /// takes gzip and the asset has one, else the decoded bytes.
    fn representation(&self, send_gzip: bool) -> &Representation {
        match (&self.gzip, send_gzip) {
            (Some(gzip), true) => gzip,
            _ => &self.identity,
        }
    }

    /// Whether a gzip representation exists.
    pub fn has_gzip(&self) -> bool {
        self.gzip.is_some()
    }

    /// Both ETags, for `If-None-Match`.
    pub fn tags(&self) -> [&str; 2] {
        [&self.tags[0], &self.tags[1]]
    }

    /// The Content-Length of a representation (also sent with a 304 and a
    /// HEAD).
    pub fn length(&self, send_gzip: bool) -> usize {
        self.representation(send_gzip).length
    }

    /// The header lines of a 200, `Server` first.
    pub fn ok(&self, send_gzip: bool) -> &[Header] {
        let representation = self.representation(send_gzip);
        representation
            .ok
            .get_or_init(|| headers(self.lines(representation, true)))
    }

    /// The header lines of a 200, owned: moved out of an asset no one else
    /// holds (one the cache did not keep), so a miss that is not cached
    /// builds its lines once and copies them never.
    pub fn take_ok(&mut self, send_gzip: bool) -> Vec<Header> {
        let built = match (&mut self.gzip, send_gzip) {
            (Some(gzip), true) => gzip.ok.take(),
            _ => self.identity.ok.take(),
        };
        built.unwrap_or_else(|| headers(self.lines(self.representation(send_gzip), true)))
    }

    /// The header lines of a 304: the validators and caching headers, no
    /// content headers (RFC 9110 15.4.5).
    pub fn not_modified(&self, send_gzip: bool) -> &[Header] {
        let representation = self.representation(send_gzip);
        representation
            .not_modified
            .get_or_init(|| headers(self.lines(representation, false)))
    }

    /// What the cache's byte budget counts: the body held in memory.
    pub fn weight(&self) -> u64 {
        self.stored.body.len() as u64
    }

    fn lines<'a>(&'a self, r: &Representation, ok: bool) -> Vec<(&'static str, &'a str)> {
        let mut lines = vec![("Server", SERVER)];
        if ok {
            lines.push(("Content-Type", &self.stored.content_type));
        }
        lines.extend([
            ("Vary", "Accept-Encoding"),
            ("Cache-Control", IMMUTABLE),
            ("ETag", &self.tags[usize::from(r.gzip)]),
            ("Last-Modified", &self.last_modified),
        ]);
        lines.extend(cors::EVERY_RESPONSE);
        if ok {
            lines.push(("Accept-Ranges", "bytes"));
            if r.gzip {
                lines.push(("Content-Encoding", "gzip"));
            }
        }
        lines
    }
}

/// Header lines from names and values. Values come from ccc or the catalog
/// and are ASCII; one that is not would be a bug, and is left out rather
/// than failing the response.
pub fn headers<'a>(lines: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<Header> {
    lines
        .into_iter()
        .filter_map(|(n, v)| Header::from_bytes(n.as_bytes(), v.as_bytes()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn stored(gzip: bool) -> StoredAsset {
        StoredAsset {
            version_id: 1,
            body: Arc::from(&b"0123456789"[..]),
            gzip,
            sha256: [0xab; 32],
            stored_sha256: None,
            content_type: "text/javascript; charset=utf-8".into(),
            raw_size: 40,
            published_at: 1_700_000_000,
        }
    }

    fn names(lines: &[Header]) -> Vec<String> {
        lines.iter().map(|h| h.field.to_string()).collect()
    }

    fn value<'a>(lines: &'a [Header], name: &'static str) -> Option<&'a str> {
        lines
            .iter()
            .find(|h| h.field.equiv(name))
            .map(|h| h.value.as_str())
    }

    #[test]
    fn both_representations_of_a_gzip_asset() {
        let p = Prepared::new(stored(true));
        let sha = "ab".repeat(32);
        assert_eq!(p.tags(), [format!("\"{sha}\""), format!("\"{sha}-gz\"")]);
        assert_eq!(p.length(true), 10);
        assert_eq!(value(p.ok(true), "ETag"), Some(p.tags()[1]));
        assert_eq!(value(p.ok(true), "Content-Encoding"), Some("gzip"));
        assert_eq!(
            value(p.ok(true), "Last-Modified"),
            Some("Tue, 14 Nov 2023 22:13:20 GMT")
        );
        assert_eq!(
            names(p.ok(true)),
            [
                "Server",
                "Content-Type",
                "Vary",
                "Cache-Control",
                "ETag",
                "Last-Modified",
                "Access-Control-Allow-Origin",
                "Access-Control-Expose-Headers",
                "Cross-Origin-Resource-Policy",
                "Timing-Allow-Origin",
                "X-Content-Type-Options",
                "Accept-Ranges",
                "Content-Encoding"
            ]
        );
        assert_eq!(p.length(false), 40);
        assert_eq!(value(p.ok(false), "ETag"), Some(p.tags()[0]));
        assert_eq!(value(p.ok(false), "Content-Encoding"), None);
    }

    #[test]
    fn lists_are_built_once_and_moved_out_of_uncached_assets() {
        let mut p = Prepared::new(stored(true));
        let (gz, plain) = (p.representation(true), p.representation(false));
        assert!(gz.ok.get().is_none() && plain.ok.get().is_none());
        let first = p.ok(false).as_ptr();
        assert_eq!(p.ok(false).as_ptr(), first, "built once, then shared");
        assert!(p.representation(true).not_modified.get().is_none());
        // An uncached asset's lines are moved out, built or not.
        let taken = p.take_ok(false);
        assert_eq!(taken.as_ptr(), first);
        assert_eq!(names(&p.take_ok(true)), names(p.ok(true)));
    }

    #[test]
    fn a_304_keeps_validators_and_drops_content_headers() {
        let p = Prepared::new(stored(true));
        for send_gzip in [true, false] {
            assert_eq!(
                names(p.not_modified(send_gzip)),
                [
                    "Server",
                    "Vary",
                    "Cache-Control",
                    "ETag",
                    "Last-Modified",
                    "Access-Control-Allow-Origin",
                    "Access-Control-Expose-Headers",
                    "Cross-Origin-Resource-Policy",
                    "Timing-Allow-Origin",
                    "X-Content-Type-Options"
                ]
            );
        }
    }

    #[test]
    fn an_asset_stored_plain_has_one_representation() {
        let p = Prepared::new(stored(false));
        assert!(!p.has_gzip());
        assert_eq!(value(p.ok(true), "ETag"), Some(p.tags()[0]));
        assert_eq!(value(p.ok(true), "Content-Encoding"), None);
        assert_eq!(p.length(true), 40);
        assert_eq!(p.weight(), 10);
    }
}

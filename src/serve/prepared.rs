//! An asset with its responses prepared: everything about a response that
//! does not depend on the request is computed once, when the store loads
//! the asset, and shared by every response that sends it.
//!
//! Per representation (the stored gzip stream, and the decoded bytes), the
//! header lines of the 200 and of the 304 are built as bytes, ready for
//! the head ([`HeaderLines`]), so a response copies them instead of
//! formatting ETags from the sha256 and `Last-Modified` from the time.
//! The store builds the validators and the lines almost every response
//! uses (the 200 of the gzip stream) when it loads the asset; the other
//! lines are built by the first response that needs them and kept, so a
//! miss that is never asked again builds one set, not four.
//! Both ETags are kept for `If-None-Match`: either one validates, since
//! both name the same content (see [`crate::http`]).

use crate::frontend::{HeaderLines, SERVER};
use crate::http::conditional::{etag, http_date};
use crate::http::cors;
use crate::serve::store::StoredAsset;
use std::sync::OnceLock;

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
    ok: OnceLock<HeaderLines>,
    not_modified: OnceLock<HeaderLines>,
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

    /// The header lines of a 200 (`ok`) or of a 304 (not `ok`: the
    /// validators and caching headers, no content headers, RFC 9110
    /// 15.4.5), `Server` first.
    pub fn lines(&self, ok: bool, send_gzip: bool) -> &HeaderLines {
        let representation = self.representation(send_gzip);
        let lines = if ok {
            &representation.ok
        } else {
            &representation.not_modified
        };
        lines.get_or_init(|| self.build(representation, ok))
    }

    /// What the cache's byte budget counts: the body held in memory.
    pub fn weight(&self) -> u64 {
        self.stored.body.len() as u64
    }

    fn build(&self, r: &Representation, ok: bool) -> HeaderLines {
        let mut lines = HeaderLines::new();
        lines.push("Server", SERVER);
        if ok {
            lines.push("Content-Type", &self.stored.content_type);
        }
        lines
            .push("Vary", "Accept-Encoding")
            .push("Cache-Control", IMMUTABLE)
            .push("ETag", &self.tags[usize::from(r.gzip)])
            .push("Last-Modified", &self.last_modified);
        for (name, value) in cors::EVERY_RESPONSE {
            lines.push(name, value);
        }
        if ok {
            lines.push("Accept-Ranges", "bytes");
            if r.gzip {
                lines.push("Content-Encoding", "gzip");
            }
        }
        lines
    }
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
            content_type: "text/javascript; charset=utf-8".into(),
            raw_size: 40,
            published_at: 1_700_000_000,
        }
    }

    fn names(lines: &HeaderLines) -> Vec<&str> {
        lines.iter().map(|(name, _)| name).collect()
    }

    fn value<'a>(lines: &'a HeaderLines, name: &'static str) -> Option<&'a str> {
        lines.get(name)
    }

    #[test]
    fn both_representations_of_a_gzip_asset() {
        let p = Prepared::new(stored(true));
        let sha = "ab".repeat(32);
        assert_eq!(p.tags(), [format!("\"{sha}\""), format!("\"{sha}-gz\"")]);
        assert_eq!(p.length(true), 10);
        assert_eq!(value(p.lines(true, true), "ETag"), Some(p.tags()[1]));
        assert_eq!(value(p.lines(true, true), "Content-Encoding"), Some("gzip"));
        assert_eq!(
            value(p.lines(true, true), "Last-Modified"),
            Some("Tue, 14 Nov 2023 22:13:20 GMT")
        );
        assert_eq!(
            names(p.lines(true, true)),
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
        assert_eq!(value(p.lines(true, false), "ETag"), Some(p.tags()[0]));
        assert_eq!(value(p.lines(true, false), "Content-Encoding"), None);
    }

    #[test]
    fn lines_are_built_when_first_needed_then_shared() {
        let p = Prepared::new(stored(true));
        let (gz, plain) = (p.representation(true), p.representation(false));
        assert!(gz.ok.get().is_none() && plain.ok.get().is_none());
        let first = p.lines(true, false).as_ref().as_ptr();
        assert_eq!(p.lines(true, false).as_ref().as_ptr(), first, "built once");
        assert!(p.representation(true).not_modified.get().is_none());
        assert!(p.representation(true).ok.get().is_none());
    }

    #[test]
    fn the_lines_are_the_head_as_sent() {
        let p = Prepared::new(stored(true));
        let text = std::str::from_utf8(p.lines(false, true).as_ref()).unwrap();
        let cors: String = cors::EVERY_RESPONSE
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect();
        assert_eq!(
            text,
            format!(
                "Server: {SERVER}\r\nVary: Accept-Encoding\r\nCache-Control: {IMMUTABLE}\r\n\
                 ETag: \"{}-gz\"\r\nLast-Modified: Tue, 14 Nov 2023 22:13:20 GMT\r\n{cors}",
                "ab".repeat(32)
            )
        );
    }

    #[test]
    fn a_304_keeps_validators_and_drops_content_headers() {
        let p = Prepared::new(stored(true));
        for send_gzip in [true, false] {
            assert_eq!(
                names(p.lines(false, send_gzip)),
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
        assert_eq!(value(p.lines(true, true), "ETag"), Some(p.tags()[0]));
        assert_eq!(value(p.lines(true, true), "Content-Encoding"), None);
        assert_eq!(p.length(true), 40);
        assert_eq!(p.weight(), 10);
    }
}

//! An asset with its responses prepared: everything about a response that
//! does not depend on the request is computed once, when the store loads
//! the asset, and shared by every response that sends it.
//!
//! Per representation (the decoded bytes, the stored gzip stream, the
//! brotli stream), the head of the 200 is built once, as the header map
//! the transport sends ([`KeptHead`]), `Content-Length`
//! included, so a response clones it instead of formatting ETags from the
//! sha256 and `Last-Modified` from the time, or inserting line by line; a
//! 304 sends the same lines less the content headers ([`in_304`]). The
//! store builds the validators and the head almost every response uses
//! (the 200 of the smallest coding) when it loads the asset; the other
//! heads are built by the first response that needs them and kept, so a
//! miss that is never asked again builds one, not three.
//! Every held representation's ETag is kept: `If-None-Match` is compared
//! with the one the request selects (see [`crate::http`]).
//!
//! The brotli stream's tag names its length (`"<sha256>-br.<length>"`):
//! `recompress` replaces a stream after publish only with a shorter one,
//! so the tag changes whenever the bytes do, and a client holding part of
//! the old stream never gets a range of the new one under its tag.
//!
//! An asset's entry for a dictionary ([`StoredAsset::with_delta`]) holds
//! its deltas against it besides: `dcb` and `dcz`, each a representation
//! with its own strong ETag (`"<sha256>-dcb.<16 hex digits of the body's
//! XXH3-128>"`: the body names its dictionary, so the tag does too, and
//! changes with any byte of it), held only when smaller than what a
//! client that accepts brotli is sent otherwise. Representations are
//! kept smallest first, the decoded one last: among codings a client
//! ranks equally, the first it accepts is the one it gets. An asset that
//! has deltas varies by `Available-Dictionary` as well as by
//! `Accept-Encoding` (RFC 9842 2.2), in every representation; one offered
//! as a dictionary carries `Use-As-Dictionary`.

use crate::encoding::Encoding;
use crate::http::conditional::{HTTP_DATE_LEN, etag_len, push_etag, push_http_date};
use crate::http::cors;
use crate::http::header_lines::{KeptHead, built_heap_bytes};
use crate::serve::stored::{StoredAsset, Stream};
use crate::transport::SERVER;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use std::sync::OnceLock;

/// Whether a 304 sends the line named `name`: its validators and caching
/// headers do, content headers do not (RFC 9110 15.4.5).
pub fn in_304(name: &HeaderName) -> bool {
    !matches!(
        *name,
        header::CONTENT_TYPE | header::ACCEPT_RANGES | header::CONTENT_ENCODING
    )
}

/// `Cache-Control` of an exact version's files: they never change.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A stored asset and its prepared responses.
///
/// Few allocations, each at its exact size: a cache under a uniform load
/// admits and drops assets all the time, and every block an asset keeps
/// beside the short-lived ones of a miss fragments glibc's heap (bench/RPS.md
/// measured its bins costing the cache its gain). So the ETags and the
/// date share one text, and the codings sit inline.
#[derive(Debug)]
pub struct Prepared {
    pub stored: StoredAsset,
    /// The ETags of the representations held, in their order, then
    /// `Last-Modified`; each representation knows where its tag ends.
    validators: Box<str>,
    /// The representations held, smallest first; the decoded one
    /// (identity) always, last.
    held: Vec<Representation>,
    /// Their codings, for negotiation: the first `held.len()`.
    offered: [Encoding; 5],
}

/// `Use-As-Dictionary` (RFC 9842 2.1).
pub static USE_AS_DICTIONARY: HeaderName = HeaderName::from_static("use-as-dictionary");

/// `Vary` of an asset with deltas: the dictionary a request names
/// selects the representation too.
const VARY_WITH_DICTIONARY: &str = "Accept-Encoding, Available-Dictionary";

/// What answers for one representation of the asset.
#[derive(Debug)]
struct Representation {
    encoding: Encoding,
    length: usize,
    /// Where its ETag ends in [`Prepared::validators`] (it starts where
    /// the previous one ends).
    tag_end: usize,
    /// The head of its 200.
    ok: OnceLock<HeaderMap>,
}

/// The ETags of an asset's representations, for `If-None-Match`.
pub struct Tags<'a> {
    tags: [&'a str; 5],
    len: usize,
}

impl<'a> std::ops::Deref for Tags<'a> {
    type Target = [&'a str];
    fn deref(&self) -> &[&'a str] {
        &self.tags[..self.len]
    }
}

impl Prepared {
    /// Computes the validators. The 200 header lines of each
    /// representation are built by the first response that needs them,
    /// once.
    pub fn new(stored: StoredAsset) -> Prepared {
        let mut hex = [0u8; 64];
        // Cannot fail: 64 bytes hold 32 in hex, and hex digits are UTF-8.
        let _ = hex::encode_to_slice(stored.sha256, &mut hex);
        let sha = std::str::from_utf8(&hex).unwrap_or_default();
        let length = |encoding| match encoding {
            Encoding::Identity => Some(stored.raw_size as usize),
            coded => stored.body(coded).map(|(body, _)| body.len() as usize),
        };
        // What a client that accepts brotli gets without a delta.
        let baseline = Encoding::PREFERENCE
            .into_iter()
            .find_map(length)
            .unwrap_or(usize::MAX);
        let mut codings: Vec<(Encoding, usize)> = [Encoding::Dcb, Encoding::Dcz]
            .into_iter()
            .chain(Encoding::PREFERENCE)
            .filter_map(|e| length(e).map(|len| (e, len)))
            .filter(|(e, len)| !e.is_delta() || *len < baseline)
            .collect();
        // Smallest first, the decoded bytes last; ties in the order above.
        codings.sort_by_key(|(e, len)| (*e == Encoding::Identity, *len));
        let mut validators = String::with_capacity(
            codings.iter().map(|(e, _)| tag_len(sha, *e)).sum::<usize>() + HTTP_DATE_LEN,
        );
        let mut held = Vec::with_capacity(codings.len());
        let mut offered = [Encoding::Identity; 5];
        for (encoding, length) in codings {
            push_tag(&mut validators, sha, encoding, &stored);
            offered[held.len()] = encoding;
            held.push(Representation {
                encoding,
                length,
                tag_end: validators.len(),
                ok: OnceLock::new(),
            });
        }
        push_http_date(&mut validators, stored.published_at);
        Prepared {
            validators: validators.into_boxed_str(),
            held,
            offered,
            stored,
        }
    }

    /// Whether the catalog holds a delta of the asset against the
    /// dictionary `sha256` (its entry for it then has the bodies).
    pub fn has_delta_against(&self, sha256: &[u8; 32]) -> bool {
        self.stored.has_delta_against(sha256)
    }

    /// What a client that accepts brotli is sent without a delta: the
    /// length of the smallest of br, gzip and the file.
    pub fn baseline(&self) -> usize {
        Encoding::PREFERENCE
            .into_iter()
            .find(|e| self.offered().contains(e))
            .map_or(0, |e| self.length(e))
    }

    /// The index of the representation of `encoding`, or of the decoded
    /// one (last) when the asset has no such coding.
    fn index(&self, encoding: Encoding) -> usize {
        self.offered()
            .iter()
            .position(|e| *e == encoding)
            .unwrap_or(self.held.len() - 1)
    }

    /// The representation of `encoding`, or the decoded one when the asset
    /// has no such coding.
    fn representation(&self, encoding: Encoding) -> &Representation {
        &self.held[self.index(encoding)]
    }

    /// The codings the asset can be sent in, smallest first; identity last.
    pub fn offered(&self) -> &[Encoding] {
        &self.offered[..self.held.len()]
    }

    /// The smallest coding held: what nearly every client is sent.
    pub fn smallest(&self) -> Encoding {
        self.offered[0]
    }

    /// The ETag of every representation held, for `If-None-Match`.
    pub fn tags(&self) -> Tags<'_> {
        let mut tags = Tags {
            tags: [""; 5],
            len: self.held.len(),
        };
        for (i, tag) in tags.tags.iter_mut().take(self.held.len()).enumerate() {
            *tag = self.tag_at(i);
        }
        tags
    }

    fn tag_at(&self, index: usize) -> &str {
        let start = index.checked_sub(1).map_or(0, |i| self.held[i].tag_end);
        &self.validators[start..self.held[index].tag_end]
    }

    /// The ETag of the representation of `encoding` (the decoded one's
    /// when the asset has no such coding).
    pub fn tag(&self, encoding: Encoding) -> &str {
        self.tag_at(self.index(encoding))
    }

    /// `Last-Modified`.
    fn last_modified(&self) -> &str {
        let tags_end = self.held.last().map_or(0, |r| r.tag_end);
        &self.validators[tags_end..]
    }

    /// The Content-Length of a representation (also sent with a 304 and a
    /// HEAD).
    pub fn length(&self, encoding: Encoding) -> usize {
        self.representation(encoding).length
    }

    /// Writes the head of a 200 of `encoding` (`ok`), or of a 304 (the
    /// lines [`in_304`] keeps), into `map`: a clone of the kept head, built
    /// by the first response that asks to `keep` it (a cache hit) or any
    /// later one; until then the lines written straight into `map`. A miss
    /// (which the cache may never keep) thus builds its lines once, not a
    /// kept head and a clone of it.
    pub fn write_head(&self, encoding: Encoding, ok: bool, keep: bool, map: &mut HeaderMap) {
        let representation = self.representation(encoding);
        let kept = if keep {
            Some(self.lines(encoding))
        } else {
            representation.ok.get()
        };
        if let Some(head) = kept {
            if ok {
                *map = head.clone();
            } else {
                map.reserve(head.len());
                for (name, value) in head.iter().filter(|(n, _)| in_304(n)) {
                    map.append(name.clone(), value.clone());
                }
            }
            return;
        }
        map.reserve(16);
        self.each_line(representation, |name, value| {
            if !ok && !in_304(&name) {
                return;
            }
            let value = match value {
                Line::Constant(value) => HeaderValue::from_static(value),
                // A value that may not be sent (a control character: a bug
                // in ccc or the catalog) is left out, as the kept head does.
                Line::Text(value) => match HeaderValue::from_str(value) {
                    Ok(value) => value,
                    Err(_) => return,
                },
            };
            map.append(name, value);
        });
    }

    /// The head of a 200 of the representation of `encoding`, `Server`
    /// first and `Content-Length` last; a 304 sends the lines that
    /// [`in_304`] keeps.
    pub fn lines(&self, encoding: Encoding) -> &HeaderMap {
        let representation = self.representation(encoding);
        representation.ok.get_or_init(|| self.build(representation))
    }

    /// What the asset holds on the heap, for the cache's byte budget: the
    /// bodies, the validators and content type, and every set of header
    /// lines it may come to hold, none of which is built here. Each set is
    /// at most 8 bytes longer than the smallest coding's (`Content-Encoding:
    /// gzip` against `br`), and is charged now, as that bound: the cache's
    /// bytes then bound its memory however the asset is asked for later.
    pub fn weight(&self) -> u64 {
        use crate::serve::cache::allocation;
        // A coding left in the catalog holds its piece digests and marks.
        let arc = |body: &Stream| match body {
            Stream::Memory(bytes) => allocation(bytes.len() + 16),
            Stream::Catalog {
                digests, verified, ..
            } => allocation(digests.len() * 16 + 16) + allocation(verified.heap_bytes() + 16),
        };
        let deltas = self.stored.delta.as_ref().map_or(0, |d| {
            [&d.dcb, &d.dcz]
                .into_iter()
                .flatten()
                .map(|b| arc(&b.stream))
                .sum()
        });
        let bodies = arc(&self.stored.body) + self.stored.brotli.as_ref().map_or(0, arc) + deltas;
        // Every set of lines it may come to build, each as long as built.
        let lines: u64 = self
            .held
            .iter()
            .map(|r| allocation(self.lines_heap_bytes(r)))
            .sum();
        let offers = allocation(self.stored.deltas.len() * size_of::<[u8; 32]>());
        let texts = allocation(self.validators.len())
            + allocation(self.stored.content_type.capacity())
            + self
                .stored
                .use_as_dictionary
                .as_ref()
                .map_or(0, |u| allocation(u.len()));
        let held = allocation(self.held.capacity() * size_of::<Representation>());
        bodies + lines + offers + texts + held
    }

    fn build(&self, r: &Representation) -> HeaderMap {
        let mut head = KeptHead::with_capacity(
            15,
            self.stored.content_type.len()
                + self.validators.len()
                + self
                    .stored
                    .use_as_dictionary
                    .as_ref()
                    .map_or(0, |u| u.len())
                + 20,
        );
        self.each_line(r, |name, value| {
            match value {
                Line::Constant(value) => head.constant(name, value),
                Line::Text(value) => head.text(name, value),
            };
        });
        // Kept as long as the asset is cached, and charged to its budget.
        head.build()
    }

    /// What [`map_heap_bytes`](crate::http::header_lines::map_heap_bytes)
    /// would count for the lines of `r` once built,
    /// worked out from their values: a miss that may never be cached does
    /// not build lines it does not send.
    fn lines_heap_bytes(&self, r: &Representation) -> usize {
        let (mut lines, mut text) = (0, 0);
        self.each_line(r, |_, value| {
            lines += 1;
            text += match value {
                Line::Constant(value) => value.len(),
                Line::Text(value) => value.len(),
            };
        });
        built_heap_bytes(lines, text)
    }

    /// The lines of a 200 of `r`, in order: `Server` first,
    /// `Content-Length` last.
    fn each_line(&self, r: &Representation, mut line: impl FnMut(HeaderName, Line<'_>)) {
        line(header::SERVER, Line::Constant(SERVER));
        line(header::CONTENT_TYPE, Line::Text(&self.stored.content_type));
        let vary = match self.stored.deltas.is_empty() {
            true => "Accept-Encoding",
            false => VARY_WITH_DICTIONARY,
        };
        line(header::VARY, Line::Constant(vary));
        line(header::CACHE_CONTROL, Line::Constant(IMMUTABLE));
        if let Some(value) = &self.stored.use_as_dictionary {
            line(USE_AS_DICTIONARY.clone(), Line::Text(value));
        }
        line(header::ETAG, Line::Text(self.tag(r.encoding)));
        line(header::LAST_MODIFIED, Line::Text(self.last_modified()));
        for (name, value) in cors::EVERY_RESPONSE_NAMED.iter() {
            line(name.clone(), Line::Constant(value));
        }
        line(header::ACCEPT_RANGES, Line::Constant("bytes"));
        if r.encoding != Encoding::Identity {
            line(
                header::CONTENT_ENCODING,
                Line::Constant(r.encoding.as_str()),
            );
        }
        line(header::CONTENT_LENGTH, Line::Text(&r.length.to_string()));
    }
}

/// The strong ETag of the representation of `encoding` of `stored`
/// (module doc), appended to `out`.
fn push_tag(out: &mut String, sha: &str, encoding: Encoding, stored: &StoredAsset) {
    let delta = stored.delta.as_ref().and_then(|d| d.get(encoding));
    match (encoding, delta) {
        (_, Some(delta)) => {
            let mut digest = [0u8; 16];
            // Cannot fail: 16 bytes hold 8 in hex.
            let _ = hex::encode_to_slice(&delta.xxh3[..8], &mut digest);
            push_named(
                out,
                sha,
                encoding,
                std::str::from_utf8(&digest).unwrap_or_default(),
            );
        }
        (Encoding::Brotli, None) => match &stored.brotli {
            Some(stream) => push_named(out, sha, encoding, &stream.len().to_string()),
            None => push_etag(out, sha, encoding),
        },
        _ => push_etag(out, sha, encoding),
    }
}

/// `"<sha><suffix>.<name>"`: the tag of a representation whose bytes are
/// told apart by `name` as well as by the content.
fn push_named(out: &mut String, sha: &str, encoding: Encoding, name: &str) {
    out.push('"');
    out.push_str(sha);
    out.push_str(encoding.etag_suffix());
    out.push('.');
    out.push_str(name);
    out.push('"');
}

/// At least the length of what [`push_tag`] appends.
fn tag_len(sha: &str, encoding: Encoding) -> usize {
    let name = match encoding {
        Encoding::Dcb | Encoding::Dcz => 16,
        Encoding::Brotli => 20,
        Encoding::Gzip | Encoding::Identity => 0,
    };
    etag_len(sha, encoding) + if name > 0 { name + 1 } else { 0 }
}

/// A line's value: a constant, shared, or text copied into the head.
enum Line<'a> {
    Constant(&'static str),
    Text(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding::{Brotli, Gzip, Identity};
    use crate::http::header_lines::map_heap_bytes;
    use std::sync::Arc;

    fn stored(encoding: Encoding, brotli: bool) -> StoredAsset {
        StoredAsset {
            version_id: 1,
            blob_id: 1,
            body: Stream::Memory(Arc::from(&b"0123456789"[..])),
            encoding,
            sha256: [0xab; 32],
            brotli: brotli.then(|| Stream::Memory(Arc::from(&b"01234567"[..]))),
            content_type: "text/javascript; charset=utf-8".into(),
            raw_size: 40,
            published_at: 1_700_000_000,
            chunks: None,
            deltas: Arc::new([]),
            delta: None,
            use_as_dictionary: None,
        }
    }

    fn names(head: &HeaderMap) -> Vec<&str> {
        head.keys().map(HeaderName::as_str).collect()
    }

    fn value<'a>(head: &'a HeaderMap, name: &'static str) -> Option<&'a str> {
        head.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn every_representation_of_a_compressed_asset() {
        let p = Prepared::new(stored(Gzip, true));
        let sha = "ab".repeat(32);
        assert_eq!(
            *p.tags(),
            [
                format!("\"{sha}-br.8\""),
                format!("\"{sha}-gz\""),
                format!("\"{sha}\"")
            ]
        );
        assert_eq!(p.offered(), [Brotli, Gzip, Identity]);
        assert_eq!(p.smallest(), Brotli);
        assert_eq!(p.length(Gzip), 10);
        assert_eq!(p.length(Brotli), 8);
        assert_eq!(p.length(Identity), 40);
        for (encoding, tag, coding) in [
            (Brotli, p.tags()[0], Some("br")),
            (Gzip, p.tags()[1], Some("gzip")),
            (Identity, p.tags()[2], None),
        ] {
            assert_eq!(p.tag(encoding), tag);
            assert_eq!(value(p.lines(encoding), "ETag"), Some(tag));
            assert_eq!(value(p.lines(encoding), "Content-Encoding"), coding);
            assert_eq!(value(p.lines(encoding), "Vary"), Some("Accept-Encoding"));
        }
        assert_eq!(
            value(p.lines(Gzip), "Last-Modified"),
            Some("Tue, 14 Nov 2023 22:13:20 GMT")
        );
        assert_eq!(
            names(p.lines(Gzip)),
            [
                "server",
                "content-type",
                "vary",
                "cache-control",
                "etag",
                "last-modified",
                "access-control-allow-origin",
                "access-control-expose-headers",
                "cross-origin-resource-policy",
                "timing-allow-origin",
                "x-content-type-options",
                "accept-ranges",
                "content-encoding",
                "content-length"
            ]
        );
        assert_held_within_weight(&p);
    }

    /// Builds every set of lines `p` may hold and checks that the heap it
    /// then holds is within the weight charged before any was built.
    fn assert_held_within_weight(p: &Prepared) {
        use crate::serve::cache::allocation;
        let weight = p.weight();
        let mut lines = 0;
        for encoding in p.offered().to_vec() {
            lines += allocation(map_heap_bytes(p.lines(encoding)));
        }
        let bodies = allocation(p.stored.body_bytes().len() + 16)
            + p.stored
                .brotli
                .as_ref()
                .map_or(0, |b| allocation(b.len() as usize + 16));
        // The tags and the date share one text.
        let texts = allocation(p.tags().iter().map(|t| t.len()).sum::<usize>() + 29);
        assert!(
            bodies + lines + texts <= weight,
            "{bodies} + {lines} + {texts} held, {weight} charged"
        );
        // Charged for what may be built, not far beyond it: the rest is the
        // date, the content type and three short vectors.
        let held = bodies + lines + texts;
        assert!(weight < held + 1024, "{weight} charged, {held} held");
    }

    #[test]
    fn the_heap_of_lines_is_known_before_they_are_built() {
        for (encoding, brotli) in [(Gzip, true), (Gzip, false), (Identity, false)] {
            let p = Prepared::new(stored(encoding, brotli));
            for sent in p.offered().to_vec() {
                let r = p.representation(sent);
                let before = p.lines_heap_bytes(r);
                assert!(r.ok.get().is_none(), "weighing built nothing");
                assert_eq!(before, map_heap_bytes(p.lines(sent)), "{sent:?}");
            }
        }
    }

    #[test]
    fn lines_are_built_when_first_needed_then_shared() {
        let p = Prepared::new(stored(Gzip, true));
        for encoding in Encoding::PREFERENCE {
            assert!(p.representation(encoding).ok.get().is_none());
        }
        let first = p.lines(Identity);
        assert!(std::ptr::eq(p.lines(Identity), first), "built once");
        for encoding in [Brotli, Gzip] {
            assert!(p.representation(encoding).ok.get().is_none());
        }
    }

    #[test]
    fn the_lines_are_the_head_as_sent() {
        let p = Prepared::new(stored(Gzip, true));
        let text: String = p
            .lines(Brotli)
            .iter()
            .map(|(n, v)| format!("{n}: {}\r\n", v.to_str().unwrap()))
            .collect();
        let cors: String = cors::EVERY_RESPONSE
            .iter()
            .map(|(name, value)| format!("{}: {value}\r\n", name.to_ascii_lowercase()))
            .collect();
        assert_eq!(
            text,
            format!(
                "server: {SERVER}\r\ncontent-type: text/javascript; charset=utf-8\r\n\
                 vary: Accept-Encoding\r\ncache-control: {IMMUTABLE}\r\n\
                 etag: \"{}-br.8\"\r\nlast-modified: Tue, 14 Nov 2023 22:13:20 GMT\r\n{cors}\
                 accept-ranges: bytes\r\ncontent-encoding: br\r\ncontent-length: 8\r\n",
                "ab".repeat(32)
            )
        );
    }

    #[test]
    fn a_304_keeps_validators_and_drops_content_headers() {
        let p = Prepared::new(stored(Gzip, true));
        for encoding in Encoding::PREFERENCE {
            let sent: Vec<&str> = names(p.lines(encoding))
                .into_iter()
                .filter(|name| in_304(&HeaderName::from_bytes(name.as_bytes()).unwrap()))
                .collect();
            assert_eq!(
                sent,
                [
                    "server",
                    "vary",
                    "cache-control",
                    "etag",
                    "last-modified",
                    "access-control-allow-origin",
                    "access-control-expose-headers",
                    "cross-origin-resource-policy",
                    "timing-allow-origin",
                    "x-content-type-options",
                    "content-length"
                ]
            );
        }
    }

    #[test]
    fn an_asset_stored_plain_has_one_representation() {
        let p = Prepared::new(stored(Identity, false));
        assert_eq!(p.offered(), [Identity]);
        assert_eq!(p.tags().len(), 1, "a tag only for what is held");
        for asked in Encoding::PREFERENCE {
            assert_eq!(value(p.lines(asked), "ETag"), Some(p.tags()[0]));
            assert_eq!(value(p.lines(asked), "Content-Encoding"), None);
            assert_eq!(p.length(asked), 40);
        }
        assert_held_within_weight(&p);
    }
}

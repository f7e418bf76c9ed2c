//! An asset with its responses prepared: everything about a response that
//! does not depend on the request is computed once, when the store first
//! loads the file, and shared by every response that sends it.
//!
//! The store writes the values of the lines ccc makes for the asset
//! (tags, lengths, date) into one text when it looks the file up
//! ([`Lines`]); the file index keeps them with its record of the file, so
//! the file's later misses share them and format nothing. The content
//! type and `Use-As-Dictionary` come checked from the store. A
//! response's head is the template of its shape (a 200 or a 304, coding,
//! `Vary`, which lines the asset has), made once per process, cloned, with
//! the asset's values put in its empty ones: a clone and a few shared
//! values, not a line-by-line build, and no ETag formatted from the sha256
//! nor `Last-Modified` from the time. A 304 sends the 200's lines less the
//! content headers ([`in_304`]). An HTTP/1.1 head is the template's text
//! with the asset's text in its holes; a head as a header map (HTTP/2,
//! hyper) takes header values, which the first such response makes of
//! the text (checked) and the asset keeps, not its lines, so that the
//! file index's records, which share the lines, stay small. An asset
//! keeps no head of its own: the templates are few and stay in the CPU's
//! caches, where a head for each of thousands of assets would
//! not, and such a head would weigh more than a small file's body.
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
use crate::serve::stored::{StoredAsset, Stream, line_value_bytes};
use crate::transport::{self, SERVER};
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// Whether a 304 sends the line named `name`: its validators and caching
/// headers do, content headers do not (RFC 9110 15.4.5).
pub(crate) fn in_304(name: &HeaderName) -> bool {
    !matches!(
        *name,
        header::CONTENT_TYPE | header::ACCEPT_RANGES | header::CONTENT_ENCODING
    )
}

/// `Cache-Control` of an exact version's files: they never change.
pub(crate) const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A stored asset and its prepared responses.
#[derive(Debug)]
pub struct Prepared {
    pub stored: StoredAsset,
    /// The values of its lines: made when the asset is loaded, or shared
    /// with the file index's record of the file (`store::index`), so that
    /// a miss read through the record makes none.
    lines: Arc<Lines>,
    /// The header values of each held representation (its ETag,
    /// `Content-Length` and `Last-Modified`), slices of the lines' text,
    /// made by the first head built as a header map.
    values: OnceLock<Box<[[HeaderValue; 3]]>>,
}

/// The values of the header lines ccc writes for an asset, for each
/// representation it holds.
///
/// Few allocations, each at its exact size: a cache under a uniform load
/// admits and drops assets all the time, and every block an asset keeps
/// beside the short-lived ones of a miss fragments glibc's heap (bench/RPS.md
/// measured its bins costing the cache its gain). So the values share one
/// text, and the representations sit inline.
#[derive(Debug)]
pub(crate) struct Lines {
    /// The values of the header lines ccc writes for the asset, one after
    /// the other: the ETags of the representations held, in their order,
    /// their `Content-Length`s, then `Last-Modified`. Each representation
    /// knows where its tag and length end; the heads take slices of it,
    /// sharing it.
    text: Bytes,
    /// The representations held, smallest first; the decoded one
    /// (identity) always, last. An asset has three at most but for its
    /// entries with deltas.
    held: smallvec::SmallVec<[Representation; 3]>,
    /// Their codings, for negotiation: the first `held.len()`.
    offered: [Encoding; 5],
}

/// `Use-As-Dictionary` (RFC 9842 2.1).
pub(crate) static USE_AS_DICTIONARY: HeaderName = HeaderName::from_static("use-as-dictionary");

/// `Vary` of an asset with deltas: the dictionary a request names
/// selects the representation too.
const VARY_WITH_DICTIONARY: &str = "Accept-Encoding, Available-Dictionary";

/// What answers for one representation of the asset.
#[derive(Debug)]
struct Representation {
    encoding: Encoding,
    length: usize,
    /// Where its ETag ends in [`Lines::text`] (it starts where the
    /// previous one ends).
    tag_end: usize,
    /// Where its `Content-Length` ends there (it starts where the
    /// previous one ends, the first where the last tag ends).
    length_end: usize,
}

impl Prepared {
    /// Computes the validators and the values of the asset's header
    /// lines.
    pub fn new(stored: StoredAsset) -> Prepared {
        Prepared {
            lines: Arc::new(Lines::of(&stored)),
            stored,
            values: OnceLock::new(),
        }
    }

    /// The asset with the values `lines` made of the same file, shared
    /// (a miss read through the file index). They are of every coding the
    /// file has, even when a stream was left in the catalog for a response
    /// that does not send it (`store::index`).
    pub(crate) fn with_lines(stored: StoredAsset, lines: Arc<Lines>) -> Prepared {
        Prepared {
            stored,
            lines,
            values: OnceLock::new(),
        }
    }

    /// The values of its lines, to share with another asset of the file.
    pub(crate) fn lines(&self) -> &Arc<Lines> {
        &self.lines
    }

    /// Whether the catalog holds a delta of the asset against the
    /// dictionary `sha256` (its entry for it then has the bodies).
    pub(crate) fn has_delta_against(&self, sha256: &[u8; 32]) -> bool {
        self.stored.has_delta_against(sha256)
    }

    /// What a client that accepts brotli is sent without a delta: the
    /// length of the smallest of br, gzip and the file.
    pub(crate) fn baseline(&self) -> usize {
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
            .unwrap_or(self.lines.held.len() - 1)
    }

    /// The representation of `encoding`, or the decoded one when the asset
    /// has no such coding.
    fn representation(&self, encoding: Encoding) -> &Representation {
        &self.lines.held[self.index(encoding)]
    }

    /// The codings the asset can be sent in, smallest first; identity last.
    pub(crate) fn offered(&self) -> &[Encoding] {
        &self.lines.offered[..self.lines.held.len()]
    }

    fn tag_at(&self, index: usize) -> &str {
        self.str_at(self.tag_range(index))
    }

    /// Where the ETag of the representation at `index` sits in the text.
    fn tag_range(&self, index: usize) -> Range<usize> {
        let start = index
            .checked_sub(1)
            .map_or(0, |i| self.lines.held[i].tag_end);
        start..self.lines.held[index].tag_end
    }

    /// Where the `Content-Length` of the representation at `index` sits.
    fn length_range(&self, index: usize) -> Range<usize> {
        let start = match index.checked_sub(1) {
            Some(i) => self.lines.held[i].length_end,
            None => self.lines.held.last().map_or(0, |r| r.tag_end),
        };
        start..self.lines.held[index].length_end
    }

    /// Where `Last-Modified` sits: last.
    fn date_range(&self) -> Range<usize> {
        self.lines.held.last().map_or(0, |r| r.length_end)..self.lines.text.len()
    }

    fn str_at(&self, range: Range<usize>) -> &str {
        // Cannot fail: the text was written as a String, and every range
        // ends where a whole value ends.
        std::str::from_utf8(&self.lines.text[range]).unwrap_or_default()
    }

    /// The ETag of the representation of `encoding` (the decoded one's
    /// when the asset has no such coding).
    pub(crate) fn tag(&self, encoding: Encoding) -> &str {
        self.tag_at(self.index(encoding))
    }

    /// The Content-Length of a representation (also sent with a 304 and a
    /// HEAD).
    pub(crate) fn length(&self, encoding: Encoding) -> usize {
        self.representation(encoding).length
    }

    /// The head of a 200 (`ok`) or of a 304 of the representation of
    /// `encoding`: `Server` first and, for a 200, `Content-Length` last.
    pub fn head(&self, encoding: Encoding, ok: bool) -> HeaderMap {
        self.head_dated(encoding, ok, None)
    }

    /// [`Prepared::head`], with `date` among its lines when one is given:
    /// for HTTP/2, whose transport adds `Date` to the head (hyper writes
    /// its own on HTTP/1.1). A head is cloned at its exact size, so a line
    /// added after would grow it.
    pub(crate) fn head_dated(
        &self,
        encoding: Encoding,
        ok: bool,
        date: Option<&HeaderValue>,
    ) -> HeaderMap {
        let index = self.index(encoding);
        let values = self.values_at(index);
        let template = self.template(self.lines.held[index].encoding, ok, date.is_some());
        let mut head = template.map.clone();
        for (name, value) in head.iter_mut() {
            let own = self.own(values, name);
            if let Some(own) = own.or_else(|| date.filter(|_| *name == header::DATE)) {
                *value = own.clone();
            }
        }
        head
    }

    /// [`Prepared::head`] written as HTTP/1.1 header lines into `lines`:
    /// the template's text with the asset's values in its holes.
    pub(crate) fn write_head(&self, encoding: Encoding, ok: bool, lines: &mut Vec<u8>) {
        let index = self.index(encoding);
        let template = self.template(self.lines.held[index].encoding, ok, false);
        let mut from = 0;
        for (at, name) in &template.holes {
            lines.extend_from_slice(&template.text[from..*at]);
            let own = match *name {
                header::ETAG => Some(&self.lines.text[self.tag_range(index)]),
                header::CONTENT_LENGTH => Some(&self.lines.text[self.length_range(index)]),
                header::LAST_MODIFIED => Some(&self.lines.text[self.date_range()]),
                _ => self.stored_line(name).map(HeaderValue::as_bytes),
            };
            if let Some(value) = own {
                lines.extend_from_slice(value);
            }
            from = *at;
        }
        lines.extend_from_slice(&template.text[from..]);
    }

    /// The value of the line `name` (any case) in [`Prepared::head`], if
    /// it has one.
    pub(crate) fn line(&self, encoding: Encoding, ok: bool, name: &str) -> Option<&str> {
        let index = self.index(encoding);
        let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
        let constant = self
            .template(self.lines.held[index].encoding, ok, false)
            .map
            .get(&name)?;
        let value = self.own(self.values_at(index), &name).unwrap_or(constant);
        value.to_str().ok()
    }

    /// The asset's value of the line `name`, for a representation whose
    /// [`values`](Prepared::values) are `values`; None for a line whose
    /// value is the template's.
    fn own<'a>(
        &'a self,
        values: &'a [HeaderValue; 3],
        name: &HeaderName,
    ) -> Option<&'a HeaderValue> {
        let [tag, length, date] = values;
        match *name {
            header::ETAG => Some(tag),
            header::CONTENT_LENGTH => Some(length),
            header::LAST_MODIFIED => Some(date),
            _ => self.stored_line(name),
        }
    }

    /// The value of the line `name` that the store checked: the content
    /// type, `Use-As-Dictionary`.
    fn stored_line(&self, name: &HeaderName) -> Option<&HeaderValue> {
        match *name {
            header::CONTENT_TYPE => self.stored.content_type.as_ref(),
            _ => (self.stored.use_as_dictionary.as_ref()).filter(|_| *name == USE_AS_DICTIONARY),
        }
    }

    /// The values of the representation at `index`, made for every
    /// representation by the first head built as a header map.
    fn values_at(&self, index: usize) -> &[HeaderValue; 3] {
        &self
            .values
            .get_or_init(|| (0..self.lines.held.len()).map(|i| self.values(i)).collect())[index]
    }

    /// The values of the representation at `index`, shared with the text.
    fn values(&self, index: usize) -> [HeaderValue; 3] {
        // Cannot fail: ccc wrote the tags, lengths and date in ASCII.
        let value = |range| {
            HeaderValue::from_maybe_shared(self.lines.text.slice(range))
                .unwrap_or_else(|_| HeaderValue::from_static(""))
        };
        [
            value(self.tag_range(index)),
            value(self.length_range(index)),
            value(self.date_range()),
        ]
    }

    /// The template of the heads of `encoding` of this asset, with a
    /// `Date` line to fill when `dated`.
    fn template(&self, encoding: Encoding, ok: bool, dated: bool) -> &'static Template {
        Template::of(Shape {
            ok,
            dated,
            encoding,
            vary_dictionary: !self.stored.deltas.is_empty(),
            content_type: self.stored.content_type.is_some(),
            dictionary: self.stored.use_as_dictionary.is_some(),
        })
    }

    /// What the asset holds on the heap, for the cache's byte budget: the
    /// bodies, its lines ([`Lines::weight`]), its header values (charged
    /// before they are made, as they may be) and `Use-As-Dictionary` (the
    /// content type is static). Lines shared with the file index are
    /// charged to each: an upper bound. The values share the lines' text;
    /// its heads live only as long as their responses.
    pub(crate) fn weight(&self) -> u64 {
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
        let offers = self.stored.deltas.heap_bytes();
        let dictionary = (self.stored.use_as_dictionary.as_ref()).map_or(0, line_value_bytes);
        let values = allocation(self.lines.held.len() * size_of::<[HeaderValue; 3]>());
        bodies + offers + self.lines.weight() + values + dictionary
    }
}

impl Lines {
    /// The validators and the values of the lines of `stored`.
    pub(crate) fn of(stored: &StoredAsset) -> Lines {
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
        // At most five, on the stack: a miss allocates only what it keeps.
        let mut codings: smallvec::SmallVec<[(Encoding, usize); 5]> =
            [Encoding::Dcb, Encoding::Dcz]
                .into_iter()
                .chain(Encoding::PREFERENCE)
                .filter_map(|e| length(e).map(|len| (e, len)))
                .filter(|(e, len)| !e.is_delta() || *len < baseline)
                .collect();
        // Smallest first, the decoded bytes last; ties in the order above.
        codings.sort_by_key(|(e, len)| (*e == Encoding::Identity, *len));
        let mut text = String::with_capacity(
            codings
                .iter()
                .map(|(e, len)| tag_len(sha, *e, stored) + decimal_len(*len))
                .sum::<usize>()
                + HTTP_DATE_LEN,
        );
        let mut held: smallvec::SmallVec<[Representation; 3]> = smallvec::SmallVec::new();
        let mut offered = [Encoding::Identity; 5];
        for &(encoding, length) in &codings {
            push_tag(&mut text, sha, encoding, stored);
            offered[held.len()] = encoding;
            held.push(Representation {
                encoding,
                length,
                tag_end: text.len(),
                length_end: 0,
            });
        }
        for r in &mut held {
            push_decimal(&mut text, r.length);
            r.length_end = text.len();
        }
        push_http_date(&mut text, stored.published_at);
        Lines {
            // At its exact size, as the weight counts it: the lengths
            // above are exact, so this copies nothing.
            text: Bytes::from(text.into_boxed_str().into_boxed_bytes()),
            held,
            offered,
        }
    }

    /// What the lines hold on the heap, for the byte budgets of the cache
    /// and of the file index: the text, the record `bytes` adds once the
    /// first head shares it (its buffer, capacity and count), and the
    /// representations (inline, but for an entry with deltas).
    pub(crate) fn weight(&self) -> u64 {
        use crate::serve::cache::allocation;
        let spilled = match self.held.spilled() {
            true => allocation(self.held.capacity() * size_of::<Representation>()),
            false => 0,
        };
        allocation(2 * size_of::<usize>() + size_of::<Lines>())
            + allocation(self.text.len())
            + allocation(3 * size_of::<usize>())
            + spilled
    }
}

/// What makes the heads of two assets alike but for their values.
#[derive(Clone, Copy)]
struct Shape {
    /// A 200, else a 304.
    ok: bool,
    /// Has a `Date` line, its value the response's.
    dated: bool,
    encoding: Encoding,
    /// `Vary` names `Available-Dictionary` too.
    vary_dictionary: bool,
    /// Has a `Content-Type` line.
    content_type: bool,
    /// Has a `Use-As-Dictionary` line.
    dictionary: bool,
}

/// The lines of every head of one [`Shape`], in the order sent, the
/// values of the asset's own lines left empty: as a header map, and as
/// HTTP/1.1 text with a hole where each own value goes.
struct Template {
    map: HeaderMap,
    text: Vec<u8>,
    /// Where each of the asset's own values goes in `text`, and its line.
    holes: smallvec::SmallVec<[(usize, HeaderName); 6]>,
}

impl Template {
    const SHAPES: usize = 2 * Encoding::ALL.len() * 2 * 2 * 2 * 2;

    fn of(shape: Shape) -> &'static Template {
        static TEMPLATES: [OnceLock<Template>; Template::SHAPES] =
            [const { OnceLock::new() }; Template::SHAPES];
        let coding = Encoding::ALL
            .iter()
            .position(|e| *e == shape.encoding)
            .unwrap_or(0);
        let index = [
            shape.ok,
            shape.dated,
            shape.vary_dictionary,
            shape.content_type,
            shape.dictionary,
        ]
        .into_iter()
        .fold(coding, |index, bit| index * 2 + usize::from(bit));
        TEMPLATES[index].get_or_init(|| Template::build(shape))
    }

    /// `Server` first, `Content-Length` last.
    fn build(shape: Shape) -> Template {
        const OWN: &str = "";
        let vary = match shape.vary_dictionary {
            true => VARY_WITH_DICTIONARY,
            false => "Accept-Encoding",
        };
        let mut lines = vec![(header::SERVER, SERVER)];
        if shape.dated {
            lines.push((header::DATE, OWN));
        }
        if shape.content_type {
            lines.push((header::CONTENT_TYPE, OWN));
        }
        lines.push((header::VARY, vary));
        lines.push((header::CACHE_CONTROL, IMMUTABLE));
        if shape.dictionary {
            lines.push((USE_AS_DICTIONARY.clone(), OWN));
        }
        lines.push((header::ETAG, OWN));
        lines.push((header::LAST_MODIFIED, OWN));
        lines.extend(cors::EVERY_RESPONSE_NAMED.iter().cloned());
        lines.push((header::ACCEPT_RANGES, "bytes"));
        if shape.encoding != Encoding::Identity {
            lines.push((header::CONTENT_ENCODING, shape.encoding.as_str()));
        }
        lines.push((header::CONTENT_LENGTH, OWN));
        lines.retain(|(name, _)| shape.ok || in_304(name));
        let mut map = HeaderMap::with_capacity(lines.len());
        let mut text = Vec::new();
        let mut holes = smallvec::SmallVec::new();
        for (name, value) in lines {
            if value == OWN {
                transport::write_line(&mut text, name.as_str(), b"");
                holes.push((text.len() - 2, name.clone()));
            } else {
                transport::write_line(&mut text, name.as_str(), value.as_bytes());
            }
            map.append(name, HeaderValue::from_static(value));
        }
        Template { map, text, holes }
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
            Some(stream) => {
                let mut digits = [0u8; 20];
                push_named(out, sha, encoding, decimal(stream.len(), &mut digits));
            }
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

/// The length of what [`push_tag`] appends.
fn tag_len(sha: &str, encoding: Encoding, stored: &StoredAsset) -> usize {
    let delta = stored.delta.as_ref().and_then(|d| d.get(encoding));
    let name = match (encoding, delta, &stored.brotli) {
        (_, Some(_), _) => Some(16),
        (Encoding::Brotli, None, Some(stream)) => Some(decimal_len(stream.len() as usize)),
        _ => None,
    };
    etag_len(sha, encoding) + name.map_or(0, |name| name + 1)
}

/// `n` in decimal digits, written at the end of `digits`.
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Cannot fail: ASCII digits.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

/// Appends `n` in decimal digits.
fn push_decimal(out: &mut String, n: usize) {
    out.push_str(decimal(n as u64, &mut [0u8; 20]));
}

/// The number of digits [`decimal`] writes.
fn decimal_len(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding::{Brotli, Gzip, Identity};
    use crate::serve::stored::{Dictionaries, line_value};
    use std::sync::Arc;

    /// The ETag of every representation held, in their order.
    fn tags(p: &Prepared) -> Vec<&str> {
        (0..p.lines.held.len()).map(|i| p.tag_at(i)).collect()
    }

    fn stored(encoding: Encoding, brotli: bool) -> StoredAsset {
        StoredAsset {
            version_id: 1,
            blob_id: 1,
            body: Stream::Memory(Arc::from(&b"0123456789"[..])),
            encoding,
            sha256: [0xab; 32],
            brotli: brotli.then(|| Stream::Memory(Arc::from(&b"01234567"[..]))),
            content_type: Some(HeaderValue::from_static("text/javascript; charset=utf-8")),
            raw_size: 40,
            published_at: 1_700_000_000,
            chunks: None,
            deltas: Dictionaries::default(),
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
            tags(&p),
            [
                format!("\"{sha}-br.8\""),
                format!("\"{sha}-gz\""),
                format!("\"{sha}\"")
            ]
        );
        assert_eq!(p.offered(), [Brotli, Gzip, Identity]);
        assert_eq!(p.offered()[0], Brotli, "the smallest first");
        assert_eq!(p.length(Gzip), 10);
        assert_eq!(p.length(Brotli), 8);
        assert_eq!(p.length(Identity), 40);
        for (encoding, tag, coding) in [
            (Brotli, tags(&p)[0], Some("br")),
            (Gzip, tags(&p)[1], Some("gzip")),
            (Identity, tags(&p)[2], None),
        ] {
            let head = p.head(encoding, true);
            assert_eq!(p.tag(encoding), tag);
            assert_eq!(value(&head, "ETag"), Some(tag));
            assert_eq!(value(&head, "Content-Encoding"), coding);
            assert_eq!(value(&head, "Vary"), Some("Accept-Encoding"));
        }
        let head = p.head(Gzip, true);
        assert_eq!(
            value(&head, "Last-Modified"),
            Some("Tue, 14 Nov 2023 22:13:20 GMT")
        );
        assert_eq!(
            names(&head),
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

    #[test]
    fn the_http1_text_of_a_head_is_its_map_written_out() {
        let mut dictionary = stored(Identity, false);
        dictionary.content_type = None;
        dictionary.use_as_dictionary = Some(HeaderValue::from_static("match=\"/a/*.js\""));
        for asset in [stored(Gzip, true), stored(Identity, false), dictionary] {
            let p = Prepared::new(asset);
            for encoding in [Brotli, Gzip, Identity] {
                for ok in [true, false] {
                    let mut want = Vec::new();
                    for (name, value) in &p.head(encoding, ok) {
                        transport::write_line(&mut want, name.as_str(), value.as_bytes());
                    }
                    let mut text = Vec::new();
                    p.write_head(encoding, ok, &mut text);
                    assert_eq!(
                        String::from_utf8_lossy(&text),
                        String::from_utf8_lossy(&want),
                        "{encoding:?}, ok {ok}"
                    );
                }
            }
        }
    }

    /// Checks that the heap `p` holds, once every representation has been
    /// sent, is within the weight charged before any was.
    fn assert_held_within_weight(p: &Prepared) {
        use crate::serve::cache::allocation;
        let weight = p.weight();
        for encoding in p.offered().to_vec() {
            let _ = p.head(encoding, true);
        }
        let bodies = allocation(p.stored.body_bytes().len() + 16)
            + p.stored
                .brotli
                .as_ref()
                .map_or(0, |b| allocation(b.len() as usize + 16));
        // The tags and the date share one text.
        let texts = allocation(tags(p).iter().map(|t| t.len()).sum::<usize>() + 29);
        // The representations sit in the lines; their header values, made
        // by the heads above, in one block.
        let representations = allocation(2 * size_of::<usize>() + size_of::<Lines>());
        let values = allocation(p.offered().len() * size_of::<[HeaderValue; 3]>());
        assert!(p.values.get().is_some());
        let held = bodies + texts + representations + values;
        assert!(held <= weight, "{held} held, {weight} charged");
        assert_eq!(p.weight(), weight, "sending holds nothing more");
        // The rest is the text's record and the content type.
        assert!(weight < held + 256, "{weight} charged, {held} held");
    }

    #[test]
    fn a_dated_head_is_the_head_and_its_date() {
        let p = Prepared::new(stored(Gzip, true));
        let date = HeaderValue::from_static("Sun, 06 Dec 2026 06:40:00 GMT");
        for ok in [true, false] {
            let plain = p.head(Gzip, ok);
            let mut dated = p.head_dated(Gzip, ok, Some(&date));
            assert!(plain.get(header::DATE).is_none());
            assert_eq!(
                dated.get_all(header::DATE).iter().collect::<Vec<_>>(),
                [&date]
            );
            assert_eq!(dated.len(), plain.len() + 1);
            dated.remove(header::DATE);
            assert_eq!(dated, plain, "the same lines but the date");
        }
    }

    #[test]
    fn header_values_are_made_once_for_a_header_map_and_share_the_text() {
        let p = Prepared::new(stored(Gzip, true));
        let mut text = Vec::new();
        for encoding in Encoding::PREFERENCE {
            p.write_head(encoding, true, &mut text);
        }
        assert!(p.values.get().is_none(), "HTTP/1.1 heads make none");
        let first = p.head(Identity, true);
        let again = p.head(Identity, false);
        let tag = |head: &HeaderMap| head["etag"].as_bytes().as_ptr();
        assert_eq!(tag(&first), tag(&again), "made once");
        let text = p.lines.text.as_ptr_range();
        assert!(text.contains(&tag(&first)), "a slice of the text");
        // The file index's record shares the lines, not the values.
        let shared = Prepared::with_lines(stored(Gzip, true), p.lines().clone());
        assert!(shared.values.get().is_none());
    }

    #[test]
    fn the_lines_are_the_head_as_sent() {
        let p = Prepared::new(stored(Gzip, true));
        let text: String = p
            .head(Brotli, true)
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
            let head = p.head(encoding, false);
            assert_eq!(
                names(&head),
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

    fn text(head: &HeaderMap) -> String {
        head.iter()
            .map(|(n, v)| format!("{n}: {}\r\n", v.to_str().unwrap()))
            .collect()
    }

    #[test]
    fn a_304_sends_the_200_s_lines_less_the_content_headers() {
        let mut dictionary = stored(Gzip, true);
        dictionary.use_as_dictionary = line_value("match=\"/a/*\"".into());
        dictionary.deltas = Dictionaries::new(vec![[1; 32]]);
        for asset in [stored(Gzip, true), stored(Identity, false), dictionary] {
            let p = Prepared::new(asset);
            for encoding in p.offered().to_vec() {
                let ok = p.head(encoding, true);
                let not_modified = p.head(encoding, false);
                if p.stored.use_as_dictionary.is_some() {
                    assert_eq!(names(&ok)[4], "use-as-dictionary");
                    assert_eq!(value(&ok, "Use-As-Dictionary"), Some("match=\"/a/*\""));
                    assert_eq!(value(&ok, "Vary"), Some(VARY_WITH_DICTIONARY));
                }
                let in_304: String = text(&ok)
                    .lines()
                    .filter(|l| !l.starts_with("content-type") && !l.starts_with("accept-ranges"))
                    .filter(|l| !l.starts_with("content-encoding"))
                    .map(|l| format!("{l}\r\n"))
                    .collect();
                assert_eq!(text(&not_modified), in_304);
                // Each line as the answer reads it, by name in any case.
                for (head, sent) in [(&ok, true), (&not_modified, false)] {
                    for (name, value) in head {
                        let upper = name.as_str().to_ascii_uppercase();
                        assert_eq!(p.line(encoding, sent, &upper), value.to_str().ok());
                    }
                }
                assert_eq!(p.line(encoding, false, "content-type"), None);
                assert_eq!(p.line(encoding, true, "set-cookie"), None);
            }
            assert_held_within_weight(&p);
        }
    }

    #[test]
    fn a_value_that_may_not_be_sent_is_left_out() {
        let mut asset = stored(Gzip, false);
        asset.content_type = line_value("text/plain\r\nSet-Cookie: x=1".into());
        asset.use_as_dictionary = line_value("match=\"/é\"".into());
        let p = Prepared::new(asset);
        let head = p.head(Gzip, true);
        assert_eq!(head.get("content-type"), None);
        assert_eq!(head.get("use-as-dictionary"), None);
        assert_eq!(names(&head)[..3], ["server", "vary", "cache-control"]);
        assert_eq!(value(&head, "Content-Length"), Some("10"));
        assert_eq!(
            value(&head, "Last-Modified"),
            Some("Tue, 14 Nov 2023 22:13:20 GMT")
        );
        assert_held_within_weight(&p);
    }

    #[test]
    fn an_asset_stored_plain_has_one_representation() {
        let p = Prepared::new(stored(Identity, false));
        assert_eq!(p.offered(), [Identity]);
        assert_eq!(tags(&p).len(), 1, "a tag only for what is held");
        for asked in Encoding::PREFERENCE {
            let head = p.head(asked, true);
            assert_eq!(value(&head, "ETag"), Some(tags(&p)[0]));
            assert_eq!(value(&head, "Content-Encoding"), None);
            assert_eq!(p.length(asked), 40);
        }
        assert_held_within_weight(&p);
    }
}

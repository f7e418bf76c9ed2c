//! What an answer is made of, apart from how it is decided: the parts of
//! a request that decide it ([`Ask`]), and the status, header lines and
//! body that go back ([`Answer`], [`Headers`], [`Body`]), with what was
//! sent for the counters (`counters::Sent`). The handlers in `answer`, `alias`
//! and `import_map` build them; the service turns them into responses.

use crate::encoding::Encoding;
use crate::http::cors;
use crate::http::header_lines::HeaderLines;
use crate::http::negotiate::Accepted;
use crate::http::range::{self};
use crate::serve::browse;
use crate::serve::counters::{RouteClass, Sent};
use crate::serve::in_flight::Reservation;
use crate::serve::prepared::{self};
use crate::serve::store::{self};
use crate::{log, transport};
use bytes::Bytes;
use serde::Serialize;

/// `Cache-Control` of an answer no cache may keep.
pub(super) const NO_STORE: &str = "no-store";

/// `Cache-Control` of what a cache must revalidate before each use.
pub(super) const REVALIDATE: &str = "no-cache";

/// The values of a header that may be sent more than once: one or two
/// in nearly every request, held without an allocation.
pub(crate) type Values<'a> = smallvec::SmallVec<[&'a str; 2]>;

/// The parts of a request that decide the answer.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub method: &'a str,
    pub target: &'a str,
    /// The host the request names (`Host`, else `:authority`), as sent:
    /// which site answers it.
    pub host: Option<&'a str>,
    /// Whether it came over TLS (a site's HSTS).
    pub tls: bool,
    /// `Accept-Encoding`, read as its lines came.
    pub accept_encoding: Accepted,
    /// `Accept`: only the listings look at it (HTML for browsers).
    pub accept: Values<'a>,
    pub if_none_match: Option<&'a str>,
    pub if_modified_since: Option<&'a str>,
    /// `Range`, when the request has exactly one.
    pub range: Option<&'a str>,
    pub if_range: Option<&'a str>,
    /// `Access-Control-Request-Headers` of a preflight.
    pub access_control_request_headers: Option<&'a str>,
    /// `Available-Dictionary`: the dictionary the client holds for this
    /// URL (RFC 9842 2.2).
    pub available_dictionary: Option<&'a str>,
    /// `Sec-Fetch-Site` and `Sec-Fetch-Mode`: whether a cross-origin
    /// request may get a delta (`http::dictionary`).
    pub sec_fetch_site: Option<&'a str>,
    pub sec_fetch_mode: Option<&'a str>,
}

/// A response before it meets the socket.
pub(crate) struct Answer {
    pub status: u16,
    /// Header lines, `Server` first (the transport adds `Date`,
    /// `Content-Length` and `Connection`).
    pub headers: Headers,
    pub body: Body,
    /// Content-Length when it differs from the body held (HEAD, 304).
    pub length: Option<usize>,
    /// What answered: an asset (the profiler's unit of progress), a
    /// listing, or something else (`/metrics` counts them apart).
    pub class: RouteClass,
    /// For an asset's representation: its coding, and what a client that
    /// accepts brotli would have been sent without a delta (`/metrics`
    /// counts responses and bytes by coding, and what deltas saved).
    pub sent: Option<Sent>,
}

/// An answer's header lines: an asset's prepared lines, shared with the
/// cache, or lines built for this answer.
pub(crate) enum Headers {
    Prepared {
        asset: store::Asset,
        /// A 200's lines, else a 304's.
        ok: bool,
        /// The representation sent.
        encoding: Encoding,
        /// What a site sends instead of some of the prepared lines.
        site: SiteLines,
    },
    Built(HeaderLines),
}

/// The lines a site's answer sends instead of an asset's prepared ones,
/// the rest of the head shared with the asset.
#[derive(Debug, Default)]
pub(crate) struct SiteLines {
    /// `Cache-Control: no-cache` (a site's file whose name has no hash).
    revalidate: bool,
    /// `Use-As-Dictionary` whose `match` is the site's URL of the file
    /// rather than its /assets/ one, shared with the site's map.
    dictionary: Option<std::sync::Arc<http::HeaderValue>>,
}

impl SiteLines {
    /// Whether the site sends any line of its own.
    fn overrides(&self) -> bool {
        self.revalidate || self.dictionary.is_some()
    }

    fn get(&self, name: &str) -> Option<&str> {
        if self.revalidate && name.eq_ignore_ascii_case("cache-control") {
            return Some(REVALIDATE);
        }
        match &self.dictionary {
            Some(value) if name.eq_ignore_ascii_case(prepared::USE_AS_DICTIONARY.as_str()) => {
                value.to_str().ok()
            }
            _ => None,
        }
    }

    fn insert_into(&self, map: &mut http::HeaderMap) {
        if self.revalidate {
            map.insert(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static(REVALIDATE),
            );
        }
        if let Some(value) = &self.dictionary {
            map.insert(prepared::USE_AS_DICTIONARY.clone(), (**value).clone());
        }
    }

    fn set_in(&self, lines: &mut HeaderLines) {
        if self.revalidate {
            lines.set("Cache-Control", REVALIDATE);
        }
        if let Some(value) = self.dictionary.as_ref().and_then(|v| v.to_str().ok()) {
            lines.set(prepared::USE_AS_DICTIONARY.as_str(), value);
        }
    }
}

impl Headers {
    /// The value of the first header named `name` (any case), if sent.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        match self {
            Headers::Prepared {
                asset,
                ok,
                encoding,
                site,
                ..
            } => {
                if let Some(value) = site.get(name) {
                    return Some(value);
                }
                asset.value().line(*encoding, *ok, name)
            }
            Headers::Built(lines) => lines.get(name),
        }
    }

    /// Makes `map` the lines sent, sharing names and values: an asset's
    /// head is its template with the asset's values, `Content-Length` and
    /// all ([`crate::serve::prepared::Prepared::head`]).
    /// When `dated` (HTTP/2), an asset's head has its `Date` line already.
    fn fill(&self, map: &mut http::HeaderMap, dated: bool) {
        match self {
            Headers::Prepared {
                asset,
                ok,
                encoding,
                site,
            } => {
                let date = dated.then(transport::now_date);
                *map = asset.value().head_dated(*encoding, *ok, date.as_ref());
                site.insert_into(map);
            }
            Headers::Built(lines) => {
                map.reserve(lines.len() + 1);
                lines.append_to(map);
            }
        }
    }

    /// Sends `Cache-Control: no-cache` instead of what the lines say (a
    /// site's file whose name has no hash); prepared lines stay shared.
    pub(super) fn revalidate(&mut self) {
        match self {
            Headers::Prepared { site, .. } => site.revalidate = true,
            Headers::Built(lines) => {
                lines.set("Cache-Control", REVALIDATE);
            }
        }
    }

    /// Sends `value` as `Use-As-Dictionary` instead of what the lines say
    /// (a site's URL pattern); prepared lines stay shared.
    pub(super) fn use_as_dictionary(&mut self, value: std::sync::Arc<http::HeaderValue>) {
        match self {
            Headers::Prepared { site, .. } => site.dictionary = Some(value),
            Headers::Built(lines) => {
                if let Ok(text) = value.to_str() {
                    lines.set(prepared::USE_AS_DICTIONARY.as_str(), text);
                }
            }
        }
    }

    /// Replaces the lines named `name` with one (a site's headers),
    /// copying prepared lines first as [`Headers::push`] does.
    pub(super) fn set(&mut self, name: &str, value: &str) {
        self.push_or_set(name, value, true)
    }

    /// Adds a line. Prepared lines are shared, so they are copied first
    /// (a 206 adds its `Content-Range`, a site its headers).
    pub(super) fn push(&mut self, name: &str, value: &str) {
        self.push_or_set(name, value, false)
    }

    fn push_or_set(&mut self, name: &str, value: &str, replace: bool) {
        if let Headers::Prepared {
            asset,
            ok,
            encoding,
            site,
            ..
        } = self
        {
            let head = asset.value().head(*encoding, *ok);
            let mut lines = HeaderLines::from_map(&head);
            site.set_in(&mut lines);
            *self = Headers::Built(lines);
        }
        if let Headers::Built(lines) = self {
            match replace {
                true => lines.set(name, value),
                false => lines.push(name, value),
            };
        }
    }

    #[cfg(test)]
    pub(super) fn text(&self) -> String {
        let mut map = http::HeaderMap::new();
        self.fill(&mut map, false);
        map.iter()
            .map(|(n, v)| format!("{n}: {}\r\n", v.to_str().unwrap_or_default()))
            .collect()
    }
}

/// A response body: one coding of an asset in memory, whole or a range of
/// it (shared with the cache, or read for this response, whose in-flight
/// memory the reservation holds until the body is sent), owned, or pieces
/// made as the connection takes them ([`crate::serve::pieces`]).
pub(crate) enum Body {
    Empty,
    Shared(
        store::Asset,
        Encoding,
        #[expect(dead_code, reason = "held until the body is sent, never read")]
        Option<Reservation>,
    ),
    Part(
        store::Asset,
        Encoding,
        std::ops::Range<usize>,
        Option<Reservation>,
    ),
    Owned(Vec<u8>),
    /// Bytes made for this response (with their reservation).
    Made(Bytes),
    Pieces(Box<dyn transport::Pieces>),
}

/// The stored bytes of `asset` in `encoding` (empty if it has no such
/// coding in memory, which no body in memory is made of).
fn coded(asset: &store::Asset, encoding: Encoding) -> &[u8] {
    asset
        .value()
        .stored
        .body(encoding)
        .and_then(|(stream, _)| stream.bytes())
        .map_or(&[], |body| &body[..])
}

impl Body {
    /// The body to send: a cached coding is shared with the cache, not
    /// copied; a big file's chunks are read as they are sent.
    fn into_payload(self) -> transport::Payload {
        match self {
            Body::Pieces(pieces) => transport::Payload::Pieces(pieces),
            whole => transport::Payload::Whole(whole.into_bytes()),
        }
    }

    pub(super) fn into_bytes(self) -> Bytes {
        match self {
            Body::Empty | Body::Pieces(_) => Bytes::new(),
            Body::Owned(bytes) => Bytes::from(bytes),
            Body::Made(bytes) => bytes,
            Body::Shared(..) => Bytes::from_owner(self),
            Body::Part(asset, encoding, part, reserved) => {
                Bytes::from_owner(Body::Shared(asset, encoding, reserved)).slice(part)
            }
        }
    }
}

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        match self {
            Body::Empty => &[],
            Body::Shared(asset, encoding, _) => coded(asset, *encoding),
            Body::Part(asset, encoding, part, _) => &coded(asset, *encoding)[part.clone()],
            Body::Owned(bytes) => bytes,
            Body::Made(bytes) => bytes,
            // Never in memory: sent as pieces.
            Body::Pieces(_) => &[],
        }
    }
}

impl Answer {
    /// The response as the transport sends it. Every body's length is
    /// known: `Content-Length` is always sent (with a HEAD or a 304 it is
    /// the length a GET would get), so no response is chunked.
    pub(super) fn into_response(self) -> http::Response<transport::Payload> {
        self.into_response_over(http::Version::HTTP_11)
    }

    /// [`Answer::into_response`] for a request of `version`: over HTTP/2
    /// an asset's head comes with its `Date` line, which the transport
    /// adds to every head and would otherwise have to grow it for.
    pub(super) fn into_response_over(
        self,
        version: http::Version,
    ) -> http::Response<transport::Payload> {
        let mut response = http::Response::new(self.body.into_payload());
        *response.status_mut() = http::StatusCode::from_u16(self.status)
            .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        self.headers.fill(headers, version == http::Version::HTTP_2);
        // A prepared 200's head holds its length already.
        let prepared_length = match &self.headers {
            Headers::Prepared {
                asset,
                ok: true,
                encoding,
                ..
            } => Some(asset.value().length(*encoding)),
            _ => None,
        };
        if let Some(length) = self.length
            && !matches!(self.status, 100..=199 | 204)
            && prepared_length != Some(length)
        {
            headers.insert(
                http::header::CONTENT_LENGTH,
                http::HeaderValue::from(length),
            );
        }
        response
    }

    /// The answer as an HTTP/1.1 response, its lines written into
    /// `lines`: an asset's prepared head is written from its template
    /// ([`prepared::Prepared::write_head`]) with no header map between.
    pub(super) fn into_h1(self, lines: &mut Vec<u8>) -> transport::H1Response {
        if let Headers::Prepared {
            asset,
            ok,
            encoding,
            site,
        } = &self.headers
        {
            let prepared = asset.value();
            let own_length = self
                .length
                .filter(|_| !matches!(self.status, 100..=199 | 204));
            if !site.overrides() && own_length.is_none_or(|l| l == prepared.length(*encoding)) {
                // The template has the representation's `Content-Length`,
                // a 304's too.
                prepared.write_head(*encoding, *ok, lines);
                return transport::H1Response {
                    status: http::StatusCode::from_u16(self.status)
                        .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR),
                    body: self.body.into_payload(),
                    wrote: transport::WrittenLines {
                        content_length: true,
                        ..Default::default()
                    },
                };
            }
        }
        // Not a prepared head, or one with a length other than its
        // representation's or a site's lines: the map's way, which
        // replaces lines.
        transport::H1Response::written(self.into_response_over(http::Version::HTTP_11), lines)
    }

    pub(super) fn json(status: u16, cache_control: &str, value: &impl Serialize) -> Answer {
        Answer::json_bytes(
            status,
            cache_control,
            serde_json::to_vec(value).unwrap_or_default(),
        )
    }

    pub(super) fn json_bytes(status: u16, cache_control: &str, body: Vec<u8>) -> Answer {
        Answer::typed(status, "application/json", cache_control, body)
    }

    /// A body of `content_type` that is not an asset.
    pub(super) fn typed(
        status: u16,
        content_type: &str,
        cache_control: &str,
        body: Vec<u8>,
    ) -> Answer {
        Answer {
            status,
            headers: with_cors([
                ("Content-Type", content_type),
                ("Cache-Control", cache_control),
            ]),
            body: Body::Owned(body),
            length: None,
            class: RouteClass::Other,
            sent: None,
        }
    }

    /// A browse page ([`browse`]), gzipped for a client that takes gzip.
    /// Pages show what is published now and which versions tags name, so
    /// they are cached like aliases (`cache_control`), never as immutable.
    pub(super) fn html(status: u16, ask: &Ask<'_>, cache_control: &str, page: String) -> Answer {
        // Pages are made per request: gzip (cheap at its default level) is
        // offered, brotli is not.
        let gzip = ask
            .accept_encoding
            .choose(&[Encoding::Gzip, Encoding::Identity])
            == Encoding::Gzip;
        let mut headers = with_cors([
            ("Content-Type", "text/html; charset=utf-8"),
            (
                "Cache-Control",
                if status == 200 {
                    cache_control
                } else {
                    NO_STORE
                },
            ),
            ("Content-Security-Policy", browse::CSP.as_str()),
            ("Vary", "Accept, Accept-Encoding"),
        ]);
        let mut body = page.into_bytes();
        if gzip {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), COMPRESSION);
            // Writing into a Vec cannot fail.
            if std::io::Write::write_all(&mut encoder, &body).is_ok()
                && let Ok(compressed) = encoder.finish()
            {
                body = compressed;
                headers.push("Content-Encoding", "gzip");
            }
        }
        let length = body.len();
        Answer {
            status,
            headers,
            body: if ask.method == "HEAD" {
                Body::Empty
            } else {
                Body::Owned(body)
            },
            length: Some(length),
            class: RouteClass::Other,
            sent: None,
        }
    }

    /// A 200 that no cache keeps, such as `/metrics`.
    pub(super) fn text(content_type: &str, body: Vec<u8>) -> Answer {
        Answer {
            status: 200,
            headers: with_cors([("Content-Type", content_type), ("Cache-Control", NO_STORE)]),
            body: Body::Owned(body),
            length: None,
            class: RouteClass::Other,
            sent: None,
        }
    }

    /// Ends the connection after this answer (`Connection: close`): for
    /// requests that a well-behaved client never sends.
    pub(super) fn closing(mut self) -> Answer {
        self.headers.push("Connection", "close");
        self
    }

    /// Marks a listing's answer (counted apart in `/metrics`).
    pub(super) fn listing(mut self) -> Answer {
        self.class = RouteClass::Listing;
        self
    }

    /// Marks an answer that another `Accept` would change.
    pub(super) fn varies_by_accept(mut self) -> Answer {
        self.headers.push("Vary", "Accept");
        self
    }

    pub(super) fn error(status: u16, detail: &str) -> Answer {
        Answer::json_bytes(status, NO_STORE, error_body(status, detail))
    }

    /// A 302 to `location`; `etag` names what an alias resolved to.
    pub(super) fn redirect(location: &str, cache_control: &str, etag: Option<&str>) -> Answer {
        let mut lines = vec![("Location", location), ("Cache-Control", cache_control)];
        lines.extend(etag.map(|tag| ("ETag", tag)));
        Answer {
            status: 302,
            headers: with_cors(lines),
            body: Body::Empty,
            length: None,
            class: RouteClass::Other,
            sent: None,
        }
    }

    /// A 304 for something other than an asset: its validator and how
    /// long it may be cached (RFC 9110 15.4.5).
    pub(super) fn not_modified(cache_control: &str, etag: &str) -> Answer {
        Answer {
            status: 304,
            headers: with_cors([("Cache-Control", cache_control), ("ETag", etag)]),
            body: Body::Empty,
            length: Some(0),
            class: RouteClass::Other,
            sent: None,
        }
    }

    pub(super) fn internal(e: &dyn std::fmt::Display) -> Answer {
        log::err(format_args!("error: {e}"));
        Answer::error(500, "internal error")
    }

    /// 204 to `OPTIONS`: what a cross-origin request may be (a preflight)
    /// and what the resource allows (a plain `OPTIONS`, RFC 9110 9.3.7).
    pub(super) fn options(requested_headers: Option<&str>) -> Answer {
        let allow_headers = cors::allow_headers(requested_headers);
        Answer {
            status: 204,
            headers: with_cors([
                ("Allow", cors::METHODS),
                ("Access-Control-Allow-Methods", cors::METHODS),
                ("Access-Control-Allow-Headers", &allow_headers),
                ("Access-Control-Max-Age", cors::MAX_AGE),
                // The allowed headers echo the preflight's.
                ("Vary", "Access-Control-Request-Headers"),
            ]),
            body: Body::Empty,
            length: Some(0),
            class: RouteClass::Other,
            sent: None,
        }
    }

    /// 416 to a `Range` past the end of the `len` bytes of the
    /// representation the client would get.
    pub(super) fn unsatisfiable(len: usize) -> Answer {
        let mut a = Answer::error(
            416,
            &format!("the Range lies past the end of the file's {len} bytes"),
        );
        a.headers
            .push("Content-Range", &range::unsatisfied_range(len as u64));
        a.headers.push("Vary", "Accept-Encoding");
        a
    }

    /// 503 for a server that has no catalog to answer from (see `store`).
    pub(super) fn unavailable(e: &dyn std::fmt::Display) -> Answer {
        log::err(format_args!("error: {e}"));
        let mut a = Answer::error(503, "the catalog is unavailable");
        a.headers.push("Retry-After", "1");
        a
    }
}

/// The JSON body of an error answer: `{"status":404,"error":"not found"}`.
pub(crate) fn error_body(status: u16, detail: &str) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorBody<'a> {
        status: u16,
        error: &'a str,
    }
    serde_json::to_vec(&ErrorBody {
        status,
        error: detail,
    })
    .unwrap_or_default()
}

/// The header lines of an answer that is not an asset's: `Server`, then
/// `lines`, then the headers every response carries (an asset's come
/// prepared, with the same [`cors::EVERY_RESPONSE`]).
pub(super) fn with_cors<'a>(lines: impl IntoIterator<Item = (&'a str, &'a str)>) -> Headers {
    let server = [("Server", transport::SERVER)];
    Headers::Built(HeaderLines::of(
        server.into_iter().chain(lines).chain(cors::EVERY_RESPONSE),
    ))
}

/// gzip level of browse pages, made per request: the fastest, which still
/// shrinks a page several times (bench/SCALE.md measures it, see [`browse`]).
const COMPRESSION: flate2::Compression = flate2::Compression::fast();

//! Deciding the answer, in process and without sockets: a request's
//! method, target and validators in ([`Ask`]), a status, header lines and
//! a body out ([`Answer`]; what those are made of is in
//! [`crate::serve::response`], and the 404s that name what is missing in
//! `missing`). Cached assets answer with their prepared header lines
//! ([`crate::serve::prepared`]); everything else asks the store through its
//! handle. The HTTP rules themselves are pure functions in [`crate::http`].
//!
//! A cache hit allocates nothing here: the route borrows its names from
//! the target, the cache is searched with them, and the answer holds the
//! cached entry for both its header lines and its body.

use crate::catalog::chunks::ChunkCursor;
use crate::catalog::pieces::{Coding, PIECE_SIZE};
use crate::catalog::query::Page;
use crate::causal;
use crate::encoding::Encoding;
use crate::error::{Error, Result};
use crate::http::conditional::not_modified;
use crate::http::cors;
use crate::http::negotiate::{self, Format};
use crate::http::range::{self, Ranged};
use crate::http::route::{self, Route, RouteError};
use crate::log;
use crate::serve::alias;
use crate::serve::browse;
use crate::serve::counters::{Counters, RouteClass, Sent};
use crate::serve::import_map;
use crate::serve::in_flight::{Reservation, owned_bytes};
use crate::serve::metrics;
use crate::serve::missing;
use crate::serve::pieces::{CatalogPieces, ChunkPieces, DecodedPieces, Source};
use crate::serve::prepared::{self, IMMUTABLE};
use crate::serve::response::{Answer, Ask, Body, Headers, NO_STORE};
use crate::serve::store::{self, AssetKeyRef, CatalogState, PieceAt, Want};
use crate::serve::stored::Stream;
use crate::spec::Selector;
use std::io::Read;

/// Decides the answer to one request.
pub(crate) fn answer(
    ask: &Ask<'_>,
    store: &store::Handle,
    counters: &Counters,
    policy: &alias::Policy,
) -> Answer {
    let routed = {
        let _s = causal::site!(HTTP_PARSE);
        route::route(ask.method, ask.target)
    };
    let route = match routed {
        Ok(route) => route,
        Err(RouteError::MethodNotAllowed) => {
            let mut a = Answer::error(405, "only GET, HEAD and OPTIONS are supported");
            a.headers.push("Allow", cors::METHODS);
            return a;
        }
        Err(RouteError::TargetTooLong) => {
            return Answer::error(414, "the request target is too long").closing();
        }
        Err(RouteError::BadRequest(why)) => return Answer::error(400, &why),
        Err(RouteError::NotFound(why)) => return Answer::error(404, &why),
    };
    let result = match route {
        Route::Asset {
            package,
            version,
            path,
        } => asset(ask, store, policy, &package, &version, &path),
        Route::Listing { package, version } => {
            listing(ask, store, policy, &package, &version).map(Answer::listing)
        }
        Route::VersionRoot { package, version } => {
            alias::version_root(ask, store, policy, &package, &version)
        }
        Route::PackageRoot { package } => {
            alias::version_root(ask, store, policy, &package, "latest")
        }
        Route::Package { package } => {
            package_listing(ask, store, policy, package.into_owned()).map(Answer::listing)
        }
        Route::Index => index(ask, store, policy).map(Answer::listing),
        Route::Stats => store.stats().map(|cache| {
            let report = counters.snapshot(cache, store.in_flight().stats());
            Answer::json(200, NO_STORE, &report)
        }),
        Route::Metrics => store.stats().and_then(|cache| {
            let catalog = store.health()?;
            let in_flight = store.in_flight().stats();
            let page = metrics::render(counters, &cache, &in_flight, &catalog, &log::stats());
            Ok(Answer::text(metrics::CONTENT_TYPE, page.into_bytes()))
        }),
        Route::Health => store.health().map(health),
        Route::Options => Ok(Answer::options(ask.access_control_request_headers)),
    };
    result.unwrap_or_else(|e| match e {
        Error::Unavailable { .. } => Answer::unavailable(&e),
        e => Answer::internal(&e),
    })
}

/// `/healthz`: 200 while the server answers from a catalog, `degraded` when
/// that is no longer the file its path names (it still answers exactly
/// what it did); 503 when it has no catalog to answer from.
fn health(catalog: store::CatalogHealth) -> Answer {
    let stale = catalog.follower.as_ref().is_some_and(|f| f.stale);
    let (code, status) = match catalog.state {
        CatalogState::Unavailable => (503, "unavailable"),
        // A replica its follower no longer keeps: out of the pool.
        _ if stale => (503, "stale"),
        CatalogState::Current => (200, "ok"),
        CatalogState::Deleted | CatalogState::Rejected => (200, "degraded"),
    };
    Answer::json(
        code,
        NO_STORE,
        &serde_json::json!({"status": status, "catalog": catalog}),
    )
}

/// The version stored under `exact`'s precedence when it is written
/// otherwise (`1.0.0` for a stored `1.0.0+build.5`: build metadata is not
/// part of precedence). A request for it is sent there as an alias's is.
fn written_otherwise(
    store: &store::Handle,
    package: &str,
    exact: &semver::Version,
) -> Result<Option<store::Resolved>> {
    let stored = store.resolve(package, Selector::Exact(exact.clone()))?;
    Ok(stored.filter(|to| to.version != exact.to_string()))
}

/// The answer for one file of an exact version (a miss of an alias
/// redirects), as `/assets/` and a site's root send it.
pub(super) fn asset(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &alias::Policy,
    package: &str,
    version: &str,
    path: &str,
) -> Result<Answer> {
    let key = AssetKeyRef::of(package, version, path);
    // A HEAD, a range or a revalidation may need none of a long body, or
    // a part: it stays in the catalog.
    let want = if ask.method == "HEAD"
        || ask.range.is_some()
        || ask.if_none_match.is_some()
        || ask.if_modified_since.is_some()
    {
        Want::Part
    } else {
        Want::Whole
    };
    let cached = store.cached(key).filter(|hit| {
        // The whole of a long body the cache holds only the digests of is
        // read whole when the cache could hold it (`store::load`).
        let stored = &hit.value().stored;
        want == Want::Part || stored.in_memory() || !store.could_cache(stored.stored_bytes())
    });
    let (asset, reserved) = match cached {
        Some(hit) => (hit, None),
        None => {
            // Only exact versions are ever cached, so only a miss needs to
            // know whether this is one.
            let Ok(exact) = semver::Version::parse(version) else {
                return alias::redirect(ask, store, policy, package, version, path);
            };
            match store.load(key, want, brotli_taken(ask))? {
                Some(loaded) => loaded,
                None => {
                    return match written_otherwise(store, package, &exact)? {
                        Some(to) => Ok(alias::redirect_to(ask, policy, package, &to, path)),
                        None => missing::missing(
                            store,
                            policy.not_found_cache_control(),
                            package,
                            &Selector::Exact(exact),
                            path,
                        ),
                    };
                }
            }
        }
    };
    // A request that names a dictionary the asset has deltas against is
    // answered from the asset's entry for it (RFC 9842).
    let (asset, reserved) = match dictionary_asked(ask, asset.value()) {
        Some(dictionary) => {
            let key = key.with_dictionary(Some(dictionary));
            match store.delta(key, &asset) {
                Ok(Some((entry, more))) => {
                    let reserved = match (reserved, more) {
                        (Some(a), Some(b)) => Some(a.join(b)),
                        (a, b) => a.or(b),
                    };
                    (entry, reserved)
                }
                Ok(None) => (asset, reserved),
                // Damage to a delta is the catalog's, not the request's:
                // it is answered without one (and `ccc verify` tells).
                Err(e) => {
                    log::err(format_args!("error: {e}"));
                    (asset, reserved)
                }
            }
        }
        None => (asset, reserved),
    };
    let prepared = asset.value();
    let send = ask.accept_encoding.choose(prepared.offered());
    let sent = Some(Sent {
        encoding: send,
        length: prepared.length(send),
        baseline: prepared.baseline(),
    });
    let length = prepared.length(send);
    // Only the selected representation's tag validates (RFC 9110 13.1.2):
    // a cache that holds the gzip copy must not get a 304 for identity.
    let conditional = ask.if_none_match.is_some() || ask.if_modified_since.is_some();
    if conditional
        && not_modified(
            ask.if_none_match,
            ask.if_modified_since,
            &[prepared.tag(send)],
            prepared.stored.published_at,
        )
    {
        return Ok(Answer {
            status: 304,
            headers: Headers::Prepared {
                asset,
                ok: false,
                encoding: send,
                site: Default::default(),
            },
            body: Body::Empty,
            length: Some(length),
            class: RouteClass::Asset,
            sent,
        });
    }
    // RFC 9110 13.2.2 step 5: a range only once no 304 applies; it is a
    // range of the representation selected.
    // A request without a range (nearly all) needs no tag here.
    let ranged = match ask.range {
        None => Ranged::Whole,
        range => range::evaluate(
            range,
            ask.if_range,
            prepared.tag(send),
            prepared.stored.published_at,
            length as u64,
        ),
    };
    // A part lies within `length`, a usize: the conversions are exact.
    let (status, part) = match ranged {
        Ranged::Whole => (200, 0..length),
        Ranged::Part(part) => (206, part.start as usize..part.end as usize),
        Ranged::Unsatisfiable => return Ok(Answer::unsatisfiable(length)),
    };
    let body = if ask.method == "HEAD" {
        Body::Empty
    } else {
        let name = || format!("{package}@{version}/{path}");
        match body(store, &asset, send, part.clone(), reserved, name) {
            Ok(body) => body,
            Err(problem) => return Ok(Answer::internal(&problem)),
        }
    };
    let mut headers = Headers::Prepared {
        asset,
        ok: true,
        encoding: send,
        site: Default::default(),
    };
    if status == 206 {
        let whole = length as u64;
        headers.push(
            "Content-Range",
            &range::content_range(&(part.start as u64..part.end as u64), whole),
        );
    }
    Ok(Answer {
        status,
        headers,
        body,
        length: Some(part.len()),
        class: RouteClass::Asset,
        sent,
    })
}

/// Whether the response to a miss may be sent in brotli: the client takes
/// it (and prefers it to identity), or names a dictionary, whose delta's
/// entry is made from the whole asset.
fn brotli_taken(ask: &Ask<'_>) -> store::Brotli {
    let accepted = ask.accept_encoding.choose(&[Encoding::Brotli]);
    match accepted == Encoding::Brotli || ask.available_dictionary.is_some() {
        true => store::Brotli::Accepted,
        false => store::Brotli::NotAccepted,
    }
}

/// The dictionary a request may be answered with a delta against: the
/// one `Available-Dictionary` names, when the asset has a delta against
/// it, the request accepts `dcb` or `dcz`, and it may read the answer
/// (`http::dictionary`). ccc never codes against a dictionary on
/// request: only deltas the catalog holds are sent.
fn dictionary_asked(ask: &Ask<'_>, prepared: &prepared::Prepared) -> Option<[u8; 32]> {
    let sha = crate::http::dictionary::available_dictionary(ask.available_dictionary?)?;
    if !prepared.has_delta_against(&sha)
        || !crate::http::dictionary::may_use_dictionary(ask.sec_fetch_site, ask.sec_fetch_mode)
    {
        return None;
    }
    let deltas = [Encoding::Dcb, Encoding::Dcz];
    ask.accept_encoding
        .choose(&deltas)
        .is_delta()
        .then_some(sha)
}

/// The body of `part` of the representation `send` of `asset`: shared
/// with the asset in memory (with the reservation of a body read for this
/// response), or pieces read from the catalog, or decoded from the gzip
/// stream for a client that takes neither coding. Err names a stored
/// stream that does not decode, found before anything was sent.
fn body(
    store: &store::Handle,
    asset: &store::Asset,
    send: Encoding,
    part: std::ops::Range<usize>,
    reserved: Option<Reservation>,
    name: impl Fn() -> String,
) -> std::result::Result<Body, String> {
    let stored = &asset.value().stored;
    let range = part.start as u64..part.end as u64;
    if let Some(blob) = stored.chunks {
        return Ok(Body::Pieces(Box::new(ChunkPieces {
            store: store.clone(),
            cursor: ChunkCursor::new(blob, range),
            name: name(),
            place: None,
        })));
    }
    // Identity to a client that takes neither coding of a compressed
    // asset: decoded from the gzip body, which every such asset has.
    if send == Encoding::Identity && stored.encoding == Encoding::Gzip {
        return decoded(store, asset, range, reserved, name);
    }
    let Some((stream, coding)) = stored.body(send) else {
        return Err(format!("{} has no {send:?} coding", name()));
    };
    Ok(match stream {
        Stream::Memory(_) if range.start == 0 && range.end == stream.len() => {
            Body::Shared(asset.clone(), send, reserved)
        }
        Stream::Memory(_) => Body::Part(asset.clone(), send, part, reserved),
        Stream::Catalog {
            len,
            digests,
            verified,
        } => Body::Pieces(Box::new(CatalogPieces {
            store: store.clone(),
            at: PieceAt {
                blob_id: stored.blob_id,
                coding,
                index: 0,
                digests: digests.clone(),
                verified: verified.clone(),
                stream_len: *len,
            },
            range,
            name: name(),
            place: None,
        })),
    })
}

/// The decoded bytes `range` of a gzip-stored asset. Up to a piece of
/// them from a stream in memory are decoded at once (a stream that does
/// not decode is then an error before anything is sent); more, or from the
/// catalog, as they are sent.
fn decoded(
    store: &store::Handle,
    asset: &store::Asset,
    range: std::ops::Range<u64>,
    reserved: Option<Reservation>,
    name: impl Fn() -> String,
) -> std::result::Result<Body, String> {
    let stored = &asset.value().stored;
    // The stream shares the asset's memory (and its reservation).
    let in_memory = stored
        .body
        .bytes()
        .map(|_| Body::Shared(asset.clone(), stored.encoding, reserved).into_bytes());
    let eager = range.end <= PIECE_SIZE as u64;
    if let (Some(gzip), true) = (&in_memory, eager)
        && let Some(reserved) = store.in_flight().try_reserve(range.end)
    {
        let mut raw = Vec::with_capacity(range.end as usize);
        let decoded = {
            let _s = causal::site!(GZIP_DECODE);
            // Every member, as the check on load decoded it; no further
            // than the range needs.
            flate2::read::MultiGzDecoder::new(&gzip[..])
                .take(range.end)
                .read_to_end(&mut raw)
        };
        return match decoded {
            Ok(n) if n as u64 == range.end => {
                raw.drain(..range.start as usize);
                Ok(Body::Made(owned_bytes(raw, Some(reserved))))
            }
            Ok(n) => Err(format!(
                "stored gzip of {} does not decode: it ends after {n} of {} bytes",
                hex::encode(stored.sha256),
                range.end
            )),
            Err(e) => Err(format!(
                "stored gzip of {} does not decode: {e}",
                hex::encode(stored.sha256)
            )),
        };
    }
    let source = match (in_memory, &stored.body) {
        (Some(gzip), _) => Source::Memory(std::io::Cursor::new(gzip)),
        (
            None,
            Stream::Catalog {
                len,
                digests,
                verified,
            },
        ) => Source::Catalog {
            store: store.clone(),
            at: PieceAt {
                blob_id: stored.blob_id,
                coding: Coding::Stored,
                index: 0,
                digests: digests.clone(),
                verified: verified.clone(),
                stream_len: *len,
            },
            piece: Vec::new(),
            used: 0,
        },
        (None, Stream::Memory(_)) => return Err(format!("{}: no gzip stream", name())),
    };
    Ok(Body::Pieces(Box::new(DecodedPieces::new(
        source,
        store.in_flight().clone(),
        range,
        name(),
    ))))
}

/// `/assets/PKG/VERSION/`: the version's files, as JSON or, for a browser,
/// as a page that also shows the dist-tags naming the version.
fn listing(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &alias::Policy,
    package: &str,
    version: &str,
) -> Result<Answer> {
    let Ok(exact) = semver::Version::parse(version) else {
        return alias::redirect(ask, store, policy, package, version, "");
    };
    if let Some(integrity) = route::import_map_asked(ask.target) {
        return import_map::answer(ask, store, policy, package, &exact, integrity);
    }
    let page = match route::listing_page(ask.target) {
        Ok(page) => page,
        Err(why) => return Ok(Answer::error(400, &why)),
    };
    let format = negotiate::format(ask.accept.iter().copied());
    let Some(listing) = store.list(package.to_string(), version.to_string(), page)? else {
        return missing::listing(
            ask,
            format,
            store,
            policy.not_found_cache_control(),
            package,
            &Selector::Exact(exact),
        );
    };
    Ok(match format {
        Format::Json => Answer::json(200, IMMUTABLE, &listing).varies_by_accept(),
        Format::Html => {
            // The tags may move between the two questions; the page then
            // shows the version without them, as it is now. Only the tags
            // are wanted: no version rows (a page of none).
            let no_versions = Page {
                offset: 0,
                limit: Some(0),
            };
            let tags: Vec<String> = store
                .package(package.to_string(), no_versions)?
                .map(|p| {
                    p.tags
                        .into_iter()
                        .filter(|t| t.version == listing.version.version)
                        .map(|t| t.tag)
                        .collect()
                })
                .unwrap_or_default();
            let page = browse::version(&listing, &tags);
            Answer::html(200, ask, policy.cache_control(), page)
        }
    })
}

/// `/assets/PKG/`: the package's dist-tags and versions (one page of them
/// with `?limit=&offset=`), as JSON or, for a browser, as a page.
fn package_listing(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &alias::Policy,
    package: String,
) -> Result<Answer> {
    let page = match route::listing_page(ask.target) {
        Ok(page) => page,
        Err(why) => return Ok(Answer::error(400, &why)),
    };
    let format = negotiate::format(ask.accept.iter().copied());
    if format == Format::Json {
        return Ok(alias::package(ask, store, policy, package, page)?.varies_by_accept());
    }
    let Some(versions) = store.package(package.clone(), page)? else {
        return missing::listing(
            ask,
            format,
            store,
            policy.not_found_cache_control(),
            &package,
            &Selector::Latest,
        );
    };
    let page = browse::package(&versions, page);
    Ok(Answer::html(200, ask, policy.cache_control(), page))
}

/// `/assets/`: every package, as JSON (the rows of `ccc ls --json`) or a
/// page; it changes with every publish, so it is cached like aliases.
fn index(ask: &Ask<'_>, store: &store::Handle, policy: &alias::Policy) -> Result<Answer> {
    let page = match route::listing_page(ask.target) {
        Ok(page) => page,
        Err(why) => return Ok(Answer::error(400, &why)),
    };
    let packages = store.packages(page)?;
    let cache_control = policy.cache_control();
    Ok(match negotiate::format(ask.accept.iter().copied()) {
        Format::Json => {
            let body = serde_json::to_vec(&packages).unwrap_or_default();
            Answer::json_bytes(200, cache_control, body).varies_by_accept()
        }
        Format::Html => Answer::html(200, ask, cache_control, browse::index(&packages)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::publish::{self, FileEntry, NoProgress, Options, Source};
    use crate::catalog::{Access, Catalog};
    use crate::transport;
    use std::sync::Arc;

    const SCRIPT: &[u8] = b"export const answer = 42;\n";

    /// A store over a catalog holding `app@1.0.0/app.js` (stored gzip).
    fn store(dir: &std::path::Path) -> store::Running {
        let db = dir.join("cdn.db");
        let mut catalog = Catalog::open(&db, Access::Create).unwrap();
        let body = SCRIPT.repeat(100);
        let files = vec![FileEntry {
            path: "app.js".into(),
            size: body.len() as u64,
            source: Source::Memory(Arc::from(body)),
        }];
        let version = semver::Version::new(1, 0, 0);
        let options = Options::default();
        publish::publish(
            &mut catalog,
            "app",
            &version,
            files,
            vec![],
            &options,
            &NoProgress,
        )
        .unwrap();
        store::start(store::Config {
            db,
            cache_entries: 16,
            cache_bytes: 1 << 20,
            index_bytes: 1 << 20,
            in_flight_bytes: 1 << 20,
            log_misses: false,
            readers: 2,
            max_lag: None,
        })
        .unwrap()
    }

    fn ask<'a>(method: &'a str, target: &'a str, headers: &[(&str, &'a str)]) -> Ask<'a> {
        let first = |name: &str| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        Ask {
            method,
            target,
            host: first("Host"),
            tls: false,
            accept_encoding: negotiate::Accepted::of(first("Accept-Encoding")),
            accept: first("Accept").into_iter().collect(),
            if_none_match: first("If-None-Match"),
            if_modified_since: first("If-Modified-Since"),
            range: first("Range"),
            if_range: first("If-Range"),
            access_control_request_headers: first("Access-Control-Request-Headers"),
            available_dictionary: first("Available-Dictionary"),
            sec_fetch_site: first("Sec-Fetch-Site"),
            sec_fetch_mode: first("Sec-Fetch-Mode"),
        }
    }

    fn header<'a>(answer: &'a Answer, name: &'static str) -> Option<&'a str> {
        answer.headers.get(name)
    }

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    const URL: &str = "/assets/app/1.0.0/app.js";
    const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");

    #[test]
    fn hits_share_the_cached_body_and_headers() {
        let dir = tempfile::tempdir().unwrap();
        let running = store(dir.path());
        let (store, counters) = (&running.handle, Counters::new());
        let policy = alias::Policy::default();
        let first = answer(&ask("GET", URL, &[GZIP]), store, &counters, &policy);
        // A call after the miss's offer is handled after it: cached by now.
        store.stats().unwrap();
        let second = answer(&ask("GET", URL, &[GZIP]), store, &counters, &policy);
        for a in [&first, &second] {
            assert_eq!(a.status, 200);
            assert_eq!(header(a, "Content-Encoding"), Some("gzip"));
            assert_eq!(header(a, "Server"), Some(transport::SERVER));
            assert_eq!(gunzip(a.body.as_ref()), SCRIPT.repeat(100));
            assert_eq!(a.length, Some(a.body.as_ref().len()));
            assert_eq!(a.class, RouteClass::Asset);
        }
        let (Body::Shared(one, Encoding::Gzip, _), Body::Shared(two, Encoding::Gzip, _)) =
            (&first.body, &second.body)
        else {
            panic!("gzip bodies are shared with the cache");
        };
        assert!(
            Arc::ptr_eq(one, two),
            "the second answer is the cached entry"
        );
        assert_eq!(first.headers.text(), second.headers.text());
        // The response sends the cache's bytes themselves, not a copy.
        let cached = one.value().stored.body_bytes().as_ptr();
        let sent = second.into_response().into_body().into_whole();
        assert_eq!(
            sent.as_ptr(),
            cached,
            "the body handed to hyper is the cached one"
        );
        let ranged = answer(
            &ask("GET", URL, &[GZIP, ("Range", "bytes=10-19")]),
            store,
            &counters,
            &policy,
        );
        assert_eq!(ranged.status, 206);
        let part = ranged.into_response().into_body().into_whole();
        assert_eq!(
            part.as_ptr(),
            cached.wrapping_add(10),
            "a range is a view of it"
        );
        let stats = store.stats().unwrap();
        assert_eq!((stats.hits, stats.misses), (2, 1));
        running.join();
    }

    #[test]
    fn identity_head_and_not_modified() {
        let dir = tempfile::tempdir().unwrap();
        let running = store(dir.path());
        let (store, counters) = (&running.handle, Counters::new());
        let policy = alias::Policy::default();
        let plain = answer(&ask("GET", URL, &[]), store, &counters, &policy);
        assert_eq!(plain.status, 200);
        assert_eq!(plain.body.as_ref(), &SCRIPT.repeat(100)[..]);
        assert_eq!(header(&plain, "Content-Encoding"), None);
        let tag = header(&plain, "ETag").unwrap().to_string();
        assert!(!tag.ends_with("-gz\""), "{tag}");

        let head = answer(&ask("HEAD", URL, &[GZIP]), store, &counters, &policy);
        assert_eq!(head.status, 200);
        assert!(head.body.as_ref().is_empty());
        let gz_tag = header(&head, "ETag").unwrap().to_string();
        assert_eq!(gz_tag, format!("{}-gz\"", &tag[..tag.len() - 1]));
        let gz_length = head.length.unwrap();
        assert!(gz_length > 0 && gz_length < SCRIPT.len() * 100);

        // Only the selected representation's tag validates (RFC 9110
        // 13.1.2); the 304 names it and carries no content headers.
        let a = answer(
            &ask("GET", URL, &[GZIP, ("If-None-Match", &gz_tag)]),
            store,
            &counters,
            &policy,
        );
        assert_eq!(a.status, 304);
        assert_eq!(header(&a, "ETag"), Some(gz_tag.as_str()));
        assert_eq!(header(&a, "Content-Type"), None);
        assert_eq!(header(&a, "Content-Encoding"), None);
        assert_eq!(a.length, Some(gz_length));
        assert!(a.body.as_ref().is_empty());
        // A cache holding the identity copy asks with its tag while gzip
        // is what this request selects, and the reverse: neither may get a
        // 304 that matches none of its copies.
        for (validator, accept) in [(&tag, Some(GZIP)), (&gz_tag, None)] {
            let mut headers = vec![("If-None-Match", validator.as_str())];
            headers.extend(accept);
            let a = answer(&ask("GET", URL, &headers), store, &counters, &policy);
            assert_eq!(a.status, 200, "{validator} with {accept:?}");
        }
        let changed = answer(
            &ask("GET", URL, &[("If-None-Match", "\"other\"")]),
            store,
            &counters,
            &policy,
        );
        assert_eq!(changed.status, 200);
        running.join();
    }

    #[test]
    fn ranges_of_either_representation() {
        let dir = tempfile::tempdir().unwrap();
        let running = store(dir.path());
        let (store, counters) = (&running.handle, Counters::new());
        let policy = alias::Policy::default();
        let original = SCRIPT.repeat(100);
        let gz = answer(&ask("GET", URL, &[GZIP]), store, &counters, &policy);
        let stream = gz.body.as_ref().to_vec();
        let gz_tag = header(&gz, "ETag").unwrap().to_string();
        assert_eq!(header(&gz, "Accept-Ranges"), Some("bytes"));
        for (accept, whole) in [(None, &original), (Some(GZIP), &stream)] {
            let with = |range: &str| {
                let mut headers = vec![("Range", range)];
                headers.extend(accept);
                answer(&ask("GET", URL, &headers), store, &counters, &policy)
            };
            let len = whole.len();
            let a = with("bytes=10-19");
            assert_eq!(a.status, 206);
            assert_eq!(a.body.as_ref(), &whole[10..20]);
            assert_eq!(a.length, Some(10));
            let expected = format!("bytes 10-19/{len}");
            assert_eq!(header(&a, "Content-Range"), Some(expected.as_str()));
            assert_eq!(
                header(&a, "Content-Encoding"),
                accept.map(|_| "gzip"),
                "a range of the gzip stream stays gzip-coded"
            );
            assert_eq!(with("bytes=-7").body.as_ref(), &whole[len - 7..]);
            assert_eq!(with("bytes=5-").body.as_ref(), &whole[5..]);
            let past = with(&format!("bytes={len}-"));
            assert_eq!(past.status, 416);
            let expected = format!("bytes */{len}");
            assert_eq!(header(&past, "Content-Range"), Some(expected.as_str()));
            assert_eq!(with("bytes=0-1,4-5").status, 200);
        }
        // If-None-Match comes first (RFC 9110 13.2.2); If-Range names one
        // representation only.
        let both = [GZIP, ("Range", "bytes=0-3"), ("If-None-Match", &gz_tag)];
        assert_eq!(
            answer(&ask("GET", URL, &both), store, &counters, &policy).status,
            304
        );
        let if_range = [GZIP, ("Range", "bytes=0-3"), ("If-Range", &gz_tag)];
        assert_eq!(
            answer(&ask("GET", URL, &if_range), store, &counters, &policy).status,
            206
        );
        let other = [("Range", "bytes=0-3"), ("If-Range", &gz_tag)];
        assert_eq!(
            answer(&ask("GET", URL, &other), store, &counters, &policy).status,
            200
        );
        running.join();
    }

    #[test]
    fn options_and_cors_on_every_answer() {
        let dir = tempfile::tempdir().unwrap();
        let running = store(dir.path());
        let (store, counters) = (&running.handle, Counters::new());
        let policy = alias::Policy::default();
        let preflight = answer(
            &ask(
                "OPTIONS",
                URL,
                &[("Access-Control-Request-Headers", "range,traceparent")],
            ),
            store,
            &counters,
            &policy,
        );
        assert_eq!(preflight.status, 204);
        assert_eq!(
            header(&preflight, "Access-Control-Allow-Headers"),
            Some("range, traceparent")
        );
        assert_eq!(
            header(&preflight, "Access-Control-Allow-Methods"),
            Some("GET, HEAD, OPTIONS")
        );
        for (method, target, status) in [
            ("GET", URL, 200),
            ("GET", "/assets/app/latest/app.js", 302),
            ("GET", "/assets/app/1.0.0/", 200),
            ("GET", "/assets/", 200),
            ("GET", "/assets/app/1.0.0/nope", 404),
            ("PUT", URL, 405),
            ("OPTIONS", "*", 204),
        ] {
            let a = answer(&ask(method, target, &[]), store, &counters, &policy);
            assert_eq!(a.status, status, "{method} {target}");
            for (name, value) in cors::EVERY_RESPONSE {
                assert_eq!(header(&a, name), Some(value), "{method} {target} {name}");
            }
        }
        running.join();
    }

    #[test]
    fn redirects_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let running = store(dir.path());
        let (store, counters) = (&running.handle, Counters::new());
        let policy = alias::Policy::default();
        let latest = answer(
            &ask("GET", "/assets/app/latest/app.js?v=1", &[]),
            store,
            &counters,
            &policy,
        );
        assert_eq!(latest.status, 302);
        assert_eq!(
            header(&latest, "Location"),
            Some("/assets/app/1.0.0/app.js?v=1")
        );
        let post = answer(&ask("POST", URL, &[]), store, &counters, &policy);
        assert_eq!(
            (post.status, header(&post, "Allow")),
            (405, Some("GET, HEAD, OPTIONS"))
        );
        let missing = answer(
            &ask("GET", "/assets/app/1.0.0/nope.js", &[]),
            store,
            &counters,
            &policy,
        );
        assert_eq!(missing.status, 404);
        assert_eq!(header(&missing, "Content-Type"), Some("application/json"));
        assert_ne!(missing.class, RouteClass::Asset);
        running.join();
    }
}

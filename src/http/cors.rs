//! Cross-origin and security headers, on every response ccc sends, and
//! the answer to `OPTIONS` (Fetch standard, "CORS protocol").
//!
//! Every response, whatever its status, carries [`EVERY_RESPONSE`]: a
//! redirect or an error without `Access-Control-Allow-Origin` makes a
//! browser report a network error instead of the status, and fonts and
//! ES modules loaded cross-origin fail outright. The origin is always
//! `*`, never the request's `Origin` echoed: ccc serves public, immutable
//! files, sends no credentials, and a `*` answer is one cache entry for
//! every origin (an echo would need `Vary: Origin`).
//!
//! `OPTIONS`, on any path, answers 204 with the methods ccc has and the
//! request headers a page may send. The headers allowed are the ones the
//! preflight asks for (`Access-Control-Request-Headers`), echoed, since
//! ccc reads no header it would misuse and grants no credentials: a fixed
//! list would break pages whose fetch wrappers add a header of their own
//! (tracing headers such as `traceparent` are common), for no safety
//! gained. A preflight that names no headers, or a list that is not one,
//! gets the fixed list of request headers ccc acts on.

/// Header lines on every response (the `Server` line aside).
pub(crate) const EVERY_RESPONSE: [(&str, &str); 5] = [
    ("Access-Control-Allow-Origin", "*"),
    // `*`: every header, to a request without credentials (Fetch), which
    // ccc never grants: a page reads ETag, Content-Range and
    // Content-Encoding in 36 bytes instead of the 84 of the list.
    ("Access-Control-Expose-Headers", "*"),
    ("Cross-Origin-Resource-Policy", "cross-origin"),
    ("Timing-Allow-Origin", "*"),
    ("X-Content-Type-Options", "nosniff"),
];

/// [`EVERY_RESPONSE`] with its names parsed once, for the templates of
/// asset heads.
pub(crate) static EVERY_RESPONSE_NAMED: std::sync::LazyLock<Vec<(http::HeaderName, &'static str)>> =
    std::sync::LazyLock::new(|| {
        EVERY_RESPONSE
            .iter()
            .filter_map(|(name, value)| {
                crate::http::header_lines::header_name(name).map(|name| (name, *value))
            })
            .collect()
    });

/// `Allow` of a 405 and `Access-Control-Allow-Methods` of a preflight.
pub(crate) const METHODS: &str = "GET, HEAD, OPTIONS";

/// How long a browser may keep a preflight's answer, in seconds (one day;
/// Chromium keeps at most 2 hours and Firefox 1 day of it).
pub(crate) const MAX_AGE: &str = "86400";

/// The request headers a page can set that ccc acts on (browsers set
/// `Accept-Encoding` themselves): allowed when a preflight names none.
pub(crate) const REQUEST_HEADERS: &str = "If-Modified-Since, If-None-Match, If-Range, Range";

/// `Access-Control-Allow-Headers` for a preflight that asked for
/// `requested`: the list it asked for when that is a list of field names
/// (RFC 9110 5.6.1 tokens), else [`REQUEST_HEADERS`].
pub(crate) fn allow_headers(requested: Option<&str>) -> String {
    let names = requested.map(|list| {
        list.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect::<Vec<_>>()
    });
    match names {
        Some(names) if !names.is_empty() && names.iter().all(|n| is_token(n)) => names.join(", "),
        _ => REQUEST_HEADERS.to_string(),
    }
}

/// RFC 9110 5.6.2 `token`.
fn is_token(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_headers_are_echoed_when_they_are_names() {
        assert_eq!(allow_headers(Some("range")), "range");
        assert_eq!(
            allow_headers(Some("range,if-none-match, traceparent")),
            "range, if-none-match, traceparent"
        );
        assert_eq!(allow_headers(Some(" x-a ,, x-b ")), "x-a, x-b");
    }

    #[test]
    fn otherwise_the_headers_ccc_reads() {
        for odd in [
            None,
            Some(""),
            Some(" , "),
            Some("a b"),
            Some("x:y"),
            Some("é"),
        ] {
            assert_eq!(allow_headers(odd), REQUEST_HEADERS, "{odd:?}");
        }
        for needed in ["Range", "If-None-Match", "If-Modified-Since", "If-Range"] {
            assert!(REQUEST_HEADERS.contains(needed), "{needed}");
        }
    }

    #[test]
    fn every_header_is_exposed_to_requests_without_credentials() {
        let exposed = EVERY_RESPONSE
            .iter()
            .find(|(n, _)| *n == "Access-Control-Expose-Headers")
            .map(|(_, v)| *v);
        // A wildcard that Fetch honours only without credentials, which
        // ccc never allows (no Access-Control-Allow-Credentials).
        assert_eq!(exposed, Some("*"));
        assert!(
            !EVERY_RESPONSE
                .iter()
                .any(|(n, _)| n.contains("Credentials"))
        );
    }
}

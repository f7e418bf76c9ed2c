//! Request target -> route. The path is percent-decoded exactly once (so
//! `%252F` stays a literal `%2F`), must be UTF-8, and may not contain empty,
//! `.` or `..` segments or NUL: no request can name anything outside the
//! catalog's own paths, and every name publish accepts is reachable.
//!
//! ```text
//! /assets/<pkg>/<version>/<path...>   an asset (pkg may be @scope/name)
//! /assets/<pkg>/<version>/            the version's file list (JSON, or HTML)
//! /assets/<pkg>/<version>/?importmap  the version's import map
//! /assets/<pkg>/<version>             -> redirect to the version's entry file
//! /assets/<pkg>/                      the package's versions and tags (JSON, or HTML)
//! /assets/<pkg>                       -> redirect to `latest`'s entry file
//! /assets[/]                          the packages (JSON, or HTML)
//! /assets/<pkg>@<version>/<path...>   as /assets/<pkg>/<version>/<path...>
//! /<pkg>@<version>[/<path...>]        the same: unpkg's shape
//! /npm/<pkg>@<version>[/<path...>]    the same: jsDelivr's shape
//! /_stats, /metrics, /healthz
//! OPTIONS on any target               the CORS answer (204)
//! ```
//!
//! `<pkg>@<version>` is the form unpkg writes, and jsDelivr after its
//! `/npm/`, so URLs copied from them work once the host is changed:
//! `/react@18.3.1/umd/react.production.min.js` and
//! `/npm/react@18.3.1/umd/react.production.min.js` are the file
//! `/assets/react/18.3.1/umd/react.production.min.js` is, and `/react@18`
//! redirects as `/assets/react/18` does. At the top, only those forms are
//! routed (a path without `@<version>` is a 404), so the root stays free
//! for what else may be served there.
//!
//! Which listings answer in HTML is [`crate::http::negotiate::format`]'s
//! choice, by `Accept`.
//!
//! Redirects keep the request's query string ([`redirect_url`]), as nginx's
//! `rewrite` does: cache-busting and tracking parameters survive the hop
//! from `latest` or a range to the exact version. The listings (every
//! package, a package's versions, a version's files) read `limit` and
//! `offset` from it ([`listing_page`]), and a version's listing answers its
//! import map instead when asked `?importmap` ([`import_map_asked`]);
//! every other parameter is left alone.
//!
//! Routing allocates nothing for a target without percent-escapes: the
//! route's names are slices of the target. Only a decoded target is copied
//! (once, by the decoding).

use crate::page::Page;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use std::borrow::Cow;

/// Longest request target served; longer ones get 414.
pub(crate) const MAX_TARGET_LEN: usize = 8 * 1024;

/// What a request asks for; names are borrowed from the target unless it
/// had to be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    Asset {
        package: Cow<'a, str>,
        version: Cow<'a, str>,
        path: Cow<'a, str>,
    },
    Listing {
        package: Cow<'a, str>,
        version: Cow<'a, str>,
    },
    /// A version without the trailing slash.
    VersionRoot {
        package: Cow<'a, str>,
        version: Cow<'a, str>,
    },
    /// A package with the trailing slash: its versions and tags.
    Package {
        package: Cow<'a, str>,
    },
    /// A package without the trailing slash.
    PackageRoot {
        package: Cow<'a, str>,
    },
    /// `/assets/`: every package.
    Index,
    Stats,
    /// The counters in Prometheus's text format.
    Metrics,
    Health,
    /// `OPTIONS`, on any target: a CORS preflight or a plain question.
    Options,
}

impl Route<'_> {
    /// The same route, owning its names.
    fn into_owned(self) -> Route<'static> {
        let own = |s: Cow<'_, str>| Cow::Owned(s.into_owned());
        match self {
            Route::Asset {
                package,
                version,
                path,
            } => Route::Asset {
                package: own(package),
                version: own(version),
                path: own(path),
            },
            Route::Listing { package, version } => Route::Listing {
                package: own(package),
                version: own(version),
            },
            Route::VersionRoot { package, version } => Route::VersionRoot {
                package: own(package),
                version: own(version),
            },
            Route::Package { package } => Route::Package {
                package: own(package),
            },
            Route::PackageRoot { package } => Route::PackageRoot {
                package: own(package),
            },
            Route::Index => Route::Index,
            Route::Stats => Route::Stats,
            Route::Metrics => Route::Metrics,
            Route::Health => Route::Health,
            Route::Options => Route::Options,
        }
    }
}

/// Why a request cannot be routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RouteError {
    /// 405, with `Allow: GET, HEAD, OPTIONS`.
    MethodNotAllowed,
    /// 414.
    TargetTooLong,
    /// 400, with the reason.
    BadRequest(String),
    /// 404, with the reason: a path ccc does not serve.
    NotFound(String),
}

/// Routes a request; GET and HEAD read, OPTIONS answers the same on
/// every target (`*` included, RFC 9110 9.3.7), other methods do not exist.
pub(crate) fn route<'a>(method: &str, target: &'a str) -> Result<Route<'a>, RouteError> {
    if target.len() > MAX_TARGET_LEN {
        return Err(RouteError::TargetTooLong);
    }
    if method == "OPTIONS" {
        return Ok(Route::Options);
    }
    // RFC 9110 9.3.6: CONNECT is for proxies, which ccc is not.
    if method == "CONNECT" {
        return Err(RouteError::MethodNotAllowed);
    }
    // RFC 9112 3.2.4: the asterisk form names no resource but the server,
    // for OPTIONS alone.
    if target == "*" {
        return Err(RouteError::BadRequest(
            "the target `*` is for OPTIONS only".into(),
        ));
    }
    let raw_path = target_path(target);
    let route = match raw_path {
        "/_stats" => Route::Stats,
        "/metrics" => Route::Metrics,
        "/healthz" => Route::Health,
        "/assets" | "/assets/" => Route::Index,
        _ => match raw_path.strip_prefix("/assets/") {
            Some(rest) => asset_route(rest)?,
            None => match copied_from_a_public_cdn(raw_path) {
                Some(rest) => asset_route(rest)?,
                None => return Err(unknown_path()),
            },
        },
    };
    if method != "GET" && method != "HEAD" {
        return Err(RouteError::MethodNotAllowed);
    }
    Ok(route)
}

/// The path of a request target, as sent (not decoded): without its
/// query and fragment, and without the scheme and authority of the
/// absolute form, which RFC 9112 3.2.2 has a server accept too (the
/// authority is not ours to check).
pub(crate) fn target_path(target: &str) -> &str {
    let origin_form = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    match memchr::memchr2(b'?', b'#', origin_form.as_bytes()) {
        Some(end) => &origin_form[..end],
        None => origin_form,
    }
}

fn asset_route(raw: &str) -> Result<Route<'_>, RouteError> {
    if !raw.as_bytes().contains(&b'%') {
        // Nothing to decode, and a &str is UTF-8 already.
        return split_asset_path(raw);
    }
    let decoded = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| bad("the path is not valid UTF-8 once percent-decoded"))?;
    match decoded {
        Cow::Borrowed(path) => split_asset_path(path),
        Cow::Owned(path) => split_asset_path(&path).map(Route::into_owned),
    }
}

/// Routes a decoded path below `/assets/`; the names are slices of it.
fn split_asset_path(decoded: &str) -> Result<Route<'_>, RouteError> {
    let trailing_slash = decoded.ends_with('/');
    let trimmed = decoded.strip_suffix('/').unwrap_or(decoded);
    if trimmed.is_empty() {
        return Err(unknown_path());
    }
    let slashes = checked_segments(trimmed.as_bytes())?;
    // Segments are never empty now: the package is one segment, or two
    // for a scope, and the version the next one; the rest is the path.
    let scoped = trimmed.starts_with('@');
    if scoped && slashes[0] == trimmed.len() {
        return Err(bad("a scoped package looks like @scope/name"));
    }
    let package_len = slashes[usize::from(scoped)];
    let package = &trimmed[..package_len];
    // `react@18.3.1`, `@scope/name@1.0.0`: the version in the package's
    // own segment, as unpkg writes it; the path follows.
    let name_start = if scoped { slashes[0] + 1 } else { 0 };
    let at = trimmed.as_bytes()[name_start..package_len]
        .iter()
        .position(|&b| b == b'@');
    if let Some(at) = at.filter(|&i| i > 0).map(|i| name_start + i) {
        let (named, version) = (&trimmed[..at], &trimmed[at + 1..package_len]);
        let path = trimmed[package_len..].strip_prefix('/').unwrap_or("");
        crate::spec::package_name(named).map_err(|e| bad_name(path, &e))?;
        if version.is_empty() {
            return Err(bad(&format!(
                "`{package}` names no version after its `@`: a file's URL is {}",
                asset_url(named, "VERSION", path)
            )));
        }
        return version_route(named, version, path, trailing_slash);
    }
    crate::spec::package_name(package).map_err(|e| bad_name("", &e))?;
    if package_len == trimmed.len() {
        let package = Cow::Borrowed(package);
        return Ok(if trailing_slash {
            Route::Package { package }
        } else {
            Route::PackageRoot { package }
        });
    }
    let version_end = slashes[usize::from(scoped) + 1];
    let version = &trimmed[package_len + 1..version_end];
    let path = trimmed.get(version_end + 1..).unwrap_or("");
    version_route(package, version, path, trailing_slash)
}

/// Checks every segment of `path` (no empty, `.` or `..` segment, no NUL),
/// in one pass, and gives where its first three `/` are (the path's
/// length for each it lacks).
fn checked_segments(path: &[u8]) -> Result<[usize; 3], RouteError> {
    let mut slashes = [path.len(); 3];
    let mut found = 0;
    let mut start = 0;
    // Bytes, not chars: every byte that matters here is ASCII.
    for (i, &b) in path.iter().chain(b"/").enumerate() {
        match b {
            b'/' => {
                match &path[start..i] {
                    b"" => return Err(bad("the path has an empty segment")),
                    b"." | b".." => return Err(bad("the path has a `.` or `..` segment")),
                    _ => {}
                }
                if let Some(at) = slashes.get_mut(found) {
                    *at = i;
                    found += 1;
                }
                start = i + 1;
            }
            0 => return Err(bad("the path contains NUL")),
            _ => {}
        }
    }
    Ok(slashes)
}

/// The route of `path` (empty: the version itself) in `package@version`.
fn version_route<'a>(
    package: &'a str,
    version: &'a str,
    path: &'a str,
    trailing_slash: bool,
) -> Result<Route<'a>, RouteError> {
    let (package, version) = (Cow::Borrowed(package), Cow::Borrowed(version));
    Ok(match (path.is_empty(), trailing_slash) {
        (true, true) => Route::Listing { package, version },
        (true, false) => Route::VersionRoot { package, version },
        (false, true) => {
            // A folder inside a version: there are no folder listings.
            return Err(RouteError::NotFound(format!(
                "{path}/ is a folder; {} lists every file of {package}@{version}",
                asset_url(&package, &version, ""),
            )));
        }
        (false, false) => Route::Asset {
            package,
            version,
            path: path.into(),
        },
    })
}

/// The `<pkg>@<version>[/<path...>]` of a path written as unpkg writes
/// it (`/react@18.3.1/…`) or as jsDelivr does (`/npm/react@18.3.1/…`).
fn copied_from_a_public_cdn(raw_path: &str) -> Option<&str> {
    let below = &raw_path[1..];
    let below = match below.strip_prefix("npm/") {
        Some(rest) if names_version_at(rest) => rest,
        _ => below,
    };
    names_version_at(below).then_some(below)
}

/// Whether `path` (below the root, not decoded) starts as unpkg's URLs do:
/// `react@18.3.1`, `@scope/name@1.0.0`, a version after the name.
fn names_version_at(path: &str) -> bool {
    let mut segments = path.split('/');
    let first = segments.next().unwrap_or("");
    let name = match first.starts_with('@') {
        true => segments.next().unwrap_or(""),
        false => first,
    };
    name.find('@').is_some_and(|i| i > 0)
}

fn bad(why: &str) -> RouteError {
    RouteError::BadRequest(why.to_string())
}

/// The 400 for a package part that names no package: what is wrong with
/// it, and the shapes a file's URL has, with the request's `path` in them.
fn bad_name(path: &str, why: &crate::Error) -> RouteError {
    let path = if path.is_empty() { "index.js" } else { path };
    bad(&format!(
        "{why}; a file's URL is /assets/PACKAGE/VERSION/PATH or /PACKAGE@VERSION/PATH, \
         like /assets/react/18.3.1/{path}, /react@18.3.1/{path} or /@scope/name@1.0.0/{path}"
    ))
}

fn unknown_path() -> RouteError {
    RouteError::NotFound(
        "no such path: files are served at /assets/<package>/<version>/<path> \
         (or /<package>@<version>/<path>)"
            .into(),
    )
}

/// Characters escaped in a path segment of a URL ccc builds (redirects):
/// controls, space, and everything with a meaning in a URL.
pub(crate) const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Bytes of a query string that cannot go into a `Location` header as
/// they are; `%` stays, so what the client encoded is not encoded twice.
pub(crate) const QUERY: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>');

/// Where a redirect for `target` to an asset, a version's list (`path`
/// empty) or a version's root points: [`asset_url`] plus the target's query
/// string, if it has a non-empty one.
pub(crate) fn redirect_url(package: &str, version: &str, path: &str, target: &str) -> String {
    let mut url = asset_url(package, version, path);
    let before_fragment = target.split('#').next().unwrap_or("");
    if let Some((_, query)) = before_fragment.split_once('?')
        && !query.is_empty()
    {
        url.push('?');
        url.extend(utf8_percent_encode(query, QUERY));
    }
    url
}

/// Whether `target`, a version's listing, asks for its import map
/// instead (`?importmap`), and then whether with integrity
/// (`?importmap&integrity`): None when the query names no `importmap`.
/// The parameters' values are not read.
pub(crate) fn import_map_asked(target: &str) -> Option<bool> {
    let before_fragment = target.split('#').next().unwrap_or("");
    let (_, query) = before_fragment.split_once('?')?;
    let keys: Vec<&str> = query
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(key, _)| key))
        .collect();
    keys.contains(&"importmap")
        .then(|| keys.contains(&"integrity"))
}

/// The page of a listing that `target` asks for with `?limit=N&offset=M`
/// (both optional, whole numbers; `limit=0` or none: every row). The error names the parameter and the value at fault.
pub(crate) fn listing_page(target: &str) -> Result<Page, String> {
    let mut page = Page::ALL;
    let before_fragment = target.split('#').next().unwrap_or("");
    let Some((_, query)) = before_fragment.split_once('?') else {
        return Ok(page);
    };
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != "limit" && key != "offset" {
            continue;
        }
        let n: u64 = value.parse().map_err(|_| {
            format!("the query parameter `{key}` must be a whole number, not `{value}`")
        })?;
        match key {
            "limit" => page.limit = (n > 0).then_some(n),
            _ => page.offset = n,
        }
    }
    Ok(page)
}

/// The URL of a package (`/assets/@scope/name/`), its segments
/// percent-encoded as needed.
pub(crate) fn package_url(package: &str) -> String {
    let mut url = String::from("/assets/");
    for (i, part) in package.split('/').enumerate() {
        if i > 0 {
            url.push('/');
        }
        url.extend(utf8_percent_encode(part, SEGMENT));
    }
    url.push('/');
    url
}

/// The URL of an asset, a version's list (`path` empty) or a version's
/// root, with every segment percent-encoded as needed.
pub(crate) fn asset_url(package: &str, version: &str, path: &str) -> String {
    let mut url = package_url(package);
    url.extend(utf8_percent_encode(version, SEGMENT));
    url.push('/');
    for (i, seg) in path.split('/').filter(|s| !s.is_empty()).enumerate() {
        if i > 0 {
            url.push('/');
        }
        url.extend(utf8_percent_encode(seg, SEGMENT));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(p: &str, v: &str, path: &str) -> Result<Route<'static>, RouteError> {
        Ok(Route::Asset {
            package: p.to_string().into(),
            version: v.to_string().into(),
            path: path.to_string().into(),
        })
    }

    #[test]
    fn plain_targets_are_routed_without_copies() {
        let target = "/assets/@s/app/1.0.0/js/main.js?v=1";
        let Ok(Route::Asset {
            package: Cow::Borrowed(package),
            version: Cow::Borrowed(version),
            path: Cow::Borrowed(path),
        }) = route("GET", target)
        else {
            panic!("a plain target borrows its names");
        };
        assert_eq!((package, version, path), ("@s/app", "1.0.0", "js/main.js"));
        assert!(matches!(
            route("GET", "/assets/app/1.0.0/a%20b.js"),
            Ok(Route::Asset {
                path: Cow::Owned(_),
                ..
            })
        ));
    }

    #[test]
    fn assets_and_scopes() {
        assert_eq!(
            route("GET", "/assets/app/1.0.0/js/main.js"),
            asset("app", "1.0.0", "js/main.js")
        );
        assert_eq!(
            route("HEAD", "/assets/@s/app/1.0.0/a.js"),
            asset("@s/app", "1.0.0", "a.js")
        );
        assert_eq!(
            route("GET", "/assets/JSONStream/1.3.5/index.js"),
            asset("JSONStream", "1.3.5", "index.js"),
            "npm's names from before lowercase"
        );
        assert_eq!(
            route("GET", "/assets/%40s%2Fapp/1.0.0/a.js"),
            asset("@s/app", "1.0.0", "a.js")
        );
        assert_eq!(
            route("GET", "/assets/app/^1.2/a.js?x=1"),
            asset("app", "^1.2", "a.js")
        );
        assert_eq!(
            route("GET", "/assets/@s/app@1.0.0/a/b/c.js"),
            asset("@s/app", "1.0.0", "a/b/c.js")
        );
        let version = |package: &'static str| Route::VersionRoot {
            package: package.into(),
            version: "1.0.0".into(),
        };
        assert_eq!(route("GET", "/assets/@s/app/1.0.0"), Ok(version("@s/app")));
        assert_eq!(route("GET", "/assets/@s/app@1.0.0"), Ok(version("@s/app")));
        assert_eq!(route("GET", "/assets/app@1.0.0"), Ok(version("app")));
        let listing = Route::Listing {
            package: "@s/app".into(),
            version: "1.0.0".into(),
        };
        assert_eq!(route("GET", "/assets/@s/app/1.0.0/"), Ok(listing));
    }

    #[test]
    fn names_decode_once() {
        assert_eq!(
            route("GET", "/assets/app/1.0.0/a%20b%23c%25d+e@f.js"),
            asset("app", "1.0.0", "a b#c%d+e@f.js")
        );
        assert_eq!(
            route("GET", "/assets/app/1.0.0/%252F"),
            asset("app", "1.0.0", "%2F")
        );
        assert_eq!(
            route("GET", "/assets/app/1.0.0/%E6%97%A5.txt"),
            asset("app", "1.0.0", "日.txt")
        );
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for target in [
            "/assets/app/1.0.0/../x",
            "/assets/app/1.0.0/%2e%2e/x",
            "/assets/app/1.0.0/a//b",
            "/assets/app/1.0.0/./a",
            "/assets/app/1.0.0/a%00b",
            "/assets/app/1.0.0/%FF",
            "/assets/@S/app/1.0.0/a",
            "/assets//1.0.0/a",
            "/assets/@s",
            "/assets/@s/",
            "/assets/app/1.0.0/a/..",
            "/assets/a%00pp/1.0.0/a",
            "/assets/app/./1.0.0/a",
        ] {
            assert!(
                matches!(route("GET", target), Err(RouteError::BadRequest(_))),
                "{target}"
            );
        }
    }

    #[test]
    fn unpkg_s_shape_names_the_same_files() {
        // unpkg's URLs, at the top and under /assets/, and jsDelivr's.
        for prefix in ["", "/assets", "/npm"] {
            assert_eq!(
                route(
                    "GET",
                    &format!("{prefix}/react@18.3.1/umd/react.production.min.js")
                ),
                asset("react", "18.3.1", "umd/react.production.min.js"),
                "{prefix}"
            );
            assert_eq!(
                route("GET", &format!("{prefix}/@s/app@^1.2/a.js?v=1")),
                asset("@s/app", "^1.2", "a.js")
            );
            assert_eq!(
                route("GET", &format!("{prefix}/react@latest")),
                Ok(Route::VersionRoot {
                    package: "react".into(),
                    version: "latest".into()
                })
            );
            assert_eq!(
                route("GET", &format!("{prefix}/react@18/")),
                Ok(Route::Listing {
                    package: "react".into(),
                    version: "18".into()
                })
            );
        }
        assert_eq!(
            route("GET", "/assets/react%4018.3.1/a%20b.js"),
            asset("react", "18.3.1", "a b.js")
        );
        // Without a version, only /assets/ routes a package.
        assert_eq!(route("GET", "/react/index.js"), Err(unknown_path()));
        assert_eq!(route("GET", "/@s/app/index.js"), Err(unknown_path()));
        // A name that is no name, or no version after `@`: the 400 names
        // the URL to use.
        let Err(RouteError::BadRequest(why)) = route("GET", "/assets/react@/umd/x.js") else {
            panic!("no version is a bad request");
        };
        assert_eq!(
            why,
            "`react@` names no version after its `@`: a file's URL is /assets/react/VERSION/umd/x.js"
        );
        let Err(RouteError::BadRequest(why)) = route("GET", "/assets/Re:act@1/x.js") else {
            panic!("a bad name is a bad request");
        };
        assert!(
            why.starts_with("invalid package name `Re:act`")
                && why.ends_with(
                    "like /assets/react/18.3.1/x.js, /react@18.3.1/x.js or /@scope/name@1.0.0/x.js"
                ),
            "{why}"
        );
    }

    #[test]
    fn listing_pages_come_from_the_query_string() {
        let page = |offset, limit| Page { offset, limit };
        assert_eq!(listing_page("/assets/a/1.0.0/"), Ok(Page::ALL));
        assert_eq!(
            listing_page("/assets/a/1.0.0/?limit=10&offset=20"),
            Ok(page(20, Some(10)))
        );
        assert_eq!(
            listing_page("/assets/a/1.0.0/?v=3&offset=5#top"),
            Ok(page(5, None))
        );
        assert_eq!(listing_page("/assets/a/1.0.0/?limit=0"), Ok(Page::ALL));
        assert_eq!(
            listing_page("/assets/a/1.0.0/?limit=-1"),
            Err("the query parameter `limit` must be a whole number, not `-1`".into())
        );
        assert!(listing_page("/assets/a/1.0.0/?offset").is_err());
    }

    #[test]
    fn the_import_map_is_asked_by_the_query() {
        assert_eq!(import_map_asked("/assets/a/1.0.0/"), None);
        assert_eq!(import_map_asked("/assets/a/1.0.0/?limit=3"), None);
        assert_eq!(import_map_asked("/assets/a/1.0.0/?importmap"), Some(false));
        assert_eq!(
            import_map_asked("/assets/a/1.0.0/?v=2&importmap=1&integrity"),
            Some(true)
        );
        assert_eq!(import_map_asked("/assets/a/1.0.0/#?importmap"), None);
        assert_eq!(import_map_asked("/assets/a/1.0.0/?importmaps"), None);
    }

    #[test]
    fn listings_and_redirect_shapes() {
        let listing = Route::Listing {
            package: "app".into(),
            version: "1.0.0".into(),
        };
        assert_eq!(route("GET", "/assets/app/1.0.0/"), Ok(listing));
        let root = Route::VersionRoot {
            package: "app".into(),
            version: "latest".into(),
        };
        assert_eq!(route("GET", "/assets/app/latest"), Ok(root));
        let package = Route::Package {
            package: "@s/app".into(),
        };
        assert_eq!(route("GET", "/assets/@s/app/"), Ok(package));
        let root = Route::PackageRoot {
            package: "@s/app".into(),
        };
        assert_eq!(route("GET", "/assets/@s/app"), Ok(root));
        assert_eq!(
            route("GET", "/assets/app/1.0.0/js/lib/"),
            Err(RouteError::NotFound(
                "js/lib/ is a folder; /assets/app/1.0.0/ lists every file of app@1.0.0".into()
            ))
        );
    }

    #[test]
    fn methods_lengths_and_unknown_paths() {
        assert_eq!(
            route("POST", "/assets/app/1.0.0/a"),
            Err(RouteError::MethodNotAllowed)
        );
        assert_eq!(
            route("DELETE", "/_stats"),
            Err(RouteError::MethodNotAllowed)
        );
        // CONNECT is refused whatever it names; `*` is for OPTIONS only.
        for target in ["cdn.example.com:443", "/nope", "/"] {
            assert_eq!(route("CONNECT", target), Err(RouteError::MethodNotAllowed));
        }
        for method in ["GET", "HEAD", "POST"] {
            assert!(
                matches!(route(method, "*"), Err(RouteError::BadRequest(_))),
                "{method} *"
            );
        }
        for unknown in ["/nope", "/", "/assetsx", "/assets//", "http://h:1"] {
            assert_eq!(route("GET", unknown), Err(unknown_path()), "{unknown}");
        }
        assert_eq!(route("GET", "/_stats"), Ok(Route::Stats));
        assert_eq!(route("GET", "http://h:1/_stats"), Ok(Route::Stats));
        assert_eq!(route("GET", "/healthz"), Ok(Route::Health));
        assert_eq!(route("GET", "/metrics"), Ok(Route::Metrics));
        assert_eq!(route("HEAD", "/metrics?x=1"), Ok(Route::Metrics));
        for any in ["*", "/nope", "/assets/app/1.0.0/a", "/assets/App/../x"] {
            assert_eq!(route("OPTIONS", any), Ok(Route::Options), "{any}");
        }
        assert_eq!(
            route("options", "/_stats"),
            Err(RouteError::MethodNotAllowed),
            "methods are case-sensitive (RFC 9110 9.1)"
        );
        assert_eq!(route("GET", "/assets/"), Ok(Route::Index));
        assert_eq!(route("HEAD", "/assets?x=1"), Ok(Route::Index));
        let long = format!("/assets/app/1.0.0/{}", "a".repeat(MAX_TARGET_LEN));
        assert_eq!(route("GET", &long), Err(RouteError::TargetTooLong));
    }

    #[test]
    fn urls_round_trip_through_route() {
        for name in ["a b#c%d+e@f.js", "日本/語.txt", "q?x=1", "[x]{y}"] {
            let url = asset_url("@s/app", "1.0.0", name);
            assert_eq!(route("GET", &url), asset("@s/app", "1.0.0", name), "{url}");
        }
        assert_eq!(asset_url("app", "1.0.0", ""), "/assets/app/1.0.0/");
        assert_eq!(package_url("@s/app"), "/assets/@s/app/");
        let package = Route::Package {
            package: "@s/app".into(),
        };
        assert_eq!(route("GET", &package_url("@s/app")), Ok(package));
    }

    #[test]
    fn redirects_keep_the_query() {
        let to = |target| redirect_url("@s/app", "1.2.0", "a b.js", target);
        assert_eq!(
            to("/assets/@s/app/^1/a%20b.js?v=3&x=%2F"),
            "/assets/@s/app/1.2.0/a%20b.js?v=3&x=%2F"
        );
        assert_eq!(
            to("/assets/@s/app/^1/a%20b.js"),
            "/assets/@s/app/1.2.0/a%20b.js"
        );
        assert_eq!(
            to("/assets/@s/app/^1/a%20b.js?"),
            "/assets/@s/app/1.2.0/a%20b.js"
        );
        // A fragment is no part of the query; a `?` inside the query is.
        assert_eq!(
            to("http://h/assets/@s/app/^1/a?x=?y#f?z"),
            "/assets/@s/app/1.2.0/a%20b.js?x=?y"
        );
        assert_eq!(to("/x#f?z"), "/assets/@s/app/1.2.0/a%20b.js");
        // What could not be a header value is encoded; `%` is kept as is.
        assert_eq!(
            redirect_url("app", "1.0.0", "", "/assets/app?q=a b\"<é>%41"),
            "/assets/app/1.0.0/?q=a%20b%22%3C%C3%A9%3E%41"
        );
    }
}

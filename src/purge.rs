//! Purging removed and replaced versions from the HTTP caches in front of
//! `ccc serve`.
//!
//! An exact version's files are served `immutable` with a year's max-age,
//! so a cache in front of ccc (Varnish, nginx `proxy_cache`, a CDN) keeps
//! them after `ccc rm` or `ccc gc` removed them from the catalog, or
//! `ccc publish --force` replaced them. Each `--purge URL` names one such
//! cache by the base URL ccc reaches it at. Once the change has committed
//! and `--purge-delay` has passed (the origins behind a cache must serve
//! the change before it is purged, or the cache's next miss fetches the
//! old file again: `ccc serve` notices within 250 ms, a replica within its
//! follower's bound), ccc sends `PURGE <path>` to every cache for every
//! file of every removed version (of a replaced one: its old files and its
//! new) and for the version's listing (`/assets/<package>/<version>/`),
//! each path percent-encoded as ccc's own redirects and listings encode
//! it. A cache that honours `PURGE` drops every variant it holds of that
//! URL (gzip, identity, ...); `examples/deploy/ccc.vcl` makes Varnish do
//! so for requests from 127.0.0.1 only.
//!
//! Redirects from `latest` and ranges are not purged: they carry a short
//! max-age (`public, max-age=60`) and a cache drops them by itself.
//!
//! # Failures
//!
//! The change is committed first, whatever the caches answer: the catalog
//! is the truth and never waits for a cache. A cache that answers 2xx has
//! dropped the URL, one that answers 404 never held it (nginx's purge
//! module says so); one that answers anything else (405 from a cache
//! that does not take purges from ccc's address, say) or cannot be
//! reached is reported by name with the URL that failed, and the command
//! exits 1; ccc stops sending to that cache at its first failure (a cache
//! that is down would fail every URL, each after a timeout), lists every
//! URL it did not purge there on stderr (`not purged: URL`), and goes on
//! with the others.

use crate::error::{Error, Result};
use crate::http::route::asset_url;
use crate::spool::{Spool, Spooled};
use std::io::Write;
use std::time::Duration;

/// How long one purge request may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A cache to purge: `http://host[:port][/prefix]`, without a trailing
/// slash, as `--purge` gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheUrl(String);

impl CacheUrl {
    /// Checks a `--purge` value: plain HTTP (caches take purges on an
    /// address of their own network), a host, an optional port and path
    /// prefix, no query or fragment.
    pub(crate) fn parse(s: &str) -> std::result::Result<CacheUrl, String> {
        let rest = s.strip_prefix("http://").ok_or_else(|| {
            if s.starts_with("https://") {
                "https is not supported: give the cache's plain-HTTP address, like http://127.0.0.1:6081".to_string()
            } else {
                "expected an http:// URL of the cache, like http://127.0.0.1:6081".to_string()
            }
        })?;
        let host = rest.split('/').next().unwrap_or("");
        if host.is_empty() || host.contains('@') {
            return Err("expected a host after http://, like http://127.0.0.1:6081".into());
        }
        if rest.contains(['?', '#']) {
            return Err("a query or fragment has no place in a cache's base URL".into());
        }
        if let Some((_, port)) = host.rsplit_once(':')
            && !host.ends_with(']')
            && port.parse::<u16>().is_err()
        {
            return Err(format!("`{port}` is not a port"));
        }
        Ok(CacheUrl(s.trim_end_matches('/').to_string()))
    }

    /// The URL that purges `path` (which starts with `/`) in this cache.
    fn url_of(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }
}

impl std::fmt::Display for CacheUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The URL paths to purge, spooled ([`crate::spool`]): gc may remove
/// versions with millions of files between them.
pub(crate) struct Paths(Spool);

impl Paths {
    pub(crate) fn new() -> Result<Paths> {
        Spool::new("the URLs to purge").map(Paths)
    }

    /// A version's listing, the one URL a cache may hold for it besides its
    /// files.
    pub(crate) fn add_listing(&mut self, package: &str, version: &str) -> Result<()> {
        self.0.push(&asset_url(package, version, ""))
    }

    /// One file of a version, percent-encoded as ccc links it (so the path
    /// holds no newline).
    pub(crate) fn add_file(&mut self, package: &str, version: &str, path: &str) -> Result<()> {
        self.0.push(&asset_url(package, version, path))
    }

    /// A version's listing and each of its files.
    pub(crate) fn add_version<'a>(
        &mut self,
        package: &str,
        version: &str,
        files: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        self.add_listing(package, version)?;
        files
            .into_iter()
            .try_for_each(|f| self.add_file(package, version, f))
    }

    /// The complete list, to purge.
    pub(crate) fn finish(self) -> Result<Spooled> {
        self.0.finish()
    }
}

/// What was purged, for `--json`.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Purged {
    pub caches: Vec<String>,
    /// URL paths purged in every cache.
    pub paths: u64,
}

/// Sends `PURGE` for every path to every cache; see the module doc for
/// what a failure does.
pub(crate) fn purge(caches: &[CacheUrl], paths: &Spooled) -> Result<Purged> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .allow_non_standard_methods(true)
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("ccc/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut failures = Vec::new();
    for cache in caches {
        let mut each = paths.lines()?;
        if let Some((done, url, why)) = purge_one(&agent, cache, &mut each)? {
            failures.push(format!(
                "{cache} after {done} of {} URLs: PURGE {url}: {why}",
                paths.len()
            ));
            // The list to purge by hand, the one that failed first: the
            // removed versions' files are no longer in the catalog to be
            // listed.
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "not purged: {url}");
            for path in each {
                let _ = writeln!(stderr, "not purged: {}", cache.url_of(&path?));
            }
        }
    }
    if failures.is_empty() {
        Ok(Purged {
            caches: caches.iter().map(|c| c.to_string()).collect(),
            paths: paths.len(),
        })
    } else {
        Err(Error::Purge(failures.join("; ")))
    }
}

/// Purges `paths` in one cache until the first failure; then how many
/// were done, the URL that failed and what went wrong, leaving the paths
/// after it in `paths`.
fn purge_one(
    agent: &ureq::Agent,
    cache: &CacheUrl,
    paths: &mut impl Iterator<Item = Result<String>>,
) -> Result<Option<(usize, String, String)>> {
    for (done, path) in paths.enumerate() {
        let url = cache.url_of(&path?);
        let request = match ureq::http::Request::builder()
            .method("PURGE")
            .uri(&url)
            .body(())
        {
            Ok(request) => request,
            Err(e) => return Ok(Some((done, url, e.to_string()))),
        };
        match agent.run(request) {
            Ok(response) if response.status().is_success() || response.status() == 404 => {}
            Ok(response) => {
                let status = response.status();
                let reason = status.canonical_reason().unwrap_or("");
                return Ok(Some((
                    done,
                    url,
                    format!("the cache answered {status} {reason}"),
                )));
            }
            Err(e) => return Ok(Some((done, url, e.to_string()))),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_urls_are_plain_http_bases() {
        let ok = |s: &str| CacheUrl::parse(s).map(|c| c.to_string());
        assert_eq!(
            ok("http://127.0.0.1:6081/"),
            Ok("http://127.0.0.1:6081".into())
        );
        assert_eq!(ok("http://edge/cdn"), Ok("http://edge/cdn".into()));
        assert_eq!(ok("http://[::1]:80"), Ok("http://[::1]:80".into()));
        for (bad, says) in [
            ("https://edge", "https is not supported"),
            ("edge:6081", "expected an http:// URL"),
            ("http://", "expected a host"),
            ("http://u@edge", "expected a host"),
            ("http://edge:port", "`port` is not a port"),
            ("http://edge/?x=1", "query or fragment"),
        ] {
            let err = CacheUrl::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn a_version_is_purged_by_its_listing_and_its_files_as_ccc_links_them() {
        let mut paths = Paths::new().unwrap();
        paths
            .add_version("@scope/app", "1.0.0-rc.1", ["index.html", "js/a b#1.js"])
            .unwrap();
        let paths = paths.finish().unwrap();
        let paths: Vec<String> = paths.lines().unwrap().map(|p| p.unwrap()).collect();
        assert_eq!(
            paths,
            [
                "/assets/@scope/app/1.0.0-rc.1/",
                "/assets/@scope/app/1.0.0-rc.1/index.html",
                "/assets/@scope/app/1.0.0-rc.1/js/a%20b%231.js",
            ]
        );
        let cache = CacheUrl::parse("http://edge:81/cdn/").unwrap();
        assert_eq!(
            cache.url_of("/assets/app/1.0.0/a.js"),
            "http://edge:81/cdn/assets/app/1.0.0/a.js"
        );
    }
}

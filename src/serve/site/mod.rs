//! A request at a site's root: which file of the site's version answers a
//! path, as an app host decides it, and the headers a site adds. The file
//! itself is then answered as any `/assets/` request for it is (cache,
//! negotiation, validators, ranges), so a site's hit costs what an asset
//! hit costs plus a host and a path looked up in memory ([`map`]).
//!
//! For a path on a site, in order:
//!
//! 1. `_redirects`: the first rule that matches. A rule without `!` does
//!    not apply where a file answers the path, as below (a file, a
//!    directory's index, an earlier version's fingerprinted file, a
//!    package the server serves). A 200 rule serves its target's file,
//!    a 404 rule serves it with 404, any other redirects.
//! 2. The file at the path; for a path ending in `/`, its `index.html`;
//!    for a path whose `PATH/index.html` exists, a 301 to `PATH/`; with
//!    clean URLs, `PATH.html`. The rules files themselves are not served.
//! 3. Skew protection: a fingerprinted path the version lacks, from the
//!    versions the site served last (`map::ServedSite::recent_with`), so a
//!    page open during a deploy still loads its own chunks.
//! 4. The server's own paths (`/assets/PKG/...`, `/PKG@VERSION/...`,
//!    `/npm/...`) for a package the catalog holds.
//! 5. With SPA fallback on, a path whose last segment has no extension:
//!    `index.html`, with 200.
//! 6. The build's `404.html`, with 404; else ccc's 404.
//!
//! Caching follows the files, not the version: a fingerprinted name
//! (`crate::site::fingerprint`) keeps the asset's `immutable`, and every
//! other file of a site is sent `no-cache` with its ETag, so a returning
//! browser gets a 304 for each file a release did not change. Then the
//! `_headers` rules for the request's path, which may set any of those
//! (`Cache-Control` too), and HSTS over HTTPS when the site has it.
//!
//! `/_stats`, `/metrics` and `/healthz` stay the server's on every host.

pub(crate) mod map;

use crate::error::{Error, Result};
use crate::http::route::{self, Route};
use crate::serve::alias;
use crate::serve::answer::asset;
use crate::serve::response::{Answer, Ask, REVALIDATE};
use crate::serve::store;
use crate::site::fingerprint::is_fingerprinted;
use crate::site::rules::is_rules_file;
use crate::spec::Selector;
use map::ServedSite;
use percent_encoding::percent_decode_str;
use std::borrow::Cow;

/// The answer of the site `ask`'s host names, if any site does and the
/// path is the site's; None sends the request to the server's own routes.
pub(in crate::serve) fn answer(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &alias::Policy,
) -> Option<Answer> {
    if ask.method != "GET" && ask.method != "HEAD" {
        return None;
    }
    let sites = match store.sites() {
        Ok(sites) => sites,
        Err(e) => return (!is_servers_own(route::target_path(ask.target))).then(|| failed(e)),
    };
    // A host no site names goes to the server's routes before its target
    // is read at all.
    let site = sites.for_host(ask.host)?;
    let raw = route::target_path(ask.target);
    if is_servers_own(raw) {
        return None;
    }
    let path = match decoded(raw) {
        Ok(path) => path,
        Err(why) => return Some(Answer::error(400, why)),
    };
    let on_site = OnSite {
        ask,
        store,
        policy,
        site,
    };
    match on_site.answer(&path) {
        Ok(Some(answer)) => Some(on_site.finish(answer, &path)),
        Ok(None) => None,
        Err(e) => Some(failed(e)),
    }
}

/// The paths every host answers as the server's: its counters and health.
fn is_servers_own(raw: &str) -> bool {
    matches!(raw, "/_stats" | "/metrics" | "/healthz")
}

fn failed(e: Error) -> Answer {
    match e {
        Error::Unavailable { .. } => Answer::unavailable(&e),
        e => Answer::internal(&e),
    }
}

/// What a path is to the server's own routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerPath {
    /// A version of a package, its files or the packages' index:
    /// `/assets/PKG/VERSION/...`, `/PKG@VERSION/...`, `/npm/...`, `/assets/`.
    Version,
    /// Only a package: `/assets/PKG`, `/assets/PKG/` (and the shape of a
    /// bundler's `/assets/index-B1x9aZq2.js`).
    Package,
    No,
}

fn server_path(path: &str) -> ServerPath {
    // Only these shapes route: a site's other paths are not parsed.
    let first = path
        .get(1..)
        .and_then(|p| p.split('/').next())
        .unwrap_or("");
    if first != "assets" && first != "npm" && !first.contains('@') {
        return ServerPath::No;
    }
    match route::route("GET", path) {
        Ok(
            Route::Asset { .. } | Route::Listing { .. } | Route::VersionRoot { .. } | Route::Index,
        ) => ServerPath::Version,
        Ok(Route::Package { .. } | Route::PackageRoot { .. }) => ServerPath::Package,
        _ => ServerPath::No,
    }
}

/// The query of a target, with its `?`, or "".
fn query(target: &str) -> &str {
    let before_fragment = target.split('#').next().unwrap_or("");
    match before_fragment.find('?') {
        Some(i) if i + 1 < before_fragment.len() => &before_fragment[i..],
        _ => "",
    }
}

/// The path percent-decoded once; it must be UTF-8, start with `/`, and
/// have no `.` or `..` segment and no NUL.
fn decoded(raw: &str) -> std::result::Result<Cow<'_, str>, &'static str> {
    if !raw.starts_with('/') {
        return Err("a site's path starts with /");
    }
    let path = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| "the path is not valid UTF-8 once percent-decoded")?;
    if path.contains('\0') || path.split('/').any(|s| s == "." || s == "..") {
        return Err("the path has a `.` or `..` segment or a NUL byte");
    }
    Ok(path)
}

/// Where a site path leads: borrowed from the site and the request, so
/// that deciding allocates nothing for a file the path names.
enum Found<'a> {
    /// A file of a version (the site's, or an earlier one's), answered
    /// with `status` (200, or the status of an error page).
    File {
        version: &'a str,
        path: Cow<'a, str>,
        status: u16,
    },
    Redirect {
        status: u16,
        location: String,
    },
    /// Nothing: ccc's own 404.
    Nothing,
}

/// A request being answered on a site.
struct OnSite<'a, 'r> {
    ask: &'a Ask<'r>,
    store: &'a store::Handle,
    policy: &'a alias::Policy,
    site: &'a ServedSite,
}

impl<'a> OnSite<'a, '_> {
    fn answer(&self, path: &str) -> Result<Option<Answer>> {
        let site = self.site;
        if let Some(problem) = &site.problem {
            crate::log::err(format_args!("error: {problem}"));
            return Ok(Some(Answer::error(500, problem)));
        }
        let Some(version) = site.version.as_deref() else {
            let why = format!(
                "the site {} serves {}@{}, which names no version yet",
                site.site.host_label(),
                site.site.package,
                site.site.tag
            );
            return Ok(Some(Answer::error(503, &why)));
        };
        let rel = path.strip_prefix('/').unwrap_or(path);
        let found = match is_rules_file(rel) {
            true => self.not_found(version, 404),
            false => match self.route(path, version)? {
                Some(found) => found,
                None => return Ok(None),
            },
        };
        match found {
            Found::Redirect { status, location } => {
                let mut answer = Answer::redirect(&location, REVALIDATE, None);
                answer.status = status;
                Ok(Some(answer))
            }
            Found::File {
                version,
                path,
                status,
            } => self.file(version, &path, status).map(Some),
            Found::Nothing => {
                let why = format!(
                    "no such file in {}@{version}, served at {}",
                    site.site.package,
                    site.site.host_label()
                );
                Ok(Some(Answer::error(404, &why)))
            }
        }
    }

    /// Where `path` leads (module doc's order); None: to the server.
    fn route<'p>(&self, path: &'p str, version: &'a str) -> Result<Option<Found<'p>>>
    where
        'a: 'p,
    {
        let site = self.site;
        if !site.redirects.is_empty() {
            let query = query(self.ask.target).trim_start_matches('?');
            let rule = site
                .redirects
                .find(path, query, |p| self.answers(p).unwrap_or(true));
            if let Some(rule) = rule {
                if !rule.rewrite {
                    return Ok(Some(Found::Redirect {
                        status: rule.status,
                        location: rule.to,
                    }));
                }
                // A rewrite serves the file at its target with its status
                // (200, or a custom 404 or 410 page).
                return Ok(Some(match self.file_at(&rule.to, version) {
                    Some(Found::File { path, .. }) => Found::File {
                        version,
                        path: Cow::Owned(path.into_owned()),
                        status: rule.status,
                    },
                    Some(Found::Redirect { status, location }) => {
                        Found::Redirect { status, location }
                    }
                    Some(Found::Nothing) | None => self.not_found(version, 404),
                }));
            }
        }
        let rel = path.strip_prefix('/').unwrap_or(path);
        if !rel.is_empty() && site.has(rel) {
            return Ok(Some(Found::File {
                version,
                path: Cow::Borrowed(rel),
                status: 200,
            }));
        }
        // A path that names a version of a package is the server's.
        let server = server_path(route::target_path(self.ask.target));
        if server == ServerPath::Version {
            return Ok(None);
        }
        if let Some(found) = self.file_at(path, version) {
            return Ok(Some(found));
        }
        if let Some(found) = self.skew(path) {
            return Ok(Some(found));
        }
        if server == ServerPath::Package && self.holds(route::target_path(self.ask.target))? {
            return Ok(None);
        }
        let last = rel.rsplit('/').next().unwrap_or("");
        if site.site.spa && !last.contains('.') && site.has("index.html") {
            return Ok(Some(Found::File {
                version,
                path: Cow::Borrowed("index.html"),
                status: 200,
            }));
        }
        Ok(Some(self.not_found(version, 404)))
    }

    /// Whether something answers `path` without a rule: a file, a
    /// directory's index, an earlier version's fingerprinted file, or the
    /// server (for a rule without `!`, which such a path shadows).
    fn answers(&self, path: &str) -> Result<bool> {
        let version = self.site.version.as_deref().unwrap_or_default();
        if self.file_at(path, version).is_some() || self.skew(path).is_some() {
            return Ok(true);
        }
        Ok(match server_path(path) {
            ServerPath::Version => true,
            ServerPath::Package => self.holds(path)?,
            ServerPath::No => false,
        })
    }

    /// The current version's file for `path`, or the redirect to its
    /// directory.
    fn file_at<'p>(&self, path: &'p str, version: &'a str) -> Option<Found<'p>>
    where
        'a: 'p,
    {
        let site = self.site;
        let rel = path.strip_prefix('/').unwrap_or(path);
        let file = |path: Cow<'p, str>| Found::File {
            version,
            path,
            status: 200,
        };
        if rel.is_empty() || rel.ends_with('/') {
            let dir = rel.strip_suffix('/').unwrap_or(rel);
            return site
                .has_index(dir)
                .then(|| file(Cow::Owned(format!("{rel}index.html"))));
        }
        if site.has(rel) {
            return Some(file(Cow::Borrowed(rel)));
        }
        if site.has_index(rel) {
            let location = format!(
                "{}/{}",
                route::target_path(self.ask.target),
                query(self.ask.target)
            );
            return Some(Found::Redirect {
                status: 301,
                location,
            });
        }
        (site.site.clean_urls && site.has_page(rel))
            .then(|| file(Cow::Owned(format!("{rel}.html"))))
    }

    /// A fingerprinted path from the newest recent version that has it.
    fn skew<'p>(&self, path: &'p str) -> Option<Found<'p>>
    where
        'a: 'p,
    {
        let rel = path.strip_prefix('/').unwrap_or(path);
        if !is_fingerprinted(rel) {
            return None;
        }
        let version = self.site.recent_with(rel)?;
        Some(Found::File {
            version,
            path: Cow::Borrowed(rel),
            status: 200,
        })
    }

    /// Whether the catalog holds the package a package-shaped path
    /// (`/assets/PKG`, `/assets/PKG/`) names.
    fn holds(&self, path: &str) -> Result<bool> {
        match route::route("GET", path) {
            Ok(Route::Package { package } | Route::PackageRoot { package }) => {
                Ok(self.store.resolve(&package, Selector::Latest)?.is_some())
            }
            _ => Ok(false),
        }
    }

    /// The build's 404 page with `status`, else ccc's 404.
    fn not_found(&self, version: &'a str, status: u16) -> Found<'a> {
        match self.site.has("404.html") {
            true => Found::File {
                version,
                path: Cow::Borrowed("404.html"),
                status,
            },
            false => Found::Nothing,
        }
    }

    /// The answer of a file, as /assets/ answers it; an error page (404,
    /// 410) without validators or ranges.
    fn file(&self, version: &str, path: &str, status: u16) -> Result<Answer> {
        let package = &self.site.site.package;
        if status == 200 {
            return asset(self.ask, self.store, self.policy, package, version, path);
        }
        let plain = Ask {
            if_none_match: None,
            if_modified_since: None,
            range: None,
            if_range: None,
            ..self.ask.clone()
        };
        let mut answer = asset(&plain, self.store, self.policy, package, version, path)?;
        if answer.status == 200 {
            answer.status = status;
        }
        Ok(answer)
    }

    /// The site's headers on an answer for `path`.
    fn finish(&self, mut answer: Answer, path: &str) -> Answer {
        let rel = path.strip_prefix('/').unwrap_or(path);
        let immutable = matches!(answer.status, 200 | 206 | 304)
            && self.site.is_hashed(rel)
            && answer.headers.get("cache-control") == Some(crate::serve::prepared::IMMUTABLE);
        if !immutable {
            answer.headers.revalidate();
        }
        // A file offered as a dictionary is offered for its URLs on the
        // site, where the browser will ask for its next release.
        if let Some(value) = self.site.dictionary(rel)
            && answer.headers.get("use-as-dictionary").is_some()
        {
            answer.headers.use_as_dictionary(value.clone());
        }
        for (name, value) in self.site.headers.for_path(path) {
            // Each cookie is a line of its own; every other header the
            // rules name replaces ccc's.
            match name.as_str() {
                "set-cookie" => answer.headers.push(&name, &value),
                _ => answer.headers.set(&name, &value),
            }
        }
        if self.ask.tls
            && let Some(age) = self.site.site.hsts_max_age
            && answer.headers.get("strict-transport-security").is_none()
        {
            answer
                .headers
                .set("Strict-Transport-Security", &format!("max-age={age}"));
        }
        answer
    }
}

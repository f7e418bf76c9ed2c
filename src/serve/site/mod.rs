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
//!    versions the site served last ([`map::ServedSite::recent`]), so a
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

pub mod map;

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
    let raw = raw_path(ask.target);
    if matches!(raw, "/_stats" | "/metrics" | "/healthz") {
        return None;
    }
    let sites = match store.sites() {
        Ok(sites) => sites,
        Err(e) => return Some(failed(e)),
    };
    let site = sites.for_host(ask.host)?;
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

fn failed(e: Error) -> Answer {
    match e {
        Error::Unavailable { .. } => Answer::unavailable(&e),
        e => Answer::internal(&e),
    }
}

/// The path of a target, without its query and the scheme and authority
/// of an absolute form.
fn raw_path(target: &str) -> &str {
    let origin_form = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    match origin_form.find(['?', '#']) {
        Some(end) => &origin_form[..end],
        None => origin_form,
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

/// Where a site path leads.
enum Found {
    /// A file of a version (the site's, or an earlier one's), answered
    /// with `status` (200, or 404 for the build's 404 page).
    File {
        version: String,
        path: String,
        status: u16,
    },
    Redirect {
        status: u16,
        location: String,
    },
}

/// A request being answered on a site.
struct OnSite<'a, 'r> {
    ask: &'a Ask<'r>,
    store: &'a store::Handle,
    policy: &'a alias::Policy,
    site: &'a ServedSite,
}

impl OnSite<'_, '_> {
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
        if is_rules_file(rel) {
            return Ok(Some(self.file(version, &self.not_found_page(), 404)?));
        }
        let found = match self.route(path, version)? {
            Some(found) => found,
            None => return Ok(None),
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
            } => self.file(&version, &path, status).map(Some),
        }
    }

    /// Where `path` leads (module doc's order); None: to the server.
    fn route(&self, path: &str, version: &str) -> Result<Option<Found>> {
        let site = self.site;
        let query = query(self.ask.target);
        if !site.redirects.is_empty()
            && let Some(rule) = site
                .redirects
                .find(path, query.trim_start_matches('?'), |p| {
                    self.answers(p).unwrap_or(true)
                })
        {
            if !rule.rewrite {
                return Ok(Some(Found::Redirect {
                    status: rule.status,
                    location: rule.to,
                }));
            }
            // A rewrite serves the file at its target with its status (200,
            // or a custom 404 or 410 page).
            return Ok(Some(match self.file_at(&rule.to, version) {
                Some(Found::File { version, path, .. }) => Found::File {
                    version,
                    path,
                    status: rule.status,
                },
                Some(redirect) => redirect,
                None => self.not_found(version),
            }));
        }
        if let Some(found) = self.file_at(path, version) {
            return Ok(Some(found));
        }
        if let Some(found) = self.skew(path) {
            return Ok(Some(found));
        }
        if self.server_serves()? {
            return Ok(None);
        }
        let last = path.rsplit('/').next().unwrap_or("");
        if site.site.spa && !last.contains('.') && site.has("index.html") {
            return Ok(Some(Found::File {
                version: version.to_string(),
                path: "index.html".into(),
                status: 200,
            }));
        }
        Ok(Some(self.not_found(version)))
    }

    /// Whether something answers `path` without a rule: a file, a
    /// directory's index, an earlier version's fingerprinted file, or the
    /// server (for a rule without `!`, which such a path shadows).
    fn answers(&self, path: &str) -> Result<bool> {
        let version = self.site.version.as_deref().unwrap_or_default();
        Ok(self.file_at(path, version).is_some()
            || self.skew(path).is_some()
            || self.server_serves_path(path)?)
    }

    /// The current version's file for `path`, or the redirect to its
    /// directory.
    fn file_at(&self, path: &str, version: &str) -> Option<Found> {
        let site = self.site;
        let rel = path.strip_prefix('/').unwrap_or(path);
        let file = |path: String| Found::File {
            version: version.to_string(),
            path,
            status: 200,
        };
        if rel.is_empty() || rel.ends_with('/') {
            let index = format!("{rel}index.html");
            return site.has(&index).then(|| file(index));
        }
        if site.has(rel) {
            return Some(file(rel.to_string()));
        }
        if site.has(&format!("{rel}/index.html")) {
            let location = format!("{}/{}", raw_path(self.ask.target), query(self.ask.target));
            return Some(Found::Redirect {
                status: 301,
                location,
            });
        }
        let html = format!("{rel}.html");
        (site.site.clean_urls && site.has(&html)).then(|| file(html))
    }

    /// A fingerprinted path from the newest recent version that has it.
    fn skew(&self, path: &str) -> Option<Found> {
        let rel = path.strip_prefix('/').unwrap_or(path);
        if !is_fingerprinted(rel) {
            return None;
        }
        let version = self.site.recent_with(rel)?;
        Some(Found::File {
            version: version.to_string(),
            path: rel.to_string(),
            status: 200,
        })
    }

    /// Whether the request's path is one of the server's own, for a
    /// package the catalog holds.
    fn server_serves(&self) -> Result<bool> {
        self.server_serves_path(raw_path(self.ask.target))
    }

    fn server_serves_path(&self, path: &str) -> Result<bool> {
        let package = match route::route("GET", path) {
            Ok(
                Route::Asset { package, .. }
                | Route::Listing { package, .. }
                | Route::VersionRoot { package, .. }
                | Route::Package { package }
                | Route::PackageRoot { package },
            ) => package,
            Ok(Route::Index) => return Ok(true),
            _ => return Ok(false),
        };
        Ok(self.store.resolve(&package, Selector::Latest)?.is_some())
    }

    /// The build's 404 page, else ccc's 404.
    fn not_found(&self, version: &str) -> Found {
        Found::File {
            version: version.to_string(),
            path: self.not_found_page(),
            status: 404,
        }
    }

    /// `404.html` when the build has one; "" for ccc's own 404.
    fn not_found_page(&self) -> String {
        match self.site.has("404.html") {
            true => "404.html".into(),
            false => String::new(),
        }
    }

    /// The answer of a file, as /assets/ answers it; an error page (404,
    /// 410) without validators or ranges.
    fn file(&self, version: &str, path: &str, status: u16) -> Result<Answer> {
        let package = &self.site.site.package;
        if path.is_empty() {
            let why = format!(
                "no such file in {package}@{version}, served at {}",
                self.site.site.host_label()
            );
            return Ok(Answer::error(404, &why));
        }
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
            && is_fingerprinted(rel)
            && answer.headers.get("cache-control") == Some(crate::serve::prepared::IMMUTABLE);
        if !immutable {
            answer.headers.revalidate();
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

//! Answers for the names that move: `latest`, other dist-tags and ranges
//! (a 302 to the exact version they name now), a version's bare URL (a 302
//! to its entry file), and a package's versions and tags
//! (`GET /assets/PKG/`).
//!
//! # Aliases are never stale
//!
//! Every redirect from an alias carries an ETag naming what it resolved
//! to, `"alias/1.4.0/17"`: the version and its row id, which a forced
//! republish renews. Its `Cache-Control` is `public, max-age=N`
//! (`--alias-max-age`, 60 s by default). A cache revalidating with
//! `If-None-Match` gets a 304, one resolution and no body, for as long as
//! the alias names that version, and the new redirect on the first
//! revalidation after a publish, `rm` or tag change moves it: the server
//! reads the catalog the publisher writes, so there is nothing to purge.
//! The package document (`/assets/PKG/`) changes the same way and is
//! validated by a digest of its body.
//!
//! A version's own bare URL (`/assets/PKG/1.4.0`) leads to its entry file
//! ([`crate::catalog::manifest::entry_file`]), or to its file list when no
//! rule finds one; that never changes, so it is cached like the files.

use super::missing;
use super::prepared::IMMUTABLE;
use super::response::{Answer, Ask};
use super::store::{self, Resolved};
use crate::catalog::query::Page;
use crate::error::Result;
use crate::http::conditional::{alias_etag, not_modified};
use crate::http::route;
use crate::spec::Selector;
use sha2::Digest;
use std::time::Duration;

/// Default `--alias-max-age`.
pub(crate) const DEFAULT_ALIAS_MAX_AGE: Duration = Duration::from_secs(60);

/// How aliases are cached, from the server's flags.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    cache_control: String,
    not_found: String,
}

impl Policy {
    /// Caches may reuse an alias's redirect for `max_age` (whole seconds)
    /// before revalidating it.
    pub(crate) fn new(max_age: Duration) -> Policy {
        Policy {
            cache_control: format!("public, max-age={}", max_age.as_secs()),
            not_found: not_found_cache_control(DEFAULT_NOT_FOUND_MAX_AGE.as_secs()),
        }
    }

    /// Caches may keep a 404 for a missing package, version or file for
    /// `max_age` (whole seconds; 0: not at all).
    pub(crate) fn with_not_found_max_age(mut self, max_age: Duration) -> Policy {
        self.not_found = not_found_cache_control(max_age.as_secs());
        self
    }

    /// `Cache-Control` of a 404 for a missing package, version or file.
    pub(crate) fn not_found_cache_control(&self) -> &str {
        &self.not_found
    }

    /// `Cache-Control` of what moves with a publish, `rm` or tag change:
    /// aliases, and the browse pages.
    pub(crate) fn cache_control(&self) -> &str {
        &self.cache_control
    }
}

/// Default `--not-found-max-age`: a few seconds, enough for a cache in
/// front to absorb a scan of missing paths, short enough that a version
/// published after a 404 is seen almost at once.
pub(crate) const DEFAULT_NOT_FOUND_MAX_AGE: Duration = Duration::from_secs(5);

fn not_found_cache_control(secs: u64) -> String {
    match secs {
        0 => "no-store".to_string(),
        n => format!("public, max-age={n}"),
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::new(DEFAULT_ALIAS_MAX_AGE)
    }
}

/// A 302 from an alias to `location`, or a 304 when the request's
/// `If-None-Match` already names what the alias resolves to.
fn moved(ask: &Ask<'_>, policy: &Policy, to: &Resolved, location: &str) -> Answer {
    let etag = alias_etag(&to.version, to.id);
    if ask.if_none_match.is_some() && not_modified(ask.if_none_match, None, &[&etag], 0) {
        return Answer::not_modified(&policy.cache_control, &etag);
    }
    Answer::redirect(location, &policy.cache_control, Some(&etag))
}

/// `/assets/PKG/ALIAS/PATH` (PATH empty for a file list): a 302 to the
/// exact version the alias names (query string kept), or a 404.
pub(super) fn redirect(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &Policy,
    package: &str,
    alias: &str,
    path: &str,
) -> Result<Answer> {
    let Ok(selector) = Selector::parse(package, alias) else {
        return Ok(Answer::error(
            400,
            "the version is not a version, a semver range or a dist-tag name",
        ));
    };
    match store.resolve(package, selector.clone())? {
        Some(to) => Ok(redirect_to(ask, policy, package, &to, path)),
        None => missing::missing(
            store,
            policy.not_found_cache_control(),
            package,
            &selector,
            path,
        ),
    }
}

/// The redirect to `PATH` of the exact version `to`, which an alias (or
/// a version written otherwise) resolved to.
pub(super) fn redirect_to(
    ask: &Ask<'_>,
    policy: &Policy,
    package: &str,
    to: &Resolved,
    path: &str,
) -> Answer {
    let location = route::redirect_url(package, &to.version, path, ask.target);
    moved(ask, policy, to, &location)
}

/// `/assets/PKG/VERSION` and `/assets/PKG` (VERSION `latest`): a 302 to
/// the version's entry file, or to its file list when it has none.
pub(super) fn version_root(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &Policy,
    package: &str,
    version: &str,
) -> Result<Answer> {
    let Ok(selector) = Selector::parse(package, version) else {
        return Ok(Answer::error(
            400,
            "the version is not a version, a semver range or a dist-tag name",
        ));
    };
    let exact = matches!(selector, Selector::Exact(_));
    let found = match store.resolve(package, selector.clone())? {
        // The version may be removed between the two questions.
        Some(to) => store
            .entry(package.to_string(), to.version.clone())?
            .map(|entry| (to, entry)),
        None => None,
    };
    let Some((to, entry)) = found else {
        return missing::missing(
            store,
            policy.not_found_cache_control(),
            package,
            &selector,
            "",
        );
    };
    let location = route::redirect_url(
        package,
        &to.version,
        entry.as_deref().unwrap_or(""),
        ask.target,
    );
    Ok(if exact {
        Answer::redirect(&location, IMMUTABLE, None)
    } else {
        moved(ask, policy, &to, &location)
    })
}

/// `GET /assets/PKG/`: the package's dist-tags and the versions of `page`
/// as JSON, with an ETag from its bytes, or a 404.
pub(super) fn package(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &Policy,
    package: String,
    page: Page,
) -> Result<Answer> {
    let Some(versions) = store.package(package.clone(), page)? else {
        return missing::missing(
            store,
            policy.not_found_cache_control(),
            &package,
            &Selector::Latest,
            "",
        );
    };
    let body = serde_json::to_vec(&versions).unwrap_or_default();
    let digest = sha2::Sha256::digest(&body);
    let etag = format!("\"{}\"", hex::encode(&digest[..16]));
    if ask.if_none_match.is_some() && not_modified(ask.if_none_match, None, &[&etag], 0) {
        return Ok(Answer::not_modified(&policy.cache_control, &etag));
    }
    let mut answer = Answer::json_bytes(200, &policy.cache_control, body);
    answer.headers.push("ETag", &etag);
    Ok(answer)
}

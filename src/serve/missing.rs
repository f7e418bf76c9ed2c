//! The 404s that name what is missing: the package, the version or the
//! file, with a did-you-mean for a file whose name differs only in case.
//! The store is asked what it holds only here, off the hot path; the
//! answer is cacheable for `--not-found-max-age`, so that a scan of
//! missing paths is answered by a cache in front, not by the catalog.

use crate::error::{Error, Result};
use crate::http::negotiate::Format;
use crate::http::not_found;
use crate::serve::browse;
use crate::serve::response::{Answer, Ask};
use crate::serve::store::{self};
use crate::spec::Selector;

/// The 404 of a listing: JSON, or a page for a browser.
pub(super) fn listing(
    ask: &Ask<'_>,
    format: Format,
    store: &store::Handle,
    not_found_cache_control: &str,
    package: &str,
    asked: &Selector,
) -> Result<Answer> {
    let missing = diagnose(store, package, asked, "")?;
    let cache_control = not_found_cache_control;
    Ok(match format {
        Format::Json => Answer::json(404, cache_control, &not_found::Body::new(&missing)),
        Format::Html => Answer::html(404, ask, cache_control, browse::not_found(&missing)),
    }
    .varies_by_accept())
}

/// The 404 after a miss, naming the missing package, version or file (the
/// store is asked what it holds only now, off the hot path), cacheable for
/// `--not-found-max-age`, so that a scan of missing paths is answered by a
/// cache in front, not by the catalog.
pub(super) fn missing(
    store: &store::Handle,
    not_found_cache_control: &str,
    package: &str,
    asked: &Selector,
    path: &str,
) -> Result<Answer> {
    let mut missing = diagnose(store, package, asked, path)?;
    if let not_found::Missing::File {
        version,
        did_you_mean,
        ..
    } = &mut missing
    {
        *did_you_mean =
            store.case_variant(package.to_string(), version.clone(), path.to_string())?;
    }
    let body = not_found::Body::new(&missing);
    Ok(Answer::json(404, not_found_cache_control, &body))
}

fn diagnose(
    store: &store::Handle,
    package: &str,
    asked: &Selector,
    path: &str,
) -> Result<not_found::Missing> {
    not_found::diagnose(package, asked, path, |selector| {
        let picked = store.resolve(package, selector.clone())?;
        Ok::<bool, Error>(picked.is_some())
    })
}

//! `GET /assets/PKG/VERSION/?importmap`: the version's import map, the
//! document `ccc importmap PKG@VERSION` prints (`&integrity`: with
//! `--integrity`), built by the same [`crate::importmap::generate`] with
//! root-relative URLs, so a page served by this server loads it as it is.
//!
//! # Caching
//!
//! Unlike the version's files, its map is not immutable: each dependency
//! is the newest version in the catalog that the version's range allows,
//! so publishing `rxjs@7.8.2` changes the map of every version that asks
//! for `^7.8.1`. It is therefore cached like the names that move
//! (`--alias-max-age`, see [`super::alias`]), with an ETag from a digest
//! of its bytes: a cache revalidating gets a 304 until a publish, `rm` or
//! tag change alters the map.

use super::alias::Policy;
use super::missing;
use super::response::{Answer, Ask};
use super::store;
use crate::error::{Error, Result};
use crate::http::conditional::not_modified;
use crate::http::negotiate::Format;
use crate::importmap::CONTENT_TYPE;
use crate::spec::Selector;
use sha2::Digest;

/// The import map of `package@exact`; a 404 naming the reason when there
/// is no such version or it has no `package.json`.
pub(super) fn answer(
    ask: &Ask<'_>,
    store: &store::Handle,
    policy: &Policy,
    package: &str,
    exact: &semver::Version,
    integrity: bool,
) -> Result<Answer> {
    let map = match store.import_map(package.to_string(), exact.to_string(), integrity) {
        Ok(Some(map)) => map,
        Ok(None) => {
            let asked = Selector::Exact(exact.clone());
            return missing::listing(
                ask,
                Format::Json,
                store,
                policy.not_found_cache_control(),
                package,
                &asked,
            );
        }
        Err(e @ Error::NoManifest { .. }) => {
            return Ok(Answer::error(404, &e.to_string()));
        }
        Err(e) => return Err(e),
    };
    // Byte for byte what `ccc importmap` prints.
    let mut body = serde_json::to_vec_pretty(&map).unwrap_or_default();
    body.push(b'\n');
    let digest = sha2::Sha256::digest(&body);
    let etag = format!("\"importmap/{}\"", hex::encode(&digest[..16]));
    if ask.if_none_match.is_some() && not_modified(ask.if_none_match, None, &[&etag], 0) {
        return Ok(Answer::not_modified(policy.cache_control(), &etag));
    }
    let mut answer = Answer::typed(200, CONTENT_TYPE, policy.cache_control(), body);
    answer.headers.push("ETag", &etag);
    Ok(answer)
}

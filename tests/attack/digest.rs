//! Is this body the asset's? The sha256 of a 200's body (gunzipped when it
//! came with `Content-Encoding: gzip`) must equal the digest ccc's ETag
//! names (`"SHA"` for identity, `"SHA-gz"` for gzip) and a digest the
//! catalog records for that file (`ccc inspect --json`). Any mismatch is a
//! wrong byte served.

use super::probe::{Check, Verdict};
use super::wire::Response;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::time::Instant;

/// The sha256 (hex) of the asset a 200 carries, after checking that the
/// body, its encoding and its ETag agree; Err describes the disagreement.
pub fn asset_digest(response: &Response) -> Result<String, String> {
    let gzip = response
        .header("content-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
    let decoded;
    let raw: &[u8] = if gzip {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&response.body[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("the gzip body does not decode: {e}"))?;
        decoded = out;
        &decoded
    } else {
        &response.body
    };
    let digest = hex::encode(Sha256::digest(raw));
    let Some(etag) = response.header("etag") else {
        return Err("no ETag".into());
    };
    let tagged = etag.trim_matches('"');
    let (tagged, tagged_gzip) = match tagged.strip_suffix("-gz") {
        Some(sha) => (sha, true),
        None => (tagged, false),
    };
    if tagged_gzip != gzip {
        return Err(format!(
            "ETag {etag} does not match Content-Encoding {}",
            if gzip { "gzip" } else { "identity" }
        ));
    }
    if tagged != digest {
        return Err(format!(
            "the body's sha256 is {digest}, its ETag says {etag} ({} bytes{})",
            raw.len(),
            if gzip { " after gunzip" } else { "" }
        ));
    }
    Ok(digest)
}

/// A catalog that does not change: every target has one digest, and only
/// a 200 carrying it is right.
pub struct Digests(pub HashMap<String, String>);

impl Check for Digests {
    fn check(&self, target: &str, response: &Response, _: Instant, _: Instant) -> Verdict {
        if response.status != 200 {
            return Verdict::Unexpected(format!("status {}", response.status));
        }
        let Some(want) = self.0.get(target) else {
            return Verdict::Unexpected("a target the catalog does not list".into());
        };
        match asset_digest(response) {
            Ok(got) if &got == want => Verdict::Fine,
            Ok(got) => Verdict::WrongBytes(format!("sha256 {got}, the catalog says {want}")),
            Err(why) => Verdict::WrongBytes(why),
        }
    }
}

//! Conditional requests (RFC 9110 13): ETags, `If-None-Match` and
//! `If-Modified-Since`, for safe methods (GET, HEAD), where the only
//! possible outcomes are "send it" or 304 Not Modified.

use crate::encoding::Encoding;
use std::time::{Duration, UNIX_EPOCH};

/// The strong ETag of a representation (RFC 9110 8.8.3): the content's
/// sha256, with `-gz` for the gzip-coded bytes and `-br` for brotli.
pub fn etag(sha256_hex: &str, encoding: Encoding) -> String {
    let mut tag = String::with_capacity(etag_len(sha256_hex, encoding));
    push_etag(&mut tag, sha256_hex, encoding);
    tag
}

/// Appends [`etag`] to `out`, for a caller that keeps several in one text.
pub fn push_etag(out: &mut String, sha256_hex: &str, encoding: Encoding) {
    out.push('"');
    out.push_str(sha256_hex);
    out.push_str(encoding.etag_suffix());
    out.push('"');
}

/// The length of [`etag`], to size a text before it is written.
pub fn etag_len(sha256_hex: &str, encoding: Encoding) -> usize {
    sha256_hex.len() + encoding.etag_suffix().len() + 2
}

/// The strong ETag of a redirect from an alias (`latest`, a dist-tag, a
/// range): what it resolved to, the version and its row id (new on a
/// forced republish), so it changes exactly when the redirect does.
pub fn alias_etag(version: &str, version_id: i64) -> String {
    format!("\"alias/{version}/{version_id}\"")
}

/// `Last-Modified` for a Unix time in seconds (IMF-fixdate).
pub fn http_date(unix_secs: i64) -> String {
    let mut text = String::with_capacity(HTTP_DATE_LEN);
    push_http_date(&mut text, unix_secs);
    text
}

/// The length of an IMF-fixdate (`Tue, 14 Nov 2023 22:13:20 GMT`).
pub const HTTP_DATE_LEN: usize = 29;

/// Appends [`http_date`] to `out`.
pub fn push_http_date(out: &mut String, unix_secs: i64) {
    use std::fmt::Write;
    let date = httpdate::HttpDate::from(UNIX_EPOCH + Duration::from_secs(unix_secs.max(0) as u64));
    // Writing to a String cannot fail.
    let _ = write!(out, "{date}");
}

/// Whether a GET/HEAD may answer 304, following RFC 9110 13.2.2: when
/// `If-None-Match` is present it decides alone (step 3; weak comparison,
/// any of `tags` matching); otherwise `If-Modified-Since` does (step 4): not
/// modified when the resource's `last_modified` is not later than the date.
/// An unparsable date is ignored, as the RFC requires.
pub fn not_modified(
    if_none_match: Option<&str>,
    if_modified_since: Option<&str>,
    tags: &[impl AsRef<str>],
    last_modified: i64,
) -> bool {
    if let Some(inm) = if_none_match {
        return none_match_hits(inm, tags);
    }
    if let Some(ims) = if_modified_since
        && let Ok(since) = httpdate::parse_http_date(ims.trim())
    {
        let modified = UNIX_EPOCH + Duration::from_secs(last_modified.max(0) as u64);
        return modified <= since;
    }
    false
}

/// `If-None-Match: *` or a list of entity tags, compared weakly (a `W/`
/// prefix is ignored on both sides).
fn none_match_hits(header: &str, tags: &[impl AsRef<str>]) -> bool {
    let header = header.trim();
    if header == "*" {
        return true;
    }
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_string();
    header
        .split(',')
        .map(strip)
        .any(|candidate| tags.iter().any(|t| strip(t.as_ref()) == candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "ab12";

    fn tags() -> [String; 2] {
        [etag(SHA, Encoding::Identity), etag(SHA, Encoding::Gzip)]
    }

    fn check(inm: Option<&str>, ims: Option<&str>, last_modified: i64) -> bool {
        let t = tags();
        not_modified(inm, ims, &[&t[0], &t[1]], last_modified)
    }

    #[test]
    fn etags_differ_per_representation() {
        assert_eq!(etag(SHA, Encoding::Identity), "\"ab12\"");
        assert_eq!(etag(SHA, Encoding::Gzip), "\"ab12-gz\"");
        assert_eq!(etag(SHA, Encoding::Brotli), "\"ab12-br\"");
    }

    #[test]
    fn alias_tags_name_the_version_and_its_row() {
        assert_eq!(alias_etag("1.4.0", 17), "\"alias/1.4.0/17\"");
        assert_ne!(alias_etag("1.4.0", 17), alias_etag("1.4.0", 18));
        let tag = alias_etag("2.0.0-rc.1+b.7", 3);
        assert!(not_modified(Some(&tag), None, &[&tag], 0));
    }

    #[test]
    fn if_none_match() {
        assert!(check(Some("\"ab12\""), None, 0));
        assert!(check(Some("\"ab12-gz\""), None, 0));
        assert!(check(Some("W/\"ab12\""), None, 0));
        assert!(check(Some("\"zz\", \"ab12\""), None, 0));
        assert!(check(Some("*"), None, 0));
        assert!(!check(Some("\"zz\""), None, 0));
        assert!(!check(Some("ab12"), None, 0));
    }

    #[test]
    fn if_none_match_overrides_if_modified_since() {
        let future = "Sun, 06 Nov 2094 08:49:37 GMT";
        assert!(!check(Some("\"zz\""), Some(future), 0));
    }

    #[test]
    fn if_modified_since() {
        let published = 1_700_000_000; // Tue, 14 Nov 2023 22:13:20 GMT
        assert_eq!(http_date(published), "Tue, 14 Nov 2023 22:13:20 GMT");
        assert!(check(
            None,
            Some("Tue, 14 Nov 2023 22:13:20 GMT"),
            published
        ));
        assert!(check(
            None,
            Some("Wed, 15 Nov 2023 00:00:00 GMT"),
            published
        ));
        assert!(!check(
            None,
            Some("Tue, 14 Nov 2023 22:13:19 GMT"),
            published
        ));
        assert!(!check(None, Some("yesterday"), published));
        assert!(!check(None, None, published));
    }
}

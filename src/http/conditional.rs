//! Conditional requests (RFC 9110 13): ETags, `If-None-Match` and
//! `If-Modified-Since`, for safe methods (GET, HEAD), where the only
//! possible outcomes are "send it" or 304 Not Modified.

use crate::encoding::Encoding;
use std::time::{Duration, UNIX_EPOCH};

/// [`push_etag`]'s ETag as a text of its own.
#[cfg(test)]
pub(crate) fn etag(sha256_hex: &str, encoding: Encoding) -> String {
    let mut tag = String::with_capacity(etag_len(sha256_hex, encoding));
    push_etag(&mut tag, sha256_hex, encoding);
    tag
}

/// Appends the strong ETag of a representation (RFC 9110 8.8.3) to `out`:
/// the content's sha256, with `-gz` for the gzip-coded bytes and `-br` for
/// brotli. A caller keeps several in one text.
pub(crate) fn push_etag(out: &mut String, sha256_hex: &str, encoding: Encoding) {
    out.push('"');
    out.push_str(sha256_hex);
    out.push_str(encoding.etag_suffix());
    out.push('"');
}

/// The length of [`push_etag`]'s ETag, to size a text before it is written.
pub(crate) fn etag_len(sha256_hex: &str, encoding: Encoding) -> usize {
    sha256_hex.len() + encoding.etag_suffix().len() + 2
}

/// The strong ETag of a redirect from an alias (`latest`, a dist-tag, a
/// range): what it resolved to, the version and its row id (new on a
/// forced republish), so it changes exactly when the redirect does.
pub(crate) fn alias_etag(version: &str, version_id: i64) -> String {
    format!("\"alias/{version}/{version_id}\"")
}

/// [`push_http_date`]'s date as a text of its own.
#[cfg(test)]
pub(crate) fn http_date(unix_secs: i64) -> String {
    let mut text = String::with_capacity(HTTP_DATE_LEN);
    push_http_date(&mut text, unix_secs);
    text
}

/// The length of an IMF-fixdate (`Tue, 14 Nov 2023 22:13:20 GMT`).
pub(crate) const HTTP_DATE_LEN: usize = 29;

/// Appends `Last-Modified` for a Unix time in seconds (IMF-fixdate) to
/// `out`: the calendar worked out from the day count (H. Hinnant's
/// `civil_from_days`) and written in place, without the formatting
/// machinery. A time before 1970 is written as the epoch, one after 9999
/// as its last second: IMF-fixdate has four digits of year.
pub(crate) fn push_http_date(out: &mut String, unix_secs: i64) {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    // 10000-01-01T00:00:00Z.
    const END: i64 = 253_402_300_800;
    let secs = unix_secs.clamp(0, END - 1);
    let (days, second) = (secs / 86_400, secs % 86_400);
    // Days since 0000-03-01, in 400-year eras of 146,097 days.
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let of_era = shifted % 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March, so that February's length comes last.
    let from_march = (5 * of_year + 2) / 153;
    let day = of_year - (153 * from_march + 2) / 5 + 1;
    let month = if from_march < 10 {
        from_march + 2
    } else {
        from_march - 10
    };
    let year = era * 400 + year_of_era + i64::from(month < 2);
    let mut text = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    let two = |text: &mut [u8; HTTP_DATE_LEN], at: usize, n: i64| {
        text[at] = b'0' + (n / 10) as u8;
        text[at + 1] = b'0' + (n % 10) as u8;
    };
    text[..3].copy_from_slice(DAYS[(days % 7) as usize]);
    two(&mut text, 5, day);
    text[8..11].copy_from_slice(MONTHS[month as usize]);
    two(&mut text, 12, year / 100);
    two(&mut text, 14, year % 100);
    two(&mut text, 17, second / 3600);
    two(&mut text, 20, second / 60 % 60);
    two(&mut text, 23, second % 60);
    // Cannot fail: ASCII.
    out.push_str(std::str::from_utf8(&text).unwrap_or_default());
}

/// Whether a GET/HEAD may answer 304, following RFC 9110 13.2.2: when
/// `If-None-Match` is present it decides alone (step 3; weak comparison,
/// any of `tags` matching); otherwise `If-Modified-Since` does (step 4): not
/// modified when the resource's `last_modified` is not later than the date.
/// An unparsable date is ignored, as the RFC requires.
pub(crate) fn not_modified(
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

    #[test]
    fn dates_are_written_as_httpdate_writes_them() {
        let mut secs: Vec<i64> = vec![
            0,
            59,
            86_399,
            86_400,
            951_782_400,     // 2000-02-29
            951_868_800,     // 2000-03-01
            4_107_542_400,   // 2100-03-01
            4_102_444_799,   // 2099-12-31T23:59:59
            253_402_300_799, // 9999-12-31T23:59:59
        ];
        // Every day of a few leap cycles, at a time of day that varies.
        secs.extend((0..20_000).map(|day| day * 86_400 + (day * 7_919) % 86_400));
        secs.extend((0..2_000).map(|i| 1_000_000_000 + i * 104_729_113));
        for secs in secs {
            let time = UNIX_EPOCH + Duration::from_secs(secs as u64);
            assert_eq!(http_date(secs), httpdate::fmt_http_date(time), "{secs}");
        }
        assert_eq!(http_date(-5), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(i64::MAX), "Fri, 31 Dec 9999 23:59:59 GMT");
    }
}

//! Range requests (RFC 9110 14): which bytes of the selected
//! representation a GET or HEAD answers with.
//!
//! ccc serves one `bytes=` range as a 206 with `Content-Range`, on the
//! representation the client gets: the stored gzip stream when gzip was
//! negotiated (as nginx does with `gzip_static`), else the decoded bytes.
//! A request whose ranges all lie past the end gets 416 with
//! `Content-Range: bytes */LEN`. A request for several ranges gets the
//! whole representation as a 200, which RFC 9110 14.2 allows: a
//! `multipart/byteranges` body helps no client ccc's users have, and
//! costs a multipart encoder. A `Range` that does not parse, or names
//! another unit, is ignored (14.2: "MAY ignore").
//!
//! `If-Range` (13.1.5) makes the range conditional on the representation
//! being the one the client holds part of: an entity tag compares
//! strongly (a weak tag never matches), a date must equal
//! `Last-Modified` exactly. When it does not hold, the whole
//! representation is sent.
//!
//! The order with the other conditionals is the caller's: 13.2.2 puts
//! `If-None-Match`/`If-Modified-Since` (304) before `Range`. A HEAD gets
//! the head of the 206 a GET would get (9.3.2: the same header fields),
//! as nginx answers it, so a client can ask a range's length first.

use std::ops::Range;
use std::time::{Duration, UNIX_EPOCH};

/// What to send of a representation of `len` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ranged {
    /// 200 with every byte.
    Whole,
    /// 206 with these bytes (never empty, within the representation).
    Part(Range<u64>),
    /// 416: no range of the request overlaps the representation.
    Unsatisfiable,
}

/// Decides what a GET or HEAD with these headers gets of a
/// representation of `len` bytes whose strong ETag is `etag` and whose
/// `Last-Modified` is `last_modified` (Unix seconds).
pub(crate) fn evaluate(
    range: Option<&str>,
    if_range: Option<&str>,
    etag: &str,
    last_modified: i64,
    len: u64,
) -> Ranged {
    let Some(specs) = range.and_then(parse) else {
        return Ranged::Whole;
    };
    if let Some(validator) = if_range
        && !if_range_holds(validator, etag, last_modified)
    {
        return Ranged::Whole;
    }
    let mut satisfiable = specs.iter().filter_map(|spec| spec.resolve(len));
    match (satisfiable.next(), specs.len()) {
        (None, _) => Ranged::Unsatisfiable,
        (Some(part), 1) => Ranged::Part(part),
        // Several ranges, one at least satisfiable: the whole 200.
        (Some(_), _) => Ranged::Whole,
    }
}

/// `Content-Range` of a 206 (RFC 9110 14.4): `bytes 0-99/1000`.
pub(crate) fn content_range(part: &Range<u64>, len: u64) -> String {
    format!("bytes {}-{}/{len}", part.start, part.end - 1)
}

/// `Content-Range` of a 416: `bytes */1000`.
pub(crate) fn unsatisfied_range(len: u64) -> String {
    format!("bytes */{len}")
}

/// One range-spec of a `bytes=` range set (RFC 9110 14.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `first-last` (inclusive) or `first-` (`last` = None).
    From { first: u64, last: Option<u64> },
    /// `-n`: the last n bytes.
    Suffix(u64),
}

impl Spec {
    /// The bytes this spec names of a representation of `len` bytes, or
    /// None when it is unsatisfiable (14.1.1: a first-pos at or past the
    /// end, or a zero suffix-length).
    fn resolve(self, len: u64) -> Option<Range<u64>> {
        match self {
            Spec::From { first, last } if first < len => {
                let end = last.map_or(len, |last| last.saturating_add(1).min(len));
                Some(first..end)
            }
            Spec::Suffix(n) if n > 0 && len > 0 => Some(len.saturating_sub(n)..len),
            _ => None,
        }
    }
}

/// Parses `bytes=<range-set>`; None for another unit or any syntax error
/// (then the header is ignored as a whole).
fn parse(header: &str) -> Option<Vec<Spec>> {
    let (unit, set) = header.trim().split_once('=')?;
    if !unit.trim_end().eq_ignore_ascii_case("bytes") {
        return None;
    }
    // `1#range-spec`: empty list elements are allowed and skipped (RFC
    // 9110 5.6.1), but at least one spec must be there.
    let specs = set
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_spec)
        .collect::<Option<Vec<_>>>()?;
    (!specs.is_empty()).then_some(specs)
}

fn parse_spec(spec: &str) -> Option<Spec> {
    let (first, last) = spec.split_once('-')?;
    if first.is_empty() {
        return Some(Spec::Suffix(number(last)?));
    }
    let first = number(first)?;
    let last = match last {
        "" => None,
        last => Some(number(last)?),
    };
    // 14.1.1: a last-pos below the first-pos makes the spec invalid.
    if last.is_some_and(|last| last < first) {
        return None;
    }
    Some(Spec::From { first, last })
}

/// `1*DIGIT`; a number too large for u64 saturates (it lies past the end
/// of any representation, which is what it means).
fn number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(u64::MAX))
}

/// RFC 9110 13.1.5: whether an `If-Range` validator names the current
/// representation. An entity tag must match strongly; a date must equal
/// `Last-Modified` (ccc's versions are immutable, so their publish time is
/// a strong validator). Anything else does not hold.
fn if_range_holds(validator: &str, etag: &str, last_modified: i64) -> bool {
    let validator = validator.trim();
    if validator.starts_with('"') || validator.starts_with("W/") {
        // A weak tag (`W/"..."`) never equals a strong one.
        return validator == etag && !etag.starts_with("W/");
    }
    httpdate::parse_http_date(validator)
        .is_ok_and(|date| date == UNIX_EPOCH + Duration::from_secs(last_modified.max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "\"ab12-gz\"";
    const PUBLISHED: i64 = 1_700_000_000; // Tue, 14 Nov 2023 22:13:20 GMT

    fn eval(range: &str, len: u64) -> Ranged {
        evaluate(Some(range), None, TAG, PUBLISHED, len)
    }

    fn part(r: Range<u64>) -> Ranged {
        Ranged::Part(r)
    }

    #[test]
    fn single_ranges() {
        assert_eq!(eval("bytes=0-99", 1000), part(0..100));
        assert_eq!(eval("bytes=0-0", 1000), part(0..1));
        assert_eq!(eval("bytes=100-", 1000), part(100..1000));
        assert_eq!(eval("bytes=999-", 1000), part(999..1000));
        assert_eq!(eval("bytes=-500", 1000), part(500..1000));
        // Past the end: clamped (14.1.1).
        assert_eq!(eval("bytes=900-5000", 1000), part(900..1000));
        assert_eq!(eval("bytes=-5000", 1000), part(0..1000));
        assert_eq!(eval("bytes=0-99999999999999999999999", 10), part(0..10));
        // Unit case, whitespace and empty list elements.
        assert_eq!(eval("Bytes = 1-2", 10), part(1..3));
        assert_eq!(eval("bytes=, 1-2 ,", 10), part(1..3));
    }

    #[test]
    fn unsatisfiable_ranges() {
        assert_eq!(eval("bytes=1000-", 1000), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=1000-2000", 1000), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=-0", 1000), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=0-", 0), Ranged::Unsatisfiable);
        assert_eq!(eval("bytes=-5", 0), Ranged::Unsatisfiable);
        assert_eq!(
            eval("bytes=99999999999999999999999-", 10),
            Ranged::Unsatisfiable
        );
        assert_eq!(eval("bytes=20-30, 40-", 10), Ranged::Unsatisfiable);
    }

    #[test]
    fn several_ranges_answer_the_whole() {
        assert_eq!(eval("bytes=0-1, 5-6", 10), Ranged::Whole);
        assert_eq!(eval("bytes=0-1, 50-60", 10), Ranged::Whole);
    }

    #[test]
    fn what_does_not_parse_is_ignored() {
        for bad in [
            "bytes=",
            "bytes=,",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=1",
            "bytes=-",
            "bytes=+1-2",
            "bytes=1 -2",
            "bytes=--1",
            "bytes=0-1, x",
            "items=0-1",
            "0-1",
            "",
        ] {
            assert_eq!(eval(bad, 10), Ranged::Whole, "{bad:?}");
        }
        assert_eq!(evaluate(None, Some(TAG), TAG, PUBLISHED, 10), Ranged::Whole);
    }

    #[test]
    fn if_range_by_entity_tag_compares_strongly() {
        let with =
            |validator: &str| evaluate(Some("bytes=2-3"), Some(validator), TAG, PUBLISHED, 10);
        assert_eq!(with(TAG), part(2..4));
        assert_eq!(with(&format!(" {TAG} ")), part(2..4));
        assert_eq!(with(&format!("W/{TAG}")), Ranged::Whole);
        assert_eq!(with("\"ab12\""), Ranged::Whole, "the other representation");
        assert_eq!(with("\"ab12-gz"), Ranged::Whole);
        // When If-Range fails the range is not evaluated: no 416.
        assert_eq!(
            evaluate(Some("bytes=50-"), Some("\"x\""), TAG, PUBLISHED, 10),
            Ranged::Whole
        );
    }

    #[test]
    fn if_range_by_date_must_equal_last_modified() {
        let with = |validator| evaluate(Some("bytes=2-3"), Some(validator), TAG, PUBLISHED, 10);
        assert_eq!(with("Tue, 14 Nov 2023 22:13:20 GMT"), part(2..4));
        assert_eq!(with("Tue, 14 Nov 2023 22:13:21 GMT"), Ranged::Whole);
        assert_eq!(with("Tue, 14 Nov 2023 22:13:19 GMT"), Ranged::Whole);
        assert_eq!(with("yesterday"), Ranged::Whole);
        assert_eq!(with(""), Ranged::Whole);
    }

    #[test]
    fn content_range_lines() {
        assert_eq!(content_range(&(0..100), 1000), "bytes 0-99/1000");
        assert_eq!(content_range(&(999..1000), 1000), "bytes 999-999/1000");
        assert_eq!(unsatisfied_range(1000), "bytes */1000");
    }
}

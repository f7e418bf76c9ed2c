//! Content negotiation (RFC 9110 12.5).
//!
//! - `Accept-Encoding` ([`choose`]): ccc stores most assets gzipped and can
//!   send them as stored (gzip) or decoded (identity); nothing else. So the
//!   question is only: may this client get gzip, and would it rather not?
//! - `Accept` ([`format`]): the listings are JSON, or HTML pages
//!   ([`crate::serve::browse`]) for a client that ranks `text/html` above
//!   JSON, as a browser navigating does.

/// The coding to send when the stored body is gzip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Identity,
}

/// Chooses gzip or identity for a gzip-stored asset from the request's
/// `Accept-Encoding` values (all of them, in order).
///
/// - No header: identity (RFC 9110 12.5.3: any coding is acceptable, but a
///   client that says nothing is safest served plain).
/// - `gzip` (or `x-gzip`) with q > 0, or `*` with q > 0 when gzip is not
///   named: gzip is acceptable.
/// - identity is acceptable unless `identity;q=0`, or `*;q=0` without an
///   `identity` entry.
/// - gzip is sent when acceptable and not ranked below identity. When
///   neither is acceptable the server sends identity rather than 406, as
///   the RFC allows.
pub fn choose<'a>(accept_encoding: impl IntoIterator<Item = &'a str>) -> Coding {
    let mut seen_header = false;
    let (mut gzip, mut identity, mut star) = (None::<f32>, None::<f32>, None::<f32>);
    for value in accept_encoding {
        seen_header = true;
        for item in value.split(',') {
            let Some((coding, q)) = weighted(item) else {
                continue;
            };
            let slot =
                if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                    &mut gzip
                } else if coding.eq_ignore_ascii_case("identity") {
                    &mut identity
                } else if coding == "*" {
                    &mut star
                } else {
                    continue;
                };
            // The highest q for a coding named twice.
            *slot = Some(slot.map_or(q, |old: f32| old.max(q)));
        }
    }
    if !seen_header {
        return Coding::Identity;
    }
    let gzip_q = gzip.or(star).unwrap_or(0.0);
    // Identity is always acceptable unless refused, but it only outranks
    // gzip when the client ranked it explicitly.
    let identity_q = identity.or(star).unwrap_or(0.0);
    if gzip_q > 0.0 && gzip_q >= identity_q {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

/// What a listing is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Html,
}

/// Chooses JSON or HTML for a listing from the request's `Accept` values
/// (all of them, in order).
///
/// Each type's q is the one of the most specific range that matches it
/// (`text/html` before `text/*` before `*/*`; the highest when a range is
/// named twice), and HTML is sent only when its q is above JSON's. So a
/// browser's `text/html,...,*/*;q=0.8` gets HTML, while no header, `*/*`
/// (curl, `fetch`), `application/json`, or a malformed header get JSON:
/// scripts keep the answer they always had.
pub fn format<'a>(accept: impl IntoIterator<Item = &'a str>) -> Format {
    // Per type: (specificity, q) of the best match so far.
    let (mut html, mut json) = (None::<(u8, f32)>, None::<(u8, f32)>);
    for value in accept {
        for item in value.split(',') {
            let Some((range, q)) = weighted(item) else {
                continue;
            };
            let Some((kind, sub)) = range.split_once('/') else {
                continue;
            };
            for (slot, want_kind, want_sub) in [
                (&mut html, "text", "html"),
                (&mut json, "application", "json"),
            ] {
                let specificity = match (kind.trim(), sub.trim()) {
                    ("*", "*") => 1,
                    (k, "*") if k.eq_ignore_ascii_case(want_kind) => 2,
                    (k, s)
                        if k.eq_ignore_ascii_case(want_kind)
                            && s.eq_ignore_ascii_case(want_sub) =>
                    {
                        3
                    }
                    _ => continue,
                };
                *slot = match *slot {
                    Some((best, old)) if best > specificity => Some((best, old)),
                    Some((best, old)) if best == specificity => Some((best, old.max(q))),
                    _ => Some((specificity, q)),
                };
            }
        }
    }
    let q = |slot: Option<(u8, f32)>| slot.map_or(0.0, |(_, q)| q);
    if q(html) > q(json) {
        Format::Html
    } else {
        Format::Json
    }
}

/// One element of a list header (`gzip;q=0.5`, `text/html`): its value
/// and its q (1 when absent). None when the value is empty or the q-value
/// malformed, which makes the element meaningless: it is skipped.
fn weighted(item: &str) -> Option<(&str, f32)> {
    let mut parts = item.split(';');
    let value = parts.next().unwrap_or("").trim();
    if value.is_empty() {
        return None;
    }
    let q = parts
        .find_map(|p| {
            let (k, v) = p.split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case("q")
                .then(|| parse_q(v.trim()))
        })
        .unwrap_or(Some(1.0))?;
    Some((value, q))
}

/// A q-value: 0 to 1 with at most three decimals (RFC 9110 12.4.2).
fn parse_q(v: &str) -> Option<f32> {
    let valid = match v.as_bytes() {
        [b'0'] | [b'1'] => true,
        [b'0', b'.', rest @ ..] => rest.len() <= 3 && rest.iter().all(u8::is_ascii_digit),
        [b'1', b'.', rest @ ..] => rest.len() <= 3 && rest.iter().all(|b| *b == b'0'),
        _ => false,
    };
    if valid { v.parse().ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::Coding::{Gzip, Identity};
    use super::*;

    fn c(header: &str) -> Coding {
        choose([header])
    }

    #[test]
    fn plain_lists() {
        assert_eq!(choose([]), Identity);
        assert_eq!(c("gzip"), Gzip);
        assert_eq!(c("gzip, deflate, br"), Gzip);
        assert_eq!(c("br, deflate"), Identity);
        assert_eq!(c("GZIP"), Gzip);
        assert_eq!(c("x-gzip"), Gzip);
        assert_eq!(c(""), Identity);
    }

    #[test]
    fn q_values() {
        assert_eq!(c("gzip;q=0"), Identity);
        assert_eq!(c("gzip; q=0.000"), Identity);
        assert_eq!(c("gzip;q=0.5, identity;q=1"), Identity);
        assert_eq!(c("gzip;q=1, identity;q=0.5"), Gzip);
        assert_eq!(c("gzip;q=0.001"), Gzip);
        assert_eq!(c("gzip;q=banana"), Identity);
        assert_eq!(c("gzip;q=1.5"), Identity);
    }

    #[test]
    fn wildcards_and_identity() {
        assert_eq!(c("*"), Gzip);
        assert_eq!(c("*;q=0"), Identity);
        assert_eq!(c("*;q=0, gzip"), Gzip);
        assert_eq!(c("gzip;q=0, *"), Identity);
        assert_eq!(c("identity;q=0"), Identity);
        assert_eq!(c("gzip;q=0.1, identity;q=0"), Gzip);
        assert_eq!(c("br, *;q=0.2"), Gzip);
    }

    #[test]
    fn browsers_get_html_and_everyone_else_json() {
        use Format::{Html, Json};
        let f = |header: &str| format([header]);
        // Chromium's and Firefox's navigation headers.
        assert_eq!(
            f(
                "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
            ),
            Html
        );
        assert_eq!(
            f("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            Html
        );
        assert_eq!(format([]), Json);
        assert_eq!(f("*/*"), Json);
        assert_eq!(f("application/json"), Json);
        assert_eq!(f("application/json, text/html"), Json);
        assert_eq!(f("text/html;q=0.5, application/json"), Json);
        assert_eq!(f("text/html, application/json;q=0.9"), Html);
        assert_eq!(f("TEXT/HTML"), Html);
        assert_eq!(f("text/*"), Html);
        // The most specific range decides, whatever its order.
        assert_eq!(f("text/html;q=0, text/*, */*;q=0.5"), Json);
        assert_eq!(f("*/*;q=0.1, text/html;q=0.2"), Html);
        assert_eq!(
            f("text/html;q=0.5, text/html;q=0.9, application/*;q=0.8"),
            Html
        );
        // Malformed: nothing ranks HTML, so JSON.
        assert_eq!(f("text/html;q=2"), Json);
        assert_eq!(f("html"), Json);
        assert_eq!(f(""), Json);
        assert_eq!(format(["application/json;q=0.1", "text/html"]), Html);
    }

    #[test]
    fn several_header_lines_combine() {
        assert_eq!(choose(["br", "gzip"]), Gzip);
        assert_eq!(choose(["gzip", "gzip;q=0"]), Gzip);
    }
}

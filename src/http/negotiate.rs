//! Content negotiation (RFC 9110 12.5).
//!
//! - `Accept-Encoding` ([`Accepted::choose`]): an asset is held in one to
//!   five codings (identity always, since gzip decodes to it; gzip for
//!   compressible files; brotli for those where it beat gzip by 5%; the
//!   deltas `dcb` and `dcz` against the dictionary the request named, in
//!   the asset's entry for it): which of those this client takes best,
//!   the smallest among codings it ranks equally (`dcb`/`dcz` > `br` >
//!   `gzip` > identity). A delta is sent only to a client that names its
//!   coding: `*` never stands for one (RFC 9842 4: the client advertises
//!   `dcb` and `dcz` with the dictionary it holds).
//! - `Accept` ([`format()`]): the listings are JSON, or HTML pages
//!   ([`crate::serve::browse`]) for a client that ranks `text/html` above
//!   JSON, as a browser navigating does.

use crate::encoding::Encoding;

/// What a request's `Accept-Encoding` lines accept: the q-value each
/// coding ccc knows is given, and `*`'s. Read as the lines come
/// ([`Accepted::add`]), once a request: a miss chooses twice (which
/// streams to read, then what to send).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Accepted {
    /// Whether the request has the header at all.
    sent: bool,
    /// q-values by [`Encoding::ALL`] index.
    named: [Option<f32>; 5],
    star: Option<f32>,
}

impl Accepted {
    /// The values of `lines`, in order.
    #[cfg(test)]
    pub(crate) fn of<'a>(lines: impl IntoIterator<Item = &'a str>) -> Accepted {
        let mut accepted = Accepted::default();
        for line in lines {
            accepted.add(line);
        }
        accepted
    }

    /// Reads one more `Accept-Encoding` line.
    pub(crate) fn add(&mut self, line: &str) {
        self.sent = true;
        for item in line.split(',') {
            let Some((coding, q)) = weighted(item) else {
                continue;
            };
            let slot = if coding == "*" {
                &mut self.star
            } else if let Some(encoding) = Encoding::from_token(coding) {
                &mut self.named[rank(encoding)]
            } else {
                continue;
            };
            // The highest q for a coding named twice.
            *slot = Some(slot.map_or(q, |old: f32| old.max(q)));
        }
    }

    /// Chooses the coding to send among `offered`, smallest first
    /// (identity is always available, listed or not).
    ///
    /// - No header: identity (RFC 9110 12.5.3: any coding is acceptable,
    ///   but a client that says nothing is safest served plain).
    /// - A coding is acceptable with its own q > 0 (`gzip`, `x-gzip`,
    ///   `br`), or, when not named, with `*`'s q > 0.
    /// - identity is acceptable unless `identity;q=0`, or `*;q=0` without
    ///   an `identity` entry; it outranks a compressed coding only when
    ///   the client gave it a higher q explicitly (or through `*`).
    /// - A delta (`dcb`, `dcz`) is acceptable only when named with q > 0.
    /// - The acceptable coding with the highest q wins; equal q-values go
    ///   to the one `offered` lists first, the smaller. When nothing is
    ///   acceptable the server sends identity rather than 406, as the RFC
    ///   allows.
    pub(crate) fn choose(&self, offered: &[Encoding]) -> Encoding {
        if !self.sent {
            return Encoding::Identity;
        }
        let mut best = (Encoding::Identity, 0.0f32);
        let identity = (!offered.contains(&Encoding::Identity)).then_some(Encoding::Identity);
        for &encoding in offered.iter().chain(identity.iter()) {
            // Identity is always acceptable unless refused, but ranks only
            // with a q the client gave it; a delta only with its own.
            let q = match encoding.is_delta() {
                true => self.named[rank(encoding)].unwrap_or(0.0),
                false => self.named[rank(encoding)].or(self.star).unwrap_or(0.0),
            };
            // Strictly greater: among equals the earlier, smaller coding
            // stays.
            if q > best.1 {
                best = (encoding, q);
            }
        }
        best.0
    }
}

/// `encoding`'s place in [`Encoding::ALL`].
fn rank(encoding: Encoding) -> usize {
    Encoding::ALL
        .iter()
        .position(|e| *e == encoding)
        .unwrap_or(Encoding::ALL.len() - 1)
}

/// What a listing is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
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
pub(crate) fn format<'a>(accept: impl IntoIterator<Item = &'a str>) -> Format {
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
    let value = parts.next().unwrap_or("").trim_ascii();
    if value.is_empty() {
        return None;
    }
    let q = parts
        .find_map(|p| {
            let (k, v) = p.split_once('=')?;
            k.trim_ascii()
                .eq_ignore_ascii_case("q")
                .then(|| parse_q(v.trim_ascii()))
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
    use super::*;
    use crate::encoding::Encoding::{Brotli, Gzip, Identity};

    /// The coding chosen among `offered` for these `Accept-Encoding` lines.
    fn choose<'a>(lines: impl IntoIterator<Item = &'a str>, offered: &[Encoding]) -> Encoding {
        Accepted::of(lines).choose(offered)
    }

    /// For a gzip-stored asset without brotli.
    fn c(header: &str) -> Encoding {
        choose([header], &[Gzip, Identity])
    }

    /// For an asset with all three codings.
    fn all(header: &str) -> Encoding {
        choose([header], &[Brotli, Gzip, Identity])
    }

    #[test]
    fn plain_lists() {
        assert_eq!(choose([], &[Gzip, Identity]), Identity);
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
    fn several_header_lines_combine() {
        assert_eq!(choose(["br", "gzip"], &[Gzip, Identity]), Gzip);
        assert_eq!(choose(["gzip", "gzip;q=0"], &[Gzip, Identity]), Gzip);
        assert_eq!(choose(["gzip", "br"], &[Brotli, Gzip, Identity]), Brotli);
    }

    #[test]
    fn brotli_first_among_equals_and_by_q_otherwise() {
        // What browsers send.
        assert_eq!(all("gzip, deflate, br, zstd"), Brotli);
        assert_eq!(all("br"), Brotli);
        assert_eq!(all("BR;q=1.0"), Brotli);
        assert_eq!(all("*"), Brotli);
        assert_eq!(all("gzip;q=1, br;q=0.9"), Gzip);
        assert_eq!(all("br;q=0.5, gzip;q=0.5"), Brotli);
        assert_eq!(all("br;q=0.4, identity;q=0.5"), Identity);
        assert_eq!(all("br;q=0, gzip"), Gzip);
        assert_eq!(all("br;q=0, *"), Gzip);
        assert_eq!(all("*;q=0.3, br;q=0.2"), Gzip);
        assert_eq!(all("br;q=0, gzip;q=0"), Identity);
        assert_eq!(all("identity"), Identity);
        assert_eq!(all("gzip"), Gzip);
        // Only what the asset has is offered.
        assert_eq!(choose(["br"], &[Gzip, Identity]), Identity);
        assert_eq!(choose(["br, gzip"], &[Gzip, Identity]), Gzip);
        assert_eq!(choose(["br, gzip"], &[Identity]), Identity);
        assert_eq!(choose(["br, gzip"], &[]), Identity);
    }

    #[test]
    fn deltas_only_when_named_and_the_smaller_among_equals() {
        use crate::encoding::Encoding::{Dcb, Dcz};
        let offered = [Dcz, Dcb, Brotli, Gzip, Identity];
        let with = |header: &str| choose([header], &offered);
        // Chromium with a dictionary.
        assert_eq!(with("gzip, deflate, br, zstd, dcb, dcz"), Dcz);
        assert_eq!(
            choose(["br, dcb, dcz"], &[Dcb, Dcz, Brotli, Gzip, Identity]),
            Dcb
        );
        assert_eq!(with("br, dcb"), Dcb);
        assert_eq!(with("gzip, br"), Brotli);
        // `*` never stands for a delta.
        assert_eq!(with("*"), Brotli);
        assert_eq!(with("dcz;q=0, dcb;q=0, br"), Brotli);
        assert_eq!(with("dcz;q=0.5, br"), Brotli);
        assert_eq!(with("dcz;q=0.5, br;q=0.4"), Dcz);
        // Only what the entry holds.
        assert_eq!(choose(["dcb, dcz, br"], &[Brotli, Gzip, Identity]), Brotli);
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
}

//! Content-coding negotiation (`Accept-Encoding`, RFC 9110 12.5.3).
//!
//! ccc stores most assets gzipped and can send them as stored (gzip) or
//! decoded (identity); nothing else. So the question is only: may this client
//! get gzip, and would it rather not?

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
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            if coding.is_empty() {
                continue;
            }
            let q = parts
                .find_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| parse_q(v.trim()))
                })
                .unwrap_or(Some(1.0));
            // A malformed q-value makes the item meaningless; skip it.
            let Some(q) = q else { continue };
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
    fn several_header_lines_combine() {
        assert_eq!(choose(["br", "gzip"]), Gzip);
        assert_eq!(choose(["gzip", "gzip;q=0"]), Gzip);
    }
}

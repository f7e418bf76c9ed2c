//! The headers of Compression Dictionary Transport (RFC 9842), as pure
//! functions: what an asset says to be kept as a dictionary, how a
//! request names the dictionary it holds, and whether a request may be
//! answered with a delta at all.
//!
//! - `Use-As-Dictionary` (RFC 9842 2.1, [`use_as_dictionary`]): a
//!   structured dictionary with `match` (a URL Pattern, same-origin, see
//!   [`crate::delta::family`]) and `match-dest` (the request
//!   destinations). No `id`: a delta is found by the dictionary's hash
//!   alone (RFC 9842 2.3), so ccc has no use for the `Dictionary-ID` a
//!   client would echo.
//! - `Available-Dictionary` (RFC 9842 2.2, [`available_dictionary`]): a
//!   structured-field byte sequence, `:base64:`, the SHA-256 of the
//!   dictionary's bytes.
//! - Cross-origin requests (RFC 9842 6 and its security considerations,
//!   [`may_use_dictionary`]): a request the browser marks as coming from
//!   another origin (`Sec-Fetch-Site`) gets a delta only when its mode
//!   lets the page read the answer: a navigation, a same-origin request,
//!   or a CORS one, which ccc always allows (`Access-Control-Allow-Origin:
//!   *`). A classic `<script src>` of another origin without `crossorigin`
//!   (`no-cors`) gets brotli.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The value of `Use-As-Dictionary` for the file at `path` of `package`,
/// of `kind`: kept by a browser as a dictionary for the same file (or
/// family) in every version of the package. It carries no `id`: ccc finds
/// a delta by the dictionary's hash alone and never reads the
/// `Dictionary-ID` a client would echo, so an `id` would only lengthen
/// every script's and stylesheet's head.
pub(crate) fn use_as_dictionary(package: &str, path: &str, kind: crate::delta::Kind) -> String {
    with_pattern(&crate::delta::family::match_pattern(package, path), kind)
}

/// [`use_as_dictionary`] for the file's URLs at the root of a site's
/// host (`ccc site`), where the browser asks for its next release.
pub(crate) fn use_as_dictionary_on_site(path: &str, kind: crate::delta::Kind) -> String {
    with_pattern(&crate::delta::family::site_match_pattern(path), kind)
}

fn with_pattern(pattern: &str, kind: crate::delta::Kind) -> String {
    let mut out = String::with_capacity(pattern.len() + 40);
    out.push_str("match=");
    push_sf_string(&mut out, pattern);
    out.push_str(", match-dest=(");
    for (i, dest) in kind.destinations().iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        push_sf_string(&mut out, dest);
    }
    out.push(')');
    out
}

/// Appends `text` (printable ASCII) as a structured-field string (RFC
/// 8941 3.3.3): quoted, with `"` and `\` escaped.
fn push_sf_string(out: &mut String, text: &str) {
    out.push('"');
    if !text.contains(['"', '\\']) {
        out.push_str(text);
        out.push('"');
        return;
    }
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The SHA-256 an `Available-Dictionary` value names: a structured-field
/// byte sequence (`:` base64 `:`, RFC 8941 3.3.5) of exactly 32 bytes;
/// None for anything else, which is then as if not sent.
pub(crate) fn available_dictionary(value: &str) -> Option<[u8; 32]> {
    let inner = value.trim().strip_prefix(':')?.strip_suffix(':')?;
    // A SHA-256 in base64 is 44 characters: refuse anything longer
    // before decoding it.
    if inner.len() != 44 {
        return None;
    }
    let mut out = [0u8; 33];
    let n = BASE64.decode_slice(inner, &mut out).ok()?;
    (n == 32).then(|| {
        let mut sha = [0u8; 32];
        sha.copy_from_slice(&out[..32]);
        sha
    })
}

/// The `Available-Dictionary` value that names the dictionary `sha256`.
#[cfg(test)]
pub(crate) fn available_dictionary_value(sha256: &[u8; 32]) -> String {
    format!(":{}:", BASE64.encode(sha256))
}

/// Whether a request may be answered with a delta, by its
/// `Sec-Fetch-Site` and `Sec-Fetch-Mode` (module doc). A request without
/// `Sec-Fetch-Site` (no browser, or an older one) is not judged.
pub(crate) fn may_use_dictionary(
    sec_fetch_site: Option<&str>,
    sec_fetch_mode: Option<&str>,
) -> bool {
    let Some(site) = sec_fetch_site else {
        return true;
    };
    if site.trim().eq_ignore_ascii_case("same-origin") {
        return true;
    }
    // `cors` qualifies because every answer of ccc carries
    // `Access-Control-Allow-Origin: *`.
    matches!(
        sec_fetch_mode
            .map(|m| m.trim().to_ascii_lowercase())
            .as_deref(),
        Some("navigate" | "same-origin" | "cors")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::Kind;

    #[test]
    fn use_as_dictionary_is_a_structured_dictionary() {
        assert_eq!(
            use_as_dictionary("app", "assets/js/main.js", Kind::Script),
            r#"match="/assets/app/*/assets/js/main.js", match-dest=("script")"#
        );
        assert_eq!(
            use_as_dictionary("@team/ui", "ui (copy).css", Kind::Style),
            r#"match="/assets/@team/ui/*/ui%20\\(copy\\).css", match-dest=("style")"#
        );
        assert_eq!(
            use_as_dictionary("app", "data/ä.json", Kind::Json),
            r#"match="/assets/app/*/data/%C3%A4.json", match-dest=("empty")"#
        );
    }

    #[test]
    fn available_dictionary_is_a_32_byte_sequence() {
        let sha = [7u8; 32];
        let value = available_dictionary_value(&sha);
        assert_eq!(available_dictionary(&value), Some(sha));
        assert_eq!(available_dictionary(&format!("  {value} ")), Some(sha));
        for bad in [
            "",
            "::",
            ":AAAA:",
            &value[1..],
            &value[..value.len() - 1],
            &format!(":{}:", BASE64.encode([7u8; 31])),
            &format!(":{}:", BASE64.encode([7u8; 33])),
            ":!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!:",
        ] {
            assert_eq!(available_dictionary(bad), None, "{bad}");
        }
    }

    #[test]
    fn cross_origin_requests_need_a_readable_mode() {
        assert!(may_use_dictionary(None, None));
        assert!(may_use_dictionary(Some("same-origin"), Some("no-cors")));
        assert!(may_use_dictionary(Some("same-site"), Some("cors")));
        assert!(may_use_dictionary(Some("cross-site"), Some("cors")));
        assert!(may_use_dictionary(Some("cross-site"), Some("navigate")));
        assert!(may_use_dictionary(Some("none"), Some("navigate")));
        // A classic script of another origin without `crossorigin`.
        assert!(!may_use_dictionary(Some("same-site"), Some("no-cors")));
        assert!(!may_use_dictionary(Some("cross-site"), None));
    }
}

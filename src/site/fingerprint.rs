//! Whether a file's name carries a hash of its content, as bundlers write
//! them (`index-B1x9aZq2.js`, `main.3f9a2c1b.js`): such a file never
//! changes under its name, so a site may serve it `immutable` for a year,
//! while the site's other files (`index.html`, `favicon.ico`) are
//! revalidated on each visit, since a new deploy changes them in place.
//!
//! # The rule
//!
//! Only the file name counts (the folders do not). A trailing `.map` is
//! left out, so a source map goes with its file. The name must have an
//! extension; HTML (`.html`, `.htm`) is never fingerprinted, since pages
//! keep their URLs. In the name without its extension (the stem), a hash
//! is either:
//!
//! 1. after a `-` (Rollup, Vite, esbuild, Next.js: `[name]-[hash]`):
//!    - the stem's last 8 characters, after a `-` that has at least one
//!      character before it, all from base64url (`A-Z a-z 0-9 - _`),
//!      and looking random (below); or
//!    - everything after the stem's last `-`: 8 to 64 hex digits with at
//!      least one digit and one letter (`-2c79e2a64abdb08b`);
//! 2. between dots (webpack, Parcel, Angular: `[name].[contenthash]`):
//!    a dot-separated part of the stem after its first, of 6 to 64 hex
//!    digits with at least one digit and one letter (`app.3f9a2c.js`,
//!    `123.3f9a2c1b.chunk.js`).
//!
//! Eight base64url characters look random when they are only upper-case
//! letters and digits with both present (esbuild's base32,
//! `chunk-ABCD1234`), or when the kind of character (upper-case,
//! lower-case, digit, `-` or `_`) changes between neighbours at least 4
//! times in the 7 pairs, or 3 times with both a digit and a letter
//! present. A word does not: `index-settings` (no change), `app-MyWidget`
//! (3 changes, no digit), `inter-latin400` (1 change).
//!
//! The rule errs towards "not fingerprinted": a hash that happens to look
//! like a word (about one Vite hash in five without a digit) costs a
//! revalidation, while a word taken for a hash would keep a changed file
//! stale in browsers for a year.

/// Whether the file at `path` carries a content hash in its name
/// ([module docs](self)).
pub fn is_fingerprinted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let name = name.strip_suffix(".map").unwrap_or(name);
    let Some((stem, extension)) = name.rsplit_once('.') else {
        return false;
    };
    if extension.eq_ignore_ascii_case("html") || extension.eq_ignore_ascii_case("htm") {
        return false;
    }
    dash_hash(stem) || stem.split('.').skip(1).any(|part| is_hex_hash(part, 6))
}

/// Whether `stem` ends in `-` and a hash (rule 1).
fn dash_hash(stem: &str) -> bool {
    let bytes = stem.as_bytes();
    let last_eight = bytes.len() > 9
        && bytes[bytes.len() - 9] == b'-'
        && looks_random(&bytes[bytes.len() - 8..]);
    last_eight
        || stem
            .rsplit_once('-')
            .is_some_and(|(name, hash)| !name.is_empty() && is_hex_hash(hash, 8))
}

/// Whether `part` is `min` to 64 hex digits with a digit and a letter.
fn is_hex_hash(part: &str, min: usize) -> bool {
    (min..=64).contains(&part.len())
        && part.bytes().all(|b| b.is_ascii_hexdigit())
        && part.bytes().any(|b| b.is_ascii_digit())
        && part.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The kind of a base64url character; None for any other.
fn kind(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(0),
        b'a'..=b'z' => Some(1),
        b'0'..=b'9' => Some(2),
        b'-' | b'_' => Some(3),
        _ => None,
    }
}

/// Whether eight base64url characters look like a hash, not a word
/// ([module docs](self)).
fn looks_random(token: &[u8]) -> bool {
    let Some(kinds) = token.iter().map(|&b| kind(b)).collect::<Option<Vec<u8>>>() else {
        return false;
    };
    let has = |k: u8| kinds.contains(&k);
    let (upper, lower, digit, symbol) = (has(0), has(1), has(2), has(3));
    if upper && digit && !lower && !symbol {
        return true;
    }
    let changes = kinds.windows(2).filter(|w| w[0] != w[1]).count();
    changes >= 4 || (changes >= 3 && digit && (upper || lower))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundler_outputs_are_fingerprinted() {
        for path in [
            // Vite and Rollup: 8 base64url characters, `-` and `_` too.
            "assets/index-B1x9aZq2.js",
            "assets/index-D-3aF_xy.js",
            "assets/vendor-DfGhJkLm.css",
            "assets/index-legacy-B1x9aZq2.js",
            "assets/react-dom.production-Bq3x_Z1k.js",
            "assets/index-3f9a2c1b.js",
            // esbuild.
            "chunk-ABCD1234.js",
            "chunk-5HEK6RQM.js",
            "main-ZRDZ6ZVX.css",
            // webpack, Parcel, Create React App, Angular.
            "app.3f9a2c.js",
            "main.3f9a2c1b7e4d5a6f7b8c.js",
            "static/js/123.3f9a2c1b.chunk.js",
            "runtime~main.3f9a2c1b.js",
            "logo.a1b2c3d4.svg",
            "media/font.0e4b2c9a.woff2",
            // Next.js.
            "_next/static/chunks/pages/_app-2c79e2a64abdb08b.js",
            "_next/static/chunks/webpack-59c5c889f52620d6.js",
            // Source maps go with their files.
            "assets/index-B1x9aZq2.js.map",
            "main.3f9a2c1b7e4d5a6f7b8c.js.map",
            "assets/vendor-DfGhJkLm.css.map",
        ] {
            assert!(is_fingerprinted(path), "{path}");
        }
    }

    #[test]
    fn names_without_a_hash_are_not() {
        for path in [
            "index.html",
            "about/index.html",
            "assets/index-B1x9aZq2.html",
            "page.3f9a2c1b.htm",
            "favicon.ico",
            "robots.txt",
            "css/style.css",
            "img/logo.svg",
            "react-dom.production.min.js",
            "jquery-3.7.1.min.js",
            "vendor-lodash.js",
            "index-settings.js",
            "app-MyWidget.js",
            "sw.js",
            "manifest.webmanifest",
            "site.webmanifest",
            "_headers",
            "_redirects",
            "LICENSE",
            "bootstrap.bundle.min.js",
            "lib.es2015.js",
            "polyfills-es2015.js",
            "app-20240101.js",
            "fonts/inter-latin400.woff2",
            "favicon-32x32.png",
            "og-image-1200x630.png",
            "apple-touch-icon-180x180.png",
            "app.decade.js",
            "d3.v7.min.js",
            "app-v1.2.3.js",
            "world.map",
            "-B1x9aZq2.js",
            "3f9a2c1b.js",
        ] {
            assert!(!is_fingerprinted(path), "{path}");
        }
    }

    #[test]
    fn randomness_of_eight_characters() {
        for (token, random) in [
            ("B1x9aZq2", true),
            ("D-3aF_xy", true),
            ("DfGhJkLm", true),
            ("ABCD1234", true),
            ("a1b2c3d4", true),
            ("settings", false),
            ("SETTINGS", false),
            ("12345678", false),
            ("MyWidget", false),
            ("XMLParse", false),
            ("latin400", false),
            ("1200x630", false),
            ("abc.defg", false),
        ] {
            assert_eq!(looks_random(token.as_bytes()), random, "{token}");
        }
    }
}

//! The `Content-Type` a file is served with, from its name alone.
//!
//! Publish records it in `assets.content_type`, and `ccc serve`, `ls`,
//! `inspect` and `diff` compute it again from the path with the running
//! ccc's table ([`crate::catalog::query`]): a catalog published by an older ccc, which
//! stored `.ts` files as MPEG video (`video/mp2t`), is served right without
//! rewriting a row, and a file keeps one type wherever it shows.
//!
//! The table is what front-end builds contain, checked against what
//! browsers act on. mime_guess answers for the rest of the world.
//!
//! - JavaScript in every module flavour (`.js`, `.mjs`, `.cjs`) is
//!   `text/javascript`, the one type RFC 9239 keeps; browsers refuse a
//!   module script with another type (with `nosniff`, any other).
//! - TypeScript (`.ts`, `.tsx`, `.mts`, `.cts`, every package's `.d.ts`)
//!   is `text/plain`, as unpkg served it for years: no browser runs it,
//!   plain text displays inline where `application/typescript` would be
//!   downloaded, and a `<script>` that points at it fails with a type
//!   error instead of running what it is not.
//! - Source maps are JSON (`application/json`), `.webmanifest` is
//!   `application/manifest+json`, `.wasm` is `application/wasm` (which
//!   `WebAssembly.instantiateStreaming` insists on).
//! - Fonts use the `font/*` types of RFC 8081; mime_guess still gives the
//!   retired `application/font-woff` and `application/font-sfnt`.
//! - The text files every package carries without an extension (`LICENSE`,
//!   `README`, `CHANGELOG`, `AUTHORS`, ... in any case, and `LICENSE-MIT`
//!   and the like, and such a name with an extension no type is known for,
//!   as `COPYING.LESSER` or `LICENSE.APACHE`) are `text/plain`, so that a
//!   browser shows them instead of downloading them. Any other name without
//!   a known extension stays `application/octet-stream`.
//! - Text types carry `charset=utf-8`.

use http::HeaderValue;
use std::sync::{Mutex, PoisonError};

/// A content type as sent: its text and its header value, made once for
/// the life of the process, so that every asset of a type shares them and
/// a miss neither allocates nor checks one.
#[derive(Debug, Clone, Copy)]
pub struct ContentType(&'static Known);

#[derive(Debug)]
struct Known {
    text: &'static str,
    value: HeaderValue,
}

impl ContentType {
    pub(crate) fn as_str(self) -> &'static str {
        self.0.text
    }

    pub(crate) fn header_value(self) -> &'static HeaderValue {
        &self.0.value
    }
}

/// The [`ContentType`] of a literal, checked when ccc is compiled.
macro_rules! known {
    ($text:literal) => {{
        static KNOWN: Known = Known {
            text: $text,
            value: HeaderValue::from_static($text),
        };
        ContentType(&KNOWN)
    }};
}

/// The `Content-Type` of the file at `path` (its extension, any case).
pub(crate) fn for_path(path: &str) -> ContentType {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    // Lowercased only when it has to be: almost every extension is already.
    let lower;
    let ext = if ext.bytes().any(|b| b.is_ascii_uppercase()) {
        lower = ext.to_ascii_lowercase();
        lower.as_str()
    } else {
        ext
    };
    let mime = match ext {
        "" if plain_text_name(name) => "text/plain",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" | "mts" | "cts" | "tsx" => "text/plain",
        "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "wasm" => "application/wasm",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        _ => mime_guess::from_path(name).first_raw().unwrap_or_else(|| {
            // `COPYING.LESSER`, `license.APACHE`: the name says what it is.
            let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
            if plain_text_name(stem) {
                "text/plain"
            } else {
                "application/octet-stream"
            }
        }),
    };
    as_sent(mime)
}

/// `mime` as sent: text types carry `; charset=utf-8`. The types of
/// front-end builds are spelled out; any other type mime_guess knows is
/// made once and kept (mime_guess's table bounds them).
fn as_sent(mime: &'static str) -> ContentType {
    match mime {
        "text/javascript" => known!("text/javascript; charset=utf-8"),
        "text/plain" => known!("text/plain; charset=utf-8"),
        "text/css" => known!("text/css; charset=utf-8"),
        "text/html" => known!("text/html; charset=utf-8"),
        "text/markdown" => known!("text/markdown; charset=utf-8"),
        "application/json" => known!("application/json; charset=utf-8"),
        "application/manifest+json" => known!("application/manifest+json; charset=utf-8"),
        "image/svg+xml" => known!("image/svg+xml; charset=utf-8"),
        "application/xml" => known!("application/xml; charset=utf-8"),
        "application/javascript" => known!("application/javascript; charset=utf-8"),
        "application/wasm" => known!("application/wasm"),
        "application/octet-stream" => known!("application/octet-stream"),
        "font/woff" => known!("font/woff"),
        "font/woff2" => known!("font/woff2"),
        "font/ttf" => known!("font/ttf"),
        "font/otf" => known!("font/otf"),
        "image/png" => known!("image/png"),
        "image/jpeg" => known!("image/jpeg"),
        "image/gif" => known!("image/gif"),
        "image/webp" => known!("image/webp"),
        "image/avif" => known!("image/avif"),
        other => made_once(other),
    }
}

/// [`as_sent`] for a type it does not spell out.
fn made_once(mime: &'static str) -> ContentType {
    static MADE: Mutex<Vec<(&str, ContentType)>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, known)) = made.iter().find(|(m, _)| *m == mime) {
        return *known;
    }
    let text: &'static str = if mime.starts_with("text/") {
        Box::leak(format!("{mime}; charset=utf-8").into_boxed_str())
    } else {
        mime
    };
    let known = match HeaderValue::from_str(text) {
        Ok(value) => ContentType(Box::leak(Box::new(Known { text, value }))),
        // Not a type mime_guess gives; sent as bytes rather than as is.
        Err(_) => as_sent("application/octet-stream"),
    };
    made.push((mime, known));
    known
}

/// The names, without an extension, of the text files packages carry by
/// convention.
const PLAIN_TEXT_NAMES: &[&str] = &[
    "LICENSE",
    "LICENCE",
    "README",
    "CHANGELOG",
    "CHANGES",
    "HISTORY",
    "AUTHORS",
    "CONTRIBUTORS",
    "CONTRIBUTING",
    "NOTICE",
    "COPYING",
    "PATENTS",
];

/// Whether `name` (no `.` in it) is one of [`PLAIN_TEXT_NAMES`], in any
/// case, alone or followed by `-` and more (`LICENSE-MIT`).
fn plain_text_name(name: &str) -> bool {
    PLAIN_TEXT_NAMES.iter().any(|known| {
        name.get(..known.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(known))
            && matches!(name.as_bytes().get(known.len()), None | Some(b'-'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_made_once_and_shared() {
        let csv = for_path("data/table.csv");
        assert_eq!(csv.as_str(), "text/csv; charset=utf-8");
        assert_eq!(csv.header_value(), "text/csv; charset=utf-8");
        let again = for_path("other/TABLE.CSV");
        assert!(std::ptr::eq(csv.header_value(), again.header_value()));
        let js = for_path("a.js");
        assert!(std::ptr::eq(
            js.header_value(),
            for_path("b.mjs").header_value()
        ));
        assert_eq!(for_path("a.pdf").header_value(), "application/pdf");
    }

    #[test]
    fn what_front_end_builds_contain() {
        const JS: &str = "text/javascript; charset=utf-8";
        const TEXT: &str = "text/plain; charset=utf-8";
        const JSON: &str = "application/json; charset=utf-8";
        for (path, expected) in [
            ("a/b.js", JS),
            ("esm/index.mjs", JS),
            ("cjs/index.cjs", JS),
            ("BUNDLE.JS", JS),
            ("src/index.ts", TEXT),
            ("types/index.d.ts", TEXT),
            ("App.tsx", TEXT),
            ("a.mts", TEXT),
            ("a.d.mts", TEXT),
            ("a.cts", TEXT),
            ("a.d.cts", TEXT),
            ("app.js.map", JSON),
            ("style.css.map", JSON),
            ("package.json", JSON),
            (
                "site.webmanifest",
                "application/manifest+json; charset=utf-8",
            ),
            ("pkg/lib.wasm", "application/wasm"),
            ("f.woff", "font/woff"),
            ("f.woff2", "font/woff2"),
            ("f.ttf", "font/ttf"),
            ("f.otf", "font/otf"),
            ("logo.svg", "image/svg+xml; charset=utf-8"),
            ("a.avif", "image/avif"),
            ("a.webp", "image/webp"),
            ("a.png", "image/png"),
            ("README.md", "text/markdown; charset=utf-8"),
            ("index.HTML", "text/html; charset=utf-8"),
            ("x.css", "text/css; charset=utf-8"),
            ("LICENSE", TEXT),
            ("pkg/licence", TEXT),
            ("LICENSE-MIT", TEXT),
            ("README", TEXT),
            ("Changelog", TEXT),
            ("CHANGES", TEXT),
            ("HISTORY", TEXT),
            ("AUTHORS", TEXT),
            ("NOTICE", TEXT),
            ("COPYING", TEXT),
            ("CONTRIBUTING", TEXT),
            ("COPYING.LESSER", TEXT),
            ("pkg/license.APACHE", TEXT),
            ("LICENSE.bin", "application/octet-stream"),
            ("LICENSES.foo", "application/octet-stream"),
            ("LICENSES", "application/octet-stream"),
            ("READMEX", "application/octet-stream"),
            ("Makefile", "application/octet-stream"),
            ("v1.2/noext", "application/octet-stream"),
        ] {
            assert_eq!(for_path(path).as_str(), expected, "{path}");
            assert_eq!(for_path(path).header_value(), expected, "{path}");
        }
    }
}

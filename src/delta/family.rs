//! Families: which files of different releases are "the same file", so
//! that one is coded against the other, and which request URLs a file is
//! offered as a dictionary for.
//!
//! A file is the same file in another release when it has the same path
//! (`js/main.js` in `app@1.4.0` and `app@1.4.1`), or, when its name holds
//! a part that changes every build, the same *family*: the name with that
//! part masked. Bundlers put a content hash in names (`app.3f9a2c.js`,
//! Vite's `index-B1x9aZq2.js`, webpack's `main.8b1d0e4f.chunk.js`,
//! esbuild's `out-ABCD2345.js`), and vendored files carry their version
//! (`jquery-3.7.1.min.js`). The family of each is the name with those
//! parts replaced by a wildcard: `app.*.js`, `index-*.js`,
//! `main.*.chunk.js`, `jquery-*.min.js`.
//!
//! What counts as a changing part ([`masked`]), in each `.`-separated
//! part of the name but the last (the extension):
//!
//! - a version, `1.2.3` (two to four numbers), after a `-`;
//! - a hash: a whole part after the first (`app.3f9a2c.js`), or the end
//!   of a part after a `-` or `_` (`index-B1x9aZq2`), of 6 to 64
//!   characters of `[A-Za-z0-9_-]` with a digit, or with both cases over
//!   8 characters or more, as a word never has. Rollup's hashes may hold
//!   `-` and `_` themselves, so among the ends of a part that qualify the
//!   one of 8 characters is taken (the length Vite, Rollup, esbuild and
//!   webpack write by default), else the shortest.
//!
//! Names like `chunk`, `min`, `module`, `legacy` or `es2015` in their own
//! part stay: `es2015` qualifies only at the end of a part, after a `-`.
//!
//! The `match` of `Use-As-Dictionary` ([`match_pattern`]) is a URL
//! Pattern (RFC 9842 2.1.1) on the path as a browser sends it: every
//! segment percent-encoded as the URL standard's path percent-encode set
//! does (plus `%`, which ccc decodes), then the characters URL Pattern
//! gives a meaning escaped with `\`; the version is a wildcard and so is
//! each masked part. A scoped package (`@team/ui`) and a name with
//! spaces or non-ASCII letters thus match exactly the URLs browsers
//! request them by.

use std::ops::Range;

/// The byte ranges of `name` (a file name, no `/`) that change between
/// builds: its hashes and versions, in order. Empty for a name that has
/// none, whose family is the name itself.
pub(crate) fn masked(name: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // The `.`-separated parts with their start, the extension left out.
    let mut parts: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices() {
        if c == '.' {
            parts.push((start, &name[start..i]));
            start = i + 1;
        }
    }
    // A name without a dot has no extension to leave out.
    if parts.is_empty() {
        parts.push((0, name));
    }
    let mut i = 0;
    while i < parts.len() {
        let (at, part) = parts[i];
        // A version spans parts: `jquery-3.7.1.min` has `3`, `7` and `1`
        // in three of them.
        if let Some(version) = version_at(name, at, part, &parts[i..]) {
            out.push(version.range);
            i += version.parts;
            continue;
        }
        if let Some(hash) = hash_in(part, i > 0) {
            out.push(at + hash.start..at + hash.end);
        }
        i += 1;
    }
    out
}

/// A version found in the name, and how many parts it spans.
struct Version {
    range: Range<usize>,
    parts: usize,
}

/// A version that starts after the last `-` of `part` and continues over
/// the parts after it (`3` `7` `1` of `jquery-3.7.1`): two to four
/// numbers, the last part of the name (the extension) left out.
fn version_at(name: &str, at: usize, part: &str, rest: &[(usize, &str)]) -> Option<Version> {
    let dash = part.rfind('-')?;
    let first = &part[dash + 1..];
    if !is_number(first) {
        return None;
    }
    let start = at + dash + 1;
    let mut end = at + part.len();
    let mut count = 1;
    // Numbers in the parts after this one, but never the last part: the
    // extension stays (`lib-1.2.js` is a version `1.2` of `lib-*.js`, while
    // `lib-1.js`, a single number, is no version).
    for (next_at, next) in rest.iter().skip(1).take(3) {
        let is_last = *next_at + next.len() == name.len();
        if is_last || !is_number(next) {
            break;
        }
        end = next_at + next.len();
        count += 1;
    }
    (count >= 2).then_some(Version {
        range: start..end,
        parts: count,
    })
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.len() <= 9 && text.bytes().all(|b| b.is_ascii_digit())
}

/// The hash at the end of `part`: after a `-` or `_`, or the whole part
/// when it is not the first of the name (`whole_allowed`). See the
/// module doc for what qualifies and which end is taken.
fn hash_in(part: &str, whole_allowed: bool) -> Option<Range<usize>> {
    let mut candidates: Vec<Range<usize>> = part
        .char_indices()
        .filter(|(_, c)| matches!(c, '-' | '_'))
        .map(|(i, _)| i + 1..part.len())
        .filter(|r| r.len() >= 8)
        .collect();
    if whole_allowed {
        candidates.push(0..part.len());
    }
    let qualifies = |r: &Range<usize>| looks_like_hash(&part[r.clone()]);
    let mut found: Vec<Range<usize>> = candidates.into_iter().filter(qualifies).collect();
    found.sort_by_key(|r| (r.len() != 8, r.len()));
    found.into_iter().next()
}

/// Whether `text` reads as a hash rather than a word (module doc).
fn looks_like_hash(text: &str) -> bool {
    let len = text.len();
    if !(6..=64).contains(&len) {
        return false;
    }
    let mut digit = false;
    let (mut upper, mut lower) = (false, false);
    for b in text.bytes() {
        match b {
            b'0'..=b'9' => digit = true,
            b'A'..=b'Z' => upper = true,
            b'a'..=b'z' => lower = true,
            b'-' | b'_' => {}
            _ => return false,
        }
    }
    // A hash starts and ends with a character of its own, never a
    // separator left over.
    let edge = |b: u8| b == b'-' || b == b'_';
    if edge(text.as_bytes()[0]) || edge(text.as_bytes()[len - 1]) {
        return false;
    }
    digit || (upper && lower && len >= 8)
}

/// The family of the file at `path` within its release: the path with
/// each masked part of its name replaced by a NUL (which no published
/// path holds), so that files of two releases with equal keys are the
/// same file. A name with nothing masked keys by its path.
pub(crate) fn key(path: &str) -> String {
    let (dir, name) = split(path);
    let mut out = String::with_capacity(path.len());
    out.push_str(dir);
    let mut last = 0;
    for range in masked(name) {
        out.push_str(&name[last..range.start]);
        out.push('\0');
        last = range.end;
    }
    out.push_str(&name[last..]);
    out
}

/// Whether `path` names a family rather than one file (its name has a
/// masked part).
pub(crate) fn is_family(path: &str) -> bool {
    !masked(split(path).1).is_empty()
}

/// The folder part of `path` (with its trailing `/`) and the name.
fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    }
}

/// The URL Pattern (`match` of `Use-As-Dictionary`) that a file at
/// `path` of any version of `package` is requested by, on ccc's
/// `/assets/PKG/VERSION/PATH` URLs (module doc).
pub(crate) fn match_pattern(package: &str, path: &str) -> String {
    let mut out = String::from("/assets/");
    for part in package.split('/') {
        push_literal(&mut out, part);
        out.push('/');
    }
    out.push_str("*/");
    push_path_pattern(&mut out, path);
    out
}

/// The URL Pattern a file at `path` of a site's version is requested by,
/// at the root of the site's host (`ccc site`): the same as
/// [`match_pattern`]'s after `/assets/PKG/*`.
pub(crate) fn site_match_pattern(path: &str) -> String {
    let mut out = String::from("/");
    push_path_pattern(&mut out, path);
    out
}

/// Appends the pattern of `path`: its folders as written, its name with
/// each masked part a `*`.
fn push_path_pattern(out: &mut String, path: &str) {
    let (dir, name) = split(path);
    for segment in dir.split('/').filter(|s| !s.is_empty()) {
        push_literal(out, segment);
        out.push('/');
    }
    let mut last = 0;
    for range in masked(name) {
        push_literal(out, &name[last..range.start]);
        out.push('*');
        last = range.end;
    }
    push_literal(out, &name[last..]);
}

/// What a browser percent-encodes in a path (the URL standard's path
/// percent-encode set), and `%`, which ccc decodes once.
const PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Appends `text` percent-encoded as a browser sends it, then escaped
/// for URL Pattern, where `*+?(){}:\` have a meaning of their own. Most
/// names are letters, digits and `.-_@`, which neither touches: those are
/// copied whole, as this runs on every cache miss of a script.
fn push_literal(out: &mut String, text: &str) {
    let plain = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'@');
    if text.as_bytes().iter().all(plain) {
        out.push_str(text);
        return;
    }
    for piece in percent_encoding::utf8_percent_encode(text, PATH) {
        for c in piece.chars() {
            if matches!(c, '*' | '+' | '?' | '(' | ')' | '{' | '}' | ':' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name with its masked parts as `*`.
    fn family(name: &str) -> String {
        let mut out = String::new();
        let mut last = 0;
        for r in masked(name) {
            out.push_str(&name[last..r.start]);
            out.push('*');
            last = r.end;
        }
        out.push_str(&name[last..]);
        out
    }

    #[test]
    fn bundler_names_become_families() {
        for (name, want) in [
            ("app.3f9a2c.js", "app.*.js"),
            ("index-B1x9aZq2.js", "index-*.js"),
            ("index-DhRKZlK2.css", "index-*.css"),
            ("index-BoWsN_HA.js", "index-*.js"),
            // Rollup's alphabet has `-` and `_`: the 8-character end wins.
            ("index-B_x-9aZq.js", "index-*.js"),
            ("vendor-react-DhRK1lK2.js", "vendor-react-*.js"),
            ("main.8b1d0e4f.chunk.js", "main.*.chunk.js"),
            ("2.8b1d0e4f.chunk.js", "2.*.chunk.js"),
            ("main-3f9a2c1b4d5e6f70.js", "main-*.js"),
            ("out-ABCD2345.js", "out-*.js"),
            ("runtime~main.8b1d0e4fa1b2c3d4e5f6.js", "runtime~main.*.js"),
            ("polyfills-es2015.3f9a2c1b.js", "polyfills-es2015.*.js"),
            // Versions.
            ("jquery-3.7.1.min.js", "jquery-*.min.js"),
            ("tinydom-1.4.2.min.js", "tinydom-*.min.js"),
            ("lib-1.2.js", "lib-*.js"),
        ] {
            assert_eq!(family(name), want, "{name}");
        }
    }

    #[test]
    fn plain_names_stay_themselves() {
        for name in [
            "main.js",
            "react-dom.production.min.js",
            "three.module.js",
            "chunk-vendors.js",
            "polyfills-es2015.js",
            "styles.min.css",
            "lib-1.js",
            "es2015.js",
            "facade-decade.js",
            "three.webgpu.nodes.min.js",
            "LICENSE",
            "package.json",
            "ä b.js",
        ] {
            assert_eq!(family(name), name, "{name}");
        }
    }

    #[test]
    fn keys_tell_families_apart() {
        assert_eq!(
            key("assets/index-B1x9aZq2.js"),
            key("assets/index-DhRKZlK2.js")
        );
        assert_ne!(
            key("assets/index-B1x9aZq2.js"),
            key("assets/index-B1x9aZq2.css")
        );
        assert_ne!(
            key("assets/index-B1x9aZq2.js"),
            key("other/index-B1x9aZq2.js")
        );
        assert_eq!(key("js/main.js"), "js/main.js");
        assert!(is_family("a/app.3f9a2c.js") && !is_family("a/app.js"));
    }

    #[test]
    fn match_patterns_are_url_patterns_of_the_path_as_sent() {
        assert_eq!(
            match_pattern("app", "assets/js/main.js"),
            "/assets/app/*/assets/js/main.js"
        );
        assert_eq!(
            match_pattern("app", "assets/index-B1x9aZq2.js"),
            "/assets/app/*/assets/index-*.js"
        );
        assert_eq!(
            match_pattern("@team/ui", "dist/ui.3f9a2c.css"),
            "/assets/@team/ui/*/dist/ui.*.css"
        );
        // Percent-encoded as a browser sends it, URL Pattern's own
        // characters escaped.
        assert_eq!(
            match_pattern("app", "js/ä b (copy).js"),
            "/assets/app/*/js/%C3%A4%20b%20\\(copy\\).js"
        );
        assert_eq!(
            match_pattern("app", "100%+{x}:y*.js"),
            "/assets/app/*/100%25\\+%7Bx%7D\\:y\\*.js"
        );
    }
}

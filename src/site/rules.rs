//! A site's `_redirects` and `_headers`: the two plain-text files that
//! Netlify and Cloudflare Pages read from the root of a build, parsed into
//! rules a request path is matched against. Pure functions: the serving
//! side reads the files from the catalog and asks [`Redirects::find`] and
//! [`HeaderRules::for_path`]; publish calls [`check`] on a version's root
//! files so that a version whose rules ccc cannot follow is refused, not
//! published and then half obeyed.
//!
//! Anything ccc does not do is refused with the line and the reason, never
//! skipped: a rule left out in silence is a redirect that never happens,
//! or a security header that is never sent.
//!
//! # Patterns
//!
//! A pattern (a redirect's FROM, a header rule's path) is a path starting
//! with `/`, matched segment by segment, case-sensitively:
//!
//! - a literal segment matches itself; it is written percent-encoded as in
//!   a URL (`/authors/c%C3%A9line`) and matched against the decoded path;
//! - `:name` (a letter, then letters, digits or `_`) is a placeholder: it
//!   takes one whole non-empty segment, and `:name` in the rule's target
//!   (or a header's value) is replaced by it;
//! - `*` as the last segment is a splat: it matches the rest of the path,
//!   slashes included, or nothing (`/app/*` matches `/app`, `/app/` and
//!   `/app/a/b`), and `:splat` is replaced by what it matched;
//! - a trailing slash does not matter: `/about` and `/about/` match each
//!   other.
//!
//! Refused: `*` anywhere but as a whole last segment, a placeholder that is
//! part of a segment (`/file-:id`), one name used twice, `:splat` as a
//! name, `?` or `#` in a pattern, and absolute URLs (`https://host/...`),
//! which match on the host: a site's rules apply to its own host only.
//!
//! # `_redirects`
//!
//! One rule per line, `FROM TO [STATUS][!]`, fields separated by spaces or
//! tabs; `#` starts a comment, at the start of a line or as a field of its
//! own after the rule (`/a /b 301 # moved`). Rules are tried top to
//! bottom and the first that matches answers. The status is 301 when none
//! is given (as on Netlify; Cloudflare's default is 302):
//!
//! - 301, 302, 303, 307, 308: a redirect to TO, a path of the site or an
//!   absolute `http(s)://` URL;
//! - 200: a rewrite: the site's file at TO is served, the URL unchanged;
//! - 404, 410: the site's file at TO is served with that status (a custom
//!   "not found" page).
//!
//! Shadowing, as on Netlify: a rule applies only when the site has no file
//! at the requested path, unless its status ends in `!` (`/app/* /app.html
//! 200!`), which makes it apply always. (Cloudflare Pages always applies
//! its rules; write `!` for the same behaviour here.)
//!
//! A redirect keeps the request's query string when TO has none
//! (`/old?page=2` -> `/new?page=2`), as Netlify does and as ccc's own
//! redirects do; a TO with its own query string replaces it.
//!
//! Refused: conditions (`Country=`, `Language=`, `Role=`, `Cookie=`), as
//! ccc answers every visitor the same; query-parameter matching in FROM
//! (`/store id=:id /item/:id`); proxying (a 200, 404 or 410 to an absolute
//! URL) and signed rewrites (`Sign=`), as a site serves only its own files;
//! domain-level FROMs; any status not listed above; a query string or
//! fragment in a rewrite's TO, which would be dropped; a `:name` in TO that
//! FROM does not define; a fixed path that redirects to itself.
//!
//! # `_headers`
//!
//! A pattern on a line of its own, not indented, then the headers for the
//! paths it matches on indented lines, `Name: value`; `! Name` (Cloudflare's
//! detach) removes a header an earlier matching rule set. Lines starting
//! with `#` are comments. Every matching rule applies, in file order; a
//! header named by several of them gets their values joined with `, `
//! (RFC 9110 5.3), except `Set-Cookie`, which may not be joined and is
//! sent once per value. A header's value may use the pattern's
//! placeholders and `:splat`, as on Cloudflare; any other `:word` in a
//! value is text (`default-src https:` stays as written).
//!
//! Refused: a header line before any pattern, a pattern with no header
//! lines, a name that is not an HTTP token (RFC 9110 5.6.2), an empty value,
//! a value with a control character or outside ASCII (percent-encode it),
//! and the headers ccc must own, for [`owned_header`]'s reasons
//! (`Content-Length`, `Content-Encoding`, `ETag`, `Vary`, ...).
//! `Cache-Control`, `Content-Type`, `Link`, `Content-Security-Policy`,
//! `X-Frame-Options` and every other header are allowed.
//!
//! # Limits
//!
//! Cloudflare Pages's, so that a file within its limits is within ccc's:
//! 2,000 static redirects (no placeholder, no splat) plus 100 dynamic ones,
//! lines of at most 1,000 characters in `_redirects`; 100 header rules,
//! lines of at most 2,000 characters in `_headers`; and a file of at most
//! [`MAX_FILE_LEN`] bytes. Static redirects are found with one hash lookup,
//! and the few dynamic rules and header rules are tried in turn, so a
//! request costs a few hundred segment comparisons at worst.

use crate::http::route::{QUERY, SEGMENT};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use smallvec::SmallVec;
use std::collections::HashMap;

/// The name of the redirects file at a version's root.
pub(crate) const REDIRECTS: &str = "_redirects";
/// The name of the headers file at a version's root.
pub(crate) const HEADERS: &str = "_headers";
/// Most redirects without a placeholder or splat in a `_redirects`.
pub(crate) const MAX_STATIC_REDIRECTS: usize = 2_000;
/// Most redirects with a placeholder or a splat in a `_redirects`.
pub(crate) const MAX_DYNAMIC_REDIRECTS: usize = 100;
/// Longest line of a `_redirects`, in characters.
pub(crate) const MAX_REDIRECT_LINE: usize = 1_000;
/// Most rules (patterns) in a `_headers`.
pub(crate) const MAX_HEADER_RULES: usize = 100;
/// Longest line of a `_headers`, in characters.
pub(crate) const MAX_HEADER_LINE: usize = 2_000;
/// Longest rules file, in bytes: room for the most rules at the longest
/// lines, with comments.
pub(crate) const MAX_FILE_LEN: usize = 4 << 20;

/// A problem in a rules file, naming the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// [`REDIRECTS`] or [`HEADERS`].
    pub file: &'static str,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for RuleError {}

/// Checks `bytes` as the version's file at `path`: the rules files at the
/// root ([`REDIRECTS`], [`HEADERS`]) must parse; any other path, a file of
/// the same name in a folder included, is not a rules file and passes.
pub(crate) fn check(path: &str, bytes: &[u8]) -> Result<(), RuleError> {
    match path {
        REDIRECTS => Redirects::from_bytes(bytes).map(drop),
        HEADERS => HeaderRules::from_bytes(bytes).map(drop),
        _ => Ok(()),
    }
}

/// Whether `path` (inside a version) is one of the rules files [`check`]
/// reads.
pub(crate) fn is_rules_file(path: &str) -> bool {
    path == REDIRECTS || path == HEADERS
}

/// The text of rules file `file`: UTF-8 (a leading byte-order mark is
/// dropped) and at most [`MAX_FILE_LEN`] bytes.
fn text<'b>(file: &'static str, bytes: &'b [u8]) -> Result<&'b str, RuleError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let line_at = |end: usize| 1 + bytes[..end].iter().filter(|&&b| b == b'\n').count();
    if bytes.len() > MAX_FILE_LEN {
        return Err(RuleError {
            file,
            line: line_at(MAX_FILE_LEN),
            message: format!(
                "the file is longer than {} MiB, the most ccc reads",
                MAX_FILE_LEN >> 20
            ),
        });
    }
    std::str::from_utf8(bytes).map_err(|e| RuleError {
        file,
        line: line_at(e.valid_up_to()),
        message: "the file is not UTF-8 text".into(),
    })
}

/// The lines of `text`, numbered from 1, without their line ending, each
/// checked against `max` characters.
fn numbered_lines<'t>(
    file: &'static str,
    text: &'t str,
    max: usize,
) -> impl Iterator<Item = Result<(usize, &'t str), RuleError>> {
    text.lines().enumerate().map(move |(i, line)| {
        let line_no = i + 1;
        // Counted in characters only when the bytes could be too many.
        if line.len() > max && line.chars().count() > max {
            return Err(RuleError {
                file,
                line: line_no,
                message: format!("the line is longer than {max} characters"),
            });
        }
        Ok((line_no, line))
    })
}

// ---------------------------------------------------------------------------
// Patterns

/// One segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// Matches this text (percent-decoded) exactly.
    Literal(String),
    /// A placeholder: matches any non-empty segment; the number is its
    /// index in [`Pattern::names`].
    Param(usize),
}

/// A path pattern, parsed once ([module docs](self)).
#[derive(Debug, Clone)]
struct Pattern {
    segments: Vec<Segment>,
    /// Ends in `/*`.
    splat: bool,
    /// The placeholders' names, in order.
    names: Vec<String>,
}

/// What a pattern took from a path: each placeholder's segment, by index,
/// and what the splat matched ("" without one).
struct Matched<'p> {
    params: SmallVec<[&'p str; 4]>,
    splat: &'p str,
}

/// Whether `name` is a placeholder's name: a letter, then letters, digits
/// or `_`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The length of the placeholder name at the start of `text` (0 when
/// `text` does not start with one).
fn name_len(text: &str) -> usize {
    match text.bytes().next() {
        Some(b) if b.is_ascii_alphabetic() => text
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(text.len()),
        _ => 0,
    }
}

impl Pattern {
    /// Parses a pattern; the error says what is wrong with it.
    fn parse(text: &str) -> Result<Pattern, String> {
        if text.starts_with("http://") || text.starts_with("https://") || text.starts_with("//") {
            return Err(format!(
                "`{text}` names a host: patterns that match on the host are not supported, \
                 as a site's rules apply to its own host; write the path alone (`/...`)"
            ));
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!("`{text}` is not a path: a pattern starts with `/`"));
        };
        if text.contains(['?', '#']) {
            return Err(format!(
                "`{text}` has a `?` or `#`: a pattern matches the path only \
                 (percent-encode a literal one: %3F, %23)"
            ));
        }
        let mut pattern = Pattern {
            segments: Vec::new(),
            splat: false,
            names: Vec::new(),
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let last = parts.len() - 1;
        for (i, part) in parts.into_iter().enumerate() {
            if part == "*" && i == last {
                pattern.splat = true;
            } else if part.contains('*') {
                return Err(format!(
                    "`{text}`: `*` may only be the whole last segment (`/assets/*`)"
                ));
            } else if part.is_empty() && i == last {
                // A trailing slash: matched either way.
            } else if part.is_empty() {
                return Err(format!("`{text}` has an empty segment (`//`)"));
            } else if let Some(name) = part.strip_prefix(':')
                && name_len(name) > 0
            {
                if !is_name(name) {
                    return Err(format!(
                        "`{text}`: a placeholder is a whole segment named with letters, \
                         digits and `_`, not `{part}`"
                    ));
                }
                if name == "splat" {
                    return Err(format!(
                        "`{text}`: `:splat` names what `*` matches and cannot be a placeholder"
                    ));
                }
                if pattern.names.iter().any(|n| n == name) {
                    return Err(format!("`{text}` uses the placeholder `:{name}` twice"));
                }
                pattern.segments.push(Segment::Param(pattern.names.len()));
                pattern.names.push(name.to_string());
            } else if part
                .match_indices(':')
                .any(|(at, _)| name_len(&part[at + 1..]) > 0)
            {
                return Err(format!(
                    "`{text}`: a placeholder must be a whole segment (`/:id`), not part of \
                     `{part}` (percent-encode a literal `:` as %3A)"
                ));
            } else {
                let decoded = percent_decode_str(part)
                    .decode_utf8()
                    .map_err(|_| format!("`{text}`: `{part}` does not decode to UTF-8"))?;
                if decoded.contains('/') {
                    return Err(format!(
                        "`{text}`: `{part}` decodes to a `/`, which no segment holds"
                    ));
                }
                pattern
                    .segments
                    .push(Segment::Literal(decoded.into_owned()));
            }
        }
        Ok(pattern)
    }

    /// Whether the pattern has a placeholder or a splat (a dynamic rule).
    fn is_dynamic(&self) -> bool {
        self.splat || !self.names.is_empty()
    }

    /// The decoded path a static pattern matches, without a trailing slash
    /// (`/` for the root): the key of [`Redirects::by_path`].
    fn static_path(&self) -> String {
        let mut path = String::new();
        for segment in &self.segments {
            if let Segment::Literal(text) = segment {
                path.push('/');
                path.push_str(text);
            }
        }
        if path.is_empty() {
            path.push('/');
        }
        path
    }

    /// Matches `path` (decoded, starting with `/`).
    fn matches<'p>(&self, path: &'p str) -> Option<Matched<'p>> {
        let mut rest = Some(path.strip_prefix('/')?);
        let mut params = SmallVec::new();
        for segment in &self.segments {
            let (head, tail) = match rest?.split_once('/') {
                Some((head, tail)) => (head, Some(tail)),
                None => (rest?, None),
            };
            match segment {
                Segment::Literal(text) if text == head => {}
                Segment::Param(_) if !head.is_empty() => params.push(head),
                _ => return None,
            }
            rest = tail;
        }
        match (self.splat, rest) {
            (true, rest) => Some(Matched {
                params,
                splat: rest.unwrap_or(""),
            }),
            (false, None | Some("")) => Some(Matched { params, splat: "" }),
            (false, Some(_)) => None,
        }
    }
}

/// A path without one trailing slash (`/` stays `/`).
fn without_trailing_slash(path: &str) -> &str {
    match path.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed,
        _ => path,
    }
}

// ---------------------------------------------------------------------------
// Templates: a redirect's TO and a header's value

/// One piece of a template.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    /// A placeholder's value, by index.
    Param(usize),
    Splat,
}

/// Text with `:name` and `:splat` to fill in from a [`Matched`].
#[derive(Debug, Clone)]
struct Template(Vec<Piece>);

/// How a template treats a `:word` its pattern does not define.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    /// An error: a redirect's TO.
    Refuse,
    /// Text: a header's value (`https:` in a policy).
    Keep,
}

/// A placeholder's value put into a URL is escaped as ccc's own
/// redirects escape a path segment ([`SEGMENT`]); what a splat matched
/// keeps its `/`.
const SPLAT: &AsciiSet = &SEGMENT.remove(b'/');

/// Escaped in a placeholder's value put into a header value: controls
/// and non-ASCII, which no header value may hold as they are.
const HEADER_VALUE: &AsciiSet = &CONTROLS.add(b'%');

impl Template {
    /// Parses `text`, splitting out the `:name`s that `pattern` defines and
    /// `:splat` (when it has one).
    fn parse(text: &str, pattern: &Pattern, unknown: Unknown) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find(':') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let len = name_len(after);
            let name = &after[..len];
            let piece = match name {
                "" => None,
                "splat" if pattern.splat => Some(Piece::Splat),
                _ => pattern
                    .names
                    .iter()
                    .position(|n| n == name)
                    .map(Piece::Param),
            };
            match piece {
                Some(piece) => {
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(piece);
                }
                None if len > 0 && unknown == Unknown::Refuse => {
                    return Err(match name {
                        "splat" => format!("`{text}` uses `:splat`, but FROM has no `*`"),
                        _ => format!(
                            "`{text}` uses `:{name}`, which FROM does not define \
                             (percent-encode a literal `:` as %3A)"
                        ),
                    });
                }
                None => {
                    literal.push(':');
                    literal.push_str(name);
                }
            }
            rest = &after[len..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Template(pieces))
    }

    /// Whether the template holds only text.
    fn is_text(&self) -> bool {
        self.0.iter().all(|piece| matches!(piece, Piece::Text(_)))
    }

    /// Decodes the template's text (percent-escapes, as a URL path is
    /// written) in place: for a path that names a file of the site.
    fn decode_text(&mut self) -> Result<(), String> {
        for piece in &mut self.0 {
            if let Piece::Text(text) = piece {
                let decoded = percent_decode_str(text)
                    .decode_utf8()
                    .map_err(|_| format!("`{text}` does not decode to UTF-8"))?;
                *text = decoded.into_owned();
            }
        }
        Ok(())
    }

    /// The template filled in from `matched`, each value escaped with
    /// `escape` (param, splat) or put in as it is.
    fn render(
        &self,
        matched: &Matched<'_>,
        escape: Option<(&'static AsciiSet, &'static AsciiSet)>,
    ) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            let (value, set) = match piece {
                Piece::Text(text) => {
                    out.push_str(text);
                    continue;
                }
                Piece::Param(i) => (
                    matched.params.get(*i).copied().unwrap_or(""),
                    escape.map(|e| e.0),
                ),
                Piece::Splat => (matched.splat, escape.map(|e| e.1)),
            };
            match set {
                Some(set) => out.extend(utf8_percent_encode(value, set)),
                None => out.push_str(value),
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// _redirects

/// The statuses a `_redirects` rule may have.
const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];
/// The statuses that serve a file of the site instead of redirecting.
const SERVE_STATUSES: [u16; 3] = [200, 404, 410];

/// The parsed rules of a `_redirects` file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redirects {
    rules: Vec<RedirectRule>,
    /// The static rules' indices in `rules`, by the path they match
    /// ([`Pattern::static_path`]), in file order.
    by_path: HashMap<String, SmallVec<[usize; 1]>>,
    /// The dynamic rules' indices in `rules`, in file order.
    dynamic: Vec<usize>,
}

#[derive(Debug, Clone)]
struct RedirectRule {
    from: Pattern,
    to: Template,
    status: u16,
    /// `!`: applies even when the site has a file at the path.
    force: bool,
}

/// What a request gets from the first rule that matches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// 301, 302, 303, 307 or 308 for a redirect; 200, 404 or 410 when
    /// `rewrite`.
    pub status: u16,
    /// For a redirect, the `Location`: a path of the site or an absolute
    /// URL, placeholders and `:splat` filled in percent-encoded, with the
    /// request's query string when TO has none. When `rewrite`, the path
    /// of the site's file to serve, decoded (as [`Redirects::find`]'s
    /// `path` is), starting with `/`, without query or fragment.
    pub to: String,
    /// Serve the site's file at `to` with `status`, the URL unchanged
    /// (200: a rewrite; 404, 410: a custom error page).
    pub rewrite: bool,
}

impl Redirects {
    /// Parses a `_redirects` file's bytes (UTF-8).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Redirects, RuleError> {
        Redirects::parse(text(REDIRECTS, bytes)?)
    }

    /// Parses the text of a `_redirects` file ([module docs](self)).
    pub(crate) fn parse(text: &str) -> Result<Redirects, RuleError> {
        let mut redirects = Redirects::default();
        let mut statics = 0;
        for line in numbered_lines(REDIRECTS, text, MAX_REDIRECT_LINE) {
            let (line_no, line) = line?;
            let error = |message: String| RuleError {
                file: REDIRECTS,
                line: line_no,
                message,
            };
            let Some(rule) = parse_redirect(line).map_err(error)? else {
                continue;
            };
            let index = redirects.rules.len();
            if rule.from.is_dynamic() {
                if redirects.dynamic.len() == MAX_DYNAMIC_REDIRECTS {
                    return Err(error(format!(
                        "more than {MAX_DYNAMIC_REDIRECTS} rules with a placeholder or `*` \
                         (the most ccc takes, as Cloudflare Pages)"
                    )));
                }
                redirects.dynamic.push(index);
            } else {
                if statics == MAX_STATIC_REDIRECTS {
                    return Err(error(format!(
                        "more than {MAX_STATIC_REDIRECTS} rules without a placeholder or `*` \
                         (the most ccc takes, as Cloudflare Pages)"
                    )));
                }
                statics += 1;
                redirects
                    .by_path
                    .entry(rule.from.static_path())
                    .or_default()
                    .push(index);
            }
            redirects.rules.push(rule);
        }
        Ok(redirects)
    }

    /// Whether the file has no rules.
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// How many rules the file has.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// The answer of the first rule, in file order, that matches `path`
    /// (percent-decoded, starting with `/`) and applies: a rule without
    /// `!` does not apply when `file_exists(path)` (Netlify's shadowing),
    /// which is asked at most once, of the path as given: for a folder's
    /// path (`/`, `/docs/`) it says whether the folder's index file would
    /// be served. `query` is the request's raw query string, without `?`
    /// ("" for none), kept on a redirect whose TO has none.
    pub(crate) fn find(
        &self,
        path: &str,
        query: &str,
        file_exists: impl Fn(&str) -> bool,
    ) -> Option<Redirect> {
        let statics = self
            .by_path
            .get(without_trailing_slash(path))
            .map_or(&[][..], |v| v.as_slice());
        let mut exists = None;
        let (mut s, mut d) = (0, 0);
        // The two lists of indices, merged in file order.
        loop {
            let index = match (statics.get(s), self.dynamic.get(d)) {
                (Some(&a), Some(&b)) if a < b => {
                    s += 1;
                    a
                }
                (_, Some(&b)) => {
                    d += 1;
                    b
                }
                (Some(&a), None) => {
                    s += 1;
                    a
                }
                (None, None) => return None,
            };
            let rule = &self.rules[index];
            let Some(matched) = rule.from.matches(path) else {
                continue;
            };
            if !rule.force && *exists.get_or_insert_with(|| file_exists(path)) {
                continue;
            }
            return Some(rule.answer(&matched, query));
        }
    }
}

impl RedirectRule {
    /// What this rule answers for a path it matched.
    fn answer(&self, matched: &Matched<'_>, query: &str) -> Redirect {
        let rewrite = SERVE_STATUSES.contains(&self.status);
        if rewrite {
            return Redirect {
                status: self.status,
                to: self.to.render(matched, None),
                rewrite,
            };
        }
        let mut to = self.to.render(matched, Some((SEGMENT, SPLAT)));
        // Escaped values hold no `?` or `#`: any there are TO's own.
        if !query.is_empty() && !to.contains('?') {
            let at = to.find('#').unwrap_or(to.len());
            let query: String = utf8_percent_encode(query, QUERY).collect();
            to.insert_str(at, &format!("?{query}"));
        }
        Redirect {
            status: self.status,
            to,
            rewrite,
        }
    }
}

/// Parses one line of a `_redirects`: None for a blank or comment line.
fn parse_redirect(line: &str) -> Result<Option<RedirectRule>, String> {
    let fields: Vec<&str> = line
        .split_whitespace()
        .take_while(|field| !field.starts_with('#'))
        .collect();
    let (from, to, rest) = match fields.as_slice() {
        [] => return Ok(None),
        [from] => return Err(format!("`{from}` has no target: write `FROM TO [STATUS]`")),
        [from, to, rest @ ..] => (*from, *to, rest),
    };
    if !to.starts_with('/') && to.contains('=') {
        return Err(format!(
            "`{to}`: matching on query parameters is not supported; \
             a rule matches the path alone"
        ));
    }
    let pattern = Pattern::parse(from)?;
    let (status, force, conditions) = match rest {
        [] => (301, false, rest),
        [first, conditions @ ..] if !first.contains('=') => {
            let (digits, force) = match first.strip_suffix('!') {
                Some(digits) => (digits, true),
                None => (*first, false),
            };
            let status = digits
                .parse::<u16>()
                .ok()
                .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    format!("`{first}` is not a status: write a number, as `301` or `200!`")
                })?;
            (status, force, conditions)
        }
        conditions => (301, false, conditions),
    };
    if let Some(condition) = conditions.first() {
        let key = condition.split_once('=').map_or(*condition, |(k, _)| k);
        return Err(match key.to_ascii_lowercase().as_str() {
            "country" | "language" | "role" | "cookie" => format!(
                "`{condition}`: conditions are not supported, as ccc answers every \
                 visitor the same"
            ),
            "sign" => format!("`{condition}`: signed proxy rewrites are not supported"),
            _ if condition.contains('=') => {
                format!("`{condition}`: conditions are not supported")
            }
            _ => format!("`{condition}` after the status: write `FROM TO [STATUS]`"),
        });
    }
    let serves = SERVE_STATUSES.contains(&status);
    if !serves && !REDIRECT_STATUSES.contains(&status) {
        return Err(format!(
            "status {status} is not supported: 301, 302, 303, 307 and 308 redirect, \
             200 rewrites, 404 and 410 serve TO as an error page"
        ));
    }
    let absolute = to.starts_with("http://") || to.starts_with("https://");
    if absolute && serves {
        return Err(format!(
            "`{to}` with status {status} would proxy another server, which is not supported: \
             a site serves its own files (a 3xx status redirects there)"
        ));
    }
    if (!absolute && !to.starts_with('/')) || to.starts_with("//") {
        return Err(format!(
            "`{to}` is not a target: write a path (`/...`) or an http(s):// URL"
        ));
    }
    if serves && to.contains(['?', '#']) {
        return Err(format!(
            "`{to}`: a rewrite serves a file of the site, and a query string or \
             fragment there would be dropped"
        ));
    }
    let mut template = Template::parse(to, &pattern, Unknown::Refuse)?;
    if serves {
        template.decode_text()?;
    }
    if !serves
        && !pattern.is_dynamic()
        && template.is_text()
        && without_trailing_slash(to) == without_trailing_slash(from)
    {
        return Err(format!("`{from}` redirects to itself"));
    }
    Ok(Some(RedirectRule {
        from: pattern,
        to: template,
        status,
        force,
    }))
}

// ---------------------------------------------------------------------------
// _headers

/// The parsed rules of a `_headers` file.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeaderRules {
    rules: Vec<HeaderRule>,
}

#[derive(Debug, Clone)]
struct HeaderRule {
    pattern: Pattern,
    lines: Vec<HeaderLine>,
}

#[derive(Debug, Clone)]
enum HeaderLine {
    /// `Name: value`; the name in lowercase.
    Set { name: String, value: Template },
    /// `! Name`; the name in lowercase.
    Detach(String),
}

/// Why ccc keeps `name` (lowercase) to itself, or None when a `_headers`
/// may set it.
pub(crate) fn owned_header(name: &str) -> Option<&'static str> {
    Some(match name {
        // RFC 9110 7.6.1: about the connection, not the content.
        "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
        | "te" | "trailer" => "it belongs to the connection, which ccc's server manages",
        "content-length" | "content-encoding" | "content-range" | "accept-ranges" => {
            "ccc sets it from the bytes it sends (compression, ranges)"
        }
        "etag" | "last-modified" => "ccc's conditional requests (304) are built on it",
        "vary" => "ccc sets it to match the encodings it negotiates",
        "date" => "the server sets it on every response",
        "location" => "redirects belong in _redirects",
        _ => return None,
    })
}

/// Whether `name` is an HTTP token (RFC 9110 5.6.2).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Checks a header's name; returns it in lowercase.
fn header_name(name: &str) -> Result<String, String> {
    if !is_token(name) {
        return Err(format!(
            "`{name}` is not a header name: letters, digits and !#$%&'*+-.^_`|~ only, \
             with `:` right after it"
        ));
    }
    let lower = name.to_ascii_lowercase();
    match owned_header(&lower) {
        Some(why) => Err(format!("{name} is ccc's to set: {why}")),
        None => Ok(lower),
    }
}

impl HeaderRules {
    /// Parses a `_headers` file's bytes (UTF-8).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<HeaderRules, RuleError> {
        HeaderRules::parse(text(HEADERS, bytes)?)
    }

    /// Parses the text of a `_headers` file ([module docs](self)).
    pub(crate) fn parse(text: &str) -> Result<HeaderRules, RuleError> {
        let mut rules: Vec<HeaderRule> = Vec::new();
        // The line of the last pattern, for a rule left with no headers.
        let mut pattern_line = 0;
        let no_headers = |line: usize| RuleError {
            file: HEADERS,
            line,
            message: "the pattern has no header lines under it (indented `Name: value`)".into(),
        };
        for line in numbered_lines(HEADERS, text, MAX_HEADER_LINE) {
            let (line_no, line) = line?;
            let error = |message: String| RuleError {
                file: HEADERS,
                line: line_no,
                message,
            };
            let content = line.trim();
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let indented = line.starts_with([' ', '\t']);
            if !indented {
                if !content.starts_with('/') && !content.contains("://") && content.contains(':') {
                    return Err(error(format!(
                        "`{content}` is a header line: indent it under a path pattern"
                    )));
                }
                if rules.last().is_some_and(|rule| rule.lines.is_empty()) {
                    return Err(no_headers(pattern_line));
                }
                if content.contains(char::is_whitespace) {
                    return Err(error(format!(
                        "`{content}`: a pattern stands alone on its line, \
                         its headers indented on the lines below"
                    )));
                }
                if rules.len() == MAX_HEADER_RULES {
                    return Err(error(format!(
                        "more than {MAX_HEADER_RULES} rules (the most ccc takes, \
                         as Cloudflare Pages)"
                    )));
                }
                let pattern = Pattern::parse(content).map_err(error)?;
                rules.push(HeaderRule {
                    pattern,
                    lines: Vec::new(),
                });
                pattern_line = line_no;
                continue;
            }
            let Some(rule) = rules.last_mut() else {
                return Err(error(format!(
                    "`{content}` comes before any path pattern: \
                     write the pattern (`/*`) on a line of its own above it"
                )));
            };
            rule.lines
                .push(parse_header_line(content, &rule.pattern).map_err(error)?);
        }
        if rules.last().is_some_and(|rule| rule.lines.is_empty()) {
            return Err(no_headers(pattern_line));
        }
        Ok(HeaderRules { rules })
    }

    /// Whether the file has no rules.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The headers for `path` (percent-decoded, starting with `/`), names
    /// in lowercase, in the order each was first set: every matching rule
    /// applies in file order, a header set again gets the new value joined
    /// to the old with `, ` (`set-cookie` instead appears once per value),
    /// and `! Name` removes what the rules before it set. Placeholders and
    /// `:splat` in values are filled in, controls, `%` and non-ASCII
    /// percent-encoded, so every value is a valid header value.
    pub(crate) fn for_path(&self, path: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for rule in &self.rules {
            let Some(matched) = rule.pattern.matches(path) else {
                continue;
            };
            for line in &rule.lines {
                match line {
                    HeaderLine::Set { name, value } => {
                        let value = value.render(&matched, Some((HEADER_VALUE, HEADER_VALUE)));
                        let joined = (name != "set-cookie")
                            .then(|| out.iter_mut().find(|(n, _)| n == name))
                            .flatten();
                        match joined {
                            Some((_, old)) => {
                                old.push_str(", ");
                                old.push_str(&value);
                            }
                            None => out.push((name.clone(), value)),
                        }
                    }
                    HeaderLine::Detach(name) => out.retain(|(n, _)| n != name),
                }
            }
        }
        out
    }
}

/// Parses an indented line of a `_headers` (trimmed): `Name: value` or
/// `! Name`.
fn parse_header_line(content: &str, pattern: &Pattern) -> Result<HeaderLine, String> {
    if let Some(name) = content.strip_prefix('!') {
        return Ok(HeaderLine::Detach(header_name(name.trim())?));
    }
    if content.starts_with('/') {
        return Err(format!(
            "`{content}` is indented: a path pattern starts its line"
        ));
    }
    let Some((name, value)) = content.split_once(':') else {
        return Err(format!(
            "`{content}` is not a header: write `Name: value`, or `! Name` to remove one"
        ));
    };
    let name = header_name(name)?;
    let value = value.trim();
    if value.is_empty() {
        return Err(format!(
            "{name} has no value (to remove a header an earlier rule sets, write `! {name}`)"
        ));
    }
    // RFC 9110 5.5: visible ASCII, spaces and tabs; obs-text is left out,
    // as clients read it differently.
    if let Some(c) = value
        .chars()
        .find(|&c| c != '\t' && !(' '..='~').contains(&c))
    {
        return Err(match c.is_ascii() {
            true => format!("the value of {name} has a control character ({c:?})"),
            false => format!(
                "the value of {name} has `{c}`, outside ASCII: percent-encode it, \
                 as in a URL"
            ),
        });
    }
    Ok(HeaderLine::Set {
        name,
        value: Template::parse(value, pattern, Unknown::Keep)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirects(text: &str) -> Redirects {
        Redirects::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refused(text: &str) -> RuleError {
        match Redirects::parse(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e,
        }
    }

    fn headers_refused(text: &str) -> RuleError {
        match HeaderRules::parse(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e,
        }
    }

    /// `find` with no file in the site.
    fn find(r: &Redirects, path: &str) -> Option<(u16, String, bool)> {
        r.find(path, "", |_| false)
            .map(|r| (r.status, r.to, r.rewrite))
    }

    fn to(status: u16, to: &str) -> Option<(u16, String, bool)> {
        Some((status, to.into(), [200, 404, 410].contains(&status)))
    }

    #[test]
    fn patterns_match_segments_placeholders_and_a_splat() {
        let p = |t: &str| Pattern::parse(t).unwrap_or_else(|e| panic!("{e}"));
        let m = |pattern: &Pattern, path: &str| {
            pattern
                .matches(path)
                .map(|m| (m.params.to_vec().join(","), m.splat.to_string()))
        };
        let some = |params: &str, splat: &str| Some((params.to_string(), splat.to_string()));

        let root = p("/");
        assert_eq!(m(&root, "/"), some("", ""));
        assert_eq!(m(&root, "/a"), None);

        let about = p("/about");
        assert_eq!(m(&about, "/about"), some("", ""));
        assert_eq!(m(&about, "/about/"), some("", ""), "a trailing slash");
        assert_eq!(m(&about, "/About"), None, "case-sensitive");
        assert_eq!(m(&about, "/about/x"), None);
        assert_eq!(m(&about, "/aboutx"), None);
        assert_eq!(m(&p("/about/"), "/about"), some("", ""));

        let news = p("/news/:year/:slug");
        assert_eq!(m(&news, "/news/2024/hello"), some("2024,hello", ""));
        assert_eq!(m(&news, "/news/2024/hello/"), some("2024,hello", ""));
        assert_eq!(m(&news, "/news/2024"), None);
        assert_eq!(m(&news, "/news/2024/a/b"), None);

        let app = p("/app/*");
        assert_eq!(m(&app, "/app"), some("", ""));
        assert_eq!(m(&app, "/app/"), some("", ""));
        assert_eq!(m(&app, "/app/a/b.js"), some("", "a/b.js"));
        assert_eq!(m(&app, "/apple"), None);
        assert_eq!(m(&p("/*"), "/"), some("", ""));
        assert_eq!(m(&p("/*"), "/x/y"), some("", "x/y"));
        assert_eq!(m(&p("/u/:id/*"), "/u/7/a/b"), some("7", "a/b"));

        // Written percent-encoded, matched decoded.
        assert_eq!(
            m(&p("/authors/c%C3%A9line"), "/authors/céline"),
            some("", "")
        );
        assert_eq!(m(&p("/a%20b"), "/a b"), some("", ""));
        // A colon not followed by a letter is text.
        assert_eq!(m(&p("/a:1"), "/a:1"), some("", ""));
        assert_eq!(m(&p("/:"), "/:"), some("", ""));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_reason() {
        for (pattern, says) in [
            ("/a/*/b", "whole last segment"),
            ("/*.js", "whole last segment"),
            ("/news*", "whole last segment"),
            ("/file-:id", "whole segment"),
            ("/:id.html", "whole segment"),
            ("/:a/:a", "twice"),
            ("/:splat", "`:splat` names"),
            ("/a//b", "empty segment"),
            ("/a?x=1", "`?` or `#`"),
            ("https://old.example.com/*", "names a host"),
            ("//cdn.example.com/a", "names a host"),
            ("about", "starts with `/`"),
            ("/%FF", "UTF-8"),
            ("/a%2Fb", "decodes to a `/`"),
        ] {
            let e = Pattern::parse(pattern).err().unwrap_or_default();
            assert!(e.contains(says), "{pattern}: {e}");
        }
    }

    #[test]
    fn the_first_matching_rule_answers() {
        let r = redirects(
            "# comment\n\
             \n\
             /home              /                    301\n\
             /blog/:year/:slug  /posts/:year-:slug   302 # moved\n\
             /news/*            /blog/:splat\n\
             /news/old          /never\n\
             /docs/*            https://docs.example.com/:splat 308\n\
             /app/*             /app/index.html      200\n\
             /gone              /410.html            410\n\
             /*                 /404.html            404\n",
        );
        assert_eq!(r.len(), 8);
        assert_eq!(find(&r, "/home"), to(301, "/"));
        assert_eq!(find(&r, "/home/"), to(301, "/"));
        assert_eq!(find(&r, "/blog/2024/hi"), to(302, "/posts/2024-hi"));
        assert_eq!(find(&r, "/news/a/b"), to(301, "/blog/a/b"));
        assert_eq!(find(&r, "/news/old"), to(301, "/blog/old"), "file order");
        assert_eq!(
            find(&r, "/docs/x/y"),
            to(308, "https://docs.example.com/x/y")
        );
        assert_eq!(find(&r, "/app/settings"), to(200, "/app/index.html"));
        assert_eq!(find(&r, "/gone"), to(410, "/410.html"));
        assert_eq!(find(&r, "/nowhere"), to(404, "/404.html"));
        assert!(!r.is_empty());
        assert!(Redirects::parse("# nothing\n\n").map(|r| r.is_empty()) == Ok(true));
    }

    #[test]
    fn static_and_dynamic_rules_keep_file_order() {
        // The dynamic rule comes first: it wins over the static one after it,
        // and loses to the static one before it.
        let r = redirects("/a /first\n/:x /second/:x\n/b /third\n");
        assert_eq!(find(&r, "/a"), to(301, "/first"));
        assert_eq!(find(&r, "/b"), to(301, "/second/b"));
        // The same static path twice: the first counts.
        let r = redirects("/a /one\n/a/ /two\n");
        assert_eq!(find(&r, "/a/"), to(301, "/one"));
    }

    #[test]
    fn a_file_at_the_path_shadows_rules_without_force() {
        let r = redirects("/index.html /home 301\n/* /index.html 200\n/app/* /app.html 200!\n");
        let files = ["/index.html", "/app/x", "/logo.svg"];
        let exists = |p: &str| files.contains(&p);
        let found = |path: &str| r.find(path, "", exists).map(|r| r.to);
        assert_eq!(found("/index.html"), None, "the file is served");
        assert_eq!(found("/logo.svg"), None);
        assert_eq!(found("/settings").as_deref(), Some("/index.html"));
        // `!`: applies though a file is there.
        assert_eq!(found("/app/x").as_deref(), Some("/app.html"));
        // Asked once at most, and not at all for a forced rule.
        let asked = std::cell::Cell::new(0);
        let counting = |_: &str| {
            asked.set(asked.get() + 1);
            false
        };
        let r = redirects("/a /b\n/* /c 200\n");
        assert!(r.find("/a", "", counting).is_some());
        assert_eq!(asked.get(), 1);
        let r = redirects("/a /b 301!\n");
        assert!(r.find("/a", "", counting).is_some());
        assert_eq!(asked.get(), 1);
    }

    #[test]
    fn a_redirect_keeps_the_query_unless_to_has_one() {
        let r = redirects("/old /new\n/q /new?x=1\n/f /new#top\n/s/* /t/:splat 200\n");
        let found = |path: &str, query: &str| r.find(path, query, |_| false).map(|r| r.to);
        assert_eq!(found("/old", "page=2").as_deref(), Some("/new?page=2"));
        assert_eq!(found("/old", "").as_deref(), Some("/new"));
        assert_eq!(found("/q", "page=2").as_deref(), Some("/new?x=1"));
        assert_eq!(found("/f", "a=b").as_deref(), Some("/new?a=b#top"));
        assert_eq!(found("/old", "a b").as_deref(), Some("/new?a%20b"));
        // A rewrite names a file: no query.
        assert_eq!(found("/s/x", "a=b").as_deref(), Some("/t/x"));
    }

    #[test]
    fn values_are_escaped_for_a_location_and_decoded_for_a_file() {
        let r =
            redirects("/u/:name /users/:name\n/s/* /t/:splat\n/p/* /pages/caf%C3%A9/:splat 200\n");
        assert_eq!(find(&r, "/u/a b?#"), to(301, "/users/a%20b%3F%23"));
        assert_eq!(find(&r, "/s/x/é y"), to(301, "/t/x/%C3%A9%20y"));
        assert_eq!(find(&r, "/p/a b/é"), to(200, "/pages/café/a b/é"));
    }

    #[test]
    fn statuses_and_force() {
        for (status, rewrite) in [
            ("301", false),
            ("302", false),
            ("303", false),
            ("307", false),
            ("308", false),
            ("200", true),
            ("404", true),
            ("410", true),
        ] {
            for bang in ["", "!"] {
                let r = redirects(&format!("/a /b {status}{bang}\n"));
                let found = r.find("/a", "", |_| true);
                assert_eq!(
                    found.is_some(),
                    bang == "!",
                    "{status}{bang}: shadowed unless forced"
                );
                let found = r.find("/a", "", |_| false).map(|r| (r.status, r.rewrite));
                assert_eq!(found, Some((status.parse().unwrap_or(0), rewrite)));
            }
        }
        assert_eq!(
            find(&redirects("/a /b"), "/a"),
            to(301, "/b"),
            "the default"
        );
    }

    #[test]
    fn what_ccc_does_not_do_is_refused_naming_the_line() {
        for (text, line, says) in [
            (
                "/a /b 302 Country=us,ca\n",
                1,
                "conditions are not supported",
            ),
            ("# x\n/a /b 302 Language=en\n", 2, "conditions"),
            ("/admin/* /admin 200! Role=admin\n", 1, "conditions"),
            ("/a /b 302 Cookie=nf_lang\n", 1, "conditions"),
            ("/a /b Country=us\n", 1, "conditions"),
            (
                "/api/* https://x.example/:splat 200! Sign=TOKEN\n",
                1,
                "signed",
            ),
            ("/store id=:id /blog/:id 301\n", 1, "query parameters"),
            ("/api/* https://api.example.com/:splat 200\n", 1, "proxy"),
            ("/a https://x.example/404 404\n", 1, "proxy"),
            ("/a /b 418\n", 1, "status 418 is not supported"),
            ("/a /b 200x\n", 1, "is not a status"),
            ("/a /b !\n", 1, "is not a status"),
            ("/a /b 301 extra\n", 1, "after the status"),
            ("/a\n", 1, "no target"),
            ("/a b\n", 1, "is not a target"),
            ("/a //cdn.example.com/b\n", 1, "is not a target"),
            ("/a ftp://x.example/b\n", 1, "is not a target"),
            ("/a/*/b /c\n", 1, "whole last segment"),
            (
                "http://old.example.com/* https://new.example.com/:splat 301\n",
                1,
                "host",
            ),
            ("/a /b/:id\n", 1, "`:id`, which FROM does not define"),
            ("/a /b/:splat\n", 1, "FROM has no `*`"),
            ("/a/* /b?x=1 200\n", 1, "query string or fragment"),
            ("/a /a/\n", 1, "redirects to itself"),
        ] {
            let e = refused(text);
            assert_eq!((e.file, e.line), (REDIRECTS, line), "{text}: {e}");
            assert!(e.message.contains(says), "{text}: {e}");
        }
        let e = refused("/a /b 302 Country=us\n");
        assert!(
            e.to_string()
                .starts_with("_redirects line 1: `Country=us`: conditions"),
            "{e}"
        );
        // A rewrite may name its own path: the file there shadows it.
        assert!(Redirects::parse("/* /index.html 200\n/a /a 200\n").is_ok());
    }

    #[test]
    fn the_limits_name_the_first_line_past_them() {
        let mut text = String::new();
        for i in 0..MAX_STATIC_REDIRECTS {
            text.push_str(&format!("/old/{i} /new/{i}\n"));
        }
        for i in 0..MAX_DYNAMIC_REDIRECTS {
            text.push_str(&format!("/d{i}/* /n/:splat\n"));
        }
        let r = redirects(&text);
        assert_eq!(r.len(), MAX_STATIC_REDIRECTS + MAX_DYNAMIC_REDIRECTS);
        assert_eq!(find(&r, "/old/1999"), to(301, "/new/1999"));
        assert_eq!(find(&r, "/d99/x"), to(301, "/n/x"));
        let e = refused(&format!("{text}/one-more /x\n"));
        assert_eq!(e.line, 2_101, "{e}");
        assert!(e.message.contains("more than 2000 rules without"), "{e}");
        let e = refused(&format!("{text}/more/* /x\n"));
        assert!(e.message.contains("more than 100 rules with"), "{e}");

        let long = format!("/a /{}\n", "b".repeat(MAX_REDIRECT_LINE));
        let e = refused(&format!("/x /y\n{long}"));
        assert_eq!(e.line, 2);
        assert!(e.message.contains("longer than 1000 characters"), "{e}");
        // Counted in characters, not bytes.
        let wide = format!("/a /{}\n", "é".repeat(MAX_REDIRECT_LINE - 4));
        assert!(Redirects::parse(&wide).is_ok());
        let e = headers_refused(&format!("/*\n  X-A: {}\n", "v".repeat(MAX_HEADER_LINE)));
        assert_eq!(e.line, 2);
    }

    #[test]
    fn bytes_must_be_utf8_text_of_bounded_size() {
        let e = Redirects::from_bytes(b"/a /b\n/c /\xFF\n").err();
        assert_eq!(
            e.map(|e| (e.line, e.message)),
            Some((2, "the file is not UTF-8 text".into()))
        );
        assert!(
            Redirects::from_bytes(b"\xEF\xBB\xBF/a /b\n").is_ok(),
            "a BOM"
        );
        let big = "#\n".repeat(MAX_FILE_LEN / 2 + 1);
        let e = HeaderRules::from_bytes(big.as_bytes()).err();
        assert_eq!(
            e.map(|e| (e.file, e.line)),
            Some((HEADERS, MAX_FILE_LEN / 2 + 1))
        );
        assert!(Redirects::parse("/a /b\r\n/c /d\r\n").is_ok(), "CRLF");
    }

    #[test]
    fn check_reads_only_the_root_files() {
        assert!(check("_redirects", b"/a /b 302 Country=us\n").is_err());
        assert!(check("_headers", b"  X-A: b\n").is_err());
        assert!(check("docs/_redirects", b"/a /b 302 Country=us\n").is_ok());
        assert!(check("package/_headers", b"anything").is_ok());
        assert!(check("index.html", b"\xFF").is_ok());
        assert!(is_rules_file("_headers") && !is_rules_file("a/_headers"));
    }

    fn header_rules(text: &str) -> HeaderRules {
        HeaderRules::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_matching_header_rule_applies_in_file_order() {
        let h = header_rules(
            "# security for every page\n\
             /*\n\
             \x20 X-Frame-Options: DENY\n\
             \x20 X-Robots-Tag: noindex\n\
             \x20 Content-Security-Policy: default-src 'self' https:\n\
             \n\
             /assets/*\n\
             \tCache-Control: public, max-age=31536000, immutable\n\
             \tX-Robots-Tag: nosnippet\n\
             \t! Content-Security-Policy\n\
             /secure/page\n\
             \x20 Link: </style.css>; rel=preload; as=style\n\
             \x20 Set-Cookie: a=1\n\
             \x20 Set-Cookie: b=2\n",
        );
        assert_eq!(
            h.for_path("/assets/app.js"),
            pairs(&[
                ("x-frame-options", "DENY"),
                ("x-robots-tag", "noindex, nosnippet"),
                ("cache-control", "public, max-age=31536000, immutable"),
            ])
        );
        assert_eq!(
            h.for_path("/secure/page/"),
            pairs(&[
                ("x-frame-options", "DENY"),
                ("x-robots-tag", "noindex"),
                ("content-security-policy", "default-src 'self' https:"),
                ("link", "</style.css>; rel=preload; as=style"),
                ("set-cookie", "a=1"),
                ("set-cookie", "b=2"),
            ])
        );
        assert!(HeaderRules::default().for_path("/").is_empty());
        assert!(!h.is_empty());
    }

    #[test]
    fn a_detached_header_can_be_set_again_by_a_later_rule() {
        let h = header_rules("/*\n  X-A: 1\n/b/*\n  ! x-a\n/b/c\n  X-A: 2\n");
        assert_eq!(h.for_path("/b/c"), pairs(&[("x-a", "2")]));
        assert_eq!(h.for_path("/b/d"), pairs(&[]));
        assert_eq!(h.for_path("/e"), pairs(&[("x-a", "1")]));
    }

    #[test]
    fn header_values_take_placeholders_escaped() {
        let h = header_rules(
            "/movies/:title\n  X-Movie: watching :title (:other, https://x)\n\
             /files/*\n  Link: </:splat>; rel=canonical\n",
        );
        assert_eq!(
            h.for_path("/movies/café 100%"),
            pairs(&[("x-movie", "watching caf%C3%A9 100%25 (:other, https://x)")])
        );
        assert_eq!(
            h.for_path("/files/a/b.pdf"),
            pairs(&[("link", "</a/b.pdf>; rel=canonical")])
        );
    }

    #[test]
    fn bad_header_files_are_refused_naming_the_line() {
        for (text, line, says) in [
            ("  X-A: 1\n", 1, "before any path pattern"),
            ("# c\n/a\n/b\n  X-A: 1\n", 2, "no header lines"),
            ("/a\n  X-A: 1\n/b\n", 3, "no header lines"),
            ("/a\n  X A: 1\n", 2, "not a header name"),
            ("/a\n  X-A : 1\n", 2, "not a header name"),
            ("/a\n  X-A:\n", 2, "has no value"),
            ("/a\n  X-A: caf\u{e9}\n", 2, "outside ASCII"),
            ("/a\n  X-A: a\u{7}b\n", 2, "control character"),
            ("/a\n  X-A\n", 2, "is not a header"),
            ("/a\n  /b\n", 2, "is indented"),
            ("/a\nX-A: 1\n", 2, "indent it"),
            ("/a x\n  X-A: 1\n", 1, "stands alone"),
            ("https://example.com/*\n  X-A: 1\n", 1, "names a host"),
            ("/*.jpg\n  X-A: 1\n", 1, "whole last segment"),
            ("/a\n  ! X A\n", 2, "not a header name"),
            (
                "/a\n  Content-Length: 5\n",
                2,
                "Content-Length is ccc's to set",
            ),
            ("/a\n  content-encoding: br\n", 2, "is ccc's to set"),
            ("/a\n  Transfer-Encoding: chunked\n", 2, "connection"),
            ("/a\n  Connection: close\n", 2, "connection"),
            ("/a\n  Content-Range: bytes 0-1/2\n", 2, "ranges"),
            ("/a\n  ETag: \"x\"\n", 2, "conditional"),
            ("/a\n  Vary: Origin\n", 2, "encodings"),
            ("/a\n  Location: /b\n", 2, "_redirects"),
            ("/a\n  ! Vary\n", 2, "is ccc's to set"),
        ] {
            let e = headers_refused(text);
            assert_eq!((e.file, e.line), (HEADERS, line), "{text:?}: {e}");
            assert!(e.message.contains(says), "{text:?}: {e}");
        }
        let mut many = String::new();
        for i in 0..=MAX_HEADER_RULES {
            many.push_str(&format!("/p{i}\n  X-A: {i}\n"));
        }
        let e = headers_refused(&many);
        assert_eq!(e.line, 2 * MAX_HEADER_RULES + 1, "{e}");
        assert!(e.message.contains("more than 100 rules"), "{e}");
    }

    #[test]
    fn the_headers_a_site_needs_are_allowed() {
        let h = header_rules(
            "/*\n\
             \x20 Cache-Control: no-cache\n\
             \x20 Content-Type: text/html; charset=utf-8\n\
             \x20 Link: <https://fonts.example>; rel=preconnect\n\
             \x20 Content-Security-Policy: default-src 'self'; img-src data: https:\n\
             \x20 X-Frame-Options: SAMEORIGIN\n\
             \x20 Strict-Transport-Security: max-age=63072000\n\
             \x20 Access-Control-Allow-Origin: *\n\
             \x20 Permissions-Policy: camera=()\n\
             \x20 Referrer-Policy: no-referrer\n\
             \x20 X-Content-Type-Options: nosniff\n\
             \x20 Cross-Origin-Opener-Policy: same-origin\n\
             \x20 Content-Disposition: inline\n\
             \x20 X-Empty-Is-Fine-With-Tabs:\tvalue\n",
        );
        assert_eq!(h.for_path("/").len(), 13);
    }
}

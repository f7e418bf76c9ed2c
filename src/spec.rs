//! Parsing of what users type to name things: package names, versions,
//! version selectors and `PKG[@VERSION[/PATH]]` targets.
//!
//! Package names follow the npm rules for new packages (URL-safe, at most
//! 214 characters, optionally scoped as `@scope/name`) but one: capital
//! letters are allowed in an unscoped name. npm stopped accepting them in
//! new names, yet still serves the packages named before (`JSONStream`),
//! and ccc cannot tell those from new ones; a name is a name wherever it is
//! typed (publish, `ls`, a URL), so the same rule holds everywhere. Scopes
//! came after that rule and are lowercase. Versions are
//! semver (`1.4.0`, `2.0.0-rc.1`). Selectors, used by read-only commands and
//! the server's redirects, are npm's ranges, in npm's grammar (the one
//! `package.json` uses, read by the same parser): `^1.2 || ^2`, hyphen
//! ranges `1.2 - 1.4`, a bare partial version `1.4` is `1.4.x`, `1` is
//! `1.x`, a pre-release is picked only by a range that names one of the
//! same `MAJOR.MINOR.PATCH`; `latest` is the
//! version the package's `latest` dist-tag names, or without one the newest
//! release (or the newest pre-release when there is no release); any other
//! name is a dist-tag.
//!
//! Dist-tag names follow npm: nothing `encodeURIComponent` would escape
//! (letters, digits and `-_.!~*'()`), and never something that parses as a
//! version or a range (npm refuses those too, so that `app@1` always means
//! a range); ccc also refuses `.` and `..`, which no URL path can carry.

use crate::error::{Error, Result};
use semver::Version;

/// Longest package name npm accepts, scope included.
const MAX_NAME_LEN: usize = 214;

/// Checks a package name (see the module doc) and returns it unchanged.
pub(crate) fn package_name(name: &str) -> Result<&str> {
    let bad = |why: &str| Error::InvalidPackageName {
        name: name.to_string(),
        why: why.to_string(),
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(bad("it is longer than 214 characters"));
    }
    match name.strip_prefix('@') {
        Some(scoped) => {
            let (scope, bare) = scoped
                .split_once('/')
                .ok_or_else(|| bad("a scoped name looks like @scope/name"))?;
            name_part(scope, false).map_err(|why| bad(&format!("scope {why}")))?;
            // Every scoped package is newer than npm's lowercase rule.
            name_part(bare, false).map_err(|why| match why.as_str() {
                "must be lowercase" => bad("name must be lowercase in a scoped package"),
                _ => bad(&format!("name {why}")),
            })?;
        }
        None => name_part(name, true).map_err(|why| bad(&format!("name {why}")))?,
    }
    Ok(name)
}

/// One part of a package name (the scope or the bare name); `capitals`
/// allows A-Z, as in the unscoped names npm still serves.
fn name_part(part: &str, capitals: bool) -> std::result::Result<(), String> {
    if part.is_empty() {
        return Err("is empty".into());
    }
    if part.starts_with('.') || part.starts_with('_') {
        return Err("cannot start with `.` or `_`".into());
    }
    if let Some(c) = part.chars().find(|c| {
        !(matches!(c, 'a'..='z' | '0'..='9' | '-' | '.' | '_')
            || (capitals && c.is_ascii_uppercase()))
    }) {
        let why = if c.is_ascii_uppercase() {
            "must be lowercase".to_string()
        } else if capitals {
            format!("cannot contain `{c}` (allowed: a-z A-Z 0-9 - . _)")
        } else {
            format!("cannot contain `{c}` (allowed: a-z 0-9 - . _)")
        };
        return Err(why);
    }
    if part == "node_modules" || part == "favicon.ico" {
        return Err(format!("`{part}` is reserved"));
    }
    Ok(())
}

/// Parses an exact semver version of `package`; an error says what is
/// wrong in semver's terms (`semver_problem`).
pub(crate) fn version(package: &str, input: &str) -> Result<Version> {
    Version::parse(input).map_err(|e| Error::InvalidVersion {
        package: package.to_string(),
        version: input.to_string(),
        why: semver_problem(input).unwrap_or_else(|| e.to_string()),
    })
}

/// Whether `input` is written as an exact version, right or wrong: a digit
/// first, a `.` somewhere, and only the characters a version is made of.
/// No range, partial version or dist-tag a user means looks like this
/// without parsing (`1.4`, `1.x` and `1.2.3` do), so one that does not
/// parse is a mistyped version, told as such rather than taken for a tag.
fn written_as_version(input: &str) -> bool {
    input.starts_with(|c: char| c.is_ascii_digit())
        && input.contains('.')
        && input
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// What keeps `input` from being a semver version, in the words of the
/// semver spec (semver.org, items 2, 9 and 10): three numbers without
/// leading zeros, then optional pre-release and build identifiers that are
/// never empty. None when it finds nothing wrong.
fn semver_problem(input: &str) -> Option<String> {
    let (rest, build) = match input.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (input, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    if numbers.len() != 3 {
        let count = ["no", "one", "two", "three", "four", "five"]
            .get(numbers.len())
            .map_or_else(|| numbers.len().to_string(), |n| n.to_string());
        return Some(format!(
            "a version has three parts, MAJOR.MINOR.PATCH; `{core}` has {count}"
        ));
    }
    for (part, number) in ["major", "minor", "patch"].iter().zip(&numbers) {
        if number.is_empty() {
            return Some(format!("the {part} version is empty"));
        }
        if !number.bytes().all(|b| b.is_ascii_digit()) {
            return Some(format!("the {part} version `{number}` is not a number"));
        }
        if number.len() > 1 && number.starts_with('0') {
            return Some(format!(
                "the {part} version `{number}` has a leading zero, which semver does not allow"
            ));
        }
    }
    // `what` follows `sep`; numbers in a pre-release have no leading zero.
    let identifiers = |what: &str, sep: char, ids: &str, numeric_rule: bool| {
        if ids.is_empty() {
            return Some(format!("empty {what} identifier after `{sep}`"));
        }
        for id in ids.split('.') {
            if id.is_empty() {
                return Some(format!("empty {what} identifier in `{ids}`"));
            }
            if let Some(c) = id
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
            {
                return Some(format!(
                    "{what} identifier `{id}` cannot contain `{c}` (allowed: 0-9 A-Z a-z -)"
                ));
            }
            if numeric_rule
                && id.len() > 1
                && id.starts_with('0')
                && id.bytes().all(|b| b.is_ascii_digit())
            {
                return Some(format!(
                    "numeric {what} identifier `{id}` has a leading zero, which semver does not allow"
                ));
            }
        }
        None
    };
    if let Some(problem) = pre.and_then(|pre| identifiers("pre-release", '-', pre, true)) {
        return Some(problem);
    }
    build.and_then(|build| identifiers("build metadata", '+', build, false))
}

/// Longest dist-tag name, as for package names.
const MAX_TAG_LEN: usize = 214;

/// Checks a dist-tag name (see the module doc) and returns it unchanged.
pub(crate) fn tag_name(tag: &str) -> Result<&str> {
    let bad = |why: String| Error::InvalidTag {
        tag: tag.to_string(),
        why,
    };
    if tag.is_empty() {
        return Err(bad("it is empty".into()));
    }
    if tag.len() > MAX_TAG_LEN {
        return Err(bad("it is longer than 214 characters".into()));
    }
    if let Some(c) = tag
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.!~*'()".contains(*c)))
    {
        return Err(bad(format!(
            "it cannot contain `{c}` (allowed: letters, digits and - _ . ! ~ * ' ( ))"
        )));
    }
    if tag == "." || tag == ".." {
        return Err(bad("`.` and `..` cannot be part of a URL path".into()));
    }
    if written_as_version(tag) && version_or_range(tag).is_none() {
        return Err(bad(
            "it is written as a version, so `PKG@TAG` would be read as a mistyped one; pick a name such as `next` or `beta`".into(),
        ));
    }
    if tag != "latest" && looks_like_a_version(tag) {
        return Err(bad(
            "it parses as a semver version or range, so `PKG@TAG` would not mean the tag; pick a name such as `next` or `beta`".into(),
        ));
    }
    Ok(tag)
}

/// Whether `input` reads as a version or a range, here or to npm (which
/// also takes a leading `v` or `=`, as in `v1` or `=1.2.0`).
fn looks_like_a_version(input: &str) -> bool {
    let bare = input.trim_start_matches(['v', 'V', '=']);
    [input, bare]
        .iter()
        .any(|s| !s.is_empty() && version_or_range(s).is_some())
}

/// What a user may write where a version is expected by a read-only command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// One exact version.
    Exact(Version),
    /// What the `latest` dist-tag names; without one, the newest release,
    /// or the newest pre-release if there is no release.
    Latest,
    /// The newest version that satisfies an npm range (npm's grammar:
    /// `^1.2 || ^2`, `1.2 - 1.4`, `1.x`, `>=1 <2`), with the range as typed.
    Range(nodejs_semver::Range, String),
    /// The version a dist-tag other than `latest` names.
    Tag(String),
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Exact(v) => write!(f, "{v}"),
            Selector::Latest => f.write_str("latest"),
            Selector::Range(_, typed) => f.write_str(typed),
            Selector::Tag(tag) => f.write_str(tag),
        }
    }
}

/// An exact version or an npm range, if `input` is one.
fn version_or_range(input: &str) -> Option<Selector> {
    if let Ok(v) = Version::parse(input) {
        return Some(Selector::Exact(v));
    }
    if !strict_versions(input) {
        return None;
    }
    nodejs_semver::Range::parse(input)
        .ok()
        .map(|range| Selector::Range(range, input.to_string()))
}

/// Whether every version a range names is written as npm's strict grammar
/// has it: each part a number without a leading zero or a wildcard (`x`,
/// `X`, `*`), at most three parts, and a full version with a pre-release
/// or build valid semver. nodejs-semver also reads npm's loose forms
/// (`01.0.0`, `1.0.x1`), which ccc reports as mistyped versions instead.
fn strict_versions(range: &str) -> bool {
    range
        .split([' ', '|'])
        .map(|token| token.trim_start_matches(['<', '>', '=', '~', '^', 'v', 'V']))
        .filter(|token| !token.is_empty() && *token != "-")
        .all(|token| {
            let core = token.split(['-', '+']).next().unwrap_or_default();
            let parts: Vec<&str> = core.split('.').collect();
            let part_ok = |p: &&str| {
                matches!(*p, "x" | "X" | "*")
                    || (p.bytes().all(|b| b.is_ascii_digit())
                        && (*p == "0" || !p.starts_with('0'))
                        && !p.is_empty())
            };
            parts.len() <= 3
                && parts.iter().all(part_ok)
                && (core == token || Version::parse(token).is_ok())
        })
}

/// Whether `version` satisfies the npm `range`, by npm's rules: a
/// pre-release satisfies only a range that names a pre-release of the
/// same major, minor and patch. The one test of a version against a
/// range, for URLs, the command line and `package.json` alike.
pub fn satisfies(range: &nodejs_semver::Range, version: &Version) -> bool {
    nodejs_semver::Version::parse(version.to_string()).is_ok_and(|v| range.satisfies(&v))
}

impl Selector {
    /// An exact version, a range, `latest`, or another dist-tag's name.
    pub fn parse(package: &str, input: &str) -> Result<Selector> {
        if input == "latest" {
            return Ok(Selector::Latest);
        }
        if let Some(selector) = version_or_range(input) {
            return Ok(selector);
        }
        if written_as_version(input) {
            return Err(Error::InvalidVersion {
                package: package.to_string(),
                version: input.to_string(),
                why: semver_problem(input)
                    .unwrap_or_else(|| "not a semver version, like 1.4.0".into()),
            });
        }
        match tag_name(input) {
            Ok(tag) => Ok(Selector::Tag(tag.to_string())),
            Err(_) => Err(Error::InvalidVersion {
                package: package.to_string(),
                version: input.to_string(),
                why: "not a version, a range or a dist-tag name".into(),
            }),
        }
    }

    /// Picks the newest of `versions` that this selector accepts, without
    /// dist-tags: `latest` is the newest release (or pre-release), and
    /// another tag picks nothing. [`crate::catalog::Catalog::resolve`]
    /// consults the tags first.
    ///
    /// Newest is by semver precedence: the semver crate's order uses build
    /// metadata only to break a tie in precedence, and a catalog holds no
    /// two versions that tie (publish refuses the second), so build
    /// metadata never makes a version newer.
    pub fn pick<'a>(&self, versions: impl IntoIterator<Item = &'a Version>) -> Option<&'a Version> {
        let versions = versions.into_iter();
        match self {
            // Build metadata is not part of precedence: `1.0.0` names a
            // stored `1.0.0+build.5` (publish keeps no two such twins).
            Selector::Exact(want) => {
                let all: Vec<&Version> = versions.collect();
                let same = all.iter().find(|v| **v == want);
                same.or_else(|| all.iter().find(|v| v.cmp_precedence(want).is_eq()))
                    .copied()
            }
            Selector::Latest => {
                let all: Vec<&Version> = versions.collect();
                let newest_release = all.iter().filter(|v| v.pre.is_empty()).max().copied();
                newest_release.or_else(|| all.into_iter().max())
            }
            Selector::Range(range, _) => versions.filter(|v| satisfies(range, v)).max(),
            Selector::Tag(_) => None,
        }
    }
}

/// `PKG[@VERSION[/PATH]]`, as typed on the command line: a checked package
/// name, a version selector and a path inside the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub package: String,
    pub version: Option<Selector>,
    pub path: Option<String>,
}

/// Whether a command needs, allows or refuses one part of a [`Target`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Required,
    Optional,
    Refused,
}

impl Target {
    /// Splits a target and checks its package name and version selector.
    pub(crate) fn parse(input: &str) -> Result<Target> {
        // The version separator is the first `@` after a scope's leading one.
        let search_from = usize::from(input.starts_with('@'));
        let (package, rest) = match input[search_from..].find('@') {
            Some(at) => {
                let at = at + search_from;
                (&input[..at], Some(&input[at + 1..]))
            }
            None => (input, None),
        };
        package_name(package)?;
        let (version, path) = match rest {
            None => (None, None),
            Some(rest) => match rest.split_once('/') {
                Some((v, p)) => (Some(v), Some(p)),
                None => (Some(rest), None),
            },
        };
        if version == Some("") {
            return Err(Error::InvalidSpec {
                what: "target",
                input: input.to_string(),
                why: "the version after `@` is empty".into(),
            });
        }
        let path = path
            .map(|p| p.trim_start_matches('/'))
            .filter(|p| !p.is_empty());
        Ok(Target {
            package: package.to_string(),
            version: version.map(|v| Selector::parse(package, v)).transpose()?,
            path: path.map(str::to_string),
        })
    }

    /// Parses a target that has the parts a command takes; `form` spells
    /// them out for the error, like `PKG@VERSION/PATH, like app@1.4.0/a.js`.
    pub(crate) fn parse_as(input: &str, version: Part, path: Part, form: &str) -> Result<Target> {
        let target = Target::parse(input)?;
        let fits = |part: Part, present: bool| match part {
            Part::Required => present,
            Part::Optional => true,
            Part::Refused => !present,
        };
        if !fits(version, target.version.is_some()) || !fits(path, target.path.is_some()) {
            return Err(Error::InvalidSpec {
                what: "target",
                input: input.to_string(),
                why: format!("expected {form}"),
            });
        }
        Ok(target)
    }

    /// The exact version this target names, if it names one.
    pub(crate) fn exact_version(&self) -> Option<&Version> {
        match &self.version {
            Some(Selector::Exact(v)) => Some(v),
            _ => None,
        }
    }
}

/// `PKG@VERSION` with an exact version and no path: what `publish` creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackageVersion {
    pub package: String,
    pub version: Version,
}

impl PackageVersion {
    /// The version a publish creates.
    pub(crate) fn parse(input: &str) -> Result<PackageVersion> {
        Self::parse_for(input, "publish")
    }

    /// The version `verb` acts on (`publish`, `tag`), the word its error
    /// uses when the version is not exact.
    pub(crate) fn parse_for(input: &str, verb: &str) -> Result<PackageVersion> {
        let form = "PKG@VERSION with an exact version, like app@1.4.0";
        let target = Target::parse_as(input, Part::Required, Part::Refused, form)?;
        let version = match target.version {
            Some(Selector::Exact(version)) => version,
            other => {
                return Err(Error::InvalidVersion {
                    package: target.package,
                    version: other.map(|s| s.to_string()).unwrap_or_default(),
                    why: format!(
                        "a version to {verb} is exact, like 1.4.0 (not `latest` or a range)"
                    ),
                });
            }
        };
        Ok(PackageVersion {
            package: target.package,
            version,
        })
    }
}

impl std::fmt::Display for PackageVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.package, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_npm_names() {
        for ok in ["react", "@babel/core", "lodash.merge", "a-b_c.d", "x1"] {
            assert!(package_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn capitals_are_kept_in_unscoped_names_as_npm_serves_them() {
        for ok in ["JSONStream", "Base64", "React"] {
            assert_eq!(package_name(ok).ok(), Some(ok), "{ok}");
        }
        for (bad, why) in [
            ("@Scope/x", "scope must be lowercase"),
            ("@scope/X", "name must be lowercase in a scoped package"),
            ("JSON Stream", "cannot contain ` ` (allowed: a-z A-Z"),
        ] {
            let err = package_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let t = Target::parse("JSONStream@1.3.5/index.js").unwrap();
        assert_eq!(t.package, "JSONStream");
    }

    #[test]
    fn refuses_bad_names_with_a_reason() {
        for (bad, why) in [
            ("", "empty"),
            ("@scope/React", "lowercase"),
            (".hidden", "cannot start"),
            ("_x", "cannot start"),
            ("a b", "cannot contain ` `"),
            ("@scope", "scoped name"),
            ("@/x", "scope is empty"),
            ("a/b", "cannot contain `/`"),
            ("node_modules", "reserved"),
        ] {
            let err = package_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(package_name(&"a".repeat(215)).is_err());
    }

    #[test]
    fn targets_split_scope_version_and_path() {
        let t = Target::parse("@scope/name@1.2.3/js/a b.js").unwrap();
        assert_eq!(t.package, "@scope/name");
        assert_eq!(
            t.exact_version().map(|v| v.to_string()).as_deref(),
            Some("1.2.3")
        );
        assert_eq!(t.path.as_deref(), Some("js/a b.js"));
        let t = Target::parse("app").unwrap();
        assert_eq!((t.version, t.path), (None, None));
        let t = Target::parse("app@2.0.0-rc.1").unwrap();
        assert_eq!(
            t.exact_version().map(|v| v.to_string()).as_deref(),
            Some("2.0.0-rc.1")
        );
        let t = Target::parse("app@^1.2/x").unwrap();
        assert_eq!(t.version.map(|s| s.to_string()).as_deref(), Some("^1.2"));
        assert!(Target::parse("app@/x").is_err());
        assert!(Target::parse("@App/app@1.0.0").is_err());
        assert_eq!(
            Target::parse("app@beta").unwrap().version,
            Some(Selector::Tag("beta".into()))
        );
        assert!(
            Target::parse("app@ba nana").is_err(),
            "the selector is checked"
        );
    }

    #[test]
    fn shapes_name_the_form_they_expect() {
        let file = |s| Target::parse_as(s, Part::Required, Part::Required, "PKG@VERSION/PATH");
        assert!(file("app@1.0.0/a.js").is_ok());
        for bad in ["app@1.0.0", "app", "app@1.0.0/"] {
            let err = file(bad).unwrap_err().to_string();
            assert!(err.contains("expected PKG@VERSION/PATH"), "{bad}: {err}");
        }
        let no_path = |s| Target::parse_as(s, Part::Optional, Part::Refused, "PKG[@VERSION]");
        assert!(no_path("app").is_ok() && no_path("app@latest").is_ok());
        assert!(no_path("app@1.0.0/a.js").is_err());
    }

    #[test]
    fn mistyped_versions_are_told_in_semver_s_words() {
        for (bad, why) in [
            ("01.0.0", "the major version `01` has a leading zero"),
            ("1.00.0", "the minor version `00` has a leading zero"),
            (
                "1.0.0.0",
                "a version has three parts, MAJOR.MINOR.PATCH; `1.0.0.0` has four",
            ),
            ("1.0.0-", "empty pre-release identifier after `-`"),
            ("1.0.0-rc..1", "empty pre-release identifier in `rc..1`"),
            (
                "1.0.0-rc.01",
                "numeric pre-release identifier `01` has a leading zero",
            ),
            ("1.0.0+", "empty build metadata identifier after `+`"),
            ("1.0.0+b.", "empty build metadata identifier in `b.`"),
            ("1.0.x1", "the patch version `x1` is not a number"),
            ("1..0", "the minor version is empty"),
        ] {
            for err in [
                version("app", bad).unwrap_err(),
                Selector::parse("app", bad).unwrap_err(),
                PackageVersion::parse(&format!("app@{bad}")).unwrap_err(),
                Target::parse(&format!("app@{bad}/a.js")).unwrap_err(),
            ] {
                let err = err.to_string();
                assert!(
                    err.contains(&format!("invalid version `{bad}` for app: {why}")),
                    "{bad}: {err}"
                );
            }
            assert!(tag_name(bad).is_err(), "{bad} is no tag");
        }
        // Build metadata with leading zeros is fine; so are tags with digits.
        assert!(version("app", "1.0.0+001").is_ok());
        assert!(version("app", "1.0.0-rc.1+build.5").is_ok());
        for tag in ["2024-release", "v2-lts", "rc.2"] {
            assert_eq!(
                Selector::parse("app", tag).unwrap(),
                Selector::Tag(tag.into())
            );
        }
    }

    #[test]
    fn a_version_to_publish_is_exact() {
        let pv = PackageVersion::parse("@scope/app@2.0.0-rc.1").unwrap();
        assert_eq!(pv.to_string(), "@scope/app@2.0.0-rc.1");
        for (bad, needle) in [
            ("rxjs@1.0", "`1.0`"),
            ("rxjs@latest", "exact"),
            ("rxjs", "expected PKG@VERSION"),
            ("rxjs@1.0.0/a.js", "expected PKG@VERSION"),
            ("rxjs@v1.0.0", "`v1.0.0`"),
        ] {
            let err = PackageVersion::parse(bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }

    #[test]
    fn tag_names_follow_npm() {
        for ok in [
            "latest",
            "next",
            "beta",
            "v1-lts",
            "latest-1",
            "Canary",
            "rc.2",
            "x-y_z!~*'()",
        ] {
            assert_eq!(tag_name(ok).ok(), Some(ok), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a b", "cannot contain ` `"),
            ("a/b", "cannot contain `/`"),
            ("né", "cannot contain `é`"),
            ("^1.2", "cannot contain `^`"),
            ("..", "URL path"),
            ("1", "parses as a semver"),
            ("1.4", "parses as a semver"),
            ("1.2.3", "parses as a semver"),
            ("2.0.0-rc.1", "parses as a semver"),
            ("~1.2", "parses as a semver"),
            ("*", "parses as a semver"),
            ("x", "parses as a semver"),
            ("1.x", "parses as a semver"),
            ("v1", "parses as a semver"),
            ("v1.2.3", "parses as a semver"),
        ] {
            let err = tag_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
            assert!(err.contains(&format!("`{bad}`")), "{bad:?}: {err}");
        }
        assert!(tag_name(&"t".repeat(215)).is_err());
    }

    #[test]
    fn selectors_follow_npm() {
        let vs: Vec<Version> = ["1.3.9", "1.4.0", "1.4.7", "1.5.0", "2.0.0-rc.1"]
            .iter()
            .map(|v| Version::parse(v).unwrap())
            .collect();
        let pick = |s: &str| {
            Selector::parse("p", s)
                .unwrap()
                .pick(&vs)
                .map(|v| v.to_string())
        };
        assert_eq!(pick("latest").as_deref(), Some("1.5.0"));
        assert_eq!(pick("1.4").as_deref(), Some("1.4.7"));
        assert_eq!(pick("1").as_deref(), Some("1.5.0"));
        assert_eq!(pick("^1.2").as_deref(), Some("1.5.0"));
        assert_eq!(pick("~1.4.0").as_deref(), Some("1.4.7"));
        assert_eq!(pick("1.4.0").as_deref(), Some("1.4.0"));
        assert_eq!(pick("2").as_deref(), None);
        assert_eq!(pick("2.0.0-rc.1").as_deref(), Some("2.0.0-rc.1"));
        assert_eq!(pick("banana"), None, "a tag picks nothing by itself");
        assert!(Selector::parse("p", "ban ana").is_err());
        // npm's grammar: alternatives, hyphen ranges, x ranges, comparators.
        assert_eq!(pick("^1.2 || ^2").as_deref(), Some("1.5.0"));
        assert_eq!(pick("~1.3 || ~1.4").as_deref(), Some("1.4.7"));
        assert_eq!(pick("1.3.9 || 1.4.0").as_deref(), Some("1.4.0"));
        assert_eq!(pick("1.3 - 1.4").as_deref(), Some("1.4.7"));
        assert_eq!(pick("1.3.0 - 1.4.0").as_deref(), Some("1.4.0"));
        assert_eq!(pick("1.4.x").as_deref(), Some("1.4.7"));
        assert_eq!(pick("1.X").as_deref(), Some("1.5.0"));
        assert_eq!(pick("*").as_deref(), Some("1.5.0"));
        assert_eq!(pick(">=1.4.1 <1.5").as_deref(), Some("1.4.7"));
        assert_eq!(pick("<1.4").as_deref(), Some("1.3.9"));
        assert_eq!(pick("3 || 4"), None);
        // Cargo's comma between comparators is not npm's grammar.
        assert!(Selector::parse("p", ">=1.2.0, <1.4.5").is_err());
        // A pre-release only for a range that names one of its version.
        assert_eq!(pick(">=1.5").as_deref(), Some("1.5.0"));
        assert_eq!(pick("^2.0.0-rc.0").as_deref(), Some("2.0.0-rc.1"));
        assert_eq!(pick(">=2.0.0-alpha").as_deref(), Some("2.0.0-rc.1"));
        assert_eq!(pick("^2.0.0-rc.2"), None);
        assert_eq!(pick("1.5.0 - 2.0.0").as_deref(), Some("1.5.0"));
        for selector in ["^1.2 || ^2", "1.3 - 1.4", "1.4.x"] {
            assert_eq!(
                Selector::parse("p", selector).unwrap().to_string(),
                selector,
                "a range is shown as typed"
            );
        }
        let only_pre = [Version::parse("3.0.0-beta.2").unwrap()];
        assert_eq!(
            Selector::Latest
                .pick(&only_pre)
                .map(|v| v.to_string())
                .as_deref(),
            Some("3.0.0-beta.2")
        );
    }
}

//! Parsing of what users type to name things: package names, versions,
//! version selectors and `PKG[@VERSION[/PATH]]` targets.
//!
//! Package names follow the npm rules for new packages: lowercase, URL-safe,
//! at most 214 characters, optionally scoped as `@scope/name`. Versions are
//! semver (`1.4.0`, `2.0.0-rc.1`). Selectors, used by read-only commands and
//! later by the server's redirects, follow npm's meaning rather than cargo's:
//! a bare partial version `1.4` is `1.4.x`, `1` is `1.x`, `latest` is the
//! newest release (or the newest pre-release when there is no release).

use crate::error::{Error, Result};
use semver::{Version, VersionReq};

/// Longest package name npm accepts, scope included.
const MAX_NAME_LEN: usize = 214;

/// Checks a package name and returns it unchanged.
pub fn package_name(name: &str) -> Result<&str> {
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
    let bare = match name.strip_prefix('@') {
        Some(scoped) => {
            let (scope, bare) = scoped
                .split_once('/')
                .ok_or_else(|| bad("a scoped name looks like @scope/name"))?;
            name_part(scope).map_err(|why| bad(&format!("scope {why}")))?;
            bare
        }
        None => name,
    };
    name_part(bare).map_err(|why| bad(&format!("name {why}")))?;
    Ok(name)
}

/// One part of a package name (the scope or the bare name).
fn name_part(part: &str) -> std::result::Result<(), String> {
    if part.is_empty() {
        return Err("is empty".into());
    }
    if part.starts_with('.') || part.starts_with('_') {
        return Err("cannot start with `.` or `_`".into());
    }
    if let Some(c) = part
        .chars()
        .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '-' | '.' | '_'))
    {
        let why = if c.is_ascii_uppercase() {
            "must be lowercase".to_string()
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

/// Parses an exact semver version of `package`.
pub fn version(package: &str, input: &str) -> Result<Version> {
    Version::parse(input).map_err(|e| Error::InvalidVersion {
        package: package.to_string(),
        version: input.to_string(),
        why: e.to_string(),
    })
}

/// What a user may write where a version is expected by a read-only command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// One exact version.
    Exact(Version),
    /// The newest release, or the newest pre-release if there is no release.
    Latest,
    /// The newest version that satisfies an npm-style range, with the
    /// range as typed (the semver crate spells some ranges differently).
    Range(VersionReq, String),
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Exact(v) => write!(f, "{v}"),
            Selector::Latest => f.write_str("latest"),
            Selector::Range(_, typed) => f.write_str(typed),
        }
    }
}

impl Selector {
    pub fn parse(package: &str, input: &str) -> Result<Selector> {
        if input == "latest" {
            return Ok(Selector::Latest);
        }
        if let Ok(v) = Version::parse(input) {
            return Ok(Selector::Exact(v));
        }
        // npm reads a bare partial version as a wildcard on the missing parts;
        // the semver crate spells that `=1.4`, while a bare `1.4` would be `^1.4`.
        let starts_bare = input.starts_with(|c: char| c.is_ascii_digit());
        let req = if starts_bare && !input.contains([',', ' ', '<', '>', '=', '^', '~']) {
            VersionReq::parse(&format!("={input}"))
        } else {
            VersionReq::parse(input)
        };
        req.map(|req| Selector::Range(req, input.to_string()))
            .map_err(|e| Error::InvalidVersion {
                package: package.to_string(),
                version: input.to_string(),
                why: format!("not a version, `latest` or a range: {e}"),
            })
    }

    /// Picks the newest of `versions` that this selector accepts.
    pub fn pick<'a>(&self, versions: impl IntoIterator<Item = &'a Version>) -> Option<&'a Version> {
        let versions = versions.into_iter();
        match self {
            Selector::Exact(want) => versions.into_iter().find(|v| *v == want),
            Selector::Latest => {
                let all: Vec<&Version> = versions.collect();
                let newest_release = all.iter().filter(|v| v.pre.is_empty()).max().copied();
                newest_release.or_else(|| all.into_iter().max())
            }
            Selector::Range(req, _) => versions.filter(|v| req.matches(v)).max(),
        }
    }
}

/// `PKG[@VERSION[/PATH]]`, as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub package: String,
    pub version: Option<String>,
    pub path: Option<String>,
}

impl Target {
    /// Splits a target; the package name is checked, the version is left as
    /// text for the command to read as an exact version or a selector.
    pub fn parse(input: &str) -> Result<Target> {
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
            version: version.map(str::to_string),
            path: path.map(str::to_string),
        })
    }

    /// The target with a required version; `what` names the command's need.
    pub fn require_version(&self, input: &str, form: &str) -> Result<&str> {
        self.version.as_deref().ok_or_else(|| Error::InvalidSpec {
            what: "target",
            input: input.to_string(),
            why: format!("expected {form}"),
        })
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
    fn refuses_bad_names_with_a_reason() {
        for (bad, why) in [
            ("", "empty"),
            ("React", "lowercase"),
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
        assert_eq!(t.version.as_deref(), Some("1.2.3"));
        assert_eq!(t.path.as_deref(), Some("js/a b.js"));
        let t = Target::parse("app").unwrap();
        assert_eq!((t.version, t.path), (None, None));
        let t = Target::parse("app@2.0.0-rc.1").unwrap();
        assert_eq!(t.version.as_deref(), Some("2.0.0-rc.1"));
        assert!(Target::parse("app@/x").is_err());
        assert!(Target::parse("App@1.0.0").is_err());
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
        assert!(Selector::parse("p", "banana").is_err());
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

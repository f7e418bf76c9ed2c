//! What a 404 for an asset, a listing or a version names: the first of
//! package, version or file that the catalog does not hold.
//!
//! The store answers a miss with "nothing there"; only then, off the hot
//! path, [`diagnose`] asks it whether the package has any version and
//! whether the exact version exists, so a client learns which part of its
//! URL is wrong:
//!
//! ```text
//! /assets/nope/1.0.0/a.js   package `nope` is not in the catalog
//! /assets/app/1.2.3/a.js    app has no version 1.2.3
//! /assets/app/^9/a.js       no version of app matches ^9
//! /assets/app/beta/a.js     app has no dist-tag `beta`
//! /assets/app/1.0.0/b.js    app@1.0.0 has no file b.js
//! ```
//!
//! The JSON body keeps the `{status, error}` shape of every error ccc
//! sends and adds `missing` (`package`, `version`, `tag` or `file`) with the
//! parts of the request it concerns, as asked:
//! `{"status":404,"error":"app has no version 1.2.3","missing":"version","package":"app","version":"1.2.3"}`.
//! A part longer than [`ECHO_MAX`] characters is shortened in the middle
//! (`aaaa…zzzz`), so that an error stays small whatever the request.

use crate::spec::Selector;
use serde::Serialize;

/// Longest request part a 404 repeats whole, in characters.
pub(crate) const ECHO_MAX: usize = 100;

/// The part of a request the catalog lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "missing", rename_all = "lowercase")]
pub(crate) enum Missing {
    /// The package has no version at all.
    Package { package: String },
    /// The package exists; this exact version does not.
    Version { package: String, version: String },
    /// The package exists; no version satisfies the range (or `latest`).
    #[serde(rename = "version")]
    NoMatch {
        package: String,
        #[serde(rename = "version")]
        range: String,
    },
    /// The package exists; it has no such dist-tag.
    Tag { package: String, tag: String },
    /// The version exists; this file is not in it. `did_you_mean` is its
    /// path under another case, when the version holds one.
    File {
        package: String,
        version: String,
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        did_you_mean: Option<String>,
    },
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::Package { package } => write!(f, "package `{package}` is not in the catalog"),
            Missing::Version { package, version } => {
                write!(f, "{package} has no version {version}")
            }
            Missing::NoMatch { package, range } => {
                write!(f, "no version of {package} matches {range}")
            }
            Missing::Tag { package, tag } => write!(f, "{package} has no dist-tag `{tag}`"),
            Missing::File {
                package,
                version,
                path,
                did_you_mean: None,
            } => write!(f, "{package}@{version} has no file {path}"),
            Missing::File {
                package,
                version,
                path,
                did_you_mean: Some(other),
            } => write!(
                f,
                "{package}@{version} has no file {path}; paths are case-sensitive: did you mean {other}?"
            ),
        }
    }
}

/// The body of a 404 that names what is missing.
#[derive(Debug, Serialize)]
pub(crate) struct Body<'a> {
    pub status: u16,
    pub error: String,
    #[serde(flatten)]
    pub missing: &'a Missing,
}

impl<'a> Body<'a> {
    pub(crate) fn new(missing: &'a Missing) -> Body<'a> {
        Body {
            status: 404,
            error: missing.to_string(),
            missing,
        }
    }
}

/// Names what is missing after `asked` (and `path`, empty for a listing or
/// a redirect) of `package` found nothing. `picks` tells whether a selector
/// picks any version of the package now; it is asked at most twice.
///
/// The catalog may change between the miss and this question (another
/// process publishes); the answer then describes the catalog as it is now,
/// falling back to the most specific part when everything exists.
pub(crate) fn diagnose<E>(
    package: &str,
    asked: &Selector,
    path: &str,
    mut picks: impl FnMut(&Selector) -> Result<bool, E>,
) -> Result<Missing, E> {
    let package = echo(package);
    if !picks(&Selector::Latest)? {
        return Ok(Missing::Package { package });
    }
    Ok(match asked {
        Selector::Exact(version) if path.is_empty() || !picks(asked)? => Missing::Version {
            package,
            version: echo(&version.to_string()),
        },
        Selector::Exact(version) => Missing::File {
            package,
            version: echo(&version.to_string()),
            path: echo(path),
            did_you_mean: None,
        },
        Selector::Latest | Selector::Range(..) => Missing::NoMatch {
            package,
            range: echo(&asked.to_string()),
        },
        Selector::Tag(tag) => Missing::Tag {
            package,
            tag: echo(tag),
        },
    })
}

/// `text`, or its first and last characters around a `…` when it is longer
/// than [`ECHO_MAX`].
fn echo(text: &str) -> String {
    let count = text.chars().count();
    if count <= ECHO_MAX {
        return text.to_string();
    }
    let head = (ECHO_MAX - 1) / 2;
    let tail = ECHO_MAX - 1 - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// A catalog holding only `app@1.0.0` and `app@1.1.0`.
    fn picks(selector: &Selector) -> Result<bool, Infallible> {
        let held = [semver::Version::new(1, 0, 0), semver::Version::new(1, 1, 0)];
        Ok(selector.pick(held.iter()).is_some())
    }

    fn diagnosed(package: &str, asked: &str, path: &str) -> Missing {
        let selector = Selector::parse(package, asked).expect("selector");
        let catalog = |s: &Selector| {
            if package == "app" {
                picks(s)
            } else {
                Ok(false)
            }
        };
        match diagnose(package, &selector, path, catalog) {
            Ok(missing) => missing,
            Err(never) => match never {},
        }
    }

    #[test]
    fn names_the_first_missing_part() {
        let cases = [
            (
                "nope",
                "1.0.0",
                "a.js",
                "package `nope` is not in the catalog",
            ),
            ("nope", "latest", "", "package `nope` is not in the catalog"),
            ("nope", "^1", "a.js", "package `nope` is not in the catalog"),
            ("app", "1.2.3", "a.js", "app has no version 1.2.3"),
            ("app", "1.2.3", "", "app has no version 1.2.3"),
            ("app", "^9", "a.js", "no version of app matches ^9"),
            ("app", "~1.4.0", "", "no version of app matches ~1.4.0"),
            ("app", "beta", "a.js", "app has no dist-tag `beta`"),
            ("app", "1.0.0", "a/b.js", "app@1.0.0 has no file a/b.js"),
        ];
        for (package, asked, path, want) in cases {
            let got = diagnosed(package, asked, path).to_string();
            assert_eq!(got, want, "{package} {asked} {path:?}");
        }
    }

    #[test]
    fn asks_the_catalog_at_most_twice_and_only_what_it_needs() {
        let mut asked = Vec::new();
        let exact = Selector::parse("app", "1.0.0").expect("selector");
        let missing = diagnose("app", &exact, "x.js", |s| {
            asked.push(s.to_string());
            picks(s)
        });
        assert_eq!(asked, ["latest", "1.0.0"]);
        assert!(matches!(missing, Ok(Missing::File { .. })));
        // A range past the package check needs no second question.
        let mut count = 0;
        let range = Selector::parse("app", "^9").expect("selector");
        let _ = diagnose("app", &range, "x.js", |s| {
            count += 1;
            picks(s)
        });
        assert_eq!(count, 1);
        // Errors from the catalog are passed on.
        let failed = diagnose("app", &exact, "x.js", |_| Err("catalog is busy"));
        assert_eq!(failed, Err("catalog is busy"));
    }

    #[test]
    fn long_parts_are_shortened_in_the_middle() {
        let long = format!("{}{}", "a".repeat(300), "日".repeat(300));
        let Missing::File { path, .. } = diagnosed("app", "1.0.0", &long) else {
            panic!("a file is missing");
        };
        assert_eq!(path.chars().count(), ECHO_MAX);
        assert_eq!(path, format!("{}…{}", "a".repeat(49), "日".repeat(50)));
        let fits = "b".repeat(ECHO_MAX);
        let Missing::File { path, .. } = diagnosed("app", "1.0.0", &fits) else {
            panic!("a file is missing");
        };
        assert_eq!(path, fits);
        let version = format!("1.0.0-{}", "x".repeat(500));
        let missing = diagnosed("app", &version, "");
        assert!(missing.to_string().len() < 2 * ECHO_MAX, "{missing}");
    }

    #[test]
    fn bodies_say_what_is_missing() {
        let body = |m: Missing| serde_json::to_value(Body::new(&m)).expect("json");
        assert_eq!(
            body(diagnosed("nope", "1.0.0", "a.js")),
            serde_json::json!({
                "status": 404,
                "error": "package `nope` is not in the catalog",
                "missing": "package",
                "package": "nope",
            })
        );
        assert_eq!(
            body(diagnosed("app", "^9", "a.js")),
            serde_json::json!({
                "status": 404,
                "error": "no version of app matches ^9",
                "missing": "version",
                "package": "app",
                "version": "^9",
            })
        );
        assert_eq!(
            body(diagnosed("app", "next", "")),
            serde_json::json!({
                "status": 404,
                "error": "app has no dist-tag `next`",
                "missing": "tag",
                "package": "app",
                "tag": "next",
            })
        );
        assert_eq!(
            body(diagnosed("app", "1.2.3", "")),
            serde_json::json!({
                "status": 404,
                "error": "app has no version 1.2.3",
                "missing": "version",
                "package": "app",
                "version": "1.2.3",
            })
        );
        assert_eq!(
            body(diagnosed("app", "1.0.0", "a/b.js")),
            serde_json::json!({
                "status": 404,
                "error": "app@1.0.0 has no file a/b.js",
                "missing": "file",
                "package": "app",
                "version": "1.0.0",
                "path": "a/b.js",
            })
        );
    }
}

//! Version selectors pick what npm picks: for real packages on the npm
//! registry, the versions a range selects in ccc (URLs and the command
//! line) are the versions `npm view PKG@RANGE version` lists, and the one
//! ccc serves is the newest of them. The ranges cover npm's grammar where
//! cargo's differs: `||`, hyphen ranges, `x` ranges and pre-releases.

use ccc::testing::{Selector, satisfies};
use semver::Version;
use std::process::Command;

/// `npm view ARGS --json`, parsed; `None` for npm's "no match" (E404).
fn npm_view(args: &[&str]) -> Option<serde_json::Value> {
    let out = Command::new("npm")
        .args(["view", "--json"])
        .args(args)
        .output()
        .expect("npm runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "npm view {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    if json["error"]["code"] == "E404" {
        return None;
    }
    assert!(out.status.success(), "npm view {args:?}: {json}");
    Some(json)
}

/// A JSON string or array of strings as versions.
fn versions(json: &serde_json::Value) -> Vec<Version> {
    let list = match json {
        serde_json::Value::Array(list) => list.clone(),
        one => vec![one.clone()],
    };
    list.iter()
        .map(|v| Version::parse(v.as_str().expect("a version string")).expect("semver"))
        .collect()
}

#[test]
#[ignore = "needs npm and the npm registry; .ci/run provides them"]
fn ranges_select_what_npm_selects_on_real_packages() {
    for (package, range) in [
        ("react", "^17 || ^18.2"),
        ("react", "16.8 - 16.9"),
        ("react", "18.x"),
        ("react", ">=19.0.0-rc.0 <19.0.0"),
        ("react", "^19.0.0-rc || 15.x"),
        ("lodash", "4.17.x || 3.10"),
        ("lodash", "3 - 4.1"),
        ("typescript", "5.0.0-beta - 5.0.2"),
        ("typescript", "~5.4.0-0"),
        ("typescript", "^99"),
    ] {
        let published = versions(&npm_view(&[package, "versions"]).expect("the package"));
        let npm = npm_view(&[&format!("{package}@{range}"), "version"])
            .map(|json| versions(&json))
            .unwrap_or_default();
        let Selector::Range(parsed, _) = Selector::parse(package, range).expect("a selector")
        else {
            panic!("`{range}` is not read as a range");
        };
        let ccc: Vec<Version> = published
            .iter()
            .filter(|v| satisfies(&parsed, v))
            .cloned()
            .collect();
        let mut npm_sorted = npm.clone();
        npm_sorted.sort();
        let mut ccc_sorted = ccc.clone();
        ccc_sorted.sort();
        assert_eq!(ccc_sorted, npm_sorted, "{package}@{range}");
        let selector = Selector::parse(package, range).expect("a selector");
        assert_eq!(
            selector.pick(&published),
            npm_sorted.last(),
            "{package}@{range}: the newest npm lists"
        );
    }
}

//! CommonJS entry points, which a browser cannot import: react 18's
//! `index.js` is `module.exports = require('./cjs/react.production.min.js')`,
//! so `import React from 'react'` fails in the browser with "does not
//! provide an export named 'default'" (or on `require` itself). An import
//! map that sent `react` there would fail the same way, so [`super`]
//! leaves such a specifier out, saying why, and `ccc check` and publish
//! say it of a version whose own entry point is one
//! ([`note_commonjs_entry`]), both naming the ES module builds to use
//! instead ([`alternatives`]).
//!
//! Whether a script is CommonJS is read by oxc ([`crate::refs::js`]): no
//! `import` or `export` anywhere, and `require`, `module` or `exports`
//! used.

use super::manifest::Manifest;
use crate::refs::check::{CommonJsEntry, Report};

/// Packages whose browser users have a known ES module stand-in, and the
/// words that name it.
const KNOWN: &[(&str, &str)] = &[
    (
        "react",
        "Preact's `preact/compat` (npm's preact) is an ES module stand-in for react and \
         react-dom (map both to it); @esm-bundle/react and @esm-bundle/react-dom are React \
         17 built as ES modules; or bundle the app with Vite or esbuild",
    ),
    (
        "react-dom",
        "Preact's `preact/compat` (npm's preact) is an ES module stand-in for react and \
         react-dom (map both to it); @esm-bundle/react and @esm-bundle/react-dom are React \
         17 built as ES modules; or bundle the app with Vite or esbuild",
    ),
];

/// The ES module builds to use instead of `package`'s CommonJS, in words.
pub(crate) fn alternatives(package: &str) -> String {
    match KNOWN.iter().find(|(name, _)| *name == package) {
        Some((_, words)) => format!("use an ES module build: {words}"),
        None => format!(
            "use an ES module build: a version of {package} (or a fork) whose package.json \
             has `module` or an `import` condition, or bundle it (esbuild --bundle \
             --format=esm)"
        ),
    }
}

/// Fills in `report.commonjs_entry` when the entry point of `package`
/// (what `import 'PKG'` loads, read from its `package.json` as import maps
/// read it) is one of the CommonJS scripts the check found.
pub(crate) fn note_commonjs_entry(package: &str, report: &mut Report) {
    if report.commonjs.is_empty() {
        return;
    }
    let Some(manifest) = report
        .manifest
        .as_deref()
        .and_then(|bytes| Manifest::parse(bytes).ok())
    else {
        return;
    };
    let paths: std::collections::HashSet<&str> = report.paths.iter().map(String::as_str).collect();
    if let Ok(file) = manifest.resolve(".", |path| paths.contains(path))
        && report.commonjs.contains(&file)
    {
        report.commonjs_entry = Some(CommonJsEntry {
            file,
            alternatives: alternatives(package),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(manifest: &str, paths: &[&str], commonjs: &[&str]) -> Report {
        Report {
            manifest: Some(manifest.as_bytes().to_vec()),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            commonjs: commonjs.iter().map(|p| p.to_string()).collect(),
            ..Report::default()
        }
    }

    #[test]
    fn a_commonjs_entry_is_named_with_its_alternatives() {
        // react@18.3.1.
        let mut react = report(
            r#"{"name": "react", "main": "index.js"}"#,
            &["cjs/react.production.min.js", "index.js", "package.json"],
            &["cjs/react.production.min.js", "index.js"],
        );
        note_commonjs_entry("react", &mut react);
        let entry = react.commonjs_entry.expect("react's index.js");
        assert_eq!(entry.file, "index.js");
        assert!(entry.alternatives.contains("preact/compat"), "{entry}");
        assert!(
            entry
                .to_string()
                .starts_with("its entry point index.js is CommonJS, which a browser cannot import"),
            "{entry}"
        );
        // An `exports` whose browser condition is an ES module is fine,
        // whatever its `main` is.
        let mut dual = report(
            r#"{"main": "dist/x.cjs", "exports": {".": {"import": "./dist/x.mjs", "require": "./dist/x.cjs"}}}"#,
            &["dist/x.cjs", "dist/x.mjs"],
            &["dist/x.cjs"],
        );
        note_commonjs_entry("x", &mut dual);
        assert_eq!(dual.commonjs_entry, None);
        let mut other = report(r#"{"main": "lib.js"}"#, &["lib.js"], &["lib.js"]);
        note_commonjs_entry("left-pad", &mut other);
        let entry = other.commonjs_entry.expect("lib.js");
        assert!(entry.alternatives.contains("esbuild"), "{entry}");
    }
}

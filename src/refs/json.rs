//! References in JSON: a web manifest's icons, and the entry points of
//! the version's `package.json` (`main`, `module`, `browser`, `exports`).

use super::{Kind, Reference};
use serde_json::Value;

/// The `src` of every icon (and screenshot) of a web manifest.
pub(crate) fn manifest_icons(text: &str) -> Vec<Reference> {
    let Ok(manifest) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut refs = Vec::new();
    for list in ["icons", "screenshots"] {
        for icon in manifest[list].as_array().into_iter().flatten() {
            if let Some(src) = icon["src"].as_str() {
                refs.push(at(text, src, Kind::ManifestIcon));
            }
        }
    }
    refs
}

/// The files `package.json` names as entry points: `main`, `module`,
/// `browser` (a path, or a map whose values are paths or `false`), whose
/// extension or folder index may be left off ([`Kind::PackageMain`]), and
/// every path in `exports`, conditions and subpaths included, taken as
/// written. Subpath patterns (`./*`) name no one file and are left out.
pub(crate) fn package_entries(text: &str) -> Vec<Reference> {
    let Ok(manifest) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut loaded = Vec::new();
    for field in ["main", "module"] {
        if let Some(path) = manifest[field].as_str() {
            loaded.push(path.to_string());
        }
    }
    match &manifest["browser"] {
        Value::String(path) => loaded.push(path.clone()),
        Value::Object(map) => {
            loaded.extend(map.values().filter_map(|v| v.as_str()).map(String::from))
        }
        _ => {}
    }
    let mut exported = Vec::new();
    exports(&manifest["exports"], &mut exported);
    let kinds = std::iter::repeat_n(Kind::PackageMain, loaded.len())
        .chain(std::iter::repeat_n(Kind::PackageEntry, exported.len()));
    loaded
        .into_iter()
        .chain(exported)
        .zip(kinds)
        // An empty `main` (a package of types only) names no file.
        .filter(|(p, _)| !p.is_empty() && !p.contains('*'))
        .map(|(path, kind)| {
            // Entry points are relative to the package's root, with or
            // without `./`.
            let written = if path.starts_with("./") || path.starts_with("../") {
                path
            } else {
                format!("./{path}")
            };
            at(text, &written, kind)
        })
        .collect()
}

/// The `main` of a `package.json`: what Node loads for `require('./')`
/// in the package's root folder. None without one, or an empty one.
pub(crate) fn main(text: &str) -> Option<String> {
    let manifest = serde_json::from_str::<Value>(text).ok()?;
    let main = manifest["main"].as_str()?;
    (!main.is_empty()).then(|| main.to_string())
}

fn exports(value: &Value, paths: &mut Vec<String>) {
    match value {
        Value::String(path) => paths.push(path.clone()),
        Value::Array(list) => list.iter().for_each(|v| exports(v, paths)),
        Value::Object(map) => map.values().for_each(|v| exports(v, paths)),
        _ => {}
    }
}

/// A reference to `written`, at its first appearance in `text` (JSON
/// keeps no positions; the first string equal to it is where it is
/// written in every manifest but a contrived one).
fn at(text: &str, written: &str, kind: Kind) -> Reference {
    let bare = written.strip_prefix("./").unwrap_or(written);
    let offset = text
        .find(&format!("\"{written}\""))
        .or_else(|| text.find(&format!("\"{bare}\"")));
    let (line, column) = offset.map_or((1, 1), |o| super::Lines::of(text).at(o + 1));
    Reference {
        kind,
        written: written.to_string(),
        line,
        column,
        runtime: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_is_read_when_it_names_a_file() {
        assert_eq!(main(r#"{"main": "lib/a.js"}"#), Some("lib/a.js".into()));
        assert_eq!(main(r#"{"main": ""}"#), None);
        assert_eq!(main(r#"{"module": "a.js"}"#), None);
        assert_eq!(main("not json"), None);
    }

    #[test]
    fn package_entry_points_are_read() {
        let text = r#"{
  "name": "lib", "main": "index.js", "module": "./esm/index.js",
  "browser": {"./node.js": "./browser.js", "fs": false},
  "exports": {".": {"import": "./esm/index.js", "require": "./cjs/index.js"}, "./feature/*": "./feature/*.js", "./package.json": "./package.json"}
}"#;
        let written: Vec<String> = package_entries(text)
            .into_iter()
            .map(|r| r.written)
            .collect();
        assert_eq!(
            written,
            [
                "./index.js",
                "./esm/index.js",
                "./browser.js",
                "./esm/index.js",
                "./cjs/index.js",
                "./package.json"
            ]
        );
    }

    #[test]
    fn main_module_and_browser_may_leave_off_an_extension_and_exports_may_not() {
        let text = r#"{"main": "lib/main", "module": "esm", "browser": "./web.js",
            "exports": {".": "./lib/main", "./web": "./web.js"}}"#;
        let files = ["package.json", "lib/main.js", "esm/index.mjs", "web.js"];
        let version = crate::refs::Version::new("lib", "1.0.0", files.into_iter());
        let found: Vec<(String, crate::refs::Class)> = package_entries(text)
            .iter()
            .map(|r| (r.written.clone(), version.resolve("package.json", r)))
            .collect();
        use crate::refs::Class::{Found, Missing};
        assert_eq!(
            found,
            [
                ("./lib/main".into(), Found("lib/main.js".into())),
                ("./esm".into(), Found("esm/index.mjs".into())),
                ("./web.js".into(), Found("web.js".into())),
                ("./lib/main".into(), Missing),
                ("./web.js".into(), Found("web.js".into())),
            ]
        );
    }

    #[test]
    fn manifest_icons_are_read() {
        let text =
            r#"{"name": "app", "icons": [{"src": "icons/192.png"}, {"src": "/icons/512.png"}]}"#;
        let refs = manifest_icons(text);
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].written, "icons/192.png");
    }
}

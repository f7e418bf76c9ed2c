//! `package.json`: the name and version a package gives itself, read by
//! `ccc publish` when it is not told `PKG@VERSION`, and the entry file the
//! server sends a version's bare URL to ([`entry_file`]).
//!
//! For publishing only `name` and `version` matter, and both are held to
//! the rules of a typed `PKG@VERSION` (npm's names, capitals kept as in
//! `JSONStream`, and strict semver; see [`crate::spec`]), so a manifest can
//! never publish what the command line could not.

use super::rows::Identity;
use crate::error::{Error, Result};
use std::path::Path;

/// Largest `package.json` read: real ones are a few KiB; this bounds what
/// a hostile one can make the parser allocate.
pub(crate) const MAX_MANIFEST_SIZE: u64 = 1 << 20;

/// The package and version `bytes`, a `package.json`, names. `whence`
/// says where it was found, for errors.
pub(crate) fn identity(bytes: &[u8], whence: &Path) -> Result<Identity> {
    let bad = |what: String| Error::bad_input(whence, what);
    if bytes.len() as u64 > MAX_MANIFEST_SIZE {
        return Err(bad(format!(
            "is over {} (a package.json is a few KiB)",
            crate::units::human_size(MAX_MANIFEST_SIZE)
        )));
    }
    let json: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("is not valid JSON: {e}")))?;
    let field = |key: &str| match json.get(key) {
        Some(serde_json::Value::String(s)) => Ok(s.as_str()),
        Some(_) => Err(bad(format!("`{key}` is not a string"))),
        None if json.is_object() => Err(bad(format!("has no `{key}`"))),
        None => Err(bad("is not a JSON object".into())),
    };
    let name = field("name")?;
    crate::spec::package_name(name).map_err(|e| bad(format!("`name`: {e}")))?;
    let version = crate::spec::version(name, field("version")?)
        .map_err(|e| bad(format!("`version`: {e}")))?;
    Ok((name.to_string(), version))
}

/// The identity named by `DIR/package.json`.
pub(crate) fn of_dir(dir: &Path) -> Result<Identity> {
    use std::io::Read;
    let path = dir.join("package.json");
    let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::bad_input(
            dir,
            "has no package.json to name the package and version; \
             give them: `ccc publish PKG@VERSION DIR`",
        ),
        _ => Error::io(&path, e),
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&path, e))?;
    identity(&bytes, &path)
}

/// Conditions of an `exports` target that ccc follows, by preference: it
/// serves browsers, and ES modules over whatever `default` is.
const CONDITIONS: [&str; 3] = ["browser", "import", "default"];

/// The file of a version that its bare URL (`/assets/PKG/VERSION`) leads
/// to, as unpkg and jsDelivr pick it. With a `package.json` (`manifest`):
/// its `exports` entry for `.` (a path, a fallback list, or conditions, of
/// which `browser`, then `import`, then `default` are followed, nested ones
/// too), else `module`, else `main` (these two also as `PATH.js` and
/// `PATH/index.js`, as Node resolves `main`). Without one, or when none of
/// those names a file of the version, `index.html`, then `index.js`.
/// `has` tells whether the version has a file; None when no rule finds one.
pub(crate) fn entry_file(
    manifest: Option<&[u8]>,
    mut has: impl FnMut(&str) -> bool,
) -> Option<String> {
    let json: Option<serde_json::Value> = manifest.and_then(|m| serde_json::from_slice(m).ok());
    let mut candidates: Vec<String> = Vec::new();
    if let Some(json) = json.as_ref().filter(|j| j.is_object()) {
        if let Some(exports) = json.get("exports") {
            collect_targets(dot_entry(exports), &mut candidates);
        }
        for field in ["module", "main"] {
            if let Some(path) = json.get(field).and_then(|v| v.as_str()) {
                let path = path.trim_end_matches('/');
                candidates.push(path.to_string());
                candidates.push(format!("{path}.js"));
                candidates.push(format!("{path}/index.js"));
            }
        }
    }
    candidates.extend(["index.html".to_string(), "index.js".to_string()]);
    candidates
        .iter()
        .filter_map(|c| relative(c))
        .find(|path| has(path))
}

/// The target of `.` in an `exports` value: the value itself when it is a
/// path, a list or conditions, its `.` key when it maps subpaths.
fn dot_entry(exports: &serde_json::Value) -> Option<&serde_json::Value> {
    match exports {
        serde_json::Value::Object(map) if map.keys().any(|k| k.starts_with('.')) => map.get("."),
        other => Some(other),
    }
}

/// The paths a target may lead to, in the order they are tried.
fn collect_targets(target: Option<&serde_json::Value>, out: &mut Vec<String>) {
    match target {
        Some(serde_json::Value::String(path)) => out.push(path.clone()),
        Some(serde_json::Value::Array(list)) => {
            for item in list {
                collect_targets(Some(item), out);
            }
        }
        Some(serde_json::Value::Object(conditions)) => {
            for condition in CONDITIONS {
                collect_targets(conditions.get(condition), out);
            }
        }
        _ => {}
    }
}

/// A manifest path as a path in the version (`./dist/a.js` -> `dist/a.js`),
/// or None when it could name nothing inside it.
fn relative(path: &str) -> Option<String> {
    let path = path.trim_start_matches("./").trim_start_matches('/');
    let fine = !path.is_empty()
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    fine.then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manifest: Option<&str>, files: &[&str]) -> Option<String> {
        entry_file(manifest.map(str::as_bytes), |p| files.contains(&p))
    }

    #[test]
    fn entry_files_follow_exports_module_main_then_index() {
        let files = [
            "dist/browser.js",
            "dist/esm.mjs",
            "dist/cjs.js",
            "lib/main.js",
            "lib/dir/index.js",
            "index.html",
            "index.js",
        ];
        let cases = [
            (Some(r#"{"exports":"./dist/esm.mjs"}"#), "dist/esm.mjs"),
            (
                Some(r#"{"exports":{".":{"require":"./dist/cjs.js","import":"./dist/esm.mjs"}}}"#),
                "dist/esm.mjs",
            ),
            (
                Some(
                    r#"{"exports":{"default":"./dist/cjs.js","import":"./dist/esm.mjs","browser":"./dist/browser.js"}}"#,
                ),
                "dist/browser.js",
            ),
            (
                Some(
                    r#"{"exports":{".":{"import":{"types":"./x.d.ts","default":"./dist/esm.mjs"}},"./sub":"./lib/main.js"}}"#,
                ),
                "dist/esm.mjs",
            ),
            (
                Some(r#"{"exports":[{"import":"./missing.mjs"},"./dist/cjs.js"]}"#),
                "dist/cjs.js",
            ),
            (
                Some(r#"{"exports":{"./sub":"./lib/main.js"},"main":"lib/main.js"}"#),
                "lib/main.js",
            ),
            (
                Some(r#"{"module":"dist/esm.mjs","main":"dist/cjs.js"}"#),
                "dist/esm.mjs",
            ),
            (Some(r#"{"main":"./lib/main"}"#), "lib/main.js"),
            (Some(r#"{"main":"lib/dir"}"#), "lib/dir/index.js"),
            (Some(r#"{"main":"../../etc/passwd"}"#), "index.html"),
            (Some(r#"{"main":"missing.js"}"#), "index.html"),
            (Some("not json"), "index.html"),
            (None, "index.html"),
        ];
        for (manifest, want) in cases {
            assert_eq!(
                entry(manifest, &files).as_deref(),
                Some(want),
                "{manifest:?}"
            );
        }
        assert_eq!(
            entry(None, &["index.js", "a.css"]).as_deref(),
            Some("index.js")
        );
        assert_eq!(entry(Some(r#"{"main":"x.js"}"#), &["a.css"]), None);
    }

    fn read(json: &str) -> std::result::Result<String, String> {
        identity(json.as_bytes(), Path::new("package.json"))
            .map(|(name, version)| format!("{name}@{version}"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_versions_follow_the_command_line_rules() {
        assert_eq!(
            read(r#"{"name":"@s/app","version":"2.0.0-rc.1","main":"x.js"}"#).as_deref(),
            Ok("@s/app@2.0.0-rc.1")
        );
        for (json, why) in [
            ("{", "not valid JSON"),
            ("[]", "not a JSON object"),
            (r#"{"version":"1.0.0"}"#, "has no `name`"),
            (r#"{"name":"app"}"#, "has no `version`"),
            (r#"{"name":7,"version":"1.0.0"}"#, "`name` is not a string"),
            (
                r#"{"name":"@s/App","version":"1.0.0"}"#,
                "must be lowercase",
            ),
            (r#"{"name":"app","version":"v1"}"#, "`version`"),
        ] {
            let err = read(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
            assert!(err.starts_with("package.json"), "{json}: {err}");
        }
    }
}

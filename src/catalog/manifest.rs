//! `package.json`: the name and version a package gives itself, read by
//! `ccc publish` when it is not told `PKG@VERSION`.
//!
//! Only `name` and `version` matter, and both are held to the rules of a
//! typed `PKG@VERSION` (npm's names for new packages, strict semver), so a
//! manifest can never publish what the command line could not.

use super::publish::Identity;
use crate::error::{Error, Result};
use std::path::Path;

/// Largest `package.json` read: real ones are a few KiB; this bounds what
/// a hostile one can make the parser allocate.
pub const MAX_MANIFEST_SIZE: u64 = 1 << 20;

/// The package and version `bytes`, a `package.json`, names. `whence`
/// says where it was found, for errors.
pub fn identity(bytes: &[u8], whence: &Path) -> Result<Identity> {
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
pub fn of_dir(dir: &Path) -> Result<Identity> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            (r#"{"name":"App","version":"1.0.0"}"#, "must be lowercase"),
            (r#"{"name":"app","version":"v1"}"#, "`version`"),
        ] {
            let err = read(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
            assert!(err.starts_with("package.json"), "{json}: {err}");
        }
    }
}

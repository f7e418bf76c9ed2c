//! What an import map needs from a version's `package.json`: its entry
//! points (`exports`, `module`, `main`) and the ranges it asks of its
//! dependencies, and how a specifier's subpath (`.`, `./operators`)
//! becomes one of its files, the way Node resolves `exports` with the
//! conditions a browser loading ES modules meets.
//!
//! `exports` is read in its written order: Node takes the first
//! condition of an object that applies, so the order is part of its
//! meaning, and a `serde_json::Value` (a sorted map in this build) would
//! lose it. [`Target`] keeps it.

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;

/// The conditions a browser loading ES modules meets, as Node's
/// resolution names them: of a conditions object, the first key among
/// these (in the object's own order) is followed.
pub(crate) const CONDITIONS: [&str; 4] = ["browser", "import", "module", "default"];

/// A value of `exports`, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A path relative to the package's root (`./dist/index.js`).
    Path(String),
    /// Tried in order, the first that applies wins.
    Fallbacks(Vec<Target>),
    /// Conditions (`import`, `require`, ...) or subpaths (`.`, `./x`), in
    /// written order.
    Map(Vec<(String, Target)>),
    /// `null` (the subpath is not exported) or a value of no meaning here.
    Excluded,
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Target, D::Error> {
        d.deserialize_any(TargetVisitor)
    }
}

struct TargetVisitor;

impl<'de> Visitor<'de> for TargetVisitor {
    type Value = Target;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an exports value: a path, a list or an object")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Target, E> {
        Ok(Target::Path(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Target, E> {
        Ok(Target::Excluded)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Target, E> {
        Ok(Target::Excluded)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Target, E> {
        Ok(Target::Excluded)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Target, E> {
        Ok(Target::Excluded)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Target, E> {
        Ok(Target::Excluded)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Target, A::Error> {
        let mut list = Vec::new();
        while let Some(item) = seq.next_element()? {
            list.push(item);
        }
        Ok(Target::Fallbacks(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Target, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Target>()? {
            entries.push((key, value));
        }
        Ok(Target::Map(entries))
    }
}

/// The fields of `package.json` an import map reads.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Manifest {
    #[serde(default)]
    exports: Option<Target>,
    #[serde(default, deserialize_with = "string_or_none")]
    module: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    main: Option<String>,
    #[serde(default, deserialize_with = "ranges")]
    dependencies: BTreeMap<String, String>,
    #[serde(default, rename = "peerDependencies", deserialize_with = "ranges")]
    peer_dependencies: BTreeMap<String, String>,
    #[serde(default, rename = "optionalDependencies", deserialize_with = "ranges")]
    optional_dependencies: BTreeMap<String, String>,
}

/// A string field, or None when it holds anything else.
fn string_or_none<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(value.as_str().map(String::from))
}

/// A map of package names to ranges; entries whose range is not a string
/// are left out.
fn ranges<'de, D: de::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(value
        .as_object()
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default())
}

/// Where a subpath of a package leads: a file, or every file under a
/// folder (an import map's prefix mapping, `"app/": "…/dist/"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// `subpath` (`.`, `./x`) is the file `file`.
    File { subpath: String, file: String },
    /// Every subpath under `prefix` (`./`, `./features/`) is the file of
    /// the same name under `folder` (``, `dist/`).
    Folder { prefix: String, folder: String },
}

impl Manifest {
    /// The manifest in `bytes`.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("is not a package.json: {e}"))
    }

    /// The range the package asks of `dependency`: from `dependencies`,
    /// else `peerDependencies`, else `optionalDependencies`.
    pub(crate) fn range(&self, dependency: &str) -> Option<&str> {
        [
            &self.dependencies,
            &self.peer_dependencies,
            &self.optional_dependencies,
        ]
        .iter()
        .find_map(|m| m.get(dependency))
        .map(String::as_str)
    }

    /// The subpaths `exports` lists, each with its target; a value that
    /// maps no subpaths (a path, a list, conditions) is the target of `.`.
    fn subpaths(&self) -> Vec<(&str, &Target)> {
        match &self.exports {
            None => Vec::new(),
            Some(Target::Map(entries)) if entries.iter().any(|(k, _)| k.starts_with('.')) => {
                entries.iter().map(|(k, t)| (k.as_str(), t)).collect()
            }
            Some(other) => vec![(".", other)],
        }
    }

    /// The file `subpath` (`.` or `./x`) of the package leads to, given
    /// whether the version `has` a file; Err says why there is none.
    ///
    /// With `exports`, only what it lists: an exact subpath first, then
    /// the pattern (`./*`, `./internal/*.js`) with the longest prefix, as
    /// Node picks. Without it, `.` is `module`, else `main` (each also as
    /// `PATH.js` and `PATH/index.js`), else `index.js`; any other subpath
    /// is the file of that path, or with `.js`, `.mjs` or `/index.js`
    /// added, as Node and bundlers try them.
    pub(crate) fn resolve(
        &self,
        subpath: &str,
        has: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        if self.exports.is_none() {
            return self.resolve_without_exports(subpath, has);
        }
        let subpaths = self.subpaths();
        let exact = subpaths.iter().find(|(key, _)| *key == subpath);
        let (target, star) = match exact {
            Some((_, target)) => (*target, None),
            None => match best_pattern(&subpaths, subpath) {
                Some((target, star)) => (target, Some(star)),
                None => return Err(format!("its `exports` has no `{subpath}`")),
            },
        };
        let Some(path) = follow(target) else {
            return Err(format!(
                "its `exports` gives `{subpath}` no target for a browser ({})",
                CONDITIONS.join(", ")
            ));
        };
        let path = match star {
            // A folder (`"./": "./"`, which older packages still write).
            Some(star) if !path.contains('*') && path.ends_with('/') => format!("{path}{star}"),
            Some(star) => path.replace('*', star),
            None => path.to_string(),
        };
        let file = relative(&path).ok_or_else(|| format!("`{path}` is not inside the package"))?;
        match has(&file) {
            true => Ok(file),
            false => Err(format!(
                "its `exports` names {file}, which it does not hold"
            )),
        }
    }

    fn resolve_without_exports(
        &self,
        subpath: &str,
        has: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let mut candidates = Vec::new();
        if subpath == "." {
            for path in [&self.module, &self.main].into_iter().flatten() {
                candidates.extend(with_extensions(path));
            }
            candidates.push("index.js".to_string());
        } else {
            candidates.extend(with_extensions(subpath));
        }
        candidates
            .into_iter()
            .filter_map(|c| relative(&c))
            .find(|c| has(c))
            .ok_or_else(|| match subpath {
                "." => "neither its `module`, its `main` nor index.js is a file of it".to_string(),
                _ => format!("it has no file {}", subpath.trim_start_matches("./")),
            })
    }

    /// What the package itself offers an importer, for the top of its
    /// own import map: each exact subpath of `exports` that leads to a
    /// file; each pattern as a folder where both sides end in `/*`, else
    /// as every file of `files` it matches; without `exports`, `.` (if
    /// `module`, `main` or index.js gives one) and the whole package as
    /// a folder. The second list says why each
    /// subpath that leads nowhere does so.
    pub(crate) fn entries(&self, files: &[&str]) -> (Vec<Entry>, Vec<(String, String)>) {
        let has = |p: &str| files.binary_search(&p).is_ok();
        let mut entries = Vec::new();
        let mut failed = Vec::new();
        if self.exports.is_none() {
            // A version that names no entry (an app's build) has no `.`,
            // and that is no failure; one that names a missing file is.
            let named = self.module.is_some() || self.main.is_some();
            match self.resolve(".", has) {
                Ok(file) => entries.push(Entry::File {
                    subpath: ".".into(),
                    file,
                }),
                Err(why) if named => failed.push((".".to_string(), why)),
                Err(_) => {}
            }
            entries.push(Entry::Folder {
                prefix: "./".into(),
                folder: String::new(),
            });
            return (entries, failed);
        }
        for (key, target) in self.subpaths() {
            // An excluded subpath (`null`), or one only for Node
            // (`require`, `node`), is no entry of a browser's map.
            let Some(path) = follow(target) else { continue };
            if key.contains('*') {
                entries.extend(pattern_entries(key, path, files));
                continue;
            }
            if key.ends_with('/') {
                let (key, path) = (format!("{key}*"), format!("{path}*"));
                entries.extend(pattern_entries(&key, &path, files));
                continue;
            }
            match self.resolve(key, has) {
                Ok(file) => entries.push(Entry::File {
                    subpath: key.to_string(),
                    file,
                }),
                Err(why) => failed.push((key.to_string(), why)),
            }
        }
        (entries, failed)
    }
}

/// The entries of the pattern `key` (one `*`) whose target is `path`: a
/// folder when both end in `/*`, else one file for each of `files` the
/// target matches.
fn pattern_entries(key: &str, path: &str, files: &[&str]) -> Vec<Entry> {
    let (Some((key_start, key_end)), Some((path_start, path_end))) =
        (key.split_once('*'), path.split_once('*'))
    else {
        return Vec::new();
    };
    if path_end.contains('*') {
        return Vec::new();
    }
    let folder = match (path_start, relative(path_start)) {
        ("./", _) => String::new(),
        (_, None) => return Vec::new(),
        (start, Some(folder)) if start.ends_with('/') => format!("{folder}/"),
        (_, Some(start)) => start,
    };
    let both_folders = key_start.ends_with('/') && (folder.is_empty() || folder.ends_with('/'));
    if key_end.is_empty() && path_end.is_empty() && both_folders {
        return vec![Entry::Folder {
            prefix: key_start.to_string(),
            folder,
        }];
    }
    files
        .iter()
        .filter_map(|file| {
            let star = file.strip_prefix(folder.as_str())?.strip_suffix(path_end)?;
            (!star.is_empty()).then(|| Entry::File {
                subpath: format!("{key_start}{star}{key_end}"),
                file: file.to_string(),
            })
        })
        .collect()
}

/// The pattern (or folder) of `subpaths` that matches `subpath` best
/// (Node's order: the longest part before `*`, then the longest key),
/// with what its `*` (or the rest after the folder) stands for.
fn best_pattern<'a, 's>(
    subpaths: &[(&str, &'a Target)],
    subpath: &'s str,
) -> Option<(&'a Target, &'s str)> {
    subpaths
        .iter()
        .filter_map(|(key, target)| {
            // A key ending in `/` maps a folder: a pattern with its `*`
            // at the end.
            let (start, end) = match key.split_once('*') {
                Some(parts) => parts,
                None if key.ends_with('/') => (*key, ""),
                None => return None,
            };
            if end.contains('*') || subpath.len() < start.len() + end.len() {
                return None;
            }
            let star = subpath.strip_prefix(start)?.strip_suffix(end)?;
            Some(((start.len(), key.len()), *target, star))
        })
        .max_by_key(|(rank, _, _)| *rank)
        .map(|(_, target, star)| (target, star))
}

/// The path `target` leads a browser to: a path as it is; of a list, the
/// first that leads anywhere; of conditions, the first (in written
/// order) among [`CONDITIONS`] that does.
fn follow(target: &Target) -> Option<&str> {
    match target {
        Target::Path(path) => Some(path),
        Target::Fallbacks(list) => list.iter().find_map(follow),
        Target::Map(entries) => entries
            .iter()
            .filter(|(k, _)| CONDITIONS.contains(&k.as_str()))
            .find_map(|(_, t)| follow(t)),
        Target::Excluded => None,
    }
}

/// `path` with the extensions Node tries for a path without one.
fn with_extensions(path: &str) -> Vec<String> {
    let path = path.trim_end_matches('/');
    vec![
        path.to_string(),
        format!("{path}.js"),
        format!("{path}.mjs"),
        format!("{path}/index.js"),
    ]
}

/// A path relative to the package's root, `./` and `.` segments gone;
/// None when it climbs out of the package or names its root.
fn relative(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(json: &str) -> Manifest {
        Manifest::parse(json.as_bytes()).expect("a manifest")
    }

    #[test]
    fn conditions_are_taken_in_written_order() {
        // rxjs 7.8.1's `.`: `node` and `require` are not a browser's;
        // `es2015` is no condition ccc meets; `default` is.
        let m = manifest(
            r#"{"exports": {".": {"types": "./t.d.ts", "node": "./cjs/index.js",
                "require": "./cjs/index.js", "es2015": "./esm/index.js",
                "default": "./esm5/index.js"}}}"#,
        );
        assert_eq!(m.resolve(".", |_| true), Ok("esm5/index.js".into()));
        // `default` before `import`: written first, taken first.
        let m = manifest(r#"{"exports": {"default": "./a.js", "import": "./b.mjs"}}"#);
        assert_eq!(m.resolve(".", |_| true), Ok("a.js".into()));
        let m = manifest(r#"{"exports": {"import": {"browser": "./b.js", "node": "./n.js"}}}"#);
        assert_eq!(m.resolve(".", |_| true), Ok("b.js".into()));
    }

    #[test]
    fn patterns_take_the_longest_prefix() {
        let m = manifest(
            r#"{"exports": {"./*": "./dist/*", "./internal/*": {"default": "./esm/internal/*.js"},
                "./internal/hidden": null}}"#,
        );
        assert_eq!(
            m.resolve("./internal/x/y", |_| true),
            Ok("esm/internal/x/y.js".into())
        );
        assert_eq!(m.resolve("./a.js", |_| true), Ok("dist/a.js".into()));
        assert!(m.resolve("./internal/hidden", |_| true).is_err());
        assert!(m.resolve(".", |_| true).is_err(), "no `.`");
        let m = manifest(r#"{"exports": {".": "./index.js", "./": "./", "./lib/": "./dist/"}}"#);
        assert_eq!(m.resolve("./lib/a.js", |_| true), Ok("dist/a.js".into()));
        assert_eq!(m.resolve("./x.js", |_| true), Ok("x.js".into()));
        let (entries, failed) = m.entries(&["dist/a.js", "index.js"]);
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(
            entries[1..],
            [
                Entry::Folder {
                    prefix: "./".into(),
                    folder: String::new()
                },
                Entry::Folder {
                    prefix: "./lib/".into(),
                    folder: "dist/".into()
                }
            ]
        );
    }

    #[test]
    fn without_exports_module_comes_before_main() {
        let m = manifest(r#"{"main": "lodash.js", "module": "es/index"}"#);
        let files = ["es/index.js", "lodash.js"];
        let has = |p: &str| files.contains(&p);
        assert_eq!(m.resolve(".", has), Ok("es/index.js".into()));
        assert_eq!(m.resolve("./lodash", has), Ok("lodash.js".into()));
        assert_eq!(
            m.resolve("./nope", has),
            Err("it has no file nope".to_string())
        );
    }

    #[test]
    fn entries_are_files_folders_and_expanded_patterns() {
        let m = manifest(
            r#"{"exports": {".": "./index.js", "./feature/*": "./src/feature/*",
                "./icons/*": "./svg/*.js", "./gone": "./gone.js", "./package.json": null,
                "./server": {"node": "./server.js"}}}"#,
        );
        let files = ["index.js", "src/feature/a.js", "svg/add.js", "svg/cut.js"];
        let (entries, failed) = m.entries(&files);
        assert_eq!(
            entries,
            [
                Entry::File {
                    subpath: ".".into(),
                    file: "index.js".into()
                },
                Entry::Folder {
                    prefix: "./feature/".into(),
                    folder: "src/feature/".into()
                },
                Entry::File {
                    subpath: "./icons/add".into(),
                    file: "svg/add.js".into()
                },
                Entry::File {
                    subpath: "./icons/cut".into(),
                    file: "svg/cut.js".into()
                },
            ]
        );
        assert_eq!(
            failed,
            [(
                "./gone".to_string(),
                "its `exports` names gone.js, which it does not hold".to_string()
            )]
        );
    }

    #[test]
    fn ranges_come_from_every_kind_of_dependency() {
        let m = manifest(
            r#"{"dependencies": {"a": "^1"}, "peerDependencies": {"a": "^2", "b": "~3"},
                "optionalDependencies": {"c": "*"}, "devDependencies": {"d": "1"}}"#,
        );
        assert_eq!(m.range("a"), Some("^1"));
        assert_eq!(m.range("b"), Some("~3"));
        assert_eq!(m.range("c"), Some("*"));
        assert_eq!(m.range("d"), None, "dev dependencies are not loaded");
    }
}

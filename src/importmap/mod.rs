//! Import maps: the JSON document that lets a browser load a version's ES
//! modules and every package they import straight from the catalog,
//! without a bundler, each pinned to an exact version and, if asked, to
//! its bytes (`integrity`). `ccc importmap` prints it and `ccc serve`
//! answers `/assets/PKG/VERSION/?importmap` with it, and `ccc publish
//! --importmap` writes it into the version's pages ([`page`]); all call
//! [`generate`], so they cannot differ.
//!
//! # What the map holds
//!
//! - The version's own entry points, from its `package.json`
//!   ([`manifest`]): each subpath of `exports` (the conditions a browser
//!   meets: `browser`, `import`, `module`, `default`, in written order),
//!   patterns as folders (`"app/": "…/dist/"`) or, when the pattern adds
//!   a suffix an import map cannot, one entry per matching file; without
//!   `exports`, `module` or `main`, and the whole version as a folder.
//! - Each bare specifier the version's files import (`rxjs`,
//!   `rxjs/operators`, `lodash-es/debounce.js`), as publish stored them
//!   (`refs`, classed external), resolved against the other packages in
//!   the catalog: the newest version that the range of `dependencies`,
//!   `peerDependencies` or `optionalDependencies` allows (npm's range
//!   rules, by `nodejs-semver`), then the subpath through that version's
//!   own `exports`. A specifier the manifest does not declare takes the
//!   newest release: a browser has no other rule to go by.
//! - What those dependencies import in turn, traced from the files the
//!   map leads to (a file's relative imports are followed, so a
//!   package's tests or CommonJS build never pull in what the browser
//!   never loads). A dependency's specifier goes to the top-level
//!   `imports` when every dependency that imports it gets the same URL
//!   and the version itself does not map it otherwise; else into
//!   `scopes`, under the URL prefix of each dependency whose answer
//!   differs (`/assets/dep/1.2.0/`), so that two versions of one package
//!   can each have theirs.
//! - A relative import that a bundler completes but a browser takes as
//!   written (`./internal/Observable` for `Observable.js`, a folder for
//!   its `index.js`; rxjs's builds are full of them) is mapped URL to URL,
//!   the path as written to the file it names, in the scope of its
//!   version: import maps remap resolved URLs as well as bare names.
//! - With integrity: `sha256-…` of every JavaScript file the map can lead
//!   a browser to (the version's own files, and each traced file of a
//!   dependency), from the digest the catalog holds of the original
//!   bytes, which is what Subresource Integrity is computed over (the
//!   decoded body, whatever `Content-Encoding` carried it).
//!
//! A specifier that nothing satisfies (no such package, no version in the
//! range, no such export) is left out of the map and listed in
//! [`Generated::unresolved`] with the reason.
//!
//! A version published with `--no-check` has no stored references: its
//! files are read now, as `ccc check` reads them.
//!
//! Why `nodejs-semver`: npm's ranges are not Cargo's (`1.2.3` is exact,
//! `||` joins ranges, `1.x`, hyphen ranges, and prereleases match only
//! in a range that names one), so the `semver` crate's `VersionReq`
//! would pick versions npm would not. It implements npm's rules with
//! only `smallvec` and `thiserror`, both already in ccc's tree; the
//! older `node-semver` brings `nom` and `miette` for the same.

pub(crate) mod commonjs;
pub(crate) mod manifest;
pub(crate) mod page;
pub(crate) mod registry;

use crate::catalog::Catalog;
use crate::catalog::query::{AssetRow, Page, StoredLink};
use crate::catalog::rows::VersionRow;
use crate::error::{Error, Result};
use crate::http::route;
use manifest::{Entry, Manifest};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

/// The media type of an import map (HTML, "import maps").
pub(crate) const CONTENT_TYPE: &str = "application/importmap+json";

/// Where the map's URLs start: nothing, for root-relative URLs
/// (`/assets/…`, what a page served by ccc itself needs), or an
/// `http://` or `https://` origin, with a path if ccc is served under
/// one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Base(String);

impl Base {
    /// `text` as a base: an absolute http or https URL without a query
    /// or fragment; a trailing `/` is dropped. The error says what is
    /// wrong with it.
    pub(crate) fn parse(text: &str) -> std::result::Result<Base, String> {
        let uri: http::Uri = text.parse().map_err(|e| {
            format!("`{text}` is not a URL ({e}); give one like https://cdn.example.com")
        })?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "`{text}` is not an http:// or https:// URL with a host, like https://cdn.example.com"
            ));
        }
        if uri.query().is_some() {
            return Err(format!(
                "`{text}` has a query: the base is where /assets/ begins"
            ));
        }
        Ok(Base(text.trim_end_matches('/').to_string()))
    }

    /// The URL of `path` in `package@version` (`path` empty: the
    /// version's folder, ending in `/`).
    fn url(&self, package: &str, version: &str, path: &str) -> String {
        let mut url = format!("{}{}", self.0, route::asset_url(package, version, path));
        if path.ends_with('/') {
            url.push('/');
        }
        url
    }
}

/// How to write the map.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub base: Base,
    /// Add `integrity` for every module the map can reach.
    pub integrity: bool,
}

/// An import map, as browsers read it; keys in byte order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ImportMap {
    pub imports: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, BTreeMap<String, String>>,
    /// Only when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<BTreeMap<String, String>>,
}

/// The map of one version and what went into it: `ccc importmap --json`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Generated {
    pub package: String,
    pub version: String,
    pub importmap: ImportMap,
    /// Every other version the map pins, by name and version.
    pub dependencies: Vec<Pinned>,
    /// Every specifier left out of the map, and why.
    pub unresolved: Vec<Unresolved>,
}

/// A version of another package that the map loads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Pinned {
    pub package: String,
    pub version: String,
}

/// A specifier the map cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Unresolved {
    /// As imported (`rxjs/operators`), or as the version's own entry
    /// (`app/feature`).
    pub specifier: String,
    /// The version whose `file` imports it.
    pub package: String,
    pub version: String,
    pub file: String,
    /// The range its `package.json` gives the package, if it gives one.
    pub range: Option<String>,
    pub reason: String,
    /// The package the catalog lacks (no version at all, or none in the
    /// range), with the range asked: what `ccc importmap` looks up in the
    /// npm registry, with its own dependencies.
    #[serde(skip)]
    pub lacking: Option<(String, String)>,
}

impl std::fmt::Display for Unresolved {
    /// `app@1.0.0 js/app.js: left-pad (^1.0.0): REASON`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}@{} {}: {}",
            self.package, self.version, self.file, self.specifier
        )?;
        if let Some(range) = &self.range {
            write!(f, " ({range})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The import map of `root` and everything it imports, from `catalog`.
/// Fails only when the catalog cannot be read or `root` has no readable
/// `package.json`; what cannot be resolved is listed, not an error.
pub(crate) fn generate(
    catalog: &Catalog,
    root: VersionRow,
    options: &Options,
) -> Result<Generated> {
    let mut walk = Walk::new(catalog, &options.base);
    let manifest = catalog
        .manifest(root.id)?
        .ok_or_else(|| Error::NoManifest {
            package: root.package.clone(),
            version: root.version.to_string(),
            why: "it has no package.json".into(),
        })?;
    let manifest = Manifest::parse(&manifest).map_err(|why| Error::NoManifest {
        package: root.package.clone(),
        version: root.version.to_string(),
        why: format!("its package.json {why}"),
    })?;
    let root = walk.add(root, manifest)?;
    walk.map_own_entries(root)?;
    let files: Vec<String> = walk.nodes[root].paths().map(String::from).collect();
    for file in &files {
        walk.trace(root, file);
    }
    while let Some(import) = walk.pending.pop_front() {
        crate::interrupt::check()?;
        walk.settle(import)?;
    }
    Ok(walk.finish(options.integrity))
}

/// One version in the map, with what resolving and tracing need of it.
struct Node {
    row: VersionRow,
    manifest: Manifest,
    /// By path (the catalog lists them in byte order).
    files: Vec<AssetRow>,
    /// Each file's static and dynamic imports.
    imports: HashMap<String, Vec<StoredLink>>,
}

impl Node {
    fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }

    fn file(&self, path: &str) -> Option<&AssetRow> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    fn version(&self) -> String {
        self.row.version.to_string()
    }
}

/// A bare specifier met in a file, to resolve.
struct Import {
    /// The node whose file imports it.
    importer: usize,
    specifier: String,
    file: String,
}

/// The state of one generation: the versions met so far (the first is
/// the one the map is for), the files traced, what is left to resolve.
struct Walk<'a> {
    catalog: &'a Catalog,
    base: &'a Base,
    nodes: Vec<Node>,
    by_id: HashMap<i64, usize>,
    traced: BTreeSet<(usize, String)>,
    pending: VecDeque<Import>,
    asked: HashSet<(usize, String)>,
    /// Importer node, specifier, URL.
    resolved: Vec<(usize, String, String)>,
    /// Whether a file of a node is CommonJS, once read.
    commonjs: HashMap<(usize, String), bool>,
    /// Relative imports that name a file other than their own path (no
    /// extension, a folder): node, the path as written, the file.
    renamed: Vec<(usize, String, String)>,
    unresolved: Vec<Unresolved>,
}

impl<'a> Walk<'a> {
    fn new(catalog: &'a Catalog, base: &'a Base) -> Walk<'a> {
        Walk {
            catalog,
            base,
            nodes: Vec::new(),
            by_id: HashMap::new(),
            traced: BTreeSet::new(),
            pending: VecDeque::new(),
            asked: HashSet::new(),
            resolved: Vec::new(),
            commonjs: HashMap::new(),
            renamed: Vec::new(),
            unresolved: Vec::new(),
        }
    }

    /// The node of `row`, read from the catalog the first time.
    fn add(&mut self, row: VersionRow, manifest: Manifest) -> Result<usize> {
        if let Some(&node) = self.by_id.get(&row.id) {
            return Ok(node);
        }
        let files = self.catalog.files(row.id, Page::ALL)?;
        let links = self.links(&row, &files)?;
        let mut imports: HashMap<String, Vec<StoredLink>> = HashMap::new();
        for link in links {
            imports.entry(link.file.clone()).or_default().push(link);
        }
        self.by_id.insert(row.id, self.nodes.len());
        self.nodes.push(Node {
            row,
            manifest,
            files,
            imports,
        });
        Ok(self.nodes.len() - 1)
    }

    /// A dependency's node; its manifest, when it has none or one that
    /// does not parse, is empty (its `.` is then `index.js`).
    fn add_dependency(&mut self, row: VersionRow) -> Result<usize> {
        if let Some(&node) = self.by_id.get(&row.id) {
            return Ok(node);
        }
        let manifest = self
            .catalog
            .manifest(row.id)?
            .and_then(|bytes| Manifest::parse(&bytes).ok())
            .unwrap_or_default();
        self.add(row, manifest)
    }

    /// The imports of a version's files: as publish stored them, or, for
    /// a version published without references, read now.
    fn links(&self, row: &VersionRow, files: &[AssetRow]) -> Result<Vec<StoredLink>> {
        if self.catalog.has_stored_links(row.id)? {
            return self.catalog.module_links(row.id);
        }
        let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        let by_path: HashMap<&str, &AssetRow> =
            files.iter().map(|f| (f.path.as_str(), f)).collect();
        // Module links are the same wherever the version is served.
        let mount = crate::refs::Mount::Assets;
        let report = crate::refs::check::check(
            &row.package,
            &row.version.to_string(),
            &paths,
            mount,
            |path| match by_path.get(path) {
                Some(file) => self.catalog.decoded(file).map(Some),
                None => Ok(None),
            },
        )?;
        Ok(report
            .links
            .into_iter()
            .filter(|l| {
                matches!(
                    l.kind,
                    crate::refs::Kind::Import | crate::refs::Kind::DynamicImport
                )
            })
            .map(|l| StoredLink {
                kind: l.kind.name().to_string(),
                class: l.class.to_string(),
                file: l.file,
                line: l.line,
                column: l.column,
                reference: l.reference,
                target: l.target,
            })
            .collect())
    }

    /// The root version's own entry points, at the top of the map; an
    /// entry naming a file it does not hold, or a CommonJS one, is
    /// unresolved.
    fn map_own_entries(&mut self, root: usize) -> Result<()> {
        let node = &self.nodes[root];
        let paths: Vec<&str> = node.paths().collect();
        let (entries, mut failed) = node.manifest.entries(&paths);
        let (package, version) = (node.row.package.clone(), node.version());
        for entry in entries {
            let (specifier, url) = match entry {
                Entry::File { subpath, file } if self.is_commonjs(root, &file)? => {
                    failed.push((subpath, commonjs_reason(&package, &version, &file)));
                    continue;
                }
                Entry::File { subpath, file } => (
                    specifier(&package, &subpath),
                    self.base.url(&package, &version, &file),
                ),
                Entry::Folder { prefix, folder } => (
                    specifier(&package, &prefix),
                    self.base.url(&package, &version, &folder),
                ),
            };
            self.resolved.push((root, specifier, url));
        }
        for (subpath, reason) in failed {
            self.unresolved.push(Unresolved {
                specifier: specifier(&package, &subpath),
                package: package.clone(),
                version: version.clone(),
                file: "package.json".into(),
                range: None,
                reason,
                lacking: None,
            });
        }
        Ok(())
    }

    /// Whether `file` of `node` is CommonJS (see [`commonjs`]): a file with
    /// a static `import` or `export … from` is a module without reading
    /// it; any other script is read and parsed, once.
    fn is_commonjs(&mut self, node: usize, file: &str) -> Result<bool> {
        let key = (node, file.to_string());
        if let Some(&known) = self.commonjs.get(&key) {
            return Ok(known);
        }
        let n = &self.nodes[node];
        let module = n
            .imports
            .get(file)
            .is_some_and(|links| links.iter().any(|l| l.kind == "import"));
        let answer = match n.file(file) {
            Some(row) if !module && row.content_type.starts_with("text/javascript") => {
                let bytes = self.catalog.decoded(row)?;
                std::str::from_utf8(&bytes)
                    .is_ok_and(|text| crate::refs::js::is_commonjs(file, text))
            }
            _ => false,
        };
        self.commonjs.insert(key, answer);
        Ok(answer)
    }

    /// Follows `file` of `node` and every file it imports relatively,
    /// queueing the bare specifiers met.
    fn trace(&mut self, node: usize, file: &str) {
        let mut stack = vec![file.to_string()];
        while let Some(file) = stack.pop() {
            if !self.traced.insert((node, file.clone())) {
                continue;
            }
            let Some(links) = self.nodes[node].imports.get(&file) else {
                continue;
            };
            for link in links {
                match (link.class.as_str(), &link.target) {
                    ("found", Some(target)) => {
                        if let Some(written) = as_written(&file, &link.reference)
                            && written != *target
                        {
                            self.renamed.push((node, written, target.clone()));
                        }
                        stack.push(target.clone());
                    }
                    ("external", _) if is_bare(&link.reference) => {
                        self.pending.push_back(Import {
                            importer: node,
                            specifier: link.reference.trim().to_string(),
                            file: file.clone(),
                        });
                    }
                    _ => {}
                }
            }
        }
    }

    /// Resolves one import: the package's version, then its file, which
    /// is traced in turn.
    fn settle(&mut self, import: Import) -> Result<()> {
        if !self
            .asked
            .insert((import.importer, import.specifier.clone()))
        {
            return Ok(());
        }
        let importer = &self.nodes[import.importer];
        let mut unresolved = Unresolved {
            specifier: import.specifier.clone(),
            package: importer.row.package.clone(),
            version: importer.version(),
            file: import.file.clone(),
            range: None,
            reason: String::new(),
            lacking: None,
        };
        let Some((name, subpath)) = split(&import.specifier) else {
            unresolved.reason = "not a package name".into();
            self.unresolved.push(unresolved);
            return Ok(());
        };
        let target = if name == importer.row.package {
            import.importer
        } else {
            let range = importer.manifest.range(name).map(String::from);
            unresolved.range = range.clone();
            let wanted = range.as_deref().unwrap_or("*");
            match self.choose(name, wanted)? {
                Ok(row) => self.add_dependency(row)?,
                Err(Choice::Lacking(reason)) => {
                    unresolved.reason = reason;
                    unresolved.lacking = Some((name.to_string(), wanted.to_string()));
                    self.unresolved.push(unresolved);
                    return Ok(());
                }
                Err(Choice::NotARange(reason)) => {
                    unresolved.reason = reason;
                    self.unresolved.push(unresolved);
                    return Ok(());
                }
            }
        };
        let node = &self.nodes[target];
        let resolved = node.manifest.resolve(&subpath, |p| node.file(p).is_some());
        let (package, version) = (node.row.package.clone(), node.version());
        match resolved {
            Ok(file) if self.is_commonjs(target, &file)? => {
                unresolved.reason = commonjs_reason(&package, &version, &file);
                self.unresolved.push(unresolved);
            }
            Ok(file) => {
                let url = self.base.url(&package, &version, &file);
                self.resolved.push((import.importer, import.specifier, url));
                self.trace(target, &file);
            }
            Err(why) => {
                unresolved.reason = format!("{package}@{version}: {why}");
                self.unresolved.push(unresolved);
            }
        }
        Ok(())
    }

    /// The newest version of `package` in the catalog that `range` (npm's
    /// syntax) allows, or why there is none.
    fn choose(
        &self,
        package: &str,
        range: &str,
    ) -> Result<std::result::Result<VersionRow, Choice>> {
        let versions = self.catalog.versions(package)?;
        if versions.is_empty() {
            return Ok(Err(Choice::Lacking(format!(
                "{package} is not in the catalog"
            ))));
        }
        let Ok(allowed) = nodejs_semver::Range::parse(range) else {
            return Ok(Err(Choice::NotARange(format!(
                "`{range}` is not a version range (a tag, a path or a URL names no version of the catalog)"
            ))));
        };
        let newest = versions
            .iter()
            .find(|v| crate::spec::satisfies(&allowed, &v.version));
        match newest {
            Some(v) => Ok(Ok(v.clone())),
            None => {
                let held: Vec<String> = versions
                    .iter()
                    .take(5)
                    .map(|v| v.version.to_string())
                    .collect();
                let more = if versions.len() > held.len() {
                    ", …"
                } else {
                    ""
                };
                Ok(Err(Choice::Lacking(format!(
                    "no version of {package} in the catalog satisfies {range} (it has {}{more})",
                    held.join(", ")
                ))))
            }
        }
    }

    /// The map and what went into it.
    fn finish(mut self, integrity: bool) -> Generated {
        let (imports, scopes) = self.layout();
        let integrity = integrity.then(|| self.integrity());
        let root = &self.nodes[0];
        let mut dependencies: Vec<Pinned> = self.nodes[1..]
            .iter()
            .map(|n| Pinned {
                package: n.row.package.clone(),
                version: n.version(),
            })
            .collect();
        dependencies.sort();
        self.unresolved.sort_by(|a, b| {
            (&a.package, &a.version, &a.specifier).cmp(&(&b.package, &b.version, &b.specifier))
        });
        Generated {
            package: root.row.package.clone(),
            version: root.version(),
            importmap: ImportMap {
                imports,
                scopes,
                integrity,
            },
            dependencies,
            unresolved: self.unresolved,
        }
    }

    /// Where each resolution goes: the root's own entries and imports at
    /// the top, the dependencies' there too where they agree and the top
    /// has no other answer, else in the scope of each dependency whose
    /// answer differs; relative imports mapped to their files in their
    /// version's scope.
    fn layout(
        &mut self,
    ) -> (
        BTreeMap<String, String>,
        BTreeMap<String, BTreeMap<String, String>>,
    ) {
        let mut imports: BTreeMap<String, String> = BTreeMap::new();
        let mut theirs: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
        for (node, specifier, url) in std::mem::take(&mut self.resolved) {
            if node == 0 {
                imports.entry(specifier).or_insert(url);
            } else {
                theirs.entry(specifier).or_default().push((node, url));
            }
        }
        let mut scopes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (specifier, answers) in theirs {
            let agreed = answers.iter().all(|(_, url)| *url == answers[0].1);
            let top = imports.get(&specifier).cloned();
            if top.is_none() && agreed {
                imports.insert(specifier, answers[0].1.clone());
                continue;
            }
            for (node, url) in answers {
                if top.as_ref() != Some(&url) {
                    let scope = scopes.entry(self.prefix(node)).or_default();
                    scope.insert(specifier.clone(), url);
                }
            }
        }
        for (node, written, file) in std::mem::take(&mut self.renamed) {
            let version = &self.nodes[node];
            let (package, exact) = (&version.row.package, version.version());
            scopes.entry(self.prefix(node)).or_default().insert(
                self.base.url(package, &exact, &written),
                self.base.url(package, &exact, &file),
            );
        }
        (imports, scopes)
    }

    /// The URL prefix of a node's files: the key of its scope.
    fn prefix(&self, node: usize) -> String {
        let node = &self.nodes[node];
        self.base.url(&node.row.package, &node.version(), "")
    }

    /// The SRI value of every JavaScript file traced, by URL.
    fn integrity(&self) -> BTreeMap<String, String> {
        self.traced
            .iter()
            .filter_map(|(node, path)| {
                let node = &self.nodes[*node];
                let file = node.file(path)?;
                file.content_type.starts_with("text/javascript").then(|| {
                    (
                        self.base.url(&node.row.package, &node.version(), path),
                        file.integrity(),
                    )
                })
            })
            .collect()
    }
}

/// Why the catalog has no version of a package to map.
enum Choice {
    /// None at all, or none the range allows: the registry may have it.
    Lacking(String),
    /// The range is no range (a tag, a path, a URL).
    NotARange(String),
}

/// Why a CommonJS file is left out of the map.
fn commonjs_reason(package: &str, version: &str, file: &str) -> String {
    format!(
        "{package}@{version}'s {file} is CommonJS, which a browser cannot import; {}",
        commonjs::alternatives(package)
    )
}

/// `package` and a subpath of it (`.`, `./x`, `./x/`) as a specifier
/// (`package`, `package/x`, `package/x/`).
fn specifier(package: &str, subpath: &str) -> String {
    match subpath.strip_prefix("./") {
        Some(rest) => format!("{package}/{rest}"),
        None => package.to_string(),
    }
}

/// A bare specifier's package and subpath: `@scope/pkg/a/b` is
/// `@scope/pkg` and `./a/b`; None when it names no valid package.
fn split(specifier: &str) -> Option<(&str, String)> {
    let parts = if specifier.starts_with('@') { 2 } else { 1 };
    let end = specifier
        .match_indices('/')
        .nth(parts - 1)
        .map_or(specifier.len(), |(i, _)| i);
    let name = &specifier[..end];
    crate::spec::package_name(name).ok()?;
    let rest = &specifier[end..];
    let subpath = match rest {
        "" => ".".to_string(),
        rest => format!(".{rest}"),
    };
    Some((name, subpath))
}

/// The path a relative import in `file` names as written (`./a` in
/// `lib/b.js` is `lib/a`), which a browser asks for; None for any other
/// reference.
fn as_written(file: &str, reference: &str) -> Option<String> {
    let reference = reference.trim();
    if !reference.starts_with("./") && !reference.starts_with("../") {
        return None;
    }
    let path = reference.split(['?', '#']).next().unwrap_or("");
    let folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
    let joined = crate::refs::join(folder, path)?;
    Some(
        percent_encoding::percent_decode_str(&joined)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// Whether a reference classed external is a bare specifier (`react`,
/// `@scope/pkg/sub`), not a URL or a root path.
fn is_bare(reference: &str) -> bool {
    let reference = reference.trim();
    !reference.is_empty()
        && !reference.starts_with('/')
        && !reference.starts_with('.')
        && !crate::refs::has_scheme(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specifiers_split_into_package_and_subpath() {
        assert_eq!(split("rxjs"), Some(("rxjs", ".".into())));
        assert_eq!(
            split("rxjs/operators"),
            Some(("rxjs", "./operators".into()))
        );
        assert_eq!(
            split("@scope/pkg/a/b.js"),
            Some(("@scope/pkg", "./a/b.js".into()))
        );
        assert_eq!(split("@scope"), None);
        assert_eq!(split("Bad Name"), None);
    }

    #[test]
    fn relative_imports_are_taken_as_written() {
        assert_eq!(
            as_written("dist/esm5/index.js", "./internal/Observable"),
            Some("dist/esm5/internal/Observable".into())
        );
        assert_eq!(
            as_written("a/b/c.js", "../x%20y.js?v=1"),
            Some("a/x y.js".into())
        );
        assert_eq!(as_written("a.js", "../../x.js"), None);
        assert_eq!(as_written("a.js", "/assets/p/1.0.0/x.js"), None);
        assert_eq!(as_written("a.js", "lodash-es"), None);
    }

    #[test]
    fn only_package_names_are_bare() {
        assert!(is_bare("lodash-es/debounce.js"));
        assert!(!is_bare("https://esm.sh/react"));
        assert!(!is_bare("node:fs"));
        assert!(!is_bare("/assets/x/1.0.0/a.js"));
    }

    #[test]
    fn a_base_is_an_http_origin_with_an_optional_path() {
        assert_eq!(
            Base::parse("https://cdn.example.com/").map(|b| b.0),
            Ok("https://cdn.example.com".into())
        );
        assert_eq!(
            Base::parse("http://localhost:8080/cdn").map(|b| b.0),
            Ok("http://localhost:8080/cdn".into())
        );
        for bad in [
            "cdn.example.com",
            "ftp://x.example",
            "https://x.example/?a=1",
            "",
        ] {
            assert!(Base::parse(bad).is_err(), "{bad}");
        }
        let base = Base::default();
        assert_eq!(
            base.url("@s/p", "1.0.0", "dist/"),
            "/assets/@s/p/1.0.0/dist/"
        );
        assert_eq!(base.url("p", "1.0.0", ""), "/assets/p/1.0.0/");
        assert_eq!(base.url("p", "1.0.0", "a b.js"), "/assets/p/1.0.0/a%20b.js");
    }
}

//! What a version's files reference, and whether each reference resolves
//! inside the version: the check `ccc check` runs before anything is
//! served, so a missing chunk, a font that was not copied, a path whose
//! case only a developer's Mac forgives or a dangling source map is found
//! at publish time instead of by users.
//!
//! Each file is read by a real parser for its type ([`js`] with oxc,
//! [`css`] with cssparser, [`html`] with lol_html, [`json`] with serde for
//! `package.json` and web manifests), never by regular expressions, so a
//! reference in a comment or a string that only looks like one is not
//! taken for one. Each reference is then resolved against the file's
//! place in the version ([`Version::resolve`]) and put in one [`Class`]. A
//! reference built at runtime (a template literal with expressions, a
//! variable) is counted as [`Class::Unresolvable`], never guessed.
//!
//! # Root paths
//!
//! A path that starts with `/` (`/assets/index-B3x9a.js`, `/vite.svg`,
//! what a bundler writes with Vite's default `base: '/'` or webpack's
//! `publicPath: '/'`) names a file from the root of the site the page is
//! served on. Where that root is depends on how the version is served
//! ([`Mount`]): `ccc serve` serves every version under
//! `/assets/PKG/VERSION/`, so such a path leaves the version
//! ([`Class::RootPath`]), and the file of the version it was meant to
//! name, if any, is kept for the hint (the relative form, and the bundler
//! setting that writes it). A path into the catalog's own URL space
//! (`/assets/react/18.3.1/index.js`) is a deliberate reference to another
//! version: external. A version served at a site's root
//! ([`Mount::SiteRoot`]) resolves root paths against its own root
//! instead.

pub(crate) mod check;
pub(crate) mod css;
pub(crate) mod html;
pub(crate) mod js;
pub(crate) mod json;

use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// How a file names another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// `import … from '…'`, `export … from '…'`.
    Import,
    /// `import('…')`.
    DynamicImport,
    /// `new URL('…', import.meta.url)`.
    NewUrl,
    /// `importScripts('…')`.
    ImportScripts,
    /// `require('./…')`.
    Require,
    /// CSS `url(…)`.
    CssUrl,
    /// CSS `@import`.
    CssImport,
    /// An HTML attribute: `src`, `href`, `srcset`.
    HtmlAttribute,
    /// A path in an HTML `<script type=importmap>`.
    ImportMap,
    /// A `sourceMappingURL` comment.
    SourceMap,
    /// An icon of a web manifest.
    ManifestIcon,
    /// A path in `exports` of `package.json`: Node takes it as written.
    PackageEntry,
    /// `main`, `module` or `browser` of `package.json`: Node and bundlers
    /// try extensions and a folder's index for it, as for `require`.
    PackageMain,
}

impl Kind {
    /// Its name in JSON and in the catalog.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Import => "import",
            Kind::DynamicImport => "dynamic_import",
            Kind::NewUrl => "new_url",
            Kind::ImportScripts => "import_scripts",
            Kind::Require => "require",
            Kind::CssUrl => "css_url",
            Kind::CssImport => "css_import",
            Kind::HtmlAttribute => "html_attribute",
            Kind::ImportMap => "import_map",
            Kind::SourceMap => "source_map",
            Kind::ManifestIcon => "manifest_icon",
            Kind::PackageEntry | Kind::PackageMain => "package_entry",
        }
    }

    /// How a report names it, before the reference.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Kind::Import => "import",
            Kind::DynamicImport => "import()",
            Kind::NewUrl => "new URL",
            Kind::ImportScripts => "importScripts",
            Kind::Require => "require",
            Kind::CssUrl => "url()",
            Kind::CssImport => "@import",
            Kind::HtmlAttribute => "loads",
            Kind::ImportMap => "import map",
            Kind::SourceMap => "source map",
            Kind::ManifestIcon => "icon",
            Kind::PackageEntry | Kind::PackageMain => "entry point",
        }
    }
}

/// One reference as written, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Reference {
    pub kind: Kind,
    /// As written; for a reference built at runtime, the expression's
    /// source text.
    pub written: String,
    /// 1-based line and column (in bytes) of the reference in its file.
    pub line: u32,
    pub column: u32,
    /// Built at runtime: cannot be resolved without running the code.
    pub runtime: bool,
}

/// What a reference turned out to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "class", content = "path")]
pub(crate) enum Class {
    /// A file of the version (its path).
    Found(String),
    /// No file of the version, in any case.
    Missing,
    /// A file of the version only under another case (its path).
    CaseMismatch(String),
    /// `../` above the version's root.
    LeavesVersion,
    /// A root path (`/vite.svg`) in a version served under
    /// `/assets/PKG/VERSION/`: it leaves the version. With the file of the
    /// version it names from the version's root, when there is one (the
    /// bundler wrote a root path where a relative one was meant).
    RootPath(Option<String>),
    /// A URL, a bare specifier (`react`), a URL of another version in the
    /// catalog (`/assets/react/18.3.1/index.js`).
    External,
    /// Built at runtime.
    Unresolvable,
}

impl Class {
    /// Whether the version is broken by it: a reference that resolves
    /// nowhere inside it.
    pub(crate) fn is_problem(&self) -> bool {
        matches!(
            self,
            Class::Missing | Class::CaseMismatch(_) | Class::LeavesVersion | Class::RootPath(_)
        )
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Class::Found(_) => "found",
            Class::Missing => "missing",
            Class::CaseMismatch(_) => "case_mismatch",
            Class::LeavesVersion | Class::RootPath(_) => "leaves_version",
            Class::External => "external",
            Class::Unresolvable => "unresolvable",
        }
    }
}

/// What reading one file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Extracted {
    pub references: Vec<Reference>,
    /// A script that is CommonJS ([`js::is_commonjs`]), which a browser
    /// cannot import.
    pub commonjs: bool,
}

/// The references of the file at `path` (in the version) whose bytes are
/// `bytes`, by its type; none for a type that names no file or bytes that
/// do not parse.
pub(crate) fn extract(path: &str, bytes: &[u8]) -> Extracted {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Extracted::default();
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    let references = match extension.to_ascii_lowercase().as_str() {
        "js" | "mjs" | "cjs" | "jsx" => {
            let read = js::read(path, text);
            return Extracted {
                references: read.references,
                commonjs: read.commonjs,
            };
        }
        "css" => css::references(text),
        "html" | "htm" => html::references(text),
        "webmanifest" => json::manifest_icons(text),
        "json" if name == "manifest.json" => json::manifest_icons(text),
        "json" if path == "package.json" => json::package_entries(text),
        _ => Vec::new(),
    };
    Extracted {
        references,
        commonjs: false,
    }
}

/// Byte offsets to 1-based (line, column).
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn of(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(newlines(text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    pub(crate) fn at(&self, offset: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let column = offset - self.starts[line - 1] + 1;
        (line as u32, column as u32)
    }
}

fn newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
}

/// How a folder URL naming the version's root (`new URL('./',
/// import.meta.url)` in a file at the root) is found: as this path.
pub(crate) const ROOT_FOLDER: &str = "./";

/// Where a version is served, which decides what a root path (`/x`)
/// names (module doc, "Root paths").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Mount {
    /// Under `/assets/PKG/VERSION/`, as `ccc serve` serves every version:
    /// a root path leaves the version.
    #[default]
    Assets,
    /// At the root of a site: a root path names a file of the version.
    SiteRoot,
}

/// The files of one version, for resolving references: by path, and by
/// path in lower case for the case check; the folders that hold them,
/// likewise.
pub(crate) struct Version<'a> {
    /// `/assets/PKG/VER/`, whose URLs are this version's files; None when
    /// the version is not named (a folder without a `package.json`).
    own: Option<String>,
    paths: HashSet<&'a str>,
    folded: HashMap<String, &'a str>,
    /// Every folder that holds a file (`a`, `a/b`), and by lower case.
    folders: HashSet<&'a str>,
    folded_folders: HashMap<String, &'a str>,
    /// The `main` of the root `package.json`, as written.
    main: Option<String>,
    mount: Mount,
}

impl<'a> Version<'a> {
    pub(crate) fn new(package: &str, version: &str, paths: impl Iterator<Item = &'a str>) -> Self {
        let paths: HashSet<&str> = paths.collect();
        let folded = paths.iter().map(|p| (p.to_lowercase(), *p)).collect();
        let folders: HashSet<&str> = paths
            .iter()
            .flat_map(|p| p.match_indices('/').map(|(i, _)| &p[..i]))
            .collect();
        let folded_folders = folders.iter().map(|f| (f.to_lowercase(), *f)).collect();
        Version {
            own: (!package.is_empty() && !version.is_empty())
                .then(|| format!("/assets/{package}/{version}/")),
            paths,
            folded,
            folders,
            folded_folders,
            main: None,
            mount: Mount::default(),
        }
    }

    /// Served as `mount` says, which decides what root paths name.
    pub(crate) fn served_at(mut self, mount: Mount) -> Self {
        self.mount = mount;
        self
    }

    /// With the root `package.json`'s `main`, which `require('./')` (or
    /// `'..'`) loads when it names the root folder.
    pub(crate) fn with_main(mut self, main: Option<String>) -> Self {
        self.main = main;
        self
    }

    /// What `reference`, written in the file at `from`, names.
    pub(crate) fn resolve(&self, from: &str, reference: &Reference) -> Class {
        if reference.runtime {
            return Class::Unresolvable;
        }
        let written = reference.written.trim();
        // The part that names a file: no query, no fragment.
        let target = written.split(['?', '#']).next().unwrap_or("");
        if target.is_empty() {
            // `#top`, `?v=2`: the file itself.
            return Class::Found(from.to_string());
        }
        let inside = self.own.as_deref().and_then(|own| target.strip_prefix(own));
        let relative = if let Some(inside) = inside {
            inside.to_string()
        } else if has_scheme(target) || is_bare(reference.kind, target) {
            return Class::External;
        } else if let Some(rooted) = target.strip_prefix('/') {
            let from_root = join("", rooted).unwrap_or_default();
            if self.mount == Mount::SiteRoot {
                from_root
            } else {
                return self.root_path(reference.kind, target, &from_root);
            }
        } else {
            let folder = from.rsplit_once('/').map_or("", |(folder, _)| folder);
            match join(folder, target) {
                Some(path) => path,
                None => return Class::LeavesVersion,
            }
        };
        self.lookup(reference.kind, target, &relative)
    }

    /// The file (or folder) `path`, resolved from the version's root,
    /// names; `target` is the reference as written, without its query.
    fn lookup(&self, kind: Kind, target: &str, path: &str) -> Class {
        let path = percent_encoding::percent_decode_str(path)
            .decode_utf8_lossy()
            .into_owned();
        let folder = names_folder(target);
        let all = candidates(kind, &path, folder, self.main.as_deref());
        for candidate in &all {
            if self.paths.contains(candidate.as_str()) {
                return Class::Found(candidate.clone());
            }
        }
        // A URL may name a folder (`new URL('./', import.meta.url)`, the
        // base an Emscripten module loads its `.wasm` from): found when
        // the version has files in it; the version's root always does.
        let base = path.trim_end_matches('/');
        let folder_url = kind == Kind::NewUrl && folder;
        if folder_url && base.is_empty() {
            return Class::Found(ROOT_FOLDER.to_string());
        }
        if folder_url && self.folders.contains(base) {
            return Class::Found(format!("{base}/"));
        }
        for candidate in &all {
            if let Some(actual) = self.folded.get(&candidate.to_lowercase()) {
                return Class::CaseMismatch(actual.to_string());
            }
        }
        if folder_url && let Some(actual) = self.folded_folders.get(&base.to_lowercase()) {
            return Class::CaseMismatch(format!("{actual}/"));
        }
        Class::Missing
    }

    /// A root path in a version served under `/assets/PKG/VERSION/`
    /// (module doc): it leaves the version, naming the version's file at
    /// `from_root` when there is one; a URL of another version in the
    /// catalog is external.
    fn root_path(&self, kind: Kind, target: &str, from_root: &str) -> Class {
        let named = match self.lookup(kind, target, from_root) {
            Class::Found(file) if !file.is_empty() && !file.ends_with('/') => Some(file),
            _ => None,
        };
        if named.is_none() && names_catalog_file(target) {
            return Class::External;
        }
        Class::RootPath(named)
    }
}

/// Whether the root path `target` is the URL of a file of some version in
/// the catalog's URL space, `/assets/PKG/VERSION/PATH` (VERSION exact, a
/// range or a dist-tag), as `ccc serve` routes it.
fn names_catalog_file(target: &str) -> bool {
    matches!(
        crate::http::route::route("GET", target),
        Ok(crate::http::route::Route::Asset { package, version, .. })
            if crate::spec::Selector::parse(&package, &version).is_ok()
    )
}

/// `to`, a file or a folder (ending in `/`) of the version, as written
/// relative to the file `from`: `./assets/a.js` from `index.html`,
/// `../vite.svg` from `assets/a.css`.
pub(crate) fn relative_to(from: &str, to: &str) -> String {
    let folder: Vec<&str> = match from.rsplit_once('/') {
        Some((folder, _)) => folder.split('/').collect(),
        None => Vec::new(),
    };
    let target: Vec<&str> = to.split('/').collect();
    let (dirs, name) = target.split_at(target.len() - 1);
    let shared = folder.iter().zip(dirs).take_while(|(a, b)| a == b).count();
    let mut out = String::new();
    if shared == folder.len() {
        out.push_str("./");
    } else {
        for _ in shared..folder.len() {
            out.push_str("../");
        }
    }
    for dir in &dirs[shared..] {
        out.push_str(dir);
        out.push('/');
    }
    out.push_str(name[0]);
    out
}

/// `scheme:` at the start (`https:`, `data:`, `mailto:`, `node:`).
pub(crate) fn has_scheme(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
    }) || target.starts_with("//")
}

/// A module specifier that names a package, not a path (`react`,
/// `@scope/pkg/sub`): only import-like references have them; CSS, HTML
/// and manifests name paths relative to the file.
fn is_bare(kind: Kind, target: &str) -> bool {
    let module = matches!(
        kind,
        Kind::Import | Kind::DynamicImport | Kind::Require | Kind::ImportMap
    );
    module
        && !target.starts_with('/')
        && !target.starts_with("./")
        && !target.starts_with("../")
        && target != "."
        && target != ".."
}

/// `target` joined to `folder`, `.` and `..` applied; None when it climbs
/// above the version's root.
pub(crate) fn join(folder: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// Whether a path as written can only name a folder: it ends in `/`, or
/// its last segment is `.` or `..` (`./`, `..`, `../lib/.`).
fn names_folder(target: &str) -> bool {
    target.ends_with('/') || matches!(target.rsplit('/').next(), Some("." | ".."))
}

/// The paths a reference may name: itself; for a module without an
/// extension, what bundlers and Node try (`.js`, `.mjs`, `.cjs`, `.json`,
/// `.node`), then the folder of that name as Node loads it (its
/// `index.js`, `index.mjs`, `index.json`, `index.node`; at the version's
/// root, first the `main` of its `package.json`); for a module written as
/// a folder (`./`, `../`, `.`, `..`), only the folder. Otherwise, for a
/// folder, its `index.html`.
fn candidates(kind: Kind, path: &str, folder: bool, main: Option<&str>) -> Vec<String> {
    let mut all = vec![path.to_string()];
    let module = matches!(
        kind,
        Kind::Import | Kind::DynamicImport | Kind::Require | Kind::PackageMain
    );
    let base = path.trim_end_matches('/');
    if module {
        if folder {
            all.clear();
        } else {
            for ext in ["js", "mjs", "cjs", "json", "node"] {
                all.push(format!("{base}.{ext}"));
            }
        }
        let prefix = if base.is_empty() {
            String::new()
        } else {
            format!("{base}/")
        };
        // `main`, as Node loads it: a file, with an extension added, or
        // a folder's index. Only the root's `package.json` is read.
        if let Some(main) = main.filter(|_| base.is_empty())
            && let Some(main) = join("", main).filter(|m| !m.is_empty())
        {
            all.push(main.clone());
            for ext in ["js", "json", "node"] {
                all.push(format!("{main}.{ext}"));
            }
            for index in ["index.js", "index.json", "index.node"] {
                all.push(format!("{main}/{index}"));
            }
        }
        for index in ["index.js", "index.mjs", "index.json", "index.node"] {
            all.push(format!("{prefix}{index}"));
        }
    } else if path.is_empty() || path.ends_with('/') {
        all.push(format!("{}index.html", path));
    }
    all.retain(|p| !p.is_empty());
    all
}

/// What a test compares of each reference: kind, text and line.
#[cfg(test)]
pub(crate) fn kinds_and_lines(refs: Vec<Reference>) -> Vec<(Kind, String, u32)> {
    refs.into_iter()
        .map(|r| (r.kind, r.written, r.line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(kind: Kind, written: &str) -> Reference {
        Reference {
            kind,
            written: written.into(),
            line: 1,
            column: 1,
            runtime: false,
        }
    }

    #[test]
    fn references_resolve_against_the_file_s_folder() {
        let files = [
            "index.html",
            "js/app.js",
            "js/chunk-A1.js",
            "fonts/Icons.woff2",
            "lib/util/index.js",
        ];
        let v = Version::new("app", "1.0.0", files.into_iter());
        let r = |kind, written: &str, from: &str| v.resolve(from, &reference(kind, written));
        assert_eq!(
            r(Kind::DynamicImport, "./chunk-A1.js", "js/app.js"),
            Class::Found("js/chunk-A1.js".into())
        );
        assert_eq!(
            r(Kind::Import, "./chunk-a1.js", "js/app.js"),
            Class::CaseMismatch("js/chunk-A1.js".into())
        );
        assert_eq!(r(Kind::Import, "./gone.js", "js/app.js"), Class::Missing);
        assert_eq!(
            r(Kind::Import, "../../x.js", "js/app.js"),
            Class::LeavesVersion
        );
        assert_eq!(r(Kind::Import, "react", "js/app.js"), Class::External);
        assert_eq!(
            r(Kind::Import, "https://esm.sh/react", "js/app.js"),
            Class::External
        );
        assert_eq!(
            r(Kind::Require, "../lib/util", "js/app.js"),
            Class::Found("lib/util/index.js".into())
        );
        assert_eq!(
            r(Kind::CssUrl, "../fonts/icons.woff2", "css/a.css"),
            Class::CaseMismatch("fonts/Icons.woff2".into())
        );
        assert_eq!(
            r(Kind::CssUrl, "../fonts/Icons.woff2?v=2#iefix", "css/a.css"),
            Class::Found("fonts/Icons.woff2".into())
        );
        assert_eq!(
            r(Kind::HtmlAttribute, "js/app.js", "index.html"),
            Class::Found("js/app.js".into())
        );
        assert_eq!(
            r(
                Kind::HtmlAttribute,
                "/assets/app/1.0.0/js/app.js",
                "index.html"
            ),
            Class::Found("js/app.js".into())
        );
        assert_eq!(
            r(
                Kind::HtmlAttribute,
                "/assets/app/2.0.0/js/app.js",
                "index.html"
            ),
            Class::External
        );
        assert_eq!(
            r(
                Kind::HtmlAttribute,
                "data:image/png;base64,AAAA",
                "index.html"
            ),
            Class::External
        );
        assert_eq!(
            r(Kind::HtmlAttribute, "#main", "index.html"),
            Class::Found("index.html".into())
        );
        let mut runtime = reference(Kind::DynamicImport, "`./locale/${lang}.js`");
        runtime.runtime = true;
        assert_eq!(v.resolve("js/app.js", &runtime), Class::Unresolvable);
    }

    #[test]
    fn a_module_written_as_a_folder_loads_its_index_as_node_does() {
        // JSONStream@1.3.5: `require('./')` in bin.js, `require('../')` in
        // test/*.js, and index.js at the root.
        let files = [
            "index.js",
            "bin.js",
            "test/a.js",
            "lib/x.js",
            "data/index.json",
        ];
        let v = Version::new("app", "1.0.0", files.into_iter());
        let r = |written: &str, from: &str| v.resolve(from, &reference(Kind::Require, written));
        for (written, from) in [
            ("./", "bin.js"),
            (".", "bin.js"),
            ("../", "test/a.js"),
            ("..", "test/a.js"),
            ("../.", "lib/x.js"),
        ] {
            assert_eq!(
                r(written, from),
                Class::Found("index.js".into()),
                "{written}"
            );
        }
        assert_eq!(
            r("../data/", "lib/x.js"),
            Class::Found("data/index.json".into())
        );
        assert_eq!(r("./", "test/a.js"), Class::Missing, "test/ has no index");
        assert_eq!(r("../../", "test/a.js"), Class::LeavesVersion);
        // A trailing `/` names the folder, never a file beside it.
        let v = Version::new("app", "1.0.0", ["lib.js", "a.js"].into_iter());
        let r = |written: &str| v.resolve("a.js", &reference(Kind::Require, written));
        assert_eq!(r("./lib"), Class::Found("lib.js".into()));
        assert_eq!(r("./lib/"), Class::Missing);
        assert_eq!(r("./"), Class::Missing);
    }

    #[test]
    fn the_root_folder_loads_the_main_of_package_json_first() {
        let files = [
            "package.json",
            "index.js",
            "dist/main.js",
            "dist/cli.js",
            "lib/index.js",
        ];
        let with = |main: &str| {
            Version::new("app", "1.0.0", files.into_iter()).with_main(Some(main.to_string()))
        };
        let found = |v: &Version<'_>, written: &str, from: &str| {
            v.resolve(from, &reference(Kind::Require, written))
        };
        let v = with("./dist/main.js");
        assert_eq!(
            found(&v, "../", "dist/cli.js"),
            Class::Found("dist/main.js".into())
        );
        assert_eq!(
            found(&v, "./", "index.js"),
            Class::Found("dist/main.js".into())
        );
        // Only the root's `main`: a folder below has its own package.json.
        assert_eq!(
            found(&v, "../lib/", "dist/cli.js"),
            Class::Found("lib/index.js".into())
        );
        // Without an extension, or naming a folder.
        let v = with("dist/main");
        assert_eq!(
            found(&v, "..", "dist/cli.js"),
            Class::Found("dist/main.js".into())
        );
        let v = with("lib");
        assert_eq!(
            found(&v, ".", "index.js"),
            Class::Found("lib/index.js".into())
        );
        // A `main` naming nothing falls back to index.js, as in Node.
        let v = with("gone.js");
        assert_eq!(found(&v, "./", "index.js"), Class::Found("index.js".into()));
    }

    #[test]
    fn root_paths_leave_a_version_served_under_assets() {
        // What Vite writes with its default `base: '/'`.
        let files = [
            "index.html",
            "vite.svg",
            "assets/index-B3x9a.js",
            "assets/index-D1.css",
        ];
        let v = Version::new("app", "1.0.0", files.into_iter());
        let r = |kind, written: &str, from: &str| v.resolve(from, &reference(kind, written));
        assert_eq!(
            r(Kind::HtmlAttribute, "/assets/index-B3x9a.js", "index.html"),
            Class::RootPath(Some("assets/index-B3x9a.js".into()))
        );
        assert_eq!(
            r(Kind::CssUrl, "/vite.svg?v=1", "assets/index-D1.css"),
            Class::RootPath(Some("vite.svg".into()))
        );
        assert_eq!(
            r(Kind::HtmlAttribute, "/gone.png", "index.html"),
            Class::RootPath(None)
        );
        assert_eq!(
            r(Kind::Import, "/src/main.js", "assets/index-B3x9a.js"),
            Class::RootPath(None)
        );
        // The catalog's own URLs of another version stay external; its own
        // are found.
        assert_eq!(
            r(Kind::Import, "/assets/react/18.3.1/index.js", "index.html"),
            Class::External
        );
        assert_eq!(
            r(
                Kind::HtmlAttribute,
                "/assets/app/1.0.0/vite.svg",
                "index.html"
            ),
            Class::Found("vite.svg".into())
        );
        assert_eq!(
            r(Kind::Import, "//cdn.example/x.js", "index.html"),
            Class::External
        );
        assert!(Class::RootPath(None).is_problem());
        assert_eq!(Class::RootPath(None).name(), "leaves_version");
        // Served at a site's root, the same paths name the version's files.
        let site = Version::new("app", "1.0.0", files.into_iter()).served_at(Mount::SiteRoot);
        let r = |kind, written: &str, from: &str| site.resolve(from, &reference(kind, written));
        assert_eq!(
            r(Kind::HtmlAttribute, "/assets/index-B3x9a.js", "index.html"),
            Class::Found("assets/index-B3x9a.js".into())
        );
        assert_eq!(
            r(Kind::HtmlAttribute, "/gone.png", "index.html"),
            Class::Missing
        );
        assert_eq!(
            r(Kind::CssUrl, "/Vite.svg", "assets/index-D1.css"),
            Class::CaseMismatch("vite.svg".into())
        );
    }

    #[test]
    fn relative_forms_are_written_from_the_referring_file() {
        assert_eq!(relative_to("index.html", "assets/a.js"), "./assets/a.js");
        assert_eq!(relative_to("assets/a.css", "vite.svg"), "../vite.svg");
        assert_eq!(relative_to("assets/a.css", "assets/b.png"), "./b.png");
        assert_eq!(relative_to("a/b/c.css", "a/x/y.png"), "../x/y.png");
        assert_eq!(relative_to("a/b/c.css", "sub/"), "../../sub/");
    }

    #[test]
    fn a_url_naming_a_folder_with_files_is_found() {
        // Emscripten's preamble: `new URL('./', import.meta.url)`, the base
        // its `.wasm` is loaded from (three's rhino3dm, sqlite-wasm).
        let files = [
            "index.js",
            "libs/rhino/rhino.module.js",
            "libs/rhino/rhino.wasm",
            "libs/draco/gltf/decoder.js",
        ];
        let v = Version::new("app", "1.0.0", files.into_iter());
        let r = |written: &str, from: &str| v.resolve(from, &reference(Kind::NewUrl, written));
        let from = "libs/rhino/rhino.module.js";
        for written in ["./", ".", "../rhino/"] {
            assert_eq!(
                r(written, from),
                Class::Found("libs/rhino/".into()),
                "{written}"
            );
        }
        assert_eq!(r("../", from), Class::Found("libs/".into()));
        assert_eq!(
            r("../draco/gltf/", from),
            Class::Found("libs/draco/gltf/".into())
        );
        assert_eq!(r("./", "index.js"), Class::Found(ROOT_FOLDER.into()));
        assert_eq!(r("../../", from), Class::Found(ROOT_FOLDER.into()));
        assert_eq!(r("../../../", from), Class::LeavesVersion);
        assert_eq!(r("./empty/", from), Class::Missing);
        assert_eq!(
            r("../Draco/", from),
            Class::CaseMismatch("libs/draco/".into())
        );
        // A file is still a file; a folder URL without its `/` is not one.
        assert_eq!(
            r("./rhino.wasm", from),
            Class::Found("libs/rhino/rhino.wasm".into())
        );
        assert_eq!(r("../draco", from), Class::Missing);
    }

    #[test]
    fn lines_and_columns_are_one_based() {
        let lines = Lines::of("ab\ncd\n\nef");
        assert_eq!(lines.at(0), (1, 1));
        assert_eq!(lines.at(1), (1, 2));
        assert_eq!(lines.at(3), (2, 1));
        assert_eq!(lines.at(7), (4, 1));
    }
}

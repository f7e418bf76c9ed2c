//! A version checked as a whole: every file's references resolved
//! against all the version's paths, counted by [`Class`], and the
//! problems listed where they are written.

use super::{Class, Extracted, Kind, Mount, Version};
use crate::error::ROOT_PATH_HINT;
use crate::site::rules::is_rules_file;
use serde::Serialize;

/// How many references fell in each class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    pub found: u64,
    pub missing: u64,
    pub case_mismatch: u64,
    pub leaves_version: u64,
    pub external: u64,
    pub unresolvable: u64,
}

impl Counts {
    fn add(&mut self, class: &Class) {
        *match class {
            Class::Found(_) => &mut self.found,
            Class::Missing => &mut self.missing,
            Class::CaseMismatch(_) => &mut self.case_mismatch,
            Class::LeavesVersion | Class::RootPath(_) => &mut self.leaves_version,
            Class::External => &mut self.external,
            Class::Unresolvable => &mut self.unresolvable,
        } += 1;
    }

    pub(crate) fn total(&self) -> u64 {
        self.found
            + self.missing
            + self.case_mismatch
            + self.leaves_version
            + self.external
            + self.unresolvable
    }
}

/// A reference that resolves nowhere inside the version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Problem {
    /// The file that holds it.
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub kind: Kind,
    /// As written.
    pub reference: String,
    /// `missing`, `case_mismatch` or `leaves_version`.
    pub class: &'static str,
    /// For a case mismatch, the path that exists; for a root path
    /// (`/vite.svg`), the file of the version it names from the version's
    /// root.
    pub actual: Option<String>,
    /// For a root path that names a file of the version: that file as
    /// written relative to `file` (`./vite.svg`), what to write instead.
    pub relative: Option<String>,
}

/// One reference with what it resolved to, as publish stores it (so that
/// `inspect` can list what a file references and what references it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub kind: Kind,
    pub reference: String,
    pub class: &'static str,
    /// The file of the version it names (found, or found under another
    /// case, or named from the version's root by a root path).
    pub target: Option<String>,
}

/// What checking a version found.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Report {
    /// Files in the version.
    pub file_count: u64,
    /// Files read for references (scripts, styles, pages, manifests).
    pub files_read: u64,
    pub references: Counts,
    /// Every problem, by file, line and column.
    pub problems: Vec<Problem>,
    /// The site rules files (`_redirects`, `_headers`) that publish would
    /// refuse: the line ccc cannot follow in each.
    pub rules: Vec<RulesProblem>,
    /// Every reference, resolved (not printed: publish stores them).
    #[serde(skip)]
    pub links: Vec<Link>,
    /// The scripts read that are CommonJS, by path.
    #[serde(skip)]
    pub commonjs: Vec<String>,
    /// Every path of the version.
    #[serde(skip)]
    pub paths: Vec<String>,
    /// The root `package.json` as read, when there is one.
    #[serde(skip)]
    pub manifest: Option<Vec<u8>>,
    /// The version's entry point (what `import 'PKG'` loads), when it is
    /// CommonJS, which a browser cannot import; filled in by
    /// `importmap::note_commonjs_entry`, which reads the manifest as
    /// import maps do.
    pub commonjs_entry: Option<CommonJsEntry>,
}

/// A site rules file that publish refuses: the first line ccc cannot
/// follow (`site::rules`), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RulesProblem {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// An entry point a browser cannot import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CommonJsEntry {
    /// The file `import 'PKG'` loads.
    pub file: String,
    /// The ES module builds to use instead, in words.
    pub alternatives: String,
}

impl std::fmt::Display for CommonJsEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "its entry point {} is CommonJS, which a browser cannot import (`import` of it \
             fails: no export named 'default'); {}",
            self.file, self.alternatives
        )
    }
}

impl std::fmt::Display for Problem {
    /// `FILE:LINE:COLUMN  KIND REFERENCE: WHAT`, as reports list it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.class, &self.actual, &self.relative) {
            ("case_mismatch", Some(actual), _) => {
                format!("the file is {actual}: paths are case-sensitive once served")
            }
            ("leaves_version", Some(_), Some(relative)) => {
                format!("a root path, which leaves the version; write {relative}")
            }
            ("leaves_version", ..) if self.reference.starts_with('/') => {
                "a root path, which leaves the version and names no file of it".to_string()
            }
            ("leaves_version", ..) => "leaves the version".to_string(),
            _ => "missing".to_string(),
        };
        write!(
            f,
            "{}:{}:{}  {} {}: {what}",
            self.file,
            self.line,
            self.column,
            self.kind.words(),
            self.reference
        )
    }
}

impl Report {
    pub(crate) fn ok(&self) -> bool {
        self.problems.is_empty() && self.rules.is_empty()
    }

    /// The hint under a list of problems that has root paths
    /// (`/assets/index-B3x9a.js`): where the version is served, and the
    /// bundler settings that write relative URLs instead.
    pub(crate) fn root_path_hint(&self) -> Option<&'static str> {
        self.problems
            .iter()
            .any(|p| p.class == "leaves_version" && p.reference.starts_with('/'))
            .then_some(ROOT_PATH_HINT)
    }
}

/// Whether files at `path` are read for references: the types
/// [`super::extract`] knows.
pub(crate) fn is_read(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    matches!(
        extension.as_str(),
        "js" | "mjs" | "cjs" | "jsx" | "css" | "html" | "htm" | "webmanifest"
    ) || name == "manifest.json"
        || path == "package.json"
}

/// Checks the version `package@version` whose files are at `paths`,
/// served as `mount` says; `read(path)` gives the bytes of a file
/// [`is_read`] accepts (None when it cannot be read, which then names
/// nothing).
pub(crate) fn check(
    package: &str,
    version: &str,
    paths: &[String],
    mount: Mount,
    mut read: impl FnMut(&str) -> crate::error::Result<Option<Vec<u8>>>,
) -> crate::error::Result<Report> {
    let mut rules = Vec::new();
    for path in paths.iter().filter(|p| is_rules_file(p)) {
        let Some(bytes) = read(path)? else { continue };
        if let Err(refused) = crate::site::rules::check(path, &bytes) {
            rules.push(RulesProblem {
                file: refused.file.to_string(),
                line: refused.line,
                message: refused.message,
            });
        }
    }
    let mut read_files = Vec::new();
    let mut manifest = None;
    for path in paths.iter().filter(|p| is_read(p)) {
        crate::interrupt::check()?;
        let Some(bytes) = read(path)? else { continue };
        if path == "package.json" {
            manifest = Some(bytes.clone());
        }
        read_files.push((path.clone(), super::extract(path, &bytes)));
    }
    let mut report = resolve_all(
        package,
        version,
        paths.to_vec(),
        read_files,
        manifest,
        mount,
    );
    report.rules = rules;
    Ok(report)
}

/// Resolves the references `read` found in each file read (by path)
/// against every path of the version `package@version`, whose root
/// `package.json` is `manifest` (its `main` is what `require('./')` at
/// the root loads).
pub(crate) fn resolve_all(
    package: &str,
    version: &str,
    paths: Vec<String>,
    read: Vec<(String, Extracted)>,
    manifest: Option<Vec<u8>>,
    mount: Mount,
) -> Report {
    let main = manifest
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .and_then(super::json::main);
    let files = Version::new(package, version, paths.iter().map(String::as_str))
        .with_main(main)
        .served_at(mount);
    let mut report = Report {
        file_count: paths.len() as u64,
        files_read: read.len() as u64,
        manifest,
        ..Report::default()
    };
    for (path, extracted) in read {
        if extracted.commonjs {
            report.commonjs.push(path.clone());
        }
        for reference in extracted.references {
            let class = files.resolve(&path, &reference);
            report.references.add(&class);
            let problem = class.is_problem();
            let link = Link {
                file: path.clone(),
                line: reference.line,
                column: reference.column,
                kind: reference.kind,
                reference: reference.written,
                class: class.name(),
                target: match class {
                    Class::Found(p) | Class::CaseMismatch(p) | Class::RootPath(Some(p)) => Some(p),
                    _ => None,
                },
            };
            if problem {
                report.problems.push(Problem::from(&link));
            }
            report.links.push(link);
        }
    }
    // By place, whatever order the files came in (a walk, a tarball).
    report
        .problems
        .sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    drop(files);
    report.paths = paths;
    report
}

impl From<&Link> for Problem {
    /// A link that resolves nowhere inside the version; the path a case
    /// mismatch found is its `actual`.
    fn from(link: &Link) -> Problem {
        Problem {
            file: link.file.clone(),
            line: link.line,
            column: link.column,
            kind: link.kind,
            reference: link.reference.clone(),
            class: link.class,
            actual: link.target.clone(),
            relative: match (link.class, &link.target) {
                ("leaves_version", Some(target)) => {
                    // What follows the path (`?v=2`, `#icon`) stays.
                    let rest = link
                        .reference
                        .find(['?', '#'])
                        .map_or("", |i| &link.reference[i..]);
                    Some(format!("{}{rest}", super::relative_to(&link.file, target)))
                }
                _ => None,
            },
        }
    }
}

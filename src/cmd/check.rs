//! `ccc check TARGET`: whether every reference of a version's files
//! resolves inside the version, before (or after) it is published. TARGET
//! is a build folder, an npm tarball, or `PKG@VERSION` in the catalog.
//! Exits 1 when any reference is missing, matches only under another case
//! or leaves the version.
use crate::catalog::publish::{self, CatalogFiles, NoProgress, Sink, Source};
use crate::catalog::query::Page;
use crate::catalog::{Access, Catalog, archive, chunks};
use crate::error::{Error, Result};
use crate::importmap::commonjs::note_commonjs_entry;
use crate::refs::Mount;
use crate::refs::check::{self, Report, is_read};
use crate::site::rules::is_rules_file;
use crate::spec::{Part, Target};
use crate::{outcome, output};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Check that every reference of a version's files resolves inside it.
///
/// Reads each script (static and dynamic `import`, `export ... from`, `new
/// URL(..., import.meta.url)`, `importScripts`, relative `require`),
/// stylesheet (`url()`, `@import`), page (`src`, `srcset`, the `<link>`s it
/// loads, an import map), web manifest (icons), `sourceMappingURL` comment
/// and the root `package.json` (`main`, `module`, `browser`, `exports`), and
/// resolves each reference against the file's place in the version. Each
/// is found (a URL naming a folder with files, like `new URL('./',
/// import.meta.url)`, too), missing, found only under another case,
/// leaving the version (`../` above its root, or a root path like
/// `/assets/index.js`: ccc serves the version under /assets/PKG/VERSION/,
/// so build with Vite's `base: './'` or webpack's `publicPath: 'auto'`),
/// external (a URL, a bare specifier such as `react`, another version's
/// /assets/ URL) or built at runtime (never guessed). Exits 1 when any is
/// missing, a case mismatch or leaving the version.
#[derive(Debug, Args)]
pub struct ReferencesArgs {
    /// A build folder, a tarball (.tgz, .tar), or PKG@VERSION in the
    /// catalog.
    #[arg(value_name = "DIR|FILE|PKG@VERSION")]
    pub(crate) target: String,

    /// Check as a site serves the build, at the root of its host (`ccc
    /// site`): a root path (`/assets/index-B3x9a.js`, what Vite's default
    /// `base: '/'` writes) names a file of the build instead of leaving it.
    /// Without the flag, a version in the catalog that a site serves is
    /// checked so.
    #[arg(long)]
    pub(crate) site: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Whether a TARGET that is not PKG@VERSION was meant as a path: it has a
/// `/`, starts with `.` or `~`, or ends as an archive's name does.
fn looks_like_a_path(target: &str) -> bool {
    let lower = target.to_ascii_lowercase();
    target.contains('/')
        || target.starts_with('.')
        || target.starts_with('~')
        || [".tgz", ".tar", ".tar.gz"]
            .iter()
            .any(|e| lower.ends_with(e))
}

/// Problems listed in the table before "and N more" (all are in --json).
const SHOWN: usize = 20;

pub(crate) fn run(db: &Path, args: ReferencesArgs) -> Result<ExitCode> {
    let target = Path::new(&args.target);
    let mount = match args.site {
        true => Mount::SiteRoot,
        false => Mount::Assets,
    };
    let (name, report) = if target.is_dir() {
        (args.target.clone(), check_dir(db, target, mount)?)
    } else if target.exists() {
        (args.target.clone(), check_archive(target, mount)?)
    } else {
        let wanted = Target::parse_as(&args.target, Part::Required, Part::Refused, "PKG@VERSION")
            .map_err(|_| {
            if looks_like_a_path(&args.target) {
                // A folder or archive that is not there: a failure (exit
                // 1), as publish's missing source is, not a wrong command
                // line.
                Error::bad_input(target, "no such folder or archive")
            } else {
                Error::Usage(format!(
                    "`{}` is neither a folder, an archive nor PKG@VERSION",
                    args.target
                ))
            }
        })?;
        check_catalog(db, &wanted, args.site)?
    };
    let code = if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    if args.json {
        output::print_json(&report)?;
    } else {
        println!("{}", summary(&name, &report));
    }
    Ok(code)
}

/// The summary, then the first problems, one a line.
fn summary(name: &str, report: &Report) -> String {
    let r = &report.references;
    let mut lines = vec![format!(
        "Checked {name}: {}, {} read, {}",
        output::count(report.file_count, "file"),
        report.files_read,
        output::count(r.total(), "reference"),
    )];
    if r.total() > 0 {
        lines.push(format!("  {}", outcome::references_counted(report)));
    }
    for refused in &report.rules {
        lines.push(format!(
            "  {} line {}: {} (publish refuses this version)",
            refused.file, refused.line, refused.message
        ));
    }
    for problem in report.problems.iter().take(SHOWN) {
        lines.push(format!("  {problem}"));
    }
    if report.problems.len() > SHOWN {
        lines.push(format!(
            "  and {} more (--json lists them all)",
            report.problems.len() - SHOWN
        ));
    }
    if let Some(hint) = report.root_path_hint() {
        lines.push(format!("  hint: {hint}"));
    }
    if let Some(entry) = &report.commonjs_entry {
        lines.push(format!("  note: {entry}"));
    }
    lines.join("\n")
}

/// A build folder, as publish would walk it.
fn check_dir(db: &Path, dir: &Path, mount: Mount) -> Result<Report> {
    let plan = publish::plan_dir(
        dir,
        &[],
        publish::DEFAULT_MAX_FILE_SIZE,
        CatalogFiles::of(db),
        &NoProgress,
    )?;
    let (package, version) = identity_at(dir);
    let paths: Vec<String> = plan.files.iter().map(|f| f.path.clone()).collect();
    let mut report = check::check(&package, &version, &paths, mount, |path| {
        let full = dir.join(path);
        std::fs::read(&full)
            .map(Some)
            .map_err(|e| Error::io(full, e))
    })?;
    note_commonjs_entry(&package, &mut report);
    Ok(report)
}

/// The package and version the folder's package.json names, for URLs
/// under its own `/assets/PKG/VER/`; empty when there is none.
fn identity_at(dir: &Path) -> (String, String) {
    let manifest = dir.join("package.json");
    std::fs::read(&manifest)
        .ok()
        .and_then(|bytes| crate::catalog::manifest::identity(&bytes, &manifest).ok())
        .map(|(package, version)| (package, version.to_string()))
        .unwrap_or_default()
}

/// An npm tarball (or any tar archive), read as publish reads it.
fn check_archive(path: &Path, mount: Mount) -> Result<Report> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let rules = archive::Rules {
        excludes: Vec::new(),
        max_file_size: publish::DEFAULT_MAX_FILE_SIZE,
        chunked_from: chunks::CHUNKED_FROM,
        max_unpacked_size: archive::DEFAULT_MAX_UNPACKED_SIZE,
        want_identity: false,
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    let named = std::sync::OnceLock::new();
    let mut files: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| archive::read(path, file, &rules, &Sink::new(tx, &named)));
        for entry in rx {
            let wanted = is_read(&entry.path) || is_rules_file(&entry.path);
            let bytes = match (entry.source, wanted) {
                (Source::Read(bytes), true) => Some(bytes),
                (Source::Spooled(temp), true) => std::fs::read(temp.as_ref()).ok(),
                _ => None,
            };
            files.push((entry.path, bytes));
        }
        reader
            .join()
            .map_err(|_| Error::Internal("the archive reader panicked".into()))?
    })?;
    let manifest = files
        .iter()
        .find(|(p, _)| p == "package.json")
        .and_then(|(_, b)| b.as_deref())
        .and_then(|b| crate::catalog::manifest::identity(b, path).ok());
    let (package, version) = manifest
        .map(|(p, v)| (p, v.to_string()))
        .unwrap_or_default();
    let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let mut bytes: std::collections::HashMap<String, Vec<u8>> = files
        .into_iter()
        .filter_map(|(p, b)| b.map(|b| (p, b)))
        .collect();
    let mut report = check::check(&package, &version, &paths, mount, |p| Ok(bytes.remove(p)))?;
    note_commonjs_entry(&package, &mut report);
    Ok(report)
}

/// A version in the catalog, each file read decoded; as a site serves it
/// when `site` or a site serves its package.
fn check_catalog(db: &Path, target: &Target, site: bool) -> Result<(String, Report)> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let version = super::resolve_version(&catalog, target)?;
    let mount = match site || catalog.serves_as_site(&target.package)? {
        true => Mount::SiteRoot,
        false => Mount::Assets,
    };
    let files = catalog.files(version.id, Page::ALL)?;
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let by_path: std::collections::HashMap<&str, _> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    let exact = version.version.to_string();
    let mut report = check::check(&target.package, &exact, &paths, mount, |path| match by_path
        .get(path)
    {
        Some(file) => catalog.decoded(file).map(Some),
        None => Ok(None),
    })?;
    note_commonjs_entry(&target.package, &mut report);
    Ok((format!("{}@{exact}", target.package), report))
}

//! One module per subcommand. Each resolves its clap arguments into library
//! calls and renders the result as a table or JSON; none holds catalog logic.

pub(crate) mod args;
pub(crate) mod audit;
pub(crate) mod backup;
pub(crate) mod cat;
pub(crate) mod causal;
pub(crate) mod check;
pub(crate) mod deltas;
pub(crate) mod diff;
pub(crate) mod export;
pub(crate) mod follow;
pub(crate) mod gc;
pub(crate) mod generate;
pub(crate) mod importmap;
pub(crate) mod inspect;
pub(crate) mod ls;
pub(crate) mod publish;
pub(crate) mod recompress;
pub(crate) mod rm;
pub(crate) mod serve;
pub(crate) mod site;
pub(crate) mod tag;
pub(crate) mod token;
pub(crate) mod verify;

use crate::catalog::rows::VersionRow;
use crate::catalog::{Access, Catalog};
use crate::error::{Error, Result};
use crate::output;
use crate::purge::{self, Purged};
use crate::spec::{Selector, Target};
use args::PurgeArgs;

/// A package the catalog does not hold, with the names it does hold that
/// are a typo away (`reakt` for `react`), for the hint. Looked up after the
/// command failed, so that only a failing command pays for the list; any
/// error reading it leaves the error as it was.
pub(crate) fn suggest_packages(db: &std::path::Path, err: Error) -> Error {
    let Error::PackageNotFound { package, similar } = err else {
        return err;
    };
    let names = Catalog::open(db, Access::ReadOnly).and_then(|c| c.package_names());
    let similar = match names {
        Ok(names) => similar_names(&package, &names),
        Err(_) => similar,
    };
    Error::PackageNotFound { package, similar }
}

/// A file a version does not hold, with the version's paths a typo away
/// for the hint (see [`similar_paths`]); looked up, like
/// [`suggest_packages`], only once the command has failed.
pub(crate) fn suggest_paths(db: &std::path::Path, err: Error) -> Error {
    let Error::AssetNotFound {
        package,
        version,
        path,
        similar,
    } = err
    else {
        return err;
    };
    let paths = Catalog::open(db, Access::ReadOnly).and_then(|catalog| {
        let exact = semver::Version::parse(&version).map_err(|e| Error::Internal(e.to_string()))?;
        let row = catalog.resolve(&package, &Selector::Exact(exact))?;
        catalog.paths(row.id)
    });
    let similar = match paths {
        Ok(paths) => similar_paths(&path, &paths),
        Err(_) => similar,
    };
    Error::AssetNotFound {
        package,
        version,
        path,
        similar,
    }
}

/// The paths of `paths` a typo of `wanted` may have meant, at most three:
/// those equal to it but for case, else those whose file name it is
/// (`main.js` for `js/main.js`), else the closest by edit distance (as
/// [`similar_names`] judges names).
pub(crate) fn similar_paths(wanted: &str, paths: &[String]) -> Vec<String> {
    let folded = wanted.to_lowercase();
    let same: Vec<String> = paths
        .iter()
        .filter(|p| p.to_lowercase() == folded)
        .take(3)
        .cloned()
        .collect();
    if !same.is_empty() {
        return same;
    }
    let suffix = format!("/{wanted}");
    let under: Vec<String> = paths
        .iter()
        .filter(|p| p.ends_with(&suffix))
        .take(3)
        .cloned()
        .collect();
    if !under.is_empty() {
        return under;
    }
    similar_names(wanted, paths)
}

/// The names in `names` closest to `wanted` (ignoring case), at most
/// three, when close enough to be a typo: an edit distance of a third of
/// the name's characters, at least one, counting a swap of two
/// neighbours as one edit (`wbe` for `web`), as strsim's
/// Damerau-Levenshtein distance does.
pub(crate) fn similar_names(wanted: &str, names: &[String]) -> Vec<String> {
    let wanted = wanted.to_lowercase();
    let length = wanted.chars().count();
    let limit = (length / 3).max(1);
    let mut close: Vec<(usize, &String)> = names
        .iter()
        // Lengths that differ by more than the limit are never close.
        .filter(|name| name.chars().count().abs_diff(length) <= limit)
        .map(|name| {
            (
                strsim::damerau_levenshtein(&wanted, &name.to_lowercase()),
                name,
            )
        })
        .filter(|&(d, _)| d <= limit)
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

/// `pkg@version[/path]` of `row`, naming what was asked for when it was a
/// tag or a range: `app@1.5.0/app.js (resolved from ^1.3)`.
fn version_title(row: &VersionRow, target: &Target, path: Option<&str>) -> String {
    let mut exact = format!("{}@{}", row.package, row.version);
    if let Some(path) = path {
        exact = format!("{exact}/{path}");
    }
    match &target.version {
        Some(Selector::Exact(_)) => exact,
        Some(asked) => format!("{exact} (resolved from {asked})"),
        None => format!("{exact} (resolved from latest)"),
    }
}

/// Resolves `PKG@VERSION` (VERSION may be a selector) to a version row; the
/// latest version when the target names none.
fn resolve_version(catalog: &Catalog, target: &Target) -> Result<VersionRow> {
    let selector = target.version.as_ref().unwrap_or(&Selector::Latest);
    catalog.resolve(&target.package, selector)
}

/// `--purge` after `rm` removed `versions`, or `publish --force` replaced
/// one (package, version, file paths): nothing without caches, on a dry
/// run, or when nothing changed. Else what was purged, and the outcome to
/// end the command with: the error naming the cache that failed (see
/// [`purge`]), returned once the command's own output is printed.
fn purge_caches<'a>(
    purge: &PurgeArgs,
    dry_run: bool,
    versions: impl IntoIterator<Item = (&'a str, String, &'a [String])>,
) -> (Option<Purged>, Result<()>) {
    if purge.caches.is_empty() || dry_run {
        return (None, Ok(()));
    }
    let listed = purge::Paths::new().and_then(|mut paths| {
        for (package, version, files) in versions {
            paths.add_version(package, &version, files.iter().map(String::as_str))?;
        }
        Ok(paths)
    });
    match listed {
        Ok(paths) => purge_paths(purge, paths),
        Err(e) => (None, Err(e)),
    }
}

/// `--purge` of `paths`, listed as a command removed versions (`gc` lists
/// them as it goes); as [`purge_caches`] does.
fn purge_paths(purge: &PurgeArgs, paths: purge::Paths) -> (Option<Purged>, Result<()>) {
    let paths = match paths.finish() {
        Ok(paths) => paths,
        Err(e) => return (None, Err(e)),
    };
    if purge.caches.is_empty() || paths.is_empty() {
        return (None, Ok(()));
    }
    // Until the origins have noticed the removal, a purged cache would
    // fetch the files again and keep them.
    std::thread::sleep(purge.purge_delay);
    match purge::purge(&purge.caches, &paths) {
        Ok(purged) => (Some(purged), Ok(())),
        Err(e) => (None, Err(e)),
    }
}

/// The line a table-printing command ends with after a purge.
fn print_purged(purged: &Purged) -> Result<()> {
    output::print(format_args!(
        "Purged {} from {}: {}",
        output::count(purged.paths, "URL"),
        output::count(purged.caches.len() as u64, "cache"),
        purged.caches.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::{similar_names, similar_paths};

    #[test]
    fn only_close_names_are_suggested() {
        let names = ["react", "react-dom", "preact", "vue", "web"].map(String::from);
        assert_eq!(similar_names("reakt", &names), ["react"]);
        assert_eq!(similar_names("React", &names), ["react", "preact"]);
        assert_eq!(similar_names("wbe", &names), ["web"], "a swap is one edit");
        assert_eq!(similar_names("vué", &names), ["vue"]);
        assert!(similar_names("angular", &names).is_empty());
        assert!(similar_names("xy", &names).is_empty());
    }

    #[test]
    fn paths_a_typo_away_are_suggested() {
        let paths = ["index.html", "js/main.js", "js/vendor.js", "img/Logo.png"].map(String::from);
        assert_eq!(similar_paths("img/logo.png", &paths), ["img/Logo.png"]);
        assert_eq!(similar_paths("main.js", &paths), ["js/main.js"]);
        assert_eq!(similar_paths("js/mian.js", &paths), ["js/main.js"]);
        assert_eq!(similar_paths("index.htm", &paths), ["index.html"]);
        assert!(similar_paths("css/app.css", &paths).is_empty());
    }
}

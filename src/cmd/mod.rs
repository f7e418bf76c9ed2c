//! One module per subcommand. Each resolves its clap arguments into library
//! calls and renders the result as a table or JSON; none holds catalog logic.

pub mod cat;
pub mod causal;
pub mod diff;
pub mod export;
pub mod gc;
pub mod generate;
pub mod inspect;
pub mod ls;
pub mod publish;
pub mod rm;
pub mod serve;
pub mod tag;
pub mod verify;

use crate::catalog::Catalog;
use crate::catalog::query::VersionRow;
use crate::error::Result;
use crate::spec::{Selector, Target};

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

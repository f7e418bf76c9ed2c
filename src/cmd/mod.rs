//! One module per subcommand. Each resolves its clap arguments into library
//! calls and renders the result as a table or JSON; none holds catalog logic.

pub mod cat;
pub mod causal;
pub mod export;
pub mod gc;
pub mod generate;
pub mod inspect;
pub mod ls;
pub mod publish;
pub mod rm;
pub mod serve;
pub mod verify;

use crate::catalog::Catalog;
use crate::catalog::query::VersionRow;
use crate::error::Result;
use crate::spec::{Selector, Target};

/// Resolves `PKG@VERSION` (VERSION may be a selector) to a version row; the
/// latest version when the target names none.
fn resolve_version(catalog: &Catalog, target: &Target) -> Result<VersionRow> {
    let selector = target.version.as_ref().unwrap_or(&Selector::Latest);
    catalog.resolve(&target.package, selector)
}

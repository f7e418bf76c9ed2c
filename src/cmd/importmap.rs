//! `ccc importmap PKG@VERSION`: the import map of a version
//! ([`crate::importmap`]) on stdout, each specifier it could not resolve
//! on stderr. The map is written either way; the exit code is 1 when any
//! specifier is unresolved, as `ccc check` exits 1 on a reference that
//! does not resolve, so a script that writes the map (`ccc importmap
//! app@1.4.0 > map.json`) can tell a map that will fail in the browser.

use crate::catalog::{Access, Catalog};
use crate::cli::ImportmapArgs;
use crate::error::Result;
use crate::importmap::{self, Options};
use crate::output;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, args: ImportmapArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let version = super::resolve_version(&catalog, &args.target)?;
    let options = Options {
        base: args.base.unwrap_or_default(),
        integrity: args.integrity,
    };
    let generated = importmap::generate(&catalog, version, &options)?;
    let code = match generated.unresolved.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    };
    if args.json {
        output::print_json(&generated)?;
        return Ok(code);
    }
    output::print_json(&generated.importmap)?;
    for unresolved in &generated.unresolved {
        eprintln!("warning: unresolved: {unresolved}");
    }
    if !generated.unresolved.is_empty() {
        eprintln!(
            "{} left out of the map",
            output::count(generated.unresolved.len() as u64, "specifier")
        );
    }
    Ok(code)
}

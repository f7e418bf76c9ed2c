//! `ccc importmap PKG@VERSION`: the import map of a version
//! ([`crate::importmap`]) on stdout, each specifier it could not resolve
//! on stderr. The map is written either way; the exit code is 1 when any
//! specifier is unresolved, as `ccc check` exits 1 on a reference that
//! does not resolve, so a script that writes the map (`ccc importmap
//! app@1.4.0 > map.json`) can tell a map that will fail in the browser.
//!
//! The packages the catalog lacks are then listed at once, with what they
//! depend on as the npm registry says ([`registry`]), and the `npm pack`
//! line that fetches and publishes them all.

use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::importmap::registry::{self, Lacking, Registry};
use crate::importmap::{self, Generated, Options};
use crate::output;
use crate::spec::Target;
use clap::Args;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// Write the import map that loads a version and what it imports from the
/// catalog, without a bundler.
///
/// The map (JSON, as browsers read it, on stdout) sends the version's own
/// entry points (package.json `exports`, with the `browser`, `import`,
/// `module` and `default` conditions and `./*` patterns, else `module` or
/// `main`) and every bare specifier its files import (`rxjs`,
/// `lodash-es/debounce.js`) to exact-version URLs under /assets/. Each
/// package imported is the newest version in the catalog that the range
/// of the version's `dependencies` or `peerDependencies` allows (npm's
/// rules; an undeclared one takes the newest release), and what it
/// imports is resolved the same way, into `scopes` where two versions
/// need different answers. `ccc serve` answers
/// /assets/PKG/VERSION/?importmap with the same map.
///
/// A specifier nothing satisfies is left out of the map and listed on
/// stderr (with --json, in `unresolved`); the map is still written, and
/// the exit code is 1, as for `ccc check`. So is one whose file is
/// CommonJS, which a browser cannot import (the ES module builds to use
/// instead are named). The packages the catalog lacks are listed with
/// everything they depend on, as the npm registry says (--registry,
/// --offline), and the `npm pack` line that fetches them all.
#[derive(Debug, Args)]
pub struct ImportmapArgs {
    /// The version, like `app@1.4.0` (or `app@latest`, `app@^1`).
    #[arg(value_name = "PKG@VERSION", value_parser = parse_version)]
    pub(crate) target: Target,

    /// Where the URLs start, like https://cdn.example.com (an http or https
    /// URL, optionally with a path); default: none, so URLs are
    /// root-relative (/assets/...) for pages served by the same ccc.
    #[arg(long, value_name = "URL", value_parser = parse_base)]
    pub(crate) base: Option<crate::importmap::Base>,

    /// Pin every module the map can reach to its bytes: `integrity` with
    /// each file's `sha256-...` Subresource Integrity value, which browsers
    /// check before running it.
    #[arg(long)]
    pub(crate) integrity: bool,

    /// Print the map with what went into it (the versions it pins, the
    /// specifiers left unresolved, the packages lacking) as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    /// The npm registry asked what the packages the catalog lacks depend
    /// on, so that all of them are listed at once [default: npm's
    /// npm_config_registry, else https://registry.npmjs.org/].
    #[arg(long, env = "npm_config_registry", value_name = "URL", value_parser = parse_registry)]
    pub(crate) registry: Option<String>,

    /// Ask no registry: list only the packages the map itself lacks, by
    /// range.
    #[arg(
        long,
        env = "CCC_OFFLINE",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub(crate) offline: bool,
}

/// `importmap --json`: the map and what went into it, and what the
/// catalog lacks.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    generated: &'a Generated,
    lacking: &'a [Lacking],
}

pub(crate) fn run(db: &Path, args: ImportmapArgs) -> Result<ExitCode> {
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
    // The packages the map lacks, each range once, with who wants it.
    let mut first: Vec<(String, String, String)> = Vec::new();
    for unresolved in &generated.unresolved {
        if let Some((package, range)) = &unresolved.lacking {
            let by = format!("{}@{}", unresolved.package, unresolved.version);
            let asked = (package.clone(), range.clone(), by);
            if !first.contains(&asked) {
                first.push(asked);
            }
        }
    }
    let url = args
        .registry
        .as_deref()
        .unwrap_or(registry::DEFAULT_REGISTRY)
        .to_string();
    let (lacking, trouble) = if first.is_empty() {
        (Vec::new(), Vec::new())
    } else if args.offline {
        registry::lacking(&catalog, first, None)?
    } else {
        match Registry::new(&url) {
            Ok(mut registry) => registry::lacking(&catalog, first, Some(&mut registry))?,
            Err(why) => {
                let (lacking, mut trouble) = registry::lacking(&catalog, first, None)?;
                trouble.insert(0, why);
                (lacking, trouble)
            }
        }
    };
    if args.json {
        output::print_json(&Report {
            generated: &generated,
            lacking: &lacking,
        })?;
    } else {
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
    }
    for why in &trouble {
        eprintln!("warning: npm registry: {why}");
    }
    if !lacking.is_empty() && !args.json {
        eprintln!("{}", lacking_text(&lacking, db, args.offline, &url));
    }
    Ok(code)
}

/// The packages lacking, one a line, and the command that fetches and
/// publishes them into the catalog at `db`.
fn lacking_text(lacking: &[Lacking], db: &Path, offline: bool, registry: &str) -> String {
    let heading = match (offline, lacking.iter().all(|l| l.version.is_some())) {
        (true, _) => "lacking from the catalog (--offline: what they depend on is known once \
                      they are published):"
            .to_string(),
        (false, true) => format!(
            "lacking from the catalog, with everything they depend on ({}, from {registry}):",
            output::count(lacking.len() as u64, "package")
        ),
        (false, false) => format!(
            "lacking from the catalog ({}; the registry could not say what all of them depend \
             on):",
            output::count(lacking.len() as u64, "package")
        ),
    };
    let specs: Vec<String> = lacking.iter().map(Lacking::spec).collect();
    let width = specs.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let mut lines = vec![heading];
    for (spec, package) in specs.iter().zip(lacking) {
        let wanted: Vec<String> = package
            .wanted_by
            .iter()
            .map(|w| format!("{} ({})", w.by, w.range))
            .collect();
        lines.push(format!("  {spec:width$}  for {}", wanted.join(", ")));
    }
    let db_flag = if db == Path::new("cdn.db") {
        String::new()
    } else {
        format!(" --db {}", shell_word(&db.to_string_lossy()))
    };
    lines.push("fetch and publish them all:".to_string());
    let words: Vec<String> = specs.iter().map(|s| shell_word(s)).collect();
    lines.push(format!(
        "  npm pack --silent {} | xargs -n1 ccc{db_flag} publish",
        words.join(" ")
    ));
    lines.join("\n")
}

/// `word` as a shell reads it: as it is when it has nothing special, else
/// in single quotes.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "@/._-+=:,".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::importmap::registry::Wanted;

    #[test]
    fn the_npm_pack_line_fetches_every_package_into_this_catalog() {
        let wanted = |by: &str, range: &str| Wanted {
            by: by.into(),
            range: range.into(),
        };
        let lacking = vec![
            Lacking {
                package: "react-dom".into(),
                version: Some("18.3.1".into()),
                wanted_by: vec![wanted("app@1.0.0", "^18.3.1")],
            },
            Lacking {
                package: "js-tokens".into(),
                version: Some("4.0.0".into()),
                wanted_by: vec![wanted("loose-envify@1.4.0", "^3.0.0 || ^4.0.0")],
            },
        ];
        let text = lacking_text(
            &lacking,
            Path::new("/srv/my cdn.db"),
            false,
            "https://registry.npmjs.org/",
        );
        assert!(
            text.contains("  react-dom@18.3.1  for app@1.0.0 (^18.3.1)\n")
                && text.contains("  js-tokens@4.0.0   for loose-envify@1.4.0 (^3.0.0 || ^4.0.0)"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "npm pack --silent react-dom@18.3.1 js-tokens@4.0.0 | xargs -n1 ccc --db '/srv/my cdn.db' publish"
            ),
            "{text}"
        );
        let offline = vec![Lacking {
            version: None,
            ..lacking[0].clone()
        }];
        let text = lacking_text(&offline, Path::new("cdn.db"), true, "");
        assert!(text.contains("--offline"), "{text}");
        assert!(
            text.ends_with("npm pack --silent 'react-dom@^18.3.1' | xargs -n1 ccc publish"),
            "{text}"
        );
    }
}

//! `ccc token create NAME --scope ...`, `ccc token ls`, `ccc token revoke
//! NAME`: the tokens a `ccc serve --publish-api` of this catalog accepts
//! (see [`crate::catalog::tokens`]). Run by the catalog's administrator on
//! the machine that holds it.
//!
//! `create` prints the token alone on stdout, so that `ccc token create ci
//! --scope publish:app > token` keeps nothing else, and what it may do on
//! stderr; it is the only time the token is shown. It makes the catalog
//! when there is none yet: a writer whose every version comes from CI
//! starts from its first token, as a local one starts from its first
//! publish.
use crate::catalog::tokens::TokenRow;
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table};
use crate::units::{rfc3339, unix_now};
use clap::{Args, Subcommand};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// Make, list and revoke the tokens that may change the catalog over HTTP.
///
/// A token is given to CI (as CCC_TOKEN) for `ccc publish --to URL`
/// against a `ccc serve --publish-api` of this catalog. It is shown once,
/// when made: the catalog keeps only a hash of it, so replicas and backups
/// hold nothing a thief could use. Each token has scopes: ACTIONS:GLOBS,
/// where the actions are publish (a new version), replace (a version
/// published again, replacing it), tag (dist-tags), remove (rm), and
/// GLOBS are package names
/// where `*` stands for anything (`@team/*`, `app`, `*`); read-stats (a
/// restricted /_stats and /metrics) takes no package. A token with no
/// scope can do nothing.
#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub(crate) action: TokenAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenAction {
    /// Make a token and print it, once, on stdout.
    ///
    /// Only a hash of it is kept, in the catalog; the catalog is made when
    /// there is none yet (a writer whose versions all come from CI).
    Create {
        /// A name for the token, like `ci-github` (letters, digits, `-_.`):
        /// the audit log records it, and revoke takes it.
        #[arg(value_name = "NAME")]
        name: String,
        /// What the token may do, as ACTIONS:GLOBS, like
        /// `publish,tag:@team/*` or `read-stats` (repeatable).
        #[arg(long, value_name = "SCOPE", value_parser = crate::catalog::tokens::parse_scope)]
        scope: Vec<crate::catalog::tokens::Scope>,
        /// How long the token lasts, like 90d or 1y; `never` for a token
        /// that does not expire.
        #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_expiry)]
        expires: Expiry,
        /// Print the token and its details as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the tokens: name, scopes, expiry, last use, state.
    Ls {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke the token NAME: every server of the catalog refuses it from
    /// its next request.
    Revoke {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// How long a token lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    After(Duration),
    Never,
}

fn parse_expiry(s: &str) -> Result<Expiry, String> {
    if s == "never" {
        return Ok(Expiry::Never);
    }
    parse_positive_duration(s)
        .map(Expiry::After)
        .map_err(|e| format!("{e}; or `never`"))
}

pub(crate) fn run(db: &Path, args: TokenArgs) -> Result<ExitCode> {
    match args.action {
        TokenAction::Create {
            name,
            scope,
            expires,
            json,
        } => {
            let catalog = Catalog::open(db, Access::Create)?;
            let expires_at = match expires {
                Expiry::Never => None,
                Expiry::After(d) => Some(
                    unix_now().saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2)),
                ),
            };
            let created = catalog.create_token(&name, scope, expires_at)?;
            if json {
                output::print_json(&created)?;
            } else {
                output::print(&created.token)?;
                let row = &created.row;
                let scopes = scopes_text(row);
                eprintln!(
                    "made the token {}: {scopes}; {}. It is shown once: keep it in your CI's \
                     secrets (as CCC_TOKEN), never in a repository.",
                    row.name,
                    expiry_text(row.expires_at)
                );
                if row.scopes.is_empty() {
                    eprintln!(
                        "warning: {} has no scope, so it can do nothing; revoke it and give \
                         --scope ACTIONS:GLOBS, like --scope publish,tag:@team/*",
                        row.name
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TokenAction::Ls { json } => {
            let catalog = Catalog::open(db, Access::ReadOnly)?;
            let tokens = catalog.tokens()?;
            if json {
                output::print_json(&tokens)?;
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = Table::new(vec![
                Column::text("name"),
                Column::prose("scopes"),
                Column::text("expires"),
                Column::text("last used"),
                Column::text("state"),
            ]);
            for t in &tokens {
                table.add_row([
                    t.name.clone(),
                    scopes_text(t),
                    t.expires_at.map_or("never".into(), rfc3339),
                    t.last_used_at.map_or("never".into(), rfc3339),
                    t.state.to_string(),
                ]);
            }
            output::print(table)?;
            Ok(ExitCode::SUCCESS)
        }
        TokenAction::Revoke { name } => {
            let catalog = Catalog::open(db, Access::ReadWrite)?;
            let row = catalog.revoke_token(&name)?;
            output::print(format_args!(
                "Revoked the token {}: servers of this catalog refuse it from their next request",
                row.name
            ))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn scopes_text(row: &TokenRow) -> String {
    if row.scopes.is_empty() {
        return "no scope".into();
    }
    row.scopes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn expiry_text(expires_at: Option<i64>) -> String {
    match expires_at {
        None => "it never expires".into(),
        Some(at) => format!("it expires at {}", rfc3339(at)),
    }
}

//! `ccc audit`: the catalog's audit log (see [`crate::catalog::audit`]),
//! oldest first, as a table or JSON.
use crate::catalog::{Access, Catalog};
use crate::cmd::args::*;
use crate::error::Result;
use crate::output::{self, Column, Table};
use crate::units::{rfc3339, unix_now};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// Show the audit log: what was changed over HTTP, by which token, from
/// where, and tokens made and revoked; oldest first.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Show the last N rows [default: 100; 0: all].
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) limit: u64,
    /// Only rows newer than DURATION ago, like 24h or 7d.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub(crate) since: Option<Duration>,
    /// Only the rows of the token NAME.
    #[arg(long, value_name = "NAME")]
    pub(crate) token: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(db: &Path, args: AuditArgs) -> Result<ExitCode> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let since = args
        .since
        .map(|d| unix_now().saturating_sub(i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2)));
    let limit = (args.limit > 0).then_some(args.limit);
    let rows = catalog.audit_log(since, args.token.as_deref(), limit)?;
    if args.json {
        output::print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(vec![
        Column::text("at"),
        Column::text("token"),
        Column::text("client"),
        Column::text("action"),
        Column::text("target"),
        Column::number("status"),
        Column::prose("detail"),
    ]);
    for row in &rows {
        table.add_row([
            rfc3339(row.at),
            row.token.clone().unwrap_or_else(|| "-".into()),
            row.client.clone(),
            row.action.clone(),
            row.target.clone(),
            match row.status {
                0 => "-".to_string(),
                n => n.to_string(),
            },
            row.detail.clone(),
        ]);
    }
    output::print(table)?;
    Ok(ExitCode::SUCCESS)
}

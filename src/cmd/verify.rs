//! `ccc verify`: check the database and every blob; exit 1 on any problem.
use crate::catalog::{Access, Catalog};
use crate::error::Result;
use crate::output::{self, Column, Table, count};
use crate::units::human_size;
use clap::Args;
use std::path::Path;
use std::process::ExitCode;

/// Check the database and that every blob decodes to its recorded sha256.
///
/// Exits 1 when anything is wrong, after listing every problem and the files
/// it affects.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Print no progress.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(db: &Path, args: VerifyArgs) -> Result<ExitCode> {
    let mut catalog = Catalog::open(db, Access::ReadOnly)?;
    catalog.stop_on_interrupt()?;
    let (_, total) = catalog.blob_totals()?;
    let total = total + catalog.brotli_totals()?.1 + catalog.delta_totals()?.1;
    let bar = output::byte_bar(total, "Verifying", args.quiet || args.json);
    let report = catalog.verify(&|bytes| bar.inc(bytes));
    bar.finish_and_clear();
    let report = report?;
    let code = if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    if args.json {
        output::print_json(&report)?;
        return Ok(code);
    }
    if !report.ok {
        let mut table = Table::new(vec![
            Column::text("kind"),
            Column::path("object"),
            Column::prose("problem"),
            Column::path("affects"),
        ]);
        for p in &report.problems {
            table.add_row([
                p.kind.to_string(),
                p.object.clone(),
                p.detail.clone(),
                p.affects.join("\n"),
            ]);
        }
        output::print(table)?;
    }
    // Short enough for an 80-column terminal: the streams' count is in
    // --json.
    let mut brotli = if report.brotli_count > 0 {
        format!(" + {} brotli", human_size(report.brotli_bytes))
    } else {
        String::new()
    };
    if report.delta_count > 0 {
        brotli.push_str(&format!(
            " + {} in {}",
            human_size(report.delta_bytes),
            count(report.delta_count, "delta")
        ));
    }
    output::print(format_args!(
        "{}: {} ({}{brotli}) and {} checked, {}",
        if report.ok { "ok" } else { "FAILED" },
        count(report.blob_count, "blob"),
        human_size(report.stored_bytes),
        count(report.version_count, "version"),
        count(report.problems.len() as u64, "problem"),
    ))?;
    Ok(code)
}

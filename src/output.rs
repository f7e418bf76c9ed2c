//! Output for people and for scripts: comfy-table tables with human units,
//! JSON with exact integers, and progress bars that appear only on a
//! terminal.

use crate::error::{Error, Result};
use comfy_table::{CellAlignment, LineStyle, Table, TableStyle};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// No borders, one rule under the header: easy to read, easy to grep.
const STYLE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// A table with a header row; columns listed in `right` are right-aligned
/// (numbers).
pub fn table(header: &[&str], right: &[usize]) -> Table {
    let mut table = Table::new();
    table.load_style(STYLE);
    table.set_header(header.to_vec());
    for &i in right {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Writes `text` and a newline to stdout.
pub fn print(text: impl std::fmt::Display) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(Error::Stdout)
}

/// Writes `value` as pretty JSON to stdout.
pub fn print_json(value: &impl serde::Serialize) -> Result<()> {
    print(to_json(value)?)
}

/// `value` as pretty JSON. Every report ccc prints serializes; a failure
/// here is a bug.
pub fn to_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot encode the report as JSON: {e}")))
}

/// A byte-counting progress bar on stderr, hidden when `quiet` or when
/// stderr is not a terminal.
pub fn byte_bar(total: u64, verb: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{prefix:>10.cyan.bold} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(verb.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

//! Output for people and for scripts: tables that fit the terminal, with
//! human units and counted nouns (`1 file`, `3 files`); JSON with exact
//! integers in one vocabulary (docs/JSON.md); progress that appears only on
//! a terminal.
//!
//! # Table width
//!
//! A table is drawn with comfy-table's dynamic arrangement at the width of
//! the terminal: the real one when stdout is a terminal, else `COLUMNS`
//! when it is set (so `COLUMNS=80 ccc verify | less` fits 80 columns), else
//! no limit (a pipe into grep gets whole lines). When a table is too wide,
//! its widest shrinkable columns give way first: paths and digests are
//! shortened in the middle with `…` (their start and end say the most),
//! but never into a start and an end that another path of the column also
//! has (`svgs/…/x.svg` beside `svgs-full/…/x.svg`): the cut moves, or the
//! column keeps the room it needs. Prose is wrapped, numbers and dates
//! never change. A table that cannot fit so (the profiler's, `inspect`'s
//! beside long paths) leaves out the columns marked optional, rightmost
//! first, and says which under it: a table that fits with a note beats
//! lines the terminal breaks anywhere. Paths that still cannot be
//! shortened clearly in the room left are wrapped whole.

use crate::error::{Error, Result};
/// Counted nouns, which the error type uses too, live with the other
/// quantities people read.
pub(crate) use crate::units::{count, count_verb};
use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, LineStyle, TableStyle, Width,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::time::Duration;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// No borders, one rule under the header: easy to read, easy to grep.
const STYLE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// Spaces comfy-table puts on each side of a cell.
const PADDING: usize = 1;

/// Columns between two cells: the style's (blank) vertical rule.
const RULE: usize = 1;

/// A shrinkable column is never made narrower than this (or than its
/// title), unless its content is narrower.
const MIN_SHRUNK: usize = 12;

/// How a column gives way when its table is wider than the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Never narrowed: numbers, dates, short words.
    Keep,
    /// Wrapped onto more lines, between words where possible.
    Wrap,
    /// Every line shortened in the middle with `…`.
    Shorten,
}

/// One column of a [`Table`]: its title and how it is laid out.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    title: String,
    fit: Fit,
    right: bool,
    /// Left out when the table cannot fit otherwise.
    optional: bool,
    /// The last [`Table::distinct_width`] of this column's cells: `(low,
    /// natural, width)`. Laying a table out asks it again for every column
    /// left out, and a column of 30,000 paths takes a while to answer.
    clear_width: std::cell::Cell<Option<(usize, usize, usize)>>,
}

impl Column {
    /// Short text that is never narrowed (names, dates, kinds).
    pub(crate) fn text(title: &str) -> Column {
        Column::new(title, Fit::Keep, false)
    }

    /// A right-aligned number or size, never narrowed.
    pub(crate) fn number(title: &str) -> Column {
        Column::new(title, Fit::Keep, true)
    }

    /// Prose, wrapped when the table is too wide.
    pub(crate) fn prose(title: &str) -> Column {
        Column::new(title, Fit::Wrap, false)
    }

    /// Paths, names and digests, shortened in the middle when the table is
    /// too wide.
    pub(crate) fn path(title: &str) -> Column {
        Column::new(title, Fit::Shorten, false)
    }

    /// This column may be left out when the table cannot fit the terminal
    /// with it: detail that `--json` or a wider terminal shows.
    pub(crate) fn optional(mut self) -> Column {
        self.optional = true;
        self
    }

    fn new(title: &str, fit: Fit, right: bool) -> Column {
        Column {
            title: title.to_string(),
            fit,
            right,
            optional: false,
            clear_width: std::cell::Cell::new(None),
        }
    }
}

/// A table with a header row: the columns listed in `right` are numbers
/// (right-aligned, never narrowed), the others wrap when the terminal is
/// too narrow.
#[cfg(feature = "causal")]
pub(crate) fn table(header: &[&str], right: &[usize]) -> Table {
    Table::new(
        header
            .iter()
            .enumerate()
            .map(|(i, title)| {
                if right.contains(&i) {
                    Column::number(title)
                } else {
                    Column::prose(title)
                }
            })
            .collect(),
    )
}

/// A table for people; `Display` draws it at the terminal's width.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    columns: Vec<Column>,
    header: bool,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with a header row of the columns' titles.
    pub(crate) fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            header: true,
            rows: Vec::new(),
        }
    }

    /// A list of label / value rows without a header; values are shortened
    /// in the middle (`Column::path`) or wrapped (`Column::prose`).
    pub(crate) fn pairs(value: Column) -> Table {
        Table {
            columns: vec![Column::text(""), value],
            header: false,
            rows: Vec::new(),
        }
    }

    /// Adds a row; a cell may hold several lines.
    pub(crate) fn add_row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        for column in &self.columns {
            column.clear_width.set(None);
        }
    }

    /// Draws the table no wider than `width` where the columns that may
    /// shrink allow it, leaving out optional columns when even that is too
    /// wide; `None` draws every cell whole.
    pub(crate) fn render(&self, width: Option<usize>) -> String {
        let Some(width) = width else {
            return self.render_columns(None);
        };
        let natural = self.natural_widths();
        let mut shown = self.clone();
        let mut left_out = Vec::new();
        while total_width(&shown.floors(&shown.natural_widths())) > width {
            let Some(i) = shown.columns.iter().rposition(|c| c.optional) else {
                break;
            };
            left_out.insert(0, shown.columns.remove(i).title);
            for row in &mut shown.rows {
                if i < row.len() {
                    row.remove(i);
                }
            }
        }
        // Paths that cannot be shortened clearly in the room left are
        // wrapped whole instead.
        if total_width(&shown.floors(&shown.natural_widths())) > width {
            for column in &mut shown.columns {
                if column.fit == Fit::Shorten {
                    column.fit = Fit::Wrap;
                }
            }
        }
        let mut out = shown.render_columns(Some(width));
        if !left_out.is_empty() {
            let note = format!(
                "(not shown in {width} columns: {}; COLUMNS={} shows them)",
                left_out.join(", "),
                total_width(&natural)
            );
            for line in wrap_words(&note, width) {
                out.push('\n');
                out.push_str(&line);
            }
        }
        out
    }

    fn natural_widths(&self) -> Vec<usize> {
        (0..self.columns.len())
            .map(|i| self.natural_width(i))
            .collect()
    }

    fn render_columns(&self, width: Option<usize>) -> String {
        let natural = self.natural_widths();
        let widths = match width {
            Some(width) => self.fit(&natural, width),
            None => natural.clone(),
        };
        let mut table = comfy_table::Table::new();
        table.load_style(STYLE);
        if let Some(width) = width {
            table
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(u16::try_from(width).unwrap_or(u16::MAX));
        }
        if self.header {
            table.set_header(self.columns.iter().map(|c| c.title.clone()));
        }
        let shortened: Vec<Option<Vec<String>>> = (0..self.columns.len())
            .map(|i| {
                (self.columns[i].fit == Fit::Shorten && widths[i] < natural[i])
                    .then(|| shorten_apart(&self.cell_lines(i), widths[i]))
            })
            .collect();
        let mut next_line = vec![0; self.columns.len()];
        for row in &self.rows {
            table.add_row(row.iter().enumerate().map(|(i, cell)| {
                let Some(Some(lines)) = shortened.get(i) else {
                    return cell.clone();
                };
                // This cell's lines, in the order `cell_lines` listed them.
                let count = cell.lines().count();
                let first = next_line[i];
                next_line[i] += count;
                lines[first..first + count].join("\n")
            }));
        }
        for (i, column) in self.columns.iter().enumerate() {
            let Some(col) = table.column_mut(i) else {
                continue;
            };
            if column.right {
                col.set_cell_alignment(CellAlignment::Right);
            }
            // The widths are decided above; comfy-table only wraps prose
            // within its share, even when the table cannot fit at all.
            col.set_constraint(if column.fit == Fit::Wrap && widths[i] < natural[i] {
                ColumnConstraint::Absolute(Width::Fixed(
                    u16::try_from(widths[i] + 2 * PADDING).unwrap_or(u16::MAX),
                ))
            } else {
                ColumnConstraint::ContentWidth
            });
        }
        table.to_string()
    }

    /// The widest line of column `i`, title included.
    fn natural_width(&self, i: usize) -> usize {
        let title = if self.header {
            self.columns[i].title.width()
        } else {
            0
        };
        self.rows
            .iter()
            .filter_map(|row| row.get(i))
            .flat_map(|cell| cell.lines())
            .map(UnicodeWidthStr::width)
            .fold(title, usize::max)
    }

    /// Content widths that fit `width`: the shrinkable columns are capped at
    /// one common level, as high as the space allows, so the widest give
    /// way first and narrow ones keep their content.
    fn fit(&self, natural: &[usize], width: usize) -> Vec<usize> {
        let total = total_width;
        if total(natural) <= width {
            return natural.to_vec();
        }
        let floor = self.floors(natural);
        let capped = |level: usize| -> Vec<usize> {
            natural
                .iter()
                .zip(&floor)
                .map(|(&w, &f)| w.min(level.max(f)))
                .collect()
        };
        // The highest level that fits, by bisection over 0..=widest.
        let (mut lo, mut hi) = (0, natural.iter().copied().max().unwrap_or(0));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if total(&capped(mid)) <= width {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        capped(lo)
    }
}

impl Table {
    /// The narrowest each column may become: shrinkable ones down to
    /// [`MIN_SHRUNK`] (or their title), a shortened one no narrower than
    /// keeps its rows apart ([`Table::distinct_width`]), the others not at
    /// all.
    fn floors(&self, natural: &[usize]) -> Vec<usize> {
        self.columns
            .iter()
            .zip(natural)
            .enumerate()
            .map(|(i, (column, &w))| {
                let title = if self.header { column.title.width() } else { 0 };
                let floor = w.min(MIN_SHRUNK.max(title));
                match column.fit {
                    Fit::Keep => w,
                    Fit::Wrap => floor,
                    Fit::Shorten => self.distinct_width(i, floor, w),
                }
            })
            .collect()
    }

    /// Every line of column `i`, row by row.
    fn cell_lines(&self, i: usize) -> Vec<&str> {
        self.rows
            .iter()
            .filter_map(|row| row.get(i))
            .flat_map(|cell| cell.lines())
            .collect()
    }

    /// The narrowest width from `low` to `natural` at which column `i`'s
    /// shortened cells ([`shorten_apart`]) are clear: none reads as
    /// another cell of the column.
    fn distinct_width(&self, i: usize, low: usize, natural: usize) -> usize {
        let known = &self.columns[i].clear_width;
        if let Some((l, n, width)) = known.get()
            && (l, n) == (low, natural)
        {
            return width;
        }
        let width = self.clear_width(i, low, natural);
        known.set(Some((low, natural, width)));
        width
    }

    /// [`Table::distinct_width`], worked out.
    fn clear_width(&self, i: usize, low: usize, natural: usize) -> usize {
        let cells = self.cell_lines(i);
        // By bisection; the width returned always keeps them apart (at
        // `natural` nothing is shortened).
        let (mut lo, mut hi) = (low, natural.max(low));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if clear_at(&cells, mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

/// `text` in lines at most `width` columns wide, broken between words (a
/// word wider than that has a line of its own).
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.width() + 1 + word.width() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// `text` as lines at most `width` columns wide, broken between words,
/// every line after the first indented by two spaces; `None` leaves it
/// whole.
#[cfg(any(test, feature = "causal"))]
pub(crate) fn wrap_indented(text: &str, width: Option<usize>) -> String {
    const INDENT: &str = "  ";
    let Some(width) = width else {
        return text.to_string();
    };
    let first = wrap_words(text, width);
    let Some((head, rest)) = first.split_first() else {
        return String::new();
    };
    let rest = wrap_words(&rest.join(" "), width.saturating_sub(INDENT.len()).max(1));
    let mut out = head.clone();
    for line in rest.iter().filter(|l| !l.is_empty()) {
        out.push('\n');
        out.push_str(INDENT);
        out.push_str(line);
    }
    out
}

/// The width of a table whose columns' contents are `widths` wide.
fn total_width(widths: &[usize]) -> usize {
    let rules = RULE * widths.len().saturating_sub(1);
    widths.iter().map(|w| w + 2 * PADDING).sum::<usize>() + rules
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(terminal_width()))
    }
}

/// The width tables are drawn at: the terminal's when stdout is one (or
/// `COLUMNS` when its size cannot be read), `COLUMNS` when stdout is not a
/// terminal, else none.
pub(crate) fn terminal_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        tty_columns(&stdout).or(columns)
    } else {
        columns
    }
}

/// The columns of the terminal `fd` is, when it says (0 when it does not).
/// A terminal that gives its columns but no rows (`stty cols 80` under
/// `script`) still gives its width.
fn tty_columns(fd: impl std::os::fd::AsFd) -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(fd).ok()?;
    (size.ws_col > 0).then(|| usize::from(size.ws_col))
}

/// The width stderr's messages are wrapped at: the terminal's when stderr
/// is one (or `COLUMNS` when its size cannot be read), `COLUMNS` when it
/// is not, else none.
#[cfg(feature = "causal")]
pub(crate) fn stderr_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        tty_columns(&stderr).or(columns)
    } else {
        columns
    }
}

/// Prints `head` and `rest` on one line joined by `: ` when that fits the
/// terminal, else `head` (shortened in the middle if need be) and `rest`
/// indented on the next line.
pub(crate) fn print_heading(head: &str, rest: &str) -> Result<()> {
    let line = if rest.is_empty() {
        head.to_string()
    } else {
        format!("{head}: {rest}")
    };
    match terminal_width() {
        Some(width) if line.width() > width => {
            print(shorten_middle(head, width))?;
            if rest.is_empty() {
                Ok(())
            } else {
                print(format_args!("  {rest}"))
            }
        }
        _ => print(line),
    }
}

/// `text` at most `max` columns wide, its middle replaced by `…` when it
/// is longer. The end says the most about a path, so it is kept first: the
/// whole file name when it leaves room for a few columns of the start
/// (`js/ven…/main.4f2a91.js`), else a third of the room for the start and
/// two thirds for the end.
pub(crate) fn shorten_middle(text: &str, max: usize) -> String {
    const MIN_HEAD: usize = 4;
    if text.width() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    let name = text.rfind('/').map_or("", |slash| &text[slash..]);
    let tail_room = if !name.is_empty() && name.width() + MIN_HEAD <= room {
        name.width()
    } else {
        room - room / 3
    };
    let head = take_width(text.chars(), room - tail_room);
    // A wide character that did not fit at the start leaves its column to
    // the end.
    let tail: String = take_width(text.chars().rev(), room - head.width())
        .chars()
        .rev()
        .collect();
    format!("{head}…{tail}")
}

/// Every line of `lines` at most `width` columns wide, as
/// [`shorten_middle`] does, except where that would leave a shortened
/// line that reads as another line of `lines` too; see `shorten_clear`.
/// A line that cannot be told apart at `width` is shortened plainly.
pub(crate) fn shorten_apart(lines: &[&str], width: usize) -> Vec<String> {
    let index = Lines::new(lines);
    lines
        .iter()
        .map(|line| {
            shorten_clear(line, width, &index).unwrap_or_else(|| shorten_middle(line, width))
        })
        .collect()
}

/// Whether every line of `lines` can be shortened to `width` columns
/// without reading as another of them.
fn clear_at(lines: &[&str], width: usize) -> bool {
    let index = Lines::new(lines);
    lines
        .iter()
        .all(|line| shorten_clear(line, width, &index).is_some())
}

/// `line` at most `width` columns wide, shortened so that no other line
/// of `index` fits what it shows: a start and an end around `…` stand for
/// every line that starts and ends so. The form [`shorten_middle`] gives
/// is taken when it is clear, else the split between start and end that
/// is nearest it and clear and keeps some of the end, else the start, the part from where `line`
/// differs from the lines nearest it in sorted order, and the end
/// (`js/v…0-a-long-nam…c0.min.js` beside `js/v…1-a-long-nam…c0.min.js`).
/// `None` when no such form is clear.
fn shorten_clear(line: &str, width: usize, index: &Lines) -> Option<String> {
    const SPLITS: usize = 16;
    const HEAD: usize = 4;
    const TAIL: usize = 10;
    if line.width() <= width {
        return Some(line.to_string());
    }
    let room = width.checked_sub(1)?;
    let split = |head_room: usize| -> (String, String) {
        let head = take_width(line.chars(), head_room);
        let tail: String = take_width(line.chars().rev(), room - head.width())
            .chars()
            .rev()
            .collect();
        (head, tail)
    };
    let plain = shorten_middle(line, width);
    let plain_head = plain.split('…').next().map_or(0, UnicodeWidthStr::width);
    let mut tried = HashSet::new();
    // The splits nearest the plain one, [`SPLITS`] at most: further off,
    // a start or an end says too little (and each try is a search).
    for step in 0..=(2 * room).min(SPLITS) {
        // plain_head, then one more, one less, two more, …
        let head_room = if step % 2 == 1 {
            plain_head + step.div_ceil(2)
        } else {
            match plain_head.checked_sub(step / 2) {
                Some(h) => h,
                None => continue,
            }
        };
        if head_room > room {
            continue;
        }
        let (head, tail) = split(head_room);
        // An end shorter than that says too little of a name.
        if tail.width() < TAIL.min(room / 2) || !tried.insert(head.len()) {
            continue;
        }
        if index.only(line, &head, "", &tail) {
            return Some(format!("{head}…{tail}"));
        }
    }
    // Start, the part where it differs, end.
    let differs = index.differs(line);
    let head = take_width(line.chars().take(differs.min(HEAD)), HEAD);
    let rest: String = line
        .chars()
        .skip(differs.max(head.chars().count()))
        .collect();
    let room = width.checked_sub(head.width() + 1)?;
    let tail_room = TAIL.min(room.checked_sub(2)?);
    let tail: String = take_width(rest.chars().rev(), tail_room)
        .chars()
        .rev()
        .collect();
    let middle = take_width(rest.chars(), room.checked_sub(tail.width() + 1)?);
    (!middle.is_empty() && index.only(line, &head, &middle, &tail))
        .then(|| format!("{head}…{middle}…{tail}"))
}

/// The distinct lines of a column, sorted by their start and by their
/// end, to find which of them a shortened line could stand for.
struct Lines<'a> {
    by_start: Vec<&'a str>,
    /// Each line reversed, and the line.
    by_end: Vec<(String, &'a str)>,
}

impl<'a> Lines<'a> {
    /// The most lines [`Lines::only`] compares a line with.
    const SCAN: usize = 64;

    fn new(lines: &[&'a str]) -> Lines<'a> {
        let mut by_start = lines.to_vec();
        by_start.sort_unstable();
        by_start.dedup();
        let mut by_end: Vec<(String, &str)> = by_start
            .iter()
            .map(|l| (l.chars().rev().collect(), *l))
            .collect();
        by_end.sort_unstable();
        Lines { by_start, by_end }
    }

    /// Whether `line` is the only line that starts with `head`, ends with
    /// `tail` and has `middle` between them, with something left out. It
    /// answers no, without looking further, when more than [`Lines::SCAN`]
    /// lines start so and as many end so: a start and an end that common
    /// say little, and a longer one is tried instead. That keeps a table
    /// of many paths that share folders and endings (30,000 icons) quick.
    fn only(&self, line: &str, head: &str, middle: &str, tail: &str) -> bool {
        let from = self.by_start.partition_point(|l| *l < head);
        let starting = &self.by_start[from..];
        let starting = &starting[..starting.partition_point(|l| l.starts_with(head))];
        let reversed: String = tail.chars().rev().collect();
        let from = self
            .by_end
            .partition_point(|(r, _)| r.as_str() < reversed.as_str());
        let ending = &self.by_end[from..];
        let ending = &ending[..ending.partition_point(|(r, _)| r.starts_with(&reversed))];
        let fits = |other: &str| {
            other.len() > head.len() + middle.len() + tail.len()
                && other.starts_with(head)
                && other.ends_with(tail)
                && other[head.len()..other.len() - tail.len()].contains(middle)
        };
        let others = |other: &&str| *other != line && fits(other);
        if starting.len().min(ending.len()) > Lines::SCAN {
            return false;
        }
        if starting.len() <= ending.len() {
            !starting.iter().any(others)
        } else {
            !ending.iter().map(|(_, l)| l).any(others)
        }
    }

    /// The characters `line` shares with the lines nearest it in sorted
    /// order.
    fn differs(&self, line: &str) -> usize {
        let common =
            |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let Ok(at) = self.by_start.binary_search(&line) else {
            return 0;
        };
        let before = at
            .checked_sub(1)
            .map_or(0, |j| common(self.by_start[j], line));
        let after = self
            .by_start
            .get(at + 1)
            .map_or(0, |next| common(next, line));
        before.max(after)
    }
}

/// The longest run of `chars` at most `max` columns wide.
fn take_width(chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in chars {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out
}

/// The media type of a `Content-Type` without its parameters (`text/css`,
/// not `text/css; charset=utf-8`): what a person scanning a file table
/// wants. `inspect PKG@VERSION/PATH` and the JSON carry the full value.
pub(crate) fn media_type(content_type: &str) -> &str {
    content_type
        .split_once(';')
        .map_or(content_type, |(essence, _)| essence.trim_end())
}

/// Writes `text` and a newline to stdout.
pub(crate) fn print(text: impl std::fmt::Display) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(Error::Stdout)
}

/// Writes `value` as pretty JSON to stdout, as it is serialized: a report
/// of any length is never held whole as text.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
        if e.is_io() {
            Error::Stdout(e.into())
        } else {
            Error::Internal(format!("cannot encode the report as JSON: {e}"))
        }
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(Error::Stdout)
}

/// `value` as pretty JSON. Every report ccc prints serializes; a failure
/// here is a bug.
#[cfg(feature = "causal")]
pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot encode the report as JSON: {e}")))
}

/// Where progress is drawn: stderr when it is a terminal and the user did
/// not ask for quiet.
pub(crate) fn progress_target(quiet: bool) -> ProgressDrawTarget {
    if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    }
}

/// `Verb [=====>    ] 1.2 MiB/4.0 MiB 30 MiB/s message`, for work whose
/// total is known.
pub(crate) fn byte_bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        // The bar takes what the numbers leave, so the line fits the
        // terminal (a fixed bar pushed the file count past 80 columns).
        "{prefix:>10.cyan.bold} [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// `Verb ⠙ message`, for work whose total is not known yet.
pub(crate) fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>10.cyan.bold} {spinner} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A byte-counting progress bar on stderr, hidden when `quiet` or when
/// stderr is not a terminal.
pub(crate) fn byte_bar(total: u64, verb: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), progress_target(quiet));
    if bar.is_hidden() {
        return bar;
    }
    bar.set_style(byte_bar_style());
    bar.set_prefix(verb.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_drop_parameters() {
        assert_eq!(media_type("text/css; charset=utf-8"), "text/css");
        assert_eq!(media_type("image/png"), "image/png");
    }

    #[test]
    fn shortening_keeps_both_ends() {
        assert_eq!(shorten_middle("short", 10), "short");
        assert_eq!(shorten_middle("abcdefghij", 10), "abcdefghij");
        assert_eq!(shorten_middle("abcdefghijk", 10), "abc…fghijk");
        // The file name is kept whole when it leaves room for the start.
        let path = "js/some/very/long/directory/name/main.min.js";
        let short = shorten_middle(path, 24);
        assert_eq!(short, "js/some/ver…/main.min.js");
        assert_eq!(short.width(), 24, "{short}");
        // A file name too long for that is cut too, keeping its end.
        let short = shorten_middle("js/chunk-with-a-very-long-name.4f2a91.js", 20);
        assert_eq!(short, "js/chu…ame.4f2a91.js");
        // Wide characters count two columns each.
        let wide = shorten_middle("日本語のファイル名.txt", 11);
        assert!(wide.width() <= 11, "{wide}");
        assert!(wide.ends_with(".txt"), "{wide}");
        assert_eq!(shorten_middle("abc", 0), "");
    }

    fn widest_line(text: &str) -> usize {
        text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
    }

    #[test]
    fn optional_columns_give_way_rightmost_first_and_say_so() {
        let mut table = Table::new(vec![
            Column::text("site"),
            Column::number("change"),
            Column::number("visits per request").optional(),
            Column::number("µs per visit").optional(),
            Column::number("n"),
        ]);
        table.add_row(["http-respond", "+64.9%", "1.00", "114.6", "3"]);
        let whole = table.render(None);
        assert_eq!(table.render(Some(widest_line(&whole))), whole);
        assert!(!whole.contains("not shown"), "{whole}");

        let fitted = table.render(Some(50));
        assert!(widest_line(&fitted) <= 50, "{fitted}");
        // The rightmost optional column went; the other fits beside the rest.
        assert!(fitted.contains("visits per request"), "{fitted}");
        assert!(!fitted.contains("µs per visit") || fitted.contains("not shown"));
        assert!(!fitted.contains("114.6"), "{fitted}");
        assert!(
            fitted.contains("http-respond") && fitted.contains(" 3"),
            "{fitted}"
        );
        let note = |text: &str| -> String {
            let start = text.find("(not shown").expect("a note");
            text[start..].replace('\n', " ")
        };
        assert_eq!(
            note(&fitted),
            format!(
                "(not shown in 50 columns: µs per visit; COLUMNS={} shows them)",
                widest_line(&whole)
            )
        );

        let narrow = table.render(Some(34));
        assert!(widest_line(&narrow) <= 34, "{narrow}");
        assert!(!narrow.contains("1.00"), "{narrow}");
        assert_eq!(
            note(&narrow),
            "(not shown in 34 columns: visits per request, µs per visit; COLUMNS=63 shows them)"
        );
    }

    #[test]
    fn a_wide_table_fits_by_shortening_and_wrapping() {
        let mut table = Table::new(vec![
            Column::text("kind"),
            Column::path("object"),
            Column::prose("problem"),
            Column::path("affects"),
        ]);
        let sha = "3f".repeat(32);
        let long_path = format!("app@1.0.0/{}/main.js", "deep/".repeat(20));
        table.add_row([
            "blob".to_string(),
            sha.clone(),
            "decodes to 1200 bytes, recorded 1300; the stored body was changed".into(),
            format!("{long_path}\napp@1.1.0/short.js"),
        ]);
        let whole = table.render(None);
        assert!(widest_line(&whole) > 150, "{whole}");
        assert!(whole.contains(&sha) && whole.contains(&long_path));

        let fitted = table.render(Some(80));
        assert!(widest_line(&fitted) <= 80, "{fitted}");
        assert!(fitted.contains('…'), "{fitted}");
        // Ends survive; short values and short columns are untouched.
        assert!(fitted.contains("/main.js"), "{fitted}");
        assert!(fitted.contains("app@1.1.0/short.js"), "{fitted}");
        assert!(fitted.contains("blob"), "{fitted}");
        // Prose is wrapped, not cut: every word is still there.
        for word in ["decodes", "recorded", "stored", "changed"] {
            assert!(fitted.contains(word), "{word} lost:\n{fitted}");
        }
    }

    #[test]
    fn shortened_paths_never_read_alike_and_media_types_stay_whole() {
        let dir = "a-very-long-directory-name-for-testing/another-quite-long-subdirectory";
        let mut table = Table::new(vec![
            Column::path("path"),
            Column::text("type"),
            Column::number("size"),
            Column::number("stored"),
            Column::number("ratio"),
            Column::number("brotli").optional(),
        ]);
        for (name, kind) in [
            ("component-one.module.css", "text/css"),
            ("component-two.module.css", "text/css"),
            ("data.webmanifest", "application/manifest+json"),
        ] {
            table.add_row([&format!("{dir}/{name}"), kind, "2 B", "2 B", "100.0%", "-"]);
        }
        let out = table.render(Some(80));
        assert!(widest_line(&out) <= 80, "{out}");
        let paths: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(" a-"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(paths.len(), 3, "{out}");
        let distinct: std::collections::HashSet<_> = paths.iter().collect();
        assert_eq!(distinct.len(), 3, "two rows read alike:\n{out}");
        assert!(out.contains("application/manifest+json"), "{out}");
    }

    #[test]
    fn a_table_that_fits_is_left_alone() {
        let mut table = Table::new(vec![Column::path("path"), Column::number("size")]);
        table.add_row(["index.html", "1.2 KiB"]);
        assert_eq!(table.render(Some(80)), table.render(None));
        // Numbers are right-aligned and never shortened.
        let mut narrow = Table::new(vec![Column::path("path"), Column::number("size")]);
        narrow.add_row([&"x/".repeat(40), "123.4 KiB"]);
        let out = narrow.render(Some(30));
        assert!(out.contains("123.4 KiB"), "{out}");
        assert!(widest_line(&out) <= 30, "{out}");
    }

    /// The paths of `all` that `short` could stand for.
    fn read_as<'a>(short: &str, all: &[&'a str]) -> Vec<&'a str> {
        all.iter()
            .copied()
            .filter(|path| match short.split_once('…') {
                None => *path == short,
                Some((head, tail)) => {
                    path.len() > head.len() + tail.len()
                        && path.starts_with(head)
                        && path.ends_with(tail)
                }
            })
            .collect()
    }

    #[test]
    fn a_shortened_path_stands_for_one_path_only() {
        let mut owned = Vec::new();
        for tree in ["svgs", "svgs-full"] {
            for style in ["regular", "solid"] {
                for name in [
                    "hands-american-sign-language-interpreting",
                    "hands-asl-interpreting",
                ] {
                    owned.push(format!("{tree}/{style}/{name}.svg"));
                }
            }
        }
        for name in ["react-jsx-dev-runtime", "react-jsx-runtime"] {
            owned.push(format!("cjs/{name}.react-server.development.js"));
            owned.push(format!("cjs/{name}.development.js"));
        }
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut table = Table::new(vec![Column::path("path"), Column::text("type")]);
        for line in &lines {
            table.add_row([*line, "image/svg+xml"]);
        }
        for width in [30, 40, 50] {
            let out = table.render(Some(width));
            assert!(widest_line(&out) <= width, "{out}");
            if !out.contains('…') {
                continue;
            }
            for row in out.lines().skip(2) {
                let short = row.split_whitespace().next().expect("a path");
                assert_eq!(read_as(short, &lines).len(), 1, "{short}:\n{out}");
            }
        }
        // Where the start and end alone read alike, the cut moves.
        let short = shorten_apart(&lines, 30);
        for (line, short) in lines.iter().zip(&short) {
            if clear_at(&lines, 30) {
                assert_eq!(read_as(short, &lines), [*line], "{short:?}");
            }
        }
        assert!(clear_at(&lines, 40));
    }

    #[test]
    fn paths_that_cannot_be_told_apart_in_the_room_left_are_wrapped_whole() {
        let mut table = Table::new(vec![
            Column::text("kind"),
            Column::path("path"),
            Column::number("size"),
        ]);
        let paths = [
            "cjs/react-jsx-dev-runtime.react-server.development.js",
            "cjs/react-jsx-runtime.react-server.development.js",
        ];
        for path in paths {
            table.add_row(["a-rather-long-kind-of-change", path, "13.7 KiB"]);
        }
        let out = table.render(Some(60));
        assert!(widest_line(&out) <= 60, "{out}");
        assert!(!out.contains('…'), "{out}");
        // Each path is still there, in pieces on consecutive lines.
        let joined: String = out
            .lines()
            .skip(2)
            .map(|l| {
                l.get(31..)
                    .unwrap_or("")
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
            })
            .collect();
        for path in paths {
            assert!(joined.contains(path), "{path}:\n{out}");
        }
    }

    #[test]
    fn long_messages_wrap_with_an_indent() {
        let text = "ccc causal: 12 sites x {0,5,10,15,20,25,30,35,40,45,50}% x 3 rounds, window 100 ms, load closed:64, seed 7";
        let out = wrap_indented(text, Some(80));
        assert!(widest_line(&out) <= 80, "{out}");
        assert!(out.lines().count() > 1, "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("  ")), "{out}");
        let words: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
        assert_eq!(wrap_indented(text, None), text);
        assert_eq!(wrap_indented("short", Some(80)), "short");
    }

    #[test]
    fn a_terminal_with_columns_but_no_rows_gives_its_width() -> std::io::Result<()> {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        use rustix::termios::{Winsize, tcsetwinsize};
        use std::os::unix::ffi::OsStrExt;
        let Ok(master) = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY) else {
            eprintln!("no pseudo-terminal here; skipped");
            return Ok(());
        };
        grantpt(&master)?;
        unlockpt(&master)?;
        let name = ptsname(&master, Vec::new())?;
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(std::ffi::OsStr::from_bytes(name.as_bytes()))?;
        let size = |ws_row, ws_col| Winsize {
            ws_row,
            ws_col,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        tcsetwinsize(&terminal, size(0, 80))?;
        assert_eq!(tty_columns(&terminal), Some(80));
        tcsetwinsize(&terminal, size(24, 100))?;
        assert_eq!(tty_columns(&terminal), Some(100));
        tcsetwinsize(&terminal, size(24, 0))?;
        assert_eq!(tty_columns(&terminal), None);
        Ok(())
    }
}

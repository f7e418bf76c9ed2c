//! `ccc causal`'s printed results: the table of predictions with its
//! header and flag legend, the ledger audit's tables, and the warnings a
//! reader should act on, each with what it means and what to do.

use super::ledger;
use super::load;
use super::plan::Plan;
use super::report::Summary;
use super::sweep::Cell;
use super::{LedgerDetail, LoadSource, site_name};
use crate::causal::points::ASSET_SERVED;
use crate::error::Result;
use crate::output::{self, Column, Table};
use std::collections::BTreeMap;
use std::time::Duration;

/// Warn when more requests than this share had no connection stamp.
const FALLBACK_WARN_SHARE: f64 = 0.10;

/// What the reader should know about this run's results, one line each.
pub(super) fn warnings(summary: &Summary, cells: &[Cell], load: &load::Report) -> Vec<String> {
    let mut warnings = Vec::new();
    if summary.fallback_share > FALLBACK_WARN_SHARE {
        warnings.push(format!(
            "{:.0}% of receives had no stamp to go by (new connections, Connection: close): use keep-alive load",
            summary.fallback_share * 100.0
        ));
    }
    if summary.unreliable_cells > 0 {
        warnings.push(format!(
            "{} of {} {} unreliable and left out (see --json-out for reasons)",
            summary.unreliable_cells,
            output::count(summary.cells as u64, "cell"),
            if summary.unreliable_cells == 1 {
                "was"
            } else {
                "were"
            },
        ));
    }
    // Sites never visited, with their number of such cells.
    let mut unvisited: BTreeMap<&str, usize> = BTreeMap::new();
    for line in summary.lines.iter().filter(|l| l.no_visits > 0) {
        *unvisited.entry(line.site.as_str()).or_default() += line.no_visits;
    }
    for (site, n) in unvisited {
        warnings.push(format!(
            "{site} was never visited in {}: the load does not reach that code, so its speedups there predict nothing (flag N)",
            output::count(n as u64, "cell")
        ));
    }
    // One line per failed ledger check: what it means, what to do.
    let mut checks: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for c in cells {
        let mut seen = Vec::new();
        for f in &c.findings {
            if !seen.contains(&f.check) {
                seen.push(f.check);
                checks.entry(f.check).or_insert((f.level, 0)).1 += 1;
            }
        }
    }
    for (check, (level, n)) in checks {
        let advice = ledger::advice(check);
        warnings.push(format!(
            "ledger {level} {check} in {n} of {}: {}. What to do: {} (details: --ledger)",
            output::count(cells.len() as u64, "cell"),
            advice.meaning,
            advice.action
        ));
    }
    if let Some(failures) = load.failure_summary() {
        warnings.push(failures);
    }
    warnings
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// The line above the table: what was measured, and how.
fn header(plan: &Plan, load: LoadSource, window: Duration, seed: u64) -> String {
    let speedups: Vec<String> = plan.speedups.iter().map(u8::to_string).collect();
    format!(
        "ccc causal: {} x {{{}}}% x {}, window {} ms, load {load}, seed {seed}",
        output::count(plan.sites.len() as u64, "site"),
        speedups.join(","),
        output::count(plan.rounds as u64, "round"),
        window.as_millis(),
    )
}

/// The table's flags, in the order they appear, and what each means.
const FLAGS: [(&str, &str); 6] = [
    (
        "R1",
        "one round: a single measurement, nothing shows its spread (use --rounds 3 or more)",
    ),
    ("~", "within the noise floor"),
    ("~lat", "Δlatency within its noise floor"),
    ("U(k)", "k unreliable cells left out"),
    ("N(k)", "the site was not visited in k cells"),
    ("L", "ledger warnings"),
];

pub(super) fn print_table(
    summary: &Summary,
    plan: &Plan,
    load: LoadSource,
    window: Duration,
    seed: u64,
) -> Result<()> {
    output::print(output::wrap_indented(
        &header(plan, load, window, seed),
        output::terminal_width(),
    ))?;
    let noise = summary
        .noise_floor
        .map_or("n/a (one site)".to_string(), |n| {
            format!("±{:.1}%", n * 100.0)
        });
    output::print(output::wrap_indented(
        &format!(
            "baseline {:.0} {}/s (pooled), noise floor {noise}",
            summary.baseline_rate, ASSET_SERVED.name
        ),
        output::terminal_width(),
    ))?;
    if let (Some(point), Some(latency)) = (&summary.latency_point, summary.baseline_latency_ns) {
        let noise = summary
            .latency_noise_floor
            .map_or("n/a (one site)".to_string(), |n| {
                format!("±{:.1}%", n * 100.0)
            });
        output::print(output::wrap_indented(
            &format!(
                "mean latency at {point}: {:.1} µs (pooled), noise floor {noise}",
                latency / 1000.0
            ),
            output::terminal_width(),
        ))?;
    }
    // What a site's speedup would change comes first; in a narrow
    // terminal the measurements behind it give way, the table says
    // which, and --json-out has them all.
    let mut table = Table::new(vec![
        Column::text("site"),
        Column::number("speedup"),
        Column::number("rate/s").optional(),
        Column::number("Δrate"),
        Column::prose("range"),
        Column::number("coz").optional(),
        Column::number("Δlatency"),
        Column::number("latency µs").optional(),
        Column::number("visits/req").optional(),
        Column::number("visit µs").optional(),
        Column::number("n").optional(),
        Column::prose("flags"),
    ]);
    let mut used = [false; FLAGS.len()];
    for line in &summary.lines {
        let mut flags = Vec::new();
        if line.n == 1 && line.change_median.is_some() {
            flags.push("R1".to_string());
            used[0] = true;
        }
        if line.noise {
            flags.push("~".to_string());
            used[1] = true;
        }
        if line.latency_noise {
            flags.push("~lat".to_string());
            used[2] = true;
        }
        if line.unreliable > 0 {
            flags.push(format!("U({})", line.unreliable));
            used[3] = true;
        }
        if line.no_visits > 0 {
            flags.push(format!("N({})", line.no_visits));
            used[4] = true;
        }
        if line.ledger_warnings > 0 {
            flags.push("L".to_string());
            used[5] = true;
        }
        let range = match (line.change_lo, line.change_hi) {
            (Some(lo), Some(hi)) => format!("{} … {}", pct(lo), pct(hi)),
            _ => String::new(),
        };
        table.add_row(vec![
            line.site.clone(),
            format!("{}%", line.speedup_pct),
            if line.rate_median.is_finite() {
                format!("{:.0}", line.rate_median)
            } else {
                "-".into()
            },
            line.change_median.map_or("—".into(), pct),
            range,
            line.coz_pooled.map_or("—".into(), pct),
            line.latency_change_median.map_or("—".into(), pct),
            line.latency_ns_median
                .map_or(String::new(), |ns| format!("{:.1}", ns / 1000.0)),
            line.visits_per_unit
                .map_or(String::new(), |v| format!("{v:.2}")),
            line.visit_us.map_or(String::new(), |v| format!("{v:.1}")),
            line.n.to_string(),
            flags.join(" "),
        ]);
    }
    output::print(table)?;
    let legend: Vec<String> = FLAGS
        .iter()
        .zip(used)
        .filter(|(_, used)| *used)
        .map(|((flag, meaning), _)| format!("{flag} {meaning}"))
        .collect();
    if !legend.is_empty() {
        let legend = format!("flags: {}", legend.join("; "));
        match output::terminal_width() {
            Some(width) => output::print(output::wrap_words(&legend, width).join("\n"))?,
            None => output::print(legend)?,
        }
    }
    Ok(())
}

pub(super) fn print_ledger(cells: &[Cell], level: LedgerDetail) -> Result<()> {
    let mut table = output::table(
        &[
            "round",
            "site",
            "speedup",
            "ΔG µs",
            "Σcredited µs",
            "unpublished µs",
            "duration ms",
            "errors",
            "warnings",
        ],
        &[0, 2, 3, 4, 5, 6, 7, 8],
    );
    for c in cells {
        let credited: u64 = c.ledger.iter().map(|r| r.credited).sum();
        table.add_row(vec![
            (c.round + 1).to_string(),
            site_name(c.site),
            format!("{}%", c.speedup_pct),
            format!("{:.1}", c.delay_ns as f64 / 1000.0),
            format!("{:.1}", credited as f64 / 1000.0),
            format!("{:.1}", (credited as f64 - c.delay_ns as f64) / 1000.0),
            format!("{:.1}", c.duration_ns as f64 / 1e6),
            c.findings
                .iter()
                .filter(|f| f.is_error())
                .count()
                .to_string(),
            c.findings
                .iter()
                .filter(|f| !f.is_error())
                .count()
                .to_string(),
        ]);
    }
    output::print(table)?;
    if level == LedgerDetail::Full {
        let mut rows = output::table(
            &[
                "cell",
                "thread",
                "credited",
                "paid",
                "absorbed",
                "inherited",
                "resynced",
                "blocked",
                "debt0",
                "debt1",
                "debt_drain",
                "overshoot",
                "bank_end",
                "on_core",
                "core_wait",
                "idle",
            ],
            &[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
        );
        for (i, c) in cells.iter().enumerate() {
            for r in &c.ledger {
                let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
                rows.add_row(vec![
                    format!("{} {} {}%", i + 1, site_name(c.site), c.speedup_pct),
                    r.thread.clone(),
                    us(r.credited),
                    us(r.paid),
                    us(r.absorbed),
                    us(r.inherited),
                    format!("{:.1}", r.resynced as f64 / 1000.0),
                    us(r.blocked),
                    us(r.debt0),
                    us(r.debt1),
                    us(r.debt_drain),
                    us(r.overshoot),
                    us(r.bank_end),
                    us(r.on_core),
                    us(r.waiting_for_core),
                    if r.idle_end {
                        "idle".into()
                    } else {
                        String::new()
                    },
                ]);
            }
        }
        output::print("per thread (µs):")?;
        output::print(rows)?;
    }
    for c in cells {
        for f in &c.findings {
            eprintln!(
                "{}: {} in round {} {} {}% ({}): {}",
                f.level,
                f.check,
                c.round + 1,
                site_name(c.site),
                c.speedup_pct,
                f.thread,
                f.detail
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::ledger::Finding;
    use super::super::report;
    use super::*;

    fn cell(site: u16, pct: u8, findings: Vec<Finding>) -> Cell {
        Cell {
            round: 0,
            site,
            speedup_pct: pct,
            elapsed_ns: 500_000_000,
            delay_ns: 0,
            duration_ns: 500_000_000,
            delta: 1000,
            visits: 10,
            visit_ns: 10_000,
            receives: 0,
            fallbacks: 0,
            latency: None,
            reliable: true,
            reason: None,
            findings,
            ledger: vec![],
        }
    }

    fn idle_payer(thread: &str) -> Finding {
        Finding {
            check: "IDLE-PAYER",
            level: "warning",
            thread: thread.into(),
            detail: "idle 90% of the window, yet paid 600 of the 1000 ns of delay inserted".into(),
        }
    }

    #[test]
    fn ledger_warnings_say_what_they_mean_and_what_to_do() {
        let cells = vec![
            cell(
                0,
                0,
                vec![idle_payer("http-worker-0"), idle_payer("http-worker-1")],
            ),
            cell(0, 50, vec![]),
            cell(2, 0, vec![idle_payer("http-worker-0")]),
        ];
        let summary = report::summarize(&cells, &site_name);
        let warnings = warnings(&summary, &cells, &load::Report::default());
        let ledger: Vec<&String> = warnings
            .iter()
            .filter(|w| w.contains("IDLE-PAYER"))
            .collect();
        assert_eq!(ledger.len(), 1, "one line per check: {warnings:?}");
        let line = ledger[0];
        // Counted per cell, not per thread.
        assert!(line.contains("IDLE-PAYER in 2 of 3 cells"), "{line}");
        assert!(
            line.contains(ledger::advice("IDLE-PAYER").meaning),
            "{line}"
        );
        assert!(line.contains("What to do: "), "{line}");
        assert!(line.contains("--external-wake owe"), "{line}");
    }

    #[test]
    fn one_of_a_kind_is_singular() {
        let plan = Plan::new(vec![0], vec![0], 1, 7);
        let line = header(&plan, LoadSource::External, Duration::from_millis(40), 7);
        assert!(line.contains("1 site x {0}% x 1 round,"), "{line}");
        let mut lone = cell(0, 0, vec![idle_payer("http-worker-0")]);
        lone.visits = 0;
        lone.reliable = false;
        let cells = vec![lone];
        let summary = report::summarize(&cells, &site_name);
        let warnings = warnings(&summary, &cells, &load::Report::default()).join("\n");
        assert!(
            warnings.contains("1 of 1 cell was unreliable"),
            "{warnings}"
        );
        assert!(warnings.contains("never visited in 1 cell:"), "{warnings}");
        assert!(
            warnings.contains("IDLE-PAYER in 1 of 1 cell:"),
            "{warnings}"
        );
        assert!(!warnings.contains("1 cells"), "{warnings}");
    }
}

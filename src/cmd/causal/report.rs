//! From cells to conclusions: per-site speedup curves with a spread over
//! rounds, the A/A noise floor, and the reliability flags a reader needs.
//!
//! For a site and speedup `p ≠ 0`, each round gives
//! `c_r = (δ_p/D_p)/(δ_0/D_0) − 1` against the same round's 0% cell of the
//! same site (δ progress counts, D virtual duration). The report gives the
//! median `c_r` and a distribution-free interval for it: `[min, max]` for up
//! to six rounds (for five, it misses the median with probability 2·2⁻⁵),
//! and from seven the innermost pair of order statistics covering ≥ 90%.
//! Also pooled rates (Σδ/ΣD, what Coz's viewer sums) and Coz's own metric
//! `1 − (D_p/δ_p)/(D_0/δ_0)`.
//!
//! The noise floor: all 0% cells are the same experiment (nothing is
//! delayed), so the spread of one round's baselines across sites,
//! `(max − min)/median`, is A/A noise; its median over rounds is the floor.
//! A change below it, or whose interval contains 0, is marked `~`.
//!
//! A cell in which the site was never visited measured nothing about it (the
//! load does not reach that code); each line counts such cells so the
//! report can flag them.

use super::sweep::Cell;
use serde::Serialize;

/// One line of the result: a site at one speedup.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub site: String,
    pub speedup_pct: u8,
    /// Median of the reliable cells' rates (units per virtual second).
    pub rate_median: f64,
    /// Median relative change against the round's baseline; None at 0%.
    pub change_median: Option<f64>,
    pub change_lo: Option<f64>,
    pub change_hi: Option<f64>,
    /// Coz's program speedup from pooled rates; None at 0%.
    pub coz_pooled: Option<f64>,
    /// Rounds that contributed.
    pub n: usize,
    pub unreliable: usize,
    /// Cells in which the site was never visited.
    pub no_visits: usize,
    pub ledger_warnings: usize,
    /// Below the noise floor, or the interval contains 0.
    pub noise: bool,
    /// At 0%: site visits per progress unit, and mean visit length.
    pub visits_per_unit: Option<f64>,
    pub visit_us: Option<f64>,
}

/// The whole result.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub lines: Vec<Line>,
    /// Pooled rate of every site's 0% cells.
    pub baseline_rate: f64,
    /// Median over rounds of the baselines' relative spread; None with a
    /// single site.
    pub noise_floor: Option<f64>,
    /// Share of receives that had no usable stamp.
    pub fallback_share: f64,
    pub cells: usize,
    pub unreliable_cells: usize,
    pub ledger_errors: usize,
    pub ledger_warnings: usize,
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Indexes `(lo, hi)` into `n` sorted values of a distribution-free
/// interval for the median: `[min, max]` up to six values, then the
/// innermost order statistics with coverage ≥ 90%.
pub fn median_interval(n: usize) -> (usize, usize) {
    if n <= 6 {
        return (0, n.saturating_sub(1));
    }
    // Coverage of [X_(k), X_(n-k+1)] (1-based) is 1 − 2·P(Bin(n, 1/2) ≤ k−1).
    let binom_cdf = |k: usize| -> f64 {
        let mut term = 0.5f64.powi(n as i32);
        let mut total = term;
        for i in 0..k {
            term *= (n - i) as f64 / (i + 1) as f64;
            total += term;
        }
        total
    };
    let mut k = 1;
    while k < n / 2 && 1.0 - 2.0 * binom_cdf(k) >= 0.90 {
        k += 1;
    }
    (k - 1, n - k)
}

/// Summarizes a sweep; `name` maps site ids to names.
pub fn summarize(cells: &[Cell], name: &dyn Fn(u16) -> String) -> Summary {
    let mut sites: Vec<u16> = cells.iter().map(|c| c.site).collect();
    sites.sort_unstable();
    sites.dedup();
    let mut speedups: Vec<u8> = cells.iter().map(|c| c.speedup_pct).collect();
    speedups.sort_unstable();
    speedups.dedup();
    let rounds = cells.iter().map(|c| c.round + 1).max().unwrap_or(0);
    let find = |site: u16, pct: u8, round: usize| {
        cells
            .iter()
            .find(|c| c.site == site && c.speedup_pct == pct && c.round == round && c.reliable)
    };
    let pooled = |site: u16, pct: u8| -> Option<f64> {
        let (d, dur) = cells
            .iter()
            .filter(|c| c.site == site && c.speedup_pct == pct && c.reliable)
            .fold((0u64, 0i64), |(d, dur), c| {
                (d + c.delta, dur + c.duration_ns)
            });
        (dur > 0 && d > 0).then(|| d as f64 * 1e9 / dur as f64)
    };

    // Noise floor over rounds.
    let mut spreads = Vec::new();
    for round in 0..rounds {
        let mut rates: Vec<f64> = sites
            .iter()
            .filter_map(|s| find(*s, 0, round).map(Cell::rate))
            .collect();
        if rates.len() >= 2 {
            rates.sort_by(f64::total_cmp);
            let m = median(&rates);
            if m > 0.0 {
                spreads.push((rates[rates.len() - 1] - rates[0]) / m);
            }
        }
    }
    spreads.sort_by(f64::total_cmp);
    let noise_floor = (!spreads.is_empty()).then(|| median(&spreads));

    let mut lines = Vec::new();
    for &site in &sites {
        let base_pooled = pooled(site, 0);
        for &pct in &speedups {
            let of_cell: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.site == site && c.speedup_pct == pct)
                .collect();
            let mut rates: Vec<f64> = of_cell
                .iter()
                .filter(|c| c.reliable)
                .map(|c| c.rate())
                .collect();
            rates.sort_by(f64::total_cmp);
            let unreliable = of_cell.iter().filter(|c| !c.reliable).count();
            let no_visits = of_cell.iter().filter(|c| c.visits == 0).count();
            let ledger_warnings = of_cell
                .iter()
                .map(|c| c.findings.iter().filter(|f| !f.is_error()).count())
                .sum();
            let mut line = Line {
                site: name(site),
                speedup_pct: pct,
                rate_median: median(&rates),
                change_median: None,
                change_lo: None,
                change_hi: None,
                coz_pooled: None,
                n: rates.len(),
                unreliable,
                no_visits,
                ledger_warnings,
                noise: false,
                visits_per_unit: None,
                visit_us: None,
            };
            if pct == 0 {
                let good: Vec<&&Cell> = of_cell.iter().filter(|c| c.reliable).collect();
                let visits: u64 = good.iter().map(|c| c.visits).sum();
                let delta: u64 = good.iter().map(|c| c.delta).sum();
                let visit_ns: u64 = good.iter().map(|c| c.visit_ns).sum();
                line.visits_per_unit = (delta > 0).then(|| visits as f64 / delta as f64);
                line.visit_us = (visits > 0).then(|| visit_ns as f64 / visits as f64 / 1000.0);
            } else {
                let mut changes: Vec<f64> = (0..rounds)
                    .filter_map(|r| {
                        let treated = find(site, pct, r)?;
                        let base = find(site, 0, r)?;
                        (base.rate() > 0.0).then(|| treated.rate() / base.rate() - 1.0)
                    })
                    .collect();
                changes.sort_by(f64::total_cmp);
                line.n = changes.len();
                if !changes.is_empty() {
                    let (lo, hi) = median_interval(changes.len());
                    let m = median(&changes);
                    line.change_median = Some(m);
                    line.change_lo = Some(changes[lo]);
                    line.change_hi = Some(changes[hi]);
                    line.noise = noise_floor.is_some_and(|floor| m.abs() < floor)
                        || (changes[lo] <= 0.0 && changes[hi] >= 0.0);
                }
                if let (Some(base), Some(treated)) = (base_pooled, pooled(site, pct)) {
                    // 1 − (D_p/δ_p)/(D_0/δ_0): the share of time per unit saved.
                    line.coz_pooled = Some(1.0 - base / treated);
                }
            }
            lines.push(line);
        }
    }
    // Sites by their largest |Δrate|, strongest first; a site's lines stay
    // together in speedup order.
    let strength = |site: &str| {
        lines
            .iter()
            .filter(|l| l.site == site)
            .filter_map(|l| l.change_median)
            .map(f64::abs)
            .fold(0.0, f64::max)
    };
    let mut order: Vec<String> = sites.iter().map(|s| name(*s)).collect();
    order.sort_by(|a, b| strength(b).total_cmp(&strength(a)));
    lines.sort_by_key(|l| (order.iter().position(|s| *s == l.site), l.speedup_pct));

    let (d, dur) = cells
        .iter()
        .filter(|c| c.speedup_pct == 0 && c.reliable)
        .fold((0u64, 0i64), |(d, dur), c| {
            (d + c.delta, dur + c.duration_ns)
        });
    let receives: u64 = cells.iter().map(|c| c.receives).sum();
    let fallbacks: u64 = cells.iter().map(|c| c.fallbacks).sum();
    Summary {
        lines,
        baseline_rate: if dur > 0 {
            d as f64 * 1e9 / dur as f64
        } else {
            0.0
        },
        noise_floor,
        fallback_share: if receives > 0 {
            fallbacks as f64 / receives as f64
        } else {
            0.0
        },
        cells: cells.len(),
        unreliable_cells: cells.iter().filter(|c| !c.reliable).count(),
        ledger_errors: cells
            .iter()
            .map(|c| c.findings.iter().filter(|f| f.is_error()).count())
            .sum(),
        ledger_warnings: cells
            .iter()
            .map(|c| c.findings.iter().filter(|f| !f.is_error()).count())
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(round: usize, site: u16, pct: u8, delta: u64, duration_ms: i64) -> Cell {
        Cell {
            round,
            site,
            speedup_pct: pct,
            elapsed_ns: duration_ms as u64 * 1_000_000,
            delay_ns: 0,
            duration_ns: duration_ms * 1_000_000,
            delta,
            visits: delta,
            visit_ns: delta * 10_000,
            receives: 0,
            fallbacks: 0,
            reliable: true,
            reason: None,
            findings: vec![],
            ledger: vec![],
        }
    }

    #[test]
    fn interval_indexes() {
        assert_eq!(median_interval(5), (0, 4));
        assert_eq!(median_interval(1), (0, 0));
        // n = 10: [X_(2), X_(9)] covers 97.9%, [X_(3), X_(8)] 89.1%.
        assert_eq!(median_interval(10), (1, 8));
        // n = 7: [X_(1), X_(7)] 98.4%, [X_(2), X_(6)] 87.5%.
        assert_eq!(median_interval(7), (0, 6));
    }

    #[test]
    fn changes_are_paired_by_round_and_sorted_by_strength() {
        let mut cells = Vec::new();
        for r in 0..5 {
            let jitter = r as u64 * 10;
            cells.push(cell(r, 0, 0, 1000 + jitter, 1000));
            cells.push(cell(r, 0, 50, 1500 + jitter, 1000)); // +50%
            cells.push(cell(r, 1, 0, 1000 + jitter, 1000));
            cells.push(cell(r, 1, 50, 1000 + jitter, 1000)); // 0
        }
        let s = summarize(&cells, &|id| format!("site{id}"));
        assert_eq!(s.lines[0].site, "site0", "strongest site first");
        let l = &s.lines[1];
        assert_eq!(l.speedup_pct, 50);
        assert!((l.change_median.unwrap() - 0.5).abs() < 0.01);
        assert!(!l.noise);
        let coz = l.coz_pooled.unwrap();
        assert!((coz - (1.0 - 1.0 / 1.5)).abs() < 0.01, "{coz}");
        let flat = &s.lines[3];
        assert_eq!(flat.change_median, Some(0.0));
        assert!(flat.noise);
        assert_eq!(s.noise_floor, Some(0.0));
        assert_eq!(s.lines[0].visits_per_unit, Some(1.0));
    }

    #[test]
    fn cells_without_visits_are_counted() {
        let mut cells = vec![
            cell(0, 0, 0, 1000, 1000),
            cell(0, 0, 50, 1000, 1000),
            cell(1, 0, 0, 1000, 1000),
            cell(1, 0, 50, 1000, 1000),
        ];
        cells[1].visits = 0;
        cells[3].visits = 0;
        let s = summarize(&cells, &|_| "x".into());
        assert_eq!((s.lines[0].speedup_pct, s.lines[0].no_visits), (0, 0));
        assert_eq!((s.lines[1].speedup_pct, s.lines[1].no_visits), (50, 2));
    }

    #[test]
    fn unreliable_cells_are_left_out() {
        let mut cells = vec![cell(0, 0, 0, 1000, 1000), cell(0, 0, 50, 2000, 1000)];
        cells[1].reliable = false;
        let s = summarize(&cells, &|_| "x".into());
        assert_eq!(s.lines[1].n, 0);
        assert_eq!(s.lines[1].unreliable, 1);
        assert_eq!(s.unreliable_cells, 1);
    }
}

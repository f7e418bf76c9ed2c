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
//! With a latency point, the same is done for the mean latency `W` of each
//! cell (Little's law over the window, in virtual time): per round
//! `W_p/W_0 − 1`, negative when requests get faster, with its own noise
//! floor; pooled, `Σ in-flight time / Σ arrivals`, which is what Coz's
//! viewer computes from the file's `latency-point` lines.
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
    /// Median of the reliable cells' mean latencies (virtual ns); None
    /// without a latency point.
    pub latency_ns_median: Option<f64>,
    /// Median relative change of the mean latency against the round's
    /// baseline (negative: faster), and its interval; None at 0%.
    pub latency_change_median: Option<f64>,
    pub latency_change_lo: Option<f64>,
    pub latency_change_hi: Option<f64>,
    /// The same change from pooled cells, as Coz's viewer plots it.
    pub latency_coz_pooled: Option<f64>,
    /// The latency change is below its noise floor or its interval
    /// contains 0.
    pub latency_noise: bool,
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
    /// The latency point, if the cells measured one.
    pub latency_point: Option<String>,
    /// Pooled mean latency of every site's 0% cells (virtual ns).
    pub baseline_latency_ns: Option<f64>,
    /// The noise floor of the mean latency, as for the rate.
    pub latency_noise_floor: Option<f64>,
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
pub(crate) fn median_interval(n: usize) -> (usize, usize) {
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

/// A cell's measure of the program: its rate, or its mean latency.
type Metric = fn(&Cell) -> Option<f64>;

fn rate(c: &Cell) -> Option<f64> {
    Some(c.rate())
}

/// Median over rounds of the spread of one round's 0% cells across sites
/// (all the same experiment), relative to their median.
fn noise_floor(cells: &[Cell], sites: &[u16], rounds: usize, metric: Metric) -> Option<f64> {
    let mut spreads = Vec::new();
    for round in 0..rounds {
        let mut values: Vec<f64> = sites
            .iter()
            .filter_map(|s| find(cells, *s, 0, round).and_then(metric))
            .collect();
        if values.len() >= 2 {
            values.sort_by(f64::total_cmp);
            let m = median(&values);
            if m > 0.0 {
                spreads.push((values[values.len() - 1] - values[0]) / m);
            }
        }
    }
    spreads.sort_by(f64::total_cmp);
    (!spreads.is_empty()).then(|| median(&spreads))
}

fn find(cells: &[Cell], site: u16, pct: u8, round: usize) -> Option<&Cell> {
    cells
        .iter()
        .find(|c| c.site == site && c.speedup_pct == pct && c.round == round && c.reliable)
}

/// A change's median, interval and noise verdict.
struct Change {
    median: f64,
    lo: f64,
    hi: f64,
    noise: bool,
}

/// `metric` at `pct` against the same round's 0% cell, over rounds.
fn change(
    cells: &[Cell],
    site: u16,
    pct: u8,
    rounds: usize,
    metric: Metric,
    floor: Option<f64>,
) -> (usize, Option<Change>) {
    let mut changes: Vec<f64> = (0..rounds)
        .filter_map(|r| {
            let treated = metric(find(cells, site, pct, r)?)?;
            let base = metric(find(cells, site, 0, r)?)?;
            (base > 0.0).then(|| treated / base - 1.0)
        })
        .collect();
    changes.sort_by(f64::total_cmp);
    if changes.is_empty() {
        return (0, None);
    }
    let (lo, hi) = median_interval(changes.len());
    let m = median(&changes);
    let change = Change {
        median: m,
        lo: changes[lo],
        hi: changes[hi],
        noise: floor.is_some_and(|floor| m.abs() < floor)
            || (changes[lo] <= 0.0 && changes[hi] >= 0.0),
    };
    (changes.len(), Some(change))
}

/// Pooled mean latency of the reliable cells of `site` at `pct` (all sites
/// with None): `Σ in-flight time / Σ arrivals`.
fn pooled_latency(cells: &[Cell], site: Option<u16>, pct: u8) -> Option<f64> {
    let (in_flight, arrivals) = cells
        .iter()
        .filter(|c| site.is_none_or(|s| c.site == s) && c.speedup_pct == pct && c.reliable)
        .filter_map(|c| c.latency.as_ref())
        .fold((0i128, 0u64), |(f, a), l| {
            (f + i128::from(l.in_flight_ns.max(0)), a + l.arrivals)
        });
    (arrivals > 0).then(|| in_flight as f64 / arrivals as f64)
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
    let pooled = |site: u16, pct: u8| -> Option<f64> {
        let (d, dur) = cells
            .iter()
            .filter(|c| c.site == site && c.speedup_pct == pct && c.reliable)
            .fold((0u64, 0i64), |(d, dur), c| {
                (d + c.delta, dur + c.duration_ns)
            });
        (dur > 0 && d > 0).then(|| d as f64 * 1e9 / dur as f64)
    };
    let latency_point = cells
        .iter()
        .find_map(|c| c.latency.as_ref().map(|l| l.name.clone()));
    let noise_floor_rate = noise_floor(cells, &sites, rounds, rate);
    let latency_noise_floor = noise_floor(cells, &sites, rounds, Cell::latency_ns);

    let mut lines = Vec::new();
    for &site in &sites {
        let base_pooled = pooled(site, 0);
        let base_latency = pooled_latency(cells, Some(site), 0);
        for &pct in &speedups {
            let of_cell: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.site == site && c.speedup_pct == pct)
                .collect();
            let sorted = |metric: Metric| {
                let mut v: Vec<f64> = of_cell
                    .iter()
                    .filter(|c| c.reliable)
                    .filter_map(|c| metric(c))
                    .collect();
                v.sort_by(f64::total_cmp);
                v
            };
            let rates = sorted(rate);
            let latencies = sorted(Cell::latency_ns);
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
                latency_ns_median: (!latencies.is_empty()).then(|| median(&latencies)),
                latency_change_median: None,
                latency_change_lo: None,
                latency_change_hi: None,
                latency_coz_pooled: None,
                latency_noise: false,
            };
            if pct == 0 {
                let good: Vec<&&Cell> = of_cell.iter().filter(|c| c.reliable).collect();
                let visits: u64 = good.iter().map(|c| c.visits).sum();
                let delta: u64 = good.iter().map(|c| c.delta).sum();
                let visit_ns: u64 = good.iter().map(|c| c.visit_ns).sum();
                line.visits_per_unit = (delta > 0).then(|| visits as f64 / delta as f64);
                line.visit_us = (visits > 0).then(|| visit_ns as f64 / visits as f64 / 1000.0);
            } else {
                let (n, rate_change) = change(cells, site, pct, rounds, rate, noise_floor_rate);
                line.n = n;
                if let Some(c) = rate_change {
                    line.change_median = Some(c.median);
                    line.change_lo = Some(c.lo);
                    line.change_hi = Some(c.hi);
                    line.noise = c.noise;
                }
                if let (Some(base), Some(treated)) = (base_pooled, pooled(site, pct)) {
                    // 1 − (D_p/δ_p)/(D_0/δ_0): the share of time per unit saved.
                    line.coz_pooled = Some(1.0 - base / treated);
                }
                let (_, latency_change) = change(
                    cells,
                    site,
                    pct,
                    rounds,
                    Cell::latency_ns,
                    latency_noise_floor,
                );
                if let Some(c) = latency_change {
                    line.latency_change_median = Some(c.median);
                    line.latency_change_lo = Some(c.lo);
                    line.latency_change_hi = Some(c.hi);
                    line.latency_noise = c.noise;
                }
                if let (Some(base), Some(treated)) =
                    (base_latency, pooled_latency(cells, Some(site), pct))
                {
                    // The viewer's `−(base − W)/base` for a point it minimises.
                    line.latency_coz_pooled = (base > 0.0).then(|| treated / base - 1.0);
                }
            }
            lines.push(line);
        }
    }
    // Sites by their largest change of rate or latency, strongest first; a
    // site's lines stay together in speedup order.
    let strength = |site: &str| {
        lines
            .iter()
            .filter(|l| l.site == site)
            .flat_map(|l| [l.change_median, l.latency_change_median])
            .flatten()
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
        noise_floor: noise_floor_rate,
        baseline_latency_ns: pooled_latency(cells, None, 0),
        latency_noise_floor: latency_point.as_ref().and(latency_noise_floor),
        latency_point,
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
            latency: None,
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

    /// `c` with a latency point holding `in_flight` requests on average.
    fn with_latency(mut c: Cell, in_flight: f64) -> Cell {
        let window = crate::causal::latency::Window {
            arrivals: c.delta,
            departures: c.delta,
            in_flight_ns: (in_flight * c.duration_ns as f64) as i64,
        };
        c.latency = Some(super::super::sweep::LatencyCell::new(
            "request",
            window,
            c.duration_ns,
        ));
        c
    }

    #[test]
    fn latency_changes_are_reported_where_throughput_is_pinned() {
        // Open-loop load: both sites keep the rate; speeding up site 1
        // halves the requests in flight, hence (same arrivals) the mean
        // latency. Site 0 changes nothing.
        let mut cells = Vec::new();
        for r in 0..5 {
            let jitter = r as u64 * 10;
            cells.push(with_latency(cell(r, 0, 0, 1000 + jitter, 1000), 2.0));
            cells.push(with_latency(cell(r, 0, 50, 1000 + jitter, 1000), 2.0));
            cells.push(with_latency(cell(r, 1, 0, 1000 + jitter, 1000), 2.0));
            cells.push(with_latency(cell(r, 1, 50, 1000 + jitter, 1000), 1.0));
        }
        let s = summarize(&cells, &|id| format!("site{id}"));
        assert_eq!(s.latency_point.as_deref(), Some("request"));
        assert_eq!(
            s.lines[0].site, "site1",
            "the latency change ranks it first"
        );
        let fast = &s.lines[1];
        assert_eq!(fast.speedup_pct, 50);
        assert_eq!(fast.change_median, Some(0.0));
        assert!(fast.noise, "the rate did not move");
        let w = fast.latency_change_median.unwrap();
        assert!((w + 0.5).abs() < 1e-9, "{w}");
        assert!(!fast.latency_noise);
        assert!((fast.latency_coz_pooled.unwrap() + 0.5).abs() < 0.01);
        // 2 in flight over 1 s for about 1000 arrivals: about 2 ms each.
        let base = s.lines[0].latency_ns_median.unwrap();
        assert!((base - 2e6).abs() < 5e4, "{base}");
        let flat = &s.lines[3];
        assert_eq!(flat.latency_change_median, Some(0.0));
        assert!(flat.latency_noise);
        // Without a latency point there is nothing to say about latency.
        let plain: Vec<Cell> = cells
            .into_iter()
            .map(|mut c| {
                c.latency = None;
                c
            })
            .collect();
        let s = summarize(&plain, &|id| format!("site{id}"));
        assert_eq!(s.latency_point, None);
        assert!(s.lines.iter().all(|l| l.latency_change_median.is_none()));
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

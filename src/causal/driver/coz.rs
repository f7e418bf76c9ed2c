//! Profiles in Coz's own file format, so Coz's viewer can plot them.
//!
//! The default is Coz's tab-separated format, read by every viewer version:
//!
//! ```text
//! startup\ttime=<unix ns>
//! experiment\tselected=<site>\tspeedup=<0.00..1.00>\tduration=<ns>\tselected-samples=<visits>
//! throughput-point\tname=<progress point>\tdelta=<count>
//! latency-point\tname=<latency point>\tarrivals=<count>\tdepartures=<count>\tdifference=<mean in flight>
//! runtime\ttime=<ns since startup>
//! ```
//!
//! A `latency-point` line follows the throughput point when the cell
//! measured a latency point. The viewer takes `difference` for the mean
//! number of requests in flight (Coz writes `begins − ends` at the end of
//! the experiment) and, by Little's law, `difference · duration /
//! arrivals` for the mean latency, averaging `difference` over the
//! experiments of a site and speedup weighted by their durations. ccc
//! measures that mean exactly (`causal::latency`), but the viewer reads the
//! TSV value with `parseInt`: there ccc writes whole numbers, each the
//! exact value plus what earlier cells of the same site and speedup
//! rounded away, so that the viewer's weighted mean misses the exact one
//! by less than half a request over one cell's duration. JSON lines carry
//! the exact value.
//!
//! `jsonl` writes the same records as JSON lines (newer viewers only). Only
//! reliable cells are written, each `experiment` line immediately followed
//! by its point line (an orphan point line breaks older viewers). The viewer
//! sums records per (site, point, speedup) and compares every speedup with
//! the same site's 0% entry, so every site written has 0% cells; it drops
//! entries with fewer than 5 progress counts, which reliable cells exceed by
//! far (`--min-delta`, default 1000).

use super::sweep::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Coz's viewer ignores an entry with fewer progress counts than this.
pub(crate) const VIEWER_MIN_DELTA: u64 = 5;

/// Which of Coz's formats to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Tsv,
    Jsonl,
}

/// Renders a profile: `startup_unix_ns` is when profiling began (wall
/// clock), `runtime_ns` how long it ran.
pub fn render(
    cells: &[Cell],
    site_name: &dyn Fn(u16) -> String,
    point: &str,
    startup_unix_ns: u128,
    runtime_ns: u64,
    format: Format,
) -> String {
    let mut out = String::new();
    // The viewer drops entries with fewer than 5 counts; a cell written is
    // one it keeps (`--min-delta` is at least 5 too).
    let writable = |c: &Cell| c.reliable && c.duration_ns > 0 && c.delta >= VIEWER_MIN_DELTA;
    // Sites without a 0% cell would have no baseline in the viewer.
    let has_baseline = |site: u16| {
        cells
            .iter()
            .any(|c| c.site == site && c.speedup_pct == 0 && writable(c))
    };
    match format {
        Format::Tsv => {
            let _ = writeln!(out, "startup\ttime={startup_unix_ns}");
        }
        Format::Jsonl => {
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "startup", "time": startup_unix_ns as u64})
            );
        }
    }
    // Per (site, speedup): in-flight time (request-ns) rounded away from
    // the TSV's whole `difference` values so far.
    let mut carried: HashMap<(u16, u8), i128> = HashMap::new();
    for c in cells {
        if !writable(c) || !has_baseline(c.site) {
            continue;
        }
        let site = site_name(c.site);
        let speedup = f64::from(c.speedup_pct) / 100.0;
        let duration = i128::from(c.duration_ns);
        match format {
            Format::Tsv => {
                let _ = writeln!(
                    out,
                    "experiment\tselected={site}\tspeedup={speedup:.2}\tduration={}\tselected-samples={}",
                    c.duration_ns, c.visits
                );
                let _ = writeln!(out, "throughput-point\tname={point}\tdelta={}", c.delta);
                if let Some(l) = &c.latency {
                    let owed = carried.entry((c.site, c.speedup_pct)).or_default();
                    let exact = i128::from(l.in_flight_ns.max(0)) + *owed;
                    let difference = ((exact + duration / 2) / duration).max(0);
                    *owed = exact - difference * duration;
                    let _ = writeln!(
                        out,
                        "latency-point\tname={}\tarrivals={}\tdepartures={}\tdifference={difference}",
                        l.name, l.arrivals, l.departures
                    );
                }
            }
            Format::Jsonl => {
                let experiment = serde_json::json!({
                    "type": "experiment",
                    "selected": site,
                    "speedup": (speedup * 100.0).round() / 100.0,
                    "duration": c.duration_ns,
                    "selected_samples": c.visits,
                });
                let point = serde_json::json!({"type": "throughput-point", "name": point, "delta": c.delta});
                let _ = writeln!(out, "{experiment}\n{point}");
                if let Some(l) = &c.latency {
                    let latency = serde_json::json!({
                        "type": "latency-point",
                        "name": l.name,
                        "arrivals": l.arrivals,
                        "departures": l.departures,
                        "difference": l.in_flight_ns.max(0) as f64 / duration as f64,
                    });
                    let _ = writeln!(out, "{latency}");
                }
            }
        }
    }
    match format {
        Format::Tsv => {
            let _ = writeln!(out, "runtime\ttime={runtime_ns}");
        }
        Format::Jsonl => {
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "runtime", "time": runtime_ns})
            );
        }
    }
    out
}

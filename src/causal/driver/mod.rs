//! The causal profiler's driver, behind `ccc causal`: it arms the hooks,
//! starts the server in this process, drives it with ccc's own load (or
//! waits for someone else's), sweeps every site through virtual speedups
//! and reports which ones matter.
//!
//! Its parts, each its own file: [`plan`] (the experiment order),
//! [`sweep`] (one experiment per cell, against [`crate::causal`]'s hooks),
//! [`awake`] and [`cores`] (idle cores and per-thread core time),
//! [`ledger`] (the audit of the delay accounting), [`load`] (the built-in
//! keep-alive clients), [`report`] (predictions from cells), and the
//! outputs: `tables` (the terminal), [`coz`] (Coz's profile format) and
//! [`plot`] (SVG). The command only resolves its flags into [`Options`].
//!
//! Ctrl-C (or SIGTERM) while waiting for load or warming up stops at once
//! and exits 130 (143); during the sweep it drops the experiment in
//! progress, reports the ones done and then exits 130 (143).

pub(crate) mod awake;
pub(crate) mod cores;
pub(crate) mod coz;
pub(crate) mod ledger;
pub(crate) mod load;
pub(crate) mod plan;
pub(crate) mod plot;
pub(crate) mod report;
pub(crate) mod sweep;
mod tables;

use crate::catalog::query::Page;
use crate::catalog::{Access, Catalog};
use crate::causal::engine::{ExternalWake, SiteClock};
use crate::causal::points::{ASSET_SERVED, REQUEST, SITES};
use crate::error::{Error, Result};
use crate::http::route::asset_url;
use crate::serve::Server;
use crate::{interrupt, output};
use awake::IdleCores;
use load::{Load, Urls};
use plan::Plan;
use report::Summary;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use sweep::{Cell, Points, Session, Timing, WarmUpError};
use tables::{print_ledger, print_table, warnings};

/// Where the load comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadSource {
    /// This many keep-alive clients of ccc's own.
    Builtin(usize),
    /// Someone else's load generator.
    External,
}

impl std::fmt::Display for LoadSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadSource::Builtin(n) => write!(f, "builtin:{n}"),
            LoadSource::External => f.write_str("external"),
        }
    }
}

/// How much of the ledger audit to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LedgerDetail {
    /// One line per cell.
    Summary,
    /// One line per cell, then one per cell and thread.
    Full,
}

/// A profiling run: the experiments, the load, and where the results go.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Site ids from [`SITES`] to profile; empty for all of them.
    pub sites: Vec<u16>,
    /// Virtual speedups in percent.
    pub speedups: Vec<u8>,
    /// Rounds over every site and speedup (at least 1).
    pub rounds: usize,
    /// Seed of the experiment order; `None` takes one from the clock.
    pub seed: Option<u64>,
    pub timing: Timing,
    pub load: LoadSource,
    /// URLs for the built-in load, one per line; `None` for every asset
    /// in the catalog, most requests on a hot set.
    pub urls: Option<PathBuf>,
    pub external_wake: ExternalWake,
    pub site_clock: SiteClock,
    pub idle_cores: IdleCores,
    /// Where to write the JSON report (`-` for stdout).
    pub json_out: Option<PathBuf>,
    /// Where to write Coz's profile, in which format, and whether to
    /// append to it.
    pub coz_out: Option<PathBuf>,
    pub coz_format: coz::Format,
    pub coz_append: bool,
    /// Whether and how much of the ledger audit to print.
    pub ledger: Option<LedgerDetail>,
    /// Exit [`LEDGER_ERROR_EXIT`] when the ledger audit finds an error.
    pub strict: bool,
    /// Where to draw the speedup curves as SVG.
    pub plot: Option<PathBuf>,
}

/// Exit code when `strict` is set and the ledger audit finds an error.
pub(crate) const LEDGER_ERROR_EXIT: u8 = 4;
/// How long to wait for someone else's load to start, and for ccc's own.
const EXTERNAL_LOAD_PATIENCE: Duration = Duration::from_secs(30);
const BUILTIN_LOAD_PATIENCE: Duration = Duration::from_secs(5);

/// Every asset's URL, in catalog order, for the built-in load: the
/// catalog says what exists, the HTTP layer how it is addressed.
fn every_asset_url(db: &Path) -> Result<Vec<String>> {
    let catalog = Catalog::open(db, Access::ReadOnly)?;
    let mut urls = Vec::new();
    for package in catalog.package_names()? {
        for version in catalog.versions(&package)? {
            let version_text = version.version.to_string();
            for file in catalog.files(version.id, Page::ALL)? {
                urls.push(asset_url(&package, &version_text, &file.path));
            }
        }
    }
    Ok(urls)
}

/// A site's name from [`SITES`], or `site-N` for an id outside it.
fn site_name(id: u16) -> String {
    SITES
        .get(id as usize)
        .map_or_else(|| format!("site-{id}"), |s| s.name.to_string())
}

#[derive(Serialize)]
struct Config<'a> {
    sites: Vec<String>,
    speedups: &'a [u8],
    rounds: usize,
    seed: u64,
    load: String,
    external_wake: String,
    site_clock: String,
    idle_cores: String,
    timing: &'a Timing,
    window_ms: u64,
    command: String,
}

#[derive(Serialize)]
struct Baseline {
    warmup_rate: f64,
    rate: f64,
    noise_floor: Option<f64>,
    /// Mean latency at the latency point, in virtual ns.
    latency_ns: Option<f64>,
    latency_noise_floor: Option<f64>,
}

/// A cell as `--json-out` writes it: its site by name and its round counted
/// from 1, as in the table, and whether the site went unvisited.
#[derive(Serialize)]
struct JsonCell<'a> {
    round: usize,
    site: String,
    no_visits: bool,
    #[serde(flatten)]
    cell: &'a Cell,
}

impl JsonCell<'_> {
    fn of(cell: &Cell) -> JsonCell<'_> {
        JsonCell {
            round: cell.round + 1,
            site: site_name(cell.site),
            no_visits: cell.visits == 0,
            cell,
        }
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    version: &'static str,
    config: Config<'a>,
    baseline: Baseline,
    cells: Vec<JsonCell<'a>>,
    summary: &'a Summary,
    warnings: &'a [String],
}

/// What the profiling part of a run produced.
struct Outcome {
    cells: Vec<Cell>,
    warmup_rate: f64,
    window: Duration,
    /// What the built-in clients did (empty with external load).
    load: load::Report,
}

/// What the flags resolve to before anything starts.
struct Settings {
    sites: Vec<u16>,
    seed: u64,
    plan: Plan,
    timing: Timing,
    /// The built-in load's targets; `None` with external load.
    urls: Option<Urls>,
    external_wake: ExternalWake,
    site_clock: SiteClock,
    idle_cores: IdleCores,
}

impl Settings {
    fn new(db: &Path, options: &Options) -> Result<Settings> {
        let sites: Vec<u16> = if options.sites.is_empty() {
            SITES.iter().map(|s| s.id).collect()
        } else {
            // A site named twice is profiled once.
            let mut sites = options.sites.clone();
            sites.sort_unstable();
            sites.dedup();
            sites
        };
        let seed = options.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 % 1_000_000)
        });
        let urls = match (options.load, &options.urls) {
            (LoadSource::Builtin(_), Some(file)) => Some(Urls::from_file(file)?),
            (LoadSource::Builtin(_), None) => Some(Urls::hot_set(every_asset_url(db)?, db)?),
            (LoadSource::External, _) => None,
        };
        Ok(Settings {
            plan: Plan::new(
                sites.clone(),
                options.speedups.clone(),
                options.rounds,
                seed,
            ),
            sites,
            seed,
            timing: options.timing.clone(),
            urls,
            external_wake: options.external_wake,
            site_clock: options.site_clock,
            idle_cores: options.idle_cores,
        })
    }
}

/// Profiles the server `start_server` starts (called once the profiler is
/// armed, so that the server's threads register), under the load and for
/// the sweep `options` describe; prints the table and writes the files
/// they ask for. The exit code says whether the sweep was interrupted or,
/// with `strict`, whether the ledger audit found an error.
pub(crate) fn run(
    db: &Path,
    options: &Options,
    start_server: impl FnOnce() -> Result<Server>,
) -> Result<ExitCode> {
    let mut settings = Settings::new(db, options)?;
    let started = Instant::now();
    let startup_unix_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let signals = interrupt::watch()?;
    let interrupted = || signals.load(Ordering::Relaxed);

    let Outcome {
        cells,
        warmup_rate,
        window,
        load: load_report,
    } = profile(options.load, start_server, &mut settings, &interrupted)?;
    let stopped_by = interrupt::requested();
    if let Some(signal) = stopped_by {
        if cells.is_empty() {
            return Err(Error::Interrupted(signal));
        }
        eprintln!(
            "interrupted after {} of {}: reporting those",
            output::count(cells.len() as u64, "cell"),
            settings.plan.schedule().len()
        );
    }

    let summary = report::summarize(&cells, &site_name);
    let warnings = warnings(&summary, &cells, &load_report);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    print_table(
        &summary,
        &settings.plan,
        options.load,
        window,
        settings.seed,
    )?;
    if let Some(level) = options.ledger {
        print_ledger(&cells, level)?;
    }
    for w in &warnings {
        eprintln!(
            "{}",
            output::wrap_indented(&format!("warning: {w}"), output::stderr_width())
        );
    }
    output::print(format_args!(
        "{} in {:.1}s; command: {command}",
        output::count(cells.len() as u64, "cell"),
        started.elapsed().as_secs_f64()
    ))?;

    if let Some(path) = &options.json_out {
        let report = JsonReport {
            version: env!("CARGO_PKG_VERSION"),
            config: Config {
                sites: settings.sites.iter().map(|s| site_name(*s)).collect(),
                speedups: &settings.plan.speedups,
                rounds: settings.plan.rounds,
                seed: settings.seed,
                load: options.load.to_string(),
                external_wake: format!("{:?}", settings.external_wake).to_lowercase(),
                site_clock: format!("{:?}", settings.site_clock).to_lowercase(),
                idle_cores: format!("{:?}", settings.idle_cores).to_lowercase(),
                timing: &settings.timing,
                window_ms: window.as_millis() as u64,
                command,
            },
            baseline: Baseline {
                warmup_rate,
                rate: summary.baseline_rate,
                noise_floor: summary.noise_floor,
                latency_ns: summary.baseline_latency_ns,
                latency_noise_floor: summary.latency_noise_floor,
            },
            cells: cells.iter().map(JsonCell::of).collect(),
            summary: &summary,
            warnings: &warnings,
        };
        write_out(path, &output::to_json(&report)?, false)?;
    }
    if let Some(path) = &options.coz_out {
        let text = coz::render(
            &cells,
            &site_name,
            ASSET_SERVED.name,
            startup_unix_ns,
            started.elapsed().as_nanos() as u64,
            options.coz_format,
        );
        write_out(path, &text, options.coz_append)?;
    }
    if let Some(path) = &options.plot {
        let title = format!("ccc causal: {} served/s", ASSET_SERVED.name);
        write_out(path, &plot::svg(&summary, &title), false)?;
    }
    if let Some(signal) = stopped_by {
        return Ok(ExitCode::from(crate::error::signal_exit_code(signal)));
    }
    if options.strict && summary.ledger_errors > 0 {
        return Ok(ExitCode::from(LEDGER_ERROR_EXIT));
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the server in this process with the profiler armed, starts
/// the built-in load (or waits for someone else's), sweeps, and stops
/// both, whatever happened in between.
fn profile(
    load: LoadSource,
    start_server: impl FnOnce() -> Result<Server>,
    settings: &mut Settings,
    interrupted: &dyn Fn() -> bool,
) -> Result<Outcome> {
    // Arm before the server starts, so its threads register.
    let session = Session::arm(
        settings.external_wake,
        settings.site_clock,
        settings.idle_cores,
    );
    let server = start_server()?;
    let addr = server.addr();
    eprintln!("profiling http://{addr} (seed {})", settings.seed);
    let stop_server = tokio::sync::Notify::new();

    std::thread::scope(|scope| -> Result<Outcome> {
        let serving = scope.spawn(|| server.run(stop_server.notified()));
        let load = match (load, settings.urls.take()) {
            (LoadSource::Builtin(n), Some(urls)) => {
                Some(Load::start(addr, Arc::new(urls), n, settings.seed)?)
            }
            _ => {
                eprintln!(
                    "waiting for load on http://{addr} (up to {}s; Ctrl-C stops)...",
                    EXTERNAL_LOAD_PATIENCE.as_secs()
                );
                None
            }
        };
        let swept = warm_up_and_sweep(addr, &session, settings, load.as_ref(), interrupted);
        let load_report = load.map(Load::stop).unwrap_or_default();
        // A permit kept if the server is not waiting yet.
        stop_server.notify_one();
        let served = serving.join();
        let (cells, warmup_rate, window) = swept?;
        match served {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(Error::Internal("the server thread panicked".into())),
        }
        Ok(Outcome {
            cells,
            warmup_rate,
            window,
            load: load_report,
        })
    })
}

/// Waits for a steady rate, sizes the window from it and runs every
/// cell of the plan, printing each as it ends.
fn warm_up_and_sweep(
    addr: std::net::SocketAddr,
    session: &Session,
    settings: &Settings,
    load: Option<&Load>,
    interrupted: &dyn Fn() -> bool,
) -> Result<(Vec<Cell>, f64, Duration)> {
    let patience = if load.is_some() {
        BUILTIN_LOAD_PATIENCE
    } else {
        EXTERNAL_LOAD_PATIENCE
    };
    let rate = match sweep::warm_up(&ASSET_SERVED, &settings.timing, patience, interrupted) {
        Ok(rate) => rate,
        Err(WarmUpError::Interrupted) => {
            return Err(Error::Interrupted(
                interrupt::requested().unwrap_or(libc::SIGINT),
            ));
        }
        Err(WarmUpError::NoProgress(waited)) => {
            return Err(Error::NoLoad {
                addr,
                waited,
                external: load.is_none(),
                failures: load.and_then(|l| l.report().failure_summary()),
            });
        }
    };
    let window = sweep::window_for(rate, &settings.timing);
    eprintln!(
        "warm-up: {rate:.0} {}/s; window {} ms; {}",
        ASSET_SERVED.name,
        window.as_millis(),
        output::count(settings.plan.schedule().len() as u64, "cell")
    );
    let points = Points {
        progress: &ASSET_SERVED,
        latency: Some(&REQUEST),
    };
    let cells = sweep::sweep(
        session,
        &settings.plan,
        points,
        window,
        &settings.timing,
        &mut print_cell,
        interrupted,
    );
    Ok((cells, rate, window))
}

/// One line per finished cell on stderr, so a long sweep shows progress.
fn print_cell(cell: &Cell, done: usize, total: usize) {
    let line = format!(
        "[{done:>3}/{total}] round {} {:<14} {:>3}%  {:>9.0}/s  delta {:>6}{}{}",
        cell.round + 1,
        site_name(cell.site),
        cell.speedup_pct,
        cell.rate(),
        cell.delta,
        if cell.visits == 0 {
            "  (site not visited)"
        } else {
            ""
        },
        cell.reason
            .as_deref()
            .map(|r| format!("  (unreliable: {r})"))
            .unwrap_or_default()
    );
    eprintln!("{}", output::wrap_indented(&line, output::stderr_width()));
}

fn write_out(path: &Path, text: &str, append: bool) -> Result<()> {
    if path == Path::new("-") {
        return output::print(text.trim_end());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(site: u16) -> Cell {
        Cell {
            round: 0,
            site,
            speedup_pct: 25,
            elapsed_ns: 500_000_000,
            delay_ns: 0,
            duration_ns: 500_000_000,
            delta: 1000,
            visits: 0,
            visit_ns: 10_000,
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
    fn json_cells_name_their_site_and_count_rounds_from_1() {
        let c = cell(4);
        let json = serde_json::to_value(JsonCell::of(&c)).unwrap();
        assert_eq!(json["site"], "http-respond");
        assert_eq!(json["round"], 1);
        assert_eq!(json["no_visits"], true);
        assert_eq!(json["speedup_pct"], 25);
        // Once, by name: the id is not written beside it.
        let text = serde_json::to_string(&JsonCell::of(&c)).unwrap();
        assert_eq!(text.matches("\"site\":").count(), 1, "{text}");
        assert_eq!(text.matches("\"round\":").count(), 1, "{text}");
    }
}

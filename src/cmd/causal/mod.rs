//! `ccc causal`: run the server under load, sweep its sites through
//! virtual speedups, and report which ones matter.
//!
//! Ctrl-C (or SIGTERM) while waiting for load or warming up stops at once
//! and exits 130 (143); during the sweep it drops the experiment in
//! progress, reports the ones done and then exits 130 (143).

use crate::cli::CausalArgs;
#[cfg(feature = "causal")]
pub use enabled::run;

#[cfg(feature = "causal")]
pub mod awake;
#[cfg(feature = "causal")]
pub mod cores;
#[cfg(feature = "causal")]
pub mod coz;
#[cfg(feature = "causal")]
pub mod ledger;
#[cfg(feature = "causal")]
pub mod load;
#[cfg(feature = "causal")]
pub mod plan;
#[cfg(feature = "causal")]
pub mod plot;
#[cfg(feature = "causal")]
pub mod report;
#[cfg(feature = "causal")]
pub mod sweep;

#[cfg(not(feature = "causal"))]
pub fn run(_db: &std::path::Path, _args: CausalArgs) -> crate::Result<std::process::ExitCode> {
    eprintln!(
        "error: this ccc was built without the `causal` feature, so it has no profiler\n  hint: rebuild with the default features: cargo build --release"
    );
    Ok(std::process::ExitCode::from(2))
}

#[cfg(feature = "causal")]
mod enabled {
    use super::CausalArgs;
    use super::awake::IdleCores;
    use super::coz::{self, Format};
    use super::ledger;
    use super::load::{self, Load, Urls};
    use super::plan::Plan;
    use super::plot;
    use super::report::{self, Summary};
    use super::sweep::{self, Cell, Points, Session, Timing, WarmUpError};
    use crate::catalog::query::Page;
    use crate::catalog::{Access, Catalog};
    use crate::causal::engine::{ExternalWake, SiteClock};
    use crate::causal::points::{ASSET_SERVED, REQUEST, SITES};
    use crate::cli::{
        CozFormatArg, ExternalWakeArg, IdleCoresArg, LedgerArg, LoadArg, SiteClockArg,
    };
    use crate::error::{Error, Result};
    use crate::http::route::asset_url;
    use crate::output::{Column, Table};
    use crate::serve::Server;
    use crate::{interrupt, output};
    use serde::Serialize;
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::Path;
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Exit code when `--strict` finds a ledger error.
    const LEDGER_ERROR_EXIT: u8 = 4;
    /// Warn when more requests than this share had no connection stamp.
    const FALLBACK_WARN_SHARE: f64 = 0.10;
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
        fn from_args(db: &Path, args: &CausalArgs) -> Result<Settings> {
            let sites: Vec<u16> = if args.sites.is_empty() {
                SITES.iter().map(|s| s.id).collect()
            } else {
                // A site named twice is profiled once.
                let mut sites = args.sites.clone();
                sites.sort_unstable();
                sites.dedup();
                sites
            };
            let seed = args.seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64 % 1_000_000)
            });
            let urls = match (args.load, &args.urls) {
                (LoadArg::Builtin(_), Some(file)) => Some(Urls::from_file(file)?),
                (LoadArg::Builtin(_), None) => Some(Urls::hot_set(every_asset_url(db)?, db)?),
                (LoadArg::External, _) => None,
            };
            Ok(Settings {
                plan: Plan::new(sites.clone(), args.speedups.clone(), args.rounds, seed),
                sites,
                seed,
                timing: Timing {
                    warmup: args.warmup,
                    window: args.window,
                    max_window: args.max_window,
                    settle: args.settle,
                    min_delta: args.min_delta,
                    ..Timing::default()
                },
                urls,
                external_wake: match args.external_wake {
                    ExternalWakeArg::Conn => ExternalWake::Conn,
                    ExternalWakeArg::Owe => ExternalWake::Owe,
                    ExternalWakeArg::Skip => ExternalWake::Skip,
                },
                site_clock: match args.site_clock {
                    SiteClockArg::Wall => SiteClock::Wall,
                    SiteClockArg::Cpu => SiteClock::Cpu,
                },
                idle_cores: match args.idle_cores {
                    IdleCoresArg::Spin => IdleCores::Spin,
                    IdleCoresArg::Sleep => IdleCores::Sleep,
                },
            })
        }
    }

    pub fn run(db: &Path, args: CausalArgs) -> Result<ExitCode> {
        let mut settings = Settings::from_args(db, &args)?;
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
        } = profile(db, &args, &mut settings, &interrupted)?;
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
        print_table(&summary, &settings.plan, args.load, window, settings.seed)?;
        if let Some(level) = args.ledger {
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

        if let Some(path) = &args.json_out {
            let report = JsonReport {
                version: env!("CARGO_PKG_VERSION"),
                config: Config {
                    sites: settings.sites.iter().map(|s| site_name(*s)).collect(),
                    speedups: &settings.plan.speedups,
                    rounds: settings.plan.rounds,
                    seed: settings.seed,
                    load: args.load.to_string(),
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
        if let Some(path) = &args.coz_out {
            let format = match args.coz_format {
                CozFormatArg::Tsv => Format::Tsv,
                CozFormatArg::Jsonl => Format::Jsonl,
            };
            let text = coz::render(
                &cells,
                &site_name,
                ASSET_SERVED.name,
                startup_unix_ns,
                started.elapsed().as_nanos() as u64,
                format,
            );
            write_out(path, &text, args.coz_append)?;
        }
        if let Some(path) = &args.plot {
            let title = format!("ccc causal: {} served/s", ASSET_SERVED.name);
            write_out(path, &plot::svg(&summary, &title), false)?;
        }
        if let Some(signal) = stopped_by {
            return Ok(ExitCode::from(interrupt::exit_code(signal)));
        }
        if args.strict && summary.ledger_errors > 0 {
            return Ok(ExitCode::from(LEDGER_ERROR_EXIT));
        }
        Ok(ExitCode::SUCCESS)
    }

    /// Starts the server in this process with the profiler armed, starts
    /// the built-in load (or waits for someone else's), sweeps, and stops
    /// both, whatever happened in between.
    fn profile(
        db: &Path,
        args: &CausalArgs,
        settings: &mut Settings,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Outcome> {
        // Arm before the server starts, so its threads register.
        let session = Session::arm(
            settings.external_wake,
            settings.site_clock,
            settings.idle_cores,
        );
        // A free port unless --port names one: the load is ccc's own.
        let mut server_args = args.server.clone();
        server_args.port.get_or_insert(0);
        super::super::serve::open_access_log(&server_args)?;
        let server = Server::start(super::super::serve::config(db, &server_args)?)?;
        let addr = server.addr();
        eprintln!("profiling http://{addr} (seed {})", settings.seed);
        let stop_server = AtomicBool::new(false);

        std::thread::scope(|scope| -> Result<Outcome> {
            let serving = scope.spawn(|| server.run(&stop_server));
            let load = match (args.load, settings.urls.take()) {
                (LoadArg::Builtin(n), Some(urls)) => {
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
            stop_server.store(true, Ordering::Relaxed);
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

    /// What the reader should know about this run's results, one line each.
    fn warnings(summary: &Summary, cells: &[Cell], load: &load::Report) -> Vec<String> {
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

    fn pct(x: f64) -> String {
        format!("{:+.1}%", x * 100.0)
    }

    /// The line above the table: what was measured, and how.
    fn header(plan: &Plan, load: LoadArg, window: Duration, seed: u64) -> String {
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

    fn print_table(
        summary: &Summary,
        plan: &Plan,
        load: LoadArg,
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
        if let (Some(point), Some(latency)) = (&summary.latency_point, summary.baseline_latency_ns)
        {
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

    fn print_ledger(cells: &[Cell], level: LedgerArg) -> Result<()> {
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
        if level == LedgerArg::Full {
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
                detail: "idle 90% of the window, yet paid 600 of the 1000 ns of delay inserted"
                    .into(),
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
            let line = header(&plan, LoadArg::External, Duration::from_millis(40), 7);
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

        #[test]
        fn json_cells_name_their_site_and_count_rounds_from_1() {
            let mut c = cell(4, 25, vec![]);
            c.visits = 0;
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
}

//! The experiment controller: arms the engine, warms up, then runs the
//! plan's cells one after another against whatever load drives the program.
//!
//! One cell:
//!
//! 1. publish a new epoch `{site, pct, Active}` (threads resync lazily: a
//!    forced sync would make them all sleep at once);
//! 2. settle;
//! 3. t0 snapshot of `G`, the progress point, the latency point (if any)
//!    and every thread's ledger, taken after all setup so none of it is
//!    timed;
//! 4. wait for the monotonic deadline `t0 + window`, extended by half
//!    windows (up to `max_window`) while fewer than `min_delta` units of
//!    progress were counted;
//! 5. t1 snapshot;
//! 6. drain (credits off, pays and receive rules on), ledger snapshot;
//! 7. idle, cool down.
//!
//! `duration = elapsed − ΔG` is the window's length in the virtual program
//! (progress points are strict, so the counting thread has `l ≈ G`).
//! The controller is not a registered thread: it is never delayed.
//!
//! Every wait of the controller (for load, warm-up, settle, the window)
//! ends early once the caller's `interrupted()` says so, so Ctrl-C stops a
//! session within a few milliseconds; a cell cut short is dropped.

use super::awake::{IdleCores, KeepAwake};
use super::cores::{self, CoreTime};
use super::ledger::{self, Finding, GlobalDelay, Row, Snapshots};
use super::plan::{CellSpec, Plan};
use crate::causal::engine::{ExternalWake, Field, Phase, SiteClock, Slot};
use crate::causal::latency::Window;
use crate::causal::{GLOBALS, Latency, Progress, measure_clock_cost, now_ns, registry};
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long each part of a cell takes.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    #[serde(with = "millis")]
    pub warmup: Duration,
    /// Shortest measurement window.
    #[serde(with = "millis")]
    pub window: Duration,
    #[serde(with = "millis")]
    pub max_window: Duration,
    #[serde(with = "millis")]
    pub settle: Duration,
    #[serde(with = "millis")]
    pub drain: Duration,
    #[serde(with = "millis")]
    pub cooldown: Duration,
    /// Progress counts a cell needs to be reliable.
    pub min_delta: u64,
}

mod millis {
    pub(super) fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            warmup: Duration::from_secs(2),
            window: Duration::from_millis(500),
            max_window: Duration::from_secs(4),
            settle: Duration::from_millis(100),
            drain: Duration::from_millis(20),
            cooldown: Duration::from_millis(30),
            min_delta: 1000,
        }
    }
}

/// A profiling session: the engine is armed for its lifetime, and only
/// threads registered during it are audited.
pub struct Session {
    first_slot: usize,
    /// Dropped after the engine is disarmed (fields drop after `drop`).
    _keep_awake: Option<KeepAwake>,
}

impl Session {
    /// Arms the engine, timing the selected site's visits with
    /// `site_clock`, and keeps idle cores awake if `idle_cores` says so
    /// (where that cannot be done, it says why on stderr and goes on: the
    /// profile is still valid, only less exact; see `awake`). Threads that
    /// should be delayed must register after this.
    pub fn arm(
        external_wake: ExternalWake,
        site_clock: SiteClock,
        idle_cores: IdleCores,
    ) -> Session {
        let keep_awake = match idle_cores {
            IdleCores::Spin => match KeepAwake::start() {
                Ok(spinners) => Some(spinners),
                Err(why) => {
                    eprintln!(
                        "warning: idle cores will sleep during the profile, so predictions may run low: {why}\n  hint: --idle-cores sleep chooses this and drops the warning"
                    );
                    None
                }
            },
            IdleCores::Sleep => None,
        };
        GLOBALS
            .clock_cost
            .store(measure_clock_cost(site_clock), Ordering::Relaxed);
        GLOBALS
            .site_clock
            .store(site_clock as u8, Ordering::Relaxed);
        GLOBALS
            .external_wake
            .store(external_wake as u8, Ordering::Relaxed);
        GLOBALS.publish(now_ns(), 0, 0, Phase::Idle);
        let first_slot = registry().len();
        GLOBALS.armed.store(true, Ordering::Release);
        Session {
            first_slot,
            _keep_awake: keep_awake,
        }
    }

    /// The ledgers of the threads registered during this session.
    pub(crate) fn slots(&self) -> Vec<&'static Slot> {
        registry().into_iter().skip(self.first_slot).collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        GLOBALS.set_phase(Phase::Idle);
        GLOBALS.armed.store(false, Ordering::Release);
    }
}

/// What a cell measures the program by: a progress point (throughput) and
/// optionally a latency point.
#[derive(Clone, Copy)]
pub struct Points<'a> {
    pub progress: &'a Progress,
    pub latency: Option<&'a Latency>,
}

impl<'a> From<&'a Progress> for Points<'a> {
    fn from(progress: &'a Progress) -> Points<'a> {
        Points {
            progress,
            latency: None,
        }
    }
}

/// What a latency point measured in a cell's window, in virtual time.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyCell {
    pub name: String,
    /// Requests begun and ended in the window.
    pub arrivals: u64,
    pub departures: u64,
    /// The number of requests in flight integrated over the window
    /// (request-nanoseconds).
    pub in_flight_ns: i64,
    /// `in_flight_ns / duration_ns`: Little's `L`.
    pub mean_in_flight: Option<f64>,
    /// `L / λ` with `λ = arrivals / duration`: Little's `W`.
    pub mean_latency_ns: Option<f64>,
}

impl LatencyCell {
    pub fn new(name: &str, window: Window, duration_ns: i64) -> LatencyCell {
        LatencyCell {
            name: name.to_string(),
            arrivals: window.arrivals,
            departures: window.departures,
            in_flight_ns: window.in_flight_ns,
            mean_in_flight: window.mean_in_flight(duration_ns),
            mean_latency_ns: window.mean_latency_ns(),
        }
    }
}

/// One experiment's measurements.
///
/// `round` (from 0) and `site` (an id) are left out of the serialized form:
/// a site id means nothing without the site list, so `ccc causal --json-out`
/// writes each cell with its site's name and its round counted from 1, as
/// the table shows them.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    #[serde(skip)]
    pub round: usize,
    #[serde(skip)]
    pub site: u16,
    pub speedup_pct: u8,
    pub elapsed_ns: u64,
    /// ΔG over the window: the virtual time removed.
    pub delay_ns: u64,
    /// `elapsed − delay`, the window in the virtual program.
    pub duration_ns: i64,
    /// Progress counted in the window.
    pub delta: u64,
    pub visits: u64,
    pub visit_ns: u64,
    /// Receives in the window, and how many had no usable stamp.
    pub receives: u64,
    pub fallbacks: u64,
    /// The latency point's measurements, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyCell>,
    pub reliable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub findings: Vec<Finding>,
    pub ledger: Vec<Row>,
}

impl Cell {
    /// Progress per second of virtual time.
    pub fn rate(&self) -> f64 {
        if self.duration_ns <= 0 {
            0.0
        } else {
            self.delta as f64 * 1e9 / self.duration_ns as f64
        }
    }

    /// Mean latency at the latency point, in virtual ns.
    pub fn latency_ns(&self) -> Option<f64> {
        self.latency.as_ref().and_then(|l| l.mean_latency_ns)
    }
}

/// Why a warm-up ended without a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WarmUpError {
    /// The progress point did not move within this long.
    NoProgress(Duration),
    /// `interrupted()` became true.
    Interrupted,
}

/// Waits up to `patience` for the progress point to move, then measures its
/// rate over the warm-up. Returns the rate in units per second.
pub(crate) fn warm_up(
    progress: &Progress,
    timing: &Timing,
    patience: Duration,
    interrupted: &dyn Fn() -> bool,
) -> Result<f64, WarmUpError> {
    let started = now_ns();
    let first = progress.count();
    while progress.count() == first {
        if Duration::from_nanos(now_ns() - started) > patience {
            return Err(WarmUpError::NoProgress(patience));
        }
        if interrupted() {
            return Err(WarmUpError::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let t0 = now_ns();
    let c0 = progress.count();
    if !sleep_until(t0 + timing.warmup.as_nanos() as u64, interrupted) {
        return Err(WarmUpError::Interrupted);
    }
    let rate = (progress.count() - c0) as f64 * 1e9 / (now_ns() - t0) as f64;
    Ok(rate)
}

/// The window for a measured rate: long enough for `2·min_delta` counts,
/// within `[window, max_window]`.
pub(crate) fn window_for(rate: f64, timing: &Timing) -> Duration {
    let wanted = if rate > 0.0 {
        Duration::from_secs_f64(2.0 * timing.min_delta as f64 / rate)
    } else {
        timing.max_window
    };
    wanted.clamp(timing.window, timing.max_window.max(timing.window))
}

fn snapshot_all(slots: &[&'static Slot]) -> Vec<crate::causal::engine::Snapshot> {
    slots.iter().map(|s| s.snapshot()).collect()
}

/// Each registered thread's time on and waiting for a core, where the
/// kernel says.
fn core_times(slots: &[&'static Slot]) -> Vec<Option<CoreTime>> {
    slots
        .iter()
        .map(|s| s.os_thread.and_then(cores::of_thread))
        .collect()
}

fn g_now() -> u64 {
    GLOBALS.g.0.load(Ordering::Acquire)
}

/// Sleeps until `deadline` (in [`now_ns`] time), in steps short enough to
/// notice `interrupted()` within 20 ms; false when it cut the sleep short.
fn sleep_until(deadline: u64, interrupted: &dyn Fn() -> bool) -> bool {
    const STEP: u64 = 20_000_000;
    loop {
        if interrupted() {
            return false;
        }
        let now = now_ns();
        if now >= deadline {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((deadline - now).min(STEP)));
    }
}

/// Runs one cell.
pub fn run_cell(
    session: &Session,
    spec: CellSpec,
    points: Points,
    window: Duration,
    timing: &Timing,
) -> Cell {
    run_cell_until(session, spec, points, window, timing, &|| false)
}

/// Runs one cell, cutting its waits short once `interrupted()` is true (the
/// cell is still drained and closed; its numbers are then not a window's).
fn run_cell_until(
    session: &Session,
    spec: CellSpec,
    points: Points,
    window: Duration,
    timing: &Timing,
    interrupted: &dyn Fn() -> bool,
) -> Cell {
    GLOBALS.publish(now_ns(), spec.site, spec.pct, Phase::Active);
    crate::causal::clear_connection_stamps();
    sleep_until(now_ns() + timing.settle.as_nanos() as u64, interrupted);

    let progress = points.progress;
    let slots = session.slots();
    let s0 = snapshot_all(&slots);
    let c0 = core_times(&slots);
    let g0 = g_now();
    let p0 = progress.count();
    let l0 = points.latency.map(Latency::mark);
    let t0 = now_ns();

    let window_ns = window.as_nanos() as u64;
    let max_ns = timing.max_window.as_nanos().max(window.as_nanos()) as u64;
    let mut deadline = t0 + window_ns;
    let mut whole = sleep_until(deadline, interrupted);
    while whole
        && progress.count() - p0 < timing.min_delta
        && deadline + window_ns / 2 <= t0 + max_ns
    {
        deadline += window_ns / 2;
        whole = sleep_until(deadline, interrupted);
    }

    let t1 = now_ns();
    let g1 = g_now();
    let p1 = progress.count();
    let l1 = points.latency.map(Latency::mark);
    let s1 = snapshot_all(&slots);
    let c1 = core_times(&slots);

    GLOBALS.set_phase(Phase::Drain);
    std::thread::sleep(timing.drain);
    let s2 = snapshot_all(&slots);
    let g2 = g_now();
    GLOBALS.set_phase(Phase::Idle);
    std::thread::sleep(timing.cooldown);

    let g = GlobalDelay {
        g0,
        g1,
        g_drained: g2,
    };
    let elapsed_ns = t1 - t0;
    let delay_ns = g1.saturating_sub(g0);
    let duration_ns = (i128::from(elapsed_ns) - i128::from(delay_ns)) as i64;
    let rows: Vec<Row> = slots
        .iter()
        .zip(s0.iter().zip(s1.iter().zip(&s2)))
        .zip(c0.iter().zip(&c1))
        .map(|((slot, (t0, (t1, drained))), (c0, c1))| {
            let row = Row::new(
                &slot.name,
                &Snapshots {
                    t0: *t0,
                    t1: *t1,
                    drained: *drained,
                },
                g,
            );
            match (c0, c1) {
                (Some(a), Some(b)) => row.with_core_time(a.until(*b)),
                _ => row,
            }
        })
        .collect();
    let sum = |f: Field| -> u64 {
        s0.iter()
            .zip(&s1)
            .map(|(a, b)| b.get(f).wrapping_sub(a.get(f)))
            .sum()
    };
    let findings = ledger::audit(&rows, g, elapsed_ns);
    let delta = p1 - p0;
    let reason = if delta < timing.min_delta {
        Some(format!(
            "only {delta} progress counts (need {})",
            timing.min_delta
        ))
    } else if duration_ns * 4 <= elapsed_ns as i64 {
        Some("delay took over 75% of the window".to_string())
    } else if findings.iter().any(Finding::is_error) {
        Some("ledger error".to_string())
    } else {
        None
    };
    Cell {
        round: spec.round,
        site: spec.site,
        speedup_pct: spec.pct,
        elapsed_ns,
        delay_ns,
        duration_ns,
        delta,
        visits: sum(Field::Visits),
        visit_ns: sum(Field::VisitNs),
        receives: sum(Field::Receives),
        fallbacks: sum(Field::Fallbacks),
        latency: points.latency.zip(l0.zip(l1)).map(|(point, (a, b))| {
            LatencyCell::new(point.name, Window::between(&a, &b), duration_ns)
        }),
        reliable: reason.is_none(),
        reason,
        findings,
        ledger: rows,
    }
}

/// Runs every cell of `plan`; `on_cell(cell, done, total)` reports progress.
/// Stops early once `interrupted()` is true, with the cells completed so far
/// (the cell in progress is dropped).
pub(crate) fn sweep(
    session: &Session,
    plan: &Plan,
    points: Points,
    window: Duration,
    timing: &Timing,
    on_cell: &mut dyn FnMut(&Cell, usize, usize),
    interrupted: &dyn Fn() -> bool,
) -> Vec<Cell> {
    let schedule = plan.schedule();
    let total = schedule.len();
    let mut cells = Vec::with_capacity(total);
    for (i, spec) in schedule.into_iter().enumerate() {
        if interrupted() {
            break;
        }
        let cell = run_cell_until(session, spec, points, window, timing, interrupted);
        if interrupted() {
            break;
        }
        on_cell(&cell, i + 1, total);
        cells.push(cell);
    }
    cells
}

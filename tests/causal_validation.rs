//! Ground truth for the causal profiler: synthetic pipelines built from
//! the real actor module and engine, whose site work can really be reduced,
//! so that a prediction (virtual speedup) can be compared with the effect of
//! actually doing less work.
//!
//! Work is `spin(units)`, an iteration-count loop calibrated so one unit is
//! about 1 µs: reducing the count is a true speedup, unlike shortening a
//! sleep or a deadline. Each site's work is an atomic knob.
//!
//! - *predicted* = rate with the site selected at p% / rate at 0% − 1;
//! - *actual* = rate with the knob at (1 − p)·work / rate at full work − 1,
//!   both measured as 0% cells of the same site, so both carry the same
//!   instrumentation overhead.
//!
//! V8 compares mean latencies (a latency point) the same way.
//!
//! Cells of a scenario are interleaved at random within each round; the
//! checks compare medians over rounds, so a slow or noisy machine moves both
//! sides. A scenario that fails reruns with 10 rounds, then 20, and fails
//! only if all three runs fail. These tests take about a minute in release mode
//! and are `#[ignore]`d; CI runs them in their own step:
//! `cargo test --release --test main causal_validation -- --ignored --test-threads=1`.

use ccc::causal::{self, Latency, LatencyGuard, Progress, Site};
use ccc::testing::SplitMix64;
use ccc::testing::actor::{self, Actor, Handle, Reply};
use ccc::testing::causal::{
    Cell, CellSpec, ExternalWake, GLOBALS, IdleCores, Points, Session, SiteClock, Timing, run_cell,
};
use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The engine is process-wide: one scenario at a time.
static LOCK: Mutex<()> = Mutex::new(());

static LONG: Site = Site::new(0, "long");
static SHORT: Site = Site::new(1, "short");
static A: Site = Site::new(2, "a");
static B: Site = Site::new(3, "b");
static X: Site = Site::new(4, "x");
static BLOCKING: Site = Site::new(5, "blocking");
static DONE: Progress = Progress::new("done");
static HANDLE: Site = Site::new(6, "handle");
static REQUESTS: Latency = Latency::new("requests");

fn iterations_per_us() -> u64 {
    static CALIBRATED: OnceLock<u64> = OnceLock::new();
    *CALIBRATED.get_or_init(|| {
        let n = 2_000_000u64;
        let mut rates: Vec<u64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                spin_iterations(n);
                n * 1000 / (t.elapsed().as_nanos() as u64).max(1)
            })
            .collect();
        rates.sort_unstable();
        rates[2].max(1)
    })
}

fn spin_iterations(n: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    black_box(x);
}

/// About `units` microseconds of CPU work.
fn spin(units: u32) {
    spin_iterations(u64::from(units) * iterations_per_us());
}

/// Arms a session as `ccc causal` does by default; with
/// `CCC_VALIDATION_IDLE_CORES=sleep` idle cores are left to sleep, which
/// shows what keeping them awake is worth (bench/CAUSAL.md section 5a).
fn session(mode: ExternalWake, site_clock: SiteClock) -> Session {
    let idle_cores = match std::env::var("CCC_VALIDATION_IDLE_CORES").as_deref() {
        Ok("sleep") => IdleCores::Sleep,
        _ => IdleCores::Spin,
    };
    Session::arm(mode, site_clock, idle_cores)
}

fn timing() -> Timing {
    Timing {
        warmup: Duration::from_millis(300),
        window: Duration::from_millis(300),
        max_window: Duration::from_millis(600),
        settle: Duration::from_millis(50),
        min_delta: 200,
        ..Timing::default()
    }
}

// ---------------------------------------------------------------- actors

/// Runs a site's knob worth of work per message.
struct Stage {
    parts: Vec<(Option<&'static Site>, Arc<AtomicU32>)>,
}

enum Go {
    Go(Reply<()>),
}

impl Actor for Stage {
    type Msg = Go;
    fn handle(&mut self, Go::Go(reply): Go) {
        for (site, knob) in &self.parts {
            let units = knob.load(Ordering::Relaxed);
            match site {
                Some(site) => {
                    let _s = causal::site!(*site);
                    spin(units);
                }
                None => spin(units),
            }
        }
        reply.send(());
    }
}

fn stage(
    name: &'static str,
    parts: Vec<(Option<&'static Site>, Arc<AtomicU32>)>,
) -> actor::Running<Go> {
    actor::spawn::<_, actor::StartError>(name, 64, move || Ok(Stage { parts })).expect("stage")
}

/// Fork-join: sends to both stages, waits for both.
struct ForkJoin {
    left: Handle<Go>,
    right: Handle<Go>,
}

impl Actor for ForkJoin {
    type Msg = Go;
    fn handle(&mut self, Go::Go(reply): Go) {
        let l = self.left.ask(Go::Go).expect("left");
        let r = self.right.ask(Go::Go).expect("right");
        l.wait().expect("left reply");
        r.wait().expect("right reply");
        reply.send(());
    }
}

fn knob(units: u32) -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(units))
}

/// Closed-loop driver threads (registered): `pre` units of unsited work,
/// then a call, then one unit of progress.
fn drivers(
    n: usize,
    pre: u32,
    target: &Handle<Go>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..n)
        .map(|i| {
            let target = target.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(format!("driver-{i}"))
                .spawn(move || {
                    causal::register_thread(&format!("driver-{i}"));
                    while !stop.load(Ordering::Relaxed) {
                        causal::check();
                        spin(pre);
                        if target.call(Go::Go).is_err() {
                            return;
                        }
                        causal::progress!(&DONE);
                    }
                })
                .expect("driver")
        })
        .collect()
}

// ------------------------------------------------------------ measuring

/// One kind of cell in a scenario: which site is selected at which speedup,
/// and the knob settings while it runs.
#[derive(Clone)]
struct Kind {
    label: &'static str,
    site: &'static Site,
    pct: u8,
    knobs: Vec<(Arc<AtomicU32>, u32)>,
}

/// The cells a check compares: `site` at 0% and at 50% with its full work,
/// and at 0% with `knob` set to half of `full` (the real speedup). Results
/// come back in this order: 0%, 50%, halved.
fn trio(site: &'static Site, knob: &Arc<AtomicU32>, full: u32) -> Vec<Kind> {
    let kind = |label, pct, knobs| Kind {
        label,
        site,
        pct,
        knobs,
    };
    vec![
        kind("0%", 0, vec![]),
        kind("50%", 50, vec![]),
        kind("halved", 0, vec![(knob.clone(), full / 2)]),
    ]
}

/// Runs `rounds` rounds of every kind, shuffled per round; returns each
/// kind's rates by round.
fn measure(session: &Session, kinds: &[Kind], rounds: usize, seed: u64) -> Vec<Vec<f64>> {
    let cells = measure_cells(session, (&DONE).into(), kinds, rounds, seed);
    for (kind, cells) in kinds.iter().zip(&cells) {
        show_timing(kind, cells);
    }
    cells
        .iter()
        .map(|cells| cells.iter().map(Cell::rate).collect())
        .collect()
}

/// Where a kind's time went, as medians over its cells: the selected
/// site's visit, the real time per unit of progress, and the registered
/// threads' time on a core and waiting for one per unit of progress (what
/// tells a slower cycle from pauses apart from one from a busy machine).
fn show_timing(kind: &Kind, cells: &[Cell]) {
    let per = |f: &dyn Fn(&Cell) -> f64| median(cells.iter().map(f).collect());
    let per_progress = |ns: u64, c: &Cell| ns as f64 / c.delta.max(1) as f64 / 1000.0;
    eprintln!(
        "  {:<6} {:<7} visit {:.1} us; per unit of progress: {:.1} us real, {:.1} us on a core, {:.1} us waiting for one",
        kind.site.name,
        kind.label,
        per(&|c| c.visit_ns as f64 / c.visits.max(1) as f64 / 1000.0),
        per(&|c| per_progress(c.elapsed_ns, c)),
        per(&|c| per_progress(c.ledger.iter().map(|r| r.on_core).sum(), c)),
        per(&|c| per_progress(c.ledger.iter().map(|r| r.waiting_for_core).sum(), c)),
    );
}

/// Runs `rounds` rounds of every kind measured by `points`, shuffled per
/// round; returns each kind's cells by round.
fn measure_cells(
    session: &Session,
    points: Points,
    kinds: &[Kind],
    rounds: usize,
    seed: u64,
) -> Vec<Vec<Cell>> {
    let timing = timing();
    let mut rng = SplitMix64::new(seed);
    let mut cells = vec![Vec::new(); kinds.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..kinds.len()).collect();
        rng.shuffle(&mut order);
        for k in order {
            let kind = &kinds[k];
            let saved: Vec<u32> = kind
                .knobs
                .iter()
                .map(|(knob, _)| knob.load(Ordering::Relaxed))
                .collect();
            for (knob, value) in &kind.knobs {
                knob.store(*value, Ordering::Relaxed);
            }
            let spec = CellSpec {
                round,
                site: kind.site.id,
                pct: kind.pct,
            };
            let cell = run_cell(session, spec, points, timing.window, &timing);
            for ((knob, _), old) in kind.knobs.iter().zip(saved) {
                knob.store(old, Ordering::Relaxed);
            }
            if std::env::var_os("CCC_VALIDATION_LEDGER").is_some() && round == 0 {
                eprintln!(
                    "  ledger of {} {} (ΔG {} us, elapsed {} ms):",
                    kind.site.name,
                    kind.label,
                    cell.delay_ns / 1000,
                    cell.elapsed_ns / 1_000_000
                );
                for r in &cell.ledger {
                    eprintln!(
                        "    {:<16} credited {:>7} paid {:>7} absorbed {:>7} inherited {:>7} blocked {:>7} overshoot {:>7} (us)",
                        r.thread,
                        r.credited / 1000,
                        r.paid / 1000,
                        r.absorbed / 1000,
                        r.inherited / 1000,
                        r.blocked / 1000,
                        r.overshoot / 1000
                    );
                }
            }
            let errors: Vec<_> = cell.findings.iter().filter(|f| f.is_error()).collect();
            assert!(
                errors.is_empty(),
                "ledger errors in {}: {errors:?}",
                kind.label
            );
            cells[k].push(cell);
        }
    }
    cells
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median over rounds of `treated / base − 1`, paired by round.
fn change(treated: &[f64], base: &[f64]) -> f64 {
    median(treated.iter().zip(base).map(|(t, b)| t / b - 1.0).collect())
}

fn show(label: &str, kinds: &[Kind], rates: &[Vec<f64>]) {
    eprintln!("{label}:");
    for (kind, r) in kinds.iter().zip(rates) {
        let shown: Vec<String> = r.iter().map(|x| format!("{x:.0}")).collect();
        eprintln!(
            "  {:<6} {:<7} {}",
            kind.site.name,
            kind.label,
            shown.join(" ")
        );
    }
}

/// Runs a scenario's check with 5 rounds; on failure again with 10, then
/// 20: a shared machine's noise fades with more rounds, a wrong prediction
/// does not. Fails when all three fail.
fn with_retry(name: &str, mut attempt: impl FnMut(usize) -> Result<(), String>) {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut failures = Vec::new();
    for rounds in [5, 10, 20] {
        match attempt(rounds) {
            Ok(()) => return,
            Err(why) => {
                eprintln!("{name}: the run with {rounds} rounds failed ({why})");
                failures.push(format!("{rounds} rounds: {why}"));
            }
        }
    }
    panic!("{name} failed three times:\n  {}", failures.join("\n  "));
}

fn within(pred: f64, act: f64, rel: f64, abs_pp: f64) -> bool {
    (pred - act).abs() <= rel * act.abs() + abs_pp / 100.0
}

// ------------------------------------------------------------ scenarios

struct V1 {
    session: Session,
    long: Arc<AtomicU32>,
    short: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    drivers: Vec<std::thread::JoinHandle<()>>,
    actors: Vec<actor::Running<Go>>,
}

const LONG_US: u32 = 300;
const SHORT_US: u32 = 100;

fn v1(no_absorb: bool) -> V1 {
    let session = session(ExternalWake::Conn, SiteClock::Wall);
    GLOBALS.no_absorb.store(no_absorb, Ordering::Relaxed);
    let long = knob(LONG_US);
    let short = knob(SHORT_US);
    let a = stage("stage-long", vec![(Some(&LONG), long.clone())]);
    let b = stage("stage-short", vec![(Some(&SHORT), short.clone())]);
    let (left, right) = (a.handle.clone(), b.handle.clone());
    let join =
        actor::spawn::<_, actor::StartError>("fork-join", 64, move || Ok(ForkJoin { left, right }))
            .expect("join");
    let stop = Arc::new(AtomicBool::new(false));
    let drivers = drivers(1, 0, &join.handle, &stop);
    std::thread::sleep(timing().warmup);
    V1 {
        session,
        long,
        short,
        stop,
        drivers,
        actors: vec![join, a, b],
    }
}

impl Drop for V1 {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for d in self.drivers.drain(..) {
            let _ = d.join();
        }
        for a in self.actors.drain(..) {
            a.join();
        }
        GLOBALS.no_absorb.store(false, Ordering::Relaxed);
    }
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v1_fork_join_predicts_the_critical_path_and_nothing_off_it() {
    with_retry("V1", |rounds| {
        let p = v1(false);
        let mut kinds = trio(&LONG, &p.long, LONG_US);
        kinds.extend(trio(&SHORT, &p.short, SHORT_US));
        let r = measure(&p.session, &kinds, rounds, 11);
        show("V1", &kinds, &r);
        let (pred_long, act_long) = (change(&r[1], &r[0]), change(&r[2], &r[0]));
        let (pred_short, act_short) = (change(&r[4], &r[3]), change(&r[5], &r[3]));
        eprintln!(
            "V1: long pred {:+.1}% act {:+.1}%; short pred {:+.1}% act {:+.1}%",
            pred_long * 100.0,
            act_long * 100.0,
            pred_short * 100.0,
            act_short * 100.0
        );
        if !within(pred_long, act_long, 0.25, 3.0) {
            return Err(format!(
                "long@50%: predicted {pred_long:+.3}, actual {act_long:+.3}"
            ));
        }
        if pred_short.abs() > 0.05 || act_short.abs() > 0.05 {
            return Err(format!(
                "short@50%: predicted {pred_short:+.3}, actual {act_short:+.3}, both should be ~0"
            ));
        }
        Ok(())
    });
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v3_without_the_receive_rule_v1_fails() {
    // The control: with absorption switched off, each hop of the chain
    // re-pays the delay, and the prediction collapses.
    with_retry("V3", |rounds| {
        let p = v1(true);
        let kinds = trio(&LONG, &p.long, LONG_US);
        let r = measure(&p.session, &kinds, rounds, 13);
        show("V3", &kinds, &r);
        let (pred, act) = (change(&r[1], &r[0]), change(&r[2], &r[0]));
        eprintln!(
            "V3 (no absorb): long pred {:+.1}% act {:+.1}%",
            pred * 100.0,
            act * 100.0
        );
        if pred >= 0.5 * act {
            return Err(format!(
                "without the receive rule the prediction should fail, got {pred:+.3} vs {act:+.3}"
            ));
        }
        Ok(())
    });
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v2_serial_bottleneck_is_linear_in_cozs_metric() {
    const A_US: u32 = 120;
    with_retry("V2", |rounds| {
        let session = session(ExternalWake::Conn, SiteClock::Wall);
        let a = knob(A_US);
        let server = stage(
            "serial",
            vec![
                (Some(&A), a.clone()),
                (Some(&B), knob(40)),
                (None, knob(20)),
            ],
        );
        let stop = Arc::new(AtomicBool::new(false));
        let ds = drivers(3, 30, &server.handle, &stop);
        std::thread::sleep(timing().warmup);
        // 0%, 50%, halved, and 25% for Coz's linearity check.
        let mut kinds = trio(&A, &a, A_US);
        kinds.push(Kind {
            label: "25%",
            site: &A,
            pct: 25,
            knobs: vec![],
        });
        let r = measure(&session, &kinds, rounds, 17);
        stop.store(true, Ordering::Relaxed);
        for d in ds {
            let _ = d.join();
        }
        server.join();
        drop(session);
        show("V2", &kinds, &r);
        let (pred50, act50, pred25) = (
            change(&r[1], &r[0]),
            change(&r[2], &r[0]),
            change(&r[3], &r[0]),
        );
        // Coz's metric: 1 − (D_p/δ_p)/(D_0/δ_0) = 1 − 1/(1 + change).
        let coz = |c: f64| 1.0 - 1.0 / (1.0 + c);
        let ratio = coz(pred50) / coz(pred25);
        eprintln!(
            "V2: a pred {:+.1}% act {:+.1}%; coz(0.5)/coz(0.25) = {ratio:.2}",
            pred50 * 100.0,
            act50 * 100.0
        );
        if !within(pred50, act50, 0.25, 3.0) {
            return Err(format!("a@50%: predicted {pred50:+.3}, actual {act50:+.3}"));
        }
        if !(1.5..=2.5).contains(&ratio) {
            return Err(format!(
                "coz(0.5)/coz(0.25) = {ratio:.2}, expected 1.5..2.5 on the sole serial path"
            ));
        }
        Ok(())
    });
}

/// V4-V6: unregistered clients with a fixed think time, one registered
/// worker per client relaying to a serial actor; the workers use the
/// per-connection memo exactly as `ccc serve`'s workers do. What varies is
/// where the measured sites run.
enum Placement {
    /// In the serial actor, beside 20 µs of unsited work (V4).
    Actor(&'static Site, u32),
    /// In each worker, one after the other, the last one around writing
    /// the response, as `http-respond` is in `ccc serve` (V5, V6); the
    /// actor does 20 µs of unsited work.
    Worker(Vec<(&'static Site, u32)>),
}

/// Runs a relay and returns `(predicted, actual)` at 50% for each measured
/// site, in the order given.
fn relay(
    mode: ExternalWake,
    placement: Placement,
    think: Duration,
    rounds: usize,
    seed: u64,
) -> Vec<(f64, f64)> {
    let session = session(mode, SiteClock::Wall);
    let (server, worker_sites, measured) = match placement {
        Placement::Actor(site, units) => {
            let x = knob(units);
            let server = stage(
                "relay-actor",
                vec![(Some(site), x.clone()), (None, knob(20))],
            );
            (server, Vec::new(), vec![(site, x, units)])
        }
        Placement::Worker(sites) => {
            let server = stage("relay-actor", vec![(None, knob(20))]);
            let with_knobs: Vec<_> = sites
                .iter()
                .map(|&(site, units)| (site, knob(units), units))
                .collect();
            let in_workers = with_knobs
                .iter()
                .map(|(site, k, _)| (*site, k.clone()))
                .collect();
            (server, in_workers, with_knobs)
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for i in 0..2u16 {
        let (to_worker, from_client) = mpsc::sync_channel::<mpsc::SyncSender<()>>(1);
        let peer: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 40_000 + i));
        let actor = server.handle.clone();
        let stop_w = stop.clone();
        let sites: Vec<(&'static Site, Arc<AtomicU32>)> = worker_sites.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("relay-worker-{i}"))
                .spawn(move || {
                    causal::register_thread(&format!("relay-worker-{i}"));
                    while !stop_w.load(Ordering::Relaxed) {
                        causal::check();
                        let request = match from_client.try_recv() {
                            Ok(r) => Some(r),
                            Err(_) => {
                                causal::idle_begin();
                                from_client.recv_timeout(Duration::from_millis(20)).ok()
                            }
                        };
                        let Some(respond_to) = request else { continue };
                        causal::receive_external(Some(&peer));
                        if actor.call(Go::Go).is_err() {
                            return;
                        }
                        causal::before_respond();
                        respond(&sites, &respond_to);
                        causal::after_respond(Some(&peer));
                        causal::progress!(&DONE);
                    }
                })
                .expect("worker"),
        );
        let stop_c = stop.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("client-{i}"))
                .spawn(move || {
                    // An environment thread: never registered, never delayed.
                    while !stop_c.load(Ordering::Relaxed) {
                        let (tx, rx) = mpsc::sync_channel(1);
                        if to_worker.send(tx).is_err() || rx.recv().is_err() {
                            return;
                        }
                        std::thread::sleep(think);
                    }
                })
                .expect("client"),
        );
    }
    std::thread::sleep(timing().warmup);
    let kinds: Vec<Kind> = measured
        .iter()
        .flat_map(|(site, k, units)| trio(site, k, *units))
        .collect();
    let r = measure(&session, &kinds, rounds, seed);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    server.join();
    drop(session);
    let label = if worker_sites.is_empty() {
        "V4"
    } else {
        "V5/V6"
    };
    show(&format!("{label} {mode:?}"), &kinds, &r);
    r.chunks(3)
        .map(|c| (change(&c[1], &c[0]), change(&c[2], &c[0])))
        .collect()
}

/// A worker's part of a response: each site's work in turn, the last site
/// around sending the response.
fn respond(sites: &[(&'static Site, Arc<AtomicU32>)], respond_to: &mpsc::SyncSender<()>) {
    let Some(((last, last_knob), before)) = sites.split_last() else {
        let _ = respond_to.send(());
        return;
    };
    for (site, k) in before {
        let _s = causal::site!(*site);
        spin(k.load(Ordering::Relaxed));
    }
    let _s = causal::site!(*last);
    spin(last_knob.load(Ordering::Relaxed));
    let _ = respond_to.send(());
}

fn v4(mode: ExternalWake, rounds: usize, seed: u64) -> (f64, f64) {
    relay(
        mode,
        Placement::Actor(&X, 100),
        Duration::from_micros(200),
        rounds,
        seed,
    )[0]
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v4_external_relay_with_the_connection_memo() {
    // Measured on the 2-core machine CI runs on (bench/CAUSAL.md): the memo
    // over-predicts this relay by 2-9 pp (actual +13..+17%), so the bound
    // is wider than V1's: 0.4·actual + 6 pp. The `skip` mode is measured
    // and printed for comparison but not asserted: here it lands near the
    // actual gain, not above it as the design expected (see CAUSAL.md).
    with_retry("V4", |rounds| {
        let (pred, act) = v4(ExternalWake::Conn, rounds, 19);
        eprintln!(
            "V4 conn: x pred {:+.1}% act {:+.1}%",
            pred * 100.0,
            act * 100.0
        );
        let (pred_skip, act_skip) = v4(ExternalWake::Skip, rounds, 23);
        eprintln!(
            "V4 skip: x pred {:+.1}% act {:+.1}%",
            pred_skip * 100.0,
            act_skip * 100.0
        );
        if !within(pred, act, 0.4, 6.0) {
            return Err(format!(
                "x@50% with conn: predicted {pred:+.3}, actual {act:+.3}"
            ));
        }
        if act <= 0.05 {
            return Err(format!("halving x should gain clearly, measured {act:+.3}"));
        }
        Ok(())
    });
}

/// The think time of V5's clients, and the longer one of V5b, with which
/// the clients do not always wait on the workers.
const V5_THINK: Duration = Duration::from_micros(200);
const V5B_THINK: Duration = Duration::from_micros(1000);

fn v5(think: Duration, name: &str, rounds: usize, seed: u64) -> Result<(), String> {
    let (pred, act) = relay(
        ExternalWake::Conn,
        Placement::Worker(vec![(&X, 200)]),
        think,
        rounds,
        seed,
    )[0];
    eprintln!(
        "{name} conn: x pred {:+.1}% act {:+.1}%",
        pred * 100.0,
        act * 100.0
    );
    if !within(pred, act, 0.25, 3.0) {
        return Err(format!(
            "worker site @50%: predicted {pred:+.3}, actual {act:+.3}"
        ));
    }
    if act <= 0.04 {
        return Err(format!(
            "halving the worker site should gain clearly, measured {act:+.3}"
        ));
    }
    Ok(())
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v5_a_site_in_the_workers_around_the_response() {
    // The shape of `http-respond` in `ccc serve`: the site runs in the two
    // workers that write responses, not in the shared actor; speeding it up
    // shortens each client's cycle directly. Held to V1's bound. The
    // clients think 200 µs between requests (real gain about +22%). With
    // idle cores left to sleep this is predicted at +6..+11% on the 2-vCPU
    // guest CI runs on (bench/CAUSAL.md section 5a).
    with_retry("V5", |rounds| v5(V5_THINK, "V5", rounds, 29));
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v5b_a_site_in_the_workers_with_clients_thinking_longer() {
    // V5 with clients that think 1 ms (real gain about +8%): the workers
    // are idle more of the time, and a prediction must not overshoot there.
    with_retry("V5b", |rounds| v5(V5B_THINK, "V5b", rounds, 29));
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v6_parallel_worker_sites_are_ranked_by_their_real_gain() {
    // Three sites of different cost in each worker, one after the other:
    // the profile must rank them as halving them really ranks them, and
    // must never predict a loss for a site whose speedup helps.
    const NOISE: f64 = 0.03;
    with_retry("V6", |rounds| {
        let sites = vec![(&A, 40), (&B, 100), (&X, 160)];
        let results = relay(
            ExternalWake::Conn,
            Placement::Worker(sites.clone()),
            V5_THINK,
            rounds,
            31,
        );
        for ((site, units), (pred, act)) in sites.iter().zip(&results) {
            eprintln!(
                "V6: {} ({units} us) pred {:+.1}% act {:+.1}%",
                site.name,
                pred * 100.0,
                act * 100.0
            );
        }
        for ((site, _), (pred, act)) in sites.iter().zip(&results) {
            if *act > NOISE && *pred < -NOISE {
                return Err(format!(
                    "{}: a loss predicted ({pred:+.3}) for a real gain ({act:+.3})",
                    site.name
                ));
            }
        }
        // Larger real gain, larger prediction: every pair whose actual
        // gains differ by more than the noise must be ordered the same way.
        for (i, (si, (pi, ai))) in sites.iter().zip(&results).enumerate() {
            for (sj, (pj, aj)) in sites.iter().zip(&results).skip(i + 1) {
                if (ai - aj).abs() > 2.0 * NOISE && (ai > aj) != (pi > pj) {
                    return Err(format!(
                        "{} (pred {pi:+.3}, act {ai:+.3}) and {} (pred {pj:+.3}, act {aj:+.3}) are ranked apart from their real gains",
                        si.0.name, sj.0.name
                    ));
                }
            }
        }
        Ok(())
    });
}

/// V7: a serial actor whose site computes, then blocks (a sleep standing
/// for a read the optimization would not shorten). Only the computing part
/// can really be halved; `--site-clock cpu` must predict that, and the
/// wall clock, which times the block as site work, must not.
fn blocking_site(site_clock: SiteClock, rounds: usize, seed: u64) -> (f64, f64) {
    const SPIN_US: u32 = 160;
    let session = session(ExternalWake::Conn, site_clock);
    let spin_knob = knob(SPIN_US);
    let server = actor::spawn::<_, actor::StartError>("blocking-actor", 64, {
        let spin_knob = spin_knob.clone();
        move || Ok(Blocking { spin: spin_knob })
    })
    .expect("actor");
    let stop = Arc::new(AtomicBool::new(false));
    let ds = drivers(3, 30, &server.handle, &stop);
    std::thread::sleep(timing().warmup);
    let kinds = trio(&BLOCKING, &spin_knob, SPIN_US);
    let r = measure(&session, &kinds, rounds, seed);
    stop.store(true, Ordering::Relaxed);
    for d in ds {
        let _ = d.join();
    }
    server.join();
    drop(session);
    show(&format!("V7 {site_clock:?}"), &kinds, &r);
    (change(&r[1], &r[0]), change(&r[2], &r[0]))
}

struct Blocking {
    spin: Arc<AtomicU32>,
}

impl Actor for Blocking {
    type Msg = Go;
    fn handle(&mut self, Go::Go(reply): Go) {
        {
            let _s = causal::site!(&BLOCKING);
            spin(self.spin.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_micros(150));
        }
        spin(20);
        reply.send(());
    }
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v7_the_cpu_site_clock_leaves_out_what_a_site_waits_for() {
    with_retry("V7", |rounds| {
        let (pred_cpu, act_cpu) = blocking_site(SiteClock::Cpu, rounds, 37);
        let (pred_wall, act_wall) = blocking_site(SiteClock::Wall, rounds, 41);
        eprintln!(
            "V7: cpu clock pred {:+.1}% act {:+.1}%; wall clock pred {:+.1}% act {:+.1}%",
            pred_cpu * 100.0,
            act_cpu * 100.0,
            pred_wall * 100.0,
            act_wall * 100.0
        );
        if !within(pred_cpu, act_cpu, 0.25, 3.0) {
            return Err(format!(
                "cpu clock: predicted {pred_cpu:+.3}, actual {act_cpu:+.3}"
            ));
        }
        // The control: the wall clock credits the sleep as if it too were
        // halved, and must over-predict well beyond V1's bound.
        if within(pred_wall, act_wall, 0.25, 3.0) || pred_wall < act_wall {
            return Err(format!(
                "wall clock should over-predict a blocking site: predicted {pred_wall:+.3}, actual {act_wall:+.3}"
            ));
        }
        Ok(())
    });
}

/// V8: open-loop arrivals below saturation. A registered driver sends a
/// request to a serial actor, then sleeps an exponentially distributed gap
/// (a relative sleep, so a pause of the driver shifts its schedule and the
/// arrival rate in the virtual program stays the nominal one) and never
/// waits for replies. The actor runs the site `handle` (100 µs) and 20 µs
/// more; each request is a latency point from its send to the end of its
/// handling. Throughput is pinned to the arrival rate, so the site looks
/// useless for it; its speedup shortens service and queueing, so the mean
/// latency changes a lot.
struct Served {
    handle: Arc<AtomicU32>,
}

enum Request {
    Handle(LatencyGuard, Reply<()>),
}

impl Actor for Served {
    type Msg = Request;
    fn handle(&mut self, Request::Handle(in_flight, reply): Request) {
        {
            let _s = causal::site!(&HANDLE);
            spin(self.handle.load(Ordering::Relaxed));
        }
        spin(20);
        causal::progress!(&DONE);
        in_flight.end();
        reply.send(());
    }
}

/// `(predicted, actual)` changes of the mean latency and of the rate at
/// 50%.
fn open_loop(rounds: usize, seed: u64) -> ((f64, f64), (f64, f64)) {
    const HANDLE_US: u32 = 100;
    const MEAN_GAP_US: f64 = 220.0;
    let session = session(ExternalWake::Conn, SiteClock::Wall);
    let handle = knob(HANDLE_US);
    let server = actor::spawn::<_, actor::StartError>("served", 4096, {
        let handle = handle.clone();
        move || Ok(Served { handle })
    })
    .expect("actor");
    let stop = Arc::new(AtomicBool::new(false));
    let driver = {
        let to = server.handle.clone();
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("open-loop".into())
            .spawn(move || {
                causal::register_thread("open-loop");
                let mut rng = SplitMix64::new(seed);
                while !stop.load(Ordering::Relaxed) {
                    causal::check();
                    let in_flight = causal::latency!(&REQUESTS);
                    if to.ask(|reply| Request::Handle(in_flight, reply)).is_err() {
                        return;
                    }
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let gap = -(1.0 - u).ln() * MEAN_GAP_US;
                    std::thread::sleep(Duration::from_secs_f64(gap / 1e6));
                }
            })
            .expect("driver")
    };
    std::thread::sleep(timing().warmup);
    let kinds = trio(&HANDLE, &handle, HANDLE_US);
    let points = Points {
        progress: &DONE,
        latency: Some(&REQUESTS),
    };
    let cells = measure_cells(&session, points, &kinds, rounds, seed);
    stop.store(true, Ordering::Relaxed);
    let _ = driver.join();
    server.join();
    drop(session);
    let latency = |c: &Cell| c.latency_ns().unwrap_or(f64::NAN);
    let by = |f: &dyn Fn(&Cell) -> f64| -> Vec<Vec<f64>> {
        cells.iter().map(|k| k.iter().map(f).collect()).collect()
    };
    let (w, r) = (by(&latency), by(&Cell::rate));
    show("V8 mean latency (ns)", &kinds, &w);
    show("V8 rate", &kinds, &r);
    (
        (change(&w[1], &w[0]), change(&w[2], &w[0])),
        (change(&r[1], &r[0]), change(&r[2], &r[0])),
    )
}

#[test]
#[ignore = "timing: run in release with --ignored --test-threads=1"]
fn v8_latency_under_open_loop_load_where_throughput_sees_nothing() {
    with_retry("V8", |rounds| {
        let ((pred, act), (pred_rate, act_rate)) = open_loop(rounds, 43);
        eprintln!(
            "V8: mean latency pred {:+.1}% act {:+.1}%; rate pred {:+.1}% act {:+.1}%",
            pred * 100.0,
            act * 100.0,
            pred_rate * 100.0,
            act_rate * 100.0
        );
        if !within(pred, act, 0.25, 3.0) {
            return Err(format!(
                "latency at handle@50%: predicted {pred:+.3}, actual {act:+.3}"
            ));
        }
        if act > -0.2 {
            return Err(format!(
                "halving handle should cut latency clearly, measured {act:+.3}"
            ));
        }
        if pred_rate.abs() > 0.05 || act_rate.abs() > 0.05 {
            return Err(format!(
                "open-loop throughput should not move: predicted {pred_rate:+.3}, actual {act_rate:+.3}"
            ));
        }
        Ok(())
    });
}

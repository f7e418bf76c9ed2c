//! The engine wired to the process: statics, thread-locals, the real
//! clock, and the hooks the rest of ccc calls.
//!
//! Every hook starts with one relaxed load of `ARMED` and a branch; the rest
//! is out of line and `#[cold]`, so a plain `ccc serve` pays that and nothing
//! more (`bench/CAUSAL.md` measures it).

use super::Site;
use super::engine::{Clock, Engine, Globals, SiteClock, Slot, Stamp, ThreadState};
use super::latency::{Mark, Tally};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// The process's engine state.
pub static GLOBALS: Globals = Globals::new();

/// Every registered thread's ledger, for the controller.
static REGISTRY: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// Stamp of the last response per client connection (see
/// [`receive_external`]); cleared at every epoch.
static CONN_STAMPS: LazyLock<Mutex<HashMap<SocketAddr, Stamp>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static PROCESS_EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

thread_local! {
    static STATE: ThreadState = const { ThreadState::new() };
}

/// Nanoseconds since the process started, on the monotonic clock.
pub fn now_ns() -> u64 {
    PROCESS_EPOCH.elapsed().as_nanos() as u64
}

/// The real clock: `Instant` and `thread::sleep`.
pub(crate) struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> u64 {
        now_ns()
    }
    fn sleep(&self, ns: u64) {
        std::thread::sleep(Duration::from_nanos(ns));
    }
    fn thread_cpu(&self) -> u64 {
        thread_cpu_ns()
    }
}

/// CPU time the calling thread has used, in ns (`--site-clock cpu`).
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to
    // a local; CLOCK_THREAD_CPUTIME_ID reads the calling thread's clock.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        // The clock exists on every Unix ccc supports; should it fail, the
        // visit times as zero work rather than as garbage.
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Without a thread CPU clock, CPU time is taken as elapsed time.
#[cfg(not(unix))]
pub(crate) fn thread_cpu_ns() -> u64 {
    now_ns()
}

fn engine() -> Engine<'static, RealClock> {
    Engine {
        globals: &GLOBALS,
        clock: &RealClock,
    }
}

/// Whether a profiling session is on.
#[inline(always)]
pub(crate) fn armed() -> bool {
    GLOBALS.armed.load(Ordering::Relaxed)
}

/// Runs `f` on this thread's state if it is registered.
#[inline]
fn with_registered<R>(f: impl FnOnce(&ThreadState) -> R) -> Option<R> {
    STATE
        .try_with(|t| t.registered().then(|| f(t)))
        .ok()
        .flatten()
}

/// A progress point: one count per unit of useful work.
pub struct Progress {
    pub name: &'static str,
    count: AtomicU64,
}

impl Progress {
    pub const fn new(name: &'static str) -> Progress {
        Progress {
            name,
            count: AtomicU64::new(0),
        }
    }

    /// Units counted while armed.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }
}

/// A latency point: requests begin and end there (Coz's begin/end
/// points), and the controller reads how many did and how long they were
/// in flight, in virtual time (see `causal::latency`).
pub struct Latency {
    pub name: &'static str,
    /// Written by any thread, so under a lock: a snapshot must see a
    /// count and its timestamp sum together. Taken only while armed.
    tally: Mutex<Tally>,
}

impl Latency {
    pub const fn new(name: &'static str) -> Latency {
        Latency {
            name,
            tally: Mutex::new(Tally {
                arrivals: 0,
                departures: 0,
                arrival_sum: 0,
                departure_sum: 0,
            }),
        }
    }

    fn record(&self, event: impl FnOnce(&mut Tally, u64)) {
        let at = with_registered(|t| engine().virtual_now(t))
            .unwrap_or_else(|| engine().global_virtual_now());
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        event(&mut tally, at);
    }

    /// The tally now, stamped with the controller's virtual time.
    pub(crate) fn mark(&self) -> Mark {
        let tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        Mark {
            tally: *tally,
            at: engine().global_virtual_now(),
        }
    }
}

/// Guard of a request at a latency point: the request ends when the
/// guard is dropped or [`LatencyGuard::end`]ed, on whichever thread that
/// happens (a guard may travel with the request). Only a begin that was
/// counted is ended, so a session that starts or stops mid-request leaves
/// no request counted in flight.
#[must_use = "a latency guard ends the request when it is dropped"]
pub struct LatencyGuard {
    point: Option<&'static Latency>,
}

impl LatencyGuard {
    /// Ends the request here.
    #[inline(always)]
    pub fn end(self) {}
}

impl Drop for LatencyGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(point) = self.point {
            latency_end_cold(point);
        }
    }
}

/// A request begins at `point` and ends when the guard goes; use through
/// `causal::latency!`.
#[inline(always)]
pub fn latency_guard(point: &'static Latency) -> LatencyGuard {
    if !armed() {
        return LatencyGuard { point: None };
    }
    latency_begin_cold(point);
    LatencyGuard { point: Some(point) }
}

/// A request begins at `point` (Coz's `COZ_BEGIN`); [`latency_end`] ends
/// it. Both count only while a session is armed: a request that straddles
/// the start or the end of a session is better held by a guard.
#[inline(always)]
pub fn latency_begin(point: &Latency) {
    if armed() {
        latency_begin_cold(point);
    }
}

/// A request ends at `point` (Coz's `COZ_END`).
#[inline(always)]
pub fn latency_end(point: &Latency) {
    if armed() {
        latency_end_cold(point);
    }
}

#[cold]
#[inline(never)]
fn latency_begin_cold(point: &Latency) {
    point.record(Tally::begin);
}

#[cold]
#[inline(never)]
fn latency_end_cold(point: &Latency) {
    point.record(Tally::end);
}

/// Guard of a site visit; credits the visit when dropped.
#[must_use = "a site guard times the region until it is dropped"]
pub struct SiteGuard {
    opened: bool,
}

impl Drop for SiteGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.opened {
            exit_cold();
        }
    }
}

/// Enters a site; use through `causal::site!`.
#[inline(always)]
pub fn enter(site: &Site) -> SiteGuard {
    if !armed() {
        return SiteGuard { opened: false };
    }
    enter_cold(site.id)
}

#[cold]
#[inline(never)]
fn enter_cold(id: u16) -> SiteGuard {
    let opened = with_registered(|t| engine().enter(t, id)).unwrap_or(false);
    SiteGuard { opened }
}

#[cold]
#[inline(never)]
fn exit_cold() {
    with_registered(|t| engine().exit(t));
}

/// Counts one unit of progress (after a strict check); use through
/// `causal::progress!`.
#[inline(always)]
pub fn progress(point: &Progress) {
    if armed() {
        progress_cold(point);
    }
}

#[cold]
#[inline(never)]
fn progress_cold(point: &Progress) {
    with_registered(|t| engine().send(t));
    point.count.fetch_add(1, Ordering::AcqRel);
}

/// An ordinary check point: the top of a worker's or an actor's loop.
#[inline(always)]
pub fn check() {
    if armed() {
        check_cold();
    }
}

#[cold]
#[inline(never)]
fn check_cold() {
    with_registered(|t| engine().ordinary(t));
}

/// Before sending a message to another registered thread: a strict check,
/// then the stamp the message carries.
#[inline(always)]
pub fn send() -> Stamp {
    if armed() {
        send_cold()
    } else {
        Stamp::default()
    }
}

#[cold]
#[inline(never)]
fn send_cold() -> Stamp {
    with_registered(|t| engine().send(t)).unwrap_or_default()
}

/// Before waiting on an empty queue.
#[inline(always)]
pub fn idle_begin() {
    if armed() {
        idle_begin_cold();
    }
}

#[cold]
#[inline(never)]
fn idle_begin_cold() {
    with_registered(|t| engine().idle_begin(t));
}

/// On receiving a message from a registered thread.
#[inline(always)]
pub fn receive(stamp: Stamp) {
    if armed() {
        receive_cold(stamp);
    }
}

#[cold]
#[inline(never)]
fn receive_cold(stamp: Stamp) {
    with_registered(|t| engine().receive(t, Some(stamp)));
}

/// An idle wait ended without a message, and the thread is about to do
/// work (housekeeping after a poll timeout).
#[inline(always)]
pub fn wake_without_message() {
    if armed() {
        wake_cold();
    }
}

#[cold]
#[inline(never)]
fn wake_cold() {
    with_registered(|t| engine().wake_without_message(t));
}

/// On receiving a request from an unregistered client: the receive rule
/// with the stamp of the last response on the same connection.
#[inline(always)]
pub fn receive_external(peer: Option<&SocketAddr>) {
    if armed() {
        receive_external_cold(peer.copied());
    }
}

#[cold]
#[inline(never)]
fn receive_external_cold(peer: Option<SocketAddr>) {
    let memo = peer.and_then(|p| {
        CONN_STAMPS
            .lock()
            .ok()
            .and_then(|stamps| stamps.get(&p).copied())
    });
    with_registered(|t| engine().receive_external(t, memo));
}

/// Just before a response is written to a client: a strict check, so
/// the client never sees a response earlier than the delays owed allow.
#[inline(always)]
pub fn before_respond() {
    if armed() {
        strict_cold();
    }
}

#[cold]
#[inline(never)]
fn strict_cold() {
    with_registered(|t| engine().send(t));
}

/// Right after a response was written: remember its stamp for the
/// connection's next request. Taken after the write, so a credit earned
/// while writing (the `http-respond` site) is in it: the client received
/// the response that much earlier in virtual time.
#[inline(always)]
pub fn after_respond(peer: Option<&SocketAddr>) {
    if armed() {
        after_respond_cold(peer.copied());
    }
}

#[cold]
#[inline(never)]
fn after_respond_cold(peer: Option<SocketAddr>) {
    let Some(stamp) = with_registered(|t| engine().stamp(t)) else {
        return;
    };
    if let (Some(peer), Ok(mut stamps)) = (peer, CONN_STAMPS.lock()) {
        stamps.insert(peer, stamp);
    }
}

/// Registers the calling thread under `name` when a profiling session is
/// on (otherwise it does nothing: plain `serve` threads stay unregistered).
/// Also narrows the thread's timer slack to 1 us so that pays sleep close
/// to what they owe.
pub fn register_thread(name: &str) {
    if !armed() {
        return;
    }
    let slot: &'static Slot = Box::leak(Box::new(Slot::new(name).on_os_thread(os_thread_id())));
    if STATE.try_with(|t| t.register(slot, &GLOBALS)).is_err() {
        return;
    }
    if let Ok(mut registry) = REGISTRY.lock() {
        registry.push(slot);
    }
    narrow_timer_slack();
}

#[cfg(target_os = "linux")]
fn os_thread_id() -> Option<i32> {
    Some(rustix::thread::gettid().as_raw_nonzero().get())
}

#[cfg(not(target_os = "linux"))]
fn os_thread_id() -> Option<i32> {
    None
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn narrow_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and touches only the
    // calling thread's scheduling attributes.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

#[cfg(not(target_os = "linux"))]
fn narrow_timer_slack() {}

/// The registered threads' ledgers.
pub(crate) fn registry() -> Vec<&'static Slot> {
    REGISTRY.lock().map(|r| r.clone()).unwrap_or_default()
}

/// Forgets the per-connection stamps (at every epoch).
pub(crate) fn clear_connection_stamps() {
    if let Ok(mut stamps) = CONN_STAMPS.lock() {
        stamps.clear();
    }
}

/// Median cost of timing an empty visit with `clock`, in ns: what each
/// visit's measured length includes beyond the site's own work.
pub fn measure_clock_cost(clock: SiteClock) -> u64 {
    let read = match clock {
        SiteClock::Wall => now_ns,
        SiteClock::Cpu => thread_cpu_ns,
    };
    let mut samples: Vec<u64> = (0..1001)
        .map(|_| {
            let a = read();
            let b = read();
            b.saturating_sub(a)
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

//! What a causal site costs, per visit, in each state of the profiler:
//!
//! ```text
//! cargo bench --bench causal_overhead                          # feature on
//! cargo bench --bench causal_overhead --no-default-features    # feature off
//! ```
//!
//! Each mode runs `{ let _s = site!(..); black_box(i) }` 100 M times (or
//! `--iterations N`) on a registered thread and prints ns per iteration,
//! beside an empty loop measured in the same run. Results: bench/CAUSAL.md.

use std::hint::black_box;
use std::time::Instant;

#[cfg(feature = "causal")]
static MEASURED: ccc::causal::Site = ccc::causal::Site::new(0, "measured");

fn timed(label: &str, iterations: u64, body: impl Fn(u64)) -> f64 {
    // Best of three, to dodge a preempted run on a shared machine.
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            for i in 0..iterations {
                body(i);
            }
            t.elapsed().as_nanos() as f64 / iterations as f64
        })
        .fold(f64::INFINITY, f64::min);
    println!("{label:<34} {best:>8.2} ns/iter");
    best
}

fn main() {
    let iterations = std::env::args()
        .skip_while(|a| a != "--iterations")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000_000u64);
    println!("{iterations} iterations, best of 3");
    let empty = timed("empty loop", iterations, |i| {
        black_box(i);
    });
    run(iterations, empty);
}

#[cfg(not(feature = "causal"))]
fn run(iterations: u64, empty: f64) {
    let off = timed("site, feature off", iterations, |i| {
        let _s = ccc::causal::site!(SQLITE_QUERY);
        black_box(i);
    });
    println!("feature off - empty: {:+.2} ns", off - empty);
}

#[cfg(feature = "causal")]
fn run(iterations: u64, empty: f64) {
    use ccc::testing::causal::{
        ExternalWake, GLOBALS, IdleCores, Phase, Session, SiteClock, now_ns,
    };

    let site = |i: u64| {
        let _s = ccc::causal::site!(&MEASURED);
        black_box(i);
    };
    let disarmed = timed("site, disarmed (plain serve)", iterations, site);
    // The cost of a hook, not of a profile: no spinners beside the loop.
    let session = Session::arm(ExternalWake::Conn, SiteClock::Wall, IdleCores::Sleep);
    ccc::causal::register_thread("bench");
    let idle = timed("site, armed, phase idle", iterations, site);
    GLOBALS.publish(now_ns(), 1, 50, Phase::Active);
    let other = timed("site, armed, another site selected", iterations / 10, site);
    GLOBALS.publish(now_ns(), 0, 0, Phase::Active);
    let selected = timed("site, selected at 0%", iterations / 10, site);
    drop(session);
    println!("disarmed - empty:            {:+.2} ns", disarmed - empty);
    println!("armed idle - empty:          {:+.2} ns", idle - empty);
    println!("another site selected - empty: {:+.2} ns", other - empty);
    println!("selected at 0% - empty:      {:+.2} ns", selected - empty);
    println!(
        "clock cost (median pair):    {} ns wall, {} ns thread CPU",
        ccc::testing::causal::measure_clock_cost(SiteClock::Wall),
        ccc::testing::causal::measure_clock_cost(SiteClock::Cpu)
    );
}

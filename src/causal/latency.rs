//! Latency points: Coz's begin/end pairs, with the time requests spend in
//! flight integrated exactly, in virtual time.
//!
//! Coz logs, per experiment, the arrivals and departures counted and one
//! snapshot of `begins − ends` at its end, and its viewer takes that
//! snapshot for the mean number in flight `L` in Little's law `W = L/λ`.
//! A point here keeps, beside the two counts, the sums of the begins' and
//! the ends' timestamps. Since `∫₋∞^T n(t) dt = T·(begins − ends) −
//! Σ begin + Σ end` for the events up to `T`, two snapshots give the exact
//! integral of the number in flight over the window between them, hence the
//! exact mean `L`.
//!
//! The timestamps are *virtual*: an event on a registered thread is stamped
//! `now − l`, on that thread's virtual clock (a pause moves `now` and `l`
//! alike, so it adds nothing), and the controller's snapshot is stamped
//! `now − G`, so that the window is `elapsed − ΔG` long, the cell's
//! duration. With real timestamps the integral would count every pause a
//! request sits through; pauses are paid at check points, which a worker
//! reaches while it holds a request (the strict check before its response),
//! so they fall on in-flight time far more than on idle time, and the real
//! mean in flight overstates the virtual program's. The engine's replay of
//! an open-loop server (`engine` tests) shows the difference.
//!
//! All sums wrap: only differences between snapshots are used, and those
//! are exact while they fit in 63 bits.

/// Cumulative counts and timestamp sums of one latency point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub arrivals: u64,
    pub departures: u64,
    /// Σ of the arrivals' virtual timestamps, wrapping.
    pub arrival_sum: u64,
    /// Σ of the departures' virtual timestamps, wrapping.
    pub departure_sum: u64,
}

impl Tally {
    pub(crate) fn begin(&mut self, at: u64) {
        self.arrivals = self.arrivals.wrapping_add(1);
        self.arrival_sum = self.arrival_sum.wrapping_add(at);
    }

    pub(crate) fn end(&mut self, at: u64) {
        self.departures = self.departures.wrapping_add(1);
        self.departure_sum = self.departure_sum.wrapping_add(at);
    }
}

/// A tally read at virtual time `at`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Mark {
    pub tally: Tally,
    pub at: u64,
}

/// What a latency point measured between two marks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub arrivals: u64,
    pub departures: u64,
    /// `∫ n dt` over the window: request-nanoseconds in flight.
    pub in_flight_ns: i64,
}

impl Window {
    /// The window from `a` to `b`.
    pub(crate) fn between(a: &Mark, b: &Mark) -> Window {
        let arrivals = b.tally.arrivals.wrapping_sub(a.tally.arrivals);
        let departures = b.tally.departures.wrapping_sub(a.tally.departures);
        let span = b.at.wrapping_sub(a.at) as i64;
        let in_flight_at_b = b.tally.arrivals.wrapping_sub(b.tally.departures) as i64;
        // Σ (t − a.at) over the window's events of one kind.
        let since_a = |sum_a: u64, sum_b: u64, count: u64| {
            sum_b
                .wrapping_sub(sum_a)
                .wrapping_sub(a.at.wrapping_mul(count)) as i64
        };
        let arrived = since_a(a.tally.arrival_sum, b.tally.arrival_sum, arrivals);
        let departed = since_a(a.tally.departure_sum, b.tally.departure_sum, departures);
        // n(b)·span counts every request in flight at b for the whole
        // window; those that arrived inside it were not there before
        // arriving, and those that left inside it are there after.
        Window {
            arrivals,
            departures,
            in_flight_ns: in_flight_at_b * span - arrived + departed,
        }
    }

    /// Mean number in flight over a window of `duration_ns`.
    pub(crate) fn mean_in_flight(&self, duration_ns: i64) -> Option<f64> {
        (duration_ns > 0).then(|| self.in_flight_ns.max(0) as f64 / duration_ns as f64)
    }

    /// Mean latency by Little's law, `L/λ` with `λ = arrivals/duration`:
    /// the integral over the arrivals.
    pub(crate) fn mean_latency_ns(&self) -> Option<f64> {
        (self.arrivals > 0).then(|| self.in_flight_ns.max(0) as f64 / self.arrivals as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(tally: Tally, at: u64) -> Mark {
        Mark { tally, at }
    }

    #[test]
    fn the_integral_counts_each_request_inside_the_window_only() {
        let mut t = Tally::default();
        t.begin(100); // in flight across the start of the window
        let a = mark(t, 1_000);
        t.end(1_300);
        t.begin(1_500); // wholly inside: 400
        t.end(1_900);
        t.begin(2_500); // still in flight at the end: 500
        let b = mark(t, 3_000);
        let w = Window::between(&a, &b);
        assert_eq!((w.arrivals, w.departures), (2, 2));
        assert_eq!(w.in_flight_ns, 300 + 400 + 500);
        assert_eq!(w.mean_in_flight(2_000), Some(0.6));
        assert_eq!(w.mean_latency_ns(), Some(600.0));
    }

    #[test]
    fn wrapping_sums_give_the_same_window() {
        let base = u64::MAX - 1_000;
        let mut t = Tally {
            arrival_sum: u64::MAX - 7,
            departure_sum: 12,
            ..Tally::default()
        };
        let a = mark(t, base);
        t.begin(base.wrapping_add(100));
        t.end(base.wrapping_add(2_100));
        let b = mark(t, base.wrapping_add(3_000));
        assert_eq!(Window::between(&a, &b).in_flight_ns, 2_000);
    }

    #[test]
    fn nothing_arrived_means_no_latency() {
        let a = mark(Tally::default(), 5);
        let w = Window::between(&a, &mark(Tally::default(), 50));
        assert_eq!(w.mean_latency_ns(), None);
        assert_eq!(w.mean_in_flight(45), Some(0.0));
    }
}

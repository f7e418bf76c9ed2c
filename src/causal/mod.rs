//! The built-in causal profiler: Coz's virtual speedups, applied to
//! explicitly instrumented sites of the serve path.
//!
//! The vocabulary the rest of ccc uses:
//!
//! - `let _s = causal::site!(SQLITE_QUERY);` times a region (the guard
//!   credits the visit when dropped, so `?` and early returns work);
//! - `causal::progress!(ASSET_SERVED);` counts a unit of useful work;
//! - `let l = causal::latency!(REQUEST);` begins a request at a latency
//!   point, which ends when the guard goes (`l.end()`), so the profile can
//!   predict mean latency too ([`latency_begin`] / [`latency_end`] are
//!   Coz's unpaired begin and end points);
//! - the actor module stamps every message ([`send`], [`receive`],
//!   [`idle_begin`]) so that delay flows with requests and replies;
//! - HTTP workers call [`receive_external`] / [`before_respond`] around each
//!   request, [`after_respond`] after it, and [`check`] at the top of
//!   their loops.
//!
//! With the `causal` cargo feature off (it is on by default) all of these
//! compile to nothing. With it on but no profiling session (`ccc serve`),
//! each costs one relaxed atomic load and a branch.
//!
//! The profiler has two layers in this one tree. The hooks compile into
//! the serve path: `engine` (the delay rules, on an injected clock), the
//! per-thread runtime that applies them, and [`points`] (ccc's sites).
//! The `driver` runs experiments with them (the controller's sweep, the
//! load generator, the ledger audit, the reports, the plot and the Coz
//! file); it reaches the hooks only through what this module exports, and
//! nothing on the serve path reaches the driver. `cmd::causal` only turns
//! the command's flags into the driver's options.
//!
//! The hooks are the library's public API, since the macros above expand
//! to `$crate::causal::…` in the crate that uses them; `engine`, `driver`
//! and the runtime's controls are `pub(crate)` (ccc's tests reach them
//! through `testing`).

pub mod points;

/// A timed region of code that can be virtually sped up; its id indexes
/// the site list the controller is given ([`points::SITES`] for ccc).
pub struct Site {
    pub id: u16,
    pub name: &'static str,
}

impl Site {
    pub const fn new(id: u16, name: &'static str) -> Site {
        Site { id, name }
    }
}

#[cfg(feature = "causal")]
pub(crate) mod driver;
#[cfg(feature = "causal")]
pub(crate) mod engine;
#[cfg(feature = "causal")]
pub(crate) mod latency;
#[cfg(feature = "causal")]
mod runtime;
#[cfg(feature = "causal")]
pub use engine::Stamp;
#[cfg(feature = "causal")]
pub use runtime::*;

#[cfg(not(feature = "causal"))]
mod off;
#[cfg(not(feature = "causal"))]
pub use off::*;

/// Times the rest of the enclosing block as a visit of a site from
/// [`points`]: `let _s = causal::site!(SQLITE_QUERY);`.
#[cfg(feature = "causal")]
#[macro_export]
macro_rules! site {
    ($site:ident) => {
        $crate::causal::enter(&$crate::causal::points::$site)
    };
    ($site:expr) => {
        $crate::causal::enter($site)
    };
}

/// Without the `causal` feature a site is nothing.
#[cfg(not(feature = "causal"))]
#[macro_export]
macro_rules! site {
    ($site:ident) => {
        ()
    };
    ($site:expr) => {
        ()
    };
}

/// Counts one unit of progress at a point from [`points`] (and at real
/// Coz's point of the same name, with the `coz` feature).
#[cfg(feature = "causal")]
#[macro_export]
macro_rules! progress {
    ($point:ident) => {{
        $crate::causal::progress(&$crate::causal::points::$point);
        $crate::coz_progress!($point);
    }};
    ($point:expr) => {
        $crate::causal::progress($point)
    };
}

/// Without the `causal` feature a progress point is nothing to ccc's
/// profiler (real Coz's point stays, with the `coz` feature).
#[cfg(not(feature = "causal"))]
#[macro_export]
macro_rules! progress {
    ($point:ident) => {
        $crate::coz_progress!($point)
    };
    ($point:expr) => {
        ()
    };
}

/// Real Coz's throughput point named like ccc's point `$point`: with the
/// `coz` feature, `coz run --- ccc serve` sees the same progress as
/// `ccc causal`.
#[cfg(feature = "coz")]
#[macro_export]
macro_rules! coz_progress {
    ($point:ident) => {
        ::coz::progress!($crate::causal::points::names::$point)
    };
}

/// Without the `coz` feature there is no Coz point.
#[cfg(not(feature = "coz"))]
#[macro_export]
macro_rules! coz_progress {
    ($point:ident) => {
        ()
    };
}

/// Prepares the calling thread for real Coz's sampling signals (the `coz`
/// feature; see the `coz` crate on Rust's alternate signal stacks).
/// Every thread of the serve path calls it first.
#[inline(always)]
pub fn thread_started() {
    #[cfg(feature = "coz")]
    coz::thread_init();
}

/// Begins a request at a latency point from [`points`]; it ends when the
/// returned guard is dropped or ended: `let l = causal::latency!(REQUEST);
/// …; l.end();`.
#[cfg(feature = "causal")]
#[macro_export]
macro_rules! latency {
    ($point:ident) => {
        $crate::causal::latency_guard(&$crate::causal::points::$point)
    };
    ($point:expr) => {
        $crate::causal::latency_guard($point)
    };
}

/// Without the `causal` feature a latency point is nothing.
#[cfg(not(feature = "causal"))]
#[macro_export]
macro_rules! latency {
    ($point:ident) => {
        $crate::causal::LatencyGuard
    };
    ($point:expr) => {
        $crate::causal::LatencyGuard
    };
}

pub use crate::{latency, progress, site};

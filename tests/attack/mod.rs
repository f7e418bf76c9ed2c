//! The attack kit: what an origin server must survive, and what a
//! well-behaved client sees meanwhile. Used by the `under_attack` and
//! `churn` tests and by `examples/attack.rs` (which `bench/hardening.sh`
//! runs against ccc and nginx alike), so tests and benchmark measure the
//! same thing.
//!
//! - [`Attack`] (attacks.rs): slow readers, slowloris, a descriptor flood,
//!   idle keep-alive connections, malformed heads, resets mid-response, or
//!   several at once; bounded in connections, run until stopped.
//! - [`Probe`] (probe.rs): well-behaved clients measuring latency and
//!   classifying every answer.
//! - [`digest`]: whether a body is the asset's (sha256, ETag, catalog).
//! - [`procfs`]: the server's resident memory and threads.
//! - [`run`]: one scenario, quiet, then attacked (optionally after a ramp
//!   while the attack opens its connections), then quiet again, with the
//!   probe running throughout and its answers kept per phase, and
//!   [`Report::violations`]: the criteria a server must meet.
//!
//! Everything speaks HTTP/1.1 by hand ([`wire`]): attacks send bytes no
//! library would, and the probe must tell a refused connection from a reset
//! from a timeout.

#![allow(dead_code)]

pub mod attacks;
pub mod digest;
pub mod h2;
pub mod probe;
pub mod procfs;
pub mod wire;

pub use attacks::{Attack, AttackReport};
pub use probe::{Probe, ProbeConfig, ProbeReport};
pub use procfs::Footprint;

use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The phase the clock is in; the probe and the sampler file what they see
/// under it.
#[derive(Clone)]
pub struct Phases {
    current: Arc<AtomicUsize>,
    count: usize,
}

impl Phases {
    pub fn new(count: usize) -> Phases {
        Phases {
            current: Arc::new(AtomicUsize::new(0)),
            count,
        }
    }

    pub fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed).min(self.count - 1)
    }

    pub fn set(&self, phase: usize) {
        self.current.store(phase, Ordering::Relaxed);
    }

    pub fn count(&self) -> usize {
        self.count
    }
}

const WARMUP: usize = 0;
const QUIET: usize = 1;
const RAMP: usize = 2;
const ATTACK: usize = 3;
const AFTER: usize = 4;

/// How long each phase lasts.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Probing whose answers are not kept: caches fill, connections open.
    pub warmup: Duration,
    /// Before the attack: the reference latency.
    pub quiet: Duration,
    /// Longest wait, once the attack starts, for it to hold all its
    /// connections before `attack` is timed; 0 counts the ramp as part of
    /// the attack.
    pub ramp: Duration,
    /// The attack.
    pub attack: Duration,
    /// After the attack's connections are closed, still counted as the
    /// attack (the server may be cleaning up).
    pub settle: Duration,
    /// Back to quiet: the server must be at full speed.
    pub after: Duration,
}

impl Timing {
    /// One second of warm-up, then the phases, in seconds.
    pub fn seconds(quiet: u64, attack: u64, settle: u64, after: u64) -> Timing {
        Timing {
            warmup: Duration::from_secs(1),
            quiet: Duration::from_secs(quiet),
            ramp: Duration::ZERO,
            attack: Duration::from_secs(attack),
            settle: Duration::from_secs(settle),
            after: Duration::from_secs(after),
        }
    }
}

/// One scenario's results.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub attack: AttackReport,
    /// How long the attack took to hold its connections (see
    /// [`Timing::ramp`]), and whether it got them all in that time (true
    /// without a ramp).
    pub ramp_secs: f64,
    pub ramp_complete: bool,
    pub quiet: ProbeReport,
    /// While the attack opened its connections; empty without a ramp.
    pub ramp: ProbeReport,
    pub during: ProbeReport,
    pub after: ProbeReport,
    pub footprint_quiet: Footprint,
    pub footprint_ramp: Footprint,
    pub footprint_during: Footprint,
    pub footprint_after: Footprint,
    /// The kernel's peak resident set of the server since it started, KiB.
    pub vm_hwm_kib: Option<u64>,
    /// Every server PID still there at the end.
    pub server_alive: bool,
}

/// Runs the probe against `addr` for `timing.warmup`, then `timing.quiet`,
/// then `attack` too (up to `timing.ramp` until it holds its connections,
/// then `timing.attack`, + `settle`), then the probe alone for
/// `timing.after`, while sampling `pids` (the server's processes).
pub fn run(
    addr: SocketAddr,
    pids: &[u32],
    attack: &Attack,
    probe: &ProbeConfig,
    timing: Timing,
) -> Report {
    run_split(addr, addr, pids, attack, probe, timing)
}

/// [`run`], with the probe on `addr` and the attack on `attack_addr` (a
/// server's HTTP/2-only port beside its HTTP/1.1 one, as nginx has them).
pub fn run_split(
    addr: SocketAddr,
    attack_addr: SocketAddr,
    pids: &[u32],
    attack: &Attack,
    probe: &ProbeConfig,
    timing: Timing,
) -> Report {
    let phases = Phases::new(5);
    let sampler = procfs::Sampler::start(pids.to_vec(), phases.clone(), Duration::from_millis(50));
    let clients = Probe::start(addr, probe, phases.clone());
    std::thread::sleep(timing.warmup);
    phases.set(QUIET);
    std::thread::sleep(timing.quiet);
    phases.set(if timing.ramp.is_zero() { ATTACK } else { RAMP });
    let running = attack.start(attack_addr);
    let ramp_started = std::time::Instant::now();
    let mut ramp_complete = timing.ramp.is_zero();
    while !ramp_complete && ramp_started.elapsed() < timing.ramp {
        std::thread::sleep(Duration::from_millis(100));
        ramp_complete = running.held() >= attack.holds();
    }
    let ramp_secs = ramp_started.elapsed().as_secs_f64();
    phases.set(ATTACK);
    std::thread::sleep(timing.attack);
    let attack_report = running.finish();
    std::thread::sleep(timing.settle);
    phases.set(AFTER);
    std::thread::sleep(timing.after);
    let mut probed = clients.finish().into_iter().skip(QUIET);
    let mut footprints = sampler.finish().into_iter().skip(QUIET);
    let mut next_probe = || probed.next().unwrap_or_default();
    let mut next_footprint = || footprints.next().unwrap_or_default();
    Report {
        attack: attack_report,
        ramp_secs,
        ramp_complete,
        quiet: next_probe(),
        ramp: next_probe(),
        during: next_probe(),
        after: next_probe(),
        footprint_quiet: next_footprint(),
        footprint_ramp: next_footprint(),
        footprint_during: next_footprint(),
        footprint_after: next_footprint(),
        vm_hwm_kib: procfs::high_water_mark(pids),
        server_alive: procfs::read(pids).is_some(),
    }
}

/// The header of the table [`Report::markdown_row`] fills.
pub const MARKDOWN_HEADER: &str = "| server | attack | quiet p50 / p99 | during p50 / p99 | during, new connections p50 / p99 | during: ok / 503 / failures | after p50 / p99 | after: failures | peak RSS (anon) | VmHWM | peak threads | the attack's connections |\n|---|---|---:|---:|---:|---|---:|---|---:|---:|---:|---|";

/// How much slower than quiet the probe may get.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// During the attack, p99 may reach this multiple of the quiet p99...
    pub during_factor: f64,
    /// ...or this, whichever is larger (a loaded machine's quiet p99 can be
    /// tiny, so a pure ratio would flag scheduling noise).
    pub during_floor: Duration,
    /// After the attack, p99 may reach this multiple of the quiet p99...
    pub after_factor: f64,
    /// ...or this, whichever is larger.
    pub after_floor: Duration,
}

impl Default for Bounds {
    /// 10x during (at least 500 ms), 3x after (at least 100 ms).
    fn default() -> Bounds {
        Bounds {
            during_factor: 10.0,
            during_floor: Duration::from_millis(500),
            after_factor: 3.0,
            after_floor: Duration::from_millis(100),
        }
    }
}

impl Report {
    /// Every way this run misses the bar; empty when it meets it:
    /// - quiet and after: every answer right, none capped, p99 after within
    ///   bounds of quiet;
    /// - during (and the ramp before it): no refused connection, no
    ///   timeout, no drop or reset, no 5xx but the deliberate 503 at the
    ///   connection cap; during: some answers served, p99 within bounds of
    ///   quiet;
    /// - the server still running.
    pub fn violations(&self, bounds: &Bounds) -> Vec<String> {
        let mut out = Vec::new();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        for (phase, r) in [("quiet", &self.quiet), ("after", &self.after)] {
            if r.failures() > 0 || r.capped > 0 {
                out.push(format!(
                    "{phase}: {} failures, {} capped: {:?}",
                    r.failures(),
                    r.capped,
                    r.problems
                ));
            }
            if r.ok == 0 {
                out.push(format!("{phase}: no request was served"));
            }
        }
        let r = &self.ramp;
        if r.failures() > 0 {
            out.push(format!(
                "ramp: {} refused, {} timeouts, {} dropped, {} broken, {} 5xx, {} unexpected, {} wrong bytes: {:?}",
                r.refused, r.timeouts, r.dropped, r.broken, r.server_errors, r.unexpected, r.wrong_bytes, r.problems
            ));
        }
        let d = &self.during;
        if d.failures() > 0 {
            out.push(format!(
                "during: {} refused, {} timeouts, {} dropped, {} broken, {} 5xx, {} unexpected, {} wrong bytes: {:?}",
                d.refused, d.timeouts, d.dropped, d.broken, d.server_errors, d.unexpected, d.wrong_bytes, d.problems
            ));
        }
        if d.ok == 0 {
            out.push("during: no request was served".into());
        }
        let during_limit = (self.quiet.p99_ms * bounds.during_factor).max(ms(bounds.during_floor));
        if d.p99_ms > during_limit {
            out.push(format!(
                "during: p99 {:.1} ms is over {during_limit:.1} ms ({}x the quiet p99 of {:.1} ms, at least {:?})",
                d.p99_ms, bounds.during_factor, self.quiet.p99_ms, bounds.during_floor
            ));
        }
        let after_limit = (self.quiet.p99_ms * bounds.after_factor).max(ms(bounds.after_floor));
        if self.after.p99_ms > after_limit {
            out.push(format!(
                "after: p99 {:.1} ms is over {after_limit:.1} ms ({}x the quiet p99 of {:.1} ms, at least {:?})",
                self.after.p99_ms, bounds.after_factor, self.quiet.p99_ms, bounds.after_floor
            ));
        }
        if !self.server_alive {
            out.push("the server is gone".into());
        }
        out
    }

    /// One row of the table [`MARKDOWN_HEADER`] opens, for `server`.
    pub fn markdown_row(&self, server: &str) -> String {
        let p = |r: &ProbeReport| format!("{:.1} / {:.1} ms", r.p50_ms, r.p99_ms);
        let failures = |r: &ProbeReport| {
            let kinds = [
                (r.refused, "refused"),
                (r.timeouts, "timeouts"),
                (r.dropped, "dropped"),
                (r.broken, "broken"),
                (r.server_errors, "5xx"),
                (r.unexpected, "unexpected"),
                (r.wrong_bytes, "wrong bytes"),
            ];
            let named: Vec<String> = kinds
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} {what}"))
                .collect();
            if named.is_empty() {
                "0".to_string()
            } else {
                named.join(", ")
            }
        };
        let answers: Vec<String> = self
            .attack
            .answers
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let peak = self.peak();
        let mib = |kib: u64| kib as f64 / 1024.0;
        format!(
            "| {server} | {} | {} | {} | {:.1} / {:.1} ms | {} / {} / {} | {} | {} | {:.1} MiB ({:.1} anon) | {:.1} MiB | {} | {} opened, peak {} open, {} closed by the server; {} |",
            self.attack.mode,
            p(&self.quiet),
            p(&self.during),
            self.during.new_conn_p50_ms,
            self.during.new_conn_p99_ms,
            self.during.ok,
            self.during.status_503(),
            failures(&self.during),
            p(&self.after),
            failures(&self.after),
            mib(peak.peak_rss_kib),
            mib(peak.peak_rss_anon_kib),
            mib(self.vm_hwm_kib.unwrap_or(0)),
            peak.peak_threads,
            self.attack.opened,
            self.attack.peak_open,
            self.attack.closed_by_server,
            if answers.is_empty() {
                "no answer".to_string()
            } else {
                answers.join(", ")
            },
        )
    }

    /// The highest footprint from the attack's start to the end: ramp,
    /// attack and after.
    pub fn peak(&self) -> Footprint {
        let phases = [
            &self.footprint_ramp,
            &self.footprint_during,
            &self.footprint_after,
        ];
        Footprint {
            peak_rss_kib: phases.iter().map(|f| f.peak_rss_kib).max().unwrap_or(0),
            peak_rss_anon_kib: phases
                .iter()
                .map(|f| f.peak_rss_anon_kib)
                .max()
                .unwrap_or(0),
            peak_threads: phases.iter().map(|f| f.peak_threads).max().unwrap_or(0),
            last_rss_anon_kib: self.footprint_after.last_rss_anon_kib,
            samples: phases.iter().map(|f| f.samples).sum(),
        }
    }

    /// One line for people: latencies per phase, answers, footprint.
    pub fn summary(&self) -> String {
        let p = |r: &ProbeReport| format!("p50 {:.1} / p99 {:.1} ms", r.p50_ms, r.p99_ms);
        let mib = |kib: u64| kib as f64 / 1024.0;
        let peak = self.peak();
        let ramp = if self.ramp.statuses.is_empty() && self.ramp.failures() == 0 {
            String::new()
        } else {
            format!(
                "ramp {:.1} s{} ({}, {} ok, {} 503s, {} failures); ",
                self.ramp_secs,
                if self.ramp_complete {
                    ""
                } else {
                    ", INCOMPLETE"
                },
                p(&self.ramp),
                self.ramp.ok,
                self.ramp.status_503(),
                self.ramp.failures(),
            )
        };
        format!(
            "{}: quiet {}; {ramp}during {} (new connections p50 {:.1} / p99 {:.1} ms; {} ok, {} 503s, {} capped, {} failures); after {} ({} ok, {} failures); \
             server peak RSS {:.1} MiB ({:.1} MiB anon, VmHWM {:.1} MiB) / {} threads from the attack on (quiet {:.1} MiB / {} threads); attack: {} opened, peak {} open, {} closed by the server, answers {:?}",
            self.attack.mode,
            p(&self.quiet),
            p(&self.during),
            self.during.new_conn_p50_ms,
            self.during.new_conn_p99_ms,
            self.during.ok,
            self.during.status_503(),
            self.during.capped,
            self.during.failures(),
            p(&self.after),
            self.after.ok,
            self.after.failures(),
            mib(peak.peak_rss_kib),
            mib(peak.peak_rss_anon_kib),
            mib(self.vm_hwm_kib.unwrap_or(0)),
            peak.peak_threads,
            mib(self.footprint_quiet.peak_rss_kib),
            self.footprint_quiet.peak_threads,
            self.attack.opened,
            self.attack.peak_open,
            self.attack.closed_by_server,
            self.attack.answers,
        )
    }
}

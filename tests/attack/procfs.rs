//! What the server costs while it is attacked: resident memory (all of it,
//! and the anonymous part: heap and stacks, what connections cost; the rest
//! is the binary and mapped files) and threads of its processes, read from
//! `/proc/PID/status` every few tens of milliseconds and kept per phase
//! (quiet, attack, after). Several PIDs add up (nginx's master and worker).

use super::Phases;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The server's footprint during one phase.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Footprint {
    /// Highest resident set seen (VmRSS, summed over the PIDs), KiB.
    pub peak_rss_kib: u64,
    /// Highest anonymous resident memory seen (RssAnon, summed), KiB.
    pub peak_rss_anon_kib: u64,
    /// Most threads seen (summed over the PIDs).
    pub peak_threads: u64,
    /// Anonymous resident memory at the phase's last sample, KiB.
    pub last_rss_anon_kib: u64,
    /// Samples taken; 0 means the process could not be read.
    pub samples: u64,
}

/// One reading of `/proc/PID/status` summed over `pids`; None when one of
/// them is gone.
pub fn read(pids: &[u32]) -> Option<Reading> {
    let mut sum = Reading::default();
    for pid in pids {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        sum.rss_kib += field(&status, "VmRSS:")?;
        sum.rss_anon_kib += field(&status, "RssAnon:")?;
        sum.threads += field(&status, "Threads:")?;
    }
    Some(sum)
}

/// Resident memory (KiB) and threads at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    pub rss_kib: u64,
    pub rss_anon_kib: u64,
    pub threads: u64,
}

/// `VmHWM` (the kernel's own peak resident set since start), summed, KiB.
pub fn high_water_mark(pids: &[u32]) -> Option<u64> {
    pids.iter()
        .map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            field(&status, "VmHWM:")
        })
        .sum()
}

/// The soft and hard open-files limits of `pid` ("unlimited" reads as
/// `u64::MAX`).
pub fn open_files_limit(pid: u32) -> Option<(u64, u64)> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut numbers = line["Max open files".len()..]
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(u64::MAX));
    Some((numbers.next()?, numbers.next()?))
}

fn field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Samples `pids` on a thread of its own until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Footprint>>,
}

impl Sampler {
    pub fn start(pids: Vec<u32>, phases: Phases, every: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut by_phase = vec![Footprint::default(); phases.count()];
            while !flag.load(Ordering::Relaxed) {
                if let Some(now) = read(&pids) {
                    let f = &mut by_phase[phases.current()];
                    f.peak_rss_kib = f.peak_rss_kib.max(now.rss_kib);
                    f.peak_rss_anon_kib = f.peak_rss_anon_kib.max(now.rss_anon_kib);
                    f.peak_threads = f.peak_threads.max(now.threads);
                    f.last_rss_anon_kib = now.rss_anon_kib;
                    f.samples += 1;
                }
                std::thread::sleep(every);
            }
            by_phase
        });
        Sampler { stop, thread }
    }

    /// Stops sampling; one footprint per phase.
    pub fn finish(self) -> Vec<Footprint> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// The CPU time (user and system, in clock ticks of 1/100 s) the process
/// has used, from `/proc/PID/stat`; None off Linux.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        let now = super::read(&[me]).expect("/proc/self/status");
        assert!(
            now.rss_kib >= now.rss_anon_kib && now.rss_anon_kib > 0 && now.threads >= 1,
            "{now:?}"
        );
        let (soft, hard) = super::open_files_limit(me).expect("/proc/self/limits");
        assert!(soft <= hard, "{soft} > {hard}");
    }
}
